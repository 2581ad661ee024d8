// Network namespaces and command execution; see ofld/io/netns.hpp.
#include "ofld/io/netns.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace ofld::io {

namespace {

std::string join_argv(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += a;
  }
  return s;
}

std::string trim_nl(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<CmdResult> run_command(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  if (argv.empty()) return Result<CmdResult>::error("run_command: empty argv");
  int outp[2], errp[2];
  if (::pipe2(outp, O_CLOEXEC) != 0) return Result<CmdResult>::error("pipe2: " + std::string(strerror(errno)));
  Fd out_r{outp[0]}, out_w{outp[1]};
  if (::pipe2(errp, O_CLOEXEC) != 0) return Result<CmdResult>::error("pipe2: " + std::string(strerror(errno)));
  Fd err_r{errp[0]}, err_w{errp[1]};

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_w.fd, 2);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return Result<CmdResult>::error("cannot run `" + join_argv(argv) + "`: " + strerror(rc));
  ::close(out_w.fd);
  out_w.fd = -1;
  ::close(err_w.fd);
  err_w.fd = -1;

  CmdResult res;
  const auto deadline = Clock::now() + timeout;
  bool out_open = true, err_open = true, timed_out = false;
  char buf[4096];
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd[2] = {{out_open ? out_r.fd : -1, POLLIN, 0}, {err_open ? err_r.fd : -1, POLLIN, 0}};
    int n = ::poll(pfd, 2, int(left.count()));
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (pfd[i].fd < 0 || pfd[i].revents == 0) continue;
      ssize_t r = ::read(pfd[i].fd, buf, sizeof buf);
      if (r > 0) {
        (i == 0 ? res.out : res.err).append(buf, size_t(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        (i == 0 ? out_open : err_open) = false;
      }
    }
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return Result<CmdResult>::error("`" + join_argv(argv) + "` timed out after " +
                                    std::to_string(timeout.count()) + " ms");
  res.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return res;
}

Result<CmdResult> check_command(const std::vector<std::string>& argv,
                                std::chrono::milliseconds timeout) {
  auto r = run_command(argv, timeout);
  if (!r) return r;
  if (r->exit_code != 0)
    return Result<CmdResult>::error("`" + join_argv(argv) + "` exited " +
                                    std::to_string(r->exit_code) + ": " + trim_nl(r->err));
  return r;
}

Status netns_available() {
  if (::geteuid() != 0) return Status::skipped("network namespaces need root (geteuid() != 0)");
  auto r = run_command({"ip", "-V"}, std::chrono::seconds(5));
  if (!r) return Status::skipped("iproute2 `ip` not runnable: " + r.message());
  if (r->exit_code != 0) return Status::skipped("`ip -V` failed: " + trim_nl(r->err));
  if (::access("/proc/self/ns/net", R_OK) != 0)
    return Status::skipped("kernel without network namespaces (/proc/self/ns/net)");
  return ok_status();
}

namespace {
/// Delete namespaces "ofld…-<pid>-<n>" left behind by processes that no longer exist (a
/// test run killed by a timeout cannot run destructors). Namespaces of live processes,
/// including other concurrent runs, are never touched.
void reap_stale_namespaces() {
  DIR* d = ::opendir("/run/netns");
  if (!d) return;
  std::vector<std::string> stale;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("ofld", 0) != 0) continue;
    auto last = name.rfind('-');
    if (last == std::string::npos || last == 0) continue;
    auto prev = name.rfind('-', last - 1);
    if (prev == std::string::npos) continue;
    std::string pid_s = name.substr(prev + 1, last - prev - 1);
    std::string n_s = name.substr(last + 1);
    auto digits = [](const std::string& x) {
      return !x.empty() && x.find_first_not_of("0123456789") == std::string::npos && x.size() < 10;
    };
    if (!digits(pid_s) || !digits(n_s)) continue;
    pid_t pid = pid_t(std::stol(pid_s));
    if (pid == ::getpid()) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(name);
  }
  ::closedir(d);
  for (const auto& name : stale) (void)run_command({"ip", "netns", "del", name});
}
}  // namespace

Result<Netns> Netns::create(std::string_view prefix) {
  static std::atomic<unsigned> counter{0};
  static std::atomic<bool> reaped{false};
  if (auto a = netns_available(); !a) return Result<Netns>::from(a);
  if (!reaped.exchange(true)) reap_stale_namespaces();
  std::string name = std::string(prefix) + "-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter.fetch_add(1));
  auto r = check_command({"ip", "netns", "add", name});
  if (!r) {
    // A stale namespace of a dead process with our pid cannot exist unless pids wrapped;
    // try once to remove it and re-add.
    (void)run_command({"ip", "netns", "del", name});
    r = check_command({"ip", "netns", "add", name});
    if (!r) return Result<Netns>::skipped("cannot create network namespace: " + r.message());
  }
  std::string path = "/run/netns/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    path = "/var/run/netns/" + name;
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) {
    std::string e = strerror(errno);
    (void)run_command({"ip", "netns", "del", name});
    return Result<Netns>::error("cannot open " + path + ": " + e);
  }
  return Netns(std::move(name), fd);
}

Netns::Netns(Netns&& o) noexcept : name_(std::move(o.name_)), fd_(std::move(o.fd_)) {
  o.name_.clear();
}

// Not defaulted: the namespace this one names is deleted before it takes the other's.
Netns& Netns::operator=(Netns&& o) noexcept {
  if (this != &o) {
    destroy();
    name_ = std::move(o.name_);
    fd_ = std::move(o.fd_);
    o.name_.clear();
  }
  return *this;
}

Netns::~Netns() { destroy(); }

void Netns::destroy() noexcept {
  fd_.reset();
  if (!name_.empty()) {
    try {
      (void)run_command({"ip", "netns", "del", name_}, std::chrono::seconds(10));
    } catch (...) {
    }
    name_.clear();
  }
}

Status Netns::enter() const {
  if (fd_.get() < 0) return Status::error("namespace already destroyed");
  if (::setns(fd_.get(), CLONE_NEWNET) != 0)
    return Status::error("setns(" + name_ + ", CLONE_NEWNET): " + strerror(errno));
  return ok_status();
}

Result<CmdResult> Netns::exec(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout) const {
  std::vector<std::string> full{"ip", "netns", "exec", name_};
  full.insert(full.end(), argv.begin(), argv.end());
  return check_command(full, timeout);
}

Status Netns::ip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = exec(argv);
  if (!r) return Status::from(r);
  return ok_status();
}

Status Netns::write_file(const std::string& path, const std::string& value) const {
  auto r = exec({"sh", "-c", "printf '%s\\n' " + shell_quote(value) + " > " + shell_quote(path)});
  if (!r) return Status::from(r);
  return ok_status();
}

Result<std::string> Netns::read_file(const std::string& path) const {
  auto r = exec({"cat", path});
  if (!r) return Result<std::string>::from(r);
  return trim_nl(r->out);
}

Status Netns::sysctl(const std::string& key, const std::string& value) const {
  auto r = exec({"sysctl", "-qw", key + "=" + value});
  if (!r) return Status::from(r);
  return ok_status();
}

}  // namespace ofld::io

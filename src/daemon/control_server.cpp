// The control socket's server (control_server.hpp): socket ownership, access policy, and the
// event loop of the control thread.
#include "control_server.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include <spdlog/spdlog.h>

namespace ofld::daemon {

using json = nlohmann::json;

namespace {

constexpr std::uint64_t kListenKey = 0, kWakeKey = 1, kWatchKey0 = 2;
constexpr int kMaxWaitMs = 1000;  // the loop wakes at least this often (ticks, deadlines)

std::uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

// The request's bytes may be anything (not UTF-8): replaced, never an exception.
std::string err_json(const std::string& msg) {
  return json{{"error", msg}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

bool fill_addr(const std::string& path, sockaddr_un& sa) {
  sa = {};
  sa.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof sa.sun_path) return false;
  std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  return true;
}

}  // namespace

bool control_allowed(ControlAccess a, const ControlPeer& peer, uid_t owner) noexcept {
  if (a == ControlAccess::Read) return true;  // the socket's mode and group decide who connects
  return peer.uid == 0 || peer.uid == owner;
}

json ControlCounters::to_json() const {
  return {{"accepted", accepted},       {"requests", requests},
          {"replies", replies},         {"closed_idle", closed_idle},
          {"closed_stalled", closed_stalled}, {"closed_unanswered", closed_unanswered},
          {"evicted", evicted},         {"refused_busy", refused_busy},
          {"denied", denied},           {"bad_requests", bad_requests},
          {"over_buffer", over_buffer}};
}

struct ControlServer::Client {
  enum class State : std::uint8_t { Reading, Answering, Writing };
  int fd = -1;
  std::uint64_t id = 0;
  ControlPeer peer;
  State st = State::Reading;
  std::string in, out;
  std::size_t off = 0;         // bytes of `out` written
  std::function<bool(std::string&)> more;  // the next pieces of a streamed answer
  std::uint64_t deadline = 0;  // CLOCK_MONOTONIC ns: what happens then depends on st
  std::uint32_t events = 0;
};

std::optional<json> probe_control(const std::string& path, int timeout_ms) {
  sockaddr_un sa;
  if (!fill_addr(path, sa)) return std::nullopt;
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s < 0) return std::nullopt;
  if (::connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    const int e = errno;
    ::close(s);
    // EAGAIN: the listener's backlog is full — it is alive, it just does not accept now.
    if (e == EAGAIN) return json::object();
    return std::nullopt;  // ENOENT, ECONNREFUSED (stale), ...
  }
  static const char kWho[] = "who\n";
  if (::send(s, kWho, sizeof kWho - 1, MSG_NOSIGNAL) > 0) ::shutdown(s, SHUT_WR);
  std::string out;
  const std::uint64_t end = mono_ns() + std::uint64_t(timeout_ms) * 1000000ull;
  for (;;) {
    const std::uint64_t now = mono_ns();
    if (now >= end || out.size() > 65536) break;
    pollfd pf{s, POLLIN, 0};
    if (::poll(&pf, 1, int((end - now) / 1000000ull) + 1) <= 0) break;
    char b[4096];
    ssize_t n = ::read(s, b, sizeof b);
    if (n <= 0) break;
    out.append(b, std::size_t(n));
  }
  ::close(s);
  auto j = json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return json::object();
  return j;
}

io::Result<std::unique_ptr<ControlServer>> ControlServer::open(ControlSocketOptions o) {
  using R = io::Result<std::unique_ptr<ControlServer>>;
  const std::string& path = o.path;
  sockaddr_un sa;
  if (!fill_addr(path, sa)) return R::error("control socket '" + path + "': path empty or too long");
  gid_t gid = gid_t(-1);
  if (!o.group.empty()) {
    std::vector<char> buf(16384);
    group g{}, *res = nullptr;
    if (::getgrnam_r(o.group.c_str(), &g, buf.data(), buf.size(), &res) != 0 || !res)
      return R::error("control-group " + o.group + ": no such group");
    gid = res->gr_gid;
  }
  if (path.rfind("/run/ofld/", 0) == 0) ::mkdir("/run/ofld", 0755);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return R::error("control socket " + path + ": exists and is not a socket (not removed)");
    if (auto who = probe_control(path)) {
      std::string name;
      if (who->contains("dev")) name += "ofld tunnel dev " + who->value("dev", std::string());
      if (who->contains("pid"))
        name += (name.empty() ? "pid " : ", pid ") + std::to_string(who->value("pid", 0L));
      return R::error("control socket " + path + ": in use by a running endpoint" +
                      (name.empty() ? std::string(" (it did not say which)") : " (" + name + ")") +
                      "; stop it or give this one another --control path");
    }
    spdlog::info("control socket {}: stale (nothing listens), taking it over", path);
    ::unlink(path.c_str());
  }
  std::unique_ptr<ControlServer> s(new ControlServer());
  s->path_ = path;
  s->lim_ = o.limits;
  s->owner_ = ::geteuid();
  s->identity_ = o.identity.is_object() ? o.identity : json::object();
  s->identity_["pid"] = long(::getpid());
  s->identity_["uid"] = long(s->owner_);
  s->lfd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s->lfd_ < 0) return R::error(std::string("control socket: ") + std::strerror(errno));
  if (::bind(s->lfd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0)
    return R::error("control socket " + path + ": bind: " + std::strerror(errno));
  // The file is ours from here on (the destructor unlinks it if it still is).
  if (::stat(path.c_str(), &st) == 0) {
    s->st_dev_ = st.st_dev;
    s->st_ino_ = st.st_ino;
  }
  // 0660 whatever the umask was; the group (control-group) may then connect.
  if (gid != gid_t(-1) && ::chown(path.c_str(), uid_t(-1), gid) < 0)
    return R::error("control-group " + o.group + ": chown " + path + ": " + std::strerror(errno));
  if (::chmod(path.c_str(), 0660) < 0)
    return R::error("control socket " + path + ": chmod: " + std::strerror(errno));
  if (::listen(s->lfd_, 128) < 0)
    return R::error("control socket " + path + ": listen: " + std::strerror(errno));
  s->ep_ = ::epoll_create1(EPOLL_CLOEXEC);
  s->wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->ep_ < 0 || s->wake_ < 0) return R::error(std::string("control: epoll/eventfd: ") + std::strerror(errno));
  for (auto [fd, key] : {std::pair{s->lfd_, kListenKey}, std::pair{s->wake_, kWakeKey}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = key;
    if (::epoll_ctl(s->ep_, EPOLL_CTL_ADD, fd, &ev) < 0)
      return R::error(std::string("control: epoll_ctl: ") + std::strerror(errno));
  }
  s->handle("who", ControlAccess::Read,
            [p = s.get()](const std::string&, Reply r) { r.send(p->identity_.dump() + "\n"); });
  return s;
}

ControlServer::~ControlServer() {
  stop();
  for (auto& [id, c] : clients_) ::close(c->fd);
  clients_.clear();
  if (lfd_ >= 0) {
    ::close(lfd_);
    // Unlink only our own socket: another endpoint may have taken a path we were told to use.
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == st_dev_ && st.st_ino == st_ino_)
      ::unlink(path_.c_str());
  }
  if (wake_ >= 0) ::close(wake_);
  if (ep_ >= 0) ::close(ep_);
}

void ControlServer::handle(const std::string& name, ControlAccess access, Handler h) {
  routes_[name] = Route{access, std::move(h)};
}

void ControlServer::watch(int fd, std::function<void()> on_ready) {
  const std::uint64_t key = kWatchKey0 + watches_.size();
  if (key >= 16) {
    spdlog::error("control: too many watched fds");
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = key;
  if (::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) < 0) {
    spdlog::error("control: epoll_ctl: {}", std::strerror(errno));
    return;
  }
  watches_.emplace_back(fd, std::move(on_ready));
}

void ControlServer::start() {
  if (th_.joinable()) return;
  stop_ = false;
  th_ = std::thread([this] { loop(); });
}

void ControlServer::stop() noexcept {
  stop_ = true;
  std::uint64_t one = 1;
  if (wake_ >= 0 && ::write(wake_, &one, sizeof one) < 0) {
    // an eventfd counter does not overflow here
  }
  if (th_.joinable()) th_.join();
}

ControlCounters ControlServer::counters() const {
  ControlCounters c;
  c.accepted = n_.accepted;
  c.requests = n_.requests;
  c.replies = n_.replies;
  c.closed_idle = n_.closed_idle;
  c.closed_stalled = n_.closed_stalled;
  c.closed_unanswered = n_.closed_unanswered;
  c.evicted = n_.evicted;
  c.refused_busy = n_.refused_busy;
  c.denied = n_.denied;
  c.bad_requests = n_.bad_requests;
  c.over_buffer = n_.over_buffer;
  return c;
}

bool ControlServer::Reply::send(std::string body) {
  if (!srv_) return false;
  ControlServer* s = srv_;
  srv_ = nullptr;
  return s->queue_reply(id_, std::move(body));
}

bool ControlServer::Reply::stream(std::function<bool(std::string&)> more) {
  if (!srv_ || !more) return false;
  ControlServer* s = srv_;
  srv_ = nullptr;
  std::string first;
  const bool cont = more(first);
  return s->queue_reply(id_, std::move(first), cont ? std::move(more) : nullptr);
}

void ControlServer::guarded(const char* what, const std::function<void()>& f) noexcept {
  try {
    f();
  } catch (const std::exception& e) {
    spdlog::warn("control: {}: {}", what, e.what());
  }
}

void ControlServer::loop() {
  epoll_event evs[32];
  while (!stop_) {
    const std::uint64_t now = mono_ns();
    std::uint64_t next = now + std::uint64_t(kMaxWaitMs) * 1000000ull;
    for (const auto& [id, c] : clients_) next = std::min(next, c->deadline);
    if (wake_at_) next = std::min(next, wake_at_);
    const int wait_ms = next <= now ? 0 : int((next - now + 999999) / 1000000);
    int n = ::epoll_wait(ep_, evs, 32, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("control: epoll_wait: {}", std::strerror(errno));
      return;
    }
    for (int i = 0; i < n && !stop_; ++i) {
      const std::uint64_t key = evs[i].data.u64;
      if (key == kListenKey) {
        accept_all();
      } else if (key == kWakeKey) {
        std::uint64_t v;
        if (::read(wake_, &v, sizeof v) < 0) {
          // nothing pending; the flag says why we woke
        }
      } else if (key < 16) {
        const auto w = key - kWatchKey0;
        if (w < watches_.size()) guarded("watch", watches_[w].second);
      } else {
        on_client(key, evs[i].events);
      }
    }
    if (wake_at_ && mono_ns() >= wake_at_) wake_at_ = 0;
    if (tick_) guarded("tick", tick_);
    expire(mono_ns());
  }
}

void ControlServer::accept_all() {
  for (;;) {
    int fd = ::accept4(lfd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED)
        spdlog::warn("control: accept: {}", std::strerror(errno));
      return;
    }
    ++n_.accepted;
    if (clients_.size() >= lim_.max_clients) {
      // Make room: the oldest client that has not sent a request yet goes (a flood of idle
      // connections must not lock out a monitor); if every client is busy, refuse this one.
      std::uint64_t victim = 0;
      for (const auto& [id, c] : clients_)
        if (c->st == Client::State::Reading) {
          victim = id;
          break;
        }
      if (victim) {
        ++n_.evicted;
        close_client(victim);
      } else {
        ++n_.refused_busy;
        const std::string e = err_json("control: busy (" + std::to_string(lim_.max_clients) + " clients)");
        if (::send(fd, e.data(), e.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
          // best effort
        }
        ::close(fd);
        continue;
      }
    }
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->id = next_id_++;
    ucred cr{};
    socklen_t len = sizeof cr;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
      c->peer = ControlPeer{cr.pid, cr.uid, cr.gid};
    else
      c->peer = ControlPeer{0, uid_t(-1), gid_t(-1)};  // unknown: never the owner
    c->deadline = mono_ns() + std::uint64_t(lim_.request_timeout_ms) * 1000000ull;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = c->id;
    if (::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) < 0) {
      ::close(fd);
      continue;
    }
    c->events = ev.events;
    const std::uint64_t id = c->id;
    const int cfd = c->fd;
    clients_.emplace(id, std::move(c));
    nclients_.store(unsigned(clients_.size()), std::memory_order_relaxed);
    // Read what it sent already (a client usually writes its request right after connect):
    // answered or closed now, it is never taken for an idle one when room has to be made.
    pollfd pf{cfd, POLLIN | POLLRDHUP, 0};
    if (::poll(&pf, 1, 0) > 0)
      on_client(id, ((pf.revents & POLLIN) ? EPOLLIN : 0u) | ((pf.revents & POLLHUP) ? EPOLLHUP : 0u) |
                        ((pf.revents & POLLRDHUP) ? EPOLLRDHUP : 0u) | ((pf.revents & POLLERR) ? EPOLLERR : 0u));
  }
}

void ControlServer::set_events(Client& c, std::uint32_t ev) {
  if (c.events == ev) return;
  epoll_event e{};
  e.events = ev;
  e.data.u64 = c.id;
  ::epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &e);
  c.events = ev;
}

void ControlServer::on_client(std::uint64_t id, std::uint32_t events) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Client& c = *it->second;
  if (c.st == Client::State::Writing) {
    if (events & (EPOLLERR | EPOLLHUP)) return close_client(id);
    return flush(c);
  }
  if (c.st == Client::State::Answering) {
    // waiting for the handler; a client that hung up is closed now (its answer is dropped)
    if (events & (EPOLLERR | EPOLLHUP)) close_client(id);
    return;
  }
  // Reading: one line, or whatever came before the client shut its side.
  char b[1024];
  for (;;) {
    ssize_t n = ::read(c.fd, b, sizeof b);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return close_client(id);
    }
    if (n == 0) {
      // Gone altogether (EPOLLHUP: both directions shut, i.e. closed): nobody to answer.
      // Only its sending side shut: the request is what came ("" = stats).
      if (events & EPOLLHUP) return close_client(id);
      std::string line = std::move(c.in);
      return dispatch(c, std::move(line));
    }
    c.in.append(b, std::size_t(n));
    if (auto nl = c.in.find('\n'); nl != std::string::npos) {
      std::string line = c.in.substr(0, nl);
      return dispatch(c, std::move(line));
    }
    if (c.in.size() > lim_.max_request) {
      ++n_.bad_requests;
      set_events(c, 0);
      c.st = Client::State::Answering;
      queue_reply(c.id, err_json("control: request longer than " + std::to_string(lim_.max_request) + " bytes"));
      return;
    }
  }
}

void ControlServer::dispatch(Client& c, std::string line) {
  ++n_.requests;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  const auto sp = line.find(' ');
  std::string name = line.substr(0, sp), args = sp == std::string::npos ? "" : line.substr(sp + 1);
  if (name.empty()) name = "stats";
  c.in.clear();
  c.st = Client::State::Answering;
  c.deadline = mono_ns() + std::uint64_t(lim_.answer_timeout_ms) * 1000000ull;
  set_events(c, 0);  // nothing more to read; a hang-up (EPOLLHUP) still shows
  auto r = routes_.find(name);
  if (r == routes_.end()) {
    ++n_.bad_requests;
    std::string known;
    for (const auto& [k, v] : routes_) known += (known.empty() ? "" : ", ") + k;
    queue_reply(c.id, err_json("control: unknown request '" + name + "' (known: " + known + ")"));
    return;
  }
  if (!control_allowed(r->second.access, c.peer, owner_)) {
    ++n_.denied;
    spdlog::info("control: '{}' from uid {} (pid {}) denied: changes state, needs uid {} or root",
                 name, long(c.peer.uid), long(c.peer.pid), long(owner_));
    queue_reply(c.id, err_json("control: '" + name + "' changes state: only uid " +
                               std::to_string(owner_) + " (the endpoint's) or root may send it"));
    return;
  }
  Reply rep;
  rep.srv_ = this;
  rep.id_ = c.id;
  rep.peer_ = c.peer;
  const std::uint64_t id = c.id;
  try {
    r->second.h(args, std::move(rep));  // may answer now or later; `c` may be gone after this
  } catch (const std::exception& e) {  // a handler's failure is this client's error, not the loop's
    spdlog::warn("control: '{}': {}", name, e.what());
    queue_reply(id, err_json("control: " + name + ": " + e.what()));
  }
}

bool ControlServer::queue_reply(std::uint64_t id, std::string body,
                                std::function<bool(std::string&)> more) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return false;
  Client& c = *it->second;
  if (c.st == Client::State::Writing) return false;  // answered already
  if (buffered_ + body.size() > lim_.max_buffered) {
    ++n_.over_buffer;
    body = err_json("control: busy (replies of " + std::to_string(buffered_) + " bytes not yet read by other clients)");
    more = nullptr;
  }
  c.more = std::move(more);
  ++n_.replies;
  buffered_ += body.size();
  c.out = std::move(body);
  c.off = 0;
  c.st = Client::State::Writing;
  c.deadline = mono_ns() + std::uint64_t(lim_.drain_timeout_ms) * 1000000ull;
  flush(c);
  return true;
}

void ControlServer::flush(Client& c) {
  // At most a few pieces of a streamed answer per call: a fast reader does not keep the
  // loop from the other clients (the socket stays writable: EPOLLOUT brings us back).
  for (int pieces = 0;;) {
    if (c.off == c.out.size()) {  // written (and so already taken off buffered_)
      if (!c.more) break;
      if (++pieces > 4) {
        set_events(c, EPOLLOUT);
        return;
      }
      c.out.clear();
      c.off = 0;
      try {
        if (!c.more(c.out)) c.more = nullptr;
      } catch (const std::exception& e) {  // the answer cannot be finished: cut it off
        spdlog::warn("control: streamed answer: {}", e.what());
        return close_client(c.id);
      }
      buffered_ += c.out.size();
      continue;
    }
    ssize_t n = ::send(c.fd, c.out.data() + c.off, c.out.size() - c.off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        set_events(c, EPOLLOUT);
        return;
      }
      return close_client(c.id);
    }
    c.off += std::size_t(n);
    buffered_ -= std::size_t(n);
    // progress: the client drains, its deadline moves on
    c.deadline = mono_ns() + std::uint64_t(lim_.drain_timeout_ms) * 1000000ull;
  }
  close_client(c.id);
}

void ControlServer::close_client(std::uint64_t id) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Client& c = *it->second;
  if (c.st == Client::State::Writing) buffered_ -= c.out.size() - c.off;
  ::epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
  ::close(c.fd);
  clients_.erase(it);
  nclients_.store(unsigned(clients_.size()), std::memory_order_relaxed);
}

void ControlServer::expire(std::uint64_t now) {
  std::vector<std::uint64_t> late;
  for (const auto& [id, c] : clients_)
    if (now >= c->deadline) late.push_back(id);
  for (auto id : late) {
    const auto st = clients_.at(id)->st;
    close_client(id);  // then counted: a reader that sees the count sees the client gone
    if (st == Client::State::Reading) ++n_.closed_idle;
    else if (st == Client::State::Writing) ++n_.closed_stalled;
    else ++n_.closed_unanswered;
  }
}

}  // namespace ofld::daemon

// The worker skeleton of the tunnel daemon (tunnel_daemon.cpp, every mode):
// per-queue workers, each with its own epoll set and a wake eventfd;
// worker 0 runs in the thread that calls run() and also serves SIGINT/SIGTERM (signalfd)
// and the control socket; stop wakes every worker and joins them. Wiring only — the packet
// work is in the workers' handlers, which call into src/tunnel.
#pragma once

#include <signal.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "ofld/io/vnet_writer.hpp"

namespace ofld::daemon::detail {

/// Sum two stats objects: numbers add up, objects merge key by key, anything else (strings,
/// booleans) keeps the first value. Aggregates the workers' counters.
inline void json_sum(nlohmann::json& a, const nlohmann::json& b) {
  for (auto it = b.begin(); it != b.end(); ++it) {
    auto f = a.find(it.key());
    if (f == a.end()) a[it.key()] = it.value();
    else if (f->is_object() && it->is_object()) json_sum(*f, *it);
    else if (f->is_number_unsigned() && it->is_number_unsigned())
      *f = f->get<std::uint64_t>() + it->get<std::uint64_t>();
  }
}

/// The daemon's stats document: `head` (device, mode, queue count), then the workers'
/// counters summed (json_sum, each read under its worker's lock), then, with more than one
/// worker, "per_queue": each queue's tx, rx and drops_total. `extra` adds the daemon's own
/// fields before per_queue. W: a worker with `mu`, `idx` and `stats()`.
template <class W, class F>
nlohmann::json workers_stats(const std::vector<std::unique_ptr<W>>& workers, nlohmann::json head,
                             F&& extra) {
  nlohmann::json sum = nlohmann::json::object(), per = nlohmann::json::array();
  for (const auto& w : workers) {
    nlohmann::json j;
    {
      std::lock_guard g(w->mu);
      j = w->stats();
    }
    json_sum(sum, j);
    if (workers.size() > 1)
      per.push_back(nlohmann::json{{"queue", w->idx}, {"tx", j["tx"]}, {"rx", j["rx"]},
                                   {"drops_total", j["drops_total"]}});
  }
  for (auto it = sum.begin(); it != sum.end(); ++it) head[it.key()] = it.value();
  extra(head);
  if (workers.size() > 1) head["per_queue"] = std::move(per);
  return head;
}

/// The counters of a TAP/TUN writer (README "Tunnel": tap_write / tun_write).
inline nlohmann::json writer_stats(const io::VnetWriter& w) {
  const auto& s = w.stats();
  nlohmann::json refused = nlohmann::json::object(), off = nlohmann::json::object();
  for (std::size_t k = 0; k < io::kGsoWriteKinds; ++k) {
    const auto kind = io::GsoWriteKind(k);
    refused[std::string(io::to_string(kind))] = s.gso_refused[k];
    off[std::string(io::to_string(kind))] = !w.gso_on(kind);
  }
  return {{"gso_refused", refused}, {"gso_off", off}, {"sw_gso_frames", s.sw_gso_frames},
          {"sw_gso_segments", s.sw_gso_segments}, {"csum_sw", s.csum_sw},
          {"eagain_waits", s.eagain_waits}, {"short_writes", s.short_writes},
          {"failed", s.failed}};
}

/// What every worker has. A daemon's worker type derives from it and provides
/// `void handle(int fd)` (readiness of one of the fds it registered), `void tick()`
/// (worker 0, once per loop iteration) and `void drain()` (once, in its own thread, after the
/// loop ended: forward what the device and the sockets still hold, bounded).
struct WorkerBase {
  unsigned idx = 0;
  int ep = -1, wake = -1;
  std::mutex mu;  ///< held while the worker touches its state; stats readers take it too
  std::thread th;
  WorkerBase() = default;
  WorkerBase(const WorkerBase&) = delete;
  WorkerBase& operator=(const WorkerBase&) = delete;
  ~WorkerBase() {
    if (wake >= 0) ::close(wake);
    if (ep >= 0) ::close(ep);
  }
  /// Create the epoll set and the wake eventfd and watch `fds` (EPOLLIN). Error text or "".
  std::string open_events(const std::vector<int>& fds) {
    ep = ::epoll_create1(EPOLL_CLOEXEC);
    wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (ep < 0 || wake < 0) return std::string("epoll/eventfd: ") + std::strerror(errno);
    std::vector<int> all = fds;
    all.push_back(wake);
    for (int fd : all)
      if (auto e = watch(fd); !e.empty()) return e;
    return "";
  }
  std::string watch(int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) return std::string("epoll_ctl: ") + std::strerror(errno);
    return "";
  }
};

/// The workers of one endpoint, the control socket and the signals.
template <class W>
class WorkerSet {
 public:
  std::vector<std::unique_ptr<W>> workers;  ///< [0] = the device's first queue
  std::function<std::string()> stats_text;  ///< what the control socket answers
  /// The answer to a request line (e.g. "fdb"); "" = unknown request (then the stats).
  std::function<std::string(const std::string&)> request_text;
  /// Service hooks (daemon/service.hpp), each optional: `on_ready` once the workers run and
  /// the control socket is served; `on_stopping` once, when a stop begins (signal or
  /// stop_all); `each_second` about once a second in worker 0's thread (no worker lock held).
  std::function<void()> on_ready, on_stopping, each_second;

  WorkerSet() = default;
  WorkerSet(const WorkerSet&) = delete;
  WorkerSet& operator=(const WorkerSet&) = delete;
  ~WorkerSet() {
    stop_all();
    join();
    workers.clear();  // closes the device queues: the kernel deletes a non-persistent TAP/TUN
    if (ctl_ >= 0) {
      ::close(ctl_);
      ::unlink(path_.c_str());
    }
    if (sig_ >= 0) ::close(sig_);
  }

  /// Listen on the control socket `path` and turn SIGINT/SIGTERM into a signalfd, both
  /// watched by worker 0 (call after open_events of worker 0 and before run(): the worker
  /// threads inherit the blocked mask). Error text or "".
  std::string open_control(const std::string& path) {
    path_ = path;
    ::mkdir("/run/ofld", 0755);
    ctl_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (path.size() >= sizeof sa.sun_path) return "control: path too long";
    std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
    ::unlink(path.c_str());
    if (::bind(ctl_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0 || ::listen(ctl_, 8) < 0)
      return "control socket " + path + ": " + std::strerror(errno);
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGINT);
    sigaddset(&ss, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &ss, nullptr);
    sig_ = ::signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
    for (int fd : {ctl_, sig_})
      if (auto e = workers[0]->watch(fd); !e.empty()) return e;
    return "";
  }

  /// Run every worker until SIGINT/SIGTERM or stop_all(); 0, or 1 after a fatal I/O error.
  int run() {
    for (std::size_t i = 1; i < workers.size(); ++i) {
      W* w = workers[i].get();
      w->th = std::thread([this, w] { loop(*w); });
    }
    if (on_ready) on_ready();
    loop(*workers[0]);
    stopping();
    stop_all();
    join();
    return rc_;
  }

  void stop_all() noexcept {
    stop_ = true;
    std::uint64_t one = 1;
    for (auto& w : workers)
      if (w->wake >= 0 && ::write(w->wake, &one, sizeof one) < 0) {
        // the eventfd counter cannot overflow here; nothing to do
      }
  }

 private:
  void join() {
    for (auto& w : workers)
      if (w->th.joinable()) w->th.join();
  }

  void serve_control() {
    int c = ::accept4(ctl_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    // A client may send one request line ("fdb\n") or nothing (shut its side: the stats).
    // A client that neither sends nor shuts gets the stats after 100 ms.
    std::string req;
    for (;;) {
      pollfd pf{c, POLLIN, 0};
      if (::poll(&pf, 1, 100) <= 0) break;
      char b[256];
      ssize_t n = ::read(c, b, sizeof b);
      if (n <= 0) break;
      req.append(b, std::size_t(n));
      if (req.find('\n') != std::string::npos || req.size() > 1024) break;
    }
    if (auto nl = req.find('\n'); nl != std::string::npos) req.resize(nl);
    std::string s = !req.empty() && request_text ? request_text(req) : std::string();
    if (s.empty()) s = stats_text ? stats_text() : std::string("{}\n");
    std::size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::write(c, s.data() + off, s.size() - off);
      if (n <= 0) break;
      off += std::size_t(n);
    }
    ::close(c);
  }

  void loop(W& w) {
    epoll_event evs[8];
    const bool main = w.idx == 0;
    while (!stop_) {
      int n = ::epoll_wait(w.ep, evs, 8, 500);
      if (n < 0) {
        if (errno == EINTR) continue;
        spdlog::error("epoll_wait: {}", std::strerror(errno));
        rc_ = 1;
        stop_all();
        return;
      }
      for (int i = 0; i < n; ++i) {
        const int fd = evs[i].data.fd;
        if (main && fd == sig_) {
          signalfd_siginfo si;
          if (::read(sig_, &si, sizeof si) > 0)
            spdlog::info("signal {}: shutting down", int(si.ssi_signo));
          stopping();
          stop_all();
        } else if (main && fd == ctl_) {
          serve_control();
        } else if (fd != w.wake) {
          w.handle(fd);
        }
      }
      if (main) w.tick();
      if (main && each_second) {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (ts.tv_sec != last_second_) {
          last_second_ = ts.tv_sec;
          each_second();
        }
      }
    }
    w.drain();
  }

  void stopping() {
    if (!stopping_sent_.exchange(true) && on_stopping) on_stopping();
  }

  int sig_ = -1, ctl_ = -1;
  std::string path_;
  std::atomic<bool> stop_{false}, stopping_sent_{false};
  long last_second_ = 0;
  std::atomic<int> rc_{0};
};

}  // namespace ofld::daemon::detail

// The worker skeleton of the tunnel daemon (tunnel_daemon.cpp, every mode):
// per-queue workers, each with its own epoll set and a wake eventfd;
// worker 0 runs in the thread that calls run() and also serves SIGINT/SIGTERM (signalfd).
// The control socket is served by its own thread (ControlServer), never by a worker: stats
// come from snapshots each worker builds of its own counters when the control thread asks
// (an atomic flag checked once per loop iteration; no lock on the packet path). stop wakes
// every worker and joins them. Wiring only — the packet work is in the workers' handlers,
// which call into src/tunnel.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
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

#include "control_server.hpp"
#include "ofld/daemon/config.hpp"
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

/// One worker's counters document (W::stats()) and its queue index; `stale` when the worker
/// did not publish a fresh snapshot in time (the document is then its previous one, or null).
struct WorkerDoc {
  unsigned idx = 0;
  std::shared_ptr<const nlohmann::json> doc;
  bool stale = false;
};

/// The daemon's stats document: `head` (device, mode, queue count), then the workers'
/// counters summed (json_sum), then, with more than one worker, "per_queue": each queue's tx,
/// rx and drops_total. `extra` adds the daemon's own fields before per_queue; "stale_queues"
/// lists queues whose worker did not answer the snapshot in time.
template <class F>
nlohmann::json workers_stats(const std::vector<WorkerDoc>& docs, nlohmann::json head, F&& extra) {
  nlohmann::json sum = nlohmann::json::object(), per = nlohmann::json::array(),
                 stale = nlohmann::json::array();
  for (const auto& d : docs) {
    if (d.stale) stale.push_back(d.idx);
    if (!d.doc) continue;
    const nlohmann::json& j = *d.doc;
    json_sum(sum, j);
    if (docs.size() > 1)
      per.push_back(nlohmann::json{{"queue", d.idx}, {"tx", j.value("tx", nlohmann::json())},
                                   {"rx", j.value("rx", nlohmann::json())},
                                   {"drops_total", j.value("drops_total", nlohmann::json())}});
  }
  for (auto it = sum.begin(); it != sum.end(); ++it) head[it.key()] = it.value();
  extra(head);
  if (!stale.empty()) head["stale_queues"] = std::move(stale);
  if (docs.size() > 1) head["per_queue"] = std::move(per);
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
  std::thread th;
  // ---- the stats snapshot: asked for by the control thread (snap_want, then a wake), built
  // by the worker itself between two batches (W::stats()) and published in `snap`.
  std::atomic<bool> snap_want{false};
  std::mutex snap_mu;  ///< guards `snap` only: the worker takes it once per published snapshot
  std::shared_ptr<const nlohmann::json> snap;
  std::atomic<std::uint64_t> snap_gen{0};  ///< snapshots published so far
  // ---- work posted by the control thread (a reload), run by the worker between two batches
  std::atomic<bool> task_want{false};
  std::mutex task_mu;
  std::vector<std::function<void()>> tasks;
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

/// Pin the calling thread (a worker) to the one CPU `cpus[idx % n]`, or, with `cpus` empty, give
/// it back `base` (the process's CPUs at start; nothing when `base` is empty too).
/// sched_setaffinity(0, …) acts on the calling thread only. Error text or "".
inline std::string pin_thread(unsigned idx, const std::vector<unsigned>& cpus, const std::vector<unsigned>& base) {
  const std::vector<unsigned>& want = cpus.empty() ? base : cpus;
  if (want.empty()) return "";
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpus.empty())
    for (unsigned c : base) CPU_SET(c, &set);
  else
    CPU_SET(cpus[idx % cpus.size()], &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) return std::string("sched_setaffinity: ") + std::strerror(errno);
  return "";
}

inline std::uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

/// The workers of one endpoint, the control server and the signals.
template <class W>
class WorkerSet {
 public:
  std::vector<std::unique_ptr<W>> workers;  ///< [0] = the device's first queue
  std::unique_ptr<ControlServer> ctl;        ///< the control socket (its own thread during run())
  /// Called on the control thread with every worker's latest document.
  using SnapshotDone = std::function<void(const std::vector<WorkerDoc>&)>;
  /// A request is answered from a snapshot taken after it arrived; rounds start at most every
  /// kMinRoundGapNs (a flood of stats requests costs each worker at most 100 builds a
  /// second), and a worker that has not published within kRoundTimeoutNs is reported stale.
  static constexpr std::uint64_t kMinRoundGapNs = 10'000'000, kRoundTimeoutNs = 500'000'000;
  /// Service hooks (daemon/service.hpp), each optional: `on_ready` once the workers run and
  /// the control socket is served; `on_stopping` once, when a stop begins (signal or
  /// stop_all); `each_second` about once a second on the control thread (ask for a snapshot
  /// there to read counters).
  std::function<void()> on_ready, on_stopping, each_second;
  /// SIGHUP, on the control thread (a reload; set before open_control).
  std::function<void()> on_reload;
  /// `cpus` (DaemonConfig::cpus): worker i pins its own thread to cpus[i % n] when its loop
  /// starts (set before run(); repin() changes it later). Empty: no pinning.
  std::vector<unsigned> cpus;

  WorkerSet() = default;
  WorkerSet(const WorkerSet&) = delete;
  WorkerSet& operator=(const WorkerSet&) = delete;
  ~WorkerSet() {
    stop_all();
    join();
    ctl.reset();      // stops the control thread, unlinks the socket if it is still ours
    workers.clear();  // closes the device queues: the kernel deletes a non-persistent TAP/TUN
    if (sig_ >= 0) ::close(sig_);
    if (snap_ev_ >= 0) ::close(snap_ev_);
    if (hup_ >= 0) ::close(hup_);
  }

  /// Own the control socket (ControlServer::open: refused when a live endpoint holds the
  /// path) and turn SIGINT/SIGTERM into a signalfd watched by worker 0 (call after
  /// open_events of worker 0 and before run(): the worker threads inherit the blocked mask).
  /// Error text or "".
  std::string open_control(ControlSocketOptions opts) {
    auto c = ControlServer::open(std::move(opts));
    if (!c.ok()) return c.message();
    ctl = std::move(c.value());
    snap_ev_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (snap_ev_ < 0) return std::string("eventfd: ") + std::strerror(errno);
    ctl->watch(snap_ev_, [this] {
      std::uint64_t v;
      if (::read(snap_ev_, &v, sizeof v) < 0) {
        // drained already
      }
      pump();
    });
    ctl->on_tick([this] {
      pump();
      if (each_second) {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (ts.tv_sec != last_second_) {
          last_second_ = ts.tv_sec;
          each_second();
        }
      }
    });
    // SIGHUP (reload) is read on the control thread, off the data path
    sigset_t hs;
    sigemptyset(&hs);
    sigaddset(&hs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &hs, nullptr);
    hup_ = ::signalfd(-1, &hs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (hup_ < 0) return std::string("signalfd: ") + std::strerror(errno);
    ctl->watch(hup_, [this] {
      signalfd_siginfo si;
      while (::read(hup_, &si, sizeof si) > 0)
        if (on_reload) on_reload();
    });
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGINT);
    sigaddset(&ss, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &ss, nullptr);
    sig_ = ::signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sig_ < 0) return std::string("signalfd: ") + std::strerror(errno);
    return workers[0]->watch(sig_);
  }

  /// Control thread only: call `done` with the workers' documents of a snapshot round that
  /// starts after this call.
  void snapshot(SnapshotDone done) {
    next_.push_back(std::move(done));
    pump();
  }

  /// Run every worker (and the control thread) until SIGINT/SIGTERM or stop_all(); 0, or 1
  /// after a fatal I/O error.
  int run() {
    base_cpus_ = allowed_cpus();  // before any worker pins itself (worker 0 is this thread)
    if (ctl) ctl->start();
    for (std::size_t i = 1; i < workers.size(); ++i) {
      W* w = workers[i].get();
      w->th = std::thread([this, w] { loop(*w); });
    }
    if (on_ready) on_ready();
    loop(*workers[0]);
    stopping();
    stop_all();
    join();
    if (ctl) ctl->stop();
    return rc_;
  }

  /// Control thread (a reload): every worker re-pins its thread to `next` (empty: back to the
  /// CPUs the process had when run() began), between two of its batches.
  void repin(const std::vector<unsigned>& next) {
    post_all([next, base = base_cpus_](W& w) { pin(w, next, base); });
  }

  /// Control thread: run `f(worker)` on every worker's own thread, between two of its batches.
  void post_all(const std::function<void(W&)>& f) {
    std::uint64_t one = 1;
    for (auto& wp : workers) {
      W* w = wp.get();
      {
        std::lock_guard g(w->task_mu);
        w->tasks.push_back([w, f] { f(*w); });
      }
      w->task_want.store(true, std::memory_order_release);
      if (::write(w->wake, &one, sizeof one) < 0) {
        // already woken
      }
    }
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

  // Worker thread: build and publish this worker's document (between two batches).
  void publish(W& w) {
    w.snap_want.store(false, std::memory_order_relaxed);
    auto doc = std::make_shared<const nlohmann::json>(w.stats());
    {
      std::lock_guard g(w.snap_mu);
      w.snap = std::move(doc);
    }
    w.snap_gen.fetch_add(1, std::memory_order_release);
    std::uint64_t one = 1;
    if (::write(snap_ev_, &one, sizeof one) < 0) {
      // the control thread also polls the round on its tick
    }
  }

  // Control thread: finish the round in flight when every worker has published (or it timed
  // out), then start the next one if requests wait and the gap allows.
  void pump() {
    const std::uint64_t now = mono_ns();
    if (in_round_) {
      bool all = true;
      for (std::size_t i = 0; i < workers.size(); ++i)
        if (workers[i]->snap_gen.load(std::memory_order_acquire) == gen0_[i]) all = false;
      if (!all && now - round_t0_ < kRoundTimeoutNs) {
        ctl->wake_at(round_t0_ + kRoundTimeoutNs);
        return;
      }
      std::vector<WorkerDoc> docs;
      for (std::size_t i = 0; i < workers.size(); ++i) {
        W& w = *workers[i];
        WorkerDoc d;
        d.idx = w.idx;
        d.stale = w.snap_gen.load(std::memory_order_acquire) == gen0_[i];
        std::lock_guard g(w.snap_mu);
        d.doc = w.snap;
        docs.push_back(std::move(d));
      }
      auto round = std::move(round_);
      round_.clear();
      in_round_ = false;
      for (auto& f : round) f(docs);
    }
    if (next_.empty()) return;
    if (last_t0_ && now - last_t0_ < kMinRoundGapNs) {
      ctl->wake_at(last_t0_ + kMinRoundGapNs);
      return;
    }
    round_ = std::move(next_);
    next_.clear();
    gen0_.resize(workers.size());
    std::uint64_t one = 1;
    for (std::size_t i = 0; i < workers.size(); ++i) {
      gen0_[i] = workers[i]->snap_gen.load(std::memory_order_acquire);
      workers[i]->snap_want.store(true, std::memory_order_release);
      if (::write(workers[i]->wake, &one, sizeof one) < 0) {
        // already woken
      }
    }
    in_round_ = true;
    round_t0_ = last_t0_ = now;
    ctl->wake_at(now + kRoundTimeoutNs);
  }

  static void pin(W& w, const std::vector<unsigned>& want, const std::vector<unsigned>& base) {
    if (auto e = pin_thread(w.idx, want, base); !e.empty())
      spdlog::warn("worker {}: cpus {}: {}", w.idx, want.empty() ? std::string("(none)") : std::to_string(want[w.idx % want.size()]), e);
    else if (!want.empty())
      spdlog::debug("worker {} pinned to cpu {}", w.idx, want[w.idx % want.size()]);
  }

  void loop(W& w) {
    epoll_event evs[8];
    const bool main = w.idx == 0;
    if (!main) {
      // "ofld-qN": worker N's thread in top -H, ps -L and /proc/PID/task/*/comm (worker 0 is
      // the main thread and keeps the process's name)
      const std::string name = "ofld-q" + std::to_string(w.idx);  // at most 9 characters (< 16)
      pthread_setname_np(pthread_self(), name.c_str());
    }
    if (!cpus.empty()) pin(w, cpus, base_cpus_);
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
        } else if (fd == w.wake) {
          std::uint64_t v;
          if (::read(w.wake, &v, sizeof v) < 0) {
            // drained by an earlier wake-up
          }
        } else {
          w.handle(fd);
        }
      }
      if (main) w.tick();
      if (w.snap_want.load(std::memory_order_acquire)) publish(w);
      if (w.task_want.load(std::memory_order_acquire)) {
        std::vector<std::function<void()>> todo;
        {
          std::lock_guard g(w.task_mu);
          w.task_want.store(false, std::memory_order_relaxed);
          todo.swap(w.tasks);
        }
        for (auto& t : todo) t();
      }
    }
    w.drain();
  }

  void stopping() {
    if (!stopping_sent_.exchange(true) && on_stopping) on_stopping();
  }

  std::vector<unsigned> base_cpus_;  ///< the process's CPUs when run() began
  int sig_ = -1, snap_ev_ = -1, hup_ = -1;
  std::atomic<bool> stop_{false}, stopping_sent_{false};
  long last_second_ = 0;
  std::atomic<int> rc_{0};
  // snapshot rounds (control thread only)
  std::vector<SnapshotDone> next_, round_;
  std::vector<std::uint64_t> gen0_;
  bool in_round_ = false;
  std::uint64_t round_t0_ = 0, last_t0_ = 0;
};

}  // namespace ofld::daemon::detail

// The metrics endpoint's HTTP server (metrics_server.hpp), on Debian's cpp-httplib.
#include "metrics_server.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <vector>

#include <spdlog/spdlog.h>

#ifdef OFLD_HAVE_HTTPLIB
#include <httplib.h>
#endif

namespace ofld::daemon {

using json = nlohmann::json;

#ifdef OFLD_HAVE_HTTPLIB
namespace {

/// httplib's task queue: up to `max_threads` threads, started as connections need them (an idle
/// or slow client holds one thread, so a scrape behind a few of them still finds a free one
/// at once), and a bounded queue: enqueue (called by the accepting thread) waits while
/// `max_queued` connections wait already, so a crowd of idle or slow clients holds at most
/// max_threads + max_queued sockets and the rest stay in the kernel's listen backlog.
class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool(unsigned max_threads, unsigned max_queued)
      : max_threads_(max_threads ? max_threads : 1), max_(max_queued ? max_queued : 1) {}
  ~BoundedPool() override { shutdown(); }
  void enqueue(std::function<void()> fn) override {
    std::unique_lock g(mu_);
    room_.wait(g, [&] { return q_.size() < max_ || down_; });
    q_.push_back(std::move(fn));  // after shutdown too: run by a worker before it exits (closes the socket)
    if (idle_ < q_.size() && th_.size() < max_threads_) th_.emplace_back([this] { work(); });
    have_.notify_one();
  }
  void shutdown() override {
    std::vector<std::thread> th;
    {
      std::lock_guard g(mu_);
      down_ = true;
      th.swap(th_);
    }
    have_.notify_all();
    room_.notify_all();
    for (auto& t : th)
      if (t.joinable()) t.join();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock g(mu_);
        ++idle_;
        have_.wait(g, [&] { return !q_.empty() || down_; });
        --idle_;
        if (q_.empty()) return;
        fn = std::move(q_.front());
        q_.pop_front();
        room_.notify_one();
      }
      fn();
    }
  }
  std::mutex mu_;
  std::condition_variable have_, room_;
  std::deque<std::function<void()>> q_;
  std::vector<std::thread> th_;
  std::size_t max_threads_, max_;
  std::size_t idle_ = 0;  ///< workers waiting for a connection
  bool down_ = false;
};

}  // namespace

struct MetricsServer::Impl {
  httplib::Server srv;
};
#else
struct MetricsServer::Impl {};
#endif

io::Result<std::unique_ptr<MetricsServer>> MetricsServer::bind(const MetricsListen& where, MetricsLimits lim) {
  using R = io::Result<std::unique_ptr<MetricsServer>>;
  const std::string what = "metrics " + (where.host.find(':') != std::string::npos ? "[" + where.host + "]" : where.host) +
                           ":" + std::to_string(where.port);
#ifndef OFLD_HAVE_HTTPLIB
  (void)lim;
  return R::error(what + ": this ofld was built without cpp-httplib (libcpp-httplib-dev)");
#else
  std::unique_ptr<MetricsServer> m(new MetricsServer());
  m->lim_ = lim;
  m->im_ = std::make_unique<Impl>();
  m->ask_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (m->ask_ < 0) return R::error(what + ": eventfd: " + std::strerror(errno));
  auto& s = m->im_->srv;
  const unsigned threads = lim.threads, queued = lim.max_queued;
  s.new_task_queue = [threads, queued] { return new BoundedPool(threads, queued); };
  s.set_read_timeout(lim.io_timeout_ms / 1000, (lim.io_timeout_ms % 1000) * 1000);
  s.set_write_timeout(lim.io_timeout_ms / 1000, (lim.io_timeout_ms % 1000) * 1000);
  s.set_keep_alive_timeout(lim.keep_alive_s);
  s.set_keep_alive_max_count(lim.keep_alive_max);
  s.set_payload_max_length(1024);
  MetricsServer* self = m.get();
  s.Get("/metrics", [self](const httplib::Request& q, httplib::Response& r) {
    std::string ct;
    int status = 200;
    std::string body = self->scrape(q.get_header_value("Accept"), ct, status);
    r.status = status;
    r.set_content(std::move(body), ct.c_str());
  });
  s.set_error_handler([self](const httplib::Request&, httplib::Response& r) {
    if (r.status == 404) {
      self->not_found_.fetch_add(1, std::memory_order_relaxed);
      r.set_content("ofld: the metrics are at /metrics\n", "text/plain");
    }
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& r, std::exception_ptr) {
    r.status = 500;
    r.set_content("ofld: internal error\n", "text/plain");
  });
  if (where.host.find(':') != std::string::npos) s.set_address_family(AF_INET6);
  errno = 0;
  if (where.port == 0) {
    const int p = s.bind_to_any_port(where.host);
    if (p <= 0) return R::error(what + ": bind: " + (errno ? std::strerror(errno) : "failed"));
    m->port_ = std::uint16_t(p);
  } else {
    if (!s.bind_to_port(where.host, where.port))
      return R::error(what + ": bind: " + (errno ? std::strerror(errno) : "failed"));
    m->port_ = where.port;
  }
  return R(std::move(m));
#endif
}

void MetricsServer::start() {
#ifdef OFLD_HAVE_HTTPLIB
  if (th_.joinable()) return;
  th_ = std::thread([this] {
    if (!im_->srv.listen_after_bind()) spdlog::warn("metrics: the HTTP server stopped");
  });
#endif
}

void MetricsServer::stop() noexcept {
#ifdef OFLD_HAVE_HTTPLIB
  if (!im_) return;
  if (!th_.joinable()) start();  // never started: start, so that stopping closes the socket
  // stop() only acts once the server runs (it sets is_running in its own thread)
  for (int i = 0; i < 500 && !im_->srv.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  im_->srv.stop();
  {
    std::lock_guard g(mu_);
    gen_ = ~std::uint64_t(0) >> 1;  // wakes waiting scrapes
  }
  cv_.notify_all();
  if (th_.joinable()) th_.join();
#endif
}

MetricsServer::~MetricsServer() {
  stop();
  if (ask_ >= 0) ::close(ask_);
}

bool MetricsServer::take_asks() noexcept {
  std::uint64_t v = 0;
  return ::read(ask_, &v, sizeof v) == ssize_t(sizeof v) && v > 0;
}

void MetricsServer::publish(std::shared_ptr<const json> doc) {
  {
    std::lock_guard g(mu_);
    doc_ = std::move(doc);
    ++gen_;
  }
  cv_.notify_all();
}

MetricsCounters MetricsServer::counters() const {
  return {scrapes_.load(std::memory_order_relaxed), stale_.load(std::memory_order_relaxed),
          unavailable_.load(std::memory_order_relaxed), not_found_.load(std::memory_order_relaxed)};
}

json MetricsCounters::to_json() const {
  return {{"scrapes", scrapes}, {"stale", stale}, {"unavailable", unavailable}, {"not_found", not_found}};
}

std::string MetricsServer::scrape(const std::string& accept, std::string& content_type, int& status) {
  scrapes_.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<const json> doc;
  bool fresh = false;
  {
    std::unique_lock g(mu_);
    const std::uint64_t g0 = gen_;
    std::uint64_t one = 1;
    if (::write(ask_, &one, sizeof one) < 0) {
      // the counter cannot overflow in practice; the control thread reads it on every wake
    }
    fresh = cv_.wait_for(g, std::chrono::milliseconds(lim_.fresh_wait_ms), [&] { return gen_ != g0; });
    doc = doc_;
  }
  if (!doc) {
    unavailable_.fetch_add(1, std::memory_order_relaxed);
    status = 503;
    content_type = "text/plain";
    return "ofld: no stats document yet\n";
  }
  if (!fresh) stale_.fetch_add(1, std::memory_order_relaxed);
  const MetricsFormat f = metrics_format_for(accept);
  content_type = std::string(metrics_content_type(f));
  return render_metrics(*doc, f);
}

}  // namespace ofld::daemon

// The HTTP side of the metrics endpoint (`--metrics ADDR:PORT`; docs/service.md "Metrics"):
// cpp-httplib serving GET /metrics from threads of its own, never a data-path worker and never
// the control thread. A scrape asks the control thread for a stats document through an eventfd
// (ask_fd, watched by the control server's loop: the same snapshot rounds `ofld stats` uses,
// no lock on the packet path), waits up to MetricsLimits::fresh_wait_ms for it, and renders it
// (ofld/daemon/metrics.hpp); when none comes in time it serves the last one (counted stale).
//
// Bounded: a pool of at most MetricsLimits::threads threads, started on demand, with a bounded
// queue of accepted connections (when full, accepting waits: further clients wait in the
// kernel's listen backlog, nothing grows). Each idle or slow client holds a thread until its
// read times out, so scrapes are served at once behind up to threads - 1 of them; every
// read and write has a timeout; keep-alive is short and capped; request bodies are refused.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "ofld/daemon/metrics.hpp"
#include "ofld/io/result.hpp"

namespace ofld::daemon {

struct MetricsLimits {
  unsigned threads = 16;                ///< connections served at once (threads started on demand)
  unsigned max_queued = 4;              ///< accepted connections waiting for a thread
  unsigned io_timeout_ms = 2000;        ///< per read / write of a connection
  unsigned keep_alive_s = 2;            ///< idle time on a kept-alive connection
  unsigned keep_alive_max = 16;         ///< requests on one connection
  unsigned fresh_wait_ms = 1000;        ///< wait for a fresh stats document
};

/// Counters of the metrics endpoint (stats "metrics"; scraped as ofld_metrics_*_total).
struct MetricsCounters {
  std::uint64_t scrapes = 0;      ///< GET /metrics requests
  std::uint64_t stale = 0;        ///< answered with the previous document (no fresh one in time)
  std::uint64_t unavailable = 0;  ///< answered 503: no document yet
  std::uint64_t not_found = 0;    ///< another path (404)
  nlohmann::json to_json() const;
};

class MetricsServer {
 public:
  /// Bind (and listen on) `where`; errors name the setting ("metrics 127.0.0.1:9100: ...").
  /// Bind while privileged (a port below 1024), start() once privileges are dropped: start()
  /// creates the threads.
  static io::Result<std::unique_ptr<MetricsServer>> bind(const MetricsListen& where, MetricsLimits lim = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  void start();
  void stop() noexcept;
  /// The bound port (the configured one, or the kernel's choice for port 0).
  std::uint16_t port() const noexcept { return port_; }

  /// Readable when a scrape waits for a fresh document. Control thread: take_asks() then
  /// publish() once the snapshot round is done.
  int ask_fd() const noexcept { return ask_; }
  /// Control thread: reset ask_fd; true when some scrape asked.
  bool take_asks() noexcept;
  /// Control thread: the newest stats document.
  void publish(std::shared_ptr<const nlohmann::json> doc);

  MetricsCounters counters() const;

  struct Impl;

 private:
  MetricsServer() = default;
  std::unique_ptr<Impl> im_;
  int ask_ = -1;
  std::uint16_t port_ = 0;
  std::thread th_;
  // the newest document, and how many were published (a scrape waits for the count to move)
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const nlohmann::json> doc_;
  std::uint64_t gen_ = 0;
  std::atomic<std::uint64_t> scrapes_{0}, stale_{0}, unavailable_{0}, not_found_{0};
  MetricsLimits lim_;

  std::string scrape(const std::string& accept, std::string& content_type, int& status);
};

}  // namespace ofld::daemon

// ofld/daemon/tunnel_daemon.hpp — the `ofld tunnel` endpoint process: a TAP and a UDP
// socket joined by tunnel::Datapath, in one epoll loop, with a control socket for stats.
// With DaemonConfig::queues = N > 1: an IFF_MULTI_QUEUE TAP with N queue fds and N workers
// (worker 0 in the thread calling run(), the others in their own threads), each with its own
// epoll set, UDP socket (SO_REUSEPORT group on local:dstport), Datapath and buffers; one
// shared FDB (tunnel::SharedFdb); stats summed with a per-queue breakdown.
//
// Wiring only: every packet decision is in tunnel::Datapath. Start-up: open the TAP
// (IFF_VNET_HDR; TUNSETOFFLOAD CSUM|TSO4|TSO6|TSO_ECN, best accepted subset, one log line),
// set its MTU (configured, else 1500 − encapsulation overhead) and bring it up, optionally
// assign an address; open the UDP socket on local:dstport (UDP_SEGMENT / UDP_GRO probes);
// listen on the control socket. SIGINT/SIGTERM (signalfd) end the loop; the destructor
// closes the TAP (the kernel deletes a non-persistent TAP) and unlinks the control socket.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "ofld/daemon/config.hpp"
#include "ofld/io/netns.hpp"

namespace ofld::daemon {

class TunnelDaemon {
 public:
  /// Set everything up (errors name the failing step).
  static io::Result<std::unique_ptr<TunnelDaemon>> create(const DaemonConfig& cfg);
  ~TunnelDaemon();
  /// Run until SIGINT/SIGTERM or request_stop(). Returns 0, or 1 after a fatal I/O error.
  int run();
  void request_stop() noexcept;
  /// Counters, drops by reason, GSO/GRO engine numbers, socket and TAP features.
  nlohmann::json stats_json() const;
  const std::string& tap_name() const noexcept;

  struct Impl;

 private:
  explicit TunnelDaemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Fetch the stats JSON from a running daemon's control socket.
io::Result<nlohmann::json> query_stats(const std::string& control_path);

}  // namespace ofld::daemon

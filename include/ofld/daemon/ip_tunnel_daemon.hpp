// ofld/daemon/ip_tunnel_daemon.hpp — the `ofld tunnel gue|gre|ip6gre` endpoint process: a TUN
// device and a UDP socket (GUE) or a raw IP socket of protocol 47 (GRE) joined by
// tunnel::IpDatapath in one epoll loop, with the same control socket protocol as the VXLAN
// daemon (`ofld stats`).
//
// Wiring only. Start-up: open the TUN (IFF_VNET_HDR; TUNSETOFFLOAD CSUM|TSO4|TSO6|TSO_ECN,
// best accepted subset, one log line), MTU (configured, else 1500 − overhead), up, optional
// address; the socket (GUE: bound to local:port with UDP_SEGMENT/UDP_GRO probes; GRE: raw,
// bound to local); control socket; SIGINT/SIGTERM via signalfd end the loop and the
// destructor closes the TUN (the kernel deletes it) and unlinks the control socket.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "ofld/daemon/config.hpp"
#include "ofld/io/netns.hpp"

namespace ofld::daemon {

class IpTunnelDaemon {
 public:
  /// Set everything up for cfg.mode Gue or Gre (errors name the failing step).
  static io::Result<std::unique_ptr<IpTunnelDaemon>> create(const DaemonConfig& cfg);
  ~IpTunnelDaemon();
  /// Run until SIGINT/SIGTERM or request_stop(). Returns 0, or 1 after a fatal I/O error.
  int run();
  void request_stop() noexcept;
  /// Counters, drops by reason, GSO/GRO engine numbers, socket and TUN features.
  nlohmann::json stats_json() const;

  struct Impl;

 private:
  explicit IpTunnelDaemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ofld::daemon

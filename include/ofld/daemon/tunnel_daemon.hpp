// ofld/daemon/tunnel_daemon.hpp — the `ofld tunnel` endpoint process, every mode: a device
// (TAP for VXLAN, TUN for GUE, GRE and ip6gre) and the underlay sockets (UDP for VXLAN and
// GUE, raw IP protocol 47 for GRE) joined by the mode's data path, in one epoll loop per
// queue, with a control socket for stats (`ofld stats`) served by a thread of its own (never
// a data-path worker; README "Control socket: who may do what"). With DaemonConfig::queues = N > 1: an
// IFF_MULTI_QUEUE device with N queue fds and N workers (worker 0 in the thread calling run(),
// the others in their own threads), each with its own epoll set, sockets (UDP: SO_REUSEPORT
// group on the local port; GRE: only worker 0's raw socket receives), data path and buffers;
// one shared FDB (VXLAN, tunnel::SharedFdb); stats summed with a per-queue breakdown.
//
// Wiring only: every packet decision is in src/tunnel, every read and write of the device in
// io::Tap / io::Tun (read_batch, write_batch). Start-up: open the device (IFF_VNET_HDR;
// TUNSETOFFLOAD CSUM|TSO4|TSO6|TSO_ECN[|USO4|USO6 on a TAP], best accepted subset, one log
// line), set its MTU (configured, else 1500 − encapsulation overhead) and bring it up,
// optionally assign an address; open the sockets (UDP_SEGMENT / UDP_GRO probes); listen on the
// control socket (refused when a live endpoint answers on its path; mode 0660, group
// DaemonConfig::control_group); with DaemonConfig::user (or when not root) drop to the
// capabilities still needed (daemon/service.hpp). run() reports READY=1 to systemd (sd_notify)
// once the workers run; SIGINT/SIGTERM (signalfd) report STOPPING=1 and end the loop, each
// worker then drains its device queue and sockets once; the destructor closes the device (the
// kernel deletes a non-persistent TAP/TUN) and unlinks the control socket. A persistent
// device's MTU, link state and address are not set again when already so.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "ofld/daemon/config.hpp"
#include "ofld/io/netns.hpp"
#include "ofld/io/vnet_writer.hpp"

namespace ofld::daemon {

/// What a program embedding the endpoint (not its configuration) chooses.
struct TunnelDaemonOptions {
  /// The writev(2) every device writer (io::VnetWriter, one per queue) calls; null → ::writev.
  /// A test injects one that fails on purpose (EINVAL for GSO frames, EAGAIN, short writes)
  /// to drive the software-GSO fallback against the real kernel.
  io::WritevFn device_writev;
};

class TunnelDaemon {
 public:
  /// Set everything up for cfg.mode (errors name the failing step; skipped without
  /// /dev/net/tun or CAP_NET_ADMIN).
  static io::Result<std::unique_ptr<TunnelDaemon>> create(const DaemonConfig& cfg,
                                                          TunnelDaemonOptions opts = {});
  ~TunnelDaemon();
  /// Run until SIGINT/SIGTERM or request_stop(). Returns 0, or 1 after a fatal I/O error.
  int run();
  void request_stop() noexcept;
  /// Counters, drops by reason, GSO/GRO engine numbers, socket and TAP features. Reads the
  /// workers' state directly: call it before or after run(), not while it runs (then ask the
  /// control socket, query_stats, which answers from the workers' published snapshots).
  nlohmann::json stats_json() const;
  /// Where a reload (SIGHUP, the control request "reload", `ofld reload`) reads the
  /// configuration again: typically the --config file with the same command-line options
  /// applied (they win, as at start). Unset: a reload is refused (nothing to read). What may
  /// change: ofld/daemon/reload.hpp. Call before run().
  void set_reload_source(std::function<Parsed<DaemonConfig>()> source);
  /// The device's name (TAP or TUN).
  const std::string& tap_name() const noexcept;

  struct Impl;

 private:
  explicit TunnelDaemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Fetch the stats JSON from a running daemon's control socket.
io::Result<nlohmann::json> query_stats(const std::string& control_path);
/// Send `request` (one line, e.g. "fdb") on the control socket and parse the JSON answer.
/// The daemon answers "fdb" with tunnel::SharedFdb::to_json plus "vni" and "evpn" (the
/// BGP client's state, when configured); an error for a non-VXLAN endpoint. Other requests:
/// "stats", "who" (the endpoint's dev, mode, pid, uid), "log-level LEVEL", "reload" (owner or
/// root; answered {"reloaded": true, "changes": [...]} or {"error": ...}).
/// A refused or unknown request is answered {"error": "..."} (still ok() here). Waits at
/// most 30 s for the answer.
io::Result<nlohmann::json> query_control(const std::string& control_path, const std::string& request);
/// query_control's answer as the text the daemon sent (one JSON document and a newline),
/// unparsed: `ofld fdb --json` passes a 100,000-entry table through as it is.
io::Result<std::string> query_control_text(const std::string& control_path, const std::string& request);

}  // namespace ofld::daemon

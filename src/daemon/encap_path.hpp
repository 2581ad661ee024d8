// The one seam between the daemon's loop and an encapsulation's data path (internal to
// src/daemon). The loop (tunnel_daemon.cpp) moves frames between a device queue and the
// underlay sockets and knows nothing of VXLAN, GUE or GRE; an EncapPath forwards to the data
// path of the configured mode (tunnel::Datapath for VXLAN, tunnel::IpDatapath for GUE, GRE and
// ip6gre) and renders its counters. Wiring only: every packet decision stays in src/tunnel.
// Meant to be pointed at tunnel::Endpoint once that one data path exists.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/core/packet.hpp"
#include "ofld/daemon/config.hpp"
#include "ofld/tunnel/datapath.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::daemon::detail {

/// Per-mode options the daemon learns at start-up (device facts, the shared FDB).
struct EncapPathOptions {
  bool gro = true;          ///< GRO after decapsulation
  bool dev_vnet_hdr = true; ///< the TAP/TUN carries a virtio_net_hdr
  int dev_mtu = 0;          ///< the device's MTU
  tunnel::Mac own_mac{};    ///< VXLAN: the TAP's MAC (loop check)
  std::shared_ptr<tunnel::SharedFdb> fdb;  ///< VXLAN: shared by the workers
  bool tx_pieces = false;   ///< VXLAN: scattered trains (UdpSocket::send_train_pieces)
};

class EncapPath {
 public:
  virtual ~EncapPath() = default;
  /// One frame read from the device → trains appended to `out`.
  virtual void transmit(const wire::virtio_net::Hdr& vnet, std::span<const std::uint8_t> frame,
                        std::uint64_t now_ns, std::vector<tunnel::TxTrain>& out) = 0;
  /// One received buffer, bytes [off, off + len) of `owner`: a UDP payload or UDP_GRO train of
  /// `gso_size`-byte datagrams (0: one), or a GRE packet; `tos`: outer TOS, -1 unknown.
  virtual void receive(const core::BufferRef& owner, std::size_t off, std::size_t len,
                       std::uint16_t gso_size, const tunnel::IpAddr& from, int tos,
                       std::uint64_t now_ns) = 0;
  /// End of a receive batch: GRO flush, frames for the device appended to `out`.
  virtual void rx_flush(std::uint64_t now_ns, std::vector<tunnel::TapFrame>& out) = 0;
  /// After the trains were sent: buffers back for reuse; `sent` is cleared.
  virtual void recycle(std::vector<tunnel::TxTrain>& sent) = 0;
  /// About once a second (worker 0): FDB ageing.
  virtual void tick(std::uint64_t now_ns) = 0;
  /// A train the sockets did not take (`datagrams` lost: TxSendFailed), or one sent as a
  /// UDP_SEGMENT train (`train`).
  virtual void count_send(std::uint32_t datagrams_failed, bool train) = 0;
  /// What the device took of rx_flush's frames (frames, bytes; lost: Rx{Tap,Tun}WriteFailed).
  virtual void count_written(std::uint64_t frames, std::uint64_t bytes, std::uint64_t failed) = 0;
  /// {"tx", "rx", "drops", "drops_total", "gso", "gro"[, "fdb"]} of this worker.
  virtual nlohmann::json stats() const = 0;
};

/// The EncapPath of cfg.mode.
std::unique_ptr<EncapPath> make_encap_path(const DaemonConfig& cfg, const EncapPathOptions& o);

}  // namespace ofld::daemon::detail

// ofld/tunnel/ip_datapath.hpp — the packet path of the L3 tunnel modes (GUE, GRE, ip6gre)
// without I/O. The daemon feeds it TUN packets (virtio_net_hdr + IP packet) and received
// tunnel payloads, and performs the system calls it asks for.
//
// Transmit: virtio_net_hdr + IP packet → offload::virtio::to_packet (S-1..S-5, raw IP) →
// tunnel header (gue_build_header / gre_build_header). A TSO super-packet is turned into the
// encapsulated super-packet the kernel's tunnel driver would hand to GSO — outer IP [+ UDP]
// + GUE/GRE header + inner packet, encapsulation set, inner_* headers, gso_type |=
// UDP_TUNNEL(_CSUM) [+ TUNNEL_REMCSUM] or GRE(_CSUM) (W-3b) — and segmented by the GSO engine
// through the UDP-tunnel/GUE hook (X-31, W-28: with RCO the inner field stays the per-segment
// seed) or the GRE hook (X-33: GRE checksum computed from the segment's known sum). The
// outer IP [+ UDP] header of every segment is then dropped: the kernel builds its own (UDP
// socket with UDP_SEGMENT for GUE, raw IP socket for GRE). A packet that is not GSO gets its
// inner checksum finished in software (checksum_help), unless it travels as RCO, and the GRE
// checksum summed over the GRE packet.
//
// Receive: payload → gue_decap / gre_decap → GRO after decapsulation on the inner IP packets
// (gro_cells analogue, W-12; raw-IP link) → TUN frames with the virtio_net_hdr from
// offload::virtio::from_packet (S-7, S-8).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ofld/tunnel/datapath.hpp"  // TxTrain, TapFrame
#include "ofld/tunnel/ip_tunnel.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::gro { class Engine; }
namespace ofld::core { struct GsoCounters; }
namespace ofld::offload { using core::GsoCounters; }

namespace ofld::tunnel {

struct IpDatapathOptions {
  bool gro = true;           ///< GRO after decapsulation
  bool tun_vnet_hdr = true;  ///< the TUN carries a virtio_net_hdr (else PARTIAL is finished here)
};

class IpDatapath {
 public:
  IpDatapath(IpTunnelConfig cfg, IpDatapathOptions opts);
  ~IpDatapath();
  IpDatapath(const IpDatapath&) = delete;
  IpDatapath& operator=(const IpDatapath&) = delete;

  /// One packet read from the TUN. Appends trains of encapsulated packets (each starting
  /// at the GUE/GRE header; TxTrain::src_port unused; TxTrain::tos = ip_outer_tos()) to `out`.
  void transmit(const wire::virtio_net::Hdr& vnet, std::span<const std::uint8_t> packet,
                std::vector<TxTrain>& out);
  /// One received GUE UDP payload or GRE packet from `from` (outer source address);
  /// `outer_tos`: outer IPv4 TOS / IPv6 traffic class (IP_RECVTOS / IPV6_RECVTCLASS or the
  /// raw socket's IPv4 header), -1 when unknown (no RFC 6040 decapsulation).
  void receive(std::span<const std::uint8_t> payload, const IpAddr& from, OuterCsum outer,
               std::uint64_t now_ns, int outer_tos = -1);
  /// A UDP_GRO buffer (GUE): datagrams of gso_size bytes end to end; each is decapsulated on
  /// its own (public bug E1). gso_size 0 = one datagram.
  void receive_train(std::span<const std::uint8_t> buf, std::uint16_t gso_size,
                     const IpAddr& from, OuterCsum outer, std::uint64_t now_ns,
                     int outer_tos = -1);
  /// End of a receive batch: complete GRO flows, append TUN frames (TapFrame::data = IP packet).
  void rx_flush(std::uint64_t now_ns, std::vector<TapFrame>& out);

  const IpTunnelConfig& config() const noexcept { return cfg_; }
  IpCounters& counters() noexcept { return ctr_; }
  const IpCounters& counters() const noexcept { return ctr_; }
  const gro::Engine* gro() const noexcept { return gro_.get(); }
  const offload::GsoCounters& gso_counters() const noexcept { return *gso_ctr_; }

 private:
  bool encap_gso(core::Packet& p, std::span<const std::uint8_t> hdr, bool rco,
                 std::vector<std::uint32_t>& sizes);
  void to_tun(core::Packet&& p, std::vector<TapFrame>& out);

  IpTunnelConfig cfg_;
  IpDatapathOptions opts_;
  IpCounters ctr_;
  std::unique_ptr<gro::Engine> gro_;
  std::unique_ptr<offload::GsoCounters> gso_ctr_;
  std::vector<core::Packet> rx_nogro_;
  std::vector<std::uint8_t> scratch_;
};

}  // namespace ofld::tunnel

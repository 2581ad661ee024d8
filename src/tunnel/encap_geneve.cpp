// The Geneve encapsulation: Ethernet over UDP with options (RFC 8926; the Linux geneve
// driver's classic mode, geneve_xmit_skb / geneve_rx): a TAP device and a UDP socket on
// dstport, the one remote (only its datagrams are taken, as geneve_lookup), every inner flow
// from its own source port (udp_flow_src_port), the configured options in every header, and
// after decapsulation the loop check of geneve_rx.
#include <algorithm>

#include "ofld/tunnel/encapsulation.hpp"
#include "ofld/tunnel/geneve.hpp"
#include "ofld/wire/ethernet.hpp"

namespace ofld::tunnel {

namespace {

class GeneveEncap final : public Encapsulation {
 public:
  explicit GeneveEncap(const GeneveConfig& c) : c_(c) {
    hdr_len_ = geneve_build_header(c_, std::span<std::uint8_t>(hdr_));
  }
  Encap kind() const noexcept override { return Encap::Geneve; }
  const TunnelCommon& common() const noexcept override { return c_; }
  const UdpTunnelSettings* udp() const noexcept override { return &c_; }

  wire::LinkType link() const noexcept override { return wire::LinkType::Ethernet; }
  SocketKind socket() const noexcept override { return SocketKind::Udp; }
  std::uint16_t dst_port() const noexcept override { return c_.dstport; }
  int overhead() const noexcept override { return c_.overhead(); }
  bool flow_src_ports() const noexcept override { return true; }
  OuterCsum socket_outer_csum() const noexcept override {
    return c_.ipv6() && !c_.udp6_zero_csum_rx ? OuterCsum::Present : OuterCsum::Unknown;
  }
  // Zero-copy receive as VXLAN (the inner frame is Ethernet): netdev_max_backlog.
  std::size_t default_gro_backlog() const noexcept override { return 1000; }

  std::optional<Drop> tx_check(std::span<const std::uint8_t> f) const noexcept override {
    if (f.size() < wire::eth::kHdrLen) return Drop::TxNotEthernet;
    return std::nullopt;
  }
  std::uint8_t outer_tos(std::span<const std::uint8_t> f) const noexcept override {
    return tunnel::outer_tos(c_, f);  // geneve_get_dsfield + ip_tunnel_ecn_encap: as VXLAN's
  }
  std::uint16_t src_port(std::span<const std::uint8_t> f) const noexcept override {
    return flow_src_port(inner_flow_hash(f), c_.src_min(), c_.src_max());
  }
  bool remotes(std::span<const std::uint8_t>, std::uint64_t, std::vector<IpAddr>& out,
               Counters&) override {
    out.assign(1, c_.remote);
    return false;
  }
  // No RCO (rco_tx false): Linux has none for Geneve (GN-6).
  EncapInfo encap(const core::Packet& seg, bool /*rco*/,
                  std::span<std::uint8_t, kMaxTunnelHdr> hdr) const override {
    EncapInfo i;
    if (seg.len() < wire::eth::kHdrLen) {
      i.reason = Drop::TxNotEthernet;
      return i;
    }
    std::copy_n(hdr_.begin(), hdr_len_, hdr.begin());
    i.hdr_len = hdr_len_;
    i.ok = hdr_len_ != 0;
    return i;
  }

  bool accepts(const IpAddr& from) const noexcept override { return from == c_.remote; }
  DecapResult decap(std::span<const std::uint8_t> payload, OuterCsum outer, Counters& c,
                    const core::BufferRef* owner, int outer_tos) const override {
    return geneve_decap(payload, c_, outer, c, owner, outer_tos);
  }
  bool after_decap(const core::Packet& inner, const IpAddr&, Peer*, std::uint64_t,
                   Counters& c) override {
    // geneve_rx: "ignore packet loops" — a frame from our own MAC is dropped
    const auto src = inner.head().subspan(wire::eth::kSrcOffset, wire::eth::kAddrLen);
    if (own_mac_ != Mac{} && std::equal(src.begin(), src.end(), own_mac_.begin())) {
      c.drop(Drop::RxLoop);
      return false;
    }
    return true;
  }
  void bind(const EncapBinding& b) override { own_mac_ = b.own_mac; }

  std::vector<IpAddr> configured_remotes() const override { return {c_.remote}; }
  wire::peer::Encap peer_encap() const noexcept override { return wire::peer::Encap::Geneve; }
  std::string describe() const override {
    return " id " + std::to_string(c_.vni) + " local " + c_.local.to_string() + " remote " +
           c_.remote.to_string() + " dstport " + std::to_string(c_.dstport) +
           (c_.options.empty() ? "" : " options " + geneve_options_text(c_.options)) +
           (c_.tx_outer_csum() ? "" : " (no outer UDP checksum)");
  }
  std::optional<std::string> integrity_error() const override {
    // As VXLAN: the outer UDP checksum protects the inner frame once its checksum is elided.
    if (c_.tx_outer_csum() && !c_.udp6_zero_csum_rx) return std::nullopt;
    return std::string("integrity: needs the outer UDP checksum in both directions (it is "
                       "what protects the inner frame once the inner checksum is elided); "
                       "remove ") +
           (!c_.tx_outer_csum() ? (c_.ipv6() ? "udp6zerocsumtx" : "noudpcsum") : "udp6zerocsumrx");
  }

 private:
  GeneveConfig c_;
  std::array<std::uint8_t, kMaxTunnelHdr> hdr_{};  ///< the header of every datagram
  std::size_t hdr_len_ = 0;
  Mac own_mac_{};
};

}  // namespace

std::unique_ptr<Encapsulation> make_encapsulation(const GeneveConfig& cfg) {
  return std::make_unique<GeneveEncap>(cfg);
}

}  // namespace ofld::tunnel

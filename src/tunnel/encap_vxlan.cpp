// The VXLAN encapsulation: Ethernet over UDP (RFC 7348; vxlan_xmit_one / vxlan_rcv): what
// the Ethernet-over-UDP encapsulations share (encap_ethernet_udp.hpp: TAP and UDP socket, the
// FDB, loop check and vxlan_snoop) plus the VXLAN header, its RCO (W-25, W-26) and vxlan_rcv.
#include "encap_ethernet_udp.hpp"
#include "encap_rows.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::tunnel {

namespace {

class VxlanEncap final : public detail::EthernetUdpEncap<VxlanConfig> {
 public:
  explicit VxlanEncap(const VxlanConfig& c) : EthernetUdpEncap(c) {}
  Encap kind() const noexcept override { return Encap::Vxlan; }

  bool rco_tx() const noexcept override { return c_.remcsum_tx && c_.tx_outer_csum(); }
  bool rco_encodable(const core::Packet& seg) const noexcept override {
    const int start = seg.csum_start_offset();
    return start >= 0 && wire::vxlan::rco_encode(std::uint32_t(start),
                                                 std::get<core::CsumPartial>(seg.csum).csum_offset);
  }
  EncapInfo encap(const core::Packet& seg, bool rco,
                  std::span<std::uint8_t, kMaxTunnelHdr> hdr) const override {
    EncapInfo i;
    if (seg.len() < wire::eth::kHdrLen) {
      i.reason = Drop::TxNotEthernet;
      return i;
    }
    wire::VxlanRepr h{c_.vni, std::nullopt};
    if (rco) {  // W-26: the inner field keeps its pseudo-header seed
      const auto enc = wire::vxlan::rco_encode(std::uint32_t(seg.csum_start_offset()),
                                               std::get<core::CsumPartial>(seg.csum).csum_offset);
      h.rco = wire::vxlan::rco_decode(*enc);
      i.rco = true;
    }
    h.emit(std::span<std::uint8_t>(hdr.data(), wire::vxlan::kLen));
    i.hdr_len = wire::vxlan::kLen;
    i.ok = true;
    return i;
  }

  bool learns_peers() const noexcept override { return true; }
  DecapResult decap(std::span<const std::uint8_t> payload, OuterCsum outer, Counters& c,
                    const core::BufferRef* owner, int outer_tos) const override {
    return tunnel::decap(payload, c_, outer, c, owner, outer_tos);
  }

  wire::peer::Encap peer_encap() const noexcept override { return wire::peer::Encap::Vxlan; }
  std::string describe() const override {
    return " id " + std::to_string(c_.vni) + " local " + c_.local.to_string() + " dstport " +
           std::to_string(c_.dstport) + " remotes " + std::to_string(c_.remotes.size()) +
           (c_.remcsum_tx ? " remcsumtx" : "") + (c_.remcsum_rx ? " remcsumrx" : "");
  }
};

}  // namespace

std::unique_ptr<Encapsulation> make_encapsulation(const VxlanConfig& cfg) {
  return std::make_unique<VxlanEncap>(cfg);
}

// `vxlan ...` / [vxlan]: iproute2's `ip link add ... type vxlan` words.
const EncapKind& VxlanConfig::kind() {
  using namespace conf;
  static const EncapKind k{
      .words = {"vxlan"},
      .caps = {.ethernet = true, .vni = true, .group = true, .evpn_tunnel_type = 8},
      .usage = "vxlan id VNI local ADDR remote ADDR [remote ADDR..] [dstport N] [srcport MIN MAX] "
               "[udpcsum|noudpcsum] [udp6zerocsumtx] [udp6zerocsumrx] [remcsumtx] [remcsumrx] "
               "[remcsum-nopartial] [ttl N] [tos N|inherit] [mtu N] [ageing S] [nolearning] [fdb MAC ADDR] "
               "[maxaddress N] [maxaddress-per-remote N] [learning-from remotes|any] [local-maxaddress N] "
               "[group ADDR [dev IF]] [evpn] [evpn-server HOST:PORT] [router-id A.B.C.D] "
               "[no-dup-addr-detection] [dup-addr-detection-max-moves N] [dup-addr-detection-time S] "
               "[dup-addr-detection-freeze S|permanent]",
      .reset = reset_to<VxlanConfig>,
      .rows = join<Row>({ethernet_rows<VxlanConfig>(), common_rows<true>(), udp_rows(), rco_rows()}),
      .validate = validate_as<VxlanConfig>,
      .fixed = join<FixedRow>({ethernet_fixed_head<VxlanConfig>(), ethernet_fixed_fdb<VxlanConfig>()}),
      .flood_remotes = flood_remotes_of<VxlanConfig>,
      .vni = vni_of<VxlanConfig>,
  };
  return k;
}

}  // namespace ofld::tunnel

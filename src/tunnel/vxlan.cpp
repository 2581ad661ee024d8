// VXLAN encapsulation / decapsulation (vxlan_build_skb, vxlan_rcv, vxlan_remcsum).
#include "ofld/tunnel/vxlan.hpp"

#include <climits>

#include "ofld/core/csum.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/tunnel/inner_ip.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"

#include "rx_inner.hpp"
#include "rx_seed.hpp"

namespace ofld::tunnel {

namespace vx = wire::vxlan;

std::optional<std::string> validate(const VxlanConfig& cfg, bool need_remote) {
  if (cfg.vni > 0xFFFFFF) return "id: VNI " + std::to_string(cfg.vni) + " exceeds 24 bits";
  if (cfg.local.empty()) return std::string("local: an underlay address is required");
  if (need_remote && cfg.remotes.empty()) return std::string("remote: at least one remote address is required");
  for (const auto& r : cfg.remotes)
    if (r.family != cfg.local.family)
      return "remote: " + r.to_string() + " is not the address family of local " +
             cfg.local.to_string();
  if (cfg.dstport == 0) return std::string("dstport: must not be 0");
  if ((cfg.port_min || cfg.port_max) && cfg.port_max <= cfg.port_min)
    return "srcport: MAX " + std::to_string(cfg.port_max) + " must be greater than MIN " +
           std::to_string(cfg.port_min);
  if (!cfg.ipv6() && (cfg.udp6_zero_csum_tx || cfg.udp6_zero_csum_rx))
    return std::string("udp6zerocsumtx/udp6zerocsumrx: only valid with an IPv6 underlay");
  if (cfg.remcsum_tx && !cfg.tx_outer_csum())
    return std::string(
        "remcsumtx: remote checksum offload needs an outer UDP checksum (spec K-2: without it "
        "the inner checksum cannot be recovered); drop ") +
           (cfg.ipv6() ? "udp6zerocsumtx" : "noudpcsum") + " or remcsumtx";
  if (cfg.mtu != 0 && (cfg.mtu < 68 || cfg.mtu > 65535 - 14))
    return "mtu: " + std::to_string(cfg.mtu) + " outside 68..65521";
  return std::nullopt;
}

namespace {
namespace et = wire::ethertype;
namespace ipp = wire::ipproto;
using Ip4 = wire::Ipv4Header<>;
using Ip6 = wire::Ipv6Header<>;

/// The IP header of an Ethernet frame: offset after up to two VLAN tags, and the family.
/// nullopt for another ethertype, a wrong version nibble or fewer bytes than the fixed header.
struct InnerL3 {
  std::size_t off = 0;
  bool v6 = false;
};
std::optional<InnerL3> inner_l3(std::span<const std::uint8_t> f) noexcept {
  auto eth = wire::EthernetHeader<>::parse(f);
  if (!eth.ok()) return std::nullopt;
  std::size_t o = wire::EthernetHeader<>::kLen;
  std::uint16_t t = eth.value().ethertype();
  for (int tags = 0; tags < 2 && wire::is_vlan_tpid(t); ++tags) {
    auto tag = wire::VlanTag<>::parse(f.subspan(o));
    if (!tag.ok()) return std::nullopt;
    t = tag.value().ethertype();
    o += wire::VlanTag<>::kLen;
  }
  if (t == et::kIpv4 && Ip4::parse(f.subspan(o)).ok()) return InnerL3{o, false};
  if (t == et::kIpv6 && Ip6::parse(f.subspan(o)).ok()) return InnerL3{o, true};
  return std::nullopt;
}

/// seed_partial_ip (inner_ip.hpp) for an inner Ethernet frame: offsets from the frame's start.
std::optional<SeedAt> seed_partial(std::span<const std::uint8_t> f) noexcept {
  const auto l3 = inner_l3(f);
  if (!l3) return std::nullopt;
  auto s = seed_partial_ip(f.subspan(l3->off));
  if (s) s->l4 += l3->off;
  return s;
}

/// RFC 6040 decapsulation of the inner IP header of `p` (INET_ECN_decapsulate followed by
/// INET_ECN_set_ce / INET_ECN_set_ect1). Returns false when the packet must be dropped.
/// The kernel reads the inner header at the network header, which for a VLAN-tagged inner
/// frame is the tag (vxlan_rcv resets it right after the Ethernet header); here tags are
/// skipped and the IP header itself is used.
bool ecn_decap_packet(core::Packet& p, std::uint8_t outer, Counters& c) {
  if ((outer & 3u) == 0) return true;  // Not-ECT outer: Figure 4's first column keeps the inner
  const auto l3 = inner_l3(p.head());
  if (!l3) return true;  // not IP: nothing to do (IP_ECN_decapsulate returns 0)
  return ecn_decap_ip(p, l3->off, l3->v6, outer, c.rx_ecn_ce, c.rx_ecn_bogus);
}
}  // namespace

std::uint8_t inner_dsfield(std::span<const std::uint8_t> frame) noexcept {
  const auto l3 = inner_l3(frame);
  if (!l3) return 0;
  const auto ipb = frame.subspan(l3->off);
  return l3->v6 ? Ip6::parse(ipb).value().traffic_class() : Ip4::parse(ipb).value().tos();
}

std::uint8_t outer_tos(const TunnelCommon& cfg, std::span<const std::uint8_t> frame) noexcept {
  const std::uint8_t in = inner_dsfield(frame);
  return ecn_encapsulate(cfg.tos_inherit ? in : cfg.tos, in);
}

OuterTtlDf outer_ttl_df(const TunnelCommon& cfg, std::span<const std::uint8_t> frame) noexcept {
  OuterTtlDf o{cfg.ttl, -1};
  if (!cfg.ttl_inherit && (cfg.ipv6() || cfg.df != OuterDf::Inherit)) {  // no inner header read
    if (!cfg.ipv6()) o.df = cfg.df == OuterDf::Set ? 1 : 0;
    return o;
  }
  // The frame's own EtherType, as the kernel's eth->h_proto / skb->protocol (no VLAN tags
  // skipped); a truncated header counts as not IP.
  const auto eth = wire::EthernetHeader<>::parse(frame);
  const std::uint16_t type = eth.ok() ? eth.value().ethertype() : 0;
  const auto ip = frame.subspan(eth.ok() ? wire::EthernetHeader<>::kLen : frame.size());
  std::optional<Ip4> h4;
  std::optional<Ip6> h6;
  if (type == et::kIpv4) {
    if (auto h = Ip4::parse(ip); h.ok()) h4 = h.value();
  } else if (type == et::kIpv6) {
    if (auto h = Ip6::parse(ip); h.ok()) h6 = h.value();
  }
  if (cfg.ttl_inherit) o.ttl = h4 ? h4->ttl() : h6 ? h6->hop_limit() : 0;  // ip_tunnel_get_ttl
  if (!cfg.ipv6()) {
    if (cfg.df == OuterDf::Inherit) o.df = (h6 || (h4 && h4->df())) ? 1 : 0;
    else o.df = cfg.df == OuterDf::Set ? 1 : 0;
  }
  return o;
}

std::uint16_t flow_src_port(std::uint32_t hash, std::uint16_t min, std::uint16_t max) noexcept {
  if (max <= min) return min;
  hash ^= hash << 16;
  return std::uint16_t((std::uint64_t(hash) * (max - min)) >> 32) + min;
}

std::uint32_t inner_flow_hash(std::span<const std::uint8_t> frame) noexcept {
  return gro::flow_hash(frame, gro::LinkLayer::Ethernet);
}

std::size_t inner_header_len(std::span<const std::uint8_t> f) noexcept {
  using Eth = wire::EthernetHeader<>;
  const std::size_t n = f.size();
  if (n < Eth::kLen + Ip4::kMinLen) return n;
  const auto l3 = f.subspan(Eth::kLen);
  std::size_t l3len = 0;  // IPv4 IHL*4 or the fixed IPv6 header
  switch (Eth::unchecked(f.data()).ethertype()) {
    case et::kIpv4: {
      const auto ip = Ip4::parse(l3);  // version 4, IHL >= 5, the header present
      if (!ip.ok() || ip.value().protocol() != ipp::kTcp) return n;
      if (ip.value().is_fragment()) return n;  // MF or fragment offset: keep linear
      l3len = ip.value().header_len();
      break;
    }
    case et::kIpv6: {
      const auto ip = Ip6::parse(l3);  // version 6, 40 bytes present
      if (!ip.ok() || ip.value().next_header() != ipp::kTcp) return n;  // extension headers too
      l3len = Ip6::kLen;
      break;
    }
    default:
      return n;
  }
  const auto th = wire::TcpHeader<>::parse(l3.subspan(l3len));  // doff >= 5, options present
  if (!th.ok()) return n;
  return Eth::kLen + l3len + th.value().header_len();
}

namespace {
/// Default packet metadata, built once (a PacketMeta{} temporary per packet is zeroed whole
/// before its members are set).
const core::PacketMeta kDefaultMeta{};

/// The inner frame as a packet: linear copy, or headers + a fragment of `owner`. `hl`:
/// inner_header_len(inner) when the caller knows it, 0 to have it computed. One packet,
/// built in the caller's result (a single return): default metadata, the head copied with
/// the segment constructor's inline copies (the same packet as from_bytes).
core::Packet inner_packet(std::span<const std::uint8_t> inner, const core::BufferRef* owner,
                          std::size_t hl = 0) {
  std::size_t off = 0;
  bool split = owner && *owner;
  if (split) {
    if (hl == 0) hl = inner_header_len(inner);
    const auto* base = (*owner)->bytes.data();
    off = std::size_t(inner.data() - base);
    split = hl < inner.size() && inner.data() >= base &&
            off + inner.size() <= (*owner)->bytes.size() &&
            off + inner.size() <= UINT32_MAX;  // a fragment's offset and length are 32-bit
  }
  core::Packet p(kDefaultMeta, split ? inner.first(hl) : inner, core::kDefaultHeadroom);
  // The payload as a reference to `owner`: the slice lies inside it, is not empty (hl <
  // size) and the new packet has no frag_list, which is everything add_frag checks.
  if (split)
    p.add_frag_unchecked(*owner, std::uint32_t(off + hl), std::uint32_t(inner.size() - hl));
  return p;
}
}  // namespace

namespace {
/// A failed decapsulation: `d` counted, no packet.
DecapResult decap_fail(Drop d, Counters& c) {
  DecapResult r;
  r.reason = d;
  c.drop(d);
  return r;
}

/// The RCO half of decap (vxlan_remcsum): `inner` trimmed, `off` the checksum field's offset.
DecapResult decap_rco(std::span<const std::uint8_t> inner, const VxlanConfig& cfg,
                      const vx::Rco& d, std::size_t off, Counters& c, int outer_tos) {
  DecapResult r;
  auto fail = [&](Drop why) {
    r.reason = why;
    c.drop(why);
    return std::move(r);
  };
  // A field in the trimmed padding is not part of the packet it claims to complete.
  if (off + 2 > inner.size()) return fail(Drop::RxRcoBadOffset);
  r.pkt = core::Packet::from_bytes(inner);
  if (!detail::remcsum_receive(r.pkt, d.start, off, cfg.remcsum_nopartial, c))
    return fail(Drop::RxRcoBadOffset);
  r.rco = true;
  if (outer_tos >= 0 && !ecn_decap_packet(r.pkt, std::uint8_t(outer_tos), c))
    return fail(Drop::RxEcnNotEct);  // RFC 6040 §4.2: outer CE over a Not-ECT inner
  r.ok = true;
  return r;
}

/// The non-RCO half of decap: the packet, the K-9 seed and RFC 6040. Every return names `r`
/// (GCC applies NRVO only then), so the result is built in the caller's slot.
DecapResult decap_plain(std::span<const std::uint8_t> inner,
                        const std::optional<detail::FastInner>& fast, OuterCsum outer,
                        Counters& c, const core::BufferRef* owner, int outer_tos) {
  DecapResult r(std::in_place,
                [&] { return inner_packet(inner, owner, fast ? fast->hdr_len : 0); });
  // Spec K-9: a field holding exactly its pseudo-header seed is the
  // receive form of CHECKSUM_PARTIAL. A kernel peer whose skb crossed a veth still PARTIAL
  // sends it so (its NIC never ran), and a kernel receiver accepts it because it sees the
  // PARTIAL skb; the TAP gets it as NEEDS_CSUM, so local delivery accepts it and forwarding
  // completes it, and GRO takes it as verified (G-11). The bytes are vouched for by the
  // outer UDP checksum, which the kernel verified before our socket saw the datagram (or,
  // over veth, which never left memory). With the outer checksum known to be ZERO nothing
  // covers them: a seed there is as likely a corrupted field as a skipped completion, and
  // the kernel itself never takes a seed from the wire as valid — so it is not trusted; the
  // frame stays NONE and is verified like any other (public bug E2). An intact packet whose
  // true checksum happens to equal its seed passes that verification, so nothing is lost.
  constexpr SeedAt kFastSeed{wire::eth::kHdrLen + wire::ipv4::kMinLen, wire::tcp::kCheckOffset};
  detail::take_seed(r.pkt, fast ? (fast->seed ? std::optional<SeedAt>(kFastSeed) : std::nullopt)
                                : seed_partial(inner),
                    outer != OuterCsum::Zero, c);
  if (outer_tos >= 0 && !ecn_decap_packet(r.pkt, std::uint8_t(outer_tos), c)) {
    r.reason = Drop::RxEcnNotEct;  // RFC 6040 §4.2: outer CE over a Not-ECT inner
    c.drop(r.reason);
    return r;
  }
  r.ok = true;
  return r;
}
}  // namespace

DecapResult decap(std::span<const std::uint8_t> payload, const VxlanConfig& cfg, OuterCsum outer,
                  Counters& c, const core::BufferRef* owner, int outer_tos) {
  // Failures before the packet exists return a fresh result (decap_fail); the non-RCO
  // packet is built in the result (decap_plain), never moved into it.
  // RFC 6935 §5 / udp(7) UDP_NO_CHECK6_RX: IPv6 allows a zero UDP checksum only where the
  // endpoint agreed to it (udp6zerocsumrx). The daemon's socket has the kernel enforce it;
  // here it holds for every caller that knows the checksum.
  if (outer == OuterCsum::Zero && cfg.ipv6() && !cfg.udp6_zero_csum_rx)
    return decap_fail(Drop::RxUdp6ZeroCsum, c);
  if (payload.size() < vx::kLen + 14) return decap_fail(Drop::RxTruncated, c);
  auto h = wire::VxlanHeader<>::parse(payload).value();
  std::uint32_t w0 = h.word0();
  if (!(w0 & vx::kFlagVni)) return decap_fail(Drop::RxNoVniFlag, c);
  bool rco = w0 & vx::kFlagRco;
  if (rco && !cfg.remcsum_rx) return decap_fail(Drop::RxRcoNotEnabled, c);  // V-4
  std::uint32_t known = vx::kFlagVni | (cfg.remcsum_rx ? vx::kFlagRco : 0u);
  if (w0 & ~known) return decap_fail(Drop::RxBadFlags, c);
  if (!rco && h.low_byte() != 0) return decap_fail(Drop::RxBadFlags, c);
  if (h.vni() != cfg.vni) return decap_fail(Drop::RxWrongVni, c);
  auto inner = payload.subspan(vx::kLen);
  std::size_t off = 0;
  vx::Rco d{};
  if (rco) {
    // vxlan_remcsum: the checksum field (start + offset, 2 bytes) must lie in the frame.
    d = h.rco_data();
    off = std::size_t(d.start) + d.csum_offset;
    if (off + 2 > inner.size()) return decap_fail(Drop::RxRcoBadOffset, c);
    if (outer == OuterCsum::Zero) {  // K-2: nothing protects the inner packet
      ++c.rx_rco_nocsum;
      return decap_fail(Drop::RxRcoNoOuterCsum, c);
    }
  }
  if (!rco) return decap_ethernet(inner, outer, c, owner, outer_tos);
  // pskb_inet_may_pull (vxlan_rcv) and ip_rcv_core / ip6_rcv_core: the inner IP header is
  // present and its lengths hold; link-layer padding after the IP packet is trimmed.
  const InnerIpCheck ip = check_inner_frame(inner);
  if (ip.verdict == InnerIpVerdict::TooSmall) return decap_fail(Drop::RxInnerTooSmall, c);
  if (ip.verdict == InnerIpVerdict::HdrError) return decap_fail(Drop::RxInnerHdrError, c);
  return decap_rco(inner.first(ip.len), cfg, d, off, c, outer_tos);
}

DecapResult decap_ethernet(std::span<const std::uint8_t> inner, OuterCsum outer, Counters& c,
                           const core::BufferRef* owner, int outer_tos) {
  if (inner.size() < wire::eth::kHdrLen) return decap_fail(Drop::RxTruncated, c);
  // pskb_inet_may_pull (vxlan_rcv) and ip_rcv_core / ip6_rcv_core: the inner IP header is
  // present and its lengths hold; link-layer padding after the IP packet is trimmed.
  // A TCP stream's frame (untagged Ethernet, IPv4 without options, TCP) is read once for
  // the length check, the header split and the seed (rx_inner.hpp); any other frame goes
  // through check_inner_frame, inner_header_len and seed_partial.
  const std::optional<detail::FastInner> fast = detail::fast_inner_tcp4(inner);
  if (fast) {
    inner = inner.first(fast->len);
  } else {
    const InnerIpCheck ip = check_inner_frame(inner);
    if (ip.verdict == InnerIpVerdict::TooSmall) return decap_fail(Drop::RxInnerTooSmall, c);
    if (ip.verdict == InnerIpVerdict::HdrError) return decap_fail(Drop::RxInnerHdrError, c);
    inner = inner.first(ip.len);
  }
  return decap_plain(inner, fast, outer, c, owner, outer_tos);
}

}  // namespace ofld::tunnel

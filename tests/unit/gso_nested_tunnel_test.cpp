// GSO of a packet with more than one encapsulation level.
//
// The kernel segments one tunnel level: skb->encapsulation and the inner_* headers describe
// one level (iptunnel_handle_offloads keeps them at the first encapsulation), and a tunnel
// hook (gre_gso_segment, __skb_udp_tunnel_segment) pulls everything from its own header to
// the inner MAC header as an opaque "tunnel header" copied into each segment. A second tunnel
// device never hands such a packet to software GSO with two levels: a tunnel device lacks the
// other tunnel's NETIF_F_GSO_* bit, so the packet is segmented at one level before the second
// encapsulation. IP-in-IP is the exception: every IPv4/IPv6 hook rewrites its own header
// (inet_gso_segment → ipip_gso_segment → inet_gso_segment), so every level is right.
//
// Required: given metadata describing nested tunnels, gso_segment either
// refuses with a named, counted reason or rewrites every layer correctly — never a segment
// with a wrong length. The expected values are the RFC length definitions (RFC 791 total
// length and header checksum, RFC 8200 payload length, RFC 768 UDP length, RFC 9293/768
// checksums over the pseudo header), checked at every header of every segment.
#include <gtest/gtest.h>

#include <string>

#include "gso_test_util.hpp"

using namespace gso_test;
using namespace ofld;
namespace sg = core::skb_gso;
using wire::load_be16;

namespace {

enum class L { Ip4, Ip6, Udp };
struct Layer {
  std::size_t off;
  L kind;
};
/// A frame and where each length-carrying header of it is.
struct Framed {
  Bytes f;
  std::vector<Layer> layers;
};

Framed tcp(bool v6, std::size_t payload = 3000) {
  TcpSpec s;
  s.v6 = v6;
  s.payload = payload;
  return {tcp_frame(s), {{14, v6 ? L::Ip6 : L::Ip4}}};
}

// Outer IPv4 around `in` (encap() of gso_test_util: VXLAN / GUE / GRE; outer UDP checksum 0).
Framed wrap(const Framed& in, Outer kind, bool gre_teb = true) {
  Framed r;
  r.f = encap(in.f, kind, false, false, false, gre_teb);
  r.layers.push_back({14, L::Ip4});
  if (kind != Outer::Gre) r.layers.push_back({34, L::Udp});
  const std::size_t shift = r.f.size() - in.f.size();
  for (const Layer& l : in.layers) r.layers.push_back({l.off + shift, l.kind});
  return r;
}

Framed wrap_ipip(const Framed& in) {
  Framed r;
  r.f = ipip_encap(in.f, false);
  r.layers.push_back({14, L::Ip4});
  const std::size_t shift = r.f.size() - in.f.size();
  for (const Layer& l : in.layers) r.layers.push_back({l.off + shift, l.kind});
  return r;
}

/// How the second (outer) encapsulation records itself in the metadata.
enum class Meta {
  KeepInner,   ///< as iptunnel_handle_offloads: inner_* stay at the first encapsulation's
               ///< inner headers (the innermost), gso_type gains the outer tunnel's bits
  ResetInner,  ///< inner_* moved to the outer tunnel's own inner headers (the middle level),
               ///< gso_type holding both levels' bits
};

/// The single-level packet `in` (prepared as the stack would hand it, checksum seeds in place)
/// encapsulated once more by `outer`: bytes of `outer.f` with `in`'s prepared bytes at the end,
/// metadata as `meta` says. `outer_bits` = the outer tunnel's gso_type bits; `inner_proto` /
/// `ether` = inner_protocol(_type) as the outer tunnel device sets it.
core::Packet nest(const Framed& in, std::uint16_t gue_port, const Framed& outer, std::uint32_t outer_bits,
                  Meta meta, std::size_t middle_l4, std::uint16_t mss) {
  core::Packet p1 = prepare(in.f, mss, gue_port);
  EXPECT_TRUE(p1.encapsulation) << "the single-level packet must be prepared as a tunnel packet";
  const Bytes b1 = p1.to_bytes();
  Bytes f2 = outer.f;
  // An outer tunnel carrying IP (GUE, GRE with an IP protocol type) carries the prepared
  // packet without its Ethernet header; VXLAN and GRE/TEB carry the whole frame.
  // (GRE protocol type / UDP destination port, both at outer L4 + 2.)
  const bool carries_eth = load_be16(&f2[36]) == 0x6558 || load_be16(&f2[36]) == 4789;
  const std::size_t cut = carries_eth ? 0 : 14;
  const std::size_t shift = f2.size() - (b1.size() - cut);
  std::copy(b1.begin() + std::ptrdiff_t(cut), b1.end(), f2.begin() + std::ptrdiff_t(shift));
  core::Packet p = core::Packet::from_bytes(f2);
  const auto off = [&](core::pos_t x) { return int(x - p1.data_pos()) - int(cut) + int(shift); };
  p.set_mac_header(0);
  p.set_network_header(14);
  p.set_transport_header(34);
  p.protocol = 0x0800;
  p.encapsulation = true;
  const auto* part = std::get_if<core::CsumPartial>(&p1.csum);
  EXPECT_NE(part, nullptr);
  if (part) p.set_partial(off(part->csum_start), part->csum_offset);
  p.gso = p1.gso;
  p.gso.type |= outer_bits;
  // GRE protocol type or UDP destination port (both at outer L4 + 2).
  const std::uint16_t next = load_be16(&f2[36]);
  const bool ether_inner = next == 0x6558 || (!(outer_bits & sg::GRE) && next == 4789);
  if (meta == Meta::KeepInner) {
    p.set_inner_mac_header(off(p1.inner_mac_header));
    p.set_inner_network_header(off(p1.inner_network_header));
    p.set_inner_transport_header(off(p1.inner_transport_header));
  } else {
    // The middle level: right after the outer tunnel header (an Ethernet header for VXLAN /
    // GRE-TEB, else the middle IP header), its L4 header at `middle_l4`.
    p.set_inner_mac_header(int(shift));
    p.set_inner_network_header(int(shift) + (ether_inner ? 14 : 0));
    p.set_inner_transport_header(int(middle_l4));
  }
  if (outer_bits & sg::GRE) {  // skb_set_inner_protocol(skb, GRE protocol type)
    p.inner_protocol = next;
    p.inner_protocol_type = core::InnerProtoType::Ether;
  } else if (ether_inner) {
    p.inner_protocol = 0x6558;
    p.inner_protocol_type = core::InnerProtoType::Ether;
  } else {
    p.inner_protocol_type = core::InnerProtoType::IpProto;
    p.inner_ipproto = f2[shift] >> 4 == 6 ? 41 : 4;
    p.inner_protocol = p.inner_ipproto;
  }
  return p;
}

// Every length-carrying header of every segment holds its segment's length; the innermost
// TCP checksum is valid (no device features: complete checksums). `tcp_ip` = innermost IP.
void expect_every_layer_right(const std::vector<core::Packet>& segs, const Framed& fr,
                              std::size_t mss, std::size_t payload) {
  ASSERT_EQ(segs.size(), (payload + mss - 1) / mss);
  const Layer inner = fr.layers.back();
  const std::size_t il4 = inner.off + (inner.kind == L::Ip6 ? 40 : 20);
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const Bytes b = segs[i].to_bytes();
    ASSERT_EQ(b.size(), il4 + 20 + std::min(mss, payload - i * mss)) << "segment " << i;
    for (const Layer& l : fr.layers) {
      SCOPED_TRACE(testing::Message() << "segment " << i << ", header at " << l.off);
      switch (l.kind) {
        case L::Ip4:
          EXPECT_EQ(load_be16(&b[l.off + 2]), b.size() - l.off) << "IPv4 total length (RFC 791)";
          EXPECT_EQ(csum::ip_compute_csum(&b[l.off], 20), 0) << "IPv4 header checksum";
          break;
        case L::Ip6:
          EXPECT_EQ(load_be16(&b[l.off + 4]), b.size() - l.off - 40) << "IPv6 payload length";
          break;
        case L::Udp:
          EXPECT_EQ(load_be16(&b[l.off + 4]), b.size() - l.off) << "UDP length (RFC 768)";
          break;
      }
    }
    EXPECT_TRUE(l4_valid(&b[inner.off], inner.kind == L::Ip6, &b[il4], b.size() - il4, 6))
        << "inner TCP checksum, segment " << i;
  }
}

struct Case {
  std::string name;
  Framed in;             // the single-level tunnel packet (prepared by prepare_frame)
  Framed all;            // the nested frame (all layers)
  std::uint32_t outer_bits;
  std::size_t middle_l4;  // offset of the middle level's L4 header in `all`
};

std::vector<Case> nested_cases() {
  std::vector<Case> v;
  for (bool iv6 : {false, true}) {
    const std::string fam = iv6 ? " (TCPv6)" : " (TCPv4)";
    {  // VXLAN inside GRE (TEB): outer IPv4 / GRE / Eth / IPv4 / UDP / VXLAN / Eth / IP / TCP
      Framed in = wrap(tcp(iv6), Outer::Vxlan);
      v.push_back({"vxlan in gre" + fam, in, wrap(in, Outer::Gre, true), sg::GRE, 14 + 20 + 4 + 14 + 20});
    }
    {  // IPIP inside GUE: outer IPv4 / UDP / GUE / IPv4 (proto 4 or 41) / IP / TCP
      Framed in = wrap_ipip(tcp(iv6));
      v.push_back({"ipip in gue" + fam, in, wrap(in, Outer::Gue), sg::UDP_TUNNEL, 14 + 20 + 12 + 20});
    }
    {  // GRE (IP) inside VXLAN: outer IPv4 / UDP / VXLAN / Eth / IPv4 / GRE / IP / TCP
      Framed in = wrap(tcp(iv6), Outer::Gre, false);
      v.push_back({"gre in vxlan" + fam, in, wrap(in, Outer::Vxlan), sg::UDP_TUNNEL, 14 + 20 + 16 + 14 + 20});
    }
    {  // VXLAN inside VXLAN
      Framed in = wrap(tcp(iv6), Outer::Vxlan);
      v.push_back({"vxlan in vxlan" + fam, in, wrap(in, Outer::Vxlan), sg::UDP_TUNNEL, 14 + 20 + 16 + 14 + 20});
    }
    {  // GUE inside GRE (IP): outer IPv4 / GRE / IPv4 / UDP / GUE / IP / TCP
      Framed in = wrap(tcp(iv6), Outer::Gue);
      v.push_back({"gue in gre" + fam, in, wrap(in, Outer::Gre, false), sg::GRE, 14 + 20 + 4 + 20});
    }
  }
  return v;
}

}  // namespace

// The nestings the kernel never segments in one pass: refused with a named, counted reason, or
// every layer right. Both ways the metadata can describe them; every construction mode.
TEST(GsoNestedTunnel, X31_X33_NestedTunnelsRefusedOrEveryLayerRight) {
  constexpr std::uint16_t kMss = 1000;
  for (const Case& c : nested_cases())
    for (Meta meta : {Meta::KeepInner, Meta::ResetInner})
      for (core::Features feat : {core::Features{}, core::Features{core::netif_f::SG}}) {
        SCOPED_TRACE(testing::Message() << c.name << (meta == Meta::KeepInner ? ", inner_* innermost" : ", inner_* middle")
                                        << ", features " << feat.bits);
        core::Packet p = nest(c.in, 6080, c.all, c.outer_bits, meta, c.middle_l4, kMss);
        ASSERT_EQ(p.len(), c.all.f.size());
        gso::GsoCounters ctr;
        auto dev = device(feat);
        gso::GsoResult r = gso::gso_segment(std::move(p), feat, dev, &ctr);
        if (r.ok()) {
          expect_every_layer_right(r.segs, c.all, kMss, 3000);
        } else {
          EXPECT_EQ(offload::to_string(r.reason), "nested-tunnel")
              << "refused, but not named as a nested tunnel: " << offload::to_string(r.reason);
          EXPECT_EQ(ctr.errors[std::size_t(r.reason)], 1u) << "the refusal is counted";
          EXPECT_TRUE(r.segs.empty());
        }
      }
}

// IP-in-IP levels are each rewritten by their own IP hook (the kernel's inet_gso_segment
// recursion): IPIP inside IPIP, and a VXLAN packet inside IPIP, segment with every layer right.
TEST(GsoNestedTunnel, X34_IpipAroundOneTunnelLevelEveryLayerRight) {
  constexpr std::uint16_t kMss = 1000;
  for (bool iv6 : {false, true}) {
    struct Sup {
      const char* name;
      Framed in, all;
    };
    Framed ipip = wrap_ipip(tcp(iv6));
    Framed vx = wrap(tcp(iv6), Outer::Vxlan);
    for (const Sup& s : {Sup{"ipip in ipip", ipip, wrap_ipip(ipip)}, Sup{"vxlan in ipip", vx, wrap_ipip(vx)}}) {
      SCOPED_TRACE(testing::Message() << s.name << (iv6 ? " TCPv6" : " TCPv4"));
      core::Packet p1 = prepare(s.in.f, kMss, 6080);
      ASSERT_TRUE(p1.encapsulation);
      // The outer IPIP header in front: positions shift by 20, gso_type gains IPXIP4.
      const Bytes b1 = p1.to_bytes();
      Bytes f2 = s.all.f;
      std::copy(b1.begin() + 14, b1.end(), f2.begin() + 34);
      core::Packet p = core::Packet::from_bytes(f2);
      const auto off = [&](core::pos_t x) { return int(x - p1.data_pos()) + 20; };
      p.set_mac_header(0);
      p.set_network_header(14);
      p.set_transport_header(34);
      p.protocol = 0x0800;
      p.encapsulation = true;
      p.set_inner_mac_header(off(p1.inner_mac_header));
      p.set_inner_network_header(off(p1.inner_network_header));
      p.set_inner_transport_header(off(p1.inner_transport_header));
      p.inner_protocol = p1.inner_protocol;
      p.inner_protocol_type = p1.inner_protocol_type;
      p.inner_ipproto = p1.inner_ipproto;
      const auto& part = std::get<core::CsumPartial>(p1.csum);
      p.set_partial(off(part.csum_start), part.csum_offset);
      p.gso = p1.gso;
      p.gso.type |= sg::IPXIP4;
      auto dev = device(core::Features{});
      gso::GsoResult r = gso::gso_segment(std::move(p), core::Features{}, dev);
      ASSERT_TRUE(r.ok()) << offload::to_string(r.reason);
      expect_every_layer_right(r.segs, s.all, kMss, 3000);
    }
  }
}

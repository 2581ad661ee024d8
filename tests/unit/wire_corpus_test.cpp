// parse_frame over the public captures in tests/data/pcaps (read with libpcap directly).
// Expected values come from tshark 4.x dissections of the same files (commands in comments)
// and from pcaps/MANIFEST.tsv.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "ofld/wire/ip.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"
#include "wire_test_util.hpp"

using namespace ofld::wire;
using wire_test::Bytes;
using wire_test::Capture;
using wire_test::hex;
using K = HeaderKind;

namespace {

Capture load(const std::string& name) {
  Capture c = wire_test::read_capture(wire_test::pcap_path(name));
  EXPECT_TRUE(c.error.empty()) << name << ": " << c.error;
  EXPECT_FALSE(c.frames.empty()) << name;
  return c;
}

Layout parse_frame_n(const Capture& c, std::size_t n, ParseOptions o = {}) {
  const auto& f = c.frames.at(n - 1);
  o.allow_clipped = f.data.size() < f.orig_len;
  auto r = parse_frame(f.data, c.link, o);
  EXPECT_TRUE(r.ok()) << "frame " << n << ": " << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? r.value() : Layout{};
}

std::vector<K> kinds(const Layout& l) {
  std::vector<K> k;
  for (const auto& h : l.headers()) k.push_back(h.kind);
  return k;
}

}  // namespace

TEST(WireCorpus, EveryCaptureParsesWithinBounds) {
  // Captures whose frames are legitimately cut inside a header (snaplen): errors expected.
  const std::set<std::string> truncated_ok = {"tcpdump_erspan-type-iii-pb-1.pcap"};
  std::size_t files = 0;
  for (const auto& ent : std::filesystem::directory_iterator(std::string(OFLD_PCAP_DIR))) {
    const std::string name = ent.path().filename().string();
    if (name.find(".pcap") == std::string::npos) continue;
    Capture c = wire_test::read_capture(ent.path().string());
    ASSERT_TRUE(c.error.empty()) << name << ": " << c.error;
    ++files;
    std::size_t errors = 0;
    for (const auto& f : c.frames) {
      ParseOptions o;
      o.allow_clipped = f.data.size() < f.orig_len;
      auto r = parse_frame(f.data, c.link, o);
      if (!r.ok()) {
        ++errors;
        continue;
      }
      for (const auto& h : r->headers()) {
        EXPECT_LE(h.offset + h.length, f.data.size()) << name;
        EXPECT_LE(h.end, f.data.size()) << name;
        EXPECT_GE(h.end, h.offset + h.length) << name << " " << to_string(h.kind);
      }
      // Robustness: the same bytes under every other link type must not crash either.
      for (auto lt : {LinkType::Ethernet, LinkType::RawIp, LinkType::LinuxSll, LinkType::LinuxSll2})
        (void)parse_frame(f.data, lt, o);
    }
    if (truncated_ok.count(name)) EXPECT_EQ(errors, c.frames.size()) << name;
    else EXPECT_EQ(errors, 0u) << name;
  }
  EXPECT_GE(files, 40u);
}

TEST(WireCorpus, VxlanFrame1IsVni100WithInnerIcmp) {
  // tshark -r tcpdump_vxlan.pcap -c 1 -T fields -e vxlan.vni -e ip.proto -e icmp.type
  //   → 100, "17,1", 8
  Capture c = load("tcpdump_vxlan.pcap");
  Layout l = parse_frame_n(c, 1);
  EXPECT_EQ(kinds(l), (std::vector<K>{K::Ethernet, K::Ipv4, K::Udp, K::Vxlan, K::Ethernet,
                                      K::Ipv4, K::Icmp}));
  EXPECT_EQ(l.tunnel, TunnelKind::Vxlan);
  auto v = VxlanHeader<>::parse(std::span<const std::uint8_t>(c.frames[0].data).subspan(l.find(K::Vxlan)->offset));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->vni(), 100u);
  EXPECT_EQ(c.frames[0].data[l.find(K::Icmp)->offset], 8);  // echo request
  // frame 2: inner ARP (eth.type 0x0806): stops at the inner ethertype
  Layout a = parse_frame_n(c, 2);
  EXPECT_EQ(a.stop, StopReason::UnknownEthertype);
  EXPECT_EQ(a.stop_value, 0x0806u);
}

TEST(WireCorpus, VxlanLegacyPort8472) {
  Layout l = parse_frame_n(load("tcpdump_vxlan_port_8472.pcap"), 1);
  EXPECT_EQ(l.tunnel, TunnelKind::Vxlan);
  EXPECT_EQ(l.l4_proto, 1);
}

TEST(WireCorpus, VxlanTripleNesting) {
  // tshark: vxlan.vni 1,2,3 (flags 0x0c00), innermost udp.dstport 53.
  Capture c = load("zeek_vxlan-triple-v2.pcap");
  Layout l = parse_frame_n(c, 1);
  EXPECT_EQ(l.tunnel_depth, 3);
  const auto& d = c.frames[0].data;
  for (std::uint32_t i = 0; i < 3; ++i) {
    const HeaderRef* v = l.find(K::Vxlan, i);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->level, i);
    EXPECT_EQ(load_be24(&d[v->offset + 4]), i + 1);
  }
  EXPECT_EQ(load_be16(&d[l.inner_l4()->offset + 2]), 53);
  EXPECT_EQ(l.inner_l4()->level, 3);
  // vxlan_strict (Linux flag rule, V-4) rejects flags 0x0c (the GPE P bit is set)
  ParseOptions o;
  o.vxlan_strict = true;
  EXPECT_FALSE(parse_frame(d, c.link, o).ok());
}

TEST(WireCorpus, Vlan0PriorityTag) {
  // tshark: vlan.id 0, vlan.priority 5, vlan.etype 0x0800, frame 82 bytes, ip.len 64.
  Capture c = load("zeek_http-vlan-0.pcap");
  Layout l = parse_frame_n(c, 1);
  EXPECT_EQ(kinds(l), (std::vector<K>{K::Ethernet, K::Vlan, K::Ipv4, K::Tcp}));
  EXPECT_EQ(l.network_header, 18u);
  EXPECT_EQ(l.find(K::Ipv4)->end, 18u + 64);
  const auto& d = c.frames[0].data;
  EXPECT_EQ(load_be16(&d[14]) & 0x0fff, 0);
  EXPECT_EQ(d[14] >> 5, 5);
}

TEST(WireCorpus, ErspanTypeII) {
  // tshark: erspan.version 1, vlan 1, spanid 101, cos 0, index 43973; gre.sequence 106954.
  Capture c = load("tcpdump_erspan-type-ii-3.pcap");
  Layout l = parse_frame_n(c, 1);
  EXPECT_EQ(l.tunnel, TunnelKind::Erspan);
  const HeaderRef* e = l.find(K::ErspanII);
  ASSERT_NE(e, nullptr);
  auto span = std::span<const std::uint8_t>(c.frames[0].data);
  auto h = ErspanIIHeader<>::parse(span.subspan(e->offset));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->vlan(), 1);
  EXPECT_EQ(h->session_id(), 101);
  EXPECT_EQ(h->cos(), 0);
  EXPECT_EQ(h->index(), 43973u);
  auto g = GreHeader<>::parse(span.subspan(l.find(K::Gre)->offset));
  EXPECT_EQ(g->seq(), std::optional<std::uint32_t>(106954));
  EXPECT_EQ(l.inner_mac_header, e->offset + 8);
}

TEST(WireCorpus, ErspanTypeI) {
  // MANIFEST: GRE 0x88be without sequence → Ethernet directly (V-14), inner ICMP.
  Layout l = parse_frame_n(load("tcpdump_erspan-type-i-4.pcap"), 1);
  EXPECT_EQ(l.tunnel, TunnelKind::Erspan);
  EXPECT_EQ(l.find(K::ErspanII), nullptr);
  EXPECT_EQ(l.inner_mac_header, l.find(K::Gre)->header_end());
  EXPECT_NE(l.find(K::Icmp), nullptr);
}

TEST(WireCorpus, ErspanTypeIII) {
  // tshark -V: ERSPAN III Vlan 20, SpanID 0, Timestamp 2740542463, SGT 0, FT 0, HwID 0,
  // Direction ingress, granularity 3, O 0; inner 802.1Q ICMP.
  Capture c = load("tcpdump_erspan-type-iii-ft-0.pcap");
  Layout l = parse_frame_n(c, 1);
  EXPECT_EQ(kinds(l), (std::vector<K>{K::Ethernet, K::Ipv4, K::Gre, K::ErspanIII, K::Ethernet,
                                      K::Vlan, K::Ipv4, K::Icmp}));
  auto h = ErspanIIIHeader<>::parse(
      std::span<const std::uint8_t>(c.frames[0].data).subspan(l.find(K::ErspanIII)->offset));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->vlan(), 20);
  EXPECT_EQ(h->session_id(), 0);
  EXPECT_EQ(h->timestamp(), 2740542463u);
  EXPECT_EQ(h->ft(), 0);
  EXPECT_FALSE(h->d());
  EXPECT_EQ(h->gra(), 3);
  EXPECT_FALSE(h->o());
  EXPECT_EQ(h->header_len(), 12u);
}

TEST(WireCorpus, ErspanTypeIIIPlatformSubheaderTruncated) {
  // MANIFEST: raw IPv6 + Destination Options + GRE 0x22eb, ERSPAN III with the platform
  // sub-header, cut at 79 bytes → the error names the ERSPAN III layer.
  Capture c = load("tcpdump_erspan-type-iii-pb-1.pcap");
  ASSERT_EQ(c.link, LinkType::RawIp);
  ParseOptions o;
  o.allow_clipped = true;
  auto r = parse_frame(c.frames[0].data, c.link, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().layer, K::ErspanIII);
  EXPECT_EQ(r.error().code, Errc::Truncated);
}

TEST(WireCorpus, GeneveCriticalOption) {
  // tshark -V: Geneve VNI 10, options 8 bytes, C flag, class 0x0000 type 0x80, proto 0x6558.
  Capture c = load("tcpdump_geneve.pcap");
  Layout l = parse_frame_n(c, 1);
  EXPECT_EQ(l.tunnel, TunnelKind::Geneve);
  EXPECT_EQ(l.inner_protocol, 0x6558);
  auto g = GeneveHeader<>::parse(
      std::span<const std::uint8_t>(c.frames[0].data).subspan(l.find(K::Geneve)->offset));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->vni(), 10u);
  EXPECT_TRUE(g->critical());
  EXPECT_EQ(g->header_len(), 16u);
  int n = 0;
  EXPECT_TRUE(g->for_each_option([&](std::uint16_t cls, std::uint8_t type, auto) {
    EXPECT_EQ(cls, 0x0000);
    EXPECT_EQ(type, 0x80);
    ++n;
  }));
  EXPECT_EQ(n, 1);
  EXPECT_EQ(l.inner_mac_header, l.find(K::Geneve)->header_end());
}

TEST(WireCorpus, GeneveGcpInnerIpv4NoEthernet) {
  // tshark -V: Geneve "Length: 40 bytes" (the option length; tshark prints 8 bytes for the
  // one 8-byte option of tcpdump_geneve.pcap) → header 8 + 40 = 48; protocol 0x0800, two
  // class-0x0132 options; inner TCP.
  Capture c = load("tcpdump_geneve-gcp.pcap");
  Layout l = parse_frame_n(c, 1);
  EXPECT_EQ(kinds(l), (std::vector<K>{K::Ethernet, K::Ipv4, K::Udp, K::Geneve, K::Ipv4, K::Tcp}));
  EXPECT_EQ(l.find(K::Geneve)->length, 48u);
  EXPECT_EQ(l.inner_protocol, 0x0800);
  EXPECT_EQ(l.inner_mac_header, kNoOffset);
  EXPECT_EQ(l.inner_network_header, l.find(K::Geneve)->header_end());
}

TEST(WireCorpus, GreInUdp4754) {
  // tshark: udp.dstport 4754, gre.proto 0x0800, ip.len 86 (outer) and 54 (inner), frame 100.
  Layout l = parse_frame_n(load("zeek_gre-over-udp-4754.pcap"), 1);
  EXPECT_EQ(l.tunnel, TunnelKind::GreInUdp);
  EXPECT_EQ(l.inner_network_header, 14u + 20 + 8 + 4);
  EXPECT_EQ(l.find(K::Ipv4, 0)->end, 14u + 86);
  EXPECT_EQ(l.find(K::Ipv4, 1)->end, 46u + 54);
}

TEST(WireCorpus, GrePacketsFlagsAndVersions) {
  // tshark -T fields -e gre.flags_and_version -e gre.proto -e gre.key (pcapng, read by the
  // fallback reader): 1: 0x3081/0x880b, 2: 0x2081, 3: 0x8000/0x0800 then 0x0000/0x0000
  // (keepalive: GRE-in-GRE whose inner protocol is 0), 5: two plain GRE layers then UDP,
  // 7: 0x2000/0x6558 key 0xfde8 with inner TCP.
  Capture c = load("pcapplusplus_GrePackets.pcap");
  ASSERT_EQ(c.frames.size(), 7u);
  Layout p = parse_frame_n(c, 1);
  EXPECT_EQ(p.stop, StopReason::GreVersion);
  EXPECT_EQ(p.find(K::Gre)->length, 16u);  // K|S|A version 1
  Layout g3 = parse_frame_n(c, 3);
  EXPECT_EQ(g3.find(K::Gre, 0)->length, 8u);  // C: checksum + reserved1
  EXPECT_NE(g3.find(K::Gre, 1), nullptr);
  EXPECT_EQ(g3.tunnel_depth, 1);
  EXPECT_EQ(g3.stop, StopReason::UnknownGreProto);
  EXPECT_EQ(g3.stop_value, 0u);
  Layout g5 = parse_frame_n(c, 5);
  EXPECT_EQ(g5.tunnel_depth, 2);
  EXPECT_EQ(g5.l4_proto, 17);
  Layout g7 = parse_frame_n(c, 7);
  EXPECT_EQ(g7.tunnel, TunnelKind::Gre);
  EXPECT_EQ(g7.inner_protocol, 0x6558);
  auto gre7 = GreHeader<>::parse(
      std::span<const std::uint8_t>(c.frames[6].data).subspan(g7.find(K::Gre)->offset));
  EXPECT_EQ(gre7->key(), std::optional<std::uint32_t>(0xfde8));
  EXPECT_EQ(g7.l4_proto, 6);
}

TEST(WireCorpus, Ipv6RoutingType0FinalDestination) {
  // tshark -V: frame 1 segments left 1, Address[1] 2200::210:2:0:0:4; frame 2 segments left
  // 2, Address[2] 2200::240:2:0:0:4 (the last address = final destination, RFC 8200 §8.1).
  Capture c = load("tcpdump_ipv6-routing-header.pcap");
  const Bytes a1 = hex("22 00 00 00 00 00 02 10 00 02 00 00 00 00 00 04");
  const Bytes a2 = hex("22 00 00 00 00 00 02 40 00 02 00 00 00 00 00 04");
  for (std::size_t n : {1u, 2u, 3u, 4u}) {
    Layout l = parse_frame_n(c, n);
    const HeaderRef* ip = l.find(K::Ipv6);
    ASSERT_TRUE(ip->flags & layer_flag::kRoutedDst);
    const auto& d = c.frames[n - 1].data;
    Bytes got(d.begin() + ip->pseudo_daddr, d.begin() + ip->pseudo_daddr + 16);
    EXPECT_EQ(got, (n % 2 == 1) ? a1 : a2) << n;
    EXPECT_EQ(ip->aux, n <= 2 ? 58 : 17);
  }
}

TEST(WireCorpus, ZeekRoute0TcpFinalDestination) {
  // tshark -V: Segments Left 2, Address[2] 2001:78:1:32::2.
  Capture c = load("zeek_chksums_ip6-route0-tcp-good-chksum.pcap");
  Layout l = parse_frame_n(c, 1);
  const HeaderRef* ip = l.find(K::Ipv6);
  const auto& d = c.frames[0].data;
  EXPECT_EQ(Bytes(d.begin() + ip->pseudo_daddr, d.begin() + ip->pseudo_daddr + 16),
            hex("20 01 00 78 00 01 00 32 00 00 00 00 00 00 00 02"));
  EXPECT_EQ(l.l4_proto, 6);
}

TEST(WireCorpus, BigTcpLengthFromFrame) {
  // tshark: frame 80066, ip.len (field 0 per MANIFEST; tshark shows 80052 from the frame),
  // tcp.len 80000 → TCP header 32.
  Layout v4 = parse_frame_n(load("tcpdump_bigtcp-ipv4.pcap"), 1);
  EXPECT_TRUE(v4.find(K::Ipv4)->flags & layer_flag::kLenFromFrame);
  EXPECT_EQ(v4.find(K::Ipv4)->end, 80066u);
  EXPECT_EQ(v4.find(K::Tcp)->length, 32u);
  // IPv6: frame 80054, payload length 0, no jumbo option.
  Layout v6 = parse_frame_n(load("tcpdump_bigtcp-ipv6.pcap"), 1);
  EXPECT_TRUE(v6.find(K::Ipv6)->flags & layer_flag::kLenFromFrame);
  EXPECT_FALSE(v6.find(K::Ipv6)->flags & layer_flag::kJumbo);
  EXPECT_EQ(v6.find(K::Ipv6)->end, 80054u);
  // IPv6 / UDP / VXLAN / IPv6 / TCP super-packet (MANIFEST)
  Layout vx = parse_frame_n(load("tcpdump_bigtcp-ipv6-vxlan-ipv6.pcap"), 1);
  EXPECT_EQ(vx.tunnel, TunnelKind::Vxlan);
  EXPECT_EQ(vx.l4_proto, 6);
  EXPECT_EQ(vx.inner_l4()->level, 1);
}

TEST(WireCorpus, Ipv4Fragments) {
  // tshark: frame 1 MF=1 offset 0; frame 2 MF=1 offset 185 (×8 = 1480).
  Capture c = load("pcapplusplus_ip4_fragments.pcap");
  Layout f1 = parse_frame_n(c, 1);
  EXPECT_EQ(f1.frag, FragStatus::First);
  EXPECT_NE(f1.find(K::Udp), nullptr);
  Layout f2 = parse_frame_n(c, 2);
  EXPECT_EQ(f2.frag, FragStatus::Later);
  EXPECT_EQ(f2.stop_value, 1480u);
  EXPECT_EQ(f2.find(K::Udp), nullptr);
}

TEST(WireCorpus, Ipv6FragmentsAndOptions) {
  Capture c = load("pcapplusplus_ip6_fragments.pcap");
  EXPECT_EQ(parse_frame_n(c, 1).frag, FragStatus::First);
  EXPECT_EQ(parse_frame_n(c, 2).frag, FragStatus::Later);
  // MANIFEST: a HBH+DST+RH+AH chain before OSPF (IP proto 89).
  Layout o = parse_frame_n(load("pcapplusplus_ipv6_options.pcap"), 1);
  EXPECT_EQ(kinds(o), (std::vector<K>{K::Ethernet, K::Ipv6, K::Ipv6HopByHop, K::Ipv6DestOpts,
                                      K::Ipv6Routing, K::Ah}));
  EXPECT_EQ(o.stop, StopReason::UnknownIpProto);
  EXPECT_EQ(o.stop_value, 89u);
}

TEST(WireCorpus, RawIpLinkType) {
  Capture c = load("pcapplusplus_four_ipv6_http_streams.pcap");
  EXPECT_EQ(c.link, LinkType::RawIp);
  Layout l = parse_frame_n(c, 1);
  EXPECT_EQ(l.network_header, 0u);
  EXPECT_EQ(l.protocol, 0x86DD);
  EXPECT_EQ(l.l4_proto, 6);
}

// wire::*Repr::emit — the bytes each emitter writes are checked against public captures
// (tests/data/pcaps, MANIFEST.tsv): a captured header is parsed, its Repr taken, emitted, and
// the result must equal the captured bytes. Checksums are checked against captures whose
// checksums tshark reports as correct. Where no capture carries a header (GUE), the
// expected bytes are written out from the draft's figure.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "ofld/core/csum.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"
#include "wire_test_util.hpp"

using namespace ofld::wire;
using wire_test::Bytes;
using wire_test::hex;
using K = HeaderKind;

namespace {

// Emit the Repr of the captured header `h` of `frame`; returns the emitted bytes, or an empty
// vector when this kind has no Repr (or is one the Repr does not claim to represent).
Bytes reemit(const Bytes& frame, const HeaderRef& h, bool& handled) {
  std::span<const std::uint8_t> s(frame.data() + h.offset, frame.size() - h.offset);
  Bytes out(h.length + 64, 0xAA);
  std::size_t n = 0;
  handled = true;
  switch (h.kind) {
    case K::Ethernet: n = EthernetRepr::from(EthernetHeader<>::parse(s).value()).emit(out); break;
    case K::Vlan:
    case K::QinQ: n = VlanRepr::from(VlanTag<>::parse(s).value()).emit(out); break;
    case K::Ipv4: n = Ipv4Repr::from(Ipv4Header<>::parse(s).value()).emit(out); break;
    case K::Ipv6: n = Ipv6Repr::from(Ipv6Header<>::parse(s).value()).emit(out); break;
    case K::Ipv6HopByHop:
    case K::Ipv6DestOpts:
    case K::Ipv6Routing:
      n = Ipv6ExtRepr::from(Ipv6ExtHeader<>::parse(s).value()).emit(out);
      break;
    case K::Ipv6Fragment: {
      auto v = Ipv6FragHeader<>::parse(s).value();
      if (v.header()[1] != 0 || (load_be16(&v.header()[2]) & 6) != 0) { handled = false; return {}; }
      n = Ipv6FragRepr::from(v).emit(out);
      break;
    }
    case K::Tcp: {
      auto v = TcpHeader<>::parse(s).value();
      if (v.header()[12] & 0x0e) { handled = false; return {}; }  // reserved bits: not represented
      n = TcpRepr::from(v).emit(out);
      break;
    }
    case K::Udp: n = UdpRepr::from(UdpHeader<>::parse(s).value()).emit(out); break;
    case K::Vxlan: {
      auto v = VxlanHeader<>::parse(s).value();
      // only the I (+RCO) flags and zero reserved fields are representable (RFC 7348 §5)
      if ((v.word0() & ~vxlan::kFlagsKnown) || (!v.rco() && v.low_byte())) { handled = false; return {}; }
      n = VxlanRepr::from(v).emit(out);
      break;
    }
    case K::Gre: {
      auto v = GreHeader<>::parse(s).value();
      if (v.version() != 0 || v.routing_present() || (v.flags_word() & 0x0ff8) ||
          (v.csum_present() && load_be16(&v.header()[6]) != 0)) { handled = false; return {}; }
      n = GreRepr::from(v).emit(out);
      break;
    }
    default: handled = false; return {};
  }
  out.resize(n);
  return out;
}

}  // namespace

// Every Ethernet, VLAN, IPv4, IPv6 (+ extension headers), TCP, UDP, VXLAN and GRE header of
// every public capture: emit(from(parse(captured))) == captured bytes.
TEST(WireEmit, ReprOfEveryCapturedHeaderEmitsTheCapturedBytes) {
  std::map<K, std::size_t> checked;
  for (const auto& ent : std::filesystem::directory_iterator(std::string(OFLD_PCAP_DIR))) {
    const std::string name = ent.path().filename().string();
    if (name.find(".pcap") == std::string::npos) continue;
    auto c = wire_test::read_capture(ent.path().string());
    if (!c.error.empty()) continue;
    std::size_t nframes = 0;
    for (const auto& f : c.frames) {
      if (++nframes > 200) break;
      ParseOptions o;
      o.allow_clipped = true;
      Layout l;
      parse_frame_prefix(f.data, c.link, o, l);
      for (const auto& h : l.headers()) {
        if (h.offset + h.length > f.data.size()) continue;
        bool handled = false;
        Bytes got = reemit(f.data, h, handled);
        if (!handled) continue;
        Bytes want(f.data.begin() + h.offset, f.data.begin() + h.offset + h.length);
        ASSERT_EQ(got, want) << name << " frame " << nframes << " " << to_string(h.kind)
                             << " at " << h.offset;
        ++checked[h.kind];
      }
    }
  }
  for (K k : {K::Ethernet, K::Vlan, K::Ipv4, K::Ipv6, K::Ipv6HopByHop, K::Ipv6DestOpts,
              K::Ipv6Routing, K::Ipv6Fragment, K::Tcp, K::Udp, K::Vxlan, K::Gre})
    EXPECT_GT(checked[k], 0u) << "no captured " << to_string(k) << " header was checked";
}

// IPv4 emit computes the header checksum (RFC 791 §3.1) when none is given: on every
// captured IPv4 header whose checksum verifies, the computed one equals the captured one.
TEST(WireEmit, Ipv4EmitComputesTheCapturedHeaderChecksum) {
  std::size_t n = 0;
  for (const char* name : {"zeek_gre-sample.pcap", "tcpdump_vxlan.pcap", "pcapplusplus_ip4_fragments.pcap"}) {
    auto c = wire_test::read_capture(wire_test::pcap_path(name));
    ASSERT_TRUE(c.error.empty()) << name;
    for (const auto& f : c.frames) {
      auto lr = parse_frame(f.data, c.link);
      if (!lr) continue;
      for (const auto& h : lr->headers()) {
        if (h.kind != K::Ipv4) continue;
        std::span<const std::uint8_t> s(f.data.data() + h.offset, h.length);
        if (ofld::csum::ip_compute_csum(s.data(), s.size()) != 0) continue;  // bad in capture
        auto r = Ipv4Repr::from(Ipv4Header<>::parse(s).value());
        r.check.reset();
        Bytes out(h.length);
        ASSERT_EQ(r.emit(out), h.length);
        EXPECT_EQ(out, Bytes(s.begin(), s.end())) << name;
        ++n;
      }
    }
  }
  EXPECT_GT(n, 10u);
}

// l4_checksum_v4/_v6 over a captured segment with its check field zeroed gives the captured
// check value (RFC 9293 §3.1, RFC 768, RFC 8200 §8.1 incl. the routing-header destination).
TEST(WireEmit, L4ChecksumMatchesCapturedGoodChecksums) {
  std::size_t n4 = 0, n6 = 0;
  for (const char* name : {"zeek_gre-sample.pcap", "zeek_chksums_ip6-route0-tcp-good-chksum.pcap",
                           "pcapplusplus_four_ipv6_http_streams.pcap"}) {
    auto c = wire_test::read_capture(wire_test::pcap_path(name));
    ASSERT_TRUE(c.error.empty()) << name;
    for (const auto& f : c.frames) {
      auto lr = parse_frame(f.data, c.link);
      if (!lr || lr->frag != FragStatus::None) continue;
      const HeaderRef* l4 = lr->inner_l4();
      if (!l4 || l4->end > f.data.size()) continue;
      const HeaderRef* ip = lr->ip_of(*l4);
      Bytes seg(f.data.begin() + l4->offset, f.data.begin() + l4->end);
      const std::size_t co = l4->kind == K::Tcp ? tcp::kCheckOffset : udp::kCheckOffset;
      const std::uint16_t captured = load_be16(&seg[co]);
      if (l4->kind == K::Udp && captured == 0) continue;
      store_be16(&seg[co], 0);
      std::uint16_t got;
      if (ip->kind == K::Ipv4) {
        auto v = Ipv4Header<>::parse(std::span<const std::uint8_t>(f.data).subspan(ip->offset)).value();
        got = l4_checksum_v4(v.saddr(), v.daddr(), ip->aux, seg);
        ++n4;
      } else {
        std::array<std::uint8_t, 16> s{}, d{};
        std::copy_n(f.data.begin() + ip->offset + ipv6::kSaddrOffset, 16, s.begin());
        std::copy_n(f.data.begin() + ip->pseudo_daddr, 16, d.begin());
        got = l4_checksum_v6(s, d, ip->aux, seg);
        ++n6;
      }
      if (l4->kind == K::Udp) got = ofld::csum::udp_csum_mangle(got);
      EXPECT_EQ(got, captured) << name;
      // The PARTIAL seed is the complement of the full sum with an all-zero segment.
      if (ip->kind == K::Ipv4) {
        auto v = Ipv4Header<>::parse(std::span<const std::uint8_t>(f.data).subspan(ip->offset)).value();
        Bytes zero(seg.size(), 0);
        EXPECT_EQ(l4_pseudo_seed_v4(v.saddr(), v.daddr(), ip->aux, std::uint32_t(seg.size())),
                  std::uint16_t(~l4_checksum_v4(v.saddr(), v.daddr(), ip->aux, zero)));
      }
    }
  }
  EXPECT_GT(n4, 10u);
  EXPECT_GT(n6, 1u);
}

// tcpdump_vxlan.pcap frame 1 (tshark -T fields -e vxlan.flags -e vxlan.vni: 0x0800 100): the
// VXLAN header emitted from {vni 100} equals the captured 8 bytes "08 00 00 00 00 00 64 00".
TEST(WireEmit, VxlanFromVniEqualsCapture) {
  auto c = wire_test::read_capture(wire_test::pcap_path("tcpdump_vxlan.pcap"));
  ASSERT_TRUE(c.error.empty());
  auto l = parse_frame(c.frames.at(0).data, c.link).value();
  const HeaderRef* h = l.find(K::Vxlan);
  ASSERT_NE(h, nullptr);
  Bytes want(c.frames[0].data.begin() + h->offset, c.frames[0].data.begin() + h->offset + 8);
  Bytes out(8);
  ASSERT_EQ((VxlanRepr{VxlanHeader<>::parse(want).value().vni(), std::nullopt}.emit(out)), 8u);
  EXPECT_EQ(out, want);
  EXPECT_EQ(out, hex("08 00 00 00 00 00 64 00"));
}

// VXLAN RCO (draft-herbert-vxlan-rco §3, spec V-1/V-2): flags 0x08 | RCO bit 21, and the low
// byte = start/2 with bit 7 for UDP. start 20 (inner IPv4 header + TCP), TCP → 0x0a.
TEST(WireEmit, VxlanRcoWordLayoutFromDraft) {
  Bytes out(8);
  ASSERT_EQ((VxlanRepr{0x123456, vxlan::Rco{20, 16}}.emit(out)), 8u);
  EXPECT_EQ(out, hex("08 20 00 00 12 34 56 0a"));
  ASSERT_EQ((VxlanRepr{1, vxlan::Rco{40, 6}}.emit(out)), 8u);
  EXPECT_EQ(out, hex("08 20 00 00 00 00 01 94"));
  EXPECT_EQ((VxlanRepr{1, vxlan::Rco{21, 6}}.emit(out)), 0u) << "odd start is not expressible";
}

// GUE (draft-ietf-intarea-gue §3.1 figure: ver(2) C(1) hlen(5) | proto | flags(16); Linux
// include/net/gue.h private flags + REMCSUM option, spec V-8/V-10). No public capture carries
// GUE, so the bytes are written out from the figure.
TEST(WireEmit, GueHeadersFromDraftFigure) {
  Bytes out(12);
  ASSERT_EQ((GueRepr{ipproto::kIpip, std::nullopt}.emit(out)), 4u);
  EXPECT_EQ(Bytes(out.begin(), out.begin() + 4), hex("00 04 00 00"));
  ASSERT_EQ((GueRepr{ipproto::kTcp, GueHeader<>::Remcsum{20, 36}}.emit(out)), 12u);
  // hlen 2 words, proto 6, flags P (bit 0 of the 16-bit flags = 0x0001 per gue.h GUE_FLAG_PRIV
  // in host order after ntohs), private flags REMCSUM 0x80000000, start 20, offset 36.
  EXPECT_EQ(out, hex("02 06 00 01 80 00 00 00 00 14 00 24"));
  auto v = GueHeader<const std::uint8_t>::parse(std::span<const std::uint8_t>(out)).value();
  EXPECT_EQ(v.hlen(), 2);
  ASSERT_TRUE(v.remcsum());
  EXPECT_EQ(v.remcsum()->offset, 36);
}

// unchecked() views read the same fields as parse() views, at no cost (constexpr).
// zeek_gre-sample.pcap frame 11 (tshark: tcp.flags 0x00c2 SYN|ECE|CWR, tcp.hdr_len 40).
TEST(WireEmit, UncheckedViewsAgreeWithParsedViews) {
  auto c = wire_test::read_capture(wire_test::pcap_path("zeek_gre-sample.pcap"));
  ASSERT_TRUE(c.error.empty());
  const auto& f = c.frames.at(10).data;
  auto l = parse_frame(f, c.link).value();
  const HeaderRef* ip = l.find(K::Ipv4, 1);
  const HeaderRef* th = l.find(K::Tcp);
  ASSERT_TRUE(ip && th);
  auto a = Ipv4Header<>::unchecked(f.data() + ip->offset);
  auto b = Ipv4Header<>::parse(std::span<const std::uint8_t>(f).subspan(ip->offset)).value();
  EXPECT_EQ(a.header_len(), b.header_len());
  EXPECT_EQ(a.saddr(), b.saddr());
  auto t = TcpHeader<>::unchecked(f.data() + th->offset);
  EXPECT_EQ(t.header_len(), 40u);
  EXPECT_EQ(t.flags(), tcp_flag::kSyn | tcp_flag::kEce | tcp_flag::kCwr);
  EXPECT_EQ(t.flag_word() & (tcp_flag_word::kSyn | tcp_flag_word::kEce | tcp_flag_word::kCwr |
                             tcp_flag_word::kAck),
            tcp_flag_word::kSyn | tcp_flag_word::kEce | tcp_flag_word::kCwr);
  static_assert(tcp_flag_word::from_flags(tcp_flag::kFin) == tcp_flag_word::kFin);
  static_assert(tcp_flag_word::from_flags(tcp_flag::kCwr) == tcp_flag_word::kCwr);
}

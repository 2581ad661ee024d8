// A length field of 0 (tcpdump's rules, print-ip.c / print-ip6.c since 2025-2026), in
// wire::parse_frame and in the capture tools, and tcpdump's own BIG TCP and length-zero test
// captures (tests/data/tcpdump, BSD-3-Clause) judged against the .out files tcpdump ships.
//
// The expected checksums of the captures are read from tcpdump's .out files ("cksum 0xNNNN
// (incorrect -> 0xMMMM)", "[bad udp cksum 0xNNNN -> 0xMMMM!]"), never from ofld's output.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "ofld/io/pcap.hpp"
#include "ofld/tools/csum_check.hpp"
#include "ofld/wire/error.hpp"
#include "ofld/wire/layout.hpp"

using namespace ofld;
using Bytes = std::vector<std::uint8_t>;
using wire::Errc;
using wire::HeaderKind;

namespace {

void put16(Bytes& b, std::size_t o, std::uint16_t v) {
  b[o] = std::uint8_t(v >> 8);
  b[o + 1] = std::uint8_t(v);
}

/// Raw IPv4 packet: 20-byte header, total length field `tot`, protocol, `pay` payload bytes.
Bytes ipv4_raw(std::uint8_t proto, std::uint16_t tot, std::size_t pay) {
  Bytes b(20 + pay, 0);
  b[0] = 0x45;
  put16(b, 2, tot);
  b[8] = 64;
  b[9] = proto;
  b[12] = 10, b[15] = 1, b[16] = 10, b[19] = 2;
  if (proto == 6 && pay >= 20) b[20 + 12] = 0x50;  // TCP data offset 5
  if (proto == 17 && pay >= 8) put16(b, 20 + 4, 0);  // UDP length 0 (BIG TCP)
  return b;
}

/// Raw IPv6 packet: payload length `plen`, next header `nh`, `pay` bytes after the fixed header.
Bytes ipv6_raw(std::uint8_t nh, std::uint16_t plen, std::size_t pay) {
  Bytes b(40 + pay, 0);
  b[0] = 0x60;
  put16(b, 4, plen);
  b[6] = nh;
  b[7] = 64;
  b[8] = 0x20, b[9] = 0x01, b[23] = 1;
  b[24] = 0x20, b[25] = 0x01, b[39] = 2;
  if (nh == 6 && pay >= 20) b[40 + 12] = 0x50;
  return b;
}

wire::Result<wire::Layout> raw(const Bytes& b, const wire::ParseOptions& o = {}) {
  return wire::parse_frame(b, wire::LinkType::RawIp, o);
}

}  // namespace

// IPv4 total length 0: "presumed TSO / BIG TCP" for TCP and UDP only (the length comes from
// the frame); any other protocol is malformed, "total length 0 < header length 20".
TEST(WireLengthZero, Ipv4TotalLengthZeroOnlyForTcpAndUdp) {
  for (std::uint8_t proto : {std::uint8_t(6), std::uint8_t(17)}) {
    SCOPED_TRACE(int(proto));
    for (std::size_t pay : {std::size_t(100), std::size_t(80000)}) {
      auto l = raw(ipv4_raw(proto, 0, pay));
      ASSERT_TRUE(l.ok()) << l.error().to_string();
      const auto* ip = l->find(HeaderKind::Ipv4);
      ASSERT_NE(ip, nullptr);
      EXPECT_TRUE(ip->flags & wire::layer_flag::kLenFromFrame);
      EXPECT_EQ(ip->end, 20 + pay);
    }
  }
  for (std::uint8_t proto : {std::uint8_t(1), std::uint8_t(47), std::uint8_t(4)}) {
    SCOPED_TRACE(int(proto));
    auto l = raw(ipv4_raw(proto, 0, 80000));
    ASSERT_FALSE(l.ok());
    EXPECT_EQ(l.error().layer, HeaderKind::Ipv4);
    EXPECT_EQ(l.error().code, Errc::BadTotalLen);
    EXPECT_EQ(l.error().value, 0u);
    EXPECT_EQ(l.error().limit, 20u);
  }
}

// IPv6 payload length 0 without a Jumbo option: BIG TCP only for TCP or UDP directly after
// the fixed header in a packet over 65535 bytes; otherwise no payload, which cannot hold the
// next header: malformed (Errc::ZeroLength).
TEST(WireLengthZero, Ipv6PayloadLengthZeroIsBigTcpOnlyForTcpUdpOver65535) {
  // 40 + 65496 = 65536 bytes: over 65535
  for (std::uint8_t nh : {std::uint8_t(6), std::uint8_t(17)}) {
    SCOPED_TRACE(int(nh));
    auto big = raw(ipv6_raw(nh, 0, 65496));
    ASSERT_TRUE(big.ok()) << big.error().to_string();
    EXPECT_TRUE(big->find(HeaderKind::Ipv6)->flags & wire::layer_flag::kLenFromFrame);
    // exactly 65535 bytes: not BIG TCP
    auto small = raw(ipv6_raw(nh, 0, 65495));
    ASSERT_FALSE(small.ok());
    EXPECT_EQ(small.error().code, Errc::ZeroLength);
    EXPECT_EQ(small.error().layer, HeaderKind::Ipv6);
    EXPECT_EQ(small.error().value, nh);
    EXPECT_EQ(small.error().limit, 65535u);
  }
  // ICMPv6 over 65535 bytes: not presumed
  auto icmp = raw(ipv6_raw(58, 0, 70000));
  ASSERT_FALSE(icmp.ok());
  EXPECT_EQ(icmp.error().code, Errc::ZeroLength);
  // another extension header first (destination options): no payload to hold it
  auto dst = raw(ipv6_raw(60, 0, 70000));
  ASSERT_FALSE(dst.ok());
  EXPECT_EQ(dst.error().code, Errc::ZeroLength);
}

// RFC 2675: payload length 0 with a Hop-by-Hop header takes the Jumbo Payload option's
// length; a Hop-by-Hop header without that option makes the packet invalid (tcpdump: "No
// valid Jumbo Payload Hop-by-Hop option found").
TEST(WireLengthZero, Ipv6HopByHopWithoutJumboIsMalformed) {
  const std::size_t tcp_len = 70000;
  Bytes b = ipv6_raw(0, 0, 8 + tcp_len);
  b[40] = 6;  // HBH next header TCP, hdr ext len 0
  b[41] = 0;
  b[42] = 0xC2;  // Jumbo Payload option, length 4
  b[43] = 4;
  const std::uint32_t jumbo = std::uint32_t(8 + tcp_len);
  b[44] = std::uint8_t(jumbo >> 24), b[45] = std::uint8_t(jumbo >> 16);
  b[46] = std::uint8_t(jumbo >> 8), b[47] = std::uint8_t(jumbo);
  b[48 + 12] = 0x50;
  auto ok = raw(b);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_TRUE(ok->find(HeaderKind::Ipv6)->flags & wire::layer_flag::kJumbo);
  ASSERT_NE(ok->find(HeaderKind::Tcp), nullptr);

  b[42] = 1;  // PadN instead of Jumbo
  auto bad = raw(b);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().layer, HeaderKind::Ipv6HopByHop);
  EXPECT_EQ(bad.error().code, Errc::ZeroLength);
  EXPECT_NE(bad.error().to_string().find("Jumbo"), std::string::npos);
}

// A snaplen-cut BIG TCP capture: the wire length (pcap len), not the bytes kept, says
// whether the packet is over 65535 bytes (tcpdump judges the length on the wire).
TEST(WireLengthZero, Ipv6BigTcpJudgedOnTheWireLength) {
  const Bytes cut = ipv6_raw(6, 0, 200);  // 240 bytes captured
  EXPECT_FALSE(raw(cut).ok());
  wire::ParseOptions o;
  o.wire_len = 80040;
  o.allow_clipped = true;
  auto l = raw(cut, o);
  ASSERT_TRUE(l.ok()) << l.error().to_string();
  EXPECT_TRUE(l->find(HeaderKind::Ipv6)->flags & wire::layer_flag::kLenFromFrame);
  // the tool: the TCP checksum cannot be judged from 240 of 80040 bytes
  auto r = tools::verify_frame(cut, wire::LinkType::RawIp, 80040);
  EXPECT_FALSE(r.parse_error);
  ASSERT_EQ(r.fields.size(), 1u);
  EXPECT_EQ(r.fields[0].verdict, tools::Verdict::Skipped);
  EXPECT_EQ(r.fields[0].reason, tools::SkipReason::Truncated);
}

// ---- tcpdump's captures ---------------------------------------------------------------------

namespace {

std::string tcpdump_dir() { return std::string(OFLD_SOURCE_DIR) + "/tests/data/tcpdump/"; }

struct TcpdumpCksum {
  bool udp = false;
  std::uint16_t found = 0, expected = 0;
  bool carry = false;  ///< ofld: TCP over IPv4 covering more than 65535 bytes (see below)
};

/// The checksums tcpdump -v judged wrong, outer to inner, from its .out file.
std::vector<TcpdumpCksum> tcpdump_bad_cksums(const std::string& out) {
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<TcpdumpCksum> v;
  const std::regex re(
      R"(\[bad udp cksum 0x([0-9a-f]{4}) -> 0x([0-9a-f]{4})!\]|cksum 0x([0-9a-f]{4}) \(incorrect -> 0x([0-9a-f]{4})\))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    const auto& m = *it;
    TcpdumpCksum c;
    c.udp = m[1].matched;
    c.found = std::uint16_t(std::stoul(c.udp ? m[1].str() : m[3].str(), nullptr, 16));
    c.expected = std::uint16_t(std::stoul(c.udp ? m[2].str() : m[4].str(), nullptr, 16));
    v.push_back(c);
  }
  return v;
}

std::string read_text(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

// tcpdump's BIG TCP captures (IPv4 total length 0, IPv6 payload length 0 without and with
// the Jumbo HBH, inside VXLAN and Geneve over IPv4 and IPv6): every layer is decoded, and
// each checksum tcpdump calls incorrect is not good here and has tcpdump's expected value;
// the others are good (or none: UDP/IPv4 checksum 0). UDP over IPv4, which tcpdump -v does
// not judge, is left out.
TEST(CsumTcpdumpCaptures, BigTcpJudgedAsTcpdumpJudgesThem) {
  const char* names[] = {"bigtcp-ipv4",           "bigtcp-ipv6",
                         "bigtcp-ipv6-hbh",       "bigtcp-ipv4-vxlan-ipv4",
                         "bigtcp-ipv4-vxlan-ipv6", "bigtcp-ipv4-geneve-ipv4",
                         "bigtcp-ipv4-geneve-ipv6", "bigtcp-ipv6-vxlan-ipv4",
                         "bigtcp-ipv6-vxlan-ipv6", "bigtcp-ipv6-geneve-ipv4",
                         "bigtcp-ipv6-geneve-ipv6"};
  for (const char* n : names) {
    SCOPED_TRACE(n);
    const std::string base = tcpdump_dir() + n;
    const auto want = tcpdump_bad_cksums(base + ".out");
    ASSERT_FALSE(want.empty());
    const std::string out = read_text(base + ".out");
    const bool tunnel = out.find("VXLAN") != std::string::npos ||
                        out.find("Geneve") != std::string::npos;
    io::PcapReader rd(base + ".pcap");
    io::PcapRecord rec;
    ASSERT_TRUE(rd.next(rec));
    auto r = tools::verify_frame(rec.bytes(), io::to_wire_link(rd.link()), rec.len);
    ASSERT_FALSE(r.parse_error) << r.parse_error->to_string();
    ASSERT_FALSE(r.inner_unparsed) << r.inner_error->to_string();
    std::vector<TcpdumpCksum> got;
    bool saw_inner_tcp = false;
    for (const auto& f : r.fields) {
      SCOPED_TRACE(tools::describe(f));
      if (f.kind == tools::CsumKind::Tcp) saw_inner_tcp = f.level == (tunnel ? 1 : 0);
      if (f.verdict == tools::Verdict::Good || f.verdict == tools::Verdict::None) continue;
      // tcpdump -v judges UDP checksums over IPv4 only at -vv (print-udp.c): not in the .out
      if (f.kind == tools::CsumKind::Udp && !f.ipv6) continue;
      EXPECT_NE(f.verdict, tools::Verdict::Skipped);
      got.push_back({f.kind == tools::CsumKind::Udp, f.found, f.expected,
                     !f.ipv6 && f.covered_len > 65535});
    }
    EXPECT_TRUE(saw_inner_tcp);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].udp, want[i].udp) << i;
      EXPECT_EQ(got[i].found, want[i].found) << i;
      // The IPv4 pseudo-header has a 16-bit length: tcpdump writes the BIG TCP length there
      // cut to 16 bits (nextproto4_cksum), Linux sums the whole 32-bit length
      // (csum_tcpudp_nofold) and so does ofld — the captured field is exactly that seed
      // (verdict partial). The two expected values differ by the one carried 65536: tcpdump's
      // is ofld's plus 1 in ones'-complement arithmetic.
      const std::uint32_t plus1 = std::uint32_t(got[i].expected) + 1;
      const std::uint16_t ours = got[i].carry ? std::uint16_t((plus1 & 0xffff) + (plus1 >> 16))
                                              : got[i].expected;
      EXPECT_EQ(ours, want[i].expected) << i;
    }
  }
}

// tcpdump's length-zero captures: IPv4 total length 0 around ICMP ("[total length 0 < header
// length 20] (invalid)") and IPv6 payload length 0 around ICMPv6 in a small packet ("ICMP6,
// length 0 (invalid)") are malformed frames, named, with no checksum verdict.
TEST(CsumTcpdumpCaptures, LengthZeroIsMalformedNotAChecksumVerdict) {
  struct Case {
    const char* name;
    HeaderKind layer;
    Errc code;
  } cases[] = {{"icmp-length-zero", HeaderKind::Ipv4, Errc::BadTotalLen},
               {"icmpv6-length-zero", HeaderKind::Ipv6, Errc::ZeroLength}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string base = tcpdump_dir() + c.name;
    EXPECT_NE(read_text(base + ".out").find("(invalid)"), std::string::npos);
    io::PcapReader rd(base + ".pcapng");
    io::PcapRecord rec;
    ASSERT_TRUE(rd.next(rec));
    auto r = tools::verify_frame(rec.bytes(), io::to_wire_link(rd.link()), rec.len);
    ASSERT_TRUE(r.parse_error);
    EXPECT_EQ(r.parse_error->layer, c.layer);
    EXPECT_EQ(r.parse_error->code, c.code);
    EXPECT_TRUE(r.fields.empty());
    tools::Summary s;
    s.add(r);
    EXPECT_EQ(s.parse_errors, 1u);
    EXPECT_EQ(s.frames_with_bad, 0u);
  }
}

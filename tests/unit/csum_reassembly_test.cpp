// `ofld csum verify` as deep as tshark — IPv4/IPv6 reassembly (RFC 791 §3.2,
// RFC 8200 §4.5, RFC 5722 §4 + erratum 3089), bounded memory and time, and encapsulations
// followed to the stated limit with a named verdict past it.
//
// Frames are built by hand; the expected checksums come from the RFC 1071 sum computed here
// (ref_sum, independent of ofld::csum), never from ofld's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ofld/tools/csum_check.hpp"
#include "ofld/wire/layout.hpp"

using namespace ofld;
using tools::CsumKind;
using tools::FragFault;
using tools::Verdict;
using Bytes = std::vector<std::uint8_t>;

namespace {

// RFC 1071: 16-bit big-endian words, end-around carry, complemented.
std::uint16_t ref_sum(const Bytes& b, std::uint32_t init = 0) {
  std::uint64_t s = init;
  for (std::size_t i = 0; i + 1 < b.size(); i += 2) s += std::uint32_t(b[i] << 8 | b[i + 1]);
  if (b.size() & 1) s += std::uint32_t(b.back() << 8);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return std::uint16_t(~s);
}
void put16(Bytes& b, std::size_t o, std::uint16_t v) {
  b[o] = std::uint8_t(v >> 8);
  b[o + 1] = std::uint8_t(v);
}
void put32(Bytes& b, std::size_t o, std::uint32_t v) {
  put16(b, o, std::uint16_t(v >> 16));
  put16(b, o + 2, std::uint16_t(v));
}
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes o;
  for (const auto& p : parts) o.insert(o.end(), p.begin(), p.end());
  return o;
}

const Bytes kSrc4 = {10, 0, 0, 1}, kDst4 = {10, 0, 0, 2};
Bytes src6() { Bytes a(16, 0); a[0] = 0x20; a[1] = 0x01; a[2] = 0x0d; a[3] = 0xb8; a[15] = 1; return a; }
Bytes dst6() { Bytes a = src6(); a[15] = 2; return a; }

Bytes eth(std::uint16_t et) {
  Bytes b = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0, 0};
  put16(b, 12, et);
  return b;
}
/// IPv4 header (20 bytes) with a correct header checksum.
Bytes ipv4(std::uint8_t proto, std::size_t payload, std::uint16_t id, std::uint16_t frag_field,
           const Bytes& s = kSrc4, const Bytes& d = kDst4) {
  Bytes h = {0x45, 0, 0, 0, 0, 0, 0, 0, 64, proto, 0, 0};
  put16(h, 2, std::uint16_t(20 + payload));
  put16(h, 4, id);
  put16(h, 6, frag_field);
  h.insert(h.end(), s.begin(), s.end());
  h.insert(h.end(), d.begin(), d.end());
  put16(h, 10, ref_sum(h));
  return h;
}
/// A UDP datagram (header + payload of n bytes) with its RFC 768 checksum over the IPv4 or
/// IPv6 pseudo-header (RFC 768 / RFC 8200 §8.1).
Bytes udp(std::size_t n, bool v6, std::uint8_t fill = 0) {
  Bytes u(8 + n);
  put16(u, 0, 5000);
  put16(u, 2, 53);
  put16(u, 4, std::uint16_t(8 + n));
  for (std::size_t i = 0; i < n; ++i) u[8 + i] = std::uint8_t(i * 7 + 3 + fill);
  Bytes ph;
  if (v6) {
    ph = cat({src6(), dst6(), {0, 0, 0, 0, 0, 0, 0, 17}});
    put32(ph, 32, std::uint32_t(u.size()));
  } else {
    ph = cat({kSrc4, kDst4, {0, 17, 0, 0}});
    put16(ph, 10, std::uint16_t(u.size()));
  }
  std::uint16_t c = ref_sum(cat({ph, u}));
  put16(u, 6, c == 0 ? 0xffff : c);
  return u;
}
/// IPv4 fragment frame: bytes [off, off+len) of `dgram` (the L4 datagram), MF as given.
Bytes frag4(const Bytes& dgram, std::size_t off, std::size_t len, bool mf, std::uint16_t id = 7,
            std::uint8_t proto = 17) {
  Bytes pay(dgram.begin() + long(off), dgram.begin() + long(off + len));
  return cat({eth(0x0800), ipv4(proto, len, id, std::uint16_t((mf ? 0x2000 : 0) | (off / 8))), pay});
}
/// IPv6 fragment frame: fixed header + fragment header (next header 17) + bytes of dgram.
Bytes frag6(const Bytes& dgram, std::size_t off, std::size_t len, bool mf, std::uint32_t id = 9) {
  Bytes h = {0x60, 0, 0, 0, 0, 0, 44, 64};
  put16(h, 4, std::uint16_t(8 + len));
  h = cat({h, src6(), dst6()});
  Bytes f = {17, 0, 0, 0, 0, 0, 0, 0};
  put16(f, 2, std::uint16_t(off | (mf ? 1 : 0)));
  put32(f, 4, id);
  Bytes pay(dgram.begin() + long(off), dgram.begin() + long(off + len));
  return cat({eth(0x86dd), h, f, pay});
}

struct Cap {
  tools::CaptureVerifier v;
  std::uint64_t n = 0;
  explicit Cap(const tools::ReassemblyLimits& l = {})
      : v(wire::LinkType::Ethernet, {}, l) {}
  tools::FrameReport feed(const Bytes& f, std::uint64_t ts_ns = 0) {
    return v.verify(f, std::uint32_t(f.size()), ++n, ts_ns);
  }
};

const tools::DatagramReport* reassembled(const tools::FrameReport& r) {
  for (const auto& d : r.datagrams)
    if (d.fault == FragFault::None) return &d;
  return nullptr;
}
bool has_fault(const tools::FrameReport& r, FragFault f) {
  return std::any_of(r.datagrams.begin(), r.datagrams.end(),
                     [&](const auto& d) { return d.fault == f; });
}

}  // namespace

// RFC 791 §3.2: fragments (out of order) reassembled; the UDP checksum of the whole datagram
// is verified, and the datagram names the frames that made it (in offset order).
TEST(CsumReassembly, Ipv4DatagramVerifiedWholeAndFramesNamed) {
  const Bytes d = udp(1200, false);
  Cap r;
  auto a = r.feed(frag4(d, 800, d.size() - 800, false));  // frame 1: last
  EXPECT_TRUE(a.datagrams.empty());
  // the frame's own IPv4 header is judged; nothing of the L4 is
  ASSERT_EQ(a.fields.size(), 1u);
  EXPECT_EQ(a.fields[0].kind, CsumKind::Ipv4Header);
  EXPECT_EQ(a.fields[0].verdict, Verdict::Good);
  auto b = r.feed(frag4(d, 0, 400, true));    // frame 2: first (its UDP header is here)
  EXPECT_TRUE(b.datagrams.empty());
  for (const auto& f : b.fields)
    if (f.kind == CsumKind::Udp) {
      EXPECT_EQ(f.verdict, Verdict::Skipped);
      EXPECT_TRUE(f.in_fragment);
    }
  auto c = r.feed(frag4(d, 400, 400, true));  // frame 3: middle, completes
  const auto* dg = reassembled(c);
  ASSERT_NE(dg, nullptr);
  EXPECT_FALSE(dg->ipv6);
  EXPECT_EQ(dg->id, 7u);
  EXPECT_EQ(dg->length, 20 + d.size());
  EXPECT_EQ(dg->frames, (std::vector<std::uint64_t>{2, 3, 1}));
  ASSERT_EQ(dg->fields.size(), 1u);  // the rebuilt IPv4 header is not judged
  EXPECT_EQ(dg->fields[0].kind, CsumKind::Udp);
  EXPECT_EQ(dg->fields[0].verdict, Verdict::Good);
  EXPECT_EQ(c.count_all(Verdict::Good), 2u);  // frame's IPv4 header + datagram's UDP
  EXPECT_EQ(r.v.datagrams_held(), 0u);
  EXPECT_EQ(r.v.bytes_held(), 0u);

  // One byte changed in the middle fragment: the datagram's UDP checksum is bad, and the
  // expected value is the RFC 768 sum of the changed datagram.
  Bytes bad = d;
  bad[500] ^= 0x40;
  Bytes fixed = bad;
  put16(fixed, 6, 0);
  Bytes ph = cat({kSrc4, kDst4, {0, 17, 0, 0}});
  put16(ph, 10, std::uint16_t(d.size()));
  std::uint16_t want = ref_sum(cat({ph, fixed}));
  Cap r2;
  r2.feed(frag4(bad, 0, 400, true, 8));
  r2.feed(frag4(bad, 400, 400, true, 8));
  auto e = r2.feed(frag4(bad, 800, d.size() - 800, false, 8));
  dg = reassembled(e);
  ASSERT_NE(dg, nullptr);
  ASSERT_EQ(dg->fields.size(), 1u);
  EXPECT_EQ(dg->fields[0].verdict, Verdict::Bad);
  EXPECT_EQ(dg->fields[0].expected, want == 0 ? 0xffff : want);
  EXPECT_EQ(e.count_all(Verdict::Bad), 1u);
  tools::Summary s;
  s.add(e);
  EXPECT_EQ(s.frames_with_bad, 1u);
  EXPECT_EQ(s.datagrams, 1u);
}

// RFC 8200 §4.5: IPv6 fragments reassembled, UDP over the IPv6 pseudo-header.
TEST(CsumReassembly, Ipv6DatagramVerifiedWhole) {
  const Bytes d = udp(3000, true);
  Cap r;
  r.feed(frag6(d, 0, 1448, true));
  r.feed(frag6(d, 1448, 1448, true));
  auto c = r.feed(frag6(d, 2896, d.size() - 2896, false));
  const auto* dg = reassembled(c);
  ASSERT_NE(dg, nullptr);
  EXPECT_TRUE(dg->ipv6);
  EXPECT_EQ(dg->id, 9u);
  EXPECT_EQ(dg->length, 40 + d.size());
  EXPECT_EQ(dg->frames, (std::vector<std::uint64_t>{1, 2, 3}));
  ASSERT_EQ(dg->fields.size(), 1u);
  EXPECT_EQ(dg->fields[0].kind, CsumKind::Udp);
  EXPECT_TRUE(dg->fields[0].ipv6);
  EXPECT_EQ(dg->fields[0].verdict, Verdict::Good);
}

// RFC 5722 §4: an overlapping fragment discards the whole datagram, and its later fragments
// too. Applied to IPv4 as well (as Linux since 4.19).
TEST(CsumReassembly, Rfc5722_OverlapDiscardsTheDatagram) {
  for (bool v6 : {false, true}) {
    SCOPED_TRACE(v6 ? "ipv6" : "ipv4");
    const Bytes d = udp(1200, v6);
    auto fr = [&](std::size_t off, std::size_t len, bool mf) {
      return v6 ? frag6(d, off, len, mf) : frag4(d, off, len, mf);
    };
    Cap r;
    r.feed(fr(0, 400, true));
    auto o = r.feed(fr(200, 400, true));  // overlaps [200, 400)
    EXPECT_TRUE(has_fault(o, FragFault::Overlap));
    EXPECT_EQ(reassembled(o), nullptr);
    auto l = r.feed(fr(400, 400, true));
    EXPECT_TRUE(has_fault(l, FragFault::Discarded));
    auto e = r.feed(fr(800, d.size() - 800, false));
    EXPECT_TRUE(has_fault(e, FragFault::Discarded));
    EXPECT_EQ(reassembled(e), nullptr);  // never reassembled from untrusted pieces
    EXPECT_EQ(r.v.bytes_held(), 0u);
    for (const auto& x : o.datagrams)
      if (x.fault == FragFault::Overlap) {
        EXPECT_EQ(x.frames, (std::vector<std::uint64_t>{1, 2}));
      }
  }
}

// Erratum 3089 / Linux IPFRAG_DUP: an exact duplicate is ignored and reported; the datagram
// still completes. The same range with different bytes is not a duplicate: it is an overlap.
TEST(CsumReassembly, DuplicateIgnoredConflictingDuplicateIsOverlap) {
  const Bytes d = udp(1200, false);
  Cap r;
  r.feed(frag4(d, 0, 400, true));
  auto dup = r.feed(frag4(d, 0, 400, true));
  EXPECT_TRUE(has_fault(dup, FragFault::Duplicate));
  r.feed(frag4(d, 400, 400, true));
  auto c = r.feed(frag4(d, 800, d.size() - 800, false));
  const auto* dg = reassembled(c);
  ASSERT_NE(dg, nullptr);
  EXPECT_EQ(dg->frames, (std::vector<std::uint64_t>{1, 3, 4}));
  EXPECT_EQ(dg->fields.at(0).verdict, Verdict::Good);

  Bytes other = d;
  other[100] ^= 1;
  Cap r2;
  r2.feed(frag4(d, 0, 400, true));
  auto x = r2.feed(frag4(other, 0, 400, true));
  EXPECT_TRUE(has_fault(x, FragFault::Overlap));
  r2.feed(frag4(d, 400, 400, true));
  EXPECT_EQ(reassembled(r2.feed(frag4(d, 800, d.size() - 800, false))), nullptr);
}

// Excess (Linux discard_qp): data past the end set by the last fragment, or a second last
// fragment with another end; too big: a datagram longer than 65535 bytes.
TEST(CsumReassembly, ExcessAndTooBigAreNamedAndDiscarded) {
  const Bytes d = udp(1200, false);
  Bytes longer = d;
  longer.resize(2000, 0xAA);
  Cap r;
  r.feed(frag4(d, 800, d.size() - 800, false));  // end = 1208
  auto x = r.feed(frag4(longer, 1208, 400, true));  // past the end
  EXPECT_TRUE(has_fault(x, FragFault::Excess));
  r.feed(frag4(d, 0, 400, true));
  EXPECT_EQ(reassembled(r.feed(frag4(d, 400, 400, true))), nullptr);

  Cap r2;
  r2.feed(frag4(d, 800, d.size() - 800, false));
  auto y = r2.feed(frag4(longer, 1600, 400, false));  // a second, different last fragment
  EXPECT_TRUE(has_fault(y, FragFault::Excess));

  Bytes big(70000, 1);
  Cap r3;
  auto z = r3.feed(frag4(big, 65528, 100, false));  // 20 + 65528 + 100 > 65535
  EXPECT_TRUE(has_fault(z, FragFault::TooBig));
  EXPECT_EQ(r3.v.bytes_held(), 0u);
}

// Bounded memory and time: datagrams in flight, bytes held and age (capture time: IPv4 30 s,
// IPv6 60 s as Linux's ipfrag_time / ip6frag_time) — never more than the limits.
TEST(CsumReassembly, MemoryAndAgeBounded) {
  tools::ReassemblyLimits lim;
  lim.max_datagrams = 16;
  lim.max_bytes = 16 * 1024;
  lim.max_fragments = 8;
  const Bytes d = udp(1200, false);
  Cap r(lim);
  std::uint64_t evicted = 0;
  for (std::uint16_t id = 0; id < 200; ++id) {
    auto f = r.feed(frag4(d, 0, 800, true, id));
    for (const auto& x : f.datagrams) evicted += x.fault == FragFault::Evicted;
    EXPECT_LE(r.v.datagrams_held(), lim.max_datagrams);
    EXPECT_LE(r.v.bytes_held(), lim.max_bytes);
  }
  const std::size_t held = r.v.datagrams_held();
  EXPECT_EQ(evicted, 200u - held);
  auto rest = r.v.finish();
  EXPECT_EQ(rest.size(), held);
  EXPECT_EQ(r.v.datagrams_held(), 0u);  // finish clears
  for (const auto& x : rest) EXPECT_EQ(x.fault, FragFault::Incomplete);
  EXPECT_FALSE(rest.empty());

  // fragments per datagram
  Cap rf(lim);
  bool too_many = false;
  for (std::size_t i = 0; i < 12; ++i)
    too_many |= has_fault(rf.feed(frag4(d, i * 16, 8, true, 99)), FragFault::TooManyFragments);
  EXPECT_TRUE(too_many);

  // age
  const std::uint64_t s = 1'000'000'000ull;
  Cap ra;
  ra.feed(frag4(d, 0, 400, true, 1), 0);
  ra.feed(frag6(udp(1200, true), 0, 400, true, 2), 0);
  auto t = ra.feed(eth(0x0806), 31 * s);  // any later frame ages the table
  EXPECT_TRUE(has_fault(t, FragFault::Timeout));
  EXPECT_EQ(ra.v.datagrams_held(), 1u);  // the IPv6 one lives 60 s
  auto t2 = ra.feed(eth(0x0806), 61 * s);
  EXPECT_TRUE(has_fault(t2, FragFault::Timeout));
  EXPECT_EQ(ra.v.datagrams_held(), 0u);
  // a late fragment of a timed-out datagram starts afresh and never completes with stale data
  EXPECT_EQ(reassembled(ra.feed(frag4(d, 400, d.size() - 400, false, 1), 62 * s)), nullptr);
}

// A reassembled datagram is walked like a frame: GRE → Ethernet → IPv4 → TCP inside an outer
// fragmented IPv4 datagram (as zeek_erspan.pcap) — the inner IPv4 and TCP are judged on the
// whole datagram, at their own levels.
TEST(CsumReassembly, TunnelInsideAReassembledDatagram) {
  // inner: IPv4 192.168.0.1 → .2, TCP with 1000 bytes
  const Bytes is = {192, 168, 0, 1}, id = {192, 168, 0, 2};
  Bytes tcp(20 + 1000);
  put16(tcp, 0, 1000);
  put16(tcp, 2, 80);
  tcp[12] = 0x50;
  tcp[13] = 0x18;
  for (std::size_t i = 20; i < tcp.size(); ++i) tcp[i] = std::uint8_t(i);
  Bytes ph = cat({is, id, {0, 6, 0, 0}});
  put16(ph, 10, std::uint16_t(tcp.size()));
  put16(tcp, 16, ref_sum(cat({ph, tcp})));
  Bytes inner = cat({eth(0x0800), ipv4(6, tcp.size(), 0x55, 0x4000, is, id), tcp});
  Bytes gre = {0, 0, 0x65, 0x58};  // GRE, TEB
  Bytes outer = cat({gre, inner});
  Cap r;
  auto a = r.feed(frag4(outer, 0, 600, true, 0x77, 47));
  for (const auto& f : a.fields) {
    if (f.level > 0) {
      EXPECT_TRUE(f.in_fragment) << tools::describe(f);
    }
  }
  auto b = r.feed(frag4(outer, 600, outer.size() - 600, false, 0x77, 47));
  const auto* dg = reassembled(b);
  ASSERT_NE(dg, nullptr);
  ASSERT_EQ(dg->fields.size(), 2u);
  EXPECT_EQ(dg->fields[0].kind, CsumKind::Ipv4Header);
  EXPECT_EQ(dg->fields[0].level, 1);
  EXPECT_EQ(dg->fields[0].verdict, Verdict::Good);
  EXPECT_EQ(dg->fields[1].kind, CsumKind::Tcp);
  EXPECT_EQ(dg->fields[1].level, 1);
  EXPECT_EQ(dg->fields[1].verdict, Verdict::Good);
}

// ERSPAN II → Ethernet → IPv4 → UDP/VXLAN → Ethernet → IPv4 → TCP whose innermost TCP header
// is cut: every layer before it is still judged (not only the first level), and the frame
// names what stopped the walk.
TEST(CsumReassembly, InnerErrorKeepsEveryLayerBeforeIt) {
  const Bytes a1 = {172, 16, 0, 1}, a2 = {172, 16, 0, 2}, b1 = {192, 168, 0, 1},
              b2 = {192, 168, 0, 2};
  Bytes cut_tcp = {0x03, 0xe8, 0x00, 0x50, 0, 0, 0, 1};  // 8 of 20 bytes
  Bytes in_eth = cat({eth(0x0800), ipv4(6, cut_tcp.size(), 1, 0x4000, b1, b2), cut_tcp});
  Bytes vx = cat({{0x08, 0, 0, 0, 0, 0, 42, 0}, in_eth});
  Bytes u(8);
  put16(u, 0, 5000);
  put16(u, 2, 4789);
  put16(u, 4, std::uint16_t(8 + vx.size()));  // checksum 0: none (RFC 768, IPv4)
  Bytes mid = cat({eth(0x0800), ipv4(17, 8 + vx.size(), 2, 0x4000, a1, a2), u, vx});
  Bytes ers = cat({{0x10, 0x00, 0x88, 0xbe, 0, 0, 0, 7}, {0x10, 0, 0, 1, 0, 0, 0, 0}, mid});
  Bytes fr = cat({eth(0x0800), ipv4(47, ers.size(), 3, 0x4000), ers});
  auto rep = tools::verify_frame(fr, wire::LinkType::Ethernet, std::uint32_t(fr.size()));
  EXPECT_FALSE(rep.parse_error);
  EXPECT_TRUE(rep.inner_unparsed);
  ASSERT_TRUE(rep.inner_error);
  EXPECT_EQ(rep.inner_error->layer, wire::HeaderKind::Tcp);
  // L0 ipv4, L1 ipv4, L1 udp (none), L2 ipv4 — all good/none, nothing lost
  ASSERT_EQ(rep.fields.size(), 4u);
  EXPECT_EQ(rep.fields[3].kind, CsumKind::Ipv4Header);
  EXPECT_EQ(rep.fields[3].level, 2);
  EXPECT_EQ(rep.fields[3].verdict, Verdict::Good);
  EXPECT_EQ(rep.fields[2].kind, CsumKind::Udp);
  EXPECT_EQ(rep.fields[2].verdict, Verdict::None);
}

// The stated limit: wire::kMaxTunnelDepth nested encapsulations are followed; past it the
// frame says "tunnel-depth-limit" and the levels before it are all judged.
TEST(CsumReassembly, TunnelDepthLimitIsNamed) {
  const std::size_t depth = wire::kMaxTunnelDepth + 2;  // IPIP × (limit + 1) + ICMP
  Bytes body = {8, 0, 0, 0, 0, 1, 0, 1};               // ICMP echo, checksum below
  put16(body, 2, ref_sum(body));
  Bytes pkt = cat({ipv4(1, body.size(), 1, 0x4000), body});
  for (std::size_t i = 1; i < depth; ++i) pkt = cat({ipv4(4, pkt.size(), std::uint16_t(i), 0x4000), pkt});
  Bytes fr = cat({eth(0x0800), pkt});
  auto rep = tools::verify_frame(fr, wire::LinkType::Ethernet, std::uint32_t(fr.size()));
  EXPECT_EQ(rep.limit, "tunnel-depth-limit");
  EXPECT_EQ(rep.fields.size(), wire::kMaxTunnelDepth + 1);  // levels 0..8, all IPv4 headers
  for (const auto& f : rep.fields) EXPECT_EQ(f.verdict, Verdict::Good);
  tools::Summary s;
  s.add(rep);
  EXPECT_EQ(s.limited, 1u);
  // within the limit: every level, ICMP included, and no limit named
  Bytes ok = cat({ipv4(1, body.size(), 1, 0x4000), body});
  for (std::size_t i = 0; i < wire::kMaxTunnelDepth; ++i)
    ok = cat({ipv4(4, ok.size(), std::uint16_t(i), 0x4000), ok});
  ok = cat({eth(0x0800), ok});
  auto rep2 = tools::verify_frame(ok, wire::LinkType::Ethernet, std::uint32_t(ok.size()));
  EXPECT_TRUE(rep2.limit.empty());
  ASSERT_EQ(rep2.fields.size(), wire::kMaxTunnelDepth + 2);
  EXPECT_EQ(rep2.fields.back().kind, CsumKind::Icmp);
  EXPECT_EQ(rep2.fields.back().level, wire::kMaxTunnelDepth);
  EXPECT_EQ(rep2.fields.back().verdict, Verdict::Good);
}

// A fragment cut by the capture's snaplen cannot be trusted to complete a datagram: it is
// named (truncated) and the datagram is discarded, never verified on missing bytes.
TEST(CsumReassembly, SnaplenCutFragmentIsNotUsed) {
  const Bytes d = udp(1200, false);
  Cap r;
  r.feed(frag4(d, 0, 400, true));
  Bytes cut = frag4(d, 400, 400, true);
  const std::uint32_t orig = std::uint32_t(cut.size());
  cut.resize(cut.size() - 100);
  auto t = r.v.verify(cut, orig, ++r.n, 0);
  EXPECT_TRUE(has_fault(t, FragFault::Truncated));
  auto e = r.feed(frag4(d, 800, d.size() - 800, false));
  EXPECT_EQ(reassembled(e), nullptr);
  EXPECT_TRUE(has_fault(e, FragFault::Discarded));
  EXPECT_EQ(r.v.bytes_held(), 0u);
}

namespace {

/// A TCP segment (20-byte header + n payload bytes) with its RFC 9293 checksum over the IPv4
/// pseudo-header of kSrc4 → kDst4.
Bytes tcp4(std::size_t n) {
  Bytes t(20 + n);
  put16(t, 0, 40000);
  put16(t, 2, 80);
  put32(t, 4, 1);
  t[12] = 0x50;
  t[13] = 0x18;
  put16(t, 14, 1000);
  for (std::size_t i = 0; i < n; ++i) t[20 + i] = std::uint8_t(i * 13 + 5);
  Bytes ph = cat({kSrc4, kDst4, {0, 6, 0, 0}});
  put16(ph, 10, std::uint16_t(t.size()));
  put16(t, 16, ref_sum(cat({ph, t})));
  return t;
}

/// IPv6 fragment frame whose fragment header names `nh` (frag6 always names UDP).
Bytes frag6_nh(const Bytes& dgram, std::size_t off, std::size_t len, bool mf, std::uint8_t nh) {
  Bytes f = frag6(dgram, off, len, mf);
  f[14 + 40] = nh;
  return f;
}

/// Ethernet / IPv4 outer (src → dst) / UDP (sport → dport, checksum 0) / VXLAN (vni) /
/// inner Ethernet frame `inner`.
Bytes vxlan4(const Bytes& inner, std::uint32_t vni, const Bytes& src, const Bytes& dst,
             std::uint16_t sport = 50000, std::uint16_t dport = 4789) {
  Bytes vx = {0x08, 0, 0, 0, 0, 0, 0, 0};
  vx[4] = std::uint8_t(vni >> 16);
  vx[5] = std::uint8_t(vni >> 8);
  vx[6] = std::uint8_t(vni);
  Bytes u(8);
  put16(u, 0, sport);
  put16(u, 2, dport);
  put16(u, 4, std::uint16_t(8 + vx.size() + inner.size()));
  Bytes body = cat({u, vx, inner});
  return cat({eth(0x0800), ipv4(17, body.size(), 0x99, 0x4000, src, dst), body});
}

}  // namespace

// RFC 791 lets a fragment end on any 8-octet boundary, inside the L4 header too; Linux
// reassembles such a datagram. The first fragment's TCP header continues in the next one:
// the frame is not malformed (its IPv4 header is judged, the walk stops with
// HeaderInNextFragment) and the datagram's TCP checksum is verified whole.
TEST(CsumReassemblyFirstFragment, Rfc791_L4HeaderContinuingInTheNextFragmentIsReassembled) {
  const Bytes t = tcp4(600);
  for (std::size_t first : {std::size_t(8), std::size_t(16)}) {
    SCOPED_TRACE(first);
    Cap r;
    auto a = r.feed(frag4(t, 0, first, true, 0x21, 6));
    EXPECT_FALSE(a.parse_error);
    EXPECT_FALSE(a.inner_unparsed);
    ASSERT_EQ(a.fields.size(), 1u);
    EXPECT_EQ(a.fields[0].kind, CsumKind::Ipv4Header);
    EXPECT_EQ(a.fields[0].verdict, Verdict::Good);
    auto l = wire::parse_frame(frag4(t, 0, first, true, 0x21, 6), wire::LinkType::Ethernet);
    ASSERT_TRUE(l.ok()) << l.error().to_string();
    EXPECT_EQ(l->stop, wire::StopReason::HeaderInNextFragment);
    EXPECT_EQ(l->stop_value, std::uint32_t(wire::HeaderKind::Tcp));
    auto b = r.feed(frag4(t, first, t.size() - first, false, 0x21, 6));
    const auto* dg = reassembled(b);
    ASSERT_NE(dg, nullptr);
    EXPECT_EQ(dg->frames, (std::vector<std::uint64_t>{1, 2}));
    ASSERT_EQ(dg->fields.size(), 1u);
    EXPECT_EQ(dg->fields[0].kind, CsumKind::Tcp);
    EXPECT_EQ(dg->fields[0].verdict, Verdict::Good);
  }
}

// RFC 7112 §5: an IPv6 first fragment must hold the whole header chain through the
// upper-layer header (Linux counts TCP's fixed 20 bytes). One that does not is ignored
// (`incomplete-header-chain`; Linux answers ICMPv6 Parameter Problem code 3), so the datagram
// never completes. A first fragment holding the whole UDP header (8 bytes) is fine.
TEST(CsumReassemblyFirstFragment, Rfc7112_Ipv6FirstFragmentWithoutTheHeaderChainIsIgnored) {
  Bytes t = tcp4(600);  // the checksum is not judged here: the datagram must not complete
  Cap r;
  auto a = r.feed(frag6_nh(t, 0, 16, true, 6));
  EXPECT_FALSE(a.parse_error);
  EXPECT_TRUE(has_fault(a, FragFault::IncompleteHeaderChain));
  EXPECT_NE(tools::describe(a.datagrams[0]).find("incomplete-header-chain: fragment ignored"),
            std::string::npos);
  auto b = r.feed(frag6_nh(t, 16, t.size() - 16, false, 6));
  EXPECT_EQ(reassembled(b), nullptr);
  auto end = r.v.finish();
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(end[0].fault, FragFault::Incomplete);
  EXPECT_EQ(end[0].frames, (std::vector<std::uint64_t>{2}));

  const Bytes u = udp(600, true);
  Cap r2;
  auto c = r2.feed(frag6(u, 0, 8, true));
  EXPECT_TRUE(c.datagrams.empty());
  auto d = r2.feed(frag6(u, 8, u.size() - 8, false));
  const auto* dg = reassembled(d);
  ASSERT_NE(dg, nullptr);
  ASSERT_EQ(dg->fields.size(), 1u);
  EXPECT_EQ(dg->fields[0].verdict, Verdict::Good);
}

// Fragments inside two different tunnels (another VNI, or other outer addresses) with equal
// inner addresses, protocol and identification are two datagrams: both reassemble, neither
// is an overlap of the other.
TEST(CsumReassemblyTunnelKey, FragmentsOfTwoTunnelsAreTwoDatagrams) {
  const Bytes o1 = {172, 16, 0, 1}, o2 = {172, 16, 0, 2}, o3 = {172, 16, 0, 3};
  const Bytes da = udp(1000, false, 0), db = udp(1000, false, 9);  // different bytes
  struct Pair {
    const char* what;
    std::uint32_t vni_b;
    Bytes src_b;
  } pairs[] = {{"other vni", 20, o1}, {"other outer source", 10, o3}};
  for (const auto& p : pairs) {
    SCOPED_TRACE(p.what);
    Cap r;
    auto in = [&](const Bytes& d, std::size_t off, std::size_t len, bool mf) {
      return frag4(d, off, len, mf, 0x4242);
    };
    auto a1 = r.feed(vxlan4(in(da, 0, 504, true), 10, o1, o2));
    auto b1 = r.feed(vxlan4(in(db, 0, 504, true), p.vni_b, p.src_b, o2));
    EXPECT_FALSE(has_fault(b1, FragFault::Overlap));
    EXPECT_EQ(r.v.datagrams_held(), 2u);
    auto a2 = r.feed(vxlan4(in(da, 504, da.size() - 504, false), 10, o1, o2));
    auto b2 = r.feed(vxlan4(in(db, 504, db.size() - 504, false), p.vni_b, p.src_b, o2));
    const auto* ra = reassembled(a2);
    const auto* rb = reassembled(b2);
    ASSERT_NE(ra, nullptr);
    ASSERT_NE(rb, nullptr);
    EXPECT_EQ(ra->frames, (std::vector<std::uint64_t>{1, 3}));
    EXPECT_EQ(rb->frames, (std::vector<std::uint64_t>{2, 4}));
    EXPECT_EQ(ra->level, 1);
    ASSERT_EQ(ra->fields.size(), 1u);
    EXPECT_EQ(ra->fields[0].verdict, Verdict::Good);
    ASSERT_EQ(rb->fields.size(), 1u);
    EXPECT_EQ(rb->fields[0].verdict, Verdict::Good);
  }
  // the same tunnel: one datagram, and conflicting bytes are an overlap (RFC 5722)
  Cap r;
  r.feed(vxlan4(frag4(da, 0, 504, true, 0x4242), 10, o1, o2));
  auto c = r.feed(vxlan4(frag4(db, 0, 504, true, 0x4242), 10, o1, o2));
  EXPECT_TRUE(has_fault(c, FragFault::Overlap));
}

// The capture tools recognise a UDP tunnel on either port, the lower first, as tshark does
// (public captures carry VXLAN from 4789 to 4790); the kernel's rule, the destination port
// only, stays in wire::parse_frame's defaults for the engines.
TEST(CsumTunnelPorts, VxlanRecognisedOnTheSourcePortAsTsharkDoes) {
  const Bytes o1 = {172, 16, 0, 1}, o2 = {172, 16, 0, 2};
  const Bytes inner = cat({eth(0x0800), ipv4(17, udp(100, false).size(), 1, 0x4000),
                           udp(100, false)});
  const Bytes f = vxlan4(inner, 5001, o1, o2, 4789, 4790);
  auto rep = tools::verify_frame(f, wire::LinkType::Ethernet, std::uint32_t(f.size()));
  ASSERT_EQ(rep.fields.size(), 4u);  // outer ipv4, outer udp (none), inner ipv4, inner udp
  EXPECT_EQ(rep.fields[3].level, 1);
  EXPECT_EQ(rep.fields[3].kind, CsumKind::Udp);
  EXPECT_EQ(rep.fields[3].verdict, Verdict::Good);
  auto kernel = wire::parse_frame(f, wire::LinkType::Ethernet);
  ASSERT_TRUE(kernel.ok());
  EXPECT_FALSE(kernel->encapsulation);
  // --vxlan-port 4790: the destination port matches first for the tool too
  tools::CheckOptions o;
  o.parse.vxlan_port = 4790;
  auto rep2 = tools::verify_frame(f, wire::LinkType::Ethernet, std::uint32_t(f.size()), o);
  ASSERT_EQ(rep2.fields.size(), 4u);
  // the tool with 4789 disabled (0) and no other tunnel port matching: no tunnel
  o.parse.vxlan_port = 0;
  auto rep3 = tools::verify_frame(f, wire::LinkType::Ethernet, std::uint32_t(f.size()), o);
  EXPECT_EQ(rep3.fields.size(), 2u);
  // Geneve on its source port
  wire::ParseOptions po;
  po.tunnel_src_port = true;
  Bytes g = f;
  put16(g, 14 + 20, 6081);  // UDP source port
  put16(g, 14 + 20 + 2, 40000);
  g[14 + 28] = 0;           // Geneve: ver 0, opt len 0
  g[14 + 28 + 1] = 0;
  put16(g, 14 + 28 + 2, 0x6558);
  auto gl = wire::parse_frame(g, wire::LinkType::Ethernet, po);
  ASSERT_TRUE(gl.ok()) << gl.error().to_string();
  EXPECT_EQ(gl->tunnel, wire::TunnelKind::Geneve);
}

// on plain TCPv4 super-packets, checked against independent expectations
// (RFC 791 / RFC 1071 / RFC 793 arithmetic written out here, not ofld's csum functions), on
// both the fast path and the general path: IPv4 headers with options (ihl > 5), header sums
// steered to the fold's edge values (the shared part of the header summing to 0xffff, 0xfffe,
// 1, 0x8000 with each segment's tot_len), IDs starting near and wrapping at 0xffff, mss 1
// (65,487 of the 65,536 ID values in one packet), random TCP flags (CWR / FIN / PSH on the
// right segment).
//
// Per segment i of n: the Ethernet header and every IPv4 byte other than tot_len / ID / check
// as in the super-packet; tot_len = the segment's IP length; ID = id0 + i mod 2^16 (fixed-ID:
// id0); the header checksum valid (RFC 1071: the header's 16-bit ones'-complement sum is
// 0xffff, computed here word by word) - the header is never all zero, so that is the one value
// ip_send_check writes; TCP seq = seq0 + i * mss, CWR only on i == 0, FIN and PSH only on
// i == n - 1, other TCP header bytes as in the super-packet; the payload slice i * mss ...;
// the TCP check field a PARTIAL seed (the folded pseudo-header sum for this segment's L4
// length) or, when the checksum was completed, a valid checksum.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "gso_test_util.hpp"
#include "packet_compare.hpp"
#include "ref_ones_sum.hpp"

namespace {

using namespace gso_test;
namespace core = ofld::core;
namespace gso = ofld::gso;
namespace nf = ofld::core::netif_f;
namespace fb = ofld::fb;
namespace wire = ofld::wire;

constexpr std::size_t kEth = 14;

// RFC 1071: 16-bit ones'-complement sum of big-endian words (odd tail byte high), folded.
std::uint32_t ones_sum(const std::uint8_t* p, std::size_t len, std::uint32_t acc = 0) {
  return ofld::testutil::ref_ones_sum(p, len, acc);
}
std::uint16_t be16(const std::uint8_t* p) { return std::uint16_t((p[0] << 8) | p[1]); }
std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | p[3];
}
// Folded TCP pseudo-header sum (RFC 793): saddr, daddr, zero+proto 6, TCP length.
std::uint32_t pseudo_sum(const std::uint8_t* ip, std::uint32_t l4len) {
  std::uint32_t s = ones_sum(ip + 12, 8);
  s += 6 + (l4len >> 16) + (l4len & 0xffff);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return s;
}

struct Spec {
  std::uint8_t tos = 0, ttl = 64, flags = 0x10;
  std::uint16_t id = 0, frag_off = wire::ipv4::kDF;
  std::uint32_t saddr = fb::ip4(10, 0, 0, 1), daddr = fb::ip4(10, 0, 0, 2), seq = 0;
  Bytes ip_opts, tcp_opts;
  std::size_t payload = 0;
  std::uint16_t mss = 0;
  std::uint8_t fill = 1;
};

Bytes build(const Spec& s) {
  fb::Frame f;
  f.eth(fb::mac(2), fb::mac(1));
  wire::Ipv4Repr r;
  r.tos = s.tos;
  r.id = s.id;
  r.frag_off = s.frag_off;
  r.ttl = s.ttl;
  r.saddr = s.saddr;
  r.daddr = s.daddr;
  f.ipv4(r, fb::fill::kAll, s.ip_opts);
  wire::TcpRepr t;
  t.source = 40000;
  t.dest = 5201;
  t.seq = s.seq;
  t.ack_seq = 0x55667788;
  t.flags = s.flags;
  t.window = 502;
  f.tcp(t, fb::L4Csum::Full, 0, s.tcp_opts);
  f.payload(fb::pattern(s.payload, s.fill));
  return f.build();
}

// Steer daddr's low word so that the header words every segment shares (all but tot_len, ID
// and check), plus a full segment's tot_len, fold to `target` (1..0xffff).
void steer(Spec& s, std::uint16_t target) {
  s.daddr &= 0xffff0000u;
  const Bytes fr = build(s);
  const std::uint8_t* ip = fr.data() + kEth;
  const std::size_t ihl = std::size_t(ip[0] & 15) * 4, thl = std::size_t(ip[ihl + 12] >> 4) * 4;
  Bytes h(ip, ip + ihl);
  h[2] = h[3] = h[4] = h[5] = h[10] = h[11] = 0;
  const std::uint32_t tot_full = std::uint32_t(ihl + thl + s.mss);
  std::uint32_t cur = ones_sum(h.data(), ihl, tot_full);  // 1..0xffff
  // want cur + d == target (mod 0xffff): d = target - cur
  std::uint32_t d = target + (0xffffu - cur);
  while (d >> 16) d = (d & 0xffff) + (d >> 16);
  s.daddr |= d;
}

void check_result(const gso::GsoResult& r, const Bytes& in, const Spec& s, bool fixedid,
                  const std::string& where) {
  ASSERT_TRUE(r.ok()) << where;
  ASSERT_FALSE(r.hw) << where;
  const std::uint8_t* ip0 = in.data() + kEth;
  const std::size_t ihl = std::size_t(ip0[0] & 15) * 4;
  const std::uint8_t* th0 = ip0 + ihl;
  const std::size_t thl = std::size_t(th0[12] >> 4) * 4;
  const std::size_t hdr = kEth + ihl + thl;
  const std::size_t n = (s.payload + s.mss - 1) / s.mss;
  ASSERT_EQ(r.segs.size(), n) << where;
  for (std::size_t i = 0; i < n; ++i) {
    const Bytes b = r.segs[i].to_bytes();
    const std::string w = where + " seg " + std::to_string(i);
    const std::size_t pay = std::min<std::size_t>(s.mss, s.payload - i * s.mss);
    ASSERT_EQ(b.size(), hdr + pay) << w;
    const std::uint8_t* ip = b.data() + kEth;
    const std::uint8_t* th = ip + ihl;
    ASSERT_TRUE(std::equal(b.begin(), b.begin() + kEth, in.begin())) << w;
    // IPv4
    for (std::size_t k = 0; k < ihl; ++k)
      if (k != 2 && k != 3 && k != 4 && k != 5 && k != 10 && k != 11) {
        ASSERT_EQ(ip[k], ip0[k]) << w << " ip byte " << k;
      }
    ASSERT_EQ(be16(ip + 2), ihl + thl + pay) << w;
    const std::uint16_t want_id = fixedid ? be16(ip0 + 4) : std::uint16_t(be16(ip0 + 4) + i);
    ASSERT_EQ(be16(ip + 4), want_id) << w;
    ASSERT_EQ(ones_sum(ip, ihl), 0xffffu) << w << " ip check 0x" << std::hex << be16(ip + 10);
    // TCP
    ASSERT_EQ(be32(th + 4), std::uint32_t(be32(th0 + 4) + i * s.mss)) << w;
    std::uint8_t fl = th0[13];
    if (i > 0) fl &= std::uint8_t(~0x80);
    if (i + 1 < n) fl &= std::uint8_t(~0x09);
    ASSERT_EQ(th[13], fl) << w;
    for (std::size_t k = 0; k < thl; ++k)
      if ((k < 4 || k > 7) && k != 13 && k != 16 && k != 17) {
        ASSERT_EQ(th[k], th0[k]) << w << " tcp byte " << k;
      }
    ASSERT_TRUE(std::equal(b.begin() + std::ptrdiff_t(hdr), b.end(),
                           in.begin() + std::ptrdiff_t(hdr + i * s.mss)))
        << w;
    const std::uint32_t l4len = std::uint32_t(thl + pay);
    if (std::holds_alternative<core::CsumPartial>(r.segs[i].csum)) {
      ASSERT_EQ(be16(th + 16), pseudo_sum(ip, l4len)) << w << " tcp seed";
    } else {
      ASSERT_EQ(ones_sum(th, l4len, pseudo_sum(ip, l4len)), 0xffffu) << w << " tcp check";
    }
  }
}

void run_case(const Spec& s, core::Features f, bool fixedid, const std::string& where) {
  const Bytes in = build(s);
  core::Packet p = prepare(in, s.mss);
  ASSERT_TRUE(p.is_gso()) << where;
  if (fixedid) p.gso.type |= core::skb_gso::TCP_FIXEDID;
  const core::Device dev = device(f);
  gso::GsoResult rf = gso::gso_segment(p.clone(), f, dev, nullptr, gso::GsoOptions{.fast_path = true});
  gso::GsoResult rg = gso::gso_segment(p.clone(), f, dev, nullptr, gso::GsoOptions{.fast_path = false});
  check_result(rf, in, s, fixedid, where + " fast");
  check_result(rg, in, s, fixedid, where + " general");
  ASSERT_EQ(rf.segs.size(), rg.segs.size()) << where;
  for (std::size_t i = 0; i < rf.segs.size(); ++i) {
    ASSERT_EQ(rf.segs[i].to_bytes(), rg.segs[i].to_bytes()) << where << " seg " << i;
    ofld::testutil::expect_same_meta(rf.segs[i].meta(), rg.segs[i].meta(),
                                     where + " seg " + std::to_string(i));
  }
}

const core::Features kSets[] = {nf::SG | nf::HW_CSUM, nf::SG | nf::IP_CSUM, nf::SG, core::Features{},
                                nf::HW_CSUM};

TEST(GsoIpv4RewriteRules, X24_X25_X21_OptionsEdgeSumsWrappingIds) {
  std::mt19937 rng(0x1d5u);
  auto pick = [&](unsigned lo, unsigned hi) { return std::uniform_int_distribution<unsigned>(lo, hi)(rng); };
  const std::uint16_t targets[] = {0xffff, 0xfffe, 0x0001, 0x0002, 0x8000, 0x7fff, 0};
  for (int c = 0; c < 600; ++c) {
    Spec s;
    s.tos = std::uint8_t(rng());
    s.ttl = std::uint8_t(pick(1, 255));
    s.frag_off = pick(0, 1) ? wire::ipv4::kDF : 0;
    s.saddr = std::uint32_t(rng());
    s.daddr = std::uint32_t(rng());
    s.flags = std::uint8_t(0x10 | (rng() & 0xe9));  // ACK + any of CWR ECE URG PSH FIN
    s.seq = std::uint32_t(rng());
    const unsigned idk = pick(0, 3);
    s.id = idk == 0 ? std::uint16_t(0xffff - pick(0, 5)) : idk == 1 ? std::uint16_t(pick(0, 2)) : std::uint16_t(rng());
    // IPv4 options: NOPs (1) and EOL (0) words, or a router alert (RFC 2113) with any value
    const std::size_t ow = pick(0, 10);
    for (std::size_t k = 0; k < ow; ++k) {
      const unsigned kind = pick(0, 2);
      if (kind == 0) s.ip_opts.insert(s.ip_opts.end(), {1, 1, 1, 1});
      else if (kind == 1) s.ip_opts.insert(s.ip_opts.end(), {0x94, 4, std::uint8_t(rng()), std::uint8_t(rng())});
      else s.ip_opts.insert(s.ip_opts.end(), {1, 1, 1, 0});
    }
    s.tcp_opts.assign(std::size_t(pick(0, 10)) * 4, 1);
    s.mss = std::uint16_t(pick(0, 3) == 0 ? pick(1, 64) : pick(64, 9000));
    const std::size_t maxpay = 65535 - 20 - s.ip_opts.size() - 20 - s.tcp_opts.size();
    s.payload = std::min<std::size_t>(maxpay, std::size_t(s.mss) * pick(2, 70) - pick(0, s.mss - 1));
    if (s.payload <= s.mss) s.payload = std::size_t(s.mss) + 1;
    s.fill = std::uint8_t(rng());
    const std::uint16_t t = targets[pick(0, std::size(targets) - 1)];
    if (t) steer(s, t);
    const bool fixedid = pick(0, 5) == 0;
    const core::Features f = kSets[pick(0, std::size(kSets) - 1)];
    run_case(s, f, fixedid,
             "case " + std::to_string(c) + " mss " + std::to_string(s.mss) + " payload " +
                 std::to_string(s.payload) + " ihl " + std::to_string(5 + s.ip_opts.size() / 4) +
                 " id " + std::to_string(s.id) + " target " + std::to_string(t) + " features 0x" +
                 std::to_string(f.bits));
    if (::testing::Test::HasFailure()) return;
  }
}

// mss 1, the largest IPv4 super-packet: ~65k segments, so nearly every ID value (wrapping
// through 0xffff) is written with the shared sum at each edge value.
TEST(GsoIpv4RewriteRules, X25_EveryIdAtEdgeSums) {
  for (std::uint16_t t : {0xffff, 0xfffe, 0x0001, 0x8000}) {
    for (bool opts : {false, true}) {
      Spec s;
      s.mss = 1;
      s.id = 0x1234;
      s.flags = 0x10 | 0x80 | 0x08 | 0x01;
      if (opts) s.ip_opts = {0x94, 4, 0xff, 0xff, 1, 1, 1, 1};
      s.payload = 65535 - 20 - s.ip_opts.size() - 20;
      steer(s, t);
      run_case(s, nf::SG | nf::HW_CSUM, false, "every id target " + std::to_string(t));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace

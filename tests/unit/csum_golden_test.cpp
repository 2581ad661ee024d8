// Checksum golden vectors: pseudo-headers (C-10, C-11, C-12), zero rules (C-14),
// incremental update (C-15, RFC 1624), and TCP/UDP checksums taken from public captures.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ofld/core/csum.hpp"

using namespace ofld::csum;

namespace {

/// Bytes of frame `number` (1-based, as tshark numbers them) of a capture in tests/data/pcaps.
std::vector<std::uint8_t> read_frame(const std::string& file, int number) {
  char err[PCAP_ERRBUF_SIZE];
  std::string path = std::string(OFLD_PCAP_DIR) + "/" + file;
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  if (!p) return {};
  std::vector<std::uint8_t> out;
  pcap_pkthdr* h;
  const u_char* d;
  for (int i = 1; pcap_next_ex(p, &h, &d) == 1; ++i) {
    if (i == number) {
      out.assign(d, d + h->caplen);
      break;
    }
  }
  pcap_close(p);
  return out;
}

std::uint16_t be16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

}  // namespace

// ---- C-10 / C-11 pseudo-headers ----------------------------------------------------------

// 192.168.0.1 → 192.168.0.199, UDP (17), L4 length 0x5f:
// c0a8 + 0001 + c0a8 + 00c7 + 0011 + 005f = 0x18288 → 0x8288 + 1 = 0x8289.
TEST(CsumPseudo, C10_Ipv4PseudoHeaderGolden) {
  const std::uint8_t s[4] = {192, 168, 0, 1}, d[4] = {192, 168, 0, 199};
  EXPECT_EQ(csum_fold16(csum_tcpudp_nofold(s, d, 0x5f, 17)), 0x8289);
  EXPECT_EQ(csum_tcpudp_magic(s, d, 0x5f, 17, 0), std::uint16_t(~0x8289));
  // seed is added: 0x8289 + 0x1000 = 0x9289.
  EXPECT_EQ(csum_fold16(csum_tcpudp_nofold(s, d, 0x5f, 17, 0x1000)), 0x9289);
}

// 2001:db8::1 → 2001:db8::2, UDP, length 0x10:
// 2001+0db8+0001 + 2001+0db8+0002 + 0000+0010 + 0011 = 0x5b96.
// Length 0x12345 (32-bit field, RFC 8200 §8.1): 0x5b75 + 0001 + 2345 + 0011 = 0x7ecc.
TEST(CsumPseudo, C11_Ipv6PseudoHeaderGolden) {
  std::uint8_t s[16] = {0x20, 0x01, 0x0d, 0xb8}, d[16] = {0x20, 0x01, 0x0d, 0xb8};
  s[15] = 1;
  d[15] = 2;
  EXPECT_EQ(csum_fold16(csum_ipv6_nofold(s, d, 0x10, 17)), 0x5b96);
  EXPECT_EQ(csum_fold16(csum_ipv6_nofold(s, d, 0x12345, 17)), 0x7ecc);
  EXPECT_EQ(csum_ipv6_magic(s, d, 0x10, 17, 0), std::uint16_t(~0x5b96));
}

// C-12: the CHECKSUM_PARTIAL seed is the folded, non-complemented pseudo sum, i.e. the
// complement of the magic value computed over no payload.
TEST(CsumPseudo, C12_PartialSeedIsComplementOfMagic) {
  const std::uint8_t s[4] = {192, 168, 0, 1}, d[4] = {192, 168, 0, 199};
  EXPECT_EQ(std::uint16_t(~csum_tcpudp_magic(s, d, 0x5f, 17, 0)), 0x8289);
}

// zeek_ftp_bigtransfer.pcap frame 11: Ethernet / IPv4 192.168.56.101 → 192.168.56.1 /
// TCP 21 → 59762, 32-byte header + 19 bytes payload "215 UNIX Type: L8\r\n" (odd length 51),
// checksum field 0xbe45 (tshark: "Good").
TEST(CsumCapture, C10_TcpIpv4FromCapture) {
  auto f = read_frame("zeek_ftp_bigtransfer.pcap", 11);
  ASSERT_EQ(f.size(), 85u);
  ASSERT_EQ(be16(&f[12]), 0x0800);
  const std::uint8_t* ip = &f[14];
  ASSERT_EQ(ip[0], 0x45);
  ASSERT_EQ(ip[9], 6);
  std::size_t l4len = be16(ip + 2) - 20;
  ASSERT_EQ(l4len, 51u);
  std::vector<std::uint8_t> seg(ip + 20, ip + 20 + l4len);
  std::uint16_t stored = be16(&seg[16]);
  EXPECT_EQ(stored, 0xbe45);
  // Receiver check: the sum over pseudo header + segment including the field is 0xffff.
  EXPECT_EQ(csum_fold16(csum_tcpudp_nofold(ip + 12, ip + 16, std::uint32_t(l4len), 6,
                                           csum_partial(seg.data(), seg.size()))),
            0xffff);
  seg[16] = seg[17] = 0;
  for (Kernel k : {Kernel::Reference, Kernel::Scalar64, Kernel::SSE, Kernel::AVX2,
                   Kernel::AVX512}) {
    if (!kernel_supported(k)) continue;
    wsum body = csum_partial_with(k, seg.data(), seg.size());
    EXPECT_EQ(csum_tcpudp_magic(ip + 12, ip + 16, std::uint32_t(l4len), 6, body), stored)
        << kernel_name(k);
  }
}

// pcapplusplus_ipv6_options.pcap frame 6: Ethernet / IPv6 2a01:e35:8bd9:8bb0:a0a7:ea9c:74e8:d397
// → 2001:4b98:dc0:41:216:3eff:fece:1902 / Destination Options (8 bytes) / UDP 42513 → 42,
// length 18, payload "abcdefghij", checksum field 0x6889 (tshark: "Good").
TEST(CsumCapture, C11_UdpIpv6FromCapture) {
  auto f = read_frame("pcapplusplus_ipv6_options.pcap", 6);
  ASSERT_EQ(f.size(), 80u);
  ASSERT_EQ(be16(&f[12]), 0x86dd);
  const std::uint8_t* ip6 = &f[14];
  ASSERT_EQ(ip6[6], 60);       // next header: Destination Options
  ASSERT_EQ(ip6[40], 17);      // its next header: UDP
  ASSERT_EQ(ip6[41], 0);       // hdr ext len 0 → 8 bytes
  const std::uint8_t* udp = ip6 + 48;
  std::size_t l4len = be16(udp + 4);
  ASSERT_EQ(l4len, 18u);
  std::vector<std::uint8_t> seg(udp, udp + l4len);
  std::uint16_t stored = be16(&seg[6]);
  EXPECT_EQ(stored, 0x6889);
  EXPECT_EQ(csum_fold16(csum_ipv6_nofold(ip6 + 8, ip6 + 24, std::uint32_t(l4len), 17,
                                         csum_partial(seg.data(), seg.size()))),
            0xffff);
  seg[6] = seg[7] = 0;
  EXPECT_EQ(udp_csum_mangle(csum_ipv6_magic(ip6 + 8, ip6 + 24, std::uint32_t(l4len), 17,
                                            csum_partial(seg.data(), seg.size()))),
            stored);
}

// ---- C-14 zero results -------------------------------------------------------------------

// UDP/IPv4 10.0.0.1:1000 → 10.0.0.2:2000, length 10, payload e0 1f. Hand sum:
// pseudo 0a00+0001+0a00+0002+0011+000a = 0x141e; UDP 03e8+07d0+000a+0000 → 0x1fe0;
// payload 0xe01f → 0x1fe0 + 0xe01f = 0xffff, so the computed checksum ~0xffff = 0 and
// software must write 0xffff (CSUM_MANGLED_0), which still verifies (0xffff+0xffff → 0xffff).
TEST(CsumZero, C14_UdpZeroBecomesFfff) {
  const std::uint8_t s[4] = {10, 0, 0, 1}, d[4] = {10, 0, 0, 2};
  std::uint8_t udp[10] = {0x03, 0xe8, 0x07, 0xd0, 0x00, 0x0a, 0x00, 0x00, 0xe0, 0x1f};
  std::uint16_t c = csum_tcpudp_magic(s, d, 10, 17, csum_partial(udp, sizeof udp));
  EXPECT_EQ(c, 0x0000);
  std::uint16_t field = udp_csum_mangle(c);
  EXPECT_EQ(field, 0xffff);
  udp[6] = std::uint8_t(field >> 8);
  udp[7] = std::uint8_t(field);
  EXPECT_EQ(csum_fold16(csum_tcpudp_nofold(s, d, 10, 17, csum_partial(udp, sizeof udp))), 0xffff);
  EXPECT_EQ(udp_csum_mangle(0x1234), 0x1234);
}

// TCP/IPv4 10.0.0.1:1000 → 10.0.0.2:2000, 20-byte header, flags SYN (5002), window 0,
// urgent pointer 0x9028. Hand sum: pseudo 0a00+0001+0a00+0002+0006+0014 = 0x141d;
// + 03e8 + 07d0 + 5002 = 0x6fd7; + 9028 = 0xffff → checksum 0, and TCP keeps 0.
TEST(CsumZero, C14_TcpKeepsZero) {
  const std::uint8_t s[4] = {10, 0, 0, 1}, d[4] = {10, 0, 0, 2};
  std::uint8_t tcp[20] = {0x03, 0xe8, 0x07, 0xd0, 0, 0, 0, 0, 0, 0, 0, 0,
                          0x50, 0x02, 0x00, 0x00, 0x00, 0x00, 0x90, 0x28};
  std::uint16_t c = csum_tcpudp_magic(s, d, 20, 6, csum_partial(tcp, sizeof tcp));
  EXPECT_EQ(c, 0x0000);  // written as is; receiver sum with field 0 is 0xffff:
  EXPECT_EQ(csum_fold16(csum_tcpudp_nofold(s, d, 20, 6, csum_partial(tcp, sizeof tcp))), 0xffff);
}

// ---- C-15 incremental update (RFC 1624) ------------------------------------------------

// RFC 1624 §4: HC = 0xdd2f, m = 0x5555 → m' = 0x3285. Eqn. 3: ~(~HC + ~m + m') =
// ~(0x22d0 + 0xaaaa + 0x3285) = ~0xffff = 0x0000 (eqn. 2 would give the -0 value 0xffff).
TEST(CsumIncremental, C15_Rfc1624Example) {
  EXPECT_EQ(csum_replace2(0xdd2f, 0x5555, 0x3285), 0x0000);
}

// The 0xb861 header (C13_Ipv4HeaderGolden) sums to 0x479e without its check. Changing the
// TTL/proto word 0x4011 → 0x4011 + 0xb861 = 0xf872 makes the sum 0xffff: the new checksum
// must be 0x0000, both recomputed and incrementally.
TEST(CsumIncremental, C15_ResultWouldBeMinusZero) {
  std::uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0xf8, 0x72,
                        0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(ip_compute_csum(h, sizeof h), 0x0000);
  EXPECT_EQ(csum_replace2(0xb861, 0x4011, 0xf872), 0x0000);
}

TEST(CsumIncremental, C15_Replace2And4MatchRecomputeOnRandomHeaders) {
  std::mt19937 rng(1624);
  for (int iter = 0; iter < 20000; ++iter) {
    std::uint8_t h[20];
    for (auto& b : h) b = std::uint8_t(rng());
    h[10] = h[11] = 0;
    std::uint16_t check = csum_fold(csum_partial_with(Kernel::Reference, h, 20));
    if (iter % 2 == 0) {
      int w = int(rng() % 10);
      if (w == 5) w = 4;  // not the check field itself
      std::uint16_t oldv = be16(&h[2 * w]), newv = std::uint16_t(rng());
      h[2 * w] = std::uint8_t(newv >> 8);
      h[2 * w + 1] = std::uint8_t(newv);
      ASSERT_EQ(csum_replace2(check, oldv, newv),
                csum_fold(csum_partial_with(Kernel::Reference, h, 20)));
    } else {
      int a = (rng() & 1) ? 12 : 16;  // saddr or daddr
      std::uint32_t oldv = std::uint32_t(be16(&h[a])) << 16 | be16(&h[a + 2]), newv = rng();
      for (int i = 0; i < 4; ++i) h[a + i] = std::uint8_t(newv >> (24 - 8 * i));
      ASSERT_EQ(csum_replace4(check, oldv, newv),
                csum_fold(csum_partial_with(Kernel::Reference, h, 20)));
    }
  }
}

// C-15 on a CHECKSUM_PARTIAL seed: 0x8289 (C10 golden) with saddr 192.168.0.1 → .2:
// the pseudo sum grows by one → 0x828a.
TEST(CsumIncremental, C15_SeedReplace4OnPartialSeed) {
  EXPECT_EQ(csum_seed_replace4(0x8289, 0xc0a80001u, 0xc0a80002u), 0x828a);
  const std::uint8_t s2[4] = {192, 168, 0, 2}, d[4] = {192, 168, 0, 199};
  EXPECT_EQ(csum_fold16(csum_tcpudp_nofold(s2, d, 0x5f, 17)), 0x828a);
}

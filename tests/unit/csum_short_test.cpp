// The inline short sums of ofld/core/csum_short.hpp (used by the GRO fast path) against their
// out-of-line twins in ofld/core/csum.hpp, which csum_test checks against an RFC 1071 reference:
// the header promises the very same wsum, so the two can be mixed.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/csum_short.hpp"

namespace {

namespace cs = ofld::csum;

TEST(CsumShort, PartialShortEqualsCsumPartialForEveryLengthAndOffset) {
  std::mt19937 rng(0x5407);
  std::vector<std::uint8_t> buf(256);
  for (int round = 0; round < 200; ++round) {
    for (auto& b : buf) b = std::uint8_t(rng() % 4 == 0 ? 0xFF : rng());  // carries too
    const cs::wsum seed = round % 3 == 0 ? 0 : cs::wsum(rng());
    for (std::size_t len = 0; len <= 128; ++len)
      for (std::size_t off : {0u, 1u, 3u, 7u}) {
        ASSERT_EQ(cs::csum_partial_short(buf.data() + off, len, seed),
                  cs::csum_partial(buf.data() + off, len, seed))
            << "len " << len << " off " << off;
      }
  }
}

TEST(CsumShort, Ipv4HeaderCheckAgreesWithIpComputeCsum) {
  std::mt19937 rng(0x5408);
  std::uint8_t h[20];
  for (int i = 0; i < 20000; ++i) {
    for (auto& b : h) b = std::uint8_t(rng());
    if (i % 2) {  // a valid header half of the time
      h[10] = h[11] = 0;
      const std::uint16_t c = cs::ip_compute_csum(h, 20);
      h[10] = std::uint8_t(c >> 8);
      h[11] = std::uint8_t(c);
    }
    ASSERT_EQ(cs::ipv4_header_csum_ok(h), cs::ip_compute_csum(h, 20) == 0) << i;
  }
  std::uint8_t zero[20] = {};
  EXPECT_EQ(cs::ipv4_header_csum_ok(zero), cs::ip_compute_csum(zero, 20) == 0);
}

TEST(CsumShort, PseudoHeadersEqualTheirTwins) {
  std::mt19937 rng(0x5409);
  std::uint8_t a[16], b[16];
  for (int i = 0; i < 20000; ++i) {
    for (auto& x : a) x = std::uint8_t(rng() % 5 == 0 ? 0xFF : rng());
    for (auto& x : b) x = std::uint8_t(rng());
    const std::uint32_t len = i % 4 == 0 ? rng() : rng() % 65536;
    const std::uint8_t proto = std::uint8_t(i % 2 ? 6 : 17);
    const cs::wsum seed = i % 3 == 0 ? 0 : cs::wsum(rng());
    ASSERT_EQ(cs::csum_tcpudp_nofold_inline(a, b, len & 0xFFFF, proto, seed),
              cs::csum_tcpudp_nofold(a, b, len & 0xFFFF, proto, seed))
        << i;
    ASSERT_EQ(cs::csum_ipv6_nofold_inline(a, b, len, proto, seed),
              cs::csum_ipv6_nofold(a, b, len, proto, seed))
        << i;
  }
}

}  // namespace

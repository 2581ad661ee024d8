// csum_partial's inline path (buffers of at most 64 bytes summed in the header, no call) against
// the byte-wise RFC 1071 reference kernel, across the 64/65-byte border where the call into the
// run-time kernel takes over, for every offset parity and carry-heavy data and seeds (C-13).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ofld/core/csum.hpp"

namespace {

namespace cs = ofld::csum;

TEST(CsumInline, C13_InlineAndDispatchedPathsEqualTheReferenceAroundTheBorder) {
  static_assert(cs::detail::kInlineSumMax == 64);
  std::mt19937 rng(0x1071);
  std::vector<std::uint8_t> buf(256);
  for (int round = 0; round < 300; ++round) {
    // a quarter of the bytes 0xff, so the 64-bit add-with-carry chains carry often
    for (auto& b : buf) b = std::uint8_t(rng() % 4 == 0 ? 0xff : rng());
    const cs::wsum seed = round % 3 == 0 ? 0 : round % 3 == 1 ? 0xffffffffu : cs::wsum(rng());
    for (std::size_t len = 0; len <= 140; ++len)
      for (std::size_t off : {0u, 1u, 2u, 3u, 5u, 8u}) {
        ASSERT_EQ(cs::csum_partial(buf.data() + off, len, seed),
                  cs::csum_partial_with(cs::Kernel::Reference, buf.data() + off, len, seed))
            << "len " << len << " off " << off << " seed " << seed;
      }
  }
}

TEST(CsumInline, C13_AllOnesAndAllZeroInline) {
  // 64 bytes of 0xff: 32 words of 0xffff fold to 0xffff (a non-zero sum never folds to 0);
  // all zeros fold to 0 and the seed comes back unchanged.
  std::vector<std::uint8_t> ff(64, 0xff), zero(64, 0);
  for (std::size_t len = 2; len <= 64; len += 2) {
    EXPECT_EQ(cs::csum_fold16(cs::csum_partial(ff.data(), len)), 0xffff) << len;
    EXPECT_EQ(cs::csum_partial(zero.data(), len, 0x1234u), 0x1234u) << len;
  }
  // An odd trailing byte is the high byte of its word (RFC 1071 §4.1): 0xab → 0xab00.
  const std::uint8_t one[] = {0xab};
  EXPECT_EQ(cs::csum_fold16(cs::csum_partial(one, 1)), 0xab00);
  const std::uint8_t three[] = {0x00, 0x01, 0xab};
  EXPECT_EQ(cs::csum_fold16(cs::csum_partial(three, 3)), 0xab01);
}

}  // namespace

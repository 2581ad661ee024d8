#include <gtest/gtest.h>
#include "ofld/core/csum.hpp"
// C-13: fold of an end-around-carry sum (RFC 1071 §3 numeric example: 0x0001+0xf203+0xf4f5+0xf6f7 = 0xddf2 folded).
TEST(Smoke, C13_Rfc1071Example) {
  using namespace ofld::csum;
  wsum w = 0x0001 + 0xf203 + 0xf4f5 + 0xf6f7;
  EXPECT_EQ(csum_fold16(w), 0xddf2);
  EXPECT_EQ(csum_fold(w), 0x220d);
}

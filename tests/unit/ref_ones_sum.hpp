// A reference RFC 1071 ones'-complement sum, written out word by word, for tests whose
// expected values must not come from ofld's own checksum code.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ofld::testutil {

/// RFC 1071 §1: the 16-bit ones'-complement sum of big-endian words (an odd tail byte is the
/// high byte of a last word), plus `seed`, folded to 16 bits and not complemented.
inline std::uint16_t ref_ones_sum(const std::uint8_t* b, std::size_t n, std::uint32_t seed = 0) {
  std::uint64_t acc = seed;
  for (std::size_t i = 0; i + 1 < n; i += 2) acc += (std::uint32_t(b[i]) << 8) | b[i + 1];
  if (n & 1) acc += std::uint32_t(b[n - 1]) << 8;
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return std::uint16_t(acc);
}

}  // namespace ofld::testutil

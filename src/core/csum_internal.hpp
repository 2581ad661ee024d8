// Internal helpers shared by the checksum kernels (src/core/csum*.cpp). Not a public header.
//
// Every kernel sums the data as host (little-endian) 16-bit words, folds the total to 16
// bits and byte-swaps it: ones'-complement sums are byte-order independent up to that swap
// (RFC 1071 §2(B)). The folded value is canonical (0 only for all-zero data, otherwise
// 1..0xffff), so every kernel returns exactly the same wsum: csum_add(seed, folded_be).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ofld/core/csum.hpp"

// The helpers below are always_inline: the vector kernels are compiled with target/tune
// attributes, and GCC does not inline a plain `inline` function across a tune mismatch
// (each would be an out-of-line call on every checksum).
namespace ofld::csum::detail {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ || __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
inline constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

/// 64-bit add with end-around carry.
[[gnu::always_inline]] inline std::uint64_t add64c(std::uint64_t a, std::uint64_t b) noexcept {
  std::uint64_t s = a + b;
  return s + (s < b);
}

/// Turn a folded sum of host-order words into the network-order wsum the API returns.
[[gnu::always_inline]] inline wsum finish(std::uint16_t folded_host, wsum seed) noexcept {
  std::uint16_t be = kLittleEndian ? __builtin_bswap16(folded_host) : folded_host;
  // csum_add written out: a constexpr (not always_inline) call stays out of line in the
  // target-attributed kernels (a tail jump on every checksum).
  const std::uint64_t w = std::uint64_t(seed) + be;
  return wsum((w & 0xffffffffu) + (w >> 32));
}

/// Host-word sum of a short tail (any length); start must be at an even offset of the
/// summed region. A trailing odd byte lands in the low-address byte of its word, which is
/// the high byte after the network-order conversion (RFC 1071 §4.1).
[[gnu::always_inline]] inline std::uint64_t sum_tail(const std::uint8_t* p, std::size_t n, std::uint64_t acc) noexcept {
  while (n >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    acc = add64c(acc, v);
    p += 8;
    n -= 8;
  }
  // 0..7 bytes left: fixed-size loads (a variable-length memcpy is a library call). Only a
  // byte's lane parity matters to the folded sum, and each piece starts at an even offset.
  if (n & 4) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    acc = add64c(acc, v);
    p += 4;
  }
  if (n & 2) {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    acc = add64c(acc, v);
    p += 2;
  }
  if (n & 1) acc = add64c(acc, std::uint64_t(*p));
  return acc;
}

wsum scalar64_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept;

#if defined(__x86_64__) || defined(__i386__)
wsum sse_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept;
wsum avx2_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept;
wsum sse_copy_sum(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept;
wsum avx2_copy_sum(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept;
wsum avx512_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept;
wsum avx512_copy_sum(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept;
#endif

}  // namespace ofld::csum::detail

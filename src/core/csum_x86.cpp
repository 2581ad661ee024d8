// SSE2 and AVX2 checksum kernels (x86 only). Compiled with per-function target attributes,
// never with global -mavx2, and selected at run time from CPUID (csum.cpp).
//
// Method: bias every 16-bit word by 0x8000 (xor) so it fits a signed int16, then
// pmaddwd against 1 adds word pairs into signed 32-bit lanes: (u0-32768)+(u1-32768).
// Each 4 covered bytes therefore owe +65536, added back exactly when the lanes are widened.
// A lane gains at most 65536 in magnitude per step, so lanes are widened at least every
// kChunkSteps steps. Loads are always unaligned (public bug A4).
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
// GCC's generic tuning splits unaligned 256-bit loads/stores into two 128-bit halves,
// which halves throughput on Zen/recent Intel; an AVX2-era tuning keeps them whole.
#if defined(__clang__)
#define OFLD_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define OFLD_TARGET_AVX2 __attribute__((target("avx2,tune=haswell")))
#endif

#include <algorithm>

#include "csum_internal.hpp"

namespace ofld::csum::detail {
namespace {

// Per-accumulator steps between widenings: a lane moves by at most 65536 per step, so after
// kChunkSteps + 3 steps |lane| < 2^28.1 and the four accumulators can be added in 32 bits.
constexpr std::size_t kChunkSteps = 4096;

OFLD_TARGET_AVX2 inline std::int64_t hsum_epi32_wide(__m256i v) noexcept {
  __m256i w = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)),
                               _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1)));
  __m128i h = _mm_add_epi64(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
  return _mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1);
}

__attribute__((target("sse2"))) inline std::int64_t hsum_epi32_wide_sse(__m128i v) noexcept {
  alignas(16) std::int32_t l[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(l), v);
  return std::int64_t(l[0]) + l[1] + l[2] + l[3];
}

template <bool Copy>
wsum sse_body(std::uint8_t* d, const std::uint8_t* p, std::size_t len, wsum seed) noexcept;

// One template body for sum and copy-and-sum; Copy=false never touches dst.
template <bool Copy>
OFLD_TARGET_AVX2 inline wsum avx2_body(std::uint8_t* d, const std::uint8_t* p,
                                                      std::size_t len, wsum seed) noexcept {
  std::uint64_t total = 0;  // exact integer sum of host-order words
  // Below 256 bytes the 128-bit body has the lower fixed cost (measured on Zen3).
  if (len < 256) return sse_body<Copy>(d, p, len, seed);
  const __m256i bias = _mm256_set1_epi16(std::int16_t(0x8000));
  const __m256i ones = _mm256_set1_epi16(1);
  while (len >= 32) {
    std::size_t chunk = std::min(len & ~std::size_t(31), kChunkSteps * 128);
    std::size_t n = chunk;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    while (n >= 128) {
      __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
      __m256i x2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64));
      __m256i x3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 96));
      if constexpr (Copy) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), x0);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 32), x1);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 64), x2);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 96), x3);
        d += 128;
      }
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_xor_si256(x0, bias), ones));
      a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_xor_si256(x1, bias), ones));
      a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_xor_si256(x2, bias), ones));
      a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_xor_si256(x3, bias), ones));
      p += 128;
      n -= 128;
    }
    while (n >= 32) {  // at most 3 more steps on a lane: still within the bound
      __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      if constexpr (Copy) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), x);
        d += 32;
      }
      a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_xor_si256(x, bias), ones));
      p += 32;
      n -= 32;
    }
    std::int64_t s =
        hsum_epi32_wide(_mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)));
    total += std::uint64_t(s + std::int64_t(chunk / 4) * 65536);
    len -= chunk;
  }
  if constexpr (Copy) {
    if (len) std::memcpy(d, p, len);
  }
  std::uint64_t acc = sum_tail(p, len, total);
  return finish(fold64(acc), seed);
}

template <bool Copy>
__attribute__((target("sse2"))) wsum sse_body(std::uint8_t* d, const std::uint8_t* p,
                                                    std::size_t len, wsum seed) noexcept {
  std::uint64_t total = 0;
  if (len < 64) {
    if constexpr (Copy) {
      if (len) std::memcpy(d, p, len);
    }
    return finish(fold64(sum_tail(p, len, 0)), seed);
  }
  const __m128i bias = _mm_set1_epi16(std::int16_t(0x8000));
  const __m128i ones = _mm_set1_epi16(1);
  while (len >= 16) {
    std::size_t chunk = std::min(len & ~std::size_t(15), kChunkSteps * 64);
    std::size_t n = chunk;
    __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
    while (n >= 64) {
      __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
      __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32));
      __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 48));
      if constexpr (Copy) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), x0);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 16), x1);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 32), x2);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 48), x3);
        d += 64;
      }
      a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_xor_si128(x0, bias), ones));
      a1 = _mm_add_epi32(a1, _mm_madd_epi16(_mm_xor_si128(x1, bias), ones));
      a2 = _mm_add_epi32(a2, _mm_madd_epi16(_mm_xor_si128(x2, bias), ones));
      a3 = _mm_add_epi32(a3, _mm_madd_epi16(_mm_xor_si128(x3, bias), ones));
      p += 64;
      n -= 64;
    }
    while (n >= 16) {
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      if constexpr (Copy) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), x);
        d += 16;
      }
      a0 = _mm_add_epi32(a0, _mm_madd_epi16(_mm_xor_si128(x, bias), ones));
      p += 16;
      n -= 16;
    }
    std::int64_t s = hsum_epi32_wide_sse(_mm_add_epi32(_mm_add_epi32(a0, a1), _mm_add_epi32(a2, a3)));
    total += std::uint64_t(s + std::int64_t(chunk / 4) * 65536);
    len -= chunk;
  }
  if constexpr (Copy) {
    if (len) std::memcpy(d, p, len);
  }
  std::uint64_t acc = sum_tail(p, len, total);
  return finish(fold64(acc), seed);
}

}  // namespace

wsum avx2_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept {
  return avx2_body<false>(nullptr, p, len, seed);
}
wsum avx2_copy_sum(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept {
  return avx2_body<true>(d, s, len, seed);
}
wsum sse_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept {
  return sse_body<false>(nullptr, p, len, seed);
}
wsum sse_copy_sum(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept {
  return sse_body<true>(d, s, len, seed);
}

}  // namespace ofld::csum::detail

#endif

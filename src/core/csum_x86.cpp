// SSE2, AVX2 and AVX-512 checksum kernels (x86 only). Compiled with per-function target
// attributes, never with global -mavx2, and selected at run time from CPUID (csum.cpp).
//
// Method: bias every 16-bit word by 0x8000 (xor) so it fits a signed int16, then
// pmaddwd against 1 adds word pairs into signed 32-bit lanes: (u0-32768)+(u1-32768).
// Each 4 covered bytes therefore owe +65536, added back exactly at the end of a chunk.
// Loads are unaligned (public bug A4: any start address); the AVX-512 kernel moves sums of
// 1 KiB and more to a 64-byte boundary first (avx512_aligned_sum).
//
// Exactness: a chunk of at most kChunkMax bytes holds at most 2^16 words, so its true word
// sum is below 2^32. Every lane operation (vpmaddwd/vpdpwssd/vpaddd) and the horizontal
// reduction are exact modulo 2^32, hence the reduced, bias-corrected uint32 IS the chunk's
// exact sum: no widening or per-lane bound is needed. Chunk sums are added in 64 bits.
#if defined(__x86_64__) || defined(__i386__)

// GCC 12's AVX-512 intrinsics seed results with _mm512_undefined_*(), which -Wmaybe-uninitialized
// then reports at every inlined use (GCC PR 105593, fixed in GCC 13). Nothing here is
// uninitialised; the pragma covers this file only.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
// GCC's generic tuning splits unaligned 256-bit loads/stores into two 128-bit halves,
// which halves throughput on Zen/recent Intel; an AVX2-era tuning keeps them whole.
#if defined(__clang__)
#define OFLD_TARGET_AVX2 __attribute__((target("avx2")))
#define OFLD_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,bmi2")))
#else
#define OFLD_TARGET_AVX2 __attribute__((target("avx2,tune=haswell")))
#define OFLD_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,bmi2,tune=znver3")))
#endif

#include <algorithm>
#include <array>

#include "csum_internal.hpp"

namespace ofld::csum::detail {
namespace {

/// Largest chunk whose exact word sum fits in 32 bits: 2^16 words of at most 0xffff.
constexpr std::size_t kChunkMax = std::size_t(1) << 17;
/// Chunk size used by the bulk loops (half the bound, leaving room for the tail).
constexpr std::size_t kChunk = std::size_t(1) << 16;
/// Unaligned sums from this many bytes up start with an aligning head (avx512_aligned_sum).
/// Measured on Zen 5: 2 KiB and more faster in every run; 1448-byte payloads in L2 (`ofld bench
/// gro`, checksum_only) 10-19 % faster, the same sums hot in L1 (`ofld bench csum --offset
/// 16`) 0-15 % slower (the head's own reduction against the split loads it saves); below
/// 1 KiB slower.
constexpr std::size_t kAlignMin = 1024;

/// Fold a 32-bit host-word sum to its canonical 16 bits (0 only for 0): the high half of
/// x + ror(x, 16) is hi + lo with the end-around carry.
[[gnu::always_inline]] inline std::uint16_t fold32(std::uint32_t x) noexcept {
  return std::uint16_t((x + ((x >> 16) | (x << 16))) >> 16);
}
/// Ones'-complement fold of an exact 64-bit sum to 32 bits (same residue mod 0xffff, zero
/// only for zero).
[[gnu::always_inline]] inline std::uint32_t fold64to32(std::uint64_t s) noexcept {
  std::uint32_t r;
  const bool c = __builtin_add_overflow(std::uint32_t(s), std::uint32_t(s >> 32), &r);
  return r + c;
}

// ---- SSE2 -------------------------------------------------------------------------------

__attribute__((target("sse2"))) inline std::uint32_t hsum_epi32_sse(__m128i v) noexcept {
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
  return std::uint32_t(_mm_cvtsi128_si32(v));
}

template <bool Copy>
__attribute__((target("sse2"))) wsum sse_body(std::uint8_t* d, const std::uint8_t* p,
                                              std::size_t len, wsum seed) noexcept {
  std::uint64_t total = 0;
  const __m128i bias = _mm_set1_epi16(std::int16_t(0x8000));
  const __m128i ones = _mm_set1_epi16(1);
  while (len >= 16) {
    const std::size_t chunk = std::min(len & ~std::size_t(15), kChunk);
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
    // 4 lanes per 16-byte step, each owing 65536: chunk/16 * 2^18 = chunk * 2^14.
    total += hsum_epi32_sse(_mm_add_epi32(_mm_add_epi32(a0, a1), _mm_add_epi32(a2, a3))) +
             std::uint32_t(chunk << 14);
    len -= chunk;
  }
  if constexpr (Copy) {
    if (len) std::memcpy(d, p, len);
  }
  return finish(fold32(fold64to32(sum_tail(p, len, total))), seed);
}

// ---- AVX2 -------------------------------------------------------------------------------

/// 32 zero bytes then 32 0xff bytes: loadu(kTailMask + r) keeps the last r bytes of 32.
alignas(64) constexpr std::uint8_t kTailMask[64] = {
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
    0,    0,    0,    0,    0,    0,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

OFLD_TARGET_AVX2 inline std::uint32_t hsum_epi32_avx2(__m256i v) noexcept {
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
  return std::uint32_t(_mm_cvtsi128_si32(h));
}

OFLD_TARGET_AVX2 inline __m256i avx2_step(__m256i acc, __m256i x) noexcept {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_xor_si256(x, _mm256_set1_epi16(
                                                                         std::int16_t(0x8000))),
                                                 _mm256_set1_epi16(1)));
}

/// Exact host-word sum of p[0..n), 32 <= n <= kChunkMax, n even. The final partial vector is
/// an overlapping load of the last 32 bytes with the already-summed bytes masked off (n even
/// keeps the words aligned to the region).
template <bool Copy>
OFLD_TARGET_AVX2 inline std::uint32_t avx2_chunk(std::uint8_t* d, const std::uint8_t* p,
                                                 std::size_t n) noexcept {
  const std::size_t steps = (n + 31) / 32;
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  const std::uint8_t* const end = p + n;
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
    a0 = avx2_step(a0, x0);
    a1 = avx2_step(a1, x1);
    a2 = avx2_step(a2, x2);
    a3 = avx2_step(a3, x3);
    p += 128;
    n -= 128;
  }
  if (n >= 64) {
    __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    if constexpr (Copy) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), x0);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 32), x1);
      d += 64;
    }
    a0 = avx2_step(a0, x0);
    a1 = avx2_step(a1, x1);
    p += 64;
    n -= 64;
  }
  if (n >= 32) {
    __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (Copy) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), x);
      d += 32;
    }
    a2 = avx2_step(a2, x);
    p += 32;
    n -= 32;
  }
  if (n) {  // 2..30 bytes left: the last 32 bytes of the chunk, earlier ones masked off
    __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(end - 32));
    if constexpr (Copy) _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + n - 32), x);
    x = _mm256_and_si256(x, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kTailMask + n)));
    a3 = avx2_step(a3, x);
  }
  // 8 lanes per step, each owing 65536 (a masked-off zero word pair owes it too).
  return hsum_epi32_avx2(_mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3))) +
         std::uint32_t(steps << 19);
}

// One template body for sum and copy-and-sum; Copy=false never touches dst.
template <bool Copy>
OFLD_TARGET_AVX2 inline wsum avx2_body(std::uint8_t* d, const std::uint8_t* p, std::size_t len,
                                       wsum seed) noexcept {
  if (len < 32) {
    if constexpr (Copy) {
      if (len) std::memcpy(d, p, len);
    }
    return finish(fold32(fold64to32(sum_tail(p, len, 0))), seed);
  }
  std::uint64_t total = 0;
  if (len & 1) {  // an odd last byte sits at an even offset: the low byte of a host word
    total = p[len - 1];
    if constexpr (Copy) d[len - 1] = p[len - 1];
    --len;
  }
  while (len > kChunk + 64) {  // keeps the last chunk >= 32 bytes
    total += avx2_chunk<Copy>(d, p, kChunk);
    p += kChunk;
    if constexpr (Copy) d += kChunk;
    len -= kChunk;
  }
  total += avx2_chunk<Copy>(d, p, len);
  _mm256_zeroupper();  // GCC emits none under target attributes; legacy-SSE code may follow
  return finish(fold32(fold64to32(total)), seed);
}

// ---- AVX-512 (BW, VL, VNNI) -------------------------------------------------------------
// vpdpwssd fuses pmaddwd and the add; a byte-masked load covers the tail and short buffers
// with no scalar code (masked-off bytes are not read, so no fault past the end).

/// The two word constants and the byte masks live in memory: a broadcast or a mask read from
/// memory is a load, where one built from a register takes a vector ALU slot (port 5 on
/// Intel), and every call of a 1500-byte sum runs about 48 vector ALU operations on two ports.
alignas(4) constexpr std::uint32_t kBiasWords = 0x80008000u;  // 0x8000 in each 16-bit word
alignas(4) constexpr std::uint32_t kOneWords = 0x00010001u;   // 1 in each 16-bit word
/// kByteMask[n]: the low n bits set, n = 0..64 (the masked load of a partial vector).
constexpr std::array<std::uint64_t, 65> byte_masks() noexcept {
  std::array<std::uint64_t, 65> m{};
  for (unsigned n = 0; n < 64; ++n) m[n] = (std::uint64_t(1) << n) - 1;
  m[64] = ~std::uint64_t(0);
  return m;
}
alignas(64) const std::array<std::uint64_t, 65> kByteMask = byte_masks();

OFLD_TARGET_AVX512 inline __m512i broadcast32(const std::uint32_t& c) noexcept {
  __m512i v;
  asm("vpbroadcastd %1, %0" : "=v"(v) : "m"(c));
  return v;
}
OFLD_TARGET_AVX512 inline __mmask64 byte_mask(std::size_t n) noexcept {
  __mmask64 k;
  asm("kmovq %1, %0" : "=k"(k) : "m"(kByteMask.data()[n]));
  return k;
}

OFLD_TARGET_AVX512 inline __m512i avx512_step(__m512i acc, __m512i x) noexcept {
  return _mm512_dpwssd_epi32(acc, _mm512_xor_si512(x, broadcast32(kBiasWords)),
                             broadcast32(kOneWords));
}

OFLD_TARGET_AVX512 inline std::uint32_t hsum_epi32_avx512(__m512i v) noexcept {
  __m256i y = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
  h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
  return std::uint32_t(_mm_cvtsi128_si32(h));
}

/// Exact host-word sum of p[0..n), 0 <= n <= kChunkMax, any parity (the masked load zeroes
/// the byte after an odd tail, which makes it the low byte of its host word).
template <bool Copy>
[[gnu::always_inline]] OFLD_TARGET_AVX512 inline std::uint32_t avx512_chunk(std::uint8_t* d, const std::uint8_t* p,
                                                     std::size_t n) noexcept {
  if (n <= 64) {  // headers and short buffers: one masked step, nothing else
    const __mmask64 m = byte_mask(n);
    const __m512i x = _mm512_maskz_loadu_epi8(m, p);
    if constexpr (Copy) _mm512_mask_storeu_epi8(d, m, x);
    return hsum_epi32_avx512(avx512_step(_mm512_setzero_si512(), x)) + (std::uint32_t(1) << 20);
  }
  const std::size_t steps = (n + 63) / 64;
  // Eight independent accumulators: vpdpwssd's latency is several cycles and the core can
  // load two 64-byte vectors per cycle (Zen 5, Sapphire Rapids), so fewer chains leave the
  // loads waiting; each size class below feeds accumulators of its own.
  const __m512i bias = broadcast32(kBiasWords), ones = broadcast32(kOneWords);
  __m512i x0, x1, x2, x3, x4, x5, x6, x7;
  // One 512-byte block: eight loads (and stores), then OP(acc, biased vector) per vector.
#define OFLD_AVX512_BLOCK(OP)                 \
  x0 = _mm512_loadu_si512(p);                 \
  x1 = _mm512_loadu_si512(p + 64);            \
  x2 = _mm512_loadu_si512(p + 128);           \
  x3 = _mm512_loadu_si512(p + 192);           \
  x4 = _mm512_loadu_si512(p + 256);           \
  x5 = _mm512_loadu_si512(p + 320);           \
  x6 = _mm512_loadu_si512(p + 384);           \
  x7 = _mm512_loadu_si512(p + 448);           \
  if constexpr (Copy) {                       \
    _mm512_storeu_si512(d, x0);               \
    _mm512_storeu_si512(d + 64, x1);          \
    _mm512_storeu_si512(d + 128, x2);         \
    _mm512_storeu_si512(d + 192, x3);         \
    _mm512_storeu_si512(d + 256, x4);         \
    _mm512_storeu_si512(d + 320, x5);         \
    _mm512_storeu_si512(d + 384, x6);         \
    _mm512_storeu_si512(d + 448, x7);         \
    d += 512;                                 \
  }                                           \
  OP(a0, _mm512_xor_si512(x0, bias));         \
  OP(a1, _mm512_xor_si512(x1, bias));         \
  OP(a2, _mm512_xor_si512(x2, bias));         \
  OP(a3, _mm512_xor_si512(x3, bias));         \
  OP(a4, _mm512_xor_si512(x4, bias));         \
  OP(a5, _mm512_xor_si512(x5, bias));         \
  OP(a6, _mm512_xor_si512(x6, bias));         \
  OP(a7, _mm512_xor_si512(x7, bias));         \
  p += 512;                                   \
  n -= 512;
#define OFLD_AVX512_START(acc, y) acc = _mm512_madd_epi16(y, ones)
#define OFLD_AVX512_ADD(acc, y) acc = _mm512_dpwssd_epi32(acc, y, ones)
  __m512i a0, a1, a2, a3, a4, a5, a6, a7;
  if (n >= 512) {
    // The first block starts the accumulators (vpmaddwd, no add): none is zeroed first.
    OFLD_AVX512_BLOCK(OFLD_AVX512_START)
    while (n >= 512) {
      OFLD_AVX512_BLOCK(OFLD_AVX512_ADD)
    }
  } else {
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = _mm512_setzero_si512();
  }
#undef OFLD_AVX512_ADD
#undef OFLD_AVX512_START
#undef OFLD_AVX512_BLOCK
  // The rest (< 512 bytes): its whole vectors through one computed jump into a fall-through
  // run (no compare, branch and pointer update per block), each vector into an accumulator
  // of its own, then the masked partial vector.
  const unsigned whole = unsigned(n >> 6);
  switch (whole) {
#define OFLD_AVX512_REST(k, acc)                                      \
  case k + 1: {                                                       \
    const __m512i x = _mm512_loadu_si512(p + 64 * k);                 \
    if constexpr (Copy) _mm512_storeu_si512(d + 64 * k, x);           \
    acc = _mm512_dpwssd_epi32(acc, _mm512_xor_si512(x, bias), ones);  \
  }                                                                   \
    [[fallthrough]];
    OFLD_AVX512_REST(6, a6)
    OFLD_AVX512_REST(5, a5)
    OFLD_AVX512_REST(4, a4)
    OFLD_AVX512_REST(3, a3)
    OFLD_AVX512_REST(2, a2)
    OFLD_AVX512_REST(1, a1)
    OFLD_AVX512_REST(0, a0)
#undef OFLD_AVX512_REST
    default: break;
  }
  p += std::size_t(whole) * 64;
  if constexpr (Copy) d += std::size_t(whole) * 64;
  n &= 63;
  if (n) {
    const __mmask64 m = byte_mask(n);
    __m512i x = _mm512_maskz_loadu_epi8(m, p);
    if constexpr (Copy) _mm512_mask_storeu_epi8(d, m, x);
    a7 = _mm512_dpwssd_epi32(a7, _mm512_xor_si512(x, bias), ones);
  }
  // 16 lanes per step, each owing 65536.
  // A tree of three levels, not the chain of seven dependent adds that GCC's reassociation
  // makes of it otherwise. On Zen 5 (a vector add: 2 cycles; a 1500-byte sum measured
  // latency-bound) the chain is 14 cycles against 6; on Intel's throughput-bound core the two
  // measured the same.
  a0 = _mm512_add_epi32(a0, a1);
  a2 = _mm512_add_epi32(a2, a3);
  a4 = _mm512_add_epi32(a4, a5);
  a6 = _mm512_add_epi32(a6, a7);
  asm("" : "+v"(a0), "+v"(a2), "+v"(a4), "+v"(a6));
  a0 = _mm512_add_epi32(a0, a2);
  a4 = _mm512_add_epi32(a4, a6);
  asm("" : "+v"(a0), "+v"(a4));
  return hsum_epi32_avx512(_mm512_add_epi32(a0, a4)) + std::uint32_t(steps << 20);
}

/// Buffers above one chunk: whole chunks, then the rest (out of line, so the common short
/// call carries none of this loop's set-up).
template <bool Copy>
[[gnu::noinline]] OFLD_TARGET_AVX512 std::uint64_t avx512_long(std::uint8_t* d,
                                                             const std::uint8_t* p,
                                                             std::size_t len) noexcept {
  std::uint64_t total = 0;
  while (len > kChunk) {
    total += avx512_chunk<Copy>(d, p, kChunk);
    p += kChunk;
    if constexpr (Copy) d += kChunk;
    len -= kChunk;
  }
  return total + avx512_chunk<Copy>(d, p, len);
}

/// A sum of at least kAlignMin bytes whose start is not 64-byte aligned. Every full load of
/// such a buffer spans two cache lines, which halves the loads per cycle (measured on Zen 5:
/// one 64-byte vector a cycle instead of two). So the bytes up to the next 64-byte boundary
/// are summed first as one masked vector, and the rest from there. An odd head moves the
/// rest's word pairing by one byte; the head is then loaded from one byte earlier (that byte
/// masked off, never accessed) so that it is paired the same way: the two sums together are
/// then 256 times the region's sum modulo 0xffff (RFC 1071 §2(B): a byte-swapped pairing
/// swaps the sum), undone by swapping the bytes of the canonical folded value. Out of line:
/// aligned and short buffers do not carry it.
[[gnu::noinline]] OFLD_TARGET_AVX512 wsum avx512_aligned_sum(const std::uint8_t* p, std::size_t len,
                                                            wsum seed) noexcept {
  const unsigned head = unsigned(-reinterpret_cast<std::uintptr_t>(p)) & 63u;
  const unsigned rot = head & 1u;
  const __mmask64 m = _bzhi_u64(~std::uint64_t(0), head) << rot;
  const __m512i x = _mm512_maskz_loadu_epi8(
      m, reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) - rot));
  // The head's exact sum (one step: 32 word lanes, each owing 32768).
  std::uint64_t total =
      hsum_epi32_avx512(avx512_step(_mm512_setzero_si512(), x)) + (std::uint32_t(1) << 20);
  p += head;
  len -= head;
  total += len > kChunkMax ? avx512_long<false>(nullptr, p, len)
                           : avx512_chunk<false>(nullptr, p, len);
  std::uint16_t f = fold32(fold64to32(total));
  if (rot) f = __builtin_bswap16(f);
  return finish(f, seed);
}

template <bool Copy>
OFLD_TARGET_AVX512 inline wsum avx512_body(std::uint8_t* d, const std::uint8_t* p,
                                           std::size_t len, wsum seed) noexcept {
  // Copy-and-sum keeps unaligned loads and stores: aligning its stores the same way gave no
  // clear gain on Zen 5 (faster in one run, slower at 1448..4096 B in the next).
  if constexpr (!Copy) {
    if (len >= kAlignMin && (reinterpret_cast<std::uintptr_t>(p) & 63u) != 0)
      return avx512_aligned_sum(p, len, seed);
  }
  if (__builtin_expect(len > kChunkMax, 0)) {
    const std::uint64_t total = avx512_long<Copy>(d, p, len);
    return finish(fold32(fold64to32(total)), seed);
  }
  // A dirty upper state makes later legacy-SSE code several times slower (measured on
  // Zen 4: sse_sum 3x slower after an AVX-512 call). GCC and Clang put a vzeroupper before
  // the return of every function that used wide registers, this one and avx512_aligned_sum
  // included; a second one written here was a wasted instruction per call.
  return finish(fold32(avx512_chunk<Copy>(d, p, len)), seed);
}

}  // namespace

wsum avx2_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept {
  return avx2_body<false>(nullptr, p, len, seed);
}
wsum avx2_copy_sum(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept {
  return avx2_body<true>(d, s, len, seed);
}
wsum avx512_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept {
  return avx512_body<false>(nullptr, p, len, seed);
}
wsum avx512_copy_sum(std::uint8_t* d, const std::uint8_t* s, std::size_t len,
                     wsum seed) noexcept {
  return avx512_body<true>(d, s, len, seed);
}
wsum sse_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept {
  return sse_body<false>(nullptr, p, len, seed);
}
wsum sse_copy_sum(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept {
  return sse_body<true>(d, s, len, seed);
}

}  // namespace ofld::csum::detail

#endif

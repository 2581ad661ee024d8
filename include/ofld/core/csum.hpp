// ofld/core/csum.hpp — Internet checksum arithmetic (RFC 1071, RFC 1624).
//
// Conventions (read these once; every function below follows them):
//  * A `wsum` is an UNFOLDED 32-bit ones'-complement partial sum, the kernel's __wsum.
//    Its value is defined in *network-order semantics*: csum_fold16(w) equals the 16-bit
//    ones'-complement sum of the covered bytes read as big-endian 16-bit words, with a
//    trailing odd byte taken as the HIGH byte of a final word (RFC 1071 §4.1, erratum 3133).
//    The result is therefore independent of host byte order and of buffer alignment.
//  * Seeds: every summing function takes a wsum `seed` and returns seed + sum(data) as a
//    wsum. Chaining calls over consecutive spans is valid only while every span but the last
//    has even length; otherwise use csum_block_add() with the span's byte offset.
//  * A 16-bit checksum value (uint16_t) is a host-order number; store it big-endian
//    (wire::store_be16) into the header field.
//  * "folded sum" = fold16 (not complemented); "checksum" = ~fold16 (what goes in a field).
//
// Kernel functions mirrored: csum_partial, csum_fold, csum_add/csum_sub, csum_block_add/sub,
// csum_replace2/4, csum_tcpudp_nofold/magic, csum_ipv6_magic, csum_partial_copy_nocheck
// (include/net/checksum.h, arch/x86/lib/csum-partial_64.c).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace ofld::csum {

using wsum = std::uint32_t;

// ---- folding and arithmetic ---------------------------------------------------------------

/// 32-bit add with end-around carry (kernel csum_add).
constexpr wsum csum_add(wsum a, wsum b) noexcept {
  std::uint64_t s = std::uint64_t(a) + b;
  return wsum((s & 0xffffffffu) + (s >> 32));
}
/// a - b in ones'-complement (kernel csum_sub = add of complement).
constexpr wsum csum_sub(wsum a, wsum b) noexcept { return csum_add(a, ~b); }

/// Fold a wsum to a 16-bit ones'-complement sum, NOT complemented. fold16(0) == 0.
constexpr std::uint16_t csum_fold16(wsum w) noexcept {
  w = (w & 0xffffu) + (w >> 16);
  w = (w & 0xffffu) + (w >> 16);
  return std::uint16_t(w);
}
/// Fold a 64-bit ones'-complement sum (of host-order or network-order words) to 16 bits, NOT
/// complemented, end-around carry throughout: the one 64-bit fold every summing path uses
/// (the kernel's csum_fold after its 64-to-32 add). 0 only for 0. always_inline: the
/// target-attributed vector kernels would otherwise call it out of line.
[[gnu::always_inline]] constexpr std::uint16_t csum_fold64(std::uint64_t s) noexcept {
  s = (s & 0xffffffffu) + (s >> 32);  // <= 0x1fffffffe
  s = (s & 0xffffffffu) + (s >> 32);  // <= 0xffffffff
  s = (s & 0xffffu) + (s >> 16);
  s = (s & 0xffffu) + (s >> 16);
  s = (s & 0xffffu) + (s >> 16);
  return std::uint16_t(s);
}
/// Fold and complement (kernel csum_fold): the value a checksum field holds.
constexpr std::uint16_t csum_fold(wsum w) noexcept { return std::uint16_t(~csum_fold16(w)); }

/// Widen a 16-bit folded value (host order) to a wsum (kernel csum_unfold).
constexpr wsum csum_unfold(std::uint16_t v) noexcept { return v; }

/// Sum of a block that starts at byte `offset` of the summed region: an odd offset swaps the
/// block's bytes within each 16-bit word (ror32 by 8), kernel csum_block_add.
constexpr wsum csum_shift(wsum w, std::size_t offset) noexcept {
  return (offset & 1) ? wsum((w >> 8) | (w << 24)) : w;
}
constexpr wsum csum_block_add(wsum total, wsum block, std::size_t offset) noexcept {
  return csum_add(total, csum_shift(block, offset));
}
constexpr wsum csum_block_sub(wsum total, wsum block, std::size_t offset) noexcept {
  return csum_sub(total, csum_shift(block, offset));
}

/// RFC 1624 eqn. 3 incremental update of a checksum FIELD value `check` when a 16-bit word
/// of the covered data changes from `old_v` to `new_v`: HC' = ~(~HC + ~m + m').
/// All values host order. (kernel csum_replace2)
constexpr std::uint16_t csum_replace2(std::uint16_t check, std::uint16_t old_v,
                                      std::uint16_t new_v) noexcept {
  wsum w = csum_add(csum_add(std::uint16_t(~check), std::uint16_t(~old_v)), new_v);
  return csum_fold(w);
}
/// Same for a 32-bit field (e.g. an IPv4 address), host-order value. (kernel csum_replace4)
constexpr std::uint16_t csum_replace4(std::uint16_t check, std::uint32_t old_v,
                                      std::uint32_t new_v) noexcept {
  wsum w = csum_add(std::uint16_t(~check), ~old_v);
  w = csum_add(w, new_v);
  return csum_fold(w);
}
/// Same, but applied to a non-complemented pseudo-header SEED (a CHECKSUM_PARTIAL field):
/// seed' = seed - old + new (kernel inet_proto_csum_replace4 on a PARTIAL skb).
constexpr std::uint16_t csum_seed_replace4(std::uint16_t seed, std::uint32_t old_v,
                                           std::uint32_t new_v) noexcept {
  return csum_fold16(csum_add(csum_sub(seed, old_v), new_v));
}

// ---- summing over bytes ----------------------------------------------------------------

/// Implementations of the byte-summing core. All give identical results for any input.
/// AVX512 needs AVX-512 F+BW+VL+VNNI and BMI2 (Intel Ice Lake, AMD Zen 4 and later).
enum class Kernel : std::uint8_t { Reference, Scalar64, SSE, AVX2, AVX512 };

/// Human name ("reference", "scalar64", "sse", "avx2", "avx512").
std::string_view kernel_name(Kernel k) noexcept;
/// True if this CPU can run `k` (CPUID via __builtin_cpu_supports).
bool kernel_supported(Kernel k) noexcept;
/// The fastest supported kernel; chosen once at start-up.
Kernel best_kernel() noexcept;

namespace detail {
/// csum_partial through the run-time kernel choice (best_kernel()), any length: one load and
/// an indirect call.
wsum csum_partial_dispatch(const void* data, std::size_t len, wsum seed) noexcept;

/// Buffers up to this many bytes are summed inline by csum_partial (headers, small packets):
/// below it the call into a vector kernel costs more than the sum.
inline constexpr std::size_t kInlineSumMax = 64;

[[gnu::always_inline]] inline std::uint64_t add64c_inline(std::uint64_t a, std::uint64_t b) noexcept {
  const std::uint64_t s = a + b;
  return s + (s < b);
}

/// seed + sum of p[0..len), len <= kInlineSumMax, for any host byte order: 64-bit host words
/// in two add-with-carry chains, fixed-size tail loads, fold, then the host sum converted to
/// the network-order convention (RFC 1071 §2(B)). Returns exactly what every kernel returns
/// (the canonical folded value added to the seed).
[[gnu::always_inline]] inline wsum sum_short(const std::uint8_t* p, std::size_t len,
                                             wsum seed) noexcept {
  std::uint64_t a = 0, b = 0;
  while (len >= 16) {
    std::uint64_t v0, v1;
    __builtin_memcpy(&v0, p, 8);
    __builtin_memcpy(&v1, p + 8, 8);
    a = add64c_inline(a, v0);
    b = add64c_inline(b, v1);
    p += 16;
    len -= 16;
  }
  if (len & 8) {
    std::uint64_t v;
    __builtin_memcpy(&v, p, 8);
    a = add64c_inline(a, v);
    p += 8;
  }
  if (len & 4) {
    std::uint32_t v;
    __builtin_memcpy(&v, p, 4);
    b = add64c_inline(b, v);
    p += 4;
  }
  if (len & 2) {
    std::uint16_t v;
    __builtin_memcpy(&v, p, 2);
    a = add64c_inline(a, v);
    p += 2;
  }
  // An odd last byte sits at an even offset: the low-address byte of its host word.
  if (len & 1) {
    if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) b = add64c_inline(b, *p);
    else b = add64c_inline(b, std::uint64_t(*p) << 8);
  }
  std::uint16_t v = csum_fold64(add64c_inline(a, b));
  if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) v = __builtin_bswap16(v);
  const std::uint64_t w = std::uint64_t(seed) + v;
  return wsum((w & 0xffffffffu) + (w >> 32));
}
}  // namespace detail

/// seed + ones'-complement sum of data[0..len), any alignment, any length (0 allowed).
/// Up to detail::kInlineSumMax bytes are summed inline (no call), longer buffers by
/// best_kernel(); the result is the same either way. (kernel csum_partial)
[[gnu::always_inline]] inline wsum csum_partial(const void* data, std::size_t len,
                                                wsum seed = 0) noexcept {
  if (len <= detail::kInlineSumMax)
    return detail::sum_short(static_cast<const std::uint8_t*>(data), len, seed);
  return detail::csum_partial_dispatch(data, len, seed);
}
inline wsum csum_partial(std::span<const std::uint8_t> s, wsum seed = 0) noexcept {
  return csum_partial(s.data(), s.size(), seed);
}
/// As csum_partial but with an explicit kernel (tests, benchmarks). An unsupported `k` falls
/// back to Scalar64 (never faults on a CPU without the instructions).
wsum csum_partial_with(Kernel k, const void* data, std::size_t len, wsum seed = 0) noexcept;

/// Copy len bytes src→dst (non-overlapping) and return seed + sum of the bytes, in one pass.
/// (kernel csum_partial_copy_nocheck)
wsum csum_partial_copy(void* dst, const void* src, std::size_t len, wsum seed = 0) noexcept;
wsum csum_partial_copy_with(Kernel k, void* dst, const void* src, std::size_t len,
                            wsum seed = 0) noexcept;

/// Sum of a non-contiguous region given as consecutive spans (e.g. header + page frags), with
/// any span lengths: each span's sum is placed at its byte offset via csum_block_add, so odd
/// boundaries are handled. Its fold16 equals that of csum_partial over the concatenation.
/// (kernel skb_checksum over a frag list)
wsum csum_partial_spans(std::span<const std::span<const std::uint8_t>> spans,
                        wsum seed = 0) noexcept;

/// Internet checksum of a buffer (e.g. an IPv4 header with its check field zeroed):
/// ~fold16(sum). Returns 0xFFFF only when every byte is zero (a non-zero sum never folds to
/// 0), so a header with a non-zero byte never yields 0xFFFF. (kernel ip_compute_csum)
inline std::uint16_t ip_compute_csum(const void* data, std::size_t len) noexcept {
  return csum_fold(csum_partial(data, len, 0));
}

// ---- pseudo-headers (RFC 793 §3.1, RFC 768, RFC 8200 §8.1) -----------------------------

/// IPv4 pseudo-header sum: saddr, daddr (4 bytes each, as on the wire), zero, proto,
/// L4 length (host order, header + payload). Unfolded (kernel csum_tcpudp_nofold).
wsum csum_tcpudp_nofold(const std::uint8_t saddr[4], const std::uint8_t daddr[4],
                        std::uint32_t len, std::uint8_t proto, wsum seed = 0) noexcept;
/// ~fold(pseudo + seed): the final checksum when seed is the L4 sum (kernel csum_tcpudp_magic).
inline std::uint16_t csum_tcpudp_magic(const std::uint8_t saddr[4], const std::uint8_t daddr[4],
                                       std::uint32_t len, std::uint8_t proto, wsum seed) noexcept {
  return csum_fold(csum_tcpudp_nofold(saddr, daddr, len, proto, seed));
}
/// IPv6 pseudo-header sum: saddr, daddr (16 bytes each), 32-bit L4 length, next header.
wsum csum_ipv6_nofold(const std::uint8_t saddr[16], const std::uint8_t daddr[16],
                      std::uint32_t len, std::uint8_t proto, wsum seed = 0) noexcept;
inline std::uint16_t csum_ipv6_magic(const std::uint8_t saddr[16], const std::uint8_t daddr[16],
                                     std::uint32_t len, std::uint8_t proto, wsum seed) noexcept {
  return csum_fold(csum_ipv6_nofold(saddr, daddr, len, proto, seed));
}

// ---- zero rules (C-14, RFC 768) ---------------------------------------------------------

/// The value software writes into a UDP checksum field: a computed 0 becomes 0xFFFF
/// (CSUM_MANGLED_0). TCP has no such rule: use the computed value as is.
constexpr std::uint16_t udp_csum_mangle(std::uint16_t check) noexcept {
  return check == 0 ? 0xffff : check;
}

}  // namespace ofld::csum

// Internet checksum: reference and scalar kernels, run-time dispatch, pseudo-headers.
// Semantics: RFC 1071 (sum), RFC 1624 (incremental update), kernel csum_partial & friends.
#include "ofld/core/csum.hpp"

#include <cstring>

#include "csum_internal.hpp"

namespace ofld::csum {
namespace detail {

/// Obviously correct: bytes at even offsets are the high byte of a big-endian 16-bit word,
/// bytes at odd offsets the low byte; an odd trailing byte is therefore a high byte.
static wsum reference_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept {
  std::uint64_t s = 0;  // cannot overflow below 2^48 bytes
  for (std::size_t i = 0; i < len; ++i) s += (i & 1) ? p[i] : std::uint64_t(p[i]) << 8;
  while (s >> 16) s = (s & 0xffffu) + (s >> 16);
  return csum_add(seed, wsum(s));
}

/// 64-bit loads, two independent add-with-carry chains, 32 bytes per iteration.
wsum scalar64_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept {
  std::uint64_t a = 0, b = 0;
  while (len >= 32) {
    std::uint64_t v[4];
    std::memcpy(v, p, 32);
    a = add64c(a, v[0]);
    b = add64c(b, v[1]);
    a = add64c(a, v[2]);
    b = add64c(b, v[3]);
    p += 32;
    len -= 32;
  }
  a = add64c(a, b);
  a = sum_tail(p, len, a);
  return finish(fold64(a), seed);
}

}  // namespace detail

namespace {

using SumFn = wsum (*)(const std::uint8_t*, std::size_t, wsum) noexcept;

Kernel choose_best() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) return Kernel::AVX2;
  if (__builtin_cpu_supports("sse2")) return Kernel::SSE;
#endif
  return Kernel::Scalar64;
}

SumFn sum_fn(Kernel k) noexcept {
  switch (k) {
    case Kernel::Reference: return &detail::reference_sum;
    case Kernel::Scalar64: return &detail::scalar64_sum;
#if defined(__x86_64__) || defined(__i386__)
    case Kernel::SSE: return &detail::sse_sum;
    case Kernel::AVX2: return &detail::avx2_sum;
#else
    default: break;
#endif
  }
  return &detail::scalar64_sum;
}

}  // namespace

std::string_view kernel_name(Kernel k) noexcept {
  switch (k) {
    case Kernel::Reference: return "reference";
    case Kernel::Scalar64: return "scalar64";
    case Kernel::SSE: return "sse";
    case Kernel::AVX2: return "avx2";
  }
  return "unknown";
}

namespace {
bool probe_supported(Kernel k) noexcept {
  switch (k) {
    case Kernel::Reference:
    case Kernel::Scalar64: return true;
#if defined(__x86_64__) || defined(__i386__)
    case Kernel::SSE: __builtin_cpu_init(); return __builtin_cpu_supports("sse2");
    case Kernel::AVX2: __builtin_cpu_init(); return __builtin_cpu_supports("avx2");
#else
    default: return false;
#endif
  }
  return false;
}
}  // namespace

bool kernel_supported(Kernel k) noexcept {
  static const bool s[4] = {probe_supported(Kernel::Reference), probe_supported(Kernel::Scalar64),
                            probe_supported(Kernel::SSE), probe_supported(Kernel::AVX2)};
  auto i = static_cast<std::size_t>(k);
  return i < 4 && s[i];
}

Kernel best_kernel() noexcept {
  static const Kernel k = choose_best();  // also safe if called during static init
  return k;
}

wsum csum_partial(const void* data, std::size_t len, wsum seed) noexcept {
  // Headers (IPv4 20..60 B, pseudo-headers, TCP/UDP headers) are short: the scalar kernel
  // beats the vector set-up and the indirect call there.
  if (len <= 64) return detail::scalar64_sum(static_cast<const std::uint8_t*>(data), len, seed);
  static const SumFn fn = sum_fn(best_kernel());  // CPUID consulted once
  return fn(static_cast<const std::uint8_t*>(data), len, seed);
}

wsum csum_partial_with(Kernel k, const void* data, std::size_t len, wsum seed) noexcept {
  if (!kernel_supported(k)) k = Kernel::Scalar64;  // documented precondition; never crash
  return sum_fn(k)(static_cast<const std::uint8_t*>(data), len, seed);
}

wsum csum_partial_copy_with(Kernel k, void* dst, const void* src, std::size_t len,
                            wsum seed) noexcept {
  auto* d = static_cast<std::uint8_t*>(dst);
  auto* s = static_cast<const std::uint8_t*>(src);
  if (!kernel_supported(k)) k = Kernel::Scalar64;
  switch (k) {
#if defined(__x86_64__) || defined(__i386__)
    case Kernel::AVX2: return detail::avx2_copy_sum(d, s, len, seed);
    case Kernel::SSE: return detail::sse_copy_sum(d, s, len, seed);
#endif
    default:
      if (len) std::memcpy(d, s, len);
      return sum_fn(k)(d, len, seed);
  }
}

wsum csum_partial_copy(void* dst, const void* src, std::size_t len, wsum seed) noexcept {
  return csum_partial_copy_with(best_kernel(), dst, src, len, seed);
}

wsum csum_partial_spans(std::span<const std::span<const std::uint8_t>> spans,
                        wsum seed) noexcept {
  wsum total = seed;
  std::size_t off = 0;
  for (auto s : spans) {
    total = csum_block_add(total, csum_partial(s.data(), s.size(), 0), off);
    off += s.size();
  }
  return total;
}

// ---- pseudo-headers ---------------------------------------------------------------------

namespace {
inline std::uint64_t be16_at(const std::uint8_t* p) noexcept {
  return (std::uint64_t(p[0]) << 8) | p[1];
}
inline wsum fold_to_wsum(std::uint64_t s) noexcept {
  s = (s & 0xffffffffu) + (s >> 32);
  s = (s & 0xffffffffu) + (s >> 32);
  return wsum(s);
}
}  // namespace

wsum csum_tcpudp_nofold(const std::uint8_t saddr[4], const std::uint8_t daddr[4],
                        std::uint32_t len, std::uint8_t proto, wsum seed) noexcept {
  // Words: saddr hi/lo, daddr hi/lo, (0, proto), length. A length above 0xffff (IPv4 BIG
  // TCP) is added as a 32-bit quantity, i.e. its two 16-bit halves.
  std::uint64_t s = seed;
  s += be16_at(saddr) + be16_at(saddr + 2) + be16_at(daddr) + be16_at(daddr + 2);
  s += proto;
  s += len;
  return fold_to_wsum(s);
}

wsum csum_ipv6_nofold(const std::uint8_t saddr[16], const std::uint8_t daddr[16],
                      std::uint32_t len, std::uint8_t proto, wsum seed) noexcept {
  std::uint64_t s = seed;
  for (int i = 0; i < 16; i += 2) s += be16_at(saddr + i) + be16_at(daddr + i);
  s += std::uint64_t(len >> 16) + (len & 0xffffu);  // 32-bit upper-layer length
  s += proto;                                       // 3 zero bytes + next header
  return fold_to_wsum(s);
}

}  // namespace ofld::csum

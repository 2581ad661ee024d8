// Internet checksum: reference and scalar kernels, run-time dispatch, pseudo-headers.
// Semantics: RFC 1071 (sum), RFC 1624 (incremental update), kernel csum_partial & friends.
#include "ofld/core/csum.hpp"

#include <atomic>
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
  return finish(csum_fold64(a), seed);
}

}  // namespace detail

namespace {

using SumFn = wsum (*)(const std::uint8_t*, std::size_t, wsum) noexcept;

Kernel choose_best() noexcept {
  // The widest supported kernel (on Zen 4 AVX512 was measured at least as fast as AVX2 at
  // every size from 20 B to 64 KiB).
  for (Kernel k : {Kernel::AVX512, Kernel::AVX2, Kernel::SSE})
    if (kernel_supported(k)) return k;
  return Kernel::Scalar64;
}

SumFn sum_fn(Kernel k) noexcept {
  switch (k) {
    case Kernel::Reference: return &detail::reference_sum;
    case Kernel::Scalar64: return &detail::scalar64_sum;
#if defined(__x86_64__) || defined(__i386__)
    case Kernel::SSE: return &detail::sse_sum;
    case Kernel::AVX2: return &detail::avx2_sum;
    case Kernel::AVX512: return &detail::avx512_sum;
#else
    default: break;
#endif
  }
  return &detail::scalar64_sum;
}

using CopyFn = wsum (*)(std::uint8_t*, const std::uint8_t*, std::size_t, wsum) noexcept;

template <SumFn Sum>
wsum memcpy_then_sum(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept {
  if (len) std::memcpy(d, s, len);
  return Sum(d, len, seed);
}

CopyFn copy_fn(Kernel k) noexcept {
  switch (k) {
#if defined(__x86_64__) || defined(__i386__)
    case Kernel::AVX512: return &detail::avx512_copy_sum;
    case Kernel::AVX2: return &detail::avx2_copy_sum;
    case Kernel::SSE: return &detail::sse_copy_sum;
#endif
    case Kernel::Reference: return &memcpy_then_sum<&detail::reference_sum>;
    default: break;
  }
  return &memcpy_then_sum<&detail::scalar64_sum>;
}

}  // namespace

std::string_view kernel_name(Kernel k) noexcept {
  switch (k) {
    case Kernel::Reference: return "reference";
    case Kernel::Scalar64: return "scalar64";
    case Kernel::SSE: return "sse";
    case Kernel::AVX2: return "avx2";
    case Kernel::AVX512: return "avx512";
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
    case Kernel::AVX512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni") &&
             __builtin_cpu_supports("bmi2");
#else
    default: return false;
#endif
  }
  return false;
}
}  // namespace

bool kernel_supported(Kernel k) noexcept {
  static const bool s[5] = {probe_supported(Kernel::Reference), probe_supported(Kernel::Scalar64),
                            probe_supported(Kernel::SSE), probe_supported(Kernel::AVX2),
                            probe_supported(Kernel::AVX512)};
  auto i = static_cast<std::size_t>(k);
  return i < 5 && s[i];
}

Kernel best_kernel() noexcept {
  static const Kernel k = choose_best();  // also safe if called during static init
  return k;
}

namespace {

constexpr std::size_t kKernels = 5;

/// Per-Kernel entry points, an unsupported kernel mapped to Scalar64 (never faults).
struct KernelTable {
  SumFn sum[kKernels];
  CopyFn copy[kKernels];
};
KernelTable make_table() noexcept {
  KernelTable r{};
  for (std::size_t i = 0; i < kKernels; ++i) {
    const Kernel k = kernel_supported(Kernel(i)) ? Kernel(i) : Kernel::Scalar64;
    r.sum[i] = sum_fn(k);
    r.copy[i] = copy_fn(k);
  }
  return r;
}
// Built on first use (safe from static initialisers); the hot path is one load and a test.
std::atomic<const KernelTable*> g_table{nullptr};
[[gnu::noinline, gnu::cold]] const KernelTable* init_table() noexcept {
  static const KernelTable t = make_table();
  g_table.store(&t, std::memory_order_release);
  return &t;
}
[[gnu::always_inline]] inline const KernelTable& table() noexcept {
  const KernelTable* t = g_table.load(std::memory_order_acquire);
  if (__builtin_expect(t == nullptr, 0)) t = init_table();
  return *t;
}
inline std::size_t slot(Kernel k) noexcept {
  const auto i = static_cast<std::size_t>(k);
  return i < kKernels ? i : static_cast<std::size_t>(Kernel::Scalar64);
}

// csum_partial's and csum_partial_copy's kernels: each starts at a resolver that consults
// CPUID once and installs the best kernel, so every later call is one relaxed load and an
// indirect jump (no guard, no switch). Constant-initialised, hence usable from other
// translation units' static initialisers.
wsum resolve_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept;
wsum resolve_copy(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept;
std::atomic<SumFn> g_sum{&resolve_sum};
std::atomic<CopyFn> g_copy{&resolve_copy};
wsum resolve_sum(const std::uint8_t* p, std::size_t len, wsum seed) noexcept {
  const SumFn fn = table().sum[slot(best_kernel())];
  g_sum.store(fn, std::memory_order_relaxed);
  return fn(p, len, seed);
}
wsum resolve_copy(std::uint8_t* d, const std::uint8_t* s, std::size_t len, wsum seed) noexcept {
  const CopyFn fn = table().copy[slot(best_kernel())];
  g_copy.store(fn, std::memory_order_relaxed);
  return fn(d, s, len, seed);
}

}  // namespace

wsum detail::csum_partial_dispatch(const void* data, std::size_t len, wsum seed) noexcept {
  return g_sum.load(std::memory_order_relaxed)(static_cast<const std::uint8_t*>(data), len, seed);
}

wsum csum_partial_with(Kernel k, const void* data, std::size_t len, wsum seed) noexcept {
  return table().sum[slot(k)](static_cast<const std::uint8_t*>(data), len, seed);
}

wsum csum_partial_copy_with(Kernel k, void* dst, const void* src, std::size_t len,
                            wsum seed) noexcept {
  return table().copy[slot(k)](static_cast<std::uint8_t*>(dst),
                               static_cast<const std::uint8_t*>(src), len, seed);
}

wsum csum_partial_copy(void* dst, const void* src, std::size_t len, wsum seed) noexcept {
  return g_copy.load(std::memory_order_relaxed)(static_cast<std::uint8_t*>(dst),
                                                static_cast<const std::uint8_t*>(src), len, seed);
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

// Checksum throughput runner (see bench/runners/bench_csum.hpp).
#include "runners/bench_csum.hpp"

#include <algorithm>
#include <ctime>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "ofld/core/csum.hpp"

#if defined(OFLD_HAVE_DPDK)
#include <rte_ip.h>  // rte_raw_cksum: a header inline, no EAL needed
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
// GCC's generic tuning splits unaligned 256-bit loads/stores into two 128-bit halves,
// which halves throughput on Zen/recent Intel; an AVX2-era tuning keeps them whole.
#if defined(__clang__)
#define OFLD_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define OFLD_TARGET_AVX2 __attribute__((target("avx2,tune=haswell")))
#endif
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ofld::bench {

std::string cpu_model() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  std::string brand;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u) {
    char buf[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      __get_cpuid(0x80000002u + i, &a, &b, &c, &d);
      std::memcpy(buf + 16 * i, &a, 4);
      std::memcpy(buf + 16 * i + 4, &b, 4);
      std::memcpy(buf + 16 * i + 8, &c, 4);
      std::memcpy(buf + 16 * i + 12, &d, 4);
    }
    brand = buf;
    while (!brand.empty() && brand.back() == ' ') brand.pop_back();
    brand.erase(0, brand.find_first_not_of(' '));
  }
  if (!__get_cpuid(1, &a, &b, &c, &d)) return brand.empty() ? "unknown" : brand;
  unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
  if (family == 0xf) family += (a >> 20) & 0xff;
  if (family == 0xf || family == 0x6) model |= ((a >> 16) & 0xf) << 4;
  // The class decides how wide vector work executes (Zen 4: 512-bit in two 256-bit halves;
  // Zen 5 and Intel server cores since Ice Lake: whole 512-bit operations).
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const char* uarch = nullptr;
  if (__builtin_cpu_is("amd")) {
    if (family == 0x17) uarch = "Zen/Zen 2";
    else if (family == 0x19) uarch = avx512 ? "Zen 4" : "Zen 3";
    else if (family == 0x1a) uarch = "Zen 5";
  } else if (__builtin_cpu_is("intel") && family == 6) {
    if (model == 0x8f || model == 0xcf) uarch = "Sapphire/Emerald Rapids";
    else if (model == 0xad || model == 0xae) uarch = "Granite Rapids";
    else if (model == 0x6a || model == 0x6c) uarch = "Ice Lake server";
    else if (model == 0x55) uarch = "Skylake/Cascade Lake server";
    // A hypervisor may report another model number (family 6 model 167, Rocket Lake, with
    // AMX, which only the server cores from Sapphire Rapids on have): then the features say it.
    unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
    if (!uarch && __get_cpuid_count(7, 0, &a7, &b7, &c7, &d7) && ((d7 >> 24) & 1))  // AMX-TILE
      uarch = "AMX: Sapphire Rapids or later";
  }
  std::string r = brand.empty() ? std::string() : brand + " ";
  r += "(family " + std::to_string(family) + " model " + std::to_string(model);
  if (uarch) r += std::string(": ") + uarch;
  return r + ")";
#else
  return "unknown";
#endif
}
namespace {

using csum::Kernel;

// Memory-read baselines: every byte loaded once and OR-reduced, so no load can be dropped;
// an empty asm with a "memory" clobber at entry forbids the compiler from reusing a previous
// call's result (the buffer does not change between calls, so without it the whole loop
// could be hoisted out of the timing loop). The widest ISA the CPU has, with several
// independent accumulators so the loads, not a dependency chain, set the pace. Every variant
// is timed; the fastest is the baseline ("memread").

#define OFLD_NO_ELIDE(p, n) asm volatile("" : : "r"(p), "r"(n) : "memory")

__attribute__((noinline)) std::uint64_t memread_scalar(const std::uint8_t* p, std::size_t n) {
  OFLD_NO_ELIDE(p, n);
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    std::uint64_t x[4];
    std::memcpy(x, p + i, 32);
    a |= x[0];
    b |= x[1];
    c |= x[2];
    d |= x[3];
  }
  for (; i < n; ++i) a |= p[i];
  return a | b | c | d;
}

#if defined(__x86_64__) || defined(__i386__)
/// 32-byte loads into `Acc` accumulators (4 or 8).
template <int Acc>
OFLD_TARGET_AVX2 __attribute__((noinline)) std::uint64_t memread_avx2(const std::uint8_t* p,
                                                                      std::size_t n) {
  OFLD_NO_ELIDE(p, n);
  __m256i a[Acc];
  for (auto& x : a) x = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 32 * Acc <= n; i += 32 * Acc)
    for (int k = 0; k < Acc; ++k)
      a[k] = _mm256_or_si256(a[k], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32 * k)));
  for (; i + 32 <= n; i += 32)
    a[0] = _mm256_or_si256(a[0], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
  __m256i v = a[0];
  for (int k = 1; k < Acc; ++k) v = _mm256_or_si256(v, a[k]);
  __m128i h = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  std::uint64_t r = std::uint64_t(_mm_cvtsi128_si64(h)) | std::uint64_t(_mm_extract_epi64(h, 1));
  for (; i < n; ++i) r |= p[i];
  return r;
}

/// 64-byte loads into `Acc` accumulators; the tail (< 64 bytes) is one masked load, as the
/// AVX-512 checksum kernel does.
template <int Acc>
__attribute__((target("avx512f,avx512bw"), noinline)) std::uint64_t memread_avx512(
    const std::uint8_t* p, std::size_t n) {
  OFLD_NO_ELIDE(p, n);
  __m512i a[Acc];
  for (auto& x : a) x = _mm512_setzero_si512();
  std::size_t i = 0;
  for (; i + 64 * Acc <= n; i += 64 * Acc)
    for (int k = 0; k < Acc; ++k) a[k] = _mm512_or_si512(a[k], _mm512_loadu_si512(p + i + 64 * k));
  for (; i + 64 <= n; i += 64) a[0] = _mm512_or_si512(a[0], _mm512_loadu_si512(p + i));
  if (i < n) {
    const __mmask64 m = _cvtu64_mask64(~0ull >> (64 - (n - i)));
    a[Acc - 1] = _mm512_or_si512(a[Acc - 1], _mm512_maskz_loadu_epi8(m, p + i));
  }
  __m512i v = a[0];
  for (int k = 1; k < Acc; ++k) v = _mm512_or_si512(v, a[k]);
  alignas(64) std::uint64_t t[8];  // (GCC 12's _mm512_reduce_or_epi64 warns under -Werror)
  _mm512_store_si512(t, v);
  return t[0] | t[1] | t[2] | t[3] | t[4] | t[5] | t[6] | t[7];
}
#endif

struct ReadVariant {
  const char* name;  ///< "memread/<isa>x<accumulators>"
  const char* isa;
  std::uint64_t (*fn)(const std::uint8_t*, std::size_t);
};

/// The read loops this CPU runs, narrowest ISA first.
std::vector<ReadVariant> read_variants() {
  std::vector<ReadVariant> v = {{"memread/scalar", "scalar", &memread_scalar}};
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx2")) {
    v.push_back({"memread/avx2x4", "avx2", &memread_avx2<4>});
    v.push_back({"memread/avx2x8", "avx2", &memread_avx2<8>});
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
    v.push_back({"memread/avx512x4", "avx512", &memread_avx512<4>});
    v.push_back({"memread/avx512x8", "avx512", &memread_avx512<8>});
  }
#endif
  return v;
}

volatile std::uint64_t g_sink;

struct AlignedBuf {
  std::unique_ptr<std::uint8_t, decltype(&std::free)> p{nullptr, &std::free};
  explicit AlignedBuf(std::size_t n) {
    p.reset(static_cast<std::uint8_t*>(std::aligned_alloc(64, (n + 63) / 64 * 64)));
    if (!p) throw std::bad_alloc();
  }
  std::uint8_t* get() const { return p.get(); }
};

/// CPU time of this thread: time slices lost to other processes on a shared machine do not
/// count (cache and SMT interference still do).
struct clk {
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }
};

/// Time `op` (one call = `bytes` bytes) and return GB/s for each repetition.
template <class Op>
std::vector<double> time_op(const Op& op, std::size_t bytes, const CsumBenchOptions& opt) {
  // Calibrate: double the iteration count until one batch takes >= 1/8 of a repetition.
  std::uint64_t iters = 1, sink = 0;
  for (;;) {
    auto t0 = clk::now();
    for (std::uint64_t i = 0; i < iters; ++i) sink += op();
    double s = clk::now() - t0;
    if (s >= opt.rep_seconds / 8 || iters >= (1ull << 40)) {
      iters = std::max<std::uint64_t>(1, std::uint64_t(double(iters) * opt.rep_seconds /
                                                       std::max(s, 1e-9)));
      break;
    }
    iters *= 2;
  }
  std::vector<double> gbps;
  for (int r = 0; r < opt.reps; ++r) {
    auto t0 = clk::now();
    for (std::uint64_t i = 0; i < iters; ++i) sink += op();
    double s = clk::now() - t0;
    gbps.push_back(double(bytes) * double(iters) / s / 1e9);
  }
  g_sink = sink;
  return gbps;
}

CsumBenchEntry summarize(std::string name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  CsumBenchEntry e;
  e.name = std::move(name);
  e.min_gbps = v.front();
  e.max_gbps = v.back();
  std::size_t m = v.size() / 2;
  e.median_gbps = (v.size() % 2) ? v[m] : (v[m - 1] + v[m]) / 2;
  return e;
}

}  // namespace

CsumBenchResults run_csum_bench(const CsumBenchOptions& opt) {
  if (opt.reps < 1) throw std::invalid_argument("bench csum: reps must be >= 1");
  if (!(opt.rep_seconds > 0)) throw std::invalid_argument("bench csum: rep_seconds must be > 0");
  for (auto s : opt.sizes)
    if (s == 0) throw std::invalid_argument("bench csum: sizes must be > 0");
  if (opt.offset > 63) throw std::invalid_argument("bench csum: offset must be 0..63");

  CsumBenchResults res;
  res.cpu = cpu_model();
  res.best_kernel = std::string(csum::kernel_name(csum::best_kernel()));
  const std::vector<ReadVariant> variants = read_variants();
  res.read_isa = variants.back().isa;
  res.offset = opt.offset;
#if defined(OFLD_HAVE_DPDK)
  res.have_dpdk = true;
#endif
  for (std::size_t n : opt.sizes) {
    AlignedBuf src(n + opt.offset), dst(n + opt.offset);
    const std::uint8_t* s = src.get() + opt.offset;
    std::uint8_t* d = dst.get() + opt.offset;
    for (std::size_t i = 0; i < n; ++i) src.get()[opt.offset + i] = std::uint8_t(i * 131 + 7);
    std::memset(d, 0, n);

    CsumBenchSize out;
    out.size = n;
    // Every read variant on this buffer, in this run; the fastest median is the baseline.
    std::vector<CsumBenchEntry> reads;
    for (const auto& rv : variants)
      reads.push_back(summarize(rv.name, time_op([&] { return rv.fn(s, n); }, n, opt)));
    CsumBenchEntry base = *std::max_element(
        reads.begin(), reads.end(),
        [](const CsumBenchEntry& a, const CsumBenchEntry& b) { return a.median_gbps < b.median_gbps; });
    base.name = "memread";
    out.entries.push_back(base);
    out.entries.push_back(summarize("memcpy", time_op(
                                                  [&] {
                                                    std::memcpy(d, s, n);
                                                    asm volatile("" : : "r"(d) : "memory");
                                                    return std::uint64_t(d[0]);
                                                  },
                                                  n, opt)));
    double best_med = 0;
    for (Kernel k : {Kernel::Reference, Kernel::Scalar64, Kernel::SSE, Kernel::AVX2,
                     Kernel::AVX512}) {
      if (!csum::kernel_supported(k)) continue;
      auto e = summarize("csum/" + std::string(csum::kernel_name(k)),
                         time_op([&] { return std::uint64_t(csum::csum_partial_with(k, s, n)); },
                                 n, opt));
      if (k == csum::best_kernel()) best_med = e.median_gbps;
      out.entries.push_back(std::move(e));
    }
    // The public entry point as callers see it: inline up to 64 bytes, the chosen kernel
    // through the dispatch above. The ratios use it. The pointer is laundered through an
    // empty asm on every call (here and for DPDK's inline sum) so that neither inline sum
    // can be hoisted out of the timing loop.
    {
      auto e = summarize("csum_partial", time_op(
                                             [&] {
                                               const std::uint8_t* q = s;
                                               asm volatile("" : "+r"(q));
                                               return std::uint64_t(csum::csum_partial(q, n));
                                             },
                                             n, opt));
      best_med = e.median_gbps;
      out.entries.push_back(std::move(e));
    }
    Kernel best = csum::best_kernel();
    auto copy = summarize(
        "copy+csum/" + std::string(csum::kernel_name(best)),
        time_op([&] { return std::uint64_t(csum::csum_partial_copy_with(best, d, s, n)); }, n,
                opt));
    out.entries.push_back(copy);
#if defined(OFLD_HAVE_DPDK)
    auto dp = summarize("dpdk/rte_raw_cksum",
                        time_op(
                                    [&] {
                                      const std::uint8_t* q = s;
                                      asm volatile("" : "+r"(q));
                                      return std::uint64_t(rte_raw_cksum(q, n));
                                    },
                                    n, opt));
    out.entries.push_back(dp);
    out.best_over_dpdk = best_med / dp.median_gbps;
#endif
    out.best_over_read = best_med / out.entries[0].median_gbps;
    out.copy_over_memcpy = copy.median_gbps / out.entries[1].median_gbps;
    for (auto& e : reads) out.entries.push_back(std::move(e));
    res.sizes.push_back(std::move(out));
  }
  return res;
}

}  // namespace ofld::bench

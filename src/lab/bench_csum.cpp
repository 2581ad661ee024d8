// Checksum throughput runner (see include/ofld/lab/bench_csum.hpp).
#include "ofld/lab/bench_csum.hpp"

#include <algorithm>
#include <ctime>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

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

namespace ofld::tools {
namespace {

using csum::Kernel;

/// Plain memory read: every byte loaded once, OR-reduced so the loads cannot be elided.
std::uint64_t memread_scalar(const std::uint8_t* p, std::size_t n) {
  std::uint64_t a = 0, b = 0;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::uint64_t x, y;
    std::memcpy(&x, p + i, 8);
    std::memcpy(&y, p + i + 8, 8);
    a |= x;
    b |= y;
  }
  for (; i < n; ++i) a |= p[i];
  return a | b;
}

#if defined(__x86_64__) || defined(__i386__)
OFLD_TARGET_AVX2 std::uint64_t memread_avx2(const std::uint8_t* p, std::size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  std::size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    a0 = _mm256_or_si256(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_or_si256(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_or_si256(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_or_si256(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  for (; i + 32 <= n; i += 32)
    a0 = _mm256_or_si256(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
  __m256i v = _mm256_or_si256(_mm256_or_si256(a0, a1), _mm256_or_si256(a2, a3));
  __m128i h = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  std::uint64_t r = std::uint64_t(_mm_cvtsi128_si64(h)) | std::uint64_t(_mm_extract_epi64(h, 1));
  for (; i < n; ++i) r |= p[i];
  return r;
}
#endif

std::uint64_t memread(const std::uint8_t* p, std::size_t n) {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return memread_avx2(p, n);
#endif
  return memread_scalar(p, n);
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

  CsumBenchResults res;
  res.best_kernel = std::string(csum::kernel_name(csum::best_kernel()));
#if defined(OFLD_HAVE_DPDK)
  res.have_dpdk = true;
#endif
  for (std::size_t n : opt.sizes) {
    AlignedBuf src(n), dst(n);
    for (std::size_t i = 0; i < n; ++i) src.get()[i] = std::uint8_t(i * 131 + 7);
    std::memset(dst.get(), 0, n);
    const std::uint8_t* s = src.get();
    std::uint8_t* d = dst.get();

    CsumBenchSize out;
    out.size = n;
    out.entries.push_back(summarize("memread", time_op([&] { return memread(s, n); }, n, opt)));
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
    Kernel best = csum::best_kernel();
    auto copy = summarize(
        "copy+csum/" + std::string(csum::kernel_name(best)),
        time_op([&] { return std::uint64_t(csum::csum_partial_copy_with(best, d, s, n)); }, n,
                opt));
    out.entries.push_back(copy);
#if defined(OFLD_HAVE_DPDK)
    auto dp = summarize("dpdk/rte_raw_cksum",
                        time_op([&] { return std::uint64_t(rte_raw_cksum(s, n)); }, n, opt));
    out.entries.push_back(dp);
    out.best_over_dpdk = best_med / dp.median_gbps;
#endif
    out.best_over_read = best_med / out.entries[0].median_gbps;
    out.copy_over_memcpy = copy.median_gbps / out.entries[1].median_gbps;
    res.sizes.push_back(std::move(out));
  }
  return res;
}

}  // namespace ofld::tools

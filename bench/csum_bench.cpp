// Google Benchmark: checksum kernels, fused copy-and-sum, and memory baselines.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "ofld/core/csum.hpp"

using namespace ofld::csum;

namespace {

std::vector<std::uint8_t> make_buf(std::size_t n) {
  std::vector<std::uint8_t> v(n + 64);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::uint8_t(i * 131 + 7);
  return v;
}

void BM_Csum(benchmark::State& st, Kernel k) {
  if (!kernel_supported(k)) {
    st.SkipWithError("kernel not supported on this CPU");
    return;
  }
  auto n = std::size_t(st.range(0));
  auto buf = make_buf(n);
  for (auto _ : st) benchmark::DoNotOptimize(csum_partial_with(k, buf.data(), n));
  st.SetBytesProcessed(std::int64_t(st.iterations()) * std::int64_t(n));
}

void BM_CopyCsum(benchmark::State& st, Kernel k) {
  if (!kernel_supported(k)) {
    st.SkipWithError("kernel not supported on this CPU");
    return;
  }
  auto n = std::size_t(st.range(0));
  auto src = make_buf(n), dst = make_buf(n);
  for (auto _ : st) {
    benchmark::DoNotOptimize(csum_partial_copy_with(k, dst.data(), src.data(), n));
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(std::int64_t(st.iterations()) * std::int64_t(n));
}

void BM_MemRead(benchmark::State& st) {
  auto n = std::size_t(st.range(0));
  auto buf = make_buf(n);
  for (auto _ : st) {
    std::uint64_t a = 0, b = 0;
    for (std::size_t i = 0; i + 16 <= n; i += 16) {
      std::uint64_t x, y;
      std::memcpy(&x, buf.data() + i, 8);
      std::memcpy(&y, buf.data() + i + 8, 8);
      a |= x;
      b |= y;
    }
    benchmark::DoNotOptimize(a | b);
  }
  st.SetBytesProcessed(std::int64_t(st.iterations()) * std::int64_t(n));
}

void BM_Memcpy(benchmark::State& st) {
  auto n = std::size_t(st.range(0));
  auto src = make_buf(n), dst = make_buf(n);
  for (auto _ : st) {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(std::int64_t(st.iterations()) * std::int64_t(n));
}

#define OFLD_SIZES ->Arg(64)->Arg(1448)->Arg(1500)->Arg(9000)->Arg(65536)

BENCHMARK_CAPTURE(BM_Csum, reference, Kernel::Reference) OFLD_SIZES;
BENCHMARK_CAPTURE(BM_Csum, scalar64, Kernel::Scalar64) OFLD_SIZES;
BENCHMARK_CAPTURE(BM_Csum, sse, Kernel::SSE) OFLD_SIZES;
BENCHMARK_CAPTURE(BM_Csum, avx2, Kernel::AVX2) OFLD_SIZES;
BENCHMARK_CAPTURE(BM_Csum, avx512, Kernel::AVX512) OFLD_SIZES;
BENCHMARK_CAPTURE(BM_CopyCsum, sse, Kernel::SSE) OFLD_SIZES;
BENCHMARK_CAPTURE(BM_CopyCsum, avx2, Kernel::AVX2) OFLD_SIZES;
BENCHMARK_CAPTURE(BM_CopyCsum, avx512, Kernel::AVX512) OFLD_SIZES;
BENCHMARK(BM_MemRead) OFLD_SIZES;
BENCHMARK(BM_Memcpy) OFLD_SIZES;

}  // namespace

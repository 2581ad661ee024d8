// Google Benchmark: checksum kernels, fused copy-and-sum, and memory baselines.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/core/skb_copy_csum.hpp"

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

// A UDP_SEGMENT train filled as the tunnel's transmit fills it (issue 16): 44 TCP segments,
// each a 54-byte head (Ethernet/IPv4/TCP) plus a 1398-byte fragment of one 64 KB payload
// buffer, written behind an 8-byte tunnel header with the TCP checksum finished in the train.
// TwoPass: copy_bits then checksum_help_bytes over the copy; OnePass: copy_and_checksum_help.
void train_fill(benchmark::State& st, bool one_pass) {
  constexpr std::size_t kHead = 54, kMss = 1398, kSegs = 44, kTun = 8;
  const auto payload = ofld::core::Buffer::make(make_buf(kSegs * kMss));
  std::vector<ofld::core::Packet> segs;
  auto hdr = make_buf(kHead);
  for (std::size_t i = 0; i < kSegs; ++i) {
    segs.push_back(ofld::core::Packet::from_bytes({hdr.data(), kHead}));
    if (segs.back().add_frag(payload, i * kMss, kMss) != ofld::core::PacketError::Ok)
      st.SkipWithError("add_frag");
  }
  std::vector<std::uint8_t> train(kSegs * (kTun + kHead + kMss));
  for (auto _ : st) {
    std::uint8_t* d = train.data();
    for (const auto& s : segs) {
      std::memset(d, 0x0c, kTun);
      const std::span<std::uint8_t> seg(d + kTun, s.len());
      if (one_pass) {
        benchmark::DoNotOptimize(ofld::core::copy_and_checksum_help(s, seg, 34, 16, false));
      } else {
        benchmark::DoNotOptimize(s.copy_bits(0, seg));
        benchmark::DoNotOptimize(ofld::core::checksum_help_bytes(seg, 34, 16, false));
      }
      d += kTun + s.len();
    }
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(std::int64_t(st.iterations() * kSegs * kMss));
}
void BM_TrainFillTwoPass(benchmark::State& st) { train_fill(st, false); }
void BM_TrainFillOnePass(benchmark::State& st) { train_fill(st, true); }
BENCHMARK(BM_TrainFillTwoPass);
BENCHMARK(BM_TrainFillOnePass);

}  // namespace

// Google Benchmark: GRO of one TCPv4 flow of 1448-byte segments in batches of 64 (manual time:
// only receive + poll end are timed; packets are built outside the timed region). The DPDK
// comparison lives in `ofld bench gro` (bench::run_gro_bench, bench/runners).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>

#include "ofld/core/csum.hpp"
#include "ofld/gro/engine.hpp"

namespace {

std::vector<std::vector<std::uint8_t>> frames() {
  namespace cs = ofld::csum;
  std::vector<std::vector<std::uint8_t>> v;
  for (std::size_t i = 0; i < 64; ++i) {
    std::vector<std::uint8_t> f(54 + 1448, std::uint8_t(i));
    const std::uint8_t hdr[54] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0, 0x45, 0, 0x05, 0xd0, 0, 0,
                                  0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 0x9c, 0x40, 0x1f,
                                  0x90, 0, 0, 0, 0, 0, 0, 0, 1, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0};
    std::memcpy(f.data(), hdr, 54);
    f[18] = std::uint8_t(i >> 8);
    f[19] = std::uint8_t(i);
    const std::uint16_t ic = cs::ip_compute_csum(f.data() + 14, 20);
    f[24] = std::uint8_t(ic >> 8);
    f[25] = std::uint8_t(ic);
    const std::uint32_t seq = 1000 + std::uint32_t(i * 1448);
    f[38] = std::uint8_t(seq >> 24); f[39] = std::uint8_t(seq >> 16);
    f[40] = std::uint8_t(seq >> 8); f[41] = std::uint8_t(seq);
    const auto ps = cs::csum_tcpudp_nofold(f.data() + 26, f.data() + 30, 1468, 6, 0);
    const std::uint16_t tc = cs::csum_fold(cs::csum_partial(f.data() + 34, 1468, ps));
    f[50] = std::uint8_t(tc >> 8);
    f[51] = std::uint8_t(tc);
    v.push_back(std::move(f));
  }
  return v;
}

void run(benchmark::State& st, bool prevalidated) {
  const auto fr = frames();
  ofld::gro::Engine e;
  std::vector<ofld::core::Packet> pk;
  for (auto _ : st) {
    pk.clear();
    for (const auto& f : fr) {
      auto p = ofld::core::Packet::from_bytes_frags(f, 54);
      if (prevalidated) p.csum = ofld::core::CsumUnnecessary{};
      pk.push_back(std::move(p));
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& p : pk) e.receive(std::move(p));
    e.poll_end();
    const auto t1 = std::chrono::steady_clock::now();
    e.output().clear();
    st.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  st.SetItemsProcessed(std::int64_t(st.iterations()) * 64);
}

void BM_GroTcp4Prevalidated(benchmark::State& st) { run(st, true); }
void BM_GroTcp4Validated(benchmark::State& st) { run(st, false); }
BENCHMARK(BM_GroTcp4Prevalidated)->UseManualTime();
BENCHMARK(BM_GroTcp4Validated)->UseManualTime();

}  // namespace

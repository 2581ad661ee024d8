// Google Benchmark: software GSO of a 64 KB TCPv4 super-packet (44 × 1448 B) per
// construction mode (X-7..X-9). `ofld bench gso` is the product-facing runner with the DPDK
// comparison; this executable is for profiling one mode at a time.
#include <benchmark/benchmark.h>

#include "ofld/gso/gso.hpp"
#include "ofld/wire/bytes.hpp"

namespace {

using namespace ofld;

core::Packet make_packet(const std::vector<std::uint8_t>& f) {
  core::Packet p = core::Packet::from_bytes_frags(f, 54, 4096);
  p.mac_header = 0;
  p.network_header = 14;
  p.transport_header = 34;
  p.protocol = 0x0800;
  p.csum = core::CsumPartial{34, 16, false};
  p.gso = {1448, 0, core::skb_gso::TCPV4};
  return p;
}

std::vector<std::uint8_t> make_frame() {
  const std::size_t payload = 44 * 1448;
  std::vector<std::uint8_t> f(54 + payload, 0x5a);
  wire::store_be16(&f[12], 0x0800);
  f[14] = 0x45;
  wire::store_be16(&f[16], std::uint16_t(40 + payload));
  f[20] = 0x40, f[22] = 64, f[23] = 6;
  f[46] = 0x50, f[47] = 0x10;
  return f;
}

void run(benchmark::State& st, core::Features feat) {
  const auto f = make_frame();
  core::Device dev;
  dev.features = dev.hw_enc_features = feat;
  for (auto _ : st) {
    st.PauseTiming();
    core::Packet p = make_packet(f);
    st.ResumeTiming();
    auto r = gso::gso_segment(std::move(p), feat, dev);
    benchmark::DoNotOptimize(r.segs.data());
  }
  st.counters["ns_per_segment"] = benchmark::Counter(
      double(st.iterations()) * 44, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_GsoSgRef(benchmark::State& st) { run(st, core::netif_f::SG | core::netif_f::HW_CSUM); }
void BM_GsoCopy(benchmark::State& st) { run(st, core::netif_f::HW_CSUM); }
void BM_GsoCopySum(benchmark::State& st) { run(st, core::Features{}); }
void BM_GsoSgSum(benchmark::State& st) { run(st, core::netif_f::SG); }

}  // namespace

BENCHMARK(BM_GsoSgRef);
BENCHMARK(BM_GsoCopy);
BENCHMARK(BM_GsoCopySum);
BENCHMARK(BM_GsoSgSum);

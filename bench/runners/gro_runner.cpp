// `ofld bench gro`: ns per packet for one flow of 1448-byte TCPv4 segments, ofld vs DPDK.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <cstring>

#include "ofld/core/csum.hpp"
#include "ofld/gro/engine.hpp"
#include "runners/bench.hpp"

#ifdef OFLD_HAVE_DPDK
#include <sched.h>

#include <rte_eal.h>
#include <rte_gro.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#endif

namespace ofld::bench {

namespace {

namespace cs = ofld::csum;
constexpr std::size_t kBatch = 64, kMss = 1448, kHdr = 54;

std::vector<std::vector<std::uint8_t>> make_frames(std::size_t n) {
  std::vector<std::vector<std::uint8_t>> v;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint8_t> f(kHdr + kMss, 0);
    for (std::size_t j = kHdr; j < f.size(); ++j) f[j] = std::uint8_t(j * 7 + i);
    const std::uint8_t mac[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
    std::memcpy(f.data(), mac, 12);
    f[12] = 0x08;
    std::uint8_t* ip = f.data() + 14;
    ip[0] = 0x45;
    ip[2] = std::uint8_t((20 + 20 + kMss) >> 8);
    ip[3] = std::uint8_t(20 + 20 + kMss);
    ip[4] = std::uint8_t(i >> 8);
    ip[5] = std::uint8_t(i);
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = 6;
    const std::uint8_t a[8] = {10, 0, 0, 1, 10, 0, 0, 2};
    std::memcpy(ip + 12, a, 8);
    const std::uint16_t ic = cs::ip_compute_csum(ip, 20);
    ip[10] = std::uint8_t(ic >> 8);
    ip[11] = std::uint8_t(ic);
    std::uint8_t* th = ip + 20;
    th[0] = 0x9c; th[1] = 0x40; th[2] = 0x1f; th[3] = 0x90;
    const std::uint32_t seq = 1000 + std::uint32_t(i * kMss);
    th[4] = std::uint8_t(seq >> 24); th[5] = std::uint8_t(seq >> 16);
    th[6] = std::uint8_t(seq >> 8); th[7] = std::uint8_t(seq);
    th[11] = 1;
    th[12] = 0x50;
    th[13] = 0x10;
    th[14] = 0xff; th[15] = 0xff;
    const cs::wsum ps = cs::csum_tcpudp_nofold(ip + 12, ip + 16, 20 + kMss, 6, 0);
    const std::uint16_t tc = cs::csum_fold(cs::csum_partial(th, 20 + kMss, ps));
    th[16] = std::uint8_t(tc >> 8);
    th[17] = std::uint8_t(tc);
    v.push_back(std::move(f));
  }
  return v;
}

// Thread CPU time (CLOCK_THREAD_CPUTIME_ID), as in `ofld bench gso`: the machines are shared
// (BENCHMARKS.md) and wall time mostly measures preemption by other work.
double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// What the two clock reads of one timed interval add to it: CLOCK_THREAD_CPUTIME_ID is a system
// call (measured 1.4 us in the 2-vCPU Zen 5 VM, where the vDSO's CLOCK_MONOTONIC takes 27 ns),
// and a batch of 64 packets takes a few microseconds, so uncorrected the reads add about 20 ns to
// every packet of ofld and of DPDK alike, and pull their ratio toward 1. The median of 101
// back-to-back pairs, taken once; every timed batch subtracts it.
double clock_overhead_ns() {
  static const double c = [] {
    std::vector<double> v;
    for (int i = 0; i < 101; ++i) {
      const double a = now_ns();
      v.push_back(now_ns() - a);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }();
  return c;
}

GroBenchStat stat(std::string name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {std::move(name), v[v.size() / 2], v.front(), v.back()};
}

// One rep = `iters` batches of 64 packets; packets are built before the clock starts.
double time_ofld(const std::vector<std::vector<std::uint8_t>>& frames, bool prevalidated,
                 int iters, gro::Engine& e) {
  std::vector<core::Packet> pk;
  pk.reserve(frames.size());
  double total = 0;
  for (int it = 0; it < iters; ++it) {
    pk.clear();
    for (const auto& f : frames) {
      auto p = core::Packet::from_bytes_frags(f, kHdr);
      if (prevalidated) p.csum = core::CsumUnnecessary{};
      pk.push_back(std::move(p));
    }
    // Timed: GRO of the batch and the end of every input packet (the shells of merged
    // packets are destroyed inside the clock too, so no per-packet cost escapes it).
    const double t0 = now_ns();
    e.receive_batch(pk);
    e.poll_end();
    pk.clear();
    const double t1 = now_ns();
    e.output().clear();
    total += t1 - t0 - clock_overhead_ns();
  }
  return total / double(iters) / double(frames.size());
}

// The validation's own cost, same frames and cache state as time_ofld: the software
// checksum of each packet's TCP segment (20-byte header in the head + 1448 payload bytes in
// the fragment, seeded with the pseudo-header, folded and tested), nothing else.
double time_csum_only(const std::vector<std::vector<std::uint8_t>>& frames, int iters) {
  std::vector<core::Packet> pk;
  pk.reserve(kBatch);
  double total = 0;
  unsigned bad = 0;
  for (int it = 0; it < iters; ++it) {
    pk.clear();
    for (const auto& f : frames) pk.push_back(core::Packet::from_bytes_frags(f, kHdr));
    const double t0 = now_ns();
    for (const auto& p : pk) {
      const std::uint8_t* ip = p.data() + 14;
      cs::wsum w = cs::csum_tcpudp_nofold(ip + 12, ip + 16, 20 + kMss, 6, 0);
      w = cs::csum_partial(ip + 20, 20, w);
      const core::Frag& fr = p.frags()[0];
      w = cs::csum_block_add(w, cs::csum_partial(fr.buf->bytes.data() + fr.off, fr.len), 20);
      bad += cs::csum_fold(w) != 0;
    }
    const double t1 = now_ns();
    total += t1 - t0 - clock_overhead_ns();
  }
  if (bad) std::fprintf(stderr, "gro bench: %u frames failed their checksum\n", bad);
  return total / double(iters * int(kBatch));
}

#ifdef OFLD_HAVE_DPDK
struct Dpdk {
  rte_mempool* pool = nullptr;
  void* ctx = nullptr;
  bool ok = false;
  std::string why;
};

Dpdk& dpdk() {
  static Dpdk d = [] {
    Dpdk x;
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpu = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) { cpu = c; break; }
    std::string l = std::to_string(cpu);
    const char* argv[] = {"ofld", "--no-huge", "--no-pci", "-m", "256", "-l", l.c_str(),
                          "--no-shconf", "--no-telemetry", "--log-level=lib.eal:error"};
    if (rte_eal_init(10, const_cast<char**>(argv)) < 0) {
      x.why = "rte_eal_init failed";
      return x;
    }
    x.pool = rte_pktmbuf_pool_create("ofld_gro", 4096, 0, 0, 2048 + RTE_PKTMBUF_HEADROOM,
                                     SOCKET_ID_ANY);
    if (!x.pool) {
      x.why = "mempool";
      return x;
    }
    rte_gro_param prm{};
    prm.gro_types = RTE_GRO_TCP_IPV4;
    prm.max_flow_num = 64;
    prm.max_item_per_flow = 64;
    prm.socket_id = SOCKET_ID_ANY;
    x.ctx = rte_gro_ctx_create(&prm);
    x.ok = x.ctx != nullptr;
    if (!x.ok) x.why = "rte_gro_ctx_create";
    return x;
  }();
  return d;
}

double time_dpdk(const std::vector<std::vector<std::uint8_t>>& frames, int iters) {
  Dpdk& d = dpdk();
  rte_mbuf* pkts[kBatch];
  rte_mbuf* out[kBatch];
  double total = 0;
  for (int it = 0; it < iters; ++it) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      rte_mbuf* m = rte_pktmbuf_alloc(d.pool);
      char* p = rte_pktmbuf_append(m, std::uint16_t(frames[i].size()));
      std::memcpy(p, frames[i].data(), frames[i].size());
      m->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP;
      m->l2_len = 14;
      m->l3_len = 20;
      m->l4_len = 20;
      pkts[i] = m;
    }
    const double t0 = now_ns();
    const std::uint16_t left = rte_gro_reassemble(pkts, kBatch, d.ctx);
    const std::uint16_t fl = rte_gro_timeout_flush(d.ctx, 0, RTE_GRO_TCP_IPV4, out, kBatch);
    const double t1 = now_ns();
    for (std::uint16_t i = 0; i < left; ++i) rte_pktmbuf_free(pkts[i]);
    for (std::uint16_t i = 0; i < fl; ++i) rte_pktmbuf_free(out[i]);
    total += t1 - t0 - clock_overhead_ns();
  }
  return total / double(iters * int(kBatch));
}
#endif

}  // namespace

GroBenchResult run_gro_bench(int reps) {
  if (reps < 1) reps = 1;
  const auto frames = make_frames(kBatch);
  GroBenchResult r;
  const int iters = 400;
  gro::Engine e1, e2;
  std::vector<double> pre, val, dp, cso;
  // Warm up, then alternate the configurations rep by rep (A B C A B C ...).
  time_ofld(frames, true, 50, e1);
  time_ofld(frames, false, 50, e2);
#ifdef OFLD_HAVE_DPDK
  r.have_dpdk = dpdk().ok;
  if (r.have_dpdk) time_dpdk(frames, 50);
#endif
  for (int i = 0; i < reps; ++i) {
    pre.push_back(time_ofld(frames, true, iters, e1));
    val.push_back(time_ofld(frames, false, iters, e2));
    cso.push_back(time_csum_only(frames, iters));
#ifdef OFLD_HAVE_DPDK
    if (r.have_dpdk) dp.push_back(time_dpdk(frames, iters));
#endif
  }
  r.entries.push_back(stat("ofld_prevalidated", pre));
  r.entries.push_back(stat("ofld_validated", val));
  if (!dp.empty()) {
    r.entries.push_back(stat("dpdk_rte_gro_reassemble", dp));
    r.prevalidated_over_dpdk = r.entries[0].median_ns / r.entries[2].median_ns;
    r.validated_over_dpdk = r.entries[1].median_ns / r.entries[2].median_ns;
  }
  r.entries.push_back(stat("checksum_only", cso));
  if (!dp.empty()) r.csum_only_over_dpdk = r.entries.back().median_ns / r.entries[2].median_ns;

  // BIG TCP: the same 1448-byte segments, 128 per batch, with the default limit (aggregates
  // of 45 segments, 65200 bytes) and with gro_ipv4_max_size 185000 (aggregates of 127
  // segments, 183936 bytes); ns/packet of equal packets is the per-byte cost.
  {
    const auto frames128 = make_frames(2 * kBatch);
    gro::EngineOptions dflt;
    dflt.batch = 2 * kBatch;  // one poll per batch of 128
    gro::EngineOptions big = dflt;
    big.config.gro_ipv4_max_size = 185000;
    gro::Engine e64(dflt), e185(big);
    time_ofld(frames128, true, 25, e64);
    time_ofld(frames128, true, 25, e185);
    std::vector<double> a, b;
    for (int i = 0; i < reps; ++i) {
      a.push_back(time_ofld(frames128, true, iters / 2, e64));
      b.push_back(time_ofld(frames128, true, iters / 2, e185));
    }
    r.entries.push_back(stat("ofld_prevalidated_64k_aggr", a));
    r.entries.push_back(stat("ofld_prevalidated_185k_aggr", b));
    r.big_over_64k = r.entries.back().median_ns / r.entries[r.entries.size() - 2].median_ns;
  }
  r.clock_overhead_ns = clock_overhead_ns();
  r.note =
      "one TCPv4 flow, 1448-byte segments, batches of 64 ending in a flush; DPDK's GRO does no "
      "checksum work (compare it with ofld_prevalidated); ofld_validated sums every segment; "
      "checksum_only is that sum alone (no GRO), the floor under ofld_validated; *_64k_aggr / "
      "*_185k_aggr: 128 segments per batch, default limit vs gro_ipv4_max_size 185000 (BIG "
      "TCP), equal packets so ns/packet is the per-byte cost; each batch's time is less the "
      "clock reads' own (clock_overhead_ns)";
#ifndef OFLD_HAVE_DPDK
  r.note += "; built without DPDK";
#endif
  return r;
}

nlohmann::json to_json(const GroBenchResult& r) {
  nlohmann::json j;
  j["unit"] = "ns/packet";
  j["have_dpdk"] = r.have_dpdk;
  for (const auto& e : r.entries)
    j["entries"].push_back({{"name", e.name}, {"median", e.median_ns}, {"min", e.min_ns}, {"max", e.max_ns}});
  if (r.have_dpdk) {
    j["ratio"]["prevalidated_over_dpdk"] = r.prevalidated_over_dpdk;
    j["ratio"]["validated_over_dpdk"] = r.validated_over_dpdk;
    j["ratio"]["checksum_only_over_dpdk"] = r.csum_only_over_dpdk;
  }
  j["ratio"]["big_tcp_185k_over_64k"] = r.big_over_64k;
  j["clock_overhead_ns"] = r.clock_overhead_ns;
  j["note"] = r.note;
  return j;
}

}  // namespace ofld::bench

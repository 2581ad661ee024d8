// `ofld bench gso`: ns per segment for a 64 KB TCPv4 super-packet → 44 segments, per
// construction mode, beside DPDK's rte_gso_segment on the same bytes (BENCHMARKS.md).
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "ofld/core/features.hpp"
#include "ofld/gso/gso.hpp"
#include "runners/bench.hpp"
#include "runners/bench_csum.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

#ifdef OFLD_HAVE_DPDK
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_gso.h>
#include <rte_mbuf.h>
#endif

namespace ofld::bench {

namespace {

// Thread CPU time (CLOCK_THREAD_CPUTIME_ID): the machines are shared (BENCHMARKS.md), and
// wall time mostly measures preemption by other work.
double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}
constexpr std::size_t kMss = 1448, kSegs = 44, kPayload = kMss * kSegs;  // 63712 B
constexpr std::size_t kHdr = 54;

std::vector<std::uint8_t> bench_frame() {
  std::vector<std::uint8_t> f(kHdr + kPayload);
  f[0] = 2, f[5] = 2, f[6] = 2, f[11] = 1;
  wire::store_be16(&f[12], 0x0800);
  f[14] = 0x45;
  wire::store_be16(&f[16], std::uint16_t(40 + kPayload));
  wire::store_be16(&f[18], 1000);
  f[20] = 0x40, f[22] = 64, f[23] = 6;
  f[26] = 10, f[29] = 1, f[30] = 10, f[33] = 2;
  wire::store_be16(&f[24], csum::ip_compute_csum(&f[14], 20));
  wire::store_be16(&f[34], 40000);
  wire::store_be16(&f[36], 5201);
  wire::store_be32(&f[38], 1);
  f[46] = 0x50, f[47] = 0x18;
  wire::store_be16(&f[48], 1024);
  for (std::size_t i = 0; i < kPayload; ++i) f[kHdr + i] = std::uint8_t(i * 31 + (i >> 9));
  wire::store_be16(&f[50], csum::csum_fold16(csum::csum_tcpudp_nofold(&f[26], &f[30],
                                                                      std::uint32_t(20 + kPayload), 6)));
  return f;
}

core::Packet bench_packet(const std::vector<std::uint8_t>& f) {
  // A TCP socket's skb: headers linear, payload in 4 KiB page fragments.
  core::Packet p = core::Packet::from_bytes_frags(f, kHdr, 4096);
  p.mac_header = 0;
  p.network_header = 14;
  p.transport_header = 34;
  p.protocol = 0x0800;
  p.csum = core::CsumPartial{34, 16, false};
  p.gso = {std::uint16_t(kMss), 0, core::skb_gso::TCPV4};
  return p;
}

GsoBenchRow summarize(std::string name, std::vector<double> v, std::string note = {}) {
  std::sort(v.begin(), v.end());
  GsoBenchRow r;
  r.name = std::move(name);
  r.ns_per_segment_median = v[v.size() / 2];
  r.ns_per_segment_min = v.front();
  r.ns_per_segment_max = v.back();
  r.segments = kSegs;
  r.note = std::move(note);
  return r;
}

// One repetition = `iters` runs; returns ns per segment.
template <class F>
double time_rep(F&& once, int iters) {
  const double t0 = cpu_ns();
  for (int i = 0; i < iters; ++i) once();
  return (cpu_ns() - t0) / double(iters) / kSegs;
}

// The bench frame inside a UDP tunnel to `dport`: outer Ethernet / IPv4 (DF) / UDP (checksum
// on: UDP_TUNNEL_CSUM) / `tunnel` header bytes / the bench frame (inner Ethernet).
std::vector<std::uint8_t> tunnel_frame(std::uint16_t dport, const std::vector<std::uint8_t>& tunnel) {
  const auto in = bench_frame();
  const std::size_t ulen = 8 + tunnel.size() + in.size();
  std::vector<std::uint8_t> f(14 + 20);
  // Room for the whole frame up front (GCC 12 at -O3 otherwise reports a false
  // -Warray-bounds in the vector's growth path once csum_partial is inline).
  f.reserve(14 + 20 + ulen);
  f[0] = 2, f[5] = 4, f[6] = 2, f[11] = 3;
  wire::store_be16(&f[12], 0x0800);
  f[14] = 0x45;
  wire::store_be16(&f[16], std::uint16_t(20 + ulen));
  f[20] = 0x40, f[22] = 64, f[23] = 17;
  f[26] = 192, f[27] = 0, f[28] = 2, f[29] = 1, f[30] = 192, f[31] = 0, f[32] = 2, f[33] = 2;
  wire::store_be16(&f[24], csum::ip_compute_csum(&f[14], 20));
  std::uint8_t uh[8] = {0xc3, 0x50, 0, 0, 0, 0, 0, 0};
  wire::store_be16(uh + 2, dport);
  wire::store_be16(uh + 4, std::uint16_t(ulen));
  f.insert(f.end(), uh, uh + 8);
  f.insert(f.end(), tunnel.begin(), tunnel.end());
  f.insert(f.end(), in.begin(), in.end());
  const std::uint16_t c = csum::csum_fold16(csum::csum_tcpudp_nofold(
      &f[26], &f[30], std::uint32_t(ulen), 17, csum::csum_partial(&f[34], ulen, 0)));
  wire::store_be16(&f[40], std::uint16_t(~c) == 0 ? 0xffff : std::uint16_t(~c));
  return f;
}

// A socket-built GSO packet of `f` (prepare_frame: seeds, offsets, gso_type; payload in 4 KiB
// page fragments), or an empty packet when it does not prepare.
core::Packet tunnel_packet(const std::vector<std::uint8_t>& f) {
  auto l = wire::parse_frame(f, wire::LinkType::Ethernet, {});
  if (!l) return core::Packet{};
  gso::PrepareOptions o;
  o.gso_size = std::uint16_t(kMss);
  o.frag_size = 4096;
  auto pr = gso::prepare_frame(f, l.value(), o);
  return pr.status == gso::PrepareStatus::Gso ? std::move(pr.pkt) : core::Packet{};
}

#ifdef OFLD_HAVE_DPDK
int first_allowed_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) return c;
  return 0;
}

bool eal_up(std::string& err) {
  static int state = 0;  // 0 untried, 1 ok, -1 failed
  static std::string msg;
  if (state == 0) {
    std::string cpu = std::to_string(first_allowed_cpu());
    std::vector<std::string> args = {"ofld", "--no-huge", "--no-pci", "-m", "256", "-l", cpu,
                                     "--no-shconf", "--no-telemetry", "--log-level=lib.eal:error"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    state = rte_eal_init(int(argv.size()), argv.data()) >= 0 ? 1 : -1;
    if (state < 0) msg = "rte_eal_init failed";
  }
  err = msg;
  return state == 1;
}
#endif

}  // namespace

GsoBenchResults run_gso_bench(int reps) {
  GsoBenchResults res;
  res.payload = kPayload;
  res.mss = kMss;
  res.segments = kSegs;
  res.reps = std::size_t(reps);
  const auto frame = bench_frame();
  const int iters = 200;

  struct Mode {
    const char* name;
    core::Features f;
    const char* note;
  };
  namespace nf = core::netif_f;
  const Mode modes[] = {
      {"ofld sg-ref (SG+HW_CSUM)", nf::SG | nf::HW_CSUM, "fragments referenced, TCP seeds per X-21"},
      {"ofld copy (HW_CSUM)", nf::HW_CSUM, "payload copied, no sum (X-8)"},
      {"ofld copy-sum (none)", core::Features{}, "copy and checksum in one pass (X-8)"},
      {"ofld sg+sum (SG)", nf::SG, "fragments referenced, then summed (X-9)"},
  };
  // Interleave modes per repetition (A B C A B C ...) so drift hits all alike.
  std::vector<std::vector<double>> samples(std::size(modes));
  std::vector<core::Packet> inputs;
#ifdef OFLD_HAVE_DPDK
  std::vector<double> dpdk_samples;
  std::string err;
  rte_mempool* in_pool = nullptr;
  rte_mempool* direct = nullptr;
  rte_mempool* indirect = nullptr;
  rte_mbuf* in = nullptr;
  if (eal_up(err)) {
    in_pool = rte_pktmbuf_pool_create("ofld_gso_in", 7, 0, 0, 65535, SOCKET_ID_ANY);
    direct = rte_pktmbuf_pool_create("ofld_gso_dir", 1023, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    indirect = rte_pktmbuf_pool_create("ofld_gso_ind", 1023, 64, 0, 0, SOCKET_ID_ANY);
    if (in_pool && direct && indirect) in = rte_pktmbuf_alloc(in_pool);
    if (in) {
      char* d = rte_pktmbuf_append(in, std::uint16_t(frame.size()));
      std::memcpy(d, frame.data(), frame.size());
      in->l2_len = 14;
      in->l3_len = 20;
      in->l4_len = 20;
      res.have_dpdk = true;
    } else {
      res.dpdk_note = "DPDK mempool set-up failed";
    }
  } else {
    res.dpdk_note = err;
  }
  rte_gso_ctx gctx{};
  gctx.direct_pool = direct;
  gctx.indirect_pool = indirect;
  gctx.gso_types = RTE_ETH_TX_OFFLOAD_TCP_TSO;
  gctx.gso_size = std::uint16_t(kHdr + kMss);  // DPDK counts headers in gso_size
  gctx.flag = 0;
  rte_mbuf* outs[64];
  int dpdk_n = 0;
  auto dpdk_once = [&] {
    in->ol_flags = RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IPV4;
    int n = rte_gso_segment(in, &gctx, outs, 64);
    dpdk_n = n;
    for (int i = 0; i < n; ++i) rte_pktmbuf_free(outs[i]);
  };
#else
  res.dpdk_note = "built without libdpdk";
#endif
  // Two input kinds, interleaved like the modes. Fresh: every run consumes a newly built
  // super-packet (200 × 64 KB, more than L2: the payload comes from L3 or memory, as for a
  // socket's pages written long before). Warm: clones of one super-packet sharing its
  // fragment buffers (the payload stays in L2, as for a frame just read from a TAP).
  // Beside them, in the same rounds, the byte work alone on the same inputs: memcpy and
  // csum_partial_copy of every segment's payload into 2 KiB blocks (the segments' size class).
  const core::Packet master = bench_packet(frame);
  auto make_input = [&](bool warm) { return warm ? master.clone() : bench_packet(frame); };
  std::vector<std::vector<double>> warm_samples(std::size(modes));
  std::vector<double> base_samples[2][2];  // [memcpy, copy+csum][fresh, warm]
  std::vector<double> batch_samples[2];      // [fresh, warm]
  core::SegmentBatch batch;
  std::vector<std::uint8_t> blocks(kSegs * 2048);
  auto payload_work = [&](const core::Packet& in, bool sum) {
    const auto frs = in.frags();
    std::size_t fi = 0, fo = 0;
    csum::wsum acc = 0;
    for (std::size_t k = 0; k < kSegs; ++k) {
      std::uint8_t* dst = blocks.data() + k * 2048 + 86;  // where a segment's payload starts
      std::size_t need = kMss, w = 0;
      while (need) {
        const auto b = frs[fi].bytes();
        const std::size_t n = std::min(need, b.size() - fo);
        if (sum) acc = csum::csum_block_add(acc, csum::csum_partial_copy(dst + w, b.data() + fo, n), w);
        else std::memcpy(dst + w, b.data() + fo, n);
        w += n, need -= n, fo += n;
        if (fo == b.size()) ++fi, fo = 0;
      }
    }
    asm volatile("" : : "r"(blocks.data()), "r"(acc) : "memory");
  };
  for (int r = 0; r < reps; ++r) {
    for (int warm = 0; warm < 2; ++warm) {
      for (std::size_t m = 0; m < std::size(modes); ++m) {
        core::Device dev;
        dev.features = dev.hw_enc_features = modes[m].f;
        // Inputs are built outside the timed region; each run consumes one.
        inputs.clear();
        for (int i = 0; i < iters; ++i) inputs.push_back(make_input(warm != 0));
        int k = 0;
        (warm ? warm_samples : samples)[m].push_back(time_rep([&] {
          auto g = gso::gso_segment(std::move(inputs[std::size_t(k++)]), modes[m].f, dev);
          if (g.segs.size() != kSegs) std::abort();
        }, iters));
      }
      {  // sg-ref into a batch (slab form), the batch kept across runs as a caller would
        const core::Features f = nf::SG | nf::HW_CSUM;
        core::Device dev;
        dev.features = dev.hw_enc_features = f;
        inputs.clear();
        for (int i = 0; i < iters; ++i) inputs.push_back(make_input(warm != 0));
        int k = 0;
        batch_samples[warm].push_back(time_rep([&] {
          const auto g = gso::gso_segment_batch(std::move(inputs[std::size_t(k++)]), f, dev, batch);
          if (!g.ok() || batch.size() != kSegs || !batch.is_slab()) std::abort();
        }, iters));
        batch.clear();
      }
      for (int sum = 0; sum < 2; ++sum) {
        inputs.clear();
        for (int i = 0; i < iters; ++i) inputs.push_back(make_input(warm != 0));
        int k = 0;
        base_samples[sum][warm].push_back(
            time_rep([&] { payload_work(inputs[std::size_t(k++)], sum != 0); }, iters));
      }
    }
#ifdef OFLD_HAVE_DPDK
    if (res.have_dpdk) {
      dpdk_samples.push_back(time_rep(dpdk_once, iters));
      if (dpdk_n != int(kSegs)) {
        res.have_dpdk = false;
        res.dpdk_note = fmt::format("rte_gso_segment returned {}", dpdk_n);
      }
    }
#endif
  }
  for (std::size_t m = 0; m < std::size(modes); ++m)
    res.rows.push_back(summarize(modes[m].name, samples[m], modes[m].note));
  for (std::size_t m = 0; m < std::size(modes); ++m)
    res.rows.push_back(summarize(std::string(modes[m].name) + " warm", warm_samples[m],
                                 "as above, payload warm in L2"));
  const char* base_names[2] = {"memcpy of the payload", "copy+csum of the payload"};
  for (int warm = 0; warm < 2; ++warm)
    for (int sum = 0; sum < 2; ++sum)
      res.rows.push_back(summarize(std::string(base_names[sum]) + (warm ? " warm" : ""),
                                   base_samples[sum][warm],
                                   sum ? "csum_partial_copy per segment, no segment built"
                                       : "memcpy per segment, no segment built"));
  // Same-run ratios of medians (rows: 0..3 fresh modes, 4..7 warm, 8.. baselines).
  static constexpr const char* kShort[] = {"sg-ref", "copy", "copy-sum", "sg+sum"};
  for (int warm = 0; warm < 2; ++warm) {
    const std::size_t o = warm ? std::size(modes) : 0;
    const std::string tag = warm ? " warm" : "";
    auto med = [&](std::size_t i) { return res.rows[i].ns_per_segment_median; };
    const double memcpy_ns = med(2 * std::size(modes) + std::size_t(warm) * 2);
    res.ratios.emplace_back("copy/copy-sum" + tag, med(o + 1) / med(o + 2));
    for (std::size_t m = 1; m < std::size(modes); ++m)
      res.ratios.emplace_back(std::string(kShort[m]) + " excess/memcpy" + tag,
                              (med(o + m) - med(o)) / memcpy_ns);
  }
  [[maybe_unused]] const std::size_t batch_row = res.rows.size();  // read only with DPDK
  res.rows.push_back(summarize("ofld sg-ref batch (SG+HW_CSUM)", batch_samples[0],
                               "as sg-ref, into a SegmentBatch: header slab + payload slices"));
  res.rows.push_back(summarize("ofld sg-ref batch warm", batch_samples[1],
                               "as above, payload warm in L2"));
#ifdef OFLD_HAVE_DPDK
  if (res.have_dpdk) {
    res.rows.push_back(summarize("dpdk rte_gso_segment", dpdk_samples,
                                 "DPDK does no checksum work (TCP checksums left as they were)"));
    res.sg_over_dpdk = res.rows[0].ns_per_segment_median / res.rows.back().ns_per_segment_median;
    res.batch_over_dpdk =
        res.rows[batch_row].ns_per_segment_median / res.rows.back().ns_per_segment_median;
  }
  if (in) rte_pktmbuf_free(in);
#endif
  // Tunnels, same run, alternating rounds: VXLAN (8-byte header) and Geneve (8-byte header
  // plus one 8-byte option, as OVN's), each in copy-sum mode (no features) and sg-ref mode
  // (SG+HW_CSUM: inner seed left for the device, outer UDP checksum by LCO).
  {
    const std::vector<std::uint8_t> vx = {0x08, 0, 0, 0, 0, 0, 42, 0};
    const std::vector<std::uint8_t> gn = {0x02, 0, 0x65, 0x58, 0, 0, 42, 0,
                                          0x01, 0x02, 0x80, 0x01, 0, 0, 0, 7};
    const std::vector<std::uint8_t> frames[2] = {tunnel_frame(4789, vx), tunnel_frame(6081, gn)};
    const char* names[2][2] = {{"vxlan copy-sum (none)", "vxlan sg-ref (SG+HW_CSUM)"},
                               {"geneve copy-sum (none)", "geneve sg-ref (SG+HW_CSUM)"}};
    const core::Features feats[2] = {core::Features{}, nf::SG | nf::HW_CSUM};
    std::vector<double> t[2][2];
    std::vector<double> t_batch[2];
#ifdef OFLD_HAVE_DPDK
    // DPDK's VXLAN GSO (gso_tunnel_tcp4_segment) on the same VXLAN frame, alternating with the
    // rows above: outer IPv4 and UDP lengths, IDs, inner IPv4 and TCP, no checksum work.
    rte_mbuf* vin = nullptr;
    if (res.have_dpdk && (vin = rte_pktmbuf_alloc(in_pool)) != nullptr) {
      char* d = rte_pktmbuf_append(vin, std::uint16_t(frames[0].size()));
      if (!d) {
        rte_pktmbuf_free(vin);
        vin = nullptr;
      } else {
        std::memcpy(d, frames[0].data(), frames[0].size());
        vin->outer_l2_len = 14;
        vin->outer_l3_len = 20;
        vin->l2_len = 8 + 8 + 14;  // outer UDP, VXLAN, inner Ethernet
        vin->l3_len = 20;
        vin->l4_len = 20;
      }
    }
    rte_gso_ctx vctx = gctx;
    vctx.gso_types = RTE_ETH_TX_OFFLOAD_VXLAN_TNL_TSO;
    vctx.gso_size = std::uint16_t(14 + 20 + 8 + 8 + kHdr + kMss);  // every header counted
    std::vector<double> vx_dpdk;
    int vx_n = 0;
    auto vx_dpdk_once = [&] {
      vin->ol_flags = RTE_MBUF_F_TX_TCP_SEG | RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_OUTER_IPV4 |
                      RTE_MBUF_F_TX_TUNNEL_VXLAN;
      vx_n = rte_gso_segment(vin, &vctx, outs, 64);
      for (int i = 0; i < vx_n; ++i) rte_pktmbuf_free(outs[i]);
    };
#endif
    for (int r = 0; r < reps; ++r) {
#ifdef OFLD_HAVE_DPDK
      if (vin) {
        vx_dpdk.push_back(time_rep(vx_dpdk_once, iters));
        if (vx_n != int(kSegs)) {
          res.dpdk_note = fmt::format("rte_gso_segment (VXLAN) returned {}", vx_n);
          rte_pktmbuf_free(vin);
          vin = nullptr;
          vx_dpdk.clear();
        }
      }
#endif
      for (int m = 0; m < 2; ++m)
        for (int k = 0; k < 2; ++k) {
          core::Device dev;
          dev.features = dev.hw_enc_features = feats[m];
          inputs.clear();
          for (int i = 0; i < iters; ++i) inputs.push_back(tunnel_packet(frames[k]));
          int n = 0;
          t[k][m].push_back(time_rep([&] {
            auto g = gso::gso_segment(std::move(inputs[std::size_t(n++)]), feats[m], dev);
            if (g.segs.size() != kSegs) std::abort();
          }, iters));
        }
      for (int k = 0; k < 2; ++k) {  // sg-ref into a batch: the slab form
        core::Device dev;
        dev.features = dev.hw_enc_features = feats[1];
        inputs.clear();
        for (int i = 0; i < iters; ++i) inputs.push_back(tunnel_packet(frames[k]));
        int n = 0;
        t_batch[k].push_back(time_rep([&] {
          const auto g = gso::gso_segment_batch(std::move(inputs[std::size_t(n++)]), feats[1], dev, batch);
          if (!g.ok() || batch.size() != kSegs || !batch.is_slab()) std::abort();
        }, iters));
        batch.clear();
      }
    }
    for (int m = 0; m < 2; ++m) {
      auto v = summarize(names[0][m], t[0][m], "UDP 4789, outer UDP checksum on");
      auto g = summarize(names[1][m], t[1][m], "");
      g.note = fmt::format("UDP 6081, one 8-byte option; geneve / vxlan = {:.3f} (same run)",
                           g.ns_per_segment_median / v.ns_per_segment_median);
      res.rows.push_back(std::move(v));
      res.rows.push_back(std::move(g));
    }
    const double vx_sg = res.rows[res.rows.size() - 2].ns_per_segment_median;  // vxlan sg-ref
    res.rows.push_back(summarize("vxlan sg-ref batch (SG+HW_CSUM)", t_batch[0],
                                 "into a SegmentBatch: header slab + payload slices"));
    const double vx_batch = res.rows.back().ns_per_segment_median;
    res.rows.push_back(summarize("geneve sg-ref batch (SG+HW_CSUM)", t_batch[1], "the same, Geneve"));
#ifdef OFLD_HAVE_DPDK
    if (vin) rte_pktmbuf_free(vin);
    if (!vx_dpdk.empty()) {
      res.rows.push_back(summarize("dpdk rte_gso_segment vxlan", vx_dpdk,
                                   "VXLAN_TNL_TSO, same frame; no checksum work"));
      res.vxlan_sg_over_dpdk = vx_sg / res.rows.back().ns_per_segment_median;
      res.vxlan_batch_over_dpdk = vx_batch / res.rows.back().ns_per_segment_median;
    }
#else
    (void)vx_sg;
    (void)vx_batch;
#endif
  }
  return res;
}

std::string gso_bench_text(const GsoBenchResults& r) {
  std::string t = "cpu: " + cpu_model() + "; checksum kernel: " +
                  std::string(csum::kernel_name(csum::best_kernel())) + "\n";
  t += fmt::format("TCPv4 super-packet: {} B payload, gso_size {}, {} segments; "
                              "thread-CPU ns/segment, median of {} reps [min..max]\n",
                              r.payload, r.mss, r.segments, r.reps);
  for (auto& row : r.rows)
    t += fmt::format("{:<34} {:8.1f} [{:7.1f}..{:7.1f}]  {}\n", row.name, row.ns_per_segment_median,
                     row.ns_per_segment_min, row.ns_per_segment_max, row.note);
  for (auto& [name, v] : r.ratios)
    t += fmt::format("ratio {:<34} {:5.2f}{}\n", name, v,
                     name.starts_with("copy/") ? "  (seed 001: below 1)" : "  (target <= 2)");
  if (r.have_dpdk) {
    t += fmt::format("ratio ofld sg-ref / dpdk: {:.2f} (target <= 0.5; DPDK does no checksum "
                     "work, ofld sg-ref writes per-segment TCP seeds and IPv4 checksums)\n",
                     r.sg_over_dpdk);
    t += fmt::format("ratio ofld sg-ref batch / dpdk: {:.2f} (target <= 0.5; the same segments as "
                     "a header slab and payload slices, no Packet per segment)\n",
                     r.batch_over_dpdk);
    if (r.vxlan_sg_over_dpdk > 0) {
      t += fmt::format("ratio ofld vxlan sg-ref / dpdk vxlan: {:.2f} (ofld also writes the outer "
                       "UDP checksum, LCO)\n",
                       r.vxlan_sg_over_dpdk);
      t += fmt::format("ratio ofld vxlan sg-ref batch / dpdk vxlan: {:.2f} (target <= 0.5)\n",
                       r.vxlan_batch_over_dpdk);
    }
  } else {
    t += "dpdk: " + r.dpdk_note + "\n";
  }
  return t;
}

std::string gso_bench_json(const GsoBenchResults& r) {
  nlohmann::json j;
  j["cpu"] = cpu_model();
  j["checksum_kernel"] = std::string(csum::kernel_name(csum::best_kernel()));
  j["payload"] = r.payload;
  j["gso_size"] = r.mss;
  j["segments"] = r.segments;
  j["reps"] = r.reps;
  j["unit"] = "ns/segment";
  for (auto& row : r.rows)
    j["rows"].push_back({{"name", row.name}, {"median", row.ns_per_segment_median},
                         {"min", row.ns_per_segment_min}, {"max", row.ns_per_segment_max},
                         {"note", row.note}});
  for (auto& [name, v] : r.ratios) j["ratios"][name] = v;
  j["have_dpdk"] = r.have_dpdk;
  if (r.have_dpdk) {
    j["ratio_sg_over_dpdk"] = r.sg_over_dpdk;
    j["ratio_sg_batch_over_dpdk"] = r.batch_over_dpdk;
    if (r.vxlan_sg_over_dpdk > 0) j["ratio_vxlan_sg_over_dpdk"] = r.vxlan_sg_over_dpdk;
    if (r.vxlan_batch_over_dpdk > 0) j["ratio_vxlan_sg_batch_over_dpdk"] = r.vxlan_batch_over_dpdk;
  } else {
    j["dpdk_note"] = r.dpdk_note;
  }
  j["dpdk_checksum_work"] = false;
  return j.dump(2);
}

}  // namespace ofld::bench

// capi_bench: the cost of the C API boundary (docs/c-api.md), same-run ratios.
//
//   capi_bench [--rounds R] [--only c-gso|c-gro|cpp-gso|cpp-gro] [--iters N]
//
// The same work through the C++ API and through the C API, in alternating rounds (the order
// flips every round), medians over rounds:
//   gso: a 64 KB TCPv4 TSO read (virtio_net_hdr + frame, mss 1448, 45 segments), validated as
//        a TAP does, segmented for a device without features (checksums summed while copying)
//        and copied into one caller buffer with each segment's checksum state and
//        virtio_net_hdr: C++ to_packet + tx_prepare + from_packet + copy_bits;
//        C ofld_gso_run + ofld_gso_copy_all on a reused engine.
//   gro: a batch of 64 in-order 1448-byte TCPv4 segments of one flow received, flushed and the
//        aggregates copied into a caller buffer with their virtio_net_hdr: C++ Packet::from_bytes
//        + Engine::receive_batch + poll_end + copy_bits/from_packet; C ofld_gro_receive +
//        ofld_gro_flush + ofld_gro_next_all.
// --only prints one number (ns per operation, median of R rounds) for bench/capi/python_bench.py.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/ofld.h"
#include "../../tests/common/frame_builder.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;
using Clock = std::chrono::steady_clock;

struct GsoInput {
  Bytes frame;
  ofld::offload::virtio::VnetHdr h;
  ofld_vnet_hdr ch;
};

GsoInput gso_input() {
  ofld::fb::gso::TcpSpec s;
  s.payload = 44 * 1448 + 700;
  GsoInput in;
  in.frame = ofld::fb::gso::tcp_frame(s);
  std::size_t len = in.frame.size();
  if (ofld_vnet_build(in.frame.data(), &len, OFLD_LINK_ETHERNET, 1448, 0, &in.ch) != OFLD_OK)
    std::abort();
  in.frame.resize(len);
  in.h.flags = in.ch.flags, in.h.gso_type = in.ch.gso_type, in.h.hdr_len = in.ch.hdr_len;
  in.h.gso_size = in.ch.gso_size, in.h.csum_start = in.ch.csum_start;
  in.h.csum_offset = in.ch.csum_offset;
  return in;
}

std::vector<Bytes> gro_input() {
  std::vector<Bytes> v;
  for (int i = 0; i < 64; ++i) {
    ofld::fb::gro::Tcp t;
    t.payload = 1448;
    t.seq_off = std::uint32_t(i * 1448);
    v.push_back(ofld::fb::gro::tcp_frame(t));
  }
  return v;
}

std::vector<std::uint8_t> g_out(1 << 20);
volatile std::size_t g_sink;

double time_ns(int iters, auto&& f) {
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) f();
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iters;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 11, iters = 0;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (a == "--only") only = argv[i + 1];
    else if (a == "--iters") iters = std::atoi(argv[i + 1]);
  }
  const GsoInput gi = gso_input();
  const auto gr = gro_input();

  // ---- the four workloads -------------------------------------------------------------------
  ofld::core::Device dev;  // no features
  std::vector<ofld_seg_info> cinfo(64);
  auto cpp_gso = [&] {
    auto tp = ofld::offload::virtio::to_packet(gi.h, gi.frame);
    auto tx = ofld::gso::tx_prepare(std::move(tp.pkt), dev);
    std::size_t off = 0, k = 0;
    for (auto& s : tx.out) {
      // each segment's checksum state and virtio_net_hdr, as the C API reports them
      auto h = ofld::offload::virtio::from_packet(s, true);
      cinfo[k].ip_summed = std::uint8_t(s.ip_summed());
      cinfo[k++].vnet.flags = h ? h->flags : 0;
      s.copy_bits(0, std::span<std::uint8_t>(g_out.data() + off, s.len()));
      off += s.len();
    }
    g_sink = off;
  };
  ofld_gso* cg = ofld_gso_new(0, OFLD_LINK_ETHERNET);
  std::vector<ofld_seg_info> segs(64);
  auto c_gso = [&] {
    std::size_t used = 0, n = 0;
    if (ofld_gso_run(cg, gi.frame.data(), gi.frame.size(), &gi.ch, 0, 0) != OFLD_OK) std::abort();
    if (ofld_gso_copy_all(cg, g_out.data(), g_out.size(), &used, segs.data(), segs.size(), &n) !=
        OFLD_OK)
      std::abort();
    g_sink = used;
  };
  ofld::gro::EngineOptions eo;
  eo.config.flow_hash_key = 0;
  ofld::gro::Engine engine(eo);
  std::vector<ofld::core::Packet> batch;
  std::vector<ofld_seg_info> ginfo(64);
  auto cpp_gro = [&] {
    batch.clear();
    for (const auto& f : gr) batch.push_back(ofld::core::Packet::from_bytes(f));
    engine.receive_batch(batch, 0);
    engine.poll_end(0);
    std::size_t off = 0, k = 0;
    for (auto& p : engine.output()) {
      auto h = ofld::offload::virtio::from_packet(p, true);
      ginfo[k].ip_summed = std::uint8_t(p.ip_summed());
      ginfo[k].vnet.gso_size = h ? h->gso_size : 0;
      p.copy_bits(0, std::span<std::uint8_t>(g_out.data() + off, p.len()));
      off += p.len();
      ++k;
    }
    engine.output().clear();
    g_sink = off;
  };
  ofld_gro_config cfg = OFLD_GRO_CONFIG_INIT;
  cfg.fixed_flow_hash_key = 1;
  ofld_gro* cgro = ofld_gro_new(&cfg);
  std::vector<ofld_frame> frames;
  for (const auto& f : gr) frames.push_back({f.data(), f.size()});
  auto c_gro = [&] {
    std::size_t used = 0, n = 0;
    if (ofld_gro_receive(cgro, frames.data(), frames.size(), OFLD_CSUM_NONE, 0, 0) != OFLD_OK)
      std::abort();
    ofld_gro_flush(cgro, 0, 0);
    if (ofld_gro_next_all(cgro, g_out.data(), g_out.size(), &used, 0, ginfo.data(), ginfo.size(),
                          &n) != OFLD_OK)
      std::abort();
    g_sink = used;
  };

  struct W {
    const char* name;
    std::function<void()> f;
  };
  std::vector<W> ws = {{"cpp-gso", cpp_gso}, {"c-gso", c_gso}, {"cpp-gro", cpp_gro}, {"c-gro", c_gro}};
  const int n_iters = iters ? iters : 2000;
  if (!only.empty()) {
    for (auto& w : ws)
      if (only == w.name) {
        std::vector<double> r;
        time_ns(n_iters / 4, w.f);  // warm-up
        for (int i = 0; i < rounds; ++i) r.push_back(time_ns(n_iters, w.f));
        std::printf("%.1f\n", median(r));
        return 0;
      }
    std::fprintf(stderr, "capi_bench: unknown --only %s\n", only.c_str());
    return 2;
  }
  for (auto& w : ws) time_ns(n_iters / 4, w.f);  // warm-up
  std::vector<double> t[4], ratio_gso, ratio_gro;
  for (int r = 0; r < rounds; ++r) {
    double now[4];
    for (int k = 0; k < 4; ++k) {
      const int i = (r & 1) ? (k ^ 1) : k;  // alternate which of each pair runs first
      now[i] = time_ns(n_iters, ws[i].f);
    }
    for (int k = 0; k < 4; ++k) t[k].push_back(now[k]);
    ratio_gso.push_back(now[1] / now[0]);
    ratio_gro.push_back(now[3] / now[2]);
  }
  std::printf("capi_bench: %d alternating rounds of %d operations, medians\n", rounds, n_iters);
  std::printf("  gso 64 KB TSO read, 45 segments: C++ %.0f ns, C API %.0f ns, C/C++ %.3fx\n",
              median(t[0]), median(t[1]), median(ratio_gso));
  std::printf("  gro 64-frame batch:              C++ %.0f ns, C API %.0f ns, C/C++ %.3fx\n",
              median(t[2]), median(t[3]), median(ratio_gro));
  ofld_gso_free(cg);
  ofld_gro_free(cgro);
  return 0;
}

// Google Benchmark: the tunnel endpoint's own CPU per byte, without sockets or a TAP
// (tunnel::Endpoint, VXLAN over IPv4, one TCP/IPv4 flow, MSS 1398 as under a 1450-byte overlay
// MTU). What `ofld tunnel` spends between the system calls:
//   * BM_VxlanReceive: 16 UDP_GRO receive slots of 44 VXLAN datagrams each (one recvmmsg
//     batch) through receive_train (zero-copy: the inner payload stays in the slot) and one
//     rx_flush (gro_cells poll, GRO, virtio_net_hdr for the TAP);
//   * BM_VxlanReceiveSeeded: the same with the inner checksum fields left as pseudo-header
//     seeds (integrity mode's elided checksums): what not verifying the inner sum saves;
//   * BM_VxlanTransmit: one 64 KB TSO frame from the TAP (virtio_net_hdr NEEDS_CSUM + TCPV4)
//     through transmit: inner GSO with the checksum summed while copying, VXLAN header per
//     segment, UDP_SEGMENT trains; BM_VxlanTransmitInPlace: the same frame handed with its
//     read buffer, as `ofld tunnel` reads the TAP, so the payload is segmented from there
//     instead of being copied into a packet first.
// Bytes processed are the inner TCP payload bytes, so bytes_per_second is goodput through the
// endpoint's code on one core; 1 / bytes_per_second is its CPU seconds per byte.
#include <benchmark/benchmark.h>

#include "../tests/common/frame_builder.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/tunnel/endpoint.hpp"

namespace {

namespace tn = ofld::tunnel;
namespace wv = ofld::wire::virtio_net;
constexpr std::size_t kMss = 1398;
constexpr std::size_t kSegsPerSlot = 44;  // 44 * (8 + 14 + 20 + 20 + 1398) = 64,240 <= 65,535
constexpr std::size_t kSlots = 16;

tn::IpAddr addr(const char* s) { return *tn::IpAddr::parse(s); }

tn::VxlanConfig config(const char* local, const char* remote) {
  tn::VxlanConfig c;
  c.vni = 42;
  c.local = addr(local);
  c.remotes = {addr(remote)};
  return c;
}

/// Ethernet/IPv4/TCP, ACK only (a PSH would end each GRO aggregate), `len` payload bytes;
/// `seed`: the TCP field holds the pseudo-header seed (CHECKSUM_PARTIAL) instead of the sum.
std::vector<std::uint8_t> tcp_frame(std::size_t len, std::uint32_t seq, bool seed) {
  namespace fb = ofld::fb;
  fb::Frame f;
  f.eth(fb::mac(2), fb::mac(1));
  ofld::wire::Ipv4Repr r;
  r.frag_off = ofld::wire::ipv4::kDF;
  r.ttl = 64;
  r.saddr = fb::ip4(192, 168, 1, 1);
  r.daddr = fb::ip4(192, 168, 1, 2);
  f.ipv4(r);
  ofld::wire::TcpRepr t;
  t.source = 40000;
  t.dest = 5201;
  t.seq = seq;
  t.ack_seq = 1;
  t.flags = ofld::wire::tcp_flag::kAck;
  t.window = 0xffff;
  f.tcp(t, seed ? fb::L4Csum::Partial : fb::L4Csum::Full);
  f.payload(fb::pattern7(len, 3));
  return f.build();
}

/// One UDP_GRO slot: `k` VXLAN datagrams (header + inner Ethernet/IPv4/TCP of kMss bytes,
/// consecutive sequence numbers) laid end to end; `seg` gets the datagram size.
ofld::core::BufferRef vxlan_slot(std::size_t k, std::uint32_t seq0, std::size_t& seg,
                                 bool seed = false) {
  std::vector<std::uint8_t> all;
  for (std::size_t i = 0; i < k; ++i) {
    auto f = tcp_frame(kMss, seq0 + std::uint32_t(i * kMss), seed);
    ofld::wire::VxlanRepr v;
    v.vni = 42;
    std::vector<std::uint8_t> d(ofld::wire::vxlan::kLen);
    v.emit(d);
    d.insert(d.end(), f.begin(), f.end());
    seg = d.size();
    all.insert(all.end(), d.begin(), d.end());
  }
  return ofld::core::Buffer::make(all);
}

/// `seeded`: the inner TCP fields hold pseudo-header seeds, as a sender in integrity mode
/// (issue 15) leaves them: the receiver takes them as CHECKSUM_PARTIAL (K-9) and sums nothing.
void receive(benchmark::State& st, bool seeded) {
  tn::EndpointOptions o;
  tn::Endpoint ep(config("10.0.0.2", "10.0.0.1"), o);
  const auto from = addr("10.0.0.1");
  std::size_t seg = 0;
  std::vector<ofld::core::BufferRef> tmpl, slots;
  std::uint32_t seq = 1000;
  for (std::size_t s = 0; s < kSlots; ++s, seq += std::uint32_t(kSegsPerSlot * kMss))
    tmpl.push_back(vxlan_slot(kSegsPerSlot, seq, seg, seeded));
  std::vector<tn::TapFrame> out;
  std::uint64_t now = 1;
  for (auto _ : st) {
    st.PauseTiming();  // fresh receive slots, as recvmmsg fills them (not the endpoint's cost)
    out.clear();
    slots.clear();
    for (const auto& t : tmpl) slots.push_back(ofld::core::Buffer::make(t->bytes));
    st.ResumeTiming();
    for (const auto& sl : slots)
      ep.receive_train(sl, 0, sl->bytes.size(), std::uint16_t(seg), from, tn::OuterCsum::Present, now);
    ep.rx_flush(++now, out);
    benchmark::DoNotOptimize(out.data());
  }
  if (ep.counters().drops_total() != 0 || out.empty()) st.SkipWithError("receive dropped frames");
  st.SetBytesProcessed(std::int64_t(st.iterations() * kSlots * kSegsPerSlot * kMss));
  st.counters["frames_out"] = double(out.size());
}

void BM_VxlanReceive(benchmark::State& st) { receive(st, false); }
void BM_VxlanReceiveSeeded(benchmark::State& st) { receive(st, true); }

// `in_place`: the frame handed with its read buffer (as `ofld tunnel` reads the TAP), so the
// payload is segmented from there; otherwise copied into a packet first.
void transmit(benchmark::State& st, bool in_place) {
  tn::Endpoint ep(config("10.0.0.1", "10.0.0.2"), {});
  const std::size_t payload = 65535 - 20 - 20;  // IPv4 total length limit of a TSO frame
  auto f = tcp_frame(payload, 1000, true);
  const auto owner = ofld::core::Buffer::make(f);
  const std::span<const std::uint8_t> frame = owner->bytes;
  wv::Hdr h{};
  h.flags = wv::kFlagNeedsCsum;
  h.gso_type = wv::kGsoTcpv4;
  h.gso_size = kMss;
  h.csum_start = 14 + 20;
  h.csum_offset = 16;
  h.hdr_len = 14 + 20 + 20;
  std::vector<tn::TxTrain> trains;
  std::uint64_t now = 1;
  for (auto _ : st) {
    ep.transmit(h, frame, ++now, trains, in_place ? &owner : nullptr);
    benchmark::DoNotOptimize(trains.data());
    ep.recycle(trains);
  }
  if (ep.counters().drops_total() != 0) st.SkipWithError("transmit dropped frames");
  st.SetBytesProcessed(std::int64_t(st.iterations() * payload));
}

void BM_VxlanTransmit(benchmark::State& st) { transmit(st, false); }
void BM_VxlanTransmitInPlace(benchmark::State& st) { transmit(st, true); }

BENCHMARK(BM_VxlanReceive);
BENCHMARK(BM_VxlanReceiveSeeded);
BENCHMARK(BM_VxlanTransmit);
BENCHMARK(BM_VxlanTransmitInPlace);

}  // namespace

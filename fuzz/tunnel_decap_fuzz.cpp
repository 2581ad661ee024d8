// libFuzzer target: arbitrary UDP payloads → the VXLAN receive path (decap with every
// RCO/config combination, FDB learning, GRO after decapsulation, TAP frame building) never
// crashes or over-reads; every datagram is either delivered or counted as a drop. The
// zero-copy receive (the daemon's: the datagrams stay in a refcounted slot and the inner
// payload is a fragment of it; issue 16) must deliver exactly what the copying one does: the
// same frames, bytes, virtio headers and counters.
// Byte 0 selects the configuration, byte 1 the UDP_GRO gso_size (0 = one datagram); when
// byte 0's top three bits are 3..7, byte 1 is also the outer TOS (RFC 6040 decapsulation).
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/tunnel/endpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  using namespace ofld::tunnel;
  VxlanConfig c;
  c.vni = 42;
  c.local = *IpAddr::parse("10.0.0.1");
  c.remotes = {*IpAddr::parse("10.0.0.2")};
  c.remcsum_rx = data[0] & 1;
  c.remcsum_nopartial = data[0] & 2;
  c.learning = data[0] & 4;
  EndpointOptions o;
  o.gro = data[0] & 8;
  o.vnet_hdr = !(data[0] & 16);
  auto outer = static_cast<OuterCsum>((data[0] >> 5) % 3);
  std::uint16_t gso = std::uint16_t(data[1]) * 8;
  Endpoint dp(c, o);
  std::vector<std::uint8_t> buf(data + 2, data + size);
  const int tos = (data[0] >> 5) >= 3 ? data[1] : -1;
  dp.receive_train(buf, gso, *IpAddr::parse("10.0.0.2"), outer, 1, tos);
  std::vector<TapFrame> frames;
  dp.rx_flush(2, frames);
  const auto& ctr = dp.counters();
  // every datagram ends delivered (possibly merged) or dropped with a reason
  std::uint64_t accounted = ctr.drops_total() + ctr.rx_gro_merged + frames.size();
  if (accounted < ctr.rx_datagrams && !o.gro) std::abort();

  Endpoint dz(c, o);
  const ofld::core::BufferRef owner = ofld::core::Buffer::make(buf);
  dz.receive_train(owner, 0, buf.size(), gso, *IpAddr::parse("10.0.0.2"), outer, 1, tos);
  std::vector<TapFrame> zframes;
  dz.rx_flush(2, zframes);
  if (zframes.size() != frames.size()) std::abort();
  auto flat = [](const TapFrame& f) {
    std::vector<std::span<const std::uint8_t>> pieces;
    tap_pieces(f, pieces);
    std::vector<std::uint8_t> b;
    for (auto p : pieces) b.insert(b.end(), p.begin(), p.end());
    return b;
  };
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto &a = frames[i].vnet, &b = zframes[i].vnet;
    if (a.flags != b.flags || a.gso_type != b.gso_type || a.hdr_len != b.hdr_len ||
        a.gso_size != b.gso_size || a.csum_start != b.csum_start || a.csum_offset != b.csum_offset)
      std::abort();
    if (flat(frames[i]) != flat(zframes[i])) std::abort();
  }
  const auto& z = dz.counters();
  if (z.drops != ctr.drops || z.rx_datagrams != ctr.rx_datagrams || z.rx_rco != ctr.rx_rco ||
      z.rx_csum_validated != ctr.rx_csum_validated || z.rx_csum_skipped != ctr.rx_csum_skipped ||
      z.rx_csum_partial_seed != ctr.rx_csum_partial_seed ||
      z.rx_csum_seed_nocsum != ctr.rx_csum_seed_nocsum || z.rx_ecn_ce != ctr.rx_ecn_ce ||
      z.rx_ecn_bogus != ctr.rx_ecn_bogus || z.rx_gro_merged != ctr.rx_gro_merged ||
      z.rx_gro_aggregates != ctr.rx_gro_aggregates || z.fdb_learned != ctr.fdb_learned)
    std::abort();
  return 0;
}

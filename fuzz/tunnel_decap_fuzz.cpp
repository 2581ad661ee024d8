// libFuzzer target: arbitrary UDP payloads → the VXLAN receive path (decap with every
// RCO/config combination, FDB learning, GRO after decapsulation, TAP frame building) never
// crashes or over-reads; every datagram is either delivered or counted as a drop.
// Byte 0 selects the configuration, byte 1 the UDP_GRO gso_size (0 = one datagram); when
// byte 0's top three bits are 3..7, byte 1 is also the outer TOS (RFC 6040 decapsulation).
#include <cstdint>
#include <cstdlib>
#include <vector>

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
  return 0;
}

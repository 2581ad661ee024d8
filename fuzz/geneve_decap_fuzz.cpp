// libFuzzer target: arbitrary UDP payloads → the Geneve receive path of the endpoint
// (geneve_decap with options of every length and critical bits, the inner Ethernet checks,
// the loop and source checks, GRO after decapsulation, TAP frame building) never crashes or
// over-reads; every datagram is delivered, merged or dropped with a reason.
//
// Byte 0: bit 0 IPv6 underlay, bit 1 udp6zerocsumrx, bit 2 GRO, bit 3 no vnet header,
// bits 4-5 outer UDP checksum (unknown, present, zero), bit 6 option 0102:80 configured (a
// critical option the endpoint understands), bit 7 outer TOS unknown. Byte 1: UDP_GRO
// gso_size / 8 (0 = one datagram), and the outer TOS.
//
// Property checked against a reference written here from RFC 8926 §3.4/§3.5 (not the code
// under test): a single datagram whose version is 0, whose header is inside it and carries
// protocol 0x6558 and VNI 42, is never delivered when its O bit is set, when its C bit is set
// without a critical option, or when one of its options is critical and not 0102:80 (with
// bit 6) — nor when an option runs past Opt Len.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/geneve.hpp"

namespace {
/// True when RFC 8926 forbids delivering this datagram's payload (see the header comment);
/// false when it may be delivered or another check decides.
bool must_not_deliver(const std::uint8_t* d, std::size_t n, bool known_0102_80) {
  if (n < 8 || (d[0] >> 6) != 0) return false;
  const std::size_t hl = 8 + std::size_t(d[0] & 0x3f) * 4;
  if (hl > n || (d[2] << 8 | d[3]) != 0x6558 || (d[4] << 16 | d[5] << 8 | d[6]) != 42) return false;
  if (d[1] & 0x80) return true;  // O: control packet
  bool any_crit = false, unknown_crit = false;
  for (std::size_t i = 8; i < hl;) {
    if (i + 4 > hl) return true;  // option header past Opt Len
    const std::size_t len = 4 + std::size_t(d[i + 3] & 0x1f) * 4;
    if (i + len > hl) return true;
    const std::uint16_t cls = std::uint16_t(d[i] << 8 | d[i + 1]);
    const std::uint8_t type = d[i + 2];
    if (type & 0x80) {
      any_crit = true;
      if (!(known_0102_80 && cls == 0x0102 && type == 0x80)) unknown_crit = true;
    }
    i += len;
  }
  return unknown_crit || ((d[1] & 0x40) && !any_crit);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  using namespace ofld::tunnel;
  const std::uint8_t b = data[0];
  const bool v6 = b & 1;
  GeneveConfig c;
  c.vni = 42;
  c.local = *IpAddr::parse(v6 ? "fd00::1" : "10.0.0.1");
  c.remotes = {*IpAddr::parse(v6 ? "fd00::2" : "10.0.0.2")};
  c.udp6_zero_csum_rx = v6 && (b & 2);
  if (b & 64) c.options.push_back(GeneveOption{0x0102, 0x80, {0, 0, 0, 1}});
  EndpointOptions o;
  o.gro = b & 4;
  o.vnet_hdr = !(b & 8);
  const auto outer = static_cast<OuterCsum>(((b >> 4) & 3) % 3);
  const std::uint16_t gso = std::uint16_t(data[1]) * 8;
  const int tos = (b & 128) ? -1 : int(data[1]);
  Endpoint dp(c, o);
  std::vector<std::uint8_t> buf(data + 2, data + size);
  dp.receive_train(buf, gso, c.remotes[0], outer, 1, tos);
  std::vector<TapFrame> frames;
  dp.rx_flush(2, frames);
  const auto& ctr = dp.counters();
  if (ctr.drops_total() + ctr.rx_gro_merged + frames.size() < ctr.rx_datagrams) std::abort();
  if (!o.gro && ctr.drops_total() + frames.size() != ctr.rx_datagrams) std::abort();
  for (const auto& f : frames)
    if (f.size() < 14) std::abort();  // an Ethernet frame at least
  if ((gso == 0 || buf.size() <= gso) && !frames.empty() &&
      must_not_deliver(buf.data(), buf.size(), b & 64))
    std::abort();
  return 0;
}

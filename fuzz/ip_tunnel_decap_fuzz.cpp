// libFuzzer target: arbitrary GUE UDP payloads and GRE packets → the L3 tunnel receive path
// (gue_decap / gre_decap with every RCO / key / checksum combination, inner IP checks, GRO
// after decapsulation, TUN frame building) never crashes or over-reads (issue 11 item 7: the
// VXLAN target did not reach GUE, GRE or ip6gre).
//
// Byte 0: bit 0 GUE (else GRE), bit 1 IPv6 underlay (ip6gre), bit 2 remcsumrx (GUE) / icsum
// (GRE), bit 3 remcsum-nopartial (GUE) / key 42 (GRE), bit 4 GRO, bit 5 no vnet header,
// bits 6-7 outer UDP checksum (unknown, present, zero). Byte 1: UDP_GRO gso_size / 8 (GUE).
//
// Properties (abort on violation): every datagram is delivered, merged or dropped with a
// reason (without GRO: delivered + dropped == received); every TUN packet is an IPv4 or IPv6
// packet whose length field equals its size (issue 11 item 8: inner lengths checked, padding
// trimmed; GRO aggregates rewrite the length to the aggregate's).
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ofld/tunnel/endpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  using namespace ofld::tunnel;
  const std::uint8_t b = data[0];
  const bool gue = b & 1, v6 = b & 2;
  const auto local = *IpAddr::parse(v6 ? "fd00::1" : "10.0.0.1");
  const auto remote = *IpAddr::parse(v6 ? "fd00::2" : "10.0.0.2");
  TunnelConfig c;
  if (gue) {
    GueConfig g;
    g.local = local, g.remote = remote;
    g.port = 5555;
    g.remcsum_rx = b & 4;
    g.remcsum_nopartial = (b & 4) && (b & 8);
    c = g;
  } else {
    GreConfig g;
    g.local = local, g.remote = remote;
    g.icsum = b & 4;
    if (b & 8) g.ikey = 42;
    c = g;
  }
  EndpointOptions o;
  o.gro = b & 16;
  o.vnet_hdr = !(b & 32);
  const auto outer = static_cast<OuterCsum>((b >> 6) % 3);
  const std::uint16_t gso = gue ? std::uint16_t(data[1]) * 8 : 0;
  Endpoint dp(c, o);
  std::vector<std::uint8_t> buf(data + 2, data + size);
  // Outer TOS for RFC 6040 (all four ECN values; GRE: bit 7 of data[1] = not reported).
  const int outer_tos = !gue && (data[1] & 0x80) ? -1 : int(data[1] & 0x7F);
  dp.receive_train(buf, gso, remote, outer, 1, outer_tos);
  std::vector<TapFrame> frames;
  dp.rx_flush(2, frames);
  const auto& ctr = dp.counters();
  if (!o.gro && ctr.drops_total() + frames.size() != ctr.rx_datagrams) std::abort();
  if (ctr.drops_total() + ctr.rx_gro_merged + frames.size() < ctr.rx_datagrams) std::abort();
  for (const auto& f : frames) {
    const auto p = f.pkt->to_bytes();
    if (p.empty()) std::abort();
    const unsigned ver = p[0] >> 4;
    if (ver == 4) {
      if (p.size() < 20 || (std::size_t(p[2]) << 8 | p[3]) != p.size()) std::abort();
    } else if (ver == 6) {
      if (p.size() < 40) std::abort();
      const std::size_t plen = std::size_t(p[4]) << 8 | p[5];
      if (!(plen == 0 && p[6] == 0) && plen + 40 != p.size()) std::abort();
    } else {
      std::abort();
    }
  }
  return 0;
}

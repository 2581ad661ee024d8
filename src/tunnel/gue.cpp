// GUE encapsulation / decapsulation for the L3 tunnel mode (__gue_build_header, gue_udp_recv,
// gue_remcsum in net/ipv4/fou_core.c; spec V-6..V-10, W-25, W-27, C-33, K-2).
#include "ofld/tunnel/inner_ip.hpp"
#include "ofld/tunnel/ip_tunnel.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"

#include "rx_seed.hpp"

namespace ofld::tunnel {

std::size_t gue_build_header(const core::Packet& inner, const GueConfig& cfg,
                             std::span<std::uint8_t> out, bool& rco) {
  rco = false;
  if (inner.headlen() < 1) return 0;
  const unsigned ver = inner.data()[0] >> 4;
  if (ver != 4 && ver != 6) return 0;
  wire::GueRepr h;
  h.proto = ver == 4 ? wire::ipproto::kIpip : wire::ipproto::kIpv6;
  if (cfg.remcsum_tx && cfg.tx_outer_csum() && inner.ip_summed() == core::IpSummed::Partial) {
    const auto& cp = std::get<core::CsumPartial>(inner.csum);
    const int start = inner.csum_start_offset();
    // W-27: start counted from the end of the GUE header (= the inner IP header here);
    // offset = start + csum_offset. Only Internet checksums (not CRC32c) can travel as RCO.
    if (!cp.not_inet && start >= 0 && start + cp.csum_offset <= 0xFFFF) {
      h.remcsum = wire::GueHeader<>::Remcsum{std::uint16_t(start),
                                             std::uint16_t(start + cp.csum_offset)};
      rco = true;
    }
  }
  return h.emit(out);
}

DecapResult gue_decap(std::span<const std::uint8_t> payload, const GueConfig& cfg,
                        OuterCsum outer, Counters& c, int outer_tos) {
  DecapResult r;
  auto fail = [&](Drop d) {
    r.reason = d;
    c.drop(d);
    return std::move(r);
  };
  // RFC 6935 §5 / RFC 8200 §8.1: over IPv6 a zero UDP checksum is accepted only when the
  // endpoint agreed to it (udp6zerocsumrx, the kernel's UDP_NO_CHECK6_RX). The daemon's
  // socket has the kernel enforce it; the library does too, for any other caller.
  if (outer == OuterCsum::Zero && cfg.ipv6() && !cfg.udp6_zero_csum_rx)
    return fail(Drop::RxUdp6ZeroCsum);
  if (payload.size() < 4) return fail(Drop::RxTruncated);
  std::span<const std::uint8_t> inner;
  std::uint8_t proto = 0;
  std::optional<wire::GueHeader<>::Remcsum> rcs;
  switch (payload[0] >> 6) {
    case 1: {  // V-7: no GUE header, the payload is the IP packet itself
      const unsigned nib = payload[0] >> 4;
      if (nib != 4 && nib != 6) return fail(Drop::RxBadHeader);
      proto = nib == 4 ? wire::ipproto::kIpip : wire::ipproto::kIpv6;
      inner = payload;
      break;
    }
    case 0: {
      auto h = wire::GueHeader<>::parse(payload);  // V-9
      if (!h) {
        return fail(h.error().code == wire::Errc::Truncated ? Drop::RxTruncated
                                                            : Drop::RxBadHeader);
      }
      if (h.value().control()) return fail(Drop::RxBadHeader);  // no control messages
      proto = h.value().proto_ctype();
      rcs = h.value().remcsum();
      inner = payload.subspan(h.value().header_len());
      break;
    }
    default:
      return fail(Drop::RxBadHeader);
  }
  if (inner.empty()) return fail(Drop::RxTruncated);
  const unsigned nib = inner[0] >> 4;
  if (!((proto == wire::ipproto::kIpip && nib == 4) || (proto == wire::ipproto::kIpv6 && nib == 6)))
    return fail(Drop::RxNotIp);
  if (rcs && !cfg.remcsum_rx) return fail(Drop::RxRcoNotEnabled);
  // ip_rcv_core / ip6_rcv_core on the inner packet: header present, lengths hold, padding
  // trimmed (pskb_trim_rcsum).
  const InnerIpCheck ip = check_inner_ip(inner, nib == 4 ? wire::ethertype::kIpv4 : wire::ethertype::kIpv6);
  if (ip.verdict == InnerIpVerdict::TooSmall) return fail(Drop::RxInnerTooSmall);
  if (ip.verdict == InnerIpVerdict::HdrError) return fail(Drop::RxInnerHdrError);
  inner = inner.first(ip.len);
  if (rcs) {
    // gue_remcsum: the checksum field (offset, 2 bytes) and start lie inside the packet.
    if (std::size_t(rcs->offset) + 2 > inner.size() || rcs->start >= inner.size())
      return fail(Drop::RxRcoBadOffset);
    if (outer == OuterCsum::Zero) {  // K-2: nothing protects the inner packet
      ++c.rx_rco_nocsum;
      return fail(Drop::RxRcoNoOuterCsum);
    }
    r.pkt = core::Packet::from_bytes(inner);
    if (!detail::remcsum_receive(r.pkt, rcs->start, rcs->offset, cfg.remcsum_nopartial, c))
      return fail(Drop::RxRcoBadOffset);
    r.rco = true;
  } else {
    r.pkt = core::Packet::from_bytes(inner);
    // K-9 (integrity mode): a seed in the inner field is CHECKSUM_PARTIAL under an
    // outer UDP checksum the kernel verified before the socket saw the datagram; under a
    // zero one it is not trusted (rx_seed.hpp).
    detail::take_seed(r.pkt, seed_partial_ip(inner), outer != OuterCsum::Zero, c);
  }
  // ip_tunnel_rcv → IP_ECN_decapsulate (RFC 6040 §4.2), after gue_remcsum as in the kernel.
  if (outer_tos >= 0 &&
      !ecn_decap_ip(r.pkt, 0, nib == 6, std::uint8_t(outer_tos), c.rx_ecn_ce, c.rx_ecn_bogus))
    return fail(Drop::RxEcnNotEct);
  r.ok = true;
  return r;
}

}  // namespace ofld::tunnel

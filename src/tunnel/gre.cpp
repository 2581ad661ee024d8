// GRE encapsulation / decapsulation for the gre / ip6gre mode (gre_build_header,
// gre_parse_header, ip_tunnel_rcv in net/ipv4; RFC 2784, RFC 2890; spec V-12, V-13).
#include "ofld/core/csum.hpp"
#include "ofld/tunnel/inner_ip.hpp"
#include "ofld/tunnel/ip_tunnel.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"

#include "rx_seed.hpp"

namespace ofld::tunnel {

std::size_t gre_build_header(std::uint16_t proto, const GreConfig& cfg,
                             std::span<std::uint8_t> out) {
  wire::GreRepr h;
  h.protocol = proto;
  if (cfg.ocsum) h.checksum = 0;
  h.key = cfg.okey;
  return h.emit(out);
}

void gre_fill_checksum(std::span<std::uint8_t> pkt) noexcept {
  if (pkt.size() < 8 || !(pkt[0] & 0x80)) return;
  wire::store_be16(pkt.data() + wire::gre::kCsumOffset, 0);
  wire::store_be16(pkt.data() + wire::gre::kCsumOffset, csum::ip_compute_csum(pkt.data(), pkt.size()));
}

DecapResult gre_decap(std::span<const std::uint8_t> payload, const GreConfig& cfg,
                        Counters& c, int outer_tos) {
  DecapResult r;
  auto fail = [&](Drop d) {
    r.reason = d;
    c.drop(d);
    return std::move(r);
  };
  auto hp = wire::GreHeader<>::parse(payload);
  if (!hp) return fail(Drop::RxTruncated);
  const auto& h = hp.value();
  // gre_parse_header: version 0 only; RFC 1701 routing is not supported by Linux either.
  if (h.version() != 0 || h.routing_present()) return fail(Drop::RxBadHeader);
  // ip_tunnel_rcv: a checksum present but not expected, or expected but absent → drop.
  if (h.csum_present() != cfg.icsum) return fail(Drop::RxCsumFlagMismatch);
  const std::size_t hlen = h.header_len();
  csum::wsum inner_sum = 0;
  if (h.csum_present()) {
    const csum::wsum all = csum::csum_partial(payload);
    if (csum::csum_fold(all) != 0) return fail(Drop::RxGreCsumBad);  // V-13
    ++c.rx_gre_csum_ok;
    // hlen is a multiple of 4, so the inner sum is the total minus the header's.
    inner_sum = csum::csum_sub(all, csum::csum_partial(payload.first(hlen)));
  }
  // ip_tunnel_lookup: the key flag and value must match the tunnel's ikey.
  if (h.key() != cfg.ikey) return fail(Drop::RxKeyMismatch);
  auto inner = payload.subspan(hlen);
  if (inner.empty()) return fail(Drop::RxTruncated);
  const unsigned nib = inner[0] >> 4;
  const std::uint16_t proto = h.protocol();
  if (!((proto == wire::ethertype::kIpv4 && nib == 4) || (proto == wire::ethertype::kIpv6 && nib == 6)))
    return fail(Drop::RxNotIp);
  // ip_rcv_core / ip6_rcv_core on the inner packet: header present, lengths hold, padding
  // trimmed (pskb_trim_rcsum, which also takes the padding out of a CHECKSUM_COMPLETE sum).
  const InnerIpCheck ip = check_inner_ip(inner, proto);
  if (ip.verdict == InnerIpVerdict::TooSmall) return fail(Drop::RxInnerTooSmall);
  if (ip.verdict == InnerIpVerdict::HdrError) return fail(Drop::RxInnerHdrError);
  if (ip.len < inner.size()) {
    if (h.csum_present())
      inner_sum = csum::csum_block_sub(inner_sum, csum::csum_partial(inner.subspan(ip.len)), ip.len);
    inner = inner.first(ip.len);
  }
  r.pkt = core::Packet::from_bytes(inner);
  // A verified GRE checksum gives the inner packet's sum for free (CHECKSUM_COMPLETE).
  if (h.csum_present()) r.pkt.csum = core::CsumComplete{inner_sum};
  // K-9 (integrity mode): a seed in the inner field is CHECKSUM_PARTIAL when the
  // GRE checksum, verified above, covers the bytes; without a GRE checksum it is not trusted
  // (rx_seed.hpp). A COMPLETE sum would fail the inner verification against a seed.
  detail::take_seed(r.pkt, seed_partial_ip(inner), h.csum_present(), c);
  // ip_tunnel_rcv / __ip6_tnl_rcv → IP_ECN_decapsulate (RFC 6040 §4.2); an IPv6 inner's
  // COMPLETE sum follows the traffic-class change.
  if (outer_tos >= 0 &&
      !ecn_decap_ip(r.pkt, 0, nib == 6, std::uint8_t(outer_tos), c.rx_ecn_ce, c.rx_ecn_bogus))
    return fail(Drop::RxEcnNotEct);
  r.ok = true;
  return r;
}

}  // namespace ofld::tunnel

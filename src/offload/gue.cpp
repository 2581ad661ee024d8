// The GUE offload module (net/ipv4/fou_core.c): GRO receive / complete and the GSO hook.
//
// GUE GRO (net/ipv4/fou_core.c: gue_gro_receive / gue_gro_complete; W-20, W-21, RCO W-22/W-23,
// header V-6..V-10). The GUE layer clears the tunnel mark (it only puts a UDP layer in front
// of an IP-protocol tunnel) and sets is_fou.
#include <cstring>

#include "gro_protos.hpp"
#include "gro_rules.hpp"
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/tunnel.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gro_hooks {

namespace gue = wire::gue;
using GueView = wire::GueHeader<const std::uint8_t>;

namespace {
// validate_gue_flags (V-9).
bool gue_flags_invalid(const std::uint8_t* gh, std::size_t optlen) noexcept {
  const std::uint16_t flags = wire::load_be16(gh + gue::kFlagsOffset);
  if (flags & ~gue::kFlagsAll) return true;
  std::size_t len = (flags & gue::kFlagPriv) ? gue::kLenPriv : 0;
  if (len > optlen) return true;
  if (flags & gue::kFlagPriv) {
    const std::uint32_t pflags = wire::load_be32(gh + gue::kPrivOffset);
    if (pflags & ~gue::kPflagsAll) return true;
    if (pflags & gue::kPflagRemcsum) len += gue::kPlenRemcsum;
    if (len > optlen) return true;
  }
  return false;
}
// The GUE version bits of byte 0 (V-6, V-7).
unsigned gue_version(const std::uint8_t* gh) noexcept { return gh[0] >> gue::kVersionShift; }
// The inner IP protocol of a version-1 GUE packet (bare IP): IPIP or IPv6 by the IP version.
std::uint8_t v1_proto(const std::uint8_t* gh) noexcept {
  return wire::ip_version(gh) == 4 ? wire::ipproto::kIpip : wire::ipproto::kIpv6;
}
}  // namespace

void gue_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  GroRemcsum grc;
  bool flush = true;
  std::uint8_t proto = 0;
  bool go = false;
  const std::uint8_t* gh = gro_header(ctx, off, gue::kBaseLen);
  if (!gh) {
    ctx.note_skb(GroReason::Truncated);
  } else if (gue_version(gh) == gue::kVersion1) {  // V-7: version 1 = bare IPv4/IPv6
    const unsigned v = wire::ip_version(gh);
    if (v == 4 || v == 6) {
      proto = v1_proto(gh);
      go = true;
      // The kernel compares no GUE header here; the first byte is this layer's header
      // (version 1 and the IP version): a held flow of the other IP version or of GUE
      // version 0 is another flow, and is never read as this packet's IP header.
      for (GroHeld* p : ctx.candidates) {
        if (!p->same_flow) continue;
        if (p->pkt.headlen() <= off || wire::ip_version(held_header(*p, off)) != v)
          p->same_flow = false;
      }
    } else {
      ctx.note_skb(GroReason::GueInvalid);
    }
  } else if (gue_version(gh) != 0) {
    ctx.note_skb(GroReason::GueInvalid);
  } else {
    const std::size_t hdrlen = GueView::unchecked(gh).header_len();
    const std::size_t optlen = hdrlen - gue::kBaseLen;
    gh = gro_header(ctx, off, hdrlen);
    if (!gh) {
      ctx.note_skb(GroReason::Truncated);
    } else if (GueView::unchecked(gh).control() || gue_flags_invalid(gh, optlen)) {  // V-9
      ctx.note_skb(GroReason::GueInvalid);
    } else {
      gro_postpull_rcsum(ctx, off, hdrlen);
      bool ok = true;
      if (const auto rco = GueView::unchecked(gh).remcsum(); rco && !ctx.skb->remcsum_offload) {
        const std::size_t start = rco->start, offset = rco->offset;
        const bool nopartial = ctx.udp_tunnel && ctx.udp_tunnel->remcsum_nopartial;
        if (!ctx.csum_valid) {
          ctx.note_skb(GroReason::RcoNoCsum);
          ok = false;
        } else if (offset < start) {
          ctx.note_skb(GroReason::GueInvalid);
          ok = false;
        } else if (!gro_remcsum_process(ctx, off, hdrlen, start, offset, grc, nopartial)) {
          ctx.note_skb(GroReason::Truncated);
          ok = false;
        } else {
          ctx.skb->remcsum_offload = true;
        }
        gh = gro_header(ctx, off, hdrlen);
      }
      if (ok) {
        ctx.data_offset += std::uint32_t(hdrlen);
        for (GroHeld* p : ctx.candidates) {
          if (!p->same_flow) continue;
          const std::uint8_t* gh2 = held_header(*p, off);
          // the base header (version, C, hlen, protocol, flags), then the options
          if (std::memcmp(gh, gh2, gue::kBaseLen) != 0 ||
              (optlen && std::memcmp(gh + gue::kOptionsOffset, gh2 + gue::kOptionsOffset, optlen) != 0))
            p->same_flow = false;
        }
        proto = GueView::unchecked(gh).proto_ctype();
        go = true;
      }
    }
  }
  if (go) {
    ctx.encap_mark = false;  // W-20/W-21
    ctx.is_fou = true;
    gro_call_receive(ctx, Key::IpProto, proto);
    flush = false;
  }
  gro_flush_final_remcsum(ctx, flush, grc);
}

int gue_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  const std::uint8_t* gh = p.data() + nhoff;
  std::uint8_t proto;
  std::uint32_t guehlen;
  switch (gue_version(gh)) {
    case 0:
      proto = GueView::unchecked(gh).proto_ctype();
      guehlen = std::uint32_t(GueView::unchecked(gh).header_len());
      break;
    case gue::kVersion1:
      proto = v1_proto(gh);
      guehlen = 0;
      break;
    default:
      return -1;
  }
  const int err = gro_call_complete(ctx, Key::IpProto, proto, nhoff + guehlen);
  p.set_inner_mac_header(int(nhoff + guehlen));
  return err;
}

}  // namespace ofld::offload::gro_hooks

// GUE GSO hook (V-6..V-10). Linux FOU/GUE sets inner_protocol_type IPPROTO with the GUE
// header's protocol (IPIP 4, IPv6 41) and segments through the generic UDP tunnel path
// this hook reads the GUE header (version 0: proto field; version 1: the IP version
// nibble, V-7) so that the inner protocol comes from the packet itself, then hands over.

namespace ofld::offload::gso_hooks {

int gue_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  constexpr std::size_t kUdp = wire::udp::kHdrLen;
  if (!skb.may_pull(kUdp + wire::gue::kBaseLen)) return ctx.fail(GsoReason::BadTunnel);
  const std::uint8_t* gh = skb.data() + kUdp;
  const auto g = wire::GueHeader<const std::uint8_t>::unchecked(gh);
  std::uint8_t proto;
  int hlen;  // UDP + GUE header (V-6: 4 bytes + hlen words of options; version 1: none)
  switch (g.version()) {
    case 0:
      if (g.control()) return ctx.fail(GsoReason::BadTunnel);  // control message
      proto = g.proto_ctype();
      hlen = int(kUdp + g.header_len());
      break;
    case wire::gue::kVersion1:
      proto = wire::Ipv6Header<const std::uint8_t>::unchecked(gh).version() == 4
                  ? wire::ipproto::kIpip : wire::ipproto::kIpv6;
      hlen = int(kUdp);
      break;
    default:
      return ctx.fail(GsoReason::BadTunnel);
  }
  if (proto != wire::ipproto::kIpip && proto != wire::ipproto::kIpv6)
    return ctx.fail(GsoReason::BadTunnel);
  skb.inner_protocol_type = core::InnerProtoType::IpProto;
  skb.inner_ipproto = proto;
  return udp_tunnel_segment(ctx, /*inner_ether=*/false, hlen);
}

}  // namespace ofld::offload::gso_hooks

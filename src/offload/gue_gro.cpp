// GUE GRO (net/ipv4/fou_core.c: gue_gro_receive / gue_gro_complete; W-20, W-21, RCO W-22/W-23,
// header V-6..V-10). The GUE layer clears the tunnel mark (it only puts a UDP layer in front
// of an IP-protocol tunnel) and sets is_fou.
#include <cstring>

#include "gro_protos.hpp"

namespace ofld::offload::gro_hooks {

namespace {
constexpr std::uint16_t kFlagPriv = 0x0001;          // GUE_FLAG_PRIV (V-8)
constexpr std::uint32_t kPflagRemcsum = 0x80000000u;  // GUE_PFLAG_REMCSUM

// validate_gue_flags (V-9).
bool gue_flags_invalid(const std::uint8_t* gh, std::size_t optlen) noexcept {
  const std::uint16_t flags = wire_load16(gh + 2);
  if (flags & ~kFlagPriv) return true;
  std::size_t len = (flags & kFlagPriv) ? 4 : 0;
  if (len > optlen) return true;
  if (flags & kFlagPriv) {
    const std::uint32_t pflags = wire_load32(gh + 4 + len - 4);
    if (pflags & ~kPflagRemcsum) return true;
    if (pflags & kPflagRemcsum) len += 4;
    if (len > optlen) return true;
  }
  return false;
}
}  // namespace

void gue_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  GroRemcsum grc;
  bool flush = true;
  std::uint8_t proto = 0;
  bool go = false;
  const std::uint8_t* gh = gro_header(ctx, off, 4);
  if (!gh) {
    ctx.note_skb(GroReason::Truncated);
  } else if ((gh[0] >> 6) == 1) {  // V-7: version 1 = bare IPv4/IPv6
    const std::uint8_t v = gh[0] >> 4;
    if (v == 4 || v == 6) {
      proto = v == 4 ? 4 : 41;
      go = true;
      // The kernel compares no GUE header here; the first byte is this layer's header
      // (version 1 and the IP version): a held flow of the other IP version or of GUE
      // version 0 is another flow, and is never read as this packet's IP header.
      for (GroHeld* p : ctx.candidates) {
        if (!p->same_flow) continue;
        if (p->pkt.headlen() <= off || ((held_header(*p, off)[0] ^ gh[0]) & 0xF0) != 0)
          p->same_flow = false;
      }
    } else {
      ctx.note_skb(GroReason::GueInvalid);
    }
  } else if ((gh[0] >> 6) != 0) {
    ctx.note_skb(GroReason::GueInvalid);
  } else {
    const std::size_t optlen = std::size_t(gh[0] & 0x1F) * 4;
    const std::size_t hdrlen = 4 + optlen;
    gh = gro_header(ctx, off, hdrlen);
    if (!gh) {
      ctx.note_skb(GroReason::Truncated);
    } else if ((gh[0] & 0x20) || gue_flags_invalid(gh, optlen)) {  // control message / flags
      ctx.note_skb(GroReason::GueInvalid);
    } else {
      gro_postpull_rcsum(ctx, off, hdrlen);
      bool ok = true;
      if (wire_load16(gh + 2) & kFlagPriv) {
        const std::uint32_t pflags = wire_load32(gh + 4);
        if ((pflags & kPflagRemcsum) && !ctx.skb->remcsum_offload) {
          const std::size_t start = wire_load16(gh + 8), offset = wire_load16(gh + 10);
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
      }
      if (ok) {
        ctx.data_offset += std::uint32_t(hdrlen);
        for (GroHeld* p : ctx.candidates) {
          if (!p->same_flow) continue;
          const std::uint8_t* gh2 = held_header(*p, off);
          if (wire_load32(gh) != wire_load32(gh2) ||
              (optlen && std::memcmp(gh + 4, gh2 + 4, optlen) != 0))
            p->same_flow = false;
        }
        proto = gh[1];
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
  switch (gh[0] >> 6) {
    case 0:
      proto = gh[1];
      guehlen = 4 + std::uint32_t(gh[0] & 0x1F) * 4;
      break;
    case 1:
      proto = (gh[0] >> 4) == 4 ? 4 : 41;
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

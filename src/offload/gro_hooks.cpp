// GRO helpers shared by the protocol modules (include/net/gro.h, net/core/gro.c) and the
// registration of every module's gro_receive / gro_complete hooks.
#include <algorithm>
#include <cstring>

#include "gro_protos.hpp"
#include "ofld/offload/gro_context.hpp"

namespace ofld::offload {

using core::wsum;
namespace cs = ofld::csum;

std::string_view to_string(GroReason r) noexcept {
  switch (r) {
    case GroReason::None: return "none";
    case GroReason::NewFlow: return "new_flow";
    case GroReason::GroDisabled: return "gro_disabled";
    case GroReason::NoHandler: return "no_handler";
    case GroReason::Truncated: return "truncated";
    case GroReason::HasFragList: return "has_frag_list";
    case GroReason::GsoInput: return "gso_input";
    case GroReason::Recursion: return "recursion";
    case GroReason::IpOptions: return "ip_options";
    case GroReason::IpFragment: return "ip_fragment";
    case GroReason::IpHeaderCsum: return "ip_header_csum";
    case GroReason::IpLength: return "ip_length";
    case GroReason::IpReservedBit: return "ip_reserved_bit";
    case GroReason::Ttl: return "ttl";
    case GroReason::Tos: return "tos_ecn";
    case GroReason::Df: return "df";
    case GroReason::IpId: return "ip_id";
    case GroReason::Checksum: return "checksum";
    case GroReason::TcpHeader: return "tcp_header";
    case GroReason::Flags: return "flags";
    case GroReason::Ack: return "ack";
    case GroReason::Options: return "options";
    case GroReason::Size: return "size";
    case GroReason::SeqGap: return "seq_gap";
    case GroReason::SizeLimit: return "size_limit";
    case GroReason::FinalFlags: return "final_flags";
    case GroReason::FraglistCsum: return "fraglist_csum";
    case GroReason::FraglistCount: return "fraglist_count";
    case GroReason::FraglistMode: return "fraglist_mode";
    case GroReason::ShortSegment: return "short_segment";
    case GroReason::UdpZeroCsum: return "udp_zero_csum";
    case GroReason::UdpLength: return "udp_length";
    case GroReason::UdpNoGro: return "udp_no_gro";
    case GroReason::UdpLonger: return "udp_longer";
    case GroReason::UdpCountMax: return "udp_count_max";
    case GroReason::UdpEncapLocal: return "udp_encap_local";
    case GroReason::TunnelNested: return "tunnel_nested";
    case GroReason::TunnelCsum: return "tunnel_csum";
    case GroReason::GreFlags: return "gre_flags";
    case GroReason::GreCsumFou: return "gre_csum_fou";
    case GroReason::GueInvalid: return "gue_invalid";
    case GroReason::RcoNoCsum: return "rco_no_csum";
    case GroReason::TableFull: return "table_full";
    case GroReason::Timeout: return "timeout";
    case GroReason::PollEnd: return "poll_end";
    case GroReason::Count_: break;
  }
  return "?";
}

const std::uint8_t* gro_header_pull(GroContext& ctx, std::size_t off, std::size_t n) noexcept {
  core::Packet& p = *ctx.skb;
  if (off + n <= p.headlen()) return p.data() + off;
  if (off + n > p.len()) return nullptr;
  if (!p.may_pull(off + n)) return nullptr;
  return p.data() + off;
}

std::uint8_t* gro_header_mut(GroContext& ctx, std::size_t off, std::size_t n) noexcept {
  return const_cast<std::uint8_t*>(gro_header(ctx, off, n));
}

bool gro_checksum_validate_needed(const GroContext& ctx, bool zero_okay,
                                  std::uint16_t check) noexcept {
  if (const auto* part = std::get_if<core::CsumPartial>(&ctx.skb->csum)) {
    if (std::int64_t(part->csum_start) - ctx.skb->data_pos() >= std::int64_t(ctx.data_offset))
      return false;
  }
  if (ctx.gro_remcsum_start == std::int64_t(ctx.data_offset)) return false;
  if (ctx.csum_cnt != 0) return false;
  return !zero_okay || check != 0;
}

std::uint16_t gro_checksum_validate(GroContext& ctx, bool zero_okay, std::uint16_t check,
                                    wsum psum) noexcept {
  std::uint16_t ret = 0;
  if (gro_checksum_validate_needed(ctx, zero_okay, check)) {
    if (!(ctx.csum_valid && cs::csum_fold(cs::csum_add(psum, ctx.csum)) == 0)) {
      // __skb_gro_checksum_complete: sum the rest of the packet in software.
      const wsum w = ctx.skb->checksum(ctx.data_offset, ctx.gro_len(), 0);
      ret = cs::csum_fold(cs::csum_add(psum, w));
      ctx.csum = w;
      ctx.csum_valid = true;
    }
  }
  if (ret == 0) {  // G-13
    if (ctx.csum_cnt > 0)
      --ctx.csum_cnt;
    else
      core::incr_checksum_unnecessary(*ctx.skb);
  }
  return ret;
}

void gro_checksum_try_convert(GroContext& ctx, wsum psum) noexcept {
  if (ctx.csum_cnt == 0 && !ctx.csum_valid) {
    ctx.csum = ~psum;
    ctx.csum_valid = true;
  }
}

void gro_postpull_rcsum(GroContext& ctx, std::size_t off, std::size_t n) noexcept {
  if (!ctx.csum_valid) return;
  const std::uint8_t* h = gro_header(ctx, off, n);
  if (!h) return;
  ctx.csum = cs::csum_sub(ctx.csum, cs::csum_partial(h, n, 0));
}

void gro_append_payload(core::Packet& skb, std::size_t data_offset, GroHeld& p) noexcept {
  // Payload bytes in the skb's head are copied into p's aggregate buffer; fragments are
  // stolen by reference (G-19 without the MAX_SKB_FRAGS/frag_list geometry).
  const std::size_t head_from = std::min<std::size_t>(data_offset, skb.headlen());
  const std::size_t head_n = skb.headlen() - head_from;
  if (head_n) {
    if (!p.agg) {
      p.agg = core::Buffer::create();
      p.agg->bytes.reserve(65536);
    }
    auto& v = p.agg->bytes;
    const std::size_t at = v.size();
    v.insert(v.end(), skb.data() + head_from, skb.data() + head_from + head_n);
    auto fr = p.pkt.frags();
    if (!(!fr.empty() && fr.back().buf == p.agg && fr.back().off + fr.back().len == at &&
          p.pkt.extend_last_frag(head_n)))
      p.pkt.add_frag(p.agg, at, head_n);
  }
  std::size_t skip = data_offset > skb.headlen() ? data_offset - skb.headlen() : 0;
  // Room for an aggregate's worth of fragments at once rather than doubling from the inline
  // four (the storage only; the fragment list itself is the same).
  const std::size_t want = p.pkt.nr_frags() + skb.nr_frags();
  if (p.pkt.nr_frags() <= core::detail::FragVec::kInline && want > core::detail::FragVec::kInline)
    p.pkt.reserve_frags(std::max<std::size_t>(want, 64));
  for (auto& f : skb.frags()) {
    if (skip >= f.len) {
      skip -= f.len;
      continue;
    }
    p.pkt.add_frag_slice(std::move(f.buf), f.off + std::uint32_t(skip), f.len - std::uint32_t(skip));
    skip = 0;
  }
}

bool gro_merge(GroContext& ctx, GroHeld& p) noexcept {
  core::Packet& skb = *ctx.skb;
  const std::size_t len = ctx.gro_len();
  const std::size_t plen = p.pkt.len() - p.network_offsets[0];  // p->len from the network header
  const std::uint32_t max = p.is_ipv6 ? ctx.cfg->gro_max_size : ctx.cfg->gro_ipv4_max_size;
  if (plen + len >= max || ctx.flush) return false;                       // G-16
  if (plen + len >= 65536 && (ctx.proto != 6 || p.encap_mark)) return false;  // G-17
  if (!skb.frag_list().empty()) return false;

  gro_append_payload(skb, ctx.data_offset, p);
  p.count = std::uint16_t(p.count + ctx.count);
  ctx.same_flow = true;
  return true;
}

bool gro_merge_list(GroContext& ctx, GroHeld& p) noexcept {
  core::Packet& skb = *ctx.skb;
  const std::size_t nh = ctx.network_offsets[ctx.encap_mark ? 1 : 0];
  const std::size_t plen = p.pkt.len() - p.network_offsets[0];
  const std::size_t slen = skb.len() - ctx.network_offsets[0];
  if (plen + slen >= 65536 || ctx.flush) return false;  // G-21
  if (!skb.frag_list().empty() || ctx.data_offset > skb.len()) return false;
  skb.set_network_header(int(nh));
  skb.set_transport_header(int(ctx.transport_offset));
  if (!skb.pskb_pull(ctx.data_offset)) return false;
  p.pkt.add_to_frag_list(std::move(skb));
  p.count = std::uint16_t(p.count + 1);
  ctx.same_flow = true;
  return true;
}

bool gro_flist_csum_match(const core::Packet& a, const core::Packet& b) noexcept {
  if (a.ip_summed() != b.ip_summed()) return false;
  const auto* ua = std::get_if<core::CsumUnnecessary>(&a.csum);
  const auto* ub = std::get_if<core::CsumUnnecessary>(&b.csum);
  return !ua || !ub || ua->level == ub->level;
}

void gro_call_receive(GroContext& ctx, Key key, std::uint16_t number) noexcept {
  const ProtocolOffload* po = ctx.reg ? ctx.reg->find(key, number) : nullptr;
  if (!po || !po->gro_receive) {
    ctx.flush_skb(GroReason::NoHandler);
    return;
  }
  if (++ctx.recursion >= kGroRecursionLimit) {
    ctx.flush_skb(GroReason::Recursion);
    return;
  }
  po->gro_receive(ctx);
}

int gro_call_complete(GroContext& ctx, Key key, std::uint16_t number, std::uint32_t nhoff) noexcept {
  const ProtocolOffload* po = ctx.reg ? ctx.reg->find(key, number) : nullptr;
  if (!po || !po->gro_complete) return -1;
  return po->gro_complete(ctx, nhoff);
}

namespace {

// ipv6_gro_flush (N-10).
GroReason ipv6_flush(const std::uint8_t* a, const std::uint8_t* b) noexcept {
  const std::uint32_t w = wire_load32(a) ^ wire_load32(b);
  if (w & 0x0FF00000u) return GroReason::Tos;
  if (a[7] != b[7]) return GroReason::Ttl;
  return GroReason::None;
}

// inet_gro_flush (N-12, N-15 as on 6.18: fixed-ID marking without DF, per header).
GroReason inet_flush(const std::uint8_t* a, const std::uint8_t* b, GroHeld& p, bool inner) noexcept {
  if (a[8] != b[8]) return GroReason::Ttl;
  if (a[1] != b[1]) return GroReason::Tos;
  if ((a[6] ^ b[6]) & 0x40) return GroReason::Df;
  const std::uint16_t id = std::uint16_t(a[4] << 8 | a[5]);
  const std::uint16_t id2 = std::uint16_t(b[4] << 8 | b[5]);
  const std::uint16_t delta = std::uint16_t(id - id2);
  const std::uint8_t bit = std::uint8_t(1u << (inner ? 1 : 0));
  if (p.count == 1 && delta == 0) p.ip_fixedid |= bit;
  const std::uint16_t want = (p.ip_fixedid & bit) ? 0 : p.count;
  return delta == want ? GroReason::None : GroReason::IpId;
}

GroReason l3_flush(const std::uint8_t* a, const std::uint8_t* b, GroHeld& p, bool inner) noexcept {
  if ((a[0] >> 4) == 6) return ipv6_flush(a, b);
  return inet_flush(a, b, p, inner);
}

}  // namespace

GroReason gro_network_flush(GroContext& ctx, GroHeld& p, std::size_t) noexcept {
  auto one = [&](std::size_t off, bool inner) {
    const std::uint8_t* b = held_header(p, off);
    const std::uint8_t* a = gro_header(ctx, off, (b[0] >> 4) == 6 ? 40 : 20);
    if (!a) return GroReason::Truncated;
    return l3_flush(a, b, p, inner);
  };
  GroReason r = one(p.network_offsets[0], false);
  if (r == GroReason::None && p.encap_mark) r = one(p.network_offsets[1], true);
  return r;
}

bool gro_remcsum_process(GroContext& ctx, std::size_t off, std::size_t hdrlen, std::size_t start,
                         std::size_t offset, GroRemcsum& grc, bool nopartial) noexcept {
  if (!nopartial) {
    ctx.gro_remcsum_start = std::int64_t(off + hdrlen + start);
    return true;
  }
  const std::size_t plen = hdrlen + std::max(offset + 2, start);
  std::uint8_t* ptr = gro_header_mut(ctx, off, plen);
  if (!ptr) return false;
  const wsum delta =
      core::remcsum_adjust({ptr + hdrlen, plen - hdrlen}, ctx.csum, start, offset);
  ctx.csum = cs::csum_add(ctx.csum, delta);
  grc.offset = std::uint32_t(off + hdrlen + offset);
  grc.delta = delta;
  return true;
}

void gro_flush_final_remcsum(GroContext& ctx, bool flush, const GroRemcsum& grc) noexcept {
  if (flush) ctx.flush = true;
  if (grc.delta) {
    if (std::uint8_t* f = gro_header_mut(ctx, grc.offset, 2)) core::remcsum_unadjust(f, grc.delta);
  }
  ctx.skb->remcsum_offload = false;
}

}  // namespace ofld::offload

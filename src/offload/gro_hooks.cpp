// GRO helpers shared by the protocol modules (include/net/gro.h, net/core/gro.c) and the
// registration of every module's gro_receive / gro_complete hooks.
#include <algorithm>
#include <cstring>

#include "gro_protos.hpp"
#include "gro_rules.hpp"
#include "ofld/core/skb_gro.hpp"
#include "ofld/offload/gro_context.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"

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
    case GroReason::GeneveVerOam: return "geneve_ver_oam";
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

bool gro_merge(GroContext& ctx, GroHeld& p) noexcept {
  const std::uint32_t max = gro_size_limit(*ctx.cfg, p.is_ipv6);
  if (ctx.flush) return false;  // G-16: a flushed skb is never merged
  // G-17: only plain TCP aggregates may exceed 64 KiB (BIG TCP; gro_max_size bounds them).
  const bool beyond_64k = ctx.proto == wire::ipproto::kTcp && !p.encap_mark;
  if (!core::skb_gro_receive(p.pkt, p.agg, *ctx.skb, ctx.data_offset,
                             p.pkt.len() - p.network_offsets[0], max, beyond_64k))
    return false;
  p.count = std::uint16_t(p.count + ctx.count);
  ctx.same_flow = true;
  return true;
}

bool gro_merge_list(GroContext& ctx, GroHeld& p) noexcept {
  if (ctx.flush) return false;  // G-21
  core::Packet& skb = *ctx.skb;
  const int nh = ctx.network_offsets[ctx.encap_mark ? 1 : 0];
  if (!core::skb_gro_receive_list(p.pkt, skb, ctx.data_offset, nh, int(ctx.transport_offset),
                                  p.pkt.len() - p.network_offsets[0],
                                  skb.len() - ctx.network_offsets[0]))
    return false;
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
  const auto x = wire::Ipv6Header<const std::uint8_t>::unchecked(a);
  const auto y = wire::Ipv6Header<const std::uint8_t>::unchecked(b);
  if (x.traffic_class() != y.traffic_class()) return GroReason::Tos;
  if (x.hop_limit() != y.hop_limit()) return GroReason::Ttl;
  return GroReason::None;
}

// inet_gro_flush (N-12, N-15 as on 6.18: fixed-ID marking without DF, per header).
GroReason inet_flush(const std::uint8_t* a, const std::uint8_t* b, GroHeld& p, bool inner) noexcept {
  const auto x = wire::Ipv4Header<const std::uint8_t>::unchecked(a);
  const auto y = wire::Ipv4Header<const std::uint8_t>::unchecked(b);
  if (x.ttl() != y.ttl()) return GroReason::Ttl;
  if (x.tos() != y.tos()) return GroReason::Tos;
  if (x.df() != y.df()) return GroReason::Df;
  const std::uint8_t bit = std::uint8_t(1u << (inner ? 1 : 0));
  const auto id = gro_rules::inet_id(x.id(), y.id(), p.count,
                                     (p.ip_fixedid & bit) != 0);
  if (id.mark) p.ip_fixedid |= bit;
  return id.ok ? GroReason::None : GroReason::IpId;
}

GroReason l3_flush(const std::uint8_t* a, const std::uint8_t* b, GroHeld& p, bool inner) noexcept {
  if (wire::ip_version(a) == 6) return ipv6_flush(a, b);
  return inet_flush(a, b, p, inner);
}

}  // namespace

GroReason gro_network_flush(GroContext& ctx, GroHeld& p, std::size_t) noexcept {
  auto one = [&](std::size_t off, bool inner) {
    const std::uint8_t* b = held_header(p, off);
    const std::uint8_t* a = gro_header(
        ctx, off, wire::ip_version(b) == 6 ? wire::ipv6::kHdrLen : wire::ipv4::kMinLen);
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

void gro_hold_init(GroHeld& h, const GroContext& ctx) noexcept {
  h.count = ctx.count;
  h.data_offset = std::uint16_t(ctx.data_offset);
  h.network_offsets = ctx.network_offsets;
  h.transport_offset = ctx.transport_offset;
  h.proto = ctx.proto;
  h.ip_fixedid = 0;
  h.encap_mark = ctx.encap_mark;
  h.is_flist = ctx.is_flist;  // T-4 / U-3 fraglist mode of the new flow
  h.is_ipv6 = ctx.protocol == wire::ethertype::kIpv6;
  h.same_flow = false;
}

void gro_hold_next(GroHeld& h, const GroHeld& p) noexcept {
  h.hash = p.hash;
  h.count = 1;
  h.data_offset = p.data_offset;
  h.network_offsets = p.network_offsets;
  h.transport_offset = p.transport_offset;
  h.proto = p.proto;
  h.ip_fixedid = 0;
  h.encap_mark = p.encap_mark;
  h.is_flist = p.is_flist;
  h.is_ipv6 = p.is_ipv6;
  h.same_flow = false;
  h.flow_area = p.flow_area;
}

std::unique_ptr<Registry> gro_registry_for(const Registry& base, std::uint32_t t,
                                           GroConfig& cfg) {
  namespace sg = core::skb_gso;
  namespace et = wire::ethertype;
  namespace ip = wire::ipproto;
  auto all = [t](std::uint32_t bits) { return (t & bits) == bits; };
  if (all(sg::GRE | sg::GRE_CSUM | sg::IPXIP4 | sg::IPXIP6 | sg::UDP_TUNNEL |
          sg::UDP_TUNNEL_CSUM | sg::TCPV4 | sg::TCPV6 | sg::UDP_L4 | sg::FRAGLIST))
    return nullptr;
  // A table of only the protocols whose aggregates the output can carry.
  auto own = std::make_unique<Registry>();
  auto copy = [&](Key k, std::uint16_t n) {
    if (const auto* e = base.find(k, n)) own->add(k, n, *e);
  };
  copy(Key::Ethertype, et::kIpv4);
  copy(Key::Ethertype, et::kIpv6);
  copy(Key::IpProto, ip::kUdp);  // UDP: the tunnel ports and plain UDP GRO are decided below
  if (all(sg::TCPV4 | sg::TCPV6)) copy(Key::IpProto, ip::kTcp);
  if (all(sg::GRE | sg::GRE_CSUM)) {
    copy(Key::IpProto, ip::kGre);
    copy(Key::Ethertype, et::kTeb);  // Ethernet over GRE (TEB)
  }
  if (all(sg::IPXIP4 | sg::IPXIP6)) {
    copy(Key::IpProto, ip::kIpip);
    copy(Key::IpProto, ip::kIpv6);
  }
  if (all(sg::UDP_TUNNEL | sg::UDP_TUNNEL_CSUM)) {
    for (const auto& u : cfg.udp_tunnels) copy(Key::UdpPort, u.registry_port);
    copy(Key::Ethertype, et::kTeb);  // VXLAN's inner Ethernet
  } else {
    cfg.udp_tunnels.clear();
  }
  if (!(t & sg::UDP_L4)) {
    cfg.udp_gro_fwd = false;
    cfg.udp_gro_socks.clear();
  }
  if (!(t & sg::FRAGLIST)) cfg.gro_fraglist = false;
  return own;
}

namespace {
// Ones'-complement finish of a 16-bit field over [start, end) (skb_checksum_help on bytes).
void finish_at(core::Packet& p, std::size_t start, std::size_t field, bool mangle0) {
  const std::uint16_t f = cs::csum_fold(p.checksum(start, p.len() - start, 0));
  std::uint16_t v = (f == 0 && mangle0) ? 0xFFFF : f;
  std::uint8_t* q = p.header(field, 2).data();
  if (!q) return;
  wire::store_be16(q, v);
}
}  // namespace

void gro_finish_checksums(core::Packet& p) {
  const auto* part = std::get_if<core::CsumPartial>(&p.csum);
  if (!part) return;
  const int start = part->csum_start - p.data_pos();
  if (start < 0 || std::size_t(start) + part->csum_offset + 2 > p.len()) return;
  finish_at(p, std::size_t(start), std::size_t(start) + part->csum_offset, true);
  // Outer checksums that complete left as seeds (UDP tunnel with checksum) or stale (GRE C).
  if (p.encapsulation && p.transport_header != core::kNoHeader && p.network_header != core::kNoHeader) {
    const int l3 = p.network_offset(), l4 = p.transport_offset();
    namespace v4 = wire::ipv4;
    namespace v6 = wire::ipv6;
    const std::uint8_t* ip = p.header(std::size_t(l3), v6::kHdrLen).data();
    if (!ip) ip = p.header(std::size_t(l3), v4::kMinLen).data();
    if (!ip) return;
    const bool is_v6 = wire::ip_version(ip) == 6;
    if (p.gso.type & core::skb_gso::UDP_TUNNEL_CSUM) {
      constexpr std::size_t kCheck = wire::udp::kCheckOffset;
      std::uint8_t* uh = p.header(std::size_t(l4), wire::udp::kHdrLen).data();
      if (!uh) return;
      wire::store_be16(uh + kCheck, 0);
      const std::uint32_t ulen = std::uint32_t(p.len() - std::size_t(l4));
      ip = p.data() + l3;
      constexpr std::uint8_t kUdp = wire::ipproto::kUdp;
      const cs::wsum ps =
          is_v6 ? cs::csum_ipv6_nofold(ip + v6::kSaddrOffset, ip + v6::kDaddrOffset, ulen, kUdp, 0)
                : cs::csum_tcpudp_nofold(ip + v4::kSaddrOffset, ip + v4::kDaddrOffset, ulen, kUdp, 0);
      std::uint16_t v = cs::csum_fold(p.checksum(std::size_t(l4), ulen, ps));
      if (v == 0) v = 0xFFFF;  // RFC 768: a computed 0 is sent as all ones
      wire::store_be16(p.data() + l4 + kCheck, v);
    } else if (p.gso.type & core::skb_gso::GRE) {
      std::uint8_t* gh = p.header(std::size_t(l4), wire::gre::kBaseLen + wire::gre::kSectionLen).data();
      if (gh && (wire::load_be16(gh + wire::gre::kFlagsOffset) & wire::gre::kCsum)) {
        wire::store_be16(gh + wire::gre::kCsumOffset, 0);
        finish_at(p, std::size_t(l4), std::size_t(l4) + wire::gre::kCsumOffset, false);
      }
    }
  }
}

}  // namespace ofld::offload

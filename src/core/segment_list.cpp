// Fraglist GSO building blocks (net/core/skbuff.c skb_segment_list, skb_segment's
// GSO_BY_FRAGS mode; net/ipv4/tcp_offload.c and udp_offload.c *_gso_segment_list_csum).
// Spec, X-28 (fraglist branch), X-32.
#include <algorithm>
#include <cstring>

#include "ofld/core/skb_segment.hpp"

namespace ofld::core {


namespace {

constexpr std::size_t kSegHeadroom = 32;

// Network byte order; core sits below wire/, so it carries its own two helpers.
std::uint16_t load_be16(const std::uint8_t* p) noexcept { return std::uint16_t(p[0] << 8 | p[1]); }
void store_be16(std::uint8_t* p, std::uint16_t v) noexcept {
  p[0] = std::uint8_t(v >> 8);
  p[1] = std::uint8_t(v);
}

pos_t rebase(pos_t p, pos_t base) noexcept { return p == core::kNoHeader ? p : p - base; }

// Append src's bytes [data, end) without its frag_list: linear bytes copied, page frags
// referenced (sg) or copied. Returns false when the segment would exceed MAX_SKB_FRAGS.
bool append_own(Packet& dst, const Packet& src, bool sg, std::uint64_t& copied,
                std::uint64_t& referenced) {
  if (src.headlen()) {
    dst.append(src.head());
    copied += src.headlen();
  }
  for (const auto& f : src.frags()) {
    if (!f.len) continue;
    if (sg) {
      dst.add_frag(f.buf, f.off, f.len);
      referenced += f.len;
    } else {
      dst.append(f.bytes());
      copied += f.len;
    }
  }
  return dst.nr_frags() <= core::kMaxSkbFrags;
}

std::size_t own_len(const Packet& p) noexcept {
  std::size_t n = p.len();
  for (const auto& m : p.frag_list()) n -= m.len();
  return n;
}

// Payload accounting (header bytes are counted by gso_segment from the outputs).
void count(SegmentContext& ctx, std::uint64_t copied, std::uint64_t referenced) {
  if (!ctx.counters) return;
  ctx.counters->payload_bytes_copied += copied;
  ctx.counters->payload_bytes_referenced += referenced;
  ++ctx.counters->packets_fraglist;
}

}  // namespace

void copy_skb_header(const core::PacketMeta& src, core::PacketMeta& dst, pos_t base) {
  dst.mac_header = rebase(src.mac_header, base);
  dst.network_header = rebase(src.network_header, base);
  dst.transport_header = rebase(src.transport_header, base);
  dst.inner_mac_header = rebase(src.inner_mac_header, base);
  dst.inner_network_header = rebase(src.inner_network_header, base);
  dst.inner_transport_header = rebase(src.inner_transport_header, base);
  dst.protocol = src.protocol;
  dst.inner_protocol = src.inner_protocol;
  dst.inner_protocol_type = src.inner_protocol_type;
  dst.inner_ipproto = src.inner_ipproto;
  dst.vlan_tci = src.vlan_tci;
  dst.vlan_present = src.vlan_present;
  dst.vlan_proto = src.vlan_proto;
  dst.encapsulation = src.encapsulation;
  dst.encap_hdr_csum = src.encap_hdr_csum;
  dst.remcsum_offload = src.remcsum_offload;
  if (const auto* cp = std::get_if<core::CsumPartial>(&src.csum))
    dst.csum = core::CsumPartial{cp->csum_start - base, cp->csum_offset, cp->not_inet};
  else
    dst.csum = src.csum;
}

int skb_segment_by_frags(SegmentContext& ctx) {
  Packet& skb = *ctx.skb;
  const std::size_t doffset = std::size_t(skb.data_pos() - ctx.frame_start);
  const std::uint8_t* hdr = skb.at_pos(ctx.frame_start, doffset);
  if (!hdr) return ctx.fail(GsoReason::HeaderTruncated);
  if (skb.frag_list().empty()) return ctx.fail(GsoReason::NothingToSegment);
  ctx.data_offset = int(doffset);
  const bool sg = ctx.features.has(core::netif_f::SG);
  const bool csum_ok = core::can_checksum_protocol(ctx.features, ctx.protocol);
  const SegMode mode = sg ? SegMode::SgRef : (csum_ok ? SegMode::Copy : SegMode::CopySum);

  std::vector<const Packet*> runs;
  runs.push_back(&skb);
  for (const auto& m : skb.frag_list()) runs.push_back(&m);
  ctx.reset_segs(runs.size());
  std::uint64_t copied = 0, referenced = 0, sg_sum = 0;
  for (const Packet* r : runs) {
    if (r->len() == 0 || (r == &skb && own_len(skb) == 0)) continue;
    GsoSeg& s = ctx.add_seg(Packet::from_bytes({hdr, doffset}, kSegHeadroom));
    copy_skb_header(skb, s.pkt, ctx.frame_start);
    if (!append_own(s.pkt, *r, sg, copied, referenced)) return ctx.fail(GsoReason::TooManyFrags);
    if (!csum_ok) {  // the payload sum goes to the GSO CB for the L4 hook
      s.cb_csum = s.pkt.checksum(doffset, s.pkt.len() - doffset, 0);
      s.cb_csum_start = pos_t(doffset);
      if (!s.pkt.remcsum_offload) s.pkt.csum = core::CsumNone{};
      if (sg) ++sg_sum;
    }
  }
  if (ctx.segs.empty()) return ctx.fail(GsoReason::NothingToSegment);
  if (ctx.counters) {
    ctx.counters->seg_mode[std::size_t(mode)] += ctx.segs.size();
    ctx.counters->sg_sum += sg_sum;
  }
  count(ctx, copied, referenced);
  return 0;
}

int skb_segment_list(SegmentContext& ctx) {
  Packet& skb = *ctx.skb;
  if (skb.frag_list().empty()) return ctx.fail(GsoReason::BadGsoType);
  if (skb.network_header == core::kNoHeader || skb.network_header < ctx.frame_start)
    return ctx.fail(GsoReason::HeaderTruncated);
  // Bytes copied in front of every member: link header + tunnel headers.
  const std::size_t lhdr = std::size_t(skb.network_header - ctx.frame_start);
  const std::size_t doffset = std::size_t(skb.data_pos() - ctx.frame_start);
  const std::uint8_t* hdr = skb.at_pos(ctx.frame_start, doffset);
  if (!hdr) return ctx.fail(GsoReason::HeaderTruncated);
  ctx.data_offset = int(doffset);
  const bool sg = ctx.features.has(core::netif_f::SG);
  const int head_nh_len = skb.transport_header - skb.network_header;

  ctx.reset_segs(skb.frag_list().size() + 1);
  std::uint64_t copied = 0, referenced = 0;
  // The head keeps its own bytes (skb_segment_list returns the head itself, frag_list cut).
  ctx.add_seg(Packet::from_bytes({hdr, doffset}, kSegHeadroom));
  copy_skb_header(skb, ctx.segs.back().pkt, ctx.frame_start);
  if (!append_own(ctx.segs.back().pkt, skb, sg, copied, referenced))
    return ctx.fail(GsoReason::TooManyFrags);
  for (const Packet& m : skb.frag_list()) {
    if (m.network_header == core::kNoHeader || m.transport_header == core::kNoHeader ||
        m.network_header > m.data_pos() || m.transport_header > m.data_pos())
      return ctx.fail(GsoReason::HeaderTruncated);
    const std::size_t mh = std::size_t(m.data_pos() - m.network_header);
    const std::uint8_t* own = const_cast<Packet&>(m).at_pos(m.network_header, mh);
    if (!own) return ctx.fail(GsoReason::HeaderTruncated);
    Packet& p = ctx.add_seg(Packet::from_bytes({hdr, lhdr}, kSegHeadroom)).pkt;
    p.append({own, mh});  // the member's own L3 + L4 headers, as they came in
    copy_skb_header(skb, p, ctx.frame_start);
    // skb_segment_list: transport_header follows the member's own network header length.
    const int len_diff = (m.transport_header - m.network_header) - head_nh_len;
    p.transport_header += len_diff;
    if (auto* cp = std::get_if<core::CsumPartial>(&p.csum)) cp->csum_start += len_diff;
    if (!append_own(p, m, sg, copied, referenced)) return ctx.fail(GsoReason::TooManyFrags);
  }
  // skb_needs_linearize with the features of this level: page frags need SG.
  if (!sg)
    for (auto& s : ctx.segs)
      if (s.pkt.nr_frags()) s.pkt.linearize();
  count(ctx, copied, referenced);
  return 0;
}

namespace {

// Replace `n` bytes (n = 2 or 4k) at a[..] by b[..], patching the L4 checksum field `check`
// (full checksum, or the seed of a PARTIAL segment) — inet_proto_csum_replace4/16/2.
void replace_patch(std::uint8_t* a, const std::uint8_t* b, std::size_t n, std::uint8_t* check,
                   bool partial, bool zero_means_none) {
  for (std::size_t i = 0; i < n; i += 2) {
    const std::uint16_t o = load_be16(a + i), v = load_be16(b + i);
    if (o == v) continue;
    if (check) {
      const std::uint16_t c = load_be16(check);
      if (!(zero_means_none && c == 0)) {
        std::uint16_t nc = partial ? csum::csum_fold16(csum::csum_add(csum::csum_sub(c, o), v))
                                   : csum::csum_replace2(c, o, v);
        if (zero_means_none && !partial) nc = csum::udp_csum_mangle(nc);
        store_be16(check, nc);
      }
    }
    store_be16(a + i, v);
  }
}

}  // namespace

int segment_list_nat_fixup(SegmentContext& ctx, int nhoff, int thoff, std::uint16_t check_off,
                           bool udp) {
  if (ctx.segs.size() < 2) return 0;
  Packet& head = ctx.segs[0].pkt;
  const std::uint8_t* ip0 = head.at_pos(nhoff, 40);
  if (!ip0) ip0 = head.at_pos(nhoff, 20);
  const std::uint8_t* l40 = head.at_pos(thoff, 4);
  if (!ip0 || !l40) return ctx.fail(GsoReason::HeaderTruncated);
  const bool v6 = (ip0[0] >> 4) == 6;
  const std::size_t aoff = v6 ? 8 : 12, alen = v6 ? 32 : 8;  // saddr + daddr
  auto locate = [&](GsoSeg& s, std::uint8_t*& ip, std::uint8_t*& l4) {
    ip = s.pkt.at_pos(s.pkt.network_header, aoff + alen);
    l4 = s.pkt.at_pos(s.pkt.transport_header, std::size_t(check_off) + 2);
    return ip && l4;
  };
  std::uint8_t *ip1, *l41;
  if (!locate(ctx.segs[1], ip1, l41)) return ctx.fail(GsoReason::HeaderTruncated);
  // only the second segment is compared with the head.
  if (std::memcmp(ip1 + aoff, ip0 + aoff, alen) == 0 && std::memcmp(l41, l40, 4) == 0) return 0;
  for (std::size_t i = 1; i < ctx.segs.size(); ++i) {
    std::uint8_t *ip, *l4;
    if (!locate(ctx.segs[i], ip, l4)) return ctx.fail(GsoReason::HeaderTruncated);
    const bool partial = ctx.segs[i].pkt.ip_summed() == core::IpSummed::Partial;
    std::uint8_t* check = l4 + check_off;
    replace_patch(ip + aoff, ip0 + aoff, alen, check, partial, udp);  // pseudo-header words
    replace_patch(l4, l40, 4, partial ? nullptr : check, partial, udp);  // ports
    if (!v6) {  // csum_replace4 on the IPv4 header (the IPv4 hook recomputes it too)
      store_be16(ip + 10, 0);
      store_be16(ip + 10, csum::ip_compute_csum(ip, std::size_t(ip[0] & 0x0f) * 4));
    }
  }
  return 0;
}

}  // namespace ofld::core

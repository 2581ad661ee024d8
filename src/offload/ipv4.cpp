// The IPv4 offload module (net/ipv4/af_inet.c): inet_gso_segment, inet_gro_receive,
// inet_gro_complete.
//
// IPv4 level of GSO: inet_gso_segment (net/ipv4/af_inet.c). Spec, X-25 (6.12
// semantics: outer IDs of an encapsulated packet always advance; FIXEDID needs DF); X-25
// GSO-partial outputs (ID advances by gso_segs, tot_len for one mss).
#include <cstring>

#include "gro_protos.hpp"
#include "gro_rules.hpp"
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ip.hpp"

namespace ofld::offload::gso_hooks {

namespace v4 = wire::ipv4;

int ipv4_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (!skb.may_pull(20)) return ctx.fail(GsoReason::HeaderTruncated);
  const std::uint8_t* iph = skb.data();
  const auto v = wire::Ipv4Header<const std::uint8_t>::unchecked(iph);  // 20 bytes pulled
  const std::size_t ihl = std::size_t(v.ihl()) * 4;
  if (v.version() != 4 || ihl < v4::kMinLen) return ctx.fail(GsoReason::BadIpHeader);
  std::uint16_t id = v.id();
  const std::uint8_t proto = v.protocol();
  if (!skb.may_pull(ihl)) return ctx.fail(GsoReason::HeaderTruncated);

  const core::pos_t nh = skb.data_pos();
  skb.network_header = nh;
  skb.pull(ihl);
  const core::Features saved_features = ctx.features;
  const bool encap = ctx.encap_level > 0;  // this header is nested in a tunnel
  if (encap) ctx.features &= ctx.dev->hw_enc_features;
  ctx.encap_level += int(ihl);
  skb.transport_header = skb.data_pos();

  // X-24 as the running kernel (6.18, [newer]) has it: no DF restriction, and the fixed-ID
  // state is kept per header: the outermost header follows TCP_FIXEDID_OUTER (or the 6.12 bit
  // on a packet without encapsulation), a nested header TCP_FIXEDID_INNER (or the 6.12 bit,
  // which meant the inner header of a tunnel). 6.12 refused FIXEDID with DF clear and always
  // advanced a tunnel's outer IDs; GRO on 6.18 merges both (N-15), so GSO must take them back.
  namespace g = core::skb_gso;
  const std::uint32_t type = skb.gso.type;
  const bool fixedid = encap ? (type & (g::TCP_FIXEDID_INNER | g::TCP_FIXEDID)) != 0
                             : (type & g::TCP_FIXEDID_OUTER) != 0 ||
                                   (!skb.encapsulation && (type & g::TCP_FIXEDID) != 0);
  int rc = ip_level_gso_segment(ctx, nh, wire::ethertype::kIpv4, proto, saved_features);
  if (rc != 0 || ctx.hw_segments) {
    skb.network_header = nh;
    return rc;
  }

  const int nhoff = ctx.seg_off(nh);
  if (length_overflows(ctx, nhoff, 0)) return ctx.fail(GsoReason::SegmentTooLong);
  if (ctx.seg_fast && !ctx.gso_partial) {
    // Segments from skb_segment's fast path: plain (not GSO) packets with this header in
    // every head at nhoff, as copied from the super-packet (ihl already checked above).
    // ip_send_check by parts: the ones'-complement sum of the words every segment shares
    // (ID, tot_len and check zeroed) is taken once; per segment its ID and tot_len are
    // added. Sums regroup freely and the header is never all zero, so the folded value is
    // the one ip_compute_csum gives over the whole rewritten header.
    std::uint8_t shared[v4::kMaxLen];
    std::memcpy(shared, (ctx.batch_used ? core::detail::SlabBuilder::slab(*ctx.batch) : ctx.out.front().data()) + nhoff,
                ihl);
    std::memset(shared + v4::kTotLenOffset, 0, 2);
    std::memset(shared + v4::kIdOffset, 0, 2);
    std::memset(shared + v4::kCheckOffset, 0, 2);
    // All segments but the last have the same length (seg_fast).
    const csum::wsum base = csum::csum_partial(shared, ihl, 0);
    const std::size_t nsegs = ctx.batch_used ? ctx.batch->size() : ctx.segs.size();
    const std::uint16_t tot_full = std::uint16_t(fast_seg_len(ctx, 0) - std::size_t(nhoff));
    const std::uint16_t tot_last = std::uint16_t(fast_seg_len(ctx, nsegs - 1) - std::size_t(nhoff));
    // Each sum folded to 16 bits once here: adding a 16-bit ID then needs one fold step. The
    // shared words include the version/ihl byte, so each folded sum is in [1, 0xffff], and
    // with the ID added and folded once it stays there: the same value the full sum gives.
    const std::uint32_t sum_full = csum::csum_fold16(csum::csum_add(base, tot_full));
    const std::uint32_t sum_last = csum::csum_fold16(csum::csum_add(base, tot_last));
    const auto check = [](std::uint32_t sum16, std::uint16_t id16) {
      const std::uint32_t x = sum16 + id16;  // <= 0x1fffe: one end-around carry folds it
      return std::uint16_t(~((x & 0xffffu) + (x >> 16)));
    };
    // The rewrite, for either form of the segments (FastSegs): the slab form's one metadata
    // template gets the header positions once, each packet its own.
    auto rewrite = [&]<bool Slab>(const FastSegs<Slab> segs) {
      const std::size_t n = segs.n;
      const auto set_nh = [&](std::size_t i) {
        if constexpr (!Slab) segs.segs[i].pkt.network_header = nhoff;
      };
      if constexpr (Slab) {  // the template: as each packet below
        core::PacketMeta& m = core::detail::SlabBuilder::meta(*ctx.batch);
        m.network_header = nhoff;
        if (encap) {
          m.inner_network_header = nhoff;
          m.inner_transport_header = m.transport_header;
        }
      }
      if (!fixedid && !encap && n >= 2) {  // the common case: a plain stream, IDs advancing
        std::uint16_t this_id = id;
        static_assert(v4::kIdOffset == v4::kTotLenOffset + 2);
        const std::uint32_t tot_full_hi = std::uint32_t(tot_full) << 16;
        for (std::size_t i = 0; i + 1 < n; ++i, ++this_id) {  // all but the last
          std::uint8_t* ip = segs.head(i) + nhoff;
          // tot_len and ID side by side: one big-endian 32-bit store
          wire::store_be32(ip + v4::kTotLenOffset, tot_full_hi | this_id);
          wire::store_be16(ip + v4::kCheckOffset, check(sum_full, this_id));
          set_nh(i);
        }
        std::uint8_t* ip = segs.head(n - 1) + nhoff;
        wire::store_be16(ip + v4::kIdOffset, this_id);
        wire::store_be16(ip + v4::kTotLenOffset, tot_last);
        wire::store_be16(ip + v4::kCheckOffset, check(sum_last, this_id));
        set_nh(n - 1);
        return;
      }
      for (std::size_t i = 0; i < n; ++i) {
        std::uint8_t* ip = segs.head(i) + nhoff;
        const std::uint16_t this_id = id;
        if (!fixedid) wire::store_be16(ip + v4::kIdOffset, id++);
        const bool last = i + 1 == n;
        wire::store_be16(ip + v4::kTotLenOffset, last ? tot_last : tot_full);
        wire::store_be16(ip + v4::kCheckOffset, check(last ? sum_last : sum_full, this_id));
        if constexpr (!Slab) {
          core::Packet& p = segs.segs[i].pkt;
          if (encap) {
            p.inner_network_header = nhoff;
            p.inner_transport_header = p.transport_header;
          }
        }
        set_nh(i);
      }
    };
    if (ctx.batch_used) rewrite(FastSegs<true>(ctx));
    else rewrite(FastSegs<false>(ctx));
    return 0;
  }
  for (auto& s : ctx.segs) {
    std::uint8_t* ip = s.pkt.at_pos(nhoff, v4::kMinLen);
    // A fraglist member keeps its own header: its ihl may differ from the head's.
    const std::size_t sihl = ip ? std::size_t(wire::Ipv4Header<std::uint8_t>::unchecked(ip).ihl()) * 4 : 0;
    if (!ip || sihl < v4::kMinLen || !s.pkt.at_pos(nhoff, sihl))
      return ctx.fail(GsoReason::HeaderTruncated);
    if (s.pkt.is_gso()) {  // a GSO-partial output: it stands for gso_segs packets
      if (!fixedid) {
        wire::store_be16(ip + v4::kIdOffset, id);
        id = std::uint16_t(id + s.pkt.gso.segs);
      }
    } else if (!fixedid) {
      wire::store_be16(ip + v4::kIdOffset, id++);
    }
    wire::store_be16(ip + v4::kTotLenOffset, std::uint16_t(core::one_mss_len(ctx, s, nhoff)));
    wire::store_be16(ip + v4::kCheckOffset, 0);
    wire::store_be16(ip + v4::kCheckOffset, csum::ip_compute_csum(ip, sihl));  // ip_send_check
    if (encap) {  // skb_reset_inner_headers: this is the inner header of the segment
      s.pkt.inner_network_header = nhoff;
      s.pkt.inner_transport_header = s.pkt.transport_header;
    }
    s.pkt.network_header = nhoff;
  }
  return 0;
}

}  // namespace ofld::offload::gso_hooks

// IPv4 GRO (net/ipv4/af_inet.c: inet_gro_receive / inet_gro_complete, N-1..N-5); the
// IPv4-inner IP-in-IP hooks (ipip_gro_receive / ipip_gro_complete, W-4) are in ipip.cpp.

namespace ofld::offload::gro_hooks {

namespace v4 = wire::ipv4;

namespace cs = ofld::csum;

void inet_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* iph = gro_header(ctx, off, v4::kMinLen);
  if (!iph) {
    ctx.flush_skb(GroReason::Truncated);
    return;
  }
  const std::uint8_t proto = iph[v4::kProtocolOffset];
  const ProtocolOffload* po = ctx.reg->find(Key::IpProto, proto);
  // N-1 hard rejects: the skb is flushed, no held flow is completed.
  if (!po || !po->gro_receive) return ctx.flush_skb(GroReason::NoHandler);
  if (const GroReason r = gro_rules::inet_hard(iph); r != GroReason::None) return ctx.flush_skb(r);

  ctx.proto = proto;
  // N-2 soft flush: L4 still runs so that a matching held flow is completed.
  if (const GroReason r = gro_rules::inet_soft(iph, ctx.gro_len()); r != GroReason::None)
    ctx.flush_skb(r);

  for (GroHeld* p : ctx.candidates) {  // N-3, and the family: version/ihl byte (N-1)
    if (!p->same_flow) continue;
    const std::uint8_t* iph2 = held_header(*p, off);
    if (iph[v4::kVerIhlOffset] != iph2[v4::kVerIhlOffset] ||
        iph[v4::kProtocolOffset] != iph2[v4::kProtocolOffset] ||
        std::memcmp(iph + v4::kSaddrOffset, iph2 + v4::kSaddrOffset, 2 * v4::kAddrLen) != 0)
      p->same_flow = false;
  }
  ctx.network_offsets[ctx.encap_mark ? 1 : 0] = std::uint16_t(off);
  ctx.is_ipv6 = false;
  ctx.data_offset += v4::kMinLen;
  ctx.transport_offset = std::uint16_t(ctx.data_offset);
  po->gro_receive(ctx);
}

int inet_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  std::uint8_t* iph = p.data() + nhoff;
  if (p.encapsulation) {
    p.inner_protocol = wire::ethertype::kIpv4;
    p.inner_protocol_type = core::InnerProtoType::Ether;
    p.set_inner_network_header(int(nhoff));
  } else {
    p.set_network_header(int(nhoff));
    p.set_transport_header(int(nhoff + v4::kMinLen));
  }
  const std::size_t total = p.len() - nhoff;
  const std::uint16_t newlen = total > 65535 ? 0 : std::uint16_t(total);  // N-5
  const auto v = wire::Ipv4Header<std::uint8_t>::unchecked(iph);
  const std::uint16_t oldlen = v.total_len();
  v.set_check(cs::csum_replace2(v.check(), oldlen, newlen));
  v.set_total_len(newlen);
  ctx.l3_off = nhoff;
  ctx.l3_v6 = false;
  return gro_call_complete(ctx, Key::IpProto, v.protocol(), nhoff + v4::kMinLen);
}

}  // namespace ofld::offload::gro_hooks

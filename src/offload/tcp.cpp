// The TCP offload module (net/ipv4/tcp_offload.c, net/ipv6/tcpv6_offload.c): the GSO segment
// hook and the GRO receive / complete hooks, for both address families.
//
// TCP GRO for IPv4 and IPv6 (net/ipv4/tcp_offload.c, net/ipv6/tcpv6_offload.c; T-1..T-20).
// One module serves both families: the pseudo header is taken from the L3 header in front.
#include <array>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>

#include "flow_hash.hpp"
#include "gro_protos.hpp"
#include "gro_rules.hpp"
#include "gso_hooks.hpp"
#include "ofld/core/csum_short.hpp"
#include "ofld/core/skb_gro.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gro_hooks {

namespace cs = ofld::csum;
namespace sg = core::skb_gso;
namespace v4 = wire::ipv4;
namespace v6 = wire::ipv6;
namespace tcph = wire::tcp;
constexpr std::uint8_t kIpprotoTcp = wire::ipproto::kTcp;

namespace {
// The flag rules of gro_rules.hpp on the 32-bit word at byte 12 (data offset, flags, window).
namespace tfw = wire::tcp_flag_word;
constexpr std::uint32_t kUncompared = tfw::from_flags(gro_rules::kFlagsUncompared),
                        kNeverJoin = tfw::from_flags(gro_rules::kFlagsNeverJoin),
                        kFinal = tfw::from_flags(gro_rules::kFlagsFinal);

// Pseudo-header sum for `len` bytes of protocol `proto` after the L3 header at `l3`.
cs::wsum pseudo(const std::uint8_t* l3, std::uint32_t len, std::uint8_t proto) noexcept {
  if (wire::ip_version(l3) == 6)
    return cs::csum_ipv6_nofold(l3 + v6::kSaddrOffset, l3 + v6::kDaddrOffset, len, proto, 0);
  return cs::csum_tcpudp_nofold(l3 + v4::kSaddrOffset, l3 + v4::kDaddrOffset, len, proto, 0);
}
}  // namespace

void tcp_gro_receive(GroContext& ctx) {
  const std::size_t l3off = ctx.network_offsets[ctx.encap_mark ? 1 : 0];
  // T-1: validate unless already flushing.
  if (!ctx.flush) {
    const std::uint8_t* l3 = gro_header(ctx, l3off, 1);
    if (!l3) return ctx.flush_skb(GroReason::Truncated);
    l3 = gro_header(ctx, l3off, wire::ip_version(l3) == 6 ? v6::kHdrLen : v4::kMinLen);
    if (!l3 || gro_checksum_validate(ctx, false, 0,
                                     pseudo(l3, std::uint32_t(ctx.gro_len()), kIpprotoTcp)) != 0)
      return ctx.flush_skb(GroReason::Checksum);
  }
  // T-2: tcp_gro_pull_header.
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* th = gro_header(ctx, off, tcph::kMinLen);
  if (!th) return ctx.flush_skb(GroReason::TcpHeader);
  const std::size_t thlen = gro_rules::tcp_hdrlen(th);
  if (thlen < tcph::kMinLen) return ctx.flush_skb(GroReason::TcpHeader);
  th = gro_header(ctx, off, thlen);
  if (!th) return ctx.flush_skb(GroReason::TcpHeader);
  ctx.data_offset += std::uint32_t(thlen);

  const std::size_t len = ctx.gro_len();
  const std::uint32_t flags = wire::load_be32(th + tcph::kFlagWordOffset);
  const std::uint16_t dport = wire::load_be16(th + tcph::kDestOffset);
  // The skb may be moved onto a fraglist (G-21): what out_check_final needs is read now.
  const bool skb_gso = ctx.skb->is_gso();
  const std::uint16_t skb_gso_size = ctx.skb->gso.size;

  // T-3: tcp_gro_lookup.
  GroHeld* p = nullptr;
  for (GroHeld* c : ctx.candidates) {
    if (!c->same_flow) continue;
    if (wire::load_be32(th + tcph::kSourceOffset) !=
        wire::load_be32(held_header(*c, off) + tcph::kSourceOffset)) {  // both ports
      c->same_flow = false;
      continue;
    }
    p = c;
    break;
  }

  // T-4 fraglist decision (NETIF_F_GRO_FRAGLIST; not inside a tunnel, see gro_context.hpp).
  if (ctx.cfg->gro_fraglist && !ctx.encap_mark) {
    if (p) {
      if (p->is_flist && skb_gso && p->count == 1) p->is_flist = false;  // back to normal GRO
      ctx.is_flist = p->is_flist;
    } else {
      ctx.is_flist = !ctx.cfg->tcp_established(dport) && !skb_gso;
    }
  }

  std::size_t mss = 1;
  GroReason why = GroReason::None;
  if (p) {
    std::uint8_t* th2 = p->pkt.data() + off;
    const std::uint32_t flags2 = wire::load_be32(th2 + tcph::kFlagWordOffset);
    // Observed on 6.18 (ofld conformance gro, flags_cwr → [100, 100, 100, 200]): a segment
    // with CWR never joins a held flow (T-5), and CWR is part of the compared flag word, only
    // FIN and PSH are masked (T-6 [newer]) — so a CWR head is completed by the next segment.
    if (flags & kNeverJoin)
      why = GroReason::Flags;
    else if ((flags ^ flags2) & ~kUncompared)
      why = GroReason::Flags;
    else if (wire::load_be32(th + tcph::kAckSeqOffset) != wire::load_be32(th2 + tcph::kAckSeqOffset))
      why = GroReason::Ack;
    else {
      for (std::size_t i = tcph::kOptionsOffset; i < thlen; i += 4)
        if (wire::load_be32(th + i) != wire::load_be32(th2 + i)) {
          why = GroReason::Options;
          break;
        }
    }
    if (why == GroReason::None) why = gro_network_flush(ctx, *p, off);  // T-9
    mss = p->pkt.gso.size;
    if (why == GroReason::None) {  // T-10
      if (skb_gso ? mss != skb_gso_size : !gro_rules::tcp_size_ok(len, mss)) why = GroReason::Size;
    }
    if (why == GroReason::None) {  // T-11
      const std::uint32_t plen = std::uint32_t(p->pkt.len() - p->data_offset);
      if (!gro_rules::tcp_seq_follows(th, th2, plen)) why = GroReason::SeqGap;
    }
    if (p->is_flist) {
      // T-13: exact flag word, same checksum state, fewer than 64 segments, no GSO member;
      // G-21 list merge; p's header is left alone (no T-15).
      if (why == GroReason::None && flags != flags2) why = GroReason::Flags;
      if (why == GroReason::None && skb_gso) why = GroReason::GsoInput;
      if (why == GroReason::None && !gro_flist_csum_match(*ctx.skb, p->pkt))
        why = GroReason::FraglistCsum;
      if (why == GroReason::None && p->count >= 64) why = GroReason::FraglistCount;
      if (why == GroReason::None && !gro_merge_list(ctx, *p))
        why = ctx.flush ? (ctx.skb_reason != GroReason::None ? ctx.skb_reason : GroReason::Size)
                        : GroReason::SizeLimit;
      if (why != GroReason::None) mss = 1;
    } else {
      if (why == GroReason::None && !gro_merge(ctx, *p))  // T-14
        why = ctx.flush ? (ctx.skb_reason != GroReason::None ? ctx.skb_reason : GroReason::Size)
                        : GroReason::SizeLimit;
      if (why != GroReason::None) {
        mss = 1;
      } else {
        th2[tcph::kFlagsOffset] |= std::uint8_t((flags & kUncompared) >> 16);  // T-15
      }
    }
  }

  // T-16..T-19 out_check_final.
  GroReason fin = GroReason::None;
  if (skb_gso) {
    if (len != std::size_t(ctx.count) * skb_gso_size) fin = GroReason::Size;
  } else if (len < mss) {
    fin = p && why == GroReason::None ? GroReason::ShortSegment : GroReason::Size;
  }
  if (flags & kFinal) fin = GroReason::FinalFlags;

  if (p && (!ctx.same_flow || fin != GroReason::None))
    ctx.complete_p(p, why != GroReason::None ? why : fin);
  if (!ctx.same_flow && why != GroReason::None) ctx.note_skb(why);
  if (fin != GroReason::None) ctx.flush_skb(fin);
}

int tcp_gro_complete(GroContext& ctx, std::uint32_t thoff) {
  core::Packet& p = ctx.cp->pkt;
  std::uint8_t* th = p.data() + thoff;
  const std::uint8_t* l3 = p.data() + ctx.l3_off;
  if (ctx.cp->is_flist) {  // T-21: headers untouched, checksum state raised one level
    p.gso.type |= (ctx.l3_v6 ? sg::TCPV6 : sg::TCPV4) | sg::FRAGLIST;
    p.gso.segs = ctx.cp->count;
    core::incr_checksum_unnecessary(p);
    p.set_transport_header(int(thoff));
    return 0;
  }
  const std::uint32_t tcplen = std::uint32_t(p.len() - thoff);
  // T-20: check := ~tcp_v4/v6_check(len, saddr, daddr, 0) = folded pseudo sum (the seed).
  wire::store_be16(th + tcph::kCheckOffset, cs::csum_fold16(pseudo(l3, tcplen, kIpprotoTcp)));
  if (ctx.l3_v6) {
    p.gso.type |= sg::TCPV6;
  } else {
    p.gso.type |= sg::TCPV4;
    // N-15/N-17 as on 6.18: separate fixed-ID marks for the outer and the inner IPv4 header.
    // Bit 0 is the outer (or only) IPv4 header, bit 1 the inner one. The 6.12 bit
    // TCP_FIXEDID is also set when the header TCP segmentation rewrites (the innermost
    // IPv4 header) is fixed-ID, for a GSO engine that only knows 6.12's bit.
    const std::uint8_t f = ctx.cp->ip_fixedid;
    if (f & 1) p.gso.type |= p.encapsulation ? sg::TCP_FIXEDID_OUTER : sg::TCP_FIXEDID_OUTER | sg::TCP_FIXEDID;
    if (f & 2) p.gso.type |= sg::TCP_FIXEDID_INNER | sg::TCP_FIXEDID;
  }
  p.set_partial(int(thoff), 16);
  p.gso.segs = ctx.cp->count;
  if (th[tcph::kFlagsOffset] & gro_rules::kCwr) p.gso.type |= sg::TCP_ACCECN;  // CWR in the first header ([newer])
  if (p.encapsulation)
    p.set_inner_transport_header(int(thoff));
  else
    p.set_transport_header(int(thoff));
  return 0;
}

}  // namespace ofld::offload::gro_hooks

// TCP level of GSO: tcp4_gso_segment / tcp6_gso_segment + tcp_gso_segment
// (net/ipv4/tcp_offload.c, net/ipv6/tcpv6_offload.c). Spec X-16..X-21, §4.9b; fraglist
// and GSO-partial outputs through the gso:: building blocks.

namespace ofld::offload::gso_hooks {

namespace {
using wire::tcp_flag::kCwr;
using wire::tcp_flag::kFin;
using wire::tcp_flag::kPsh;
namespace tcph = wire::tcp;
}

namespace {
// X-21's flags: CWR only on the first segment, FIN/PSH only on the last. The bits to clear.
constexpr std::uint8_t x21_flags_clear(bool first, bool last) noexcept {
  return std::uint8_t((first ? 0 : kCwr) | (last ? 0 : kFin | kPsh));
}

// X-21's check field of the last segment: the original seed adjusted for its own length.
// `seg_len`: the segment's bytes, its TCP header at `thoff`.
[[gnu::always_inline]] inline std::uint16_t x21_last_check(std::uint16_t seed, std::uint32_t oldlen,
                                                           std::size_t seg_len, int thoff) noexcept {
  return csum::csum_fold16(csum::csum_add(seed, oldlen + std::uint32_t(seg_len - std::size_t(thoff))));
}

// X-21's stores into one segment's TCP header at `th`: sequence number, flags, check field.
[[gnu::always_inline]] inline void x21_store(std::uint8_t* th, std::uint32_t seq, std::uint8_t clear,
                                             std::uint16_t check) noexcept {
  wire::store_be32(th + tcph::kSeqOffset, seq);
  th[tcph::kFlagsOffset] = std::uint8_t(th[tcph::kFlagsOffset] & ~clear);
  wire::store_be16(th + tcph::kCheckOffset, check);
}

// X-21 on segment i of n, its TCP header at `th` (offset `thoff` in `p`): the sequence
// number `seq`, the flags, and the check field: `newcheck`, or the last segment's own.
// Returns the check written.
[[gnu::always_inline]] inline std::uint16_t rewrite_tcp_header(
    std::uint8_t* th, std::uint32_t seq, std::size_t i, std::size_t n, std::uint16_t newcheck,
    std::uint16_t seed, std::uint32_t oldlen, const core::Packet& p, int thoff) noexcept {
  const bool last = i + 1 == n;
  const std::uint16_t check = last ? x21_last_check(seed, oldlen, p.len(), thoff) : newcheck;
  x21_store(th, seq, x21_flags_clear(i == 0, last), check);
  return check;
}

// X-21 for skb_segment's fast-loop segments whose checksum stays PARTIAL (X-14: the device
// finishes it): the TCP header at `thoff` in every segment, in either form (FastSegs: the
// slab form's one metadata template gets the transport header once). Every value is a copy,
// so the header stores (bytes, which may alias anything) leave them in registers; the first
// and the last segment are taken out of the loop, so the middle ones share one flag mask and
// one check. `last_len` is the last segment's length. `csum_start` is the shared PARTIAL
// state's; `reset_cb` false leaves the GSO control block as it is (remcsum_offload, X-14; a
// slab has no control block: no outer level reads it).
template <bool Slab>
[[gnu::noinline]] void rewrite_stamped_partial(const FastSegs<Slab> segs, int thoff,
                                               std::uint32_t seq, std::uint32_t step,
                                               std::uint16_t newcheck, std::uint16_t seed,
                                               std::uint32_t oldlen, std::size_t last_len,
                                               bool reset_cb, core::pos_t csum_start) noexcept {
  const std::size_t n = segs.n;
  if (n == 0) return;
  const auto put = [&](std::size_t i, std::uint32_t sq, std::uint8_t clear, std::uint16_t check) {
    x21_store(segs.head(i) + thoff, sq, clear, check);
    if constexpr (!Slab) {
      core::GsoSeg& s = segs.segs[i];
      s.pkt.transport_header = thoff;
      if (reset_cb) {
        s.cb_csum = ~std::uint32_t(check);
        s.cb_csum_start = csum_start;
      }
    }
  };
  if (n > 1) {
    put(0, seq, x21_flags_clear(true, false), newcheck);
    seq += step;
    const std::uint8_t mid = x21_flags_clear(false, false);
    for (std::size_t i = 1; i + 1 < n; ++i, seq += step) put(i, seq, mid, newcheck);
  }
  put(n - 1, seq, x21_flags_clear(n == 1, true), x21_last_check(seed, oldlen, last_len, thoff));
}
}  // namespace

int tcp_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  const bool v6 = ctx.l3_proto == wire::ethertype::kIpv6;
  // the gso_type must name TCP over this IP version.
  if (!(skb.gso.type & (v6 ? core::skb_gso::TCPV6 : core::skb_gso::TCPV4)))
    return ctx.fail(GsoReason::BadGsoType);
  if (!skb.may_pull(20)) return ctx.fail(GsoReason::HeaderTruncated);
  const std::size_t thlen = std::size_t(skb.data()[tcph::kDoffOffset] >> 4) * 4;
  if (thlen < tcph::kMinLen) return ctx.fail(GsoReason::BadTcpHeader);
  if (!skb.may_pull(thlen)) return ctx.fail(GsoReason::HeaderTruncated);
  const core::pos_t th_pos = skb.data_pos();
  skb.transport_header = th_pos;

  // a fraglist aggregate whose geometry is intact is split at its members;
  // otherwise the checksum is redone from scratch below (NONE → X-17) and mss segmentation
  // runs over head and members alike.
  if (skb.gso.type & core::skb_gso::FRAGLIST) {
    std::size_t own = skb.len();
    for (const auto& m : skb.frag_list()) own -= m.len();
    if (own - thlen == skb.gso.size && !(skb.gso.type & core::skb_gso::DODGY)) {
      skb.pull(thlen);  // building blocks take data() at the payload
      int rc = core::skb_segment_list(ctx);
      if (rc != 0) return rc;
      return core::segment_list_nat_fixup(ctx, ctx.seg_off(ctx.l3_pos), ctx.seg_off(th_pos), 16,
                                         /*udp=*/false);
    }
    skb.csum = core::CsumNone{};
  }

  // not PARTIAL → zero the field, seed the pseudo header, make it PARTIAL.
  if (skb.ip_summed() != core::IpSummed::Partial) {
    wire::store_be16(skb.data() + tcph::kCheckOffset, 0);
    wire::store_be16(skb.data() + tcph::kCheckOffset,
                     core::pseudo_seed(skb, ctx.l3_pos, std::uint32_t(skb.len()), wire::ipproto::kTcp));
    skb.csum = core::CsumPartial{th_pos, tcph::kCheckOffset, false};
  }
  if (skb.csum_start_offset() != 0) return ctx.fail(GsoReason::CsumStartMismatch);

  const std::uint32_t oldlen = ~std::uint32_t(skb.len());
  skb.pull(thlen);
  const std::uint32_t mss = skb.gso.size;
  if (skb.len() <= mss) return ctx.fail(GsoReason::NothingToSegment);
  if (core::gso_ok(skb, ctx.features | core::netif_f::GSO_ROBUST)) {
    skb.gso.segs = std::uint16_t((skb.len() + mss - 1) / mss);
    ctx.hw_segments = true;
    return 0;
  }
  const std::uint8_t* th0 = skb.at_pos(th_pos, thlen);
  const std::uint16_t seed = wire::load_be16(th0 + tcph::kCheckOffset);
  std::uint32_t seq = wire::load_be32(th0 + tcph::kSeqOffset);

  int rc = core::segment_payload(ctx);
  if (rc != 0) return rc;
  // GSO-partial outputs carry gso_segs × mss each: seq and the length in the
  // checksum advance by that much.
  std::uint32_t step = mss;
  if (!ctx.batch_used && ctx.segs[0].pkt.is_gso()) step *= ctx.segs[0].pkt.gso.segs;
  // newcheck = seed adjusted from the super-packet's L4 length to thlen + step.
  const std::uint16_t newcheck =
      csum::csum_fold16(csum::csum_add(seed, oldlen + std::uint32_t(thlen + step)));

  const int thoff = ctx.seg_off(th_pos);
  if (ctx.batch_used) {  // a slab: its template is PARTIAL (skb_segment builds no other)
    core::SegmentBatch& b = *ctx.batch;
    const auto* cp = std::get_if<core::CsumPartial>(&b.meta(0).csum);
    if (!cp) return ctx.fail(GsoReason::CsumStartMismatch);  // not reached (see above)
    core::detail::SlabBuilder::meta(b).transport_header = thoff;
    rewrite_stamped_partial(FastSegs<true>(ctx), thoff, seq, step, newcheck, seed, oldlen,
                            b.len(b.size() - 1), false, cp->csum_start);
    return 0;
  }
  const std::size_t n = ctx.segs.size();
  // Segments from skb_segment's fast loop (ctx.seg_fast; not GSO-partial outputs) hold the
  // TCP header in every head at thoff: no per-segment bounds check is needed for them.
  const bool stamped = ctx.seg_fast && !ctx.gso_partial;
  // Stamped segments also share the template's checksum state: when that is PARTIAL, X-14's
  // gso_reset_checksum is the same for all of them (skipped with remcsum_offload).
  const auto* cp0 = stamped && n ? std::get_if<core::CsumPartial>(&ctx.out.front().csum) : nullptr;
  const bool reset_cb = cp0 && !ctx.out.front().remcsum_offload;
  // The X-21 rewrite, once; instantiated for stamped segments (no per-segment checks) and for
  // any others.
  auto rewrite = [&]<bool kStamped>() -> int {
    for (std::size_t i = 0; i < n; ++i) {
      auto& s = ctx.segs[i];
      std::uint8_t* th = kStamped ? s.pkt.data() + thoff : s.pkt.at_pos(thoff, thlen);
      if (!th) return ctx.fail(GsoReason::HeaderTruncated);
      s.pkt.transport_header = thoff;
      const std::uint16_t check =
          rewrite_tcp_header(th, seq, i, n, newcheck, seed, oldlen, s.pkt, thoff);
      seq += step;
      if (kStamped ? cp0 != nullptr : s.pkt.ip_summed() == core::IpSummed::Partial) {
        if (!kStamped) {
          core::gso_reset_checksum(s, ~std::uint32_t(check));  // device finishes it
        } else if (reset_cb) {  // the same, for the template's state
          s.cb_csum = ~std::uint32_t(check);
          s.cb_csum_start = cp0->csum_start;
        }
      } else {
        wire::store_be16(th + tcph::kCheckOffset,
                         core::gso_make_checksum(s, ~std::uint32_t(check)));
      }
    }
    return 0;
  };
  if (cp0) {
    rewrite_stamped_partial(FastSegs<false>(ctx), thoff, seq, step, newcheck, seed, oldlen,
                            ctx.out.back().len(), reset_cb, cp0->csum_start);
    return 0;
  }
  return stamped ? rewrite.template operator()<true>() : rewrite.template operator()<false>();
}

}  // namespace ofld::offload::gso_hooks

// ---- the TCP fast receive hook ----------------------------------------------------------
//
// The overwhelmingly common packet: Ethernet (or raw IP) + IPv4 without options or IPv6
// without extension headers + TCP, not GSO, no frag_list, every header in the linear head,
// arriving for a flow that is already held. fast_receive() checks, in one pass over the
// fixed headers, every condition under which the general chain (eth → inet/ipv6 → tcp
// hooks) would merge this packet into that held flow — with the same rule functions
// (gro_rules.hpp) where the rule is a computation, and with the flow's header template where
// it is an equality — and then performs the same merge (core::skb_gro_append, the T-15 flag
// OR, the N-15 fixed-ID mark, the T-16/T-17 completion). Whenever a condition is not certain
// it returns "not taken" having changed nothing, and the general chain runs as if the fast
// path did not exist. fast_receive_run() (the engine's receive_batch) takes consecutive
// packets of one flow in one call: the first through fast_receive(), the next ones through
// the same conditions with the flow's values read once, stopping at the first packet it is
// not certain of. The general chain stays the reference (tests/unit/gro_fastpath_test.cpp
// compares the two, packet by packet and in bursts).
//
// Equality tests use raw native-order loads (equal bytes ⇔ equal words); masks are written
// for little-endian hosts, the only ones this file is built for (static_assert below).
namespace ofld::offload {

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "fast path masks assume little endian");
namespace cs = ofld::csum;
namespace rules = gro_rules;
namespace v4 = wire::ipv4;
namespace v6 = wire::ipv6;
namespace tcph = wire::tcp;
constexpr std::uint8_t kIpprotoTcp = wire::ipproto::kTcp;
using flowhash::raw32;
using flowhash::raw64;

/// 16 bytes compared at once (GCC/Clang vector extension: SSE2 on x86-64, NEON on arm64).
typedef std::uint8_t V16 __attribute__((vector_size(16)));
inline V16 ld128(const std::uint8_t* p) {
  V16 v;
  std::memcpy(&v, p, 16);
  return v;
}

/// The per-flow state of a held TCP flow (GroHeld::flow_area).
struct TcpFlow {
  /// For a plain TCP flow (L3 right after the link header, not in a tunnel, not fraglist):
  /// hdrs | is_ipv6 << 16 | 1 << 17; else 0. Only flows whose signature matches the
  /// packet's layout are considered (a flow that leaves fraglist mode later keeps 0 and stays
  /// on the general path).
  std::uint32_t sig;
  std::uint8_t words;
  // (first: the signature shares the template's first cache line)
  /// The header template the fast path compares an arriving packet with, as 16-byte words
  /// over bytes [0, hdrs) of both packets (words at 0, 16, ... and the last at hdrs − 16),
  /// 0xFF where the bytes must be equal for a merge (MAC header, TOS, DF and fragment bits,
  /// TTL, protocol, addresses, ports, ack, data offset, flags but FIN and PSH, window,
  /// options) and 0 where the rules compute instead (lengths, IPv4 ID and header checksum,
  /// sequence number, TCP checksum, urgent pointer).
  alignas(16) std::array<V16, 8> mask;
};
static_assert(sizeof(TcpFlow) <= kGroFlowAreaSize && alignof(TcpFlow) <= 16);
static_assert(std::is_trivially_copyable_v<TcpFlow>);
inline TcpFlow& flow_of(GroHeld& h) noexcept {
  return *std::launder(reinterpret_cast<TcpFlow*>(h.flow_area.data()));
}
inline const TcpFlow& flow_of(const GroHeld& h) noexcept {
  return *std::launder(reinterpret_cast<const TcpFlow*>(h.flow_area.data()));
}

constexpr std::size_t link_hlen(GroLink link) noexcept {
  return link == GroLink::Ethernet ? wire::eth::kHdrLen : 0;
}

// Which bytes of the first `hdrs` must be equal in an arriving packet for the merge rules to
// pass (TcpFlow::mask); IP at `l2`, TCP after the fixed IP header.
void build_mask(TcpFlow& t, std::size_t l2, bool is_v6, std::size_t hdrs) {
  std::uint8_t m[16 * 8];
  std::memset(m, 0xFF, sizeof m);
  const std::size_t ip = l2, th = l2 + (is_v6 ? v6::kHdrLen : v4::kMinLen);
  if (is_v6) {
    std::memset(m + ip + v6::kPayloadLenOffset, 0, 2);  // payload_len (N-6, checked)
  } else {
    std::memset(m + ip + v4::kTotLenOffset, 0, 2);  // tot_len (N-2)
    std::memset(m + ip + v4::kIdOffset, 0, 2);      // ID (N-15, computed)
    std::memset(m + ip + v4::kCheckOffset, 0, 2);   // header checksum (N-1, verified)
  }
  std::memset(m + th + tcph::kSeqOffset, 0, 4);                    // sequence number (T-11)
  m[th + tcph::kFlagsOffset] = std::uint8_t(~rules::kFlagsUncompared);  // flags but FIN, PSH (T-6)
  // checksum (T-1) and urgent pointer (not compared)
  std::memset(m + th + tcph::kCheckOffset, 0, 4);
  const std::size_t n = (hdrs + 15) / 16;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t off = i + 1 < n ? 16 * i : hdrs - 16;
    std::memcpy(&t.mask[i], m + off, 16);
  }
  t.words = std::uint8_t(n);
}

// The arriving packet's fixed headers as fast_receive read them.
struct FastPkt {
  const std::uint8_t* d;   // data(): the link header (or IP on raw-IP links)
  const std::uint8_t* ip;
  const std::uint8_t* th;
  std::size_t l2, hl, len_all, thoff, hdrs;
  std::uint32_t sig;       // the layout, as TcpFlow::sig
  std::uint8_t flags;
  bool v6;
};

// The template: every byte that G-2 (MAC header), N-3/N-8 (addresses, protocol, IPv6
// version and flow label), T-3 (ports), N-12/N-10 (TOS, DF, TTL; traffic class, hop limit),
// T-6 (flags but FIN/PSH, data offset, window), T-7 (ack) and T-8 (options) require equal,
// compared 16 bytes at a time; and the same VLAN tag (G-2).
inline bool same_template(const core::Packet& pkt, const std::uint8_t* d, std::size_t hdrs,
                          const GroHeld& c) {
  const TcpFlow& t = flow_of(c);
  const std::uint8_t* cd = c.pkt.data();
  const std::size_t n = t.words;
  V16 acc = (ld128(d + hdrs - 16) ^ ld128(cd + hdrs - 16)) & t.mask[n - 1];
  for (std::size_t i = 0; i + 1 < n; ++i) acc |= (ld128(d + 16 * i) ^ ld128(cd + 16 * i)) & t.mask[i];
  std::uint64_t w[2];
  std::memcpy(w, &acc, 16);
  return (w[0] | w[1]) == 0 && c.pkt.vlan_present == pkt.vlan_present &&
         c.pkt.vlan_tci == pkt.vlan_tci;
}

// T-1 for CHECKSUM_NONE, COMPLETE and PARTIAL (G-11..G-13, G-5, G-15).
__attribute__((noinline)) bool fast_csum_ok(const core::Packet& pkt, const FastPkt& f) {
  const std::uint8_t* ip = f.ip;
  const std::uint8_t* th = f.th;
  const bool is_v6 = f.v6;
  const std::uint32_t l4len = std::uint32_t(f.len_all - f.thoff);
  auto pseudo = [&] {
    return is_v6 ? cs::csum_ipv6_nofold_inline(ip + v6::kSaddrOffset, ip + v6::kDaddrOffset,
                                               l4len, kIpprotoTcp)
                 : cs::csum_tcpudp_nofold_inline(ip + v4::kSaddrOffset, ip + v4::kDaddrOffset,
                                                 l4len, kIpprotoTcp);
  };
  const std::size_t idx = pkt.csum.index();
  if (idx == 0) {  // None: sum [thoff, end) over the head and the fragments
    const std::size_t hn = f.hl - f.thoff;
    cs::wsum w;
    if (hn == 20 || hn == 32) {
      // The usual head (TCP header without options or with timestamps) and the
      // pseudo-header in one 64-bit sum of host-order words (RFC 1071 §2(B): byte-order
      // independent), folded once; the same value as ps + csum_partial(th, hn).
      namespace sd = cs::short_detail;
      // The address words (IPv6: 32 bytes from saddr; IPv4: 8), then the header as words
      // 0..8, 8..16, 16..20 (and the 12 option bytes 20..32).
      const std::uint8_t* v6a = ip + v6::kSaddrOffset;
      std::uint64_t a = is_v6 ? sd::add64c(sd::add64c(raw64(v6a), raw64(v6a + 8)),
                                           sd::add64c(raw64(v6a + 16), raw64(v6a + 24)))
                              : raw64(ip + v4::kSaddrOffset);
      a = sd::add64c(a, raw64(th));
      a = sd::add64c(a, raw64(th + 8));
      a = sd::add64c(a, raw32(th + 16));
      if (hn == 32) a = sd::add64c(sd::add64c(a, raw64(th + 20)), raw32(th + 28));
      // zero + protocol (bytes 00 06) and the length as two 16-bit words, host order
      a = sd::add64c(a, (std::uint32_t(kIpprotoTcp) << 8) +
                            __builtin_bswap16(std::uint16_t(l4len)) +
                            __builtin_bswap16(std::uint16_t(l4len >> 16)));
      w = sd::finish(a, 0);
    } else {
      w = cs::csum_add(pseudo(), hn <= 64 ? cs::csum_partial_short(th, hn) : cs::csum_partial(th, hn));
    }
    std::size_t done = hn;
    for (const core::Frag& fr : pkt.frags()) {
      w = cs::csum_block_add(w, cs::csum_partial(fr.buf->bytes.data() + fr.off, fr.len), done);
      done += fr.len;
    }
    return cs::csum_fold(w) == 0;
  }
  if (idx == 3) {  // Partial: fine when csum_start is at or after the TCP header
    const auto& part = *std::get_if<core::CsumPartial>(&pkt.csum);
    return std::int64_t(part.csum_start) - pkt.data_pos() >= std::int64_t(f.thoff);
  }
  // Complete: the device sum minus the headers pulled before TCP (G-5, G-15)
  cs::wsum c = std::get_if<core::CsumComplete>(&pkt.csum)->csum;
  if (f.l2) c = cs::csum_sub(c, cs::csum_partial_short(f.d, f.l2));
  if (is_v6) c = cs::csum_sub(c, cs::csum_partial_short(ip, v6::kHdrLen));
  return cs::csum_fold(cs::csum_add(pseudo(), c)) == 0;
}

// The rules that compute (N-15 ID, T-10 size, T-11 sequence, G-16 limit, T-1 checksum),
// then the merge.
inline GroFastResult fast_merge(GroFastState& st, core::Packet& pkt, const FastPkt& f, GroHeld* p) {
  std::uint8_t* pd = p->pkt.data();
  std::uint8_t* th2 = pd + f.thoff;
  bool mark_fixedid = false;
  if (!f.v6) {
    const auto id = rules::inet_id(wire::load_be16(f.ip + v4::kIdOffset),
                                   wire::load_be16(pd + f.l2 + v4::kIdOffset),
                                   p->count, (p->ip_fixedid & 1) != 0);
    if (!id.ok) return {};
    mark_fixedid = id.mark;
  }
  const std::size_t len = f.len_all - f.hdrs;
  const std::size_t mss = p->pkt.gso.size;
  if (!rules::tcp_size_ok(len, mss)) return {};
  const std::size_t plen_all = p->pkt.len();
  if (!rules::tcp_seq_follows(f.th, th2, std::uint32_t(plen_all - f.hdrs))) return {};
  const std::uint32_t max = gro_size_limit(*st.cfg, f.v6);
  if (!core::skb_gro_within(plen_all - f.l2, len, max)) return {};
  // T-1 (G-11..G-13) after every header check, so that a failure costs nothing;
  // Unnecessary (index 1: csum_cnt > 0) has nothing to validate.
  if (pkt.csum.index() != 1 && !fast_csum_ok(pkt, f)) return {};

  // Commit: the merge (G-19, G-20), T-15, the fixed-ID mark, then T-16..T-18.
  if (mark_fixedid) p->ip_fixedid |= 1;
  core::skb_gro_append(p->pkt, p->agg, pkt, f.hdrs);
  p->count = std::uint16_t(p->count + 1);
  th2[tcph::kFlagsOffset] |= std::uint8_t(f.flags & rules::kFlagsUncompared);
  st.last = p;
  return {p, rules::tcp_final(f.flags, len, mss)};
}

// The bucket search: the flow the general chain would pick, then the merge.
__attribute__((noinline)) GroFastResult fast_search(GroFastState& st, core::Packet& pkt,
                                                    const FastPkt& f) {
  const std::uint8_t* ip = f.ip;
  // = gro_flow_hash(frame, link, key) of a TCP packet (another protocol: not for the fast
  // path), from the seeds fast_init computed.
  std::uint64_t h;
  if (!f.v6) {
    if (ip[v4::kProtocolOffset] != kIpprotoTcp) return {};
    h = flowhash::ipv4_addrs(st.priv[0], ip + v4::kSaddrOffset);
  } else {
    if (ip[v6::kNextHeaderOffset] != kIpprotoTcp) return {};
    h = flowhash::ipv6_addrs(st.priv[1], ip + v6::kSaddrOffset);
  }
  const std::uint32_t hash = flowhash::fold(flowhash::ports(h, f.th)) & st.hash_mask;
  GroBucket& b = st.buckets[hash & (kGroHashBuckets - 1)];
  const bool eth = f.l2 != 0;
  // The MAC header as two overlapping words, bytes 0..8 and 6..14.
  constexpr std::size_t kMacWord2 = wire::eth::kHdrLen - 8;
  const std::uint64_t mac_a = eth ? raw64(f.d) : 0, mac_b = eth ? raw64(f.d + kMacWord2) : 0;
  const std::uint32_t ports = raw32(f.th);
  for (auto it = b.rbegin(); it != b.rend(); ++it) {
    GroHeld* c = *it;
    if (c->hash != hash) continue;
    const std::uint8_t* cd = c->pkt.data();
    if (c->pkt.headlen() < f.hdrs) return {};  // not a layout the fast path knows
    if (eth && ((raw64(cd) ^ mac_a) | (raw64(cd + kMacWord2) ^ mac_b))) continue;
    if (c->pkt.vlan_present != pkt.vlan_present || c->pkt.vlan_tci != pkt.vlan_tci) continue;
    const std::uint8_t* cip = cd + f.l2;
    // The family (IPv4 version/IHL byte; IPv6 version nibble in the masked first word),
    // protocol and addresses, as inet_gro_receive / ipv6_gro_receive compare them (N-3, N-8).
    if (!f.v6) {
      if (cip[v4::kVerIhlOffset] != ip[v4::kVerIhlOffset] ||
          cip[v4::kProtocolOffset] != ip[v4::kProtocolOffset] ||
          raw64(cip + v4::kSaddrOffset) != raw64(ip + v4::kSaddrOffset))
        continue;
    } else {
      // version and flow label (not the traffic class), next header, both addresses
      const std::uint8_t *a = ip + v6::kSaddrOffset, *ca = cip + v6::kSaddrOffset;
      if ((wire::load_be32(ip) ^ wire::load_be32(cip)) & (0xF0000000u | v6::kFlowLabelMask) ||
          cip[v6::kNextHeaderOffset] != ip[v6::kNextHeaderOffset] ||
          ((raw64(a) ^ raw64(ca)) | (raw64(a + 8) ^ raw64(ca + 8)) |
           (raw64(a + 16) ^ raw64(ca + 16)) | (raw64(a + 24) ^ raw64(ca + 24))))
        continue;
    }
    if (raw32(cd + f.thoff) != ports) continue;
    // The chain's p: merge only when it is a fast flow of this layout and the template holds.
    if (flow_of(*c).sig != f.sig || !same_template(pkt, f.d, f.hdrs, *c)) return {};
    return fast_merge(st, pkt, f, c);
  }
  // No held flow of this key: the chain holds the packet as a new flow unless it flushes it
  // — T-17 (a final flag), T-16 (no payload: shorter than the mss of 1 it compares with),
  // T-1 (a bad checksum) — or T-4 decides fraglist mode (left to the chain). fast_receive
  // has checked the rest (G-4, N-1, N-2, N-6, N-7, T-2, and CWR, which the chain would
  // allow here: such a packet goes to the chain).
  if (st.cfg->gro_fraglist || (f.flags & rules::kFlagsFinal) || f.len_all == f.hdrs) return {};
  if (pkt.csum.index() != 1) {
    if (!fast_csum_ok(pkt, f)) return {};
    core::incr_checksum_unnecessary(pkt);  // gro_checksum_validate (C-26)
  }
  GroFastResult r;
  r.hold = true;
  r.hash = hash;
  return r;
}

GroFastResult fast_receive(GroFastState& st, core::Packet& pkt) noexcept {
  FastPkt f;
  f.l2 = link_hlen(st.link);
  f.hl = pkt.headlen();
  // G-4, and at least an IPv6 header's worth in the head (the template reads 16-byte words)
  if (f.hl < f.l2 + v6::kHdrLen || pkt.gso.size != 0 || !pkt.frag_list().empty()) return {};
  f.d = pkt.data();
  f.ip = f.d + f.l2;
  f.len_all = pkt.len();
  if (f.l2) {
    const std::uint16_t type = wire::EthernetHeader<const std::uint8_t>::unchecked(f.d).ethertype();
    if (type == wire::ethertype::kIpv4)
      f.v6 = false;
    else if (type == wire::ethertype::kIpv6)
      f.v6 = true;
    else
      return {};
  } else {
    f.v6 = wire::ip_version(f.ip) == 6;
  }
  // N-1, N-2; N-6, N-7 (TCP right after the fixed header: the template compares the
  // next-header byte with the flow's).
  if (!f.v6) {
    if (rules::inet_hard(f.ip) != GroReason::None ||
        rules::inet_soft(f.ip, f.len_all - f.l2) != GroReason::None)
      return {};
    f.thoff = f.l2 + v4::kMinLen;
  } else {
    f.thoff = f.l2 + v6::kHdrLen;
    if (wire::ip_version(f.ip) != 6 || !rules::ipv6_len_ok(f.ip, f.len_all - f.thoff)) return {};
  }
  f.th = f.d + f.thoff;
  if (f.hl < f.thoff + tcph::kMinLen) return {};  // the fixed TCP header must be in the head
  const std::size_t thlen = rules::tcp_hdrlen(f.th);  // T-2
  f.hdrs = f.thoff + thlen;
  if (thlen < tcph::kMinLen || f.hl < f.hdrs) return {};
  f.flags = f.th[tcph::kFlagsOffset];
  if (f.flags & rules::kFlagsNeverJoin) return {};  // T-5 (as on 6.18)
  // The flow's layout (TcpFlow::sig): not encapsulated, not fraglist, TCP, this family, L3
  // right after the link header, these header lengths.
  f.sig = std::uint32_t(f.hdrs) | (f.v6 ? 1u << 16 : 0) | 1u << 17;

  // The flow the general chain would pick (G-2: the first candidate, newest first, of the
  // bucket, with the same hash, MAC header and VLAN tag; N-3/N-8 and T-3 then require the
  // same addresses, protocol and ports). When the flow of the last fast merge or hold is the
  // newest of its bucket and matches the template, it is that flow: equal keys have equal
  // hashes (the flow hash reads only key bytes, wherever they lie). Otherwise fast_search.
  GroHeld* p = st.last;
  if (p && flow_of(*p).sig == f.sig && p->pkt.headlen() >= f.hdrs) {
    GroBucket& b = st.buckets[p->hash & (kGroHashBuckets - 1)];
    if (b.back() == p && same_template(pkt, f.d, f.hdrs, *p)) return fast_merge(st, pkt, f, p);
  }
  return fast_search(st, pkt, f);
}

// receive_run: the first packet through fast_receive; the following ones, while they go to
// the flow it merged into, through the same conditions with that flow's values read once.
// For a next packet with st.last == p and p the newest of its bucket, fast_receive merges
// into p exactly when every condition of run_next holds (its layout checks, the template,
// then fast_merge's rules), and otherwise returns "not taken" or goes to fast_search; the
// run stops at any condition that fails (and at a head holding payload, which fast_receive
// would take too), so that the engine hands that packet to fast_receive / the chain as if
// there had been no run. A packet that G-16 alone refuses is marked last.restart: the engine
// then does what the chain would (p completed, the packet held as the flow's next aggregate)
// without running the chain.
template <bool kV6, bool kEth>
std::size_t run_next(std::span<core::Packet> pkts, GroFastResult& last, GroHeld& p,
                     std::uint32_t max) noexcept {
  constexpr std::size_t l2 = kEth ? wire::eth::kHdrLen : 0;
  constexpr std::size_t thoff = l2 + (kV6 ? v6::kHdrLen : v4::kMinLen);
  const TcpFlow& t = flow_of(p);
  const std::size_t hdrs = t.sig & 0xFFFF;
  core::Packet& pp = p.pkt;
  std::uint8_t* const pd = pp.data();
  const std::uint8_t* const pip = pd + l2;
  std::uint8_t* const th2 = pd + thoff;
  // fast_receive's layout checks on p's own headers: the ethertype, IPv4 version/IHL, the
  // fragment bits (N-1) and the reserved bit (N-2), the IPv6 version, the TCP data offset
  // (T-2); and no CWR (T-5). The template compares every one of those bytes (TcpFlow::mask),
  // so a packet that matches it passes them too, and the loop does not check them again. (p
  // passed them when it was held; merges change only its FIN and PSH bits. Checked here
  // all the same: the run is an optimisation and must not rest on another module's order.)
  if constexpr (kEth) {
    if (wire::load_be16(pd + wire::eth::kTypeOffset) !=
        (kV6 ? wire::ethertype::kIpv6 : wire::ethertype::kIpv4))
      return 1;
  }
  if constexpr (!kV6) {
    if (rules::inet_hard(pip) != GroReason::None ||
        (wire::load_be16(pip + v4::kFragOffOffset) & v4::kCE))
      return 1;
  } else {
    if (wire::ip_version(pip) != 6) return 1;
  }
  if (thoff + rules::tcp_hdrlen(th2) != hdrs || (th2[tcph::kFlagsOffset] & rules::kFlagsNeverJoin))
    return 1;
  // The template as p's masked header bytes (the merges change only p's FIN/PSH bits, which
  // are not masked): word w at 16 * w, the last at hdrs - 16 (same_template).
  const std::size_t nw = t.words;
  V16 want[8];
  for (std::size_t w = 0; w + 1 < nw; ++w) want[w] = ld128(pd + 16 * w) & t.mask[w];
  const V16 want_last = ld128(pd + hdrs - 16) & t.mask[nw - 1];
  const bool vlan_present = pp.vlan_present;
  const std::uint16_t vlan_tci = pp.vlan_tci;
  const std::size_t mss = pp.gso.size;
  // N-1's header checksum: a packet that matches the template has p's header but for three
  // words (tot_len, ID, checksum), and p's header sums to 0 (mod 65535, RFC 1071), so the
  // packet's does exactly when those three words sum to what p's do (mod 65535; in either
  // byte order, as a byte swap multiplies a sum by 256, a unit mod 65535).
  auto ip_words = [](const std::uint8_t* ip) {
    std::uint16_t a, b, c;
    std::memcpy(&a, ip + v4::kTotLenOffset, 2);
    std::memcpy(&b, ip + v4::kIdOffset, 2);
    std::memcpy(&c, ip + v4::kCheckOffset, 2);
    return (std::uint32_t(a) + b + c) % 0xFFFFu;
  };
  const std::uint32_t ip_words_p = kV6 ? 0 : ip_words(pip);
  // N-15 (rules::inet_id) with p.count >= 2, as through the whole run (the first packet
  // merged through fast_receive): the fixed-ID mark cannot be set here, so the ID must be
  // p's plus count, or p's when the flow is fixed-ID.
  std::uint16_t count = p.count;
  if (count < 2) return 1;
  const bool fixed = (p.ip_fixedid & 1) != 0;
  std::uint16_t next_id =
      kV6 ? 0 : std::uint16_t(wire::load_be16(pip + v4::kIdOffset) + (fixed ? 0 : count));
  const std::uint16_t id_step = fixed ? 0 : 1;
  // p's length and the sequence number its next segment must carry (T-11); every merge
  // appends exactly the segment's payload.
  std::size_t plen = pp.len();
  std::uint32_t next_seq =
      wire::load_be32(th2 + tcph::kSeqOffset) + std::uint32_t(plen - hdrs);

  core::detail::HeadBufReturn heads;  // the merged packets' heads, back to the pool
  std::size_t i = 1;
  for (; i < pkts.size(); ++i) {
    core::Packet& pkt = pkts[i];
    // G-4, and a head of exactly the flow's headers (hdrs >= l2 + 40: the template's words
    // are in the head).
    if (pkt.headlen() != hdrs || pkt.gso.size != 0 || pkt.has_frag_list()) break;
    const std::uint8_t* d = pkt.data();
    const std::uint8_t* ip = d + l2;
    const std::size_t len_all = pkt.len();
    // same_template
    V16 acc = (ld128(d + hdrs - 16) & t.mask[nw - 1]) ^ want_last;
    switch (nw) {
      case 8: acc |= (ld128(d + 16 * 6) & t.mask[6]) ^ want[6]; [[fallthrough]];
      case 7: acc |= (ld128(d + 16 * 5) & t.mask[5]) ^ want[5]; [[fallthrough]];
      case 6: acc |= (ld128(d + 16 * 4) & t.mask[4]) ^ want[4]; [[fallthrough]];
      case 5: acc |= (ld128(d + 16 * 3) & t.mask[3]) ^ want[3]; [[fallthrough]];
      case 4: acc |= (ld128(d + 16 * 2) & t.mask[2]) ^ want[2]; [[fallthrough]];
      case 3: acc |= (ld128(d + 16 * 1) & t.mask[1]) ^ want[1]; [[fallthrough]];
      case 2: acc |= (ld128(d) & t.mask[0]) ^ want[0]; [[fallthrough]];
      default: break;
    }
    std::uint64_t a2[2];
    std::memcpy(a2, &acc, 16);
    if ((a2[0] | a2[1]) != 0 || pkt.vlan_present != vlan_present || pkt.vlan_tci != vlan_tci)
      break;
    // the rest of fast_receive's layout checks: N-2 tot_len, N-1 header checksum; N-6
    if constexpr (!kV6) {
      if (wire::load_be16(ip + v4::kTotLenOffset) != std::uint16_t(len_all - l2) ||
          ip_words(ip) != ip_words_p)
        break;
    } else {
      if (!rules::ipv6_len_ok(ip, len_all - thoff)) break;
    }
    const std::uint8_t* th = d + thoff;
    const std::uint8_t flags = th[tcph::kFlagsOffset];

    // fast_merge's rules, then its commit.
    if constexpr (!kV6) {
      if (wire::load_be16(ip + v4::kIdOffset) != next_id) break;
    }
    const std::size_t len = len_all - hdrs;
    if (!rules::tcp_size_ok(len, mss)) break;
    if (wire::load_be32(th + tcph::kSeqOffset) != next_seq) break;  // tcp_seq_follows
    // T-1 (Unnecessary, index 1, has nothing to validate)
    auto csum_ok = [&] {
      if (pkt.csum.index() == 1) return true;
      FastPkt f;
      f.d = d;
      f.ip = ip;
      f.th = th;
      f.l2 = l2;
      f.hl = hdrs;
      f.len_all = len_all;
      f.thoff = thoff;
      f.hdrs = hdrs;
      f.sig = t.sig;
      f.flags = flags;
      f.v6 = kV6;
      return fast_csum_ok(pkt, f);
    };
    if (!core::skb_gro_within(plen - l2, len, max)) {
      // G-16 alone refuses it. tcp_gro_receive then completes p (SizeLimit) and, as the
      // packet passed T-1 and carries no T-17 flag, the chain holds it as a new flow: the
      // newest of p's bucket, with p's hash and layout. Its checksum state is what T-1's
      // validation leaves (gro_checksum_validate: C-26 for NONE; COMPLETE and PARTIAL
      // unchanged). Any other case goes to the chain.
      if (!(flags & rules::kFlagsFinal) && csum_ok()) {
        if (pkt.csum.index() != 1) core::incr_checksum_unnecessary(pkt);
        last.restart = true;
      }
      break;
    }
    if (!csum_ok()) break;
    core::skb_gro_append(pp, p.agg, pkt, hdrs);
    plen += len;
    next_seq += std::uint32_t(len);
    next_id = std::uint16_t(next_id + id_step);
    p.count = count = std::uint16_t(count + 1);
    th2[tcph::kFlagsOffset] |= std::uint8_t(flags & rules::kFlagsUncompared);
    pkt.discard(heads);
    last.complete = rules::tcp_final(flags, len, mss);
    if (last.complete != GroReason::None) return i + 1;
  }
  return i;
}

std::size_t fast_receive_run(GroFastState& st, std::span<core::Packet> pkts,
                             GroFastResult& last) noexcept {
  if (pkts.empty()) return 0;
  const GroFastResult r0 = fast_receive(st, pkts[0]);
  if (!r0.p) {
    last = r0;  // maybe a new flow to hold
    return 0;
  }
  pkts[0].discard();
  last = r0;
  if (r0.complete != GroReason::None || pkts.size() == 1) return 1;
  GroHeld& p = *r0.p;
  // Merges do not reorder the buckets: p stays the newest of its bucket for the whole run.
  // A flow of the fast layout has no frag_list (not fraglist): its merges append fragments.
  if (st.buckets[p.hash & (kGroHashBuckets - 1)].back() != &p || p.pkt.has_frag_list()) return 1;
  const bool v6 = (flow_of(p).sig >> 16) & 1;  // the layout of the first merge (TcpFlow::sig)
  const std::uint32_t max = gro_size_limit(*st.cfg, v6);
  if (st.link == GroLink::Ethernet)
    return v6 ? run_next<true, true>(pkts, last, p, max) : run_next<false, true>(pkts, last, p, max);
  return v6 ? run_next<true, false>(pkts, last, p, max) : run_next<false, false>(pkts, last, p, max);
}

void fast_init(GroFastState& st) noexcept {
  st.priv[0] = flowhash::seed(st.key, wire::ethertype::kIpv4, kIpprotoTcp);
  st.priv[1] = flowhash::seed(st.key, wire::ethertype::kIpv6, kIpprotoTcp);
}

// A new flow's template: for the fast path's layout (IPv4 without options or IPv6 without
// extension headers right after the link header, then TCP, all in the head, not in a tunnel,
// not fraglist); other flows get signature 0 and stay on the general path.
bool fast_hold(const GroFastState& st, GroHeld& h, const GroContext& ctx) noexcept {
  TcpFlow& t = flow_of(h);
  t.sig = 0;
  const std::size_t l2 = link_hlen(st.link);
  const core::Packet& pkt = h.pkt;
  const std::uint8_t* hip = pkt.data() + l2;
  const std::size_t hth = l2 + (h.is_ipv6 ? v6::kHdrLen : v4::kMinLen);
  if (ctx.proto == kIpprotoTcp && !ctx.encap_mark && !ctx.is_flist &&
      ctx.network_offsets[0] == l2 && ctx.transport_offset == hth &&
      ctx.data_offset >= hth + tcph::kMinLen && ctx.data_offset <= hth + tcph::kMaxLen &&
      pkt.headlen() >= ctx.data_offset &&
      (h.is_ipv6 ? hip[v6::kNextHeaderOffset] == kIpprotoTcp
                 : hip[v4::kVerIhlOffset] == v4::kVerIhl5 && hip[v4::kProtocolOffset] == kIpprotoTcp)) {
    t.sig = ctx.data_offset | (h.is_ipv6 ? 1u << 16 : 0) | 1u << 17;
    build_mask(t, l2, h.is_ipv6, ctx.data_offset);
    return true;
  }
  return false;
}

// The fields of a new flow's entry that gro_hold_init and fast_hold write after the chain,
// for a packet fast_search marked `hold` (the fast layout: L3 right after the link header,
// TCP after the fixed IP header, not in a tunnel, fraglist off, not GSO).
void fast_hold_new(const GroFastState& st, GroHeld& h) noexcept {
  const std::size_t l2 = link_hlen(st.link);
  const std::uint8_t* ip = h.pkt.data() + l2;
  const bool v6 = st.link == GroLink::Ethernet
                      ? wire::load_be16(h.pkt.data() + wire::eth::kTypeOffset) == wire::ethertype::kIpv6
                      : wire::ip_version(ip) == 6;
  const std::size_t thoff = l2 + (v6 ? v6::kHdrLen : v4::kMinLen);
  h.count = 1;
  h.data_offset = std::uint16_t(thoff + rules::tcp_hdrlen(h.pkt.data() + thoff));
  h.network_offsets = {std::uint16_t(l2), 0};
  h.transport_offset = std::uint16_t(thoff);
  h.proto = kIpprotoTcp;
  h.ip_fixedid = 0;
  h.encap_mark = false;
  h.is_flist = false;
  h.is_ipv6 = v6;
  h.same_flow = false;
  TcpFlow& t = flow_of(h);
  t.sig = std::uint32_t(h.data_offset) | (v6 ? 1u << 16 : 0) | 1u << 17;
  build_mask(t, l2, v6, h.data_offset);
}

constexpr GroFastHook kTcpFastHook{fast_init, fast_receive, fast_hold, fast_receive_run,
                                   fast_hold_new};

}  // namespace

const GroFastHook* gro_fast_hook(const Registry& reg) noexcept {
  const ProtocolOffload* tcp = reg.find(Key::IpProto, wire::ipproto::kTcp);
  const ProtocolOffload* v4 = reg.find(Key::Ethertype, wire::ethertype::kIpv4);
  const ProtocolOffload* v6 = reg.find(Key::Ethertype, wire::ethertype::kIpv6);
  if (!tcp || tcp->gro_receive != gro_hooks::tcp_gro_receive || !v4 ||
      v4->gro_receive != gro_hooks::inet_gro_receive || !v6 || v6->gro_receive != gro_hooks::ipv6_gro_receive)
    return nullptr;
  return &kTcpFastHook;
}

}  // namespace ofld::offload

// skb_segment analogue (net/core/skbuff.c; spec X-5..X-13), the GSO checksum helpers
// (include/net/gso.h; ), pseudo_seed and the names of the GSO reasons and modes.
#include <algorithm>
#include <cstring>

#include "ofld/core/skb_segment.hpp"

namespace ofld::core {

using csum::wsum;

namespace {

// One contiguous run of payload bytes; buf == nullptr means linear (head) bytes.
struct Piece {
  const std::uint8_t* p;
  std::uint32_t len;
  const core::BufferRef* buf;
  std::uint32_t off;
};

void collect_pieces(const Packet& skb, std::vector<Piece>& out) {
  if (skb.headlen()) out.push_back({skb.data(), std::uint32_t(skb.headlen()), nullptr, 0});
  for (const auto& f : skb.frags())
    if (f.len) out.push_back({f.buf->bytes.data() + f.off, f.len, &f.buf, f.off});
  for (const auto& m : skb.frag_list()) collect_pieces(m, out);
}

constexpr std::size_t kSegHeadroom = 32;

// References handed to segments but not yet counted: the count of one buffer is raised once
// for all the fragments that refer to it (BufferRef::acquire), when the loop moves on to
// another buffer and at the latest when the fast path returns or unwinds — before any segment
// can be dropped. Meanwhile the super-packet's own fragments keep every buffer alive.
struct PendingRefs {
  core::Buffer* buf = nullptr;
  std::uint32_t n = 0;
  void settle() noexcept {
    if (n) core::BufferRef::acquire(buf, n);
    n = 0;
  }
  ~PendingRefs() { settle(); }
};

// Every mode without a frag_list (a TCP socket's skb: headers linear, payload in page frags,
// maybe some in the head): each segment is constructed in place in its final container from
// one metadata template (__copy_skb_header done once) with the header bytes already in its
// linear area, so the per-segment cost is the payload work the mode asks for and nothing
// else. Mode SgRef with Sum = false is X-7 with sg && csum (no payload summed, fragments
// referenced); SgRef with Sum is X-9 (referenced, then each piece summed in place); Copy is
// X-8's plain copy (the device checksums) and CopySum its copy-and-sum in one pass. Same
// bytes, metadata, checksum results and counters as the general loop below, piece by piece
// (the same csum_block_add over the same pieces), which the fast-path differential test
// holds it to.
// flatten: the per-segment constructor, pool and fragment pushes are inlined into the loop
// whatever the inliner's size budget says.
template <SegMode Mode, bool Sum>
[[gnu::flatten]] int skb_segment_fast(SegmentContext& ctx, const std::uint8_t* hdr,
                                      std::size_t doffset, std::size_t mss, std::size_t total) {
  static_assert(Mode == SegMode::SgRef || Sum == (Mode == SegMode::CopySum));
  const Packet& skb = *ctx.skb;
  core::PacketMeta meta{};
  copy_skb_header(skb, meta, ctx.frame_start);
  // A summed segment leaves PARTIAL for the L4 handler, which completes it from cb_csum.
  if (Sum && !meta.remcsum_offload) meta.csum = core::CsumNone{};

  const std::size_t nsegs = (total + mss - 1) / mss;
  ctx.reset_segs(nsegs);
  const std::uint8_t* hp = skb.data();
  std::size_t hleft = skb.headlen();  // payload bytes still in the head
  const std::span<const core::Frag> frags = skb.frags();
  std::size_t fi = 0, foff = 0, left = total;
  const std::uint64_t head_bytes = hleft;
  const std::span<const std::uint8_t> hspan{hdr, doffset};
  const pos_t pay_pos = pos_t(doffset);
  PendingRefs pending;

  for (std::size_t i = 0; i < nsegs; ++i) {
    const std::size_t len = std::min(mss, left);
    left -= len;
    const std::size_t hcopy = std::min(len, hleft);
    // Copy modes put the whole payload into the head: size it for that at once.
    GsoSeg& s = ctx.add_seg(meta, hspan, kSegHeadroom, Mode == SegMode::SgRef ? hcopy : len);
    Packet& p = s.pkt;
    wsum sum = 0;
    std::uint8_t* dst = Mode == SegMode::SgRef ? (hcopy ? p.put_uninit(hcopy) : nullptr)
                                               : p.put_uninit(len);  // within the tailroom
    if (hcopy) {
      if constexpr (Sum) {
        sum = csum::csum_partial_copy(dst, hp, hcopy);
      } else {
        std::memcpy(dst, hp, hcopy);
      }
      hp += hcopy;
      hleft -= hcopy;
    }
    std::size_t need = len - hcopy, k = hcopy, nfr = 0;
    while (need) {
      const core::Frag& f = frags[fi];
      const std::size_t n = std::min<std::size_t>(need, f.len - foff);
      if (n) {
        core::Buffer* b = f.buf.get();
        const std::uint8_t* src = b->bytes.data() + f.off + foff;
        if constexpr (Mode == SegMode::SgRef) {
          if (++nfr > core::kMaxSkbFrags) return ctx.fail(GsoReason::TooManyFrags);
          if (b != pending.buf) {
            pending.settle();
            pending.buf = b;
          }
          p.add_frag_adopted(b, std::uint32_t(f.off + foff), std::uint32_t(n));
          ++pending.n;
          if constexpr (Sum) sum = csum::csum_block_add(sum, csum::csum_partial(src, n), k);
        } else if constexpr (Sum) {  // copy and sum in one pass
          sum = csum::csum_block_add(sum, csum::csum_partial_copy(dst + k, src, n), k);
        } else {  // plain copy, no sum (the device checksums)
          std::memcpy(dst + k, src, n);
        }
        k += n;
        need -= n;
        foff += n;
      }
      if (foff == f.len) ++fi, foff = 0;
    }
    if constexpr (Sum) {
      s.cb_csum = sum;
      s.cb_csum_start = pay_pos;
    }
  }
  if (ctx.counters) {
    ctx.counters->seg_mode[std::size_t(Mode)] += nsegs;
    if (Mode == SegMode::SgRef && Sum) ctx.counters->sg_sum += nsegs;
    const std::uint64_t copied = Mode == SegMode::SgRef ? head_bytes : total;
    ctx.counters->payload_bytes_copied += copied;
    ctx.counters->payload_bytes_referenced += total - copied;
  }
  // The hooks' tight rewrite loops take these segments: headers in every head, one shared
  // checksum state (the TCP loop completes a summed segment from cb_csum as its general
  // loop does, X-15).
  ctx.seg_fast = true;
  return 0;
}

// The fragment walk of the all-in-fragments SG case, shared by its two outputs: for each
// segment of `mss` payload bytes (the last one shorter), sink.begin(i), then sink.add(buf, off,
// n) for each slice of it, its reference counted into `pending`, then sink.end(i). More than
// MAX_SKB_FRAGS slices in one segment fails the run (X-13, ctx.fail).
template <class Sink>
[[gnu::always_inline]] inline int walk_sg_ref(SegmentContext& ctx, const Packet& skb,
                                              std::size_t nsegs, std::size_t mss,
                                              std::size_t total, PendingRefs& pending,
                                              Sink& sink) {
  const core::Frag* fv = skb.frags().data();
  std::size_t fi = 0, left = total;
  std::uint32_t foff = 0;
  const auto take = [&](core::Buffer* b, std::uint32_t off, std::uint32_t n) {
    if (b != pending.buf) {
      pending.settle();
      pending.buf = b;
    }
    ++pending.n;
    sink.add(b, off, n);
  };
  for (std::size_t i = 0; i < nsegs; ++i) {
    const std::size_t len = std::min(mss, left);
    left -= len;
    sink.begin(i);
    {  // most segments lie inside one fragment: one slice, no loop
      const core::Frag& f = fv[fi];
      if (f.len - foff > len) {
        take(f.buf.get(), f.off + foff, std::uint32_t(len));
        foff += std::uint32_t(len);
        sink.end(i);
        continue;
      }
    }
    std::size_t need = len, nfr = 0;
    do {
      const core::Frag& f = fv[fi];
      const std::uint32_t avail = f.len - foff;
      const std::uint32_t n = std::uint32_t(std::min<std::size_t>(need, avail));
      if (n) {
        if (++nfr > core::kMaxSkbFrags) return ctx.fail(GsoReason::TooManyFrags);
        take(f.buf.get(), f.off + foff, n);
        need -= n;
      }
      if (n == avail) {
        ++fi;
        foff = 0;
      } else {
        foff += n;
      }
    } while (need);
    sink.end(i);
  }
  return 0;
}

// X-7 with sg && csum when the whole payload is in fragments (a TCP socket's skb: headers
// linear, payload in pages), the common TSO case: each segment is the header template and
// references to the payload's slices; no payload byte is read. The same segments, references
// and counters as skb_segment_fast<SgRef, false>, with less per segment: the heads come from
// one size class's free list (HeadBufTake), and the loop keeps its few values in registers.
[[gnu::noinline, gnu::flatten]] int skb_segment_sg_ref(SegmentContext& ctx, const std::uint8_t* hdr,
                                         std::size_t doffset, std::size_t mss, std::size_t total) {
  const Packet& skb = *ctx.skb;
  core::PacketMeta meta{};
  copy_skb_header(skb, meta, ctx.frame_start);
  const std::size_t nsegs = (total + mss - 1) / mss;
  ctx.reset_segs(nsegs);
  const std::span<const std::uint8_t> hspan{hdr, doffset};
  detail::HeadBufTake heads(kSegHeadroom + doffset);
  PendingRefs pending;
  struct PacketSink {  // each segment a packet: the header template, then its fragments
    SegmentContext& ctx;
    const PacketMeta& meta;
    detail::HeadBufTake& heads;
    std::span<const std::uint8_t> hspan;
    Packet* p = nullptr;
    void begin(std::size_t) { p = &ctx.add_seg(meta, heads, hspan, kSegHeadroom).pkt; }
    void add(core::Buffer* b, std::uint32_t off, std::uint32_t n) { p->add_frag_adopted(b, off, n); }
    void end(std::size_t) {}
  } sink{ctx, meta, heads, hspan};
  if (const int rc = walk_sg_ref(ctx, skb, nsegs, mss, total, pending, sink); rc != 0) return rc;
  if (ctx.counters) {
    ctx.counters->seg_mode[std::size_t(SegMode::SgRef)] += nsegs;
    ctx.counters->payload_bytes_referenced += total;
  }
  ctx.seg_fast = true;
  return 0;
}

// skb_segment_sg_ref's segments built into ctx.batch's slab instead of packets: the same
// headers (copied once per segment into one slab) and the same payload slices with the same
// references, but no Packet, head block or fragment array per segment. The hooks' rewrite
// loops then work on the slab (ctx.batch_used).
[[gnu::noinline, gnu::flatten]] int skb_segment_sg_ref_batch(SegmentContext& ctx, const std::uint8_t* hdr,
                                               std::size_t doffset, std::size_t mss,
                                               std::size_t total) {
  const Packet& skb = *ctx.skb;
  core::PacketMeta meta{};
  copy_skb_header(skb, meta, ctx.frame_start);
  const std::size_t nsegs = (total + mss - 1) / mss;
  ctx.reset_segs(0);
  SegmentBatch& b = *ctx.batch;
  using Builder = detail::SlabBuilder;
  // Every segment starts a slice, and a fragment boundary inside a segment adds one.
  BatchSlice* const first = Builder::start(b, meta, doffset, nsegs, mss,
                                           total - (nsegs - 1) * mss, nsegs + skb.nr_frags());
  std::uint32_t* const ends = Builder::ends(b);
  // The headers: one copy, then the slab doubled onto itself (a few long copies instead of
  // one short copy per segment).
  std::uint8_t* const slab = Builder::slab(b);
  if (doffset) {
    std::memcpy(slab, hdr, doffset);
    for (std::size_t have = 1; have < nsegs;) {
      const std::size_t k = std::min(have, nsegs - have);
      std::memcpy(slab + have * doffset, slab, k * doffset);
      have += k;
    }
  }
  // The slices written are the batch's from the start, so that a failure leaves them
  // to clear() with their references (settled by `pending` first: declared after this).
  struct Built {
    SegmentBatch& b;
    BatchSlice* const& w;
    BatchSlice* first;
    ~Built() { detail::SlabBuilder::slices_built(b, std::size_t(w - first)); }
  };
  BatchSlice* w = first;
  const Built built{b, w, first};
  PendingRefs pending;
  struct SlabSink {  // each segment's slices into the slab's array, its end recorded
    BatchSlice*& w;
    BatchSlice* first;
    std::uint32_t* ends;
    void begin(std::size_t) {}
    void add(core::Buffer* buf, std::uint32_t off, std::uint32_t n) { *w++ = BatchSlice{buf, off, n}; }
    void end(std::size_t i) { ends[i] = std::uint32_t(w - first); }
  } sink{w, first, ends};
  if (const int rc = walk_sg_ref(ctx, skb, nsegs, mss, total, pending, sink); rc != 0) return rc;
  if (ctx.counters) {
    ctx.counters->seg_mode[std::size_t(SegMode::SgRef)] += nsegs;
    ctx.counters->payload_bytes_referenced += total;
  }
  ctx.seg_fast = true;
  ctx.batch_used = true;
  return 0;
}

}  // namespace

int skb_segment(SegmentContext& ctx) {
  Packet& skb = *ctx.skb;
  const std::uint32_t mss = skb.gso.size;
  const std::size_t total = skb.len();
  if (mss == 0 || mss == core::kGsoByFrags) return ctx.fail(GsoReason::BadGsoType);
  if (total <= mss) return ctx.fail(GsoReason::NothingToSegment);
  const std::size_t doffset = std::size_t(skb.data_pos() - ctx.frame_start);
  const std::uint8_t* hdr = skb.at_pos(ctx.frame_start, doffset);
  if (!hdr) return ctx.fail(GsoReason::HeaderTruncated);

  // sg and csum for this level; the kernel's DODGY frag_list geometry case does not arise: ofld
  // never builds frag_list members with non-head-frag linear parts.
  const bool sg = ctx.features.has(core::netif_f::SG);
  const bool csum_ok = core::can_checksum_protocol(ctx.features, ctx.protocol);
  const SegMode mode = sg ? SegMode::SgRef : (csum_ok ? SegMode::Copy : SegMode::CopySum);
  if (skb.frag_list().empty() && ctx.fast_path) {
    switch (mode) {
      case SegMode::SgRef:
        if (!csum_ok) return skb_segment_fast<SegMode::SgRef, true>(ctx, hdr, doffset, mss, total);
        if (skb.headlen() != 0)
          return skb_segment_fast<SegMode::SgRef, false>(ctx, hdr, doffset, mss, total);
        // The slab needs a template the hooks can finish alone: PARTIAL, no RCO.
        if (ctx.batch && std::holds_alternative<core::CsumPartial>(skb.csum) &&
            !skb.remcsum_offload)
          return skb_segment_sg_ref_batch(ctx, hdr, doffset, mss, total);
        return skb_segment_sg_ref(ctx, hdr, doffset, mss, total);
      case SegMode::Copy: return skb_segment_fast<SegMode::Copy, false>(ctx, hdr, doffset, mss, total);
      case SegMode::CopySum:
        return skb_segment_fast<SegMode::CopySum, true>(ctx, hdr, doffset, mss, total);
      case SegMode::kCount: break;
    }
  }

  thread_local std::vector<Piece> pieces;  // reused: no allocation per packet
  pieces.clear();
  collect_pieces(skb, pieces);

  const std::size_t nsegs = (total + mss - 1) / mss;
  ctx.reset_segs(nsegs);
  std::size_t pi = 0, poff = 0, left = total;
  std::uint64_t copied = 0, referenced = 0, sg_sum = 0;

  for (std::size_t i = 0; i < nsegs; ++i) {
    const std::size_t len = std::min<std::size_t>(mss, left);
    left -= len;
    // Copy modes put the payload into the head: size the head for it at once.
    GsoSeg& s = ctx.add_seg(
        Packet::from_bytes({hdr, doffset}, kSegHeadroom, mode == SegMode::SgRef ? 0 : len));
    copy_skb_header(skb, s.pkt, ctx.frame_start);  // segment_list.cpp
    const pos_t pay_pos = pos_t(doffset);
    bool summed = false;

    if (mode == SegMode::SgRef) {
      std::size_t need = len, nfr = 0;
      while (need) {
        const Piece& pc = pieces[pi];
        const std::size_t n = std::min<std::size_t>(need, pc.len - poff);
        if (pc.buf) {
          s.pkt.add_frag(*pc.buf, pc.off + poff, n);
          if (++nfr > core::kMaxSkbFrags) return ctx.fail(GsoReason::TooManyFrags);
          referenced += n;
        } else {
          s.pkt.append({pc.p + poff, n});
          copied += n;
        }
        need -= n;
        poff += n;
        if (poff == pc.len) ++pi, poff = 0;
      }
      if (!csum_ok) {  // sum the payload now for the L4 handler
        s.cb_csum = s.pkt.checksum(doffset, len, 0);
        s.cb_csum_start = pay_pos;
        summed = true;
        ++sg_sum;
      }
    } else {
      std::uint8_t* dst = s.pkt.put_uninit(len);
      std::size_t need = len, k = 0;
      wsum sum = 0;
      while (need) {
        const Piece& pc = pieces[pi];
        const std::size_t n = std::min<std::size_t>(need, pc.len - poff);
        if (mode == SegMode::CopySum) {  // copy and sum in one pass
          sum = csum::csum_block_add(sum, csum::csum_partial_copy(dst + k, pc.p + poff, n), k);
        } else {  // X-8 Kishore rule: plain copy, no sum (the device checksums)
          std::memcpy(dst + k, pc.p + poff, n);
        }
        k += n;
        need -= n;
        poff += n;
        if (poff == pc.len) ++pi, poff = 0;
      }
      copied += len;
      if (mode == SegMode::CopySum) {
        s.cb_csum = sum;
        s.cb_csum_start = pay_pos;
        summed = true;
      }
    }
    if (summed && !s.pkt.remcsum_offload) s.pkt.csum = core::CsumNone{};
  }
  if (ctx.counters) {
    ctx.counters->seg_mode[std::size_t(mode)] += nsegs;
    ctx.counters->sg_sum += sg_sum;
    ctx.counters->payload_bytes_copied += copied;
    ctx.counters->payload_bytes_referenced += referenced;
  }
  return 0;
}

std::uint16_t gso_make_checksum(GsoSeg& s, wsum res) noexcept {
  const pos_t th = s.pkt.transport_header;
  const int plen = std::max(0, int(s.cb_csum_start - th));
  const std::uint8_t* p = s.pkt.at_pos(th, std::size_t(plen));
  const wsum partial = s.cb_csum;
  s.cb_csum = res;
  s.cb_csum_start = th;
  return csum::csum_fold(p ? csum::csum_partial(p, std::size_t(plen), partial) : partial);
}

wsum gso_checksum_region(GsoSeg& s, std::size_t& len) noexcept {
  const pos_t th = s.pkt.transport_header;
  const int plen = std::max(0, int(s.cb_csum_start - th));
  const std::uint8_t* p = s.pkt.at_pos(th, std::size_t(plen));
  len = p ? std::size_t(plen) : 0;
  return p ? csum::csum_partial(p, std::size_t(plen), 0) : 0;
}

std::uint16_t gso_make_checksum_summed(GsoSeg& s, wsum res, wsum region) noexcept {
  const wsum partial = s.cb_csum;
  s.cb_csum = res;
  s.cb_csum_start = s.pkt.transport_header;
  return csum::csum_fold(csum::csum_add(region, partial));
}

void gso_reset_checksum(GsoSeg& s, wsum res) noexcept {
  if (s.pkt.remcsum_offload) return;
  s.cb_csum = res;
  if (auto* cp = std::get_if<core::CsumPartial>(&s.pkt.csum)) s.cb_csum_start = cp->csum_start;
}

std::string_view to_string(GsoReason r) noexcept {
  switch (r) {
    case GsoReason::Ok: return "ok";
    case GsoReason::NotGso: return "not-gso";
    case GsoReason::BadGsoType: return "bad-gso-type";
    case GsoReason::HeaderTruncated: return "header-truncated";
    case GsoReason::BadIpHeader: return "bad-ip-header";
    case GsoReason::BadTcpHeader: return "bad-tcp-header";
    case GsoReason::CsumStartMismatch: return "csum-start-mismatch";
    case GsoReason::NothingToSegment: return "nothing-to-segment";
    case GsoReason::FixedIdWithoutDf: return "fixedid-without-df";
    case GsoReason::UnknownEthertype: return "unknown-ethertype";
    case GsoReason::UnknownIpProto: return "unknown-ip-proto";
    case GsoReason::BadTunnel: return "bad-tunnel";
    case GsoReason::TooManyFrags: return "too-many-frags";
    case GsoReason::UfoUnsupported: return "ufo-unsupported";
    case GsoReason::RecursionLimit: return "recursion-limit";
    case GsoReason::SegmentTooLong: return "segment-too-long";
    case GsoReason::NestedTunnel: return "nested-tunnel";
    case GsoReason::kCount: break;
  }
  return "?";
}

std::string_view to_string(SegMode m) noexcept {
  switch (m) {
    case SegMode::SgRef: return "sg-ref";
    case SegMode::Copy: return "copy";
    case SegMode::CopySum: return "copy-sum";
    case SegMode::kCount: break;
  }
  return "?";
}

std::uint64_t GsoCounters::errors_total() const noexcept {
  std::uint64_t t = 0;
  for (auto e : errors) t += e;
  return t;
}

std::uint16_t pseudo_seed(const Packet& p, pos_t ip_pos, std::uint32_t len,
                          std::uint8_t proto) noexcept {
  const std::uint8_t* ip = const_cast<Packet&>(p).at_pos(ip_pos, 40);
  if (!ip) ip = const_cast<Packet&>(p).at_pos(ip_pos, 20);
  if (!ip) return 0;
  if ((ip[0] >> 4) == 6)
    return csum::csum_fold16(csum::csum_ipv6_nofold(ip + 8, ip + 24, len, proto));
  return csum::csum_fold16(csum::csum_tcpudp_nofold(ip + 12, ip + 16, len, proto));
}

}  // namespace ofld::core

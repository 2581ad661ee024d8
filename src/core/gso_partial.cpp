// GSO_PARTIAL around skb_segment (net/core/skbuff.c skb_segment's partial_segs logic; spec
// X-10 GSO-partial branch, X-35; Documentation/networking/segmentation-offloads.rst).
//
// skb_segment() (skb_segment.cpp) cuts the payload into gso.size pieces. For GSO_PARTIAL the
// kernel multiplies mss by partial_segs inside skb_segment; here the same effect is had from
// the outside: gso.size is set to mss × partial_segs for the call and restored afterwards,
// then the outputs' GSO fields are filled in as the kernel does after its loop.
#include <algorithm>

#include "ofld/core/skb_segment.hpp"

namespace ofld::core {


namespace {

constexpr std::size_t kPartialLenCap = 65534;  // GSO_BY_FRAGS − 1

// One output holding the whole payload: skb_segment() refuses total <= mss, so run it with
// gso.size = total − 1 (outputs of total − 1 and 1 bytes) and move the 1-byte tail's payload
// onto the first. Only used in SG+csum mode (X-10 precondition), where no payload sum is
// taken, so the two outputs carry no per-segment checksum state to merge.
int segment_whole(SegmentContext& ctx, std::size_t total) {
  Packet& skb = *ctx.skb;
  const std::uint16_t saved = skb.gso.size;
  skb.gso.size = std::uint16_t(total - 1);
  int rc = skb_segment(ctx);
  skb.gso.size = saved;
  if (rc != 0) return rc;
  if (ctx.segs.size() != 2) return ctx.fail(GsoReason::NothingToSegment);
  Packet& tail = ctx.segs[1].pkt;
  std::uint8_t last = 0;
  if (tail.copy_bits(std::size_t(ctx.data_offset), {&last, 1}) != core::PacketError::Ok)
    return ctx.fail(GsoReason::HeaderTruncated);
  ctx.segs[0].pkt.append({&last, 1});  // may grow the head
  ctx.seg_fast = false;
  ctx.pop_seg();
  if (ctx.counters) --ctx.counters->seg_mode[std::size_t(SegMode::SgRef)];
  return 0;
}

}  // namespace

int segment_payload(SegmentContext& ctx) {
  Packet& skb = *ctx.skb;
  const std::uint16_t mss = skb.gso.size;
  ctx.data_offset = ctx.seg_off(skb.data_pos());
  ctx.gso_partial = false;
  if (mss == core::kGsoByFrags) return skb_segment_by_frags(ctx);

  // the partial branch needs sg && csum at this level and GSO_PARTIAL offered.
  const bool sg = ctx.features.has(core::netif_f::SG);
  const bool csum = core::can_checksum_protocol(ctx.features, ctx.protocol);
  std::size_t partial_segs = 0;
  const std::size_t total = skb.len();
  if (sg && csum && mss != 0 && ctx.features.has(core::netif_f::GSO_PARTIAL)) {
    partial_segs = std::min(total, kPartialLenCap) / mss;
    if (partial_segs <= 1) partial_segs = 0;
  }
  if (partial_segs == 0) return skb_segment(ctx);

  const std::size_t chunk = partial_segs * mss;  // <= 65534: fits gso.size
  // GSO-partial outputs are GSO packets each, with their own gso info: never a slab.
  SegmentBatch* const batch = ctx.batch;
  ctx.batch = nullptr;
  int rc;
  if (chunk >= total) {
    rc = segment_whole(ctx, total);
  } else {
    skb.gso.size = std::uint16_t(chunk);
    rc = skb_segment(ctx);
    skb.gso.size = mss;
  }
  ctx.batch = batch;
  if (rc != 0) return rc;

  // The outputs are GSO skbs (skb_segment's "Update GSO info on first skb in partial
  // sequence" step). PARTIAL is added only because GSO_PARTIAL was offered (always here).
  const std::uint32_t type = (skb.gso.type | core::skb_gso::PARTIAL) & ~core::skb_gso::DODGY;
  for (auto& s : ctx.segs) {
    s.pkt.gso.size = mss;
    s.pkt.gso.segs = std::uint16_t(partial_segs);
    s.pkt.gso.type = type;
  }
  Packet& tail = ctx.segs.back().pkt;
  const std::size_t tail_payload = tail.len() - std::size_t(ctx.data_offset);
  if (tail_payload <= mss) {
    tail.gso = {};  // gso_size 0: a plain packet (its segs/type are not looked at again)
  } else if (ctx.segs.size() > 1) {
    tail.gso.segs = std::uint16_t((tail_payload + mss - 1) / mss);
  }
  ctx.gso_partial = true;
  if (ctx.counters) ++ctx.counters->packets_partial;
  return 0;
}

std::size_t one_mss_len(const SegmentContext& ctx, const GsoSeg& s, int from) noexcept {
  if (ctx.gso_partial && s.pkt.is_gso())
    return std::size_t(s.pkt.gso.size) + std::size_t(ctx.data_offset - from);
  return s.pkt.len() - std::size_t(from);
}

}  // namespace ofld::core

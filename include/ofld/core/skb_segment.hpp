// ofld/core/skb_segment.hpp — skb_segment and its helpers (net/core/skbuff.c skb_segment,
// skb_segment_list; include/net/gso.h SKB_GSO_CB, gso_make_checksum; spec X-5..X-15, X-32).
//
// As in the kernel, where skb_segment lives in net/core/skbuff.c beside the sk_buff, the
// segment builders belong to core: they know packets, features and the SKB_GSO_CB checksum
// pair, not protocols. The protocol hooks (ofld/offload) call them; the GSO engine
// (ofld/gso) drives the hooks. The state they work on is SegmentContext, which the offload
// layer's GsoContext extends with its dispatch state (registry, device, nesting).
//
// Position model: every output segment is a whole frame whose data() is the frame start; the
// header positions of a segment are the original packet's positions minus frame_start.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ofld/core/features.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/core/segment_batch.hpp"

namespace ofld::core {

/// Why a GSO run (or one of its hooks) refused a packet. Each value is a counted reason.
enum class GsoReason : std::uint8_t {
  Ok = 0,
  NotGso,             ///< gso_size 0: nothing to do
  BadGsoType,         ///< gso_type lacks the bit this layer needs (X-16, X-28, X-34)
  HeaderTruncated,    ///< a header does not fit in the packet (pskb_may_pull failed)
  BadIpHeader,        ///< IPv4 ihl < 5 / wrong version / IPv6 fragment or unknown ext header
  BadTcpHeader,       ///< TCP doff*4 < 20 (X-16)
  CsumStartMismatch,  ///< PARTIAL csum_start is not this L4 header (X-16, X-28)
  NothingToSegment,   ///< payload <= gso_size (X-19, X-28)
  FixedIdWithoutDf,   ///< TCP_FIXEDID with DF clear (X-24, 6.12)
  UnknownEthertype,   ///< no segment hook for the (inner) ethertype
  UnknownIpProto,     ///< no segment hook for the IP protocol
  BadTunnel,          ///< tunnel header shorter than its minimum / encapsulation not set
  TooManyFrags,       ///< a segment would need more than MAX_SKB_FRAGS fragments (X-13)
  UfoUnsupported,     ///< legacy UFO (SKB_GSO_UDP) is not produced by ofld
  RecursionLimit,     ///< nested tunnels deeper than kMaxGsoRecursion
  SegmentTooLong,     ///< a segment's IPv4 total / IPv6 payload length would exceed 65535
                      ///< (gso_size + headers too large): refused rather than wrapped
  NestedTunnel,       ///< more than one tunnel level (X-31): the bytes between a
                      ///< tunnel header and the inner headers are not that tunnel's own header,
                      ///< or a tunnel hook is reached inside a tunnel. Like the kernel, ofld
                      ///< segments one level (encapsulation + inner_* describe one); copying a
                      ///< second level as opaque header would keep super-packet lengths
  kCount
};
std::string_view to_string(GsoReason r) noexcept;

/// How a segment's payload was built (skb_segment, X-7..X-9).
enum class SegMode : std::uint8_t {
  SgRef,     ///< SG: page fragments referenced (no payload copy); head payload copied
  Copy,      ///< no SG, checksum offload available: plain copy, state stays PARTIAL (X-8)
  CopySum,   ///< neither: copy and sum in one pass (csum_partial_copy), state NONE (X-8)
  kCount
};
std::string_view to_string(SegMode m) noexcept;

/// Counters of the GSO engine. Plain integers; one instance per engine / thread.
struct GsoCounters {
  std::uint64_t packets_in = 0;         ///< packets handed to gso_segment
  std::uint64_t packets_segmented = 0;  ///< packets split in software
  std::uint64_t packets_hw = 0;         ///< header-verified only: device segments (X-20)
  std::uint64_t segments_out = 0;       ///< segments produced
  std::array<std::uint64_t, std::size_t(SegMode::kCount)> seg_mode{};  ///< per SegMode
  std::uint64_t sg_sum = 0;             ///< SG segments whose payload was summed after (X-9)
  /// Payload bytes copied into segments: every payload byte in Copy/CopySum mode, and in
  /// SgRef mode the payload bytes that sat in the input's linear head.
  std::uint64_t payload_bytes_copied = 0;
  std::uint64_t payload_bytes_referenced = 0;  ///< SgRef: page-fragment bytes referenced
  /// Header bytes written into segments (the doffset bytes every segment gets, X-7; for list
  /// segmentation the link/tunnel header bytes copied from the head, X-32). Never payload.
  std::uint64_t header_bytes_copied = 0;
  std::uint64_t packets_partial = 0;    ///< runs whose outputs are GSO_PARTIAL skbs (X-10)
  std::uint64_t packets_fraglist = 0;   ///< runs split at frag_list members (X-11, X-32)
  std::array<std::uint64_t, std::size_t(GsoReason::kCount)> errors{};  ///< per GsoReason
  std::uint64_t errors_total() const noexcept;
};

/// One output segment plus its SKB_GSO_CB checksum pair. The packet itself
/// lives in SegmentContext::out (the container the caller receives), so building a segment
/// never moves a Packet; `pkt` refers to it.
struct GsoSeg {
  Packet& pkt;
  csum::wsum cb_csum = 0;   ///< SKB_GSO_CB(skb)->csum
  pos_t cb_csum_start = 0;  ///< SKB_GSO_CB(skb)->csum_start (segment position)
};

/// The state skb_segment and its helpers work on: the super-packet, the features at the
/// current level, the output segments and the SKB_GSO_CB fields. offload::GsoContext
/// extends it with the offload chain's dispatch state.
struct SegmentContext {
  Packet* skb = nullptr;                ///< the super-packet; data() at the current header
  Features features{};                  ///< features at the current level (by value in the kernel)
  GsoCounters* counters = nullptr;      ///< may be null
  /// Output segments (empty until skb_segment ran); segs[i].pkt is out[i]. Add and remove
  /// segments only through reset_segs / add_seg / pop_seg, which keep the two in step.
  std::vector<GsoSeg> segs;
  std::vector<Packet> out;              ///< the segments' packets, in output order
  pos_t frame_start = 0;                ///< position of the outer frame's first byte
  std::uint16_t protocol = 0;           ///< skb->protocol at this level (for X-5 csum)
  /// Segment offset of the first payload byte (SKB_GSO_CB data_offset, same for every
  /// segment); set by segment_payload(). Used for the one-mss lengths of GSO-partial
  /// segments.
  int data_offset = 0;
  /// The outputs are GSO_PARTIAL skbs: segs[0].pkt.gso.type has PARTIAL.
  bool gso_partial = false;
  GsoReason reason = GsoReason::Ok;     ///< first failure
  /// Option (offload::GsoOptions::fast_path, as gro::EngineOptions::fast_path): skb_segment
  /// may take its fast loop (any construction mode, no frag_list: segments stamped from one
  /// header/metadata template, fragments referenced or payload copied/summed without
  /// re-checking), and the hooks their tight rewrite loops over such segments. The general loop produces the same bytes
  /// and metadata; false makes it the reference for the differential test
  /// (tests/unit/gso_fast_path_test.cpp).
  bool fast_path = true;
  /// Set by skb_segment's fast loop (fast_path, every construction mode): every segment
  /// holds the headers [0, data_offset) in its linear head at data(), was stamped from one
  /// metadata template (same checksum state: as the super-packet's, or NONE with the payload
  /// sum in cb_csum for the summing modes; gso info clear before segment_payload's
  /// GSO-partial step), and all but the last carry the same length (headers + gso_size).
  /// The hooks' tight rewrite loops run only then, and not for GSO-partial outputs (whose
  /// building may grow a head).
  bool seg_fast = false;
  /// Where skb_segment's fast SG loop may put the segments instead of `out` (null: packets
  /// always). Set only by the caller of a GSO run whose every hook on the way back up handles
  /// a slab (gso_segment_batch: Ethernet/VLAN, IPv4, IPv6 and TCP, no tunnel); segment_payload
  /// withholds it from GSO-partial and GSO_BY_FRAGS runs.
  SegmentBatch* batch = nullptr;
  /// Set by skb_segment when it built the segments into `batch` (slab form, seg_fast also
  /// set): `segs` and `out` are empty, and the hooks' rewrite loops work on the slab's
  /// headers and its one metadata template.
  bool batch_used = false;

  /// Record a failure; returns -22 (EINVAL) so hooks can `return ctx.fail(...)`.
  int fail(GsoReason r) noexcept {
    if (reason == GsoReason::Ok) reason = r;
    return -22;
  }
  /// Drop all segments and make room for `n` without reallocation (clears seg_fast).
  void reset_segs(std::size_t n) {
    seg_fast = false;
    batch_used = false;
    segs.clear();
    out.clear();
    segs.reserve(n);
    out.reserve(n);
  }
  /// Construct a segment's packet in place at the end of `out` (Packet constructor
  /// arguments) and return its GsoSeg. Growing past the reserved size re-points every
  /// GsoSeg, so references held across add_seg() calls are invalidated then.
  template <class... A>
  GsoSeg& add_seg(A&&... a) {
    if (out.size() == out.capacity()) grow_segs();
    out.emplace_back(static_cast<A&&>(a)...);
    return segs.emplace_back(GsoSeg{out.back(), 0, 0});
  }
  /// Remove the last segment.
  void pop_seg() noexcept {
    segs.pop_back();
    out.pop_back();
  }
  /// Offset of an original-packet position inside an output segment.
  int seg_off(pos_t pos) const noexcept { return int(pos - frame_start); }

 private:
  void grow_segs() {
    std::vector<Packet> o;
    o.reserve(out.capacity() ? out.capacity() * 2 : 4);
    for (auto& p : out) o.push_back(std::move(p));
    std::vector<GsoSeg> g;
    g.reserve(o.capacity());
    for (std::size_t i = 0; i < o.size(); ++i)
      g.push_back(GsoSeg{o[i], segs[i].cb_csum, segs[i].cb_csum_start});
    out.swap(o);
    segs.swap(g);
  }
};

// ---- the segment builders -------------------------------------------------------------------

/// skb_segment (X-5..X-13): split ctx.skb's payload (from data() to the end) into gso_size
/// pieces; every segment gets a copy of the headers [frame_start, data). Construction mode by
/// features: SG → fragment references; no SG + csum → plain copy (PARTIAL kept); neither →
/// fused copy-and-sum (NONE, CB.csum = payload sum). Fills ctx.segs. Returns 0 or -EINVAL
/// (reason TooManyFrags / NothingToSegment).
int skb_segment(SegmentContext& ctx);

/// What the L4 hooks call instead of skb_segment(): sets ctx.data_offset, then
///  * gso_size == GSO_BY_FRAGS → skb_segment_by_frags();
///  * sg && csum at this level and GSO_PARTIAL in ctx.features (X-10 GSO-partial branch):
///    partial_segs = min(payload, 65534) / gso_size; if > 1 the payload is split into chunks
///    of partial_segs × gso_size (skb_segment() run with the enlarged gso.size, restored
///    afterwards) and every output becomes a GSO skb: gso_size = the original, gso_segs =
///    partial_segs, type |= PARTIAL, DODGY cleared; a tail of at most one gso_size gets
///    gso_size 0, a longer tail gso_segs = ceil(tail payload / gso_size). ctx.gso_partial set;
///  * otherwise plain skb_segment().
/// Returns 0 or -EINVAL with ctx.reason set, as skb_segment().
int segment_payload(SegmentContext& ctx);

/// X-11 GSO_BY_FRAGS: one segment per payload run — the head's own payload (head + page
/// frags), then each frag_list member's [data, end) — each with the headers
/// [frame_start, data) copied. Construction as skb_segment (SG references page frags;
/// without SG or without csum the bytes are copied and summed into the GSO CB, X-8/X-9).
int skb_segment_by_frags(SegmentContext& ctx);

/// X-32 skb_segment_list (ctx.skb's data() at the head's payload, as for skb_segment):
/// the head (its own bytes, frag_list removed) and every frag_list
/// member become packets again. Members keep their own network and transport headers (the
/// bytes in front of their data(), as GRO left them; their network_header/transport_header
/// positions must be set); the bytes from the frame start up to the head's network header
/// (link header + any tunnel headers) are copied from the head in front of each. Member
/// metadata is the head's (__copy_skb_header), positions re-based; gso cleared. Lengths,
/// IDs and checksums are left to the L3/L4 hooks. Errors: HeaderTruncated (member without
/// its headers), BadGsoType (no frag_list).
int skb_segment_list(SegmentContext& ctx);

/// X-22 (TCP) / X-28 (UDP) fraglist NAT fix-up after skb_segment_list(): if the second
/// segment's addresses and ports equal the head's (at segment offsets `nhoff` / `thoff`),
/// nothing changes; otherwise every later segment gets the head's addresses and ports, its
/// L4 checksum field (at thoff + check_off) patched incrementally (RFC 1624; a PARTIAL
/// segment's seed only for the address words; UDP: a zero field is left alone and a patched
/// 0 becomes 0xFFFF) and its IPv4 header checksum recomputed. Uses each segment's own
/// network/transport positions. Returns 0 or -EINVAL (HeaderTruncated).
int segment_list_nat_fixup(SegmentContext& ctx, int nhoff, int thoff, std::uint16_t check_off,
                           bool udp);

/// __copy_skb_header as the GSO builders use it: header positions re-based by `base` (the
/// frame start becomes position 0), protocol/inner/vlan/encapsulation metadata, the checksum
/// state (a PARTIAL csum_start re-based too). gso info (and csum_valid, csum_complete_sw,
/// pending_csum) is not copied. Works on any PacketMeta, so a metadata template can be filled
/// once and stamped into many segments (skb_segment's fast path).
void copy_skb_header(const PacketMeta& src, PacketMeta& dst, pos_t base);

/// For GSO-partial outputs (ctx.gso_partial): the length counted from segment offset
/// `from` of a packet carrying one gso_size of payload (X-25 tot_len, X-27 payload_len,
/// X-31 uh->len). For any other segment: its actual length from `from`.
std::size_t one_mss_len(const SegmentContext& ctx, const GsoSeg& s, int from) noexcept;

/// X-15 gso_make_checksum: fold(sum(transport header .. CB.csum_start) + CB.csum), then
/// CB := (res, transport header). Returns the checksum field value (host order).
std::uint16_t gso_make_checksum(GsoSeg& s, csum::wsum res) noexcept;

/// The bytes gso_make_checksum sums for `s` (transport header .. CB.csum_start): their sum
/// (csum_partial, seed 0) and, in `len`, their count; 0 and len 0 when they are not there.
csum::wsum gso_checksum_region(GsoSeg& s, std::size_t& len) noexcept;

/// gso_make_checksum with those bytes' sum given (`region`, from gso_checksum_region of `s`
/// or of a segment whose bytes there sum alike mod 0xffff): the same result and CB update,
/// without reading the bytes. For segments that differ there only in fields whose sum they
/// keep (an IPv4 header's ID and its checksum).
std::uint16_t gso_make_checksum_summed(GsoSeg& s, csum::wsum res, csum::wsum region) noexcept;
/// X-14 gso_reset_checksum: CB := (res, csum_start) unless remcsum_offload.
void gso_reset_checksum(GsoSeg& s, csum::wsum res) noexcept;

/// Pseudo-header seed (C-12: folded, not complemented) for the L4 header at `l4_pos` whose IP
/// header is at `ip_pos` (version from its first nibble), for an L4 length of `len` bytes.
std::uint16_t pseudo_seed(const Packet& p, pos_t ip_pos, std::uint32_t len,
                          std::uint8_t proto) noexcept;

}  // namespace ofld::core

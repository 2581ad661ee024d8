// ofld/offload/gso_context.hpp — the state one software-GSO run hands down the offload chain
// (the kernel's skb + SKB_GSO_CB + the `features` argument of every .gso_segment callback).
//
// The GSO engine (ofld/gso/gso.hpp) fills a GsoContext and calls the first hook; each hook
// (the segment hook of src/offload/<proto>.cpp) pulls its header, narrows the features as its
// kernel twin does, hands the packet to the next protocol through the registry, and afterwards
// rewrites its own header in every output segment (ctx.segs).
//
// Position model: every output segment is a whole frame whose data() is the frame start; the
// header positions of a segment are the original packet's positions minus ctx.frame_start.
// Hooks therefore address a header in a segment at `pos - ctx.frame_start`.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ofld/core/features.hpp"
#include "ofld/core/packet.hpp"

namespace ofld::offload {

class Registry;

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
  NestedTunnel,       ///< more than one tunnel level (issue 11 item 4): the bytes between a
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
/// lives in GsoContext::out (the container the caller receives), so building a segment never
/// moves a Packet; `pkt` refers to it.
struct GsoSeg {
  core::Packet& pkt;
  csum::wsum cb_csum = 0;         ///< SKB_GSO_CB(skb)->csum
  core::pos_t cb_csum_start = 0;  ///< SKB_GSO_CB(skb)->csum_start (segment position)
};

/// Nested tunnels a run follows before giving up (the kernel's per-handler recursion).
inline constexpr int kMaxGsoRecursion = 8;

/// Options of one GSO run (gso::gso_segment).
struct GsoOptions {
  /// skb_segment's SG fast loop and, over its segments, the hooks' rewrite without per-segment
  /// checks (GsoContext::fast_path). On by default; never changes an output byte, metadata
  /// field or counter.
  bool fast_path = true;
};

/// State of one GSO run. Hooks read and modify it; see the file comment.
struct GsoContext {
  core::Packet* skb = nullptr;          ///< the super-packet; data() at the current header
  core::Features features{};            ///< features at the current level (by value in the kernel)
  const core::Device* dev = nullptr;    ///< dev->features / hw_enc_features (X-23, X-31, X-33)
  const Registry* reg = nullptr;        ///< dispatch table
  GsoCounters* counters = nullptr;      ///< may be null
  /// Output segments (empty until skb_segment ran); segs[i].pkt is out[i]. Add and remove
  /// segments only through reset_segs / add_seg / pop_seg, which keep the two in step.
  std::vector<GsoSeg> segs;
  std::vector<core::Packet> out;        ///< the segments' packets, in output order
  bool hw_segments = false;             ///< X-20: only header verification was done
  core::pos_t frame_start = 0;          ///< position of the outer frame's first byte
  std::uint16_t protocol = 0;           ///< skb->protocol at this level (for X-5 csum)
  int encap_level = 0;                  ///< SKB_GSO_CB encap_level (bytes of nested IP hdrs)
  bool tunnel_inner = false;            ///< inside a tunnel hook's inner call (TunnelSwitch):
                                        ///< a second tunnel hook here is a nested tunnel
  int depth = 0;                        ///< nested hook calls
  core::pos_t l3_pos = core::kNoHeader; ///< the IP header enclosing the current L4 header
  std::uint16_t l3_proto = 0;           ///< its ethertype (0x0800 / 0x86DD)
  /// Segment offset of the first payload byte (SKB_GSO_CB data_offset, same for every
  /// segment); set by gso::segment_payload(). Used for the one-mss lengths of GSO-partial
  /// segments.
  int data_offset = 0;
  /// The outputs are GSO_PARTIAL skbs: segs[0].pkt.gso.type has PARTIAL.
  bool gso_partial = false;
  GsoReason reason = GsoReason::Ok;     ///< first failure
  /// Option (GsoOptions::fast_path, as gro::EngineOptions::fast_path): skb_segment may take
  /// its SG fast loop ("SG + checksum offload, no frag_list": segments stamped from one
  /// header/metadata template, fragments referenced without re-checking). The general loop
  /// produces the same bytes and metadata; false makes it the reference for the differential
  /// test (tests/unit/gso_fast_path_test.cpp).
  bool fast_path = true;
  /// Set by skb_segment's fast loop (fast_path): every segment holds the headers
  /// [0, data_offset) in its linear head at data(), was stamped from one metadata
  /// template (same checksum state, gso info clear before segment_payload's GSO-partial step),
  /// needed no payload sum, and all but the last carry the same length (headers + gso_size).
  /// The hooks' tight rewrite loops run only then, and not for GSO-partial outputs (whose
  /// building may grow a head).
  bool seg_fast = false;

  /// Record a failure; returns -22 (EINVAL) so hooks can `return ctx.fail(...)`.
  int fail(GsoReason r) noexcept {
    if (reason == GsoReason::Ok) reason = r;
    return -22;
  }
  /// Drop all segments and make room for `n` without reallocation (clears seg_fast).
  void reset_segs(std::size_t n) {
    seg_fast = false;
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
  int seg_off(core::pos_t pos) const noexcept { return int(pos - frame_start); }

 private:
  void grow_segs() {
    std::vector<core::Packet> o;
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

}  // namespace ofld::offload

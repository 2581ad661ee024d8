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

#include <cstdint>

#include "ofld/core/features.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/core/skb_segment.hpp"

namespace ofld::offload {

class Registry;

// The reason, mode and counter types and the segment list are core's (skb_segment lives
// there, ofld/core/skb_segment.hpp); the offload chain uses them under the same names.
using core::GsoCounters;
using core::GsoReason;
using core::GsoSeg;
using core::SegMode;
using core::to_string;

/// Nested tunnels a run follows before giving up (the kernel's per-handler recursion).
inline constexpr int kMaxGsoRecursion = 8;

/// Options of one GSO run (gso::gso_segment).
struct GsoOptions {
  /// skb_segment's SG fast loop and, over its segments, the hooks' rewrite without per-segment
  /// checks (core::SegmentContext::fast_path). On by default; never changes an output byte,
  /// metadata field or counter.
  bool fast_path = true;
  /// The protocol table the chain dispatches through; null = builtin_registry(). Must
  /// outlive the run.
  const Registry* registry = nullptr;
};

/// State of one GSO run: skb_segment's state (core::SegmentContext: packet, features,
/// segments, SKB_GSO_CB) plus the chain's dispatch state. Hooks read and modify it; see the
/// file comment.
struct GsoContext : core::SegmentContext {
  const core::Device* dev = nullptr;    ///< dev->features / hw_enc_features (X-23, X-31, X-33)
  const Registry* reg = nullptr;        ///< dispatch table
  bool hw_segments = false;             ///< X-20: only header verification was done
  int encap_level = 0;                  ///< SKB_GSO_CB encap_level (bytes of nested IP hdrs)
  bool tunnel_inner = false;            ///< inside a tunnel hook's inner call (TunnelSwitch):
                                        ///< a second tunnel hook here is a nested tunnel
  int depth = 0;                        ///< nested hook calls
  core::pos_t l3_pos = core::kNoHeader; ///< the IP header enclosing the current L4 header
  std::uint16_t l3_proto = 0;           ///< its ethertype (0x0800 / 0x86DD)
};

}  // namespace ofld::offload

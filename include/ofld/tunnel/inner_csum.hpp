// ofld/tunnel/inner_csum.hpp — the one transmit decision on a segment's inner L4 checksum.
//
// A segment handed to the tunnel is CHECKSUM_PARTIAL (the inner GSO runs with SG|HW_CSUM:
// it neither copies nor sums, X-7/X-8) or already summed. What happens to a PARTIAL one is
// decided here, once, from the segment, the frame's peer(s) and the encapsulation:
//   Rco        — the field keeps its pseudo-header seed and the tunnel header carries RCO
//                (remcsumtx with an outer checksum, offsets encodable: W-26 VXLAN, W-27 GUE,
//                W-28/X-31 the seed on the wire);
//   Elided     — the field keeps its seed, no RCO: integrity mode toward peers that all have
//                it (docs/peer-protocol.md; spec I-5 carried over);
//   SumInTrain — summed while the segment is copied into the train (skb_copy_and_csum_dev,
//                one pass; X-8);
//   SumInEncap — finished before the tunnel header is built (skb_checksum_help, C-28/C-29):
//                a CRC32c (SCTP) checksum, a csum_start outside the packet, or RCO wanted but
//                not encodable;
//   Done       — not CHECKSUM_PARTIAL: nothing left to do.
#pragma once

#include <cstdint>
#include <string_view>

#include "ofld/core/packet.hpp"

namespace ofld::tunnel {

enum class InnerCsum : std::uint8_t { Done, Rco, Elided, SumInTrain, SumInEncap };
/// "done", "rco", "elided", "sum_in_train", "sum_in_encap".
std::string_view to_string(InnerCsum c) noexcept;

/// The facts the decision reads.
struct InnerCsumFacts {
  bool partial = false;        ///< the segment is CHECKSUM_PARTIAL
  bool inet = true;            ///< its checksum is an Internet checksum (not CRC32c, not_inet)
  bool start_known = true;     ///< csum_start lies inside the packet (csum_start_offset() ≥ 0)
  bool elide = false;          ///< integrity mode and every remote of the frame elides
  bool rco_tx = false;         ///< the encapsulation sends RCO (Encapsulation::rco_tx)
  bool rco_encodable = false;  ///< the encapsulation can encode this segment's start/offset
};

/// The decision (pure; table-tested over every combination in tunnel_inner_csum_test.cpp).
/// Inline: it runs once per transmitted segment.
inline InnerCsum inner_csum_plan(const InnerCsumFacts& f) noexcept {
  if (!f.partial) return InnerCsum::Done;
  // Only an Internet checksum can be left as a seed for the receiver (a CRC32c cannot).
  if (f.elide && f.inet) return InnerCsum::Elided;
  if (f.rco_tx) return f.inet && f.start_known && f.rco_encodable ? InnerCsum::Rco : InnerCsum::SumInEncap;
  return f.inet && f.start_known ? InnerCsum::SumInTrain : InnerCsum::SumInEncap;
}

}  // namespace ofld::tunnel

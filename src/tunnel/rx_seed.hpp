// Private to src/tunnel: receive-side checksum helpers shared by the encapsulations.
// take_seed: spec K-9 for every encapsulation, integrity mode included. An inner TCP/UDP
// field holding exactly its pseudo-header seed (seed_partial_ip) is the wire form of
// CHECKSUM_PARTIAL: taken as PARTIAL (written to the TAP/TUN as NEEDS_CSUM, never summed) when
// an outer checksum the kernel or ofld verified covers the bytes — VXLAN/GUE with an outer UDP
// checksum not known to be zero, GRE with its checksum present and verified (V-13). Without
// one nothing protects them: a seed there is as likely a corrupted field as a skipped
// completion (public bug E2), so it is not trusted — the packet stays as it was and is
// verified like any other, and the case is counted.
// remcsum_receive: RCO receive for VXLAN and GUE.
#pragma once

#include <optional>

#include "ofld/core/packet.hpp"
#include "ofld/tunnel/inner_ip.hpp"
#include "ofld/tunnel/types.hpp"

namespace ofld::tunnel::detail {

/// `s`: where the seed is (offsets from the start of `p`), or nullopt; `covered`: an outer
/// checksum protects the bytes. Counts rx_csum_partial_seed / rx_csum_seed_nocsum.
inline void take_seed(core::Packet& p, const std::optional<SeedAt>& s, bool covered, Counters& c) {
  if (!s) return;
  if (!covered) {
    ++c.rx_csum_seed_nocsum;
    return;
  }
  p.set_partial(int(s->l4), s->off);
  ++c.rx_csum_partial_seed;
}

/// The receive side of remote checksum offload for VXLAN and GUE (vxlan_remcsum /
/// gue_remcsum; spec C-33, W-25), on `p` = the inner packet: the field at `offset` (from the
/// start of `p`) is completed from `start` on (skb_remcsum_process). The outer UDP checksum,
/// which the kernel verified before the socket saw the datagram, covers the whole payload:
/// with `nopartial` the frame's sum is known (CHECKSUM_COMPLETE, counted rx_csum_validated),
/// otherwise the packet leaves as CHECKSUM_PARTIAL (counted rx_csum_skipped). Counts rx_rco.
/// false when the field or start does not fit (the caller drops RxRcoBadOffset).
inline bool remcsum_receive(core::Packet& p, std::size_t start, std::size_t offset, bool nopartial,
                            Counters& c) {
  if (nopartial) p.csum = core::CsumComplete{p.checksum(0, p.len())};
  if (core::remcsum_process(p, 0, start, offset, nopartial) != core::PacketError::Ok) return false;
  if (nopartial) ++c.rx_csum_validated;
  else ++c.rx_csum_skipped;
  ++c.rx_rco;
  return true;
}

}  // namespace ofld::tunnel::detail

// Private to src/tunnel: the receive side of spec K-9 for every encapsulation (issue 11 item 1,
// issue 15). An inner TCP/UDP field holding exactly its pseudo-header seed (seed_partial_ip)
// is the wire form of CHECKSUM_PARTIAL: taken as PARTIAL (written to the TAP/TUN as
// NEEDS_CSUM, never summed) when an outer checksum the kernel or ofld verified covers the
// bytes — VXLAN/GUE with an outer UDP checksum not known to be zero, GRE with its checksum
// present and verified (V-13). Without one nothing protects them: a seed there is as likely a
// corrupted field as a skipped completion (public bug E2), so it is not trusted — the packet
// stays as it was and is verified like any other, and the case is counted.
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

}  // namespace ofld::tunnel::detail

// ofld/tunnel/ecn.hpp — RFC 6040 ECN at a tunnel endpoint, shared by VXLAN, GUE and GRE /
// ip6gre: the decapsulation table (INET_ECN_decapsulate), the encapsulation rule
// (INET_ECN_encapsulate) and the rewrite of an inner IP header (IP_ECN_set_ce /
// IP_ECN_set_ect1 / IP6_ECN_set_ce / IP6_ECN_set_ect1, include/net/inet_ecn.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ofld/core/packet.hpp"

namespace ofld::tunnel {

/// RFC 6040 §4.2 decapsulation table, as the kernel's __INET_ECN_decapsulate: the ECN
/// field (low 2 bits) of the arriving outer and inner dsfield bytes.
enum class EcnDecap : std::uint8_t {
  Keep,   ///< inner ECN unchanged
  SetCe,  ///< inner becomes CE (outer CE, inner ECT)
  SetEct1,  ///< inner ECT(0) becomes ECT(1) (outer ECT(1)); other inner values unchanged
  Bogus,  ///< inner Not-ECT under ECT(0)/ECT(1) outer: forwarded unchanged, logged ("!!!")
  Drop,   ///< inner Not-ECT under CE outer: drop
};
EcnDecap ecn_decapsulate(std::uint8_t outer_dsfield, std::uint8_t inner_dsfield) noexcept;

/// INET_ECN_encapsulate: `outer` with its ECN bits replaced by the inner packet's — copied
/// when Not-ECT/ECT(0)/ECT(1), ECT(0) when the inner is CE (RFC 6040 §4.1 normal mode).
std::uint8_t ecn_encapsulate(std::uint8_t outer, std::uint8_t inner) noexcept;

/// Apply RFC 6040 §4.2 to the inner IP header at byte `l3_off` of `p`'s linear head (the
/// caller has checked that a whole IPv4 (`v6` false) or IPv6 header lies there), given the
/// arriving outer dsfield `outer` (IPv4 TOS / IPv6 traffic class). Rewrites the inner ECN
/// field (IPv4: header checksum updated incrementally, RFC 1624; IPv6: a CHECKSUM_COMPLETE
/// sum adjusted), counts a CE marking into `ecn_ce` and a Not-ECT inner under ECT outer into
/// `ecn_bogus`. Returns false when the packet must be dropped (outer CE over Not-ECT inner).
bool ecn_decap_ip(core::Packet& p, std::size_t l3_off, bool v6, std::uint8_t outer,
                  std::uint64_t& ecn_ce, std::uint64_t& ecn_bogus);

}  // namespace ofld::tunnel

// RFC 6040 ECN at a tunnel endpoint (see ecn.hpp; include/net/inet_ecn.h semantics).
#include "ofld/tunnel/ecn.hpp"

#include "ofld/core/csum.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::tunnel {

namespace {
/// Ones'-complement 16-bit add with end-around carry (the kernel's csum16_add).
std::uint16_t csum16_add(std::uint16_t a, std::uint16_t b) noexcept {
  std::uint32_t r = std::uint32_t(a) + b;
  return std::uint16_t(r + (r >> 16));
}
}  // namespace

EcnDecap ecn_decapsulate(std::uint8_t outer, std::uint8_t inner) noexcept {
  const unsigned o = outer & 3u, i = inner & 3u;
  if (i == 0) {  // Not-ECT inner
    if (o == 0) return EcnDecap::Keep;
    return o == 3 ? EcnDecap::Drop : EcnDecap::Bogus;
  }
  if (o == 3) return EcnDecap::SetCe;
  if (o == 1) return EcnDecap::SetEct1;
  return EcnDecap::Keep;
}

std::uint8_t ecn_encapsulate(std::uint8_t outer, std::uint8_t inner) noexcept {
  const unsigned i = inner & 3u;
  return std::uint8_t((outer & ~3u) | (i == 3u ? 2u : i));
}

bool ecn_decap_ip(core::Packet& p, std::size_t l3_off, bool v6, std::uint8_t outer,
                  std::uint64_t& ecn_ce, std::uint64_t& ecn_bogus) {
  if ((outer & 3u) == 0) return true;  // Not-ECT outer: Figure 4's first column keeps the inner
  auto h = p.head();
  if (h.size() < l3_off + (v6 ? 40u : 20u)) return true;  // caller's contract; never over-read
  const auto ipb = h.subspan(l3_off);
  const std::uint8_t inner = v6 ? wire::Ipv6Header<std::uint8_t>::parse(ipb).value().traffic_class()
                                : wire::Ipv4Header<std::uint8_t>::parse(ipb).value().tos();
  const EcnDecap d = ecn_decapsulate(outer, inner);
  if (d == EcnDecap::Drop) return false;
  if (d == EcnDecap::Bogus) ++ecn_bogus;
  const std::uint8_t ecn = inner & 3;
  std::uint8_t want = ecn;
  if (d == EcnDecap::SetCe && ecn != 0) want = 3;
  if (d == EcnDecap::SetEct1 && ecn == 2) want = 1;
  if (want == ecn) return true;
  if (want == 3) ++ecn_ce;
  if (!v6) {
    // IP_ECN_set_ce / IP_ECN_set_ect1: the header checksum follows the TOS change.
    const auto ip = wire::Ipv4Header<std::uint8_t>::parse(ipb).value();
    ip.set_check(csum16_add(ip.check(), want == 3 ? (ecn == 1 ? 0xFFFD : 0xFFFE) : 0x0001));
    ip.set_tos(std::uint8_t((inner & ~3u) | want));
  } else {
    // IP6_ECN_set_ce / IP6_ECN_set_ect1: no header checksum; a COMPLETE sum follows the
    // first 32-bit word.
    const auto ip = wire::Ipv6Header<std::uint8_t>::parse(ipb).value();
    const std::uint8_t before[4] = {ipb[0], ipb[1], ipb[2], ipb[3]};
    ip.set_traffic_class(std::uint8_t((inner & ~3u) | want));
    if (auto* cc = std::get_if<core::CsumComplete>(&p.csum)) {
      cc->csum = csum::csum_block_sub(cc->csum, csum::csum_partial(before, 4, 0), l3_off);
      cc->csum = csum::csum_block_add(cc->csum, csum::csum_partial(ipb.data(), 4, 0), l3_off);
    }
  }
  return true;
}

}  // namespace ofld::tunnel

// Header emitters (Repr → bytes) for IPv4, IPv6 + extension headers, TCP and UDP, and the
// pseudo-header checksum helpers. Tunnel emitters are in tunnel.cpp, virtio_net in
// virtio_net.cpp, Ethernet/VLAN inline in ethernet.hpp.
#include <cstring>

#include "ofld/core/csum.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"

namespace ofld::wire {

std::size_t Ipv4Repr::emit(std::span<std::uint8_t> out) const noexcept {
  const std::size_t n = length();
  if (options.size() % 4 != 0 || n > ipv4::kMaxLen || out.size() < n) return 0;
  std::uint8_t* p = out.data();
  p[ipv4::kVerIhlOffset] = std::uint8_t(0x40 | (n / 4));
  p[ipv4::kTosOffset] = tos;
  store_be16(p + ipv4::kTotLenOffset, total_len);
  store_be16(p + ipv4::kIdOffset, id);
  store_be16(p + ipv4::kFragOffOffset, frag_off);
  p[ipv4::kTtlOffset] = ttl;
  p[ipv4::kProtocolOffset] = protocol;
  store_be16(p + ipv4::kCheckOffset, 0);
  store_be32(p + ipv4::kSaddrOffset, saddr);
  store_be32(p + ipv4::kDaddrOffset, daddr);
  if (!options.empty()) std::memcpy(p + ipv4::kOptionsOffset, options.data(), options.size());
  store_be16(p + ipv4::kCheckOffset, check ? *check : csum::ip_compute_csum(p, n));
  return n;
}

std::size_t Ipv6Repr::emit(std::span<std::uint8_t> out) const noexcept {
  if (out.size() < ipv6::kHdrLen) return 0;
  std::uint8_t* p = out.data();
  store_be32(p + ipv6::kVerTcFlowOffset, (6u << 28) | (std::uint32_t(traffic_class) << 20) |
                                             (flow_label & ipv6::kFlowLabelMask));
  store_be16(p + ipv6::kPayloadLenOffset, payload_len);
  p[ipv6::kNextHeaderOffset] = next_header;
  p[ipv6::kHopLimitOffset] = hop_limit;
  std::memcpy(p + ipv6::kSaddrOffset, saddr.data(), ipv6::kAddrLen);
  std::memcpy(p + ipv6::kDaddrOffset, daddr.data(), ipv6::kAddrLen);
  return ipv6::kHdrLen;
}

std::size_t Ipv6ExtRepr::emit(std::span<std::uint8_t> out) const noexcept {
  const std::size_t n = length();
  if (n % ipv6::kExtUnit != 0 || n > 256 * ipv6::kExtUnit || out.size() < n) return 0;
  out[ipv6::kExtNextOffset] = next_header;
  out[ipv6::kExtLenOffset] = std::uint8_t(n / ipv6::kExtUnit - 1);
  if (!body.empty()) std::memcpy(out.data() + 2, body.data(), body.size());
  return n;
}

std::size_t Ipv6FragRepr::emit(std::span<std::uint8_t> out) const noexcept {
  if (out.size() < ipv6::kFragLen || (frag_offset & ~ipv6::kFragOffsetMask) != 0) return 0;
  std::uint8_t* p = out.data();
  p[ipv6::kExtNextOffset] = next_header;
  p[1] = 0;  // reserved
  store_be16(p + ipv6::kFragOffOffset, std::uint16_t(frag_offset | (more ? ipv6::kFragMore : 0)));
  store_be32(p + ipv6::kFragIdOffset, identification);
  return ipv6::kFragLen;
}

std::size_t TcpRepr::emit(std::span<std::uint8_t> out) const noexcept {
  const std::size_t n = length();
  if (options.size() % 4 != 0 || n > tcp::kMaxLen || out.size() < n) return 0;
  std::uint8_t* p = out.data();
  store_be16(p + tcp::kSourceOffset, source);
  store_be16(p + tcp::kDestOffset, dest);
  store_be32(p + tcp::kSeqOffset, seq);
  store_be32(p + tcp::kAckSeqOffset, ack_seq);
  p[tcp::kDoffOffset] = std::uint8_t(((n / 4) << 4) | (ae ? tcp::kAeBit : 0));
  p[tcp::kFlagsOffset] = flags;
  store_be16(p + tcp::kWindowOffset, window);
  store_be16(p + tcp::kCheckOffset, check);
  store_be16(p + tcp::kUrgPtrOffset, urg_ptr);
  if (!options.empty()) std::memcpy(p + tcp::kOptionsOffset, options.data(), options.size());
  return n;
}

std::size_t UdpRepr::emit(std::span<std::uint8_t> out) const noexcept {
  if (out.size() < udp::kHdrLen) return 0;
  std::uint8_t* p = out.data();
  store_be16(p + udp::kSourceOffset, source);
  store_be16(p + udp::kDestOffset, dest);
  store_be16(p + udp::kLenOffset, len);
  store_be16(p + udp::kCheckOffset, check);
  return udp::kHdrLen;
}

namespace {
std::array<std::uint8_t, 4> be_addr(std::uint32_t a) {
  std::array<std::uint8_t, 4> b{};
  store_be32(b.data(), a);
  return b;
}
}  // namespace

std::uint16_t l4_checksum_v4(std::uint32_t saddr, std::uint32_t daddr, std::uint8_t proto,
                             std::span<const std::uint8_t> segment) noexcept {
  const auto s = be_addr(saddr), d = be_addr(daddr);
  return csum::csum_tcpudp_magic(s.data(), d.data(), std::uint32_t(segment.size()), proto,
                                 csum::csum_partial(segment));
}

std::uint16_t l4_checksum_v6(const std::array<std::uint8_t, 16>& saddr,
                             const std::array<std::uint8_t, 16>& daddr, std::uint8_t proto,
                             std::span<const std::uint8_t> segment) noexcept {
  return csum::csum_ipv6_magic(saddr.data(), daddr.data(), std::uint32_t(segment.size()), proto,
                               csum::csum_partial(segment));
}

std::uint16_t l4_pseudo_seed_v4(std::uint32_t saddr, std::uint32_t daddr, std::uint8_t proto,
                                std::uint32_t l4_len) noexcept {
  const auto s = be_addr(saddr), d = be_addr(daddr);
  return csum::csum_fold16(csum::csum_tcpudp_nofold(s.data(), d.data(), l4_len, proto));
}

std::uint16_t l4_pseudo_seed_v6(const std::array<std::uint8_t, 16>& saddr,
                                const std::array<std::uint8_t, 16>& daddr, std::uint8_t proto,
                                std::uint32_t l4_len) noexcept {
  return csum::csum_fold16(csum::csum_ipv6_nofold(saddr.data(), daddr.data(), l4_len, proto));
}

}  // namespace ofld::wire

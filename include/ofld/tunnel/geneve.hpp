// ofld/tunnel/geneve.hpp — the Geneve endpoint without I/O (RFC 8926; the Linux geneve
// driver, drivers/net/geneve.c, in its classic, non-`external` mode): its configuration (the
// iproute2 `ip link add … type geneve` words plus the options it sends), the header it writes
// and the decapsulation of one UDP payload.
//
// As for VXLAN, the outer IP and UDP headers are the kernel's (a UDP socket): a datagram here
// is the UDP payload, the Geneve header (8 bytes + options) followed by the inner Ethernet
// frame (protocol type 0x6558, Transparent Ethernet Bridging).
// Rules: docs/geneve.md GN-1 (header), GN-7 (receive policy), GN-9..GN-12 (the endpoint),
// GN-13 (remotes, FDB, accepted sources).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/tunnel/common_config.hpp"
#include "ofld/tunnel/types.hpp"
#include "ofld/tunnel/vxlan.hpp"

namespace ofld::tunnel {

struct EncapKind;  // ofld/tunnel/encap_kind.hpp

/// One Geneve option (RFC 8926 §3.5): class, type (bit 7 = critical) and data, whose length
/// is a multiple of 4 bytes, at most 124 (the 5-bit Length field counts 4-byte words).
struct GeneveOption {
  std::uint16_t opt_class = 0;
  std::uint8_t type = 0;
  std::vector<std::uint8_t> data;
  bool critical() const noexcept { return type & 0x80; }
  bool operator==(const GeneveOption&) const = default;
};

/// Parse an option list as tc's `geneve_opts` spells it: `CLASS:TYPE:DATA[,CLASS:TYPE:DATA…]`,
/// all hexadecimal (CLASS up to 4 digits, TYPE up to 2, DATA an even number of digits making
/// a multiple of 4 bytes, at most 124 bytes; may be empty). The whole list must fit Opt Len:
/// 4-byte option headers plus data ≤ 252 bytes. Errors name the bad item.
std::optional<std::string> parse_geneve_options(std::string_view text, std::vector<GeneveOption>& out);
/// The list back in the same spelling (lower-case hex; "" for none).
std::string geneve_options_text(const std::vector<GeneveOption>& opts);

/// Geneve device configuration (IFLA_GENEVE_* equivalents); local, ttl, tos, mtu, udpcsum,
/// udp6zerocsumtx/rx in the bases (Linux has no remote checksum offload for Geneve, GN-6, so
/// the RCO settings stay off).
struct GeneveConfig : UdpTunnelSettings {
  std::uint32_t vni = 0;               ///< `id VNI`: 24-bit virtual network identifier
  /// `remote ADDR`, may repeat: the default destinations (flood list), as VXLAN's. The
  /// kernel's classic geneve device has exactly one; more (and the FDB, EVPN) are beyond it,
  /// as an OVS/OVN Geneve port (GN-13). ≥ 1 unless EVPN supplies them.
  std::vector<IpAddr> remotes;
  std::uint16_t dstport = 6081;        ///< `dstport N` (IANA 6081, RFC 8926 §3.3)
  std::uint16_t port_min = 0;          ///< source port range; 0/0 = 32768..60999 (as VXLAN)
  std::uint16_t port_max = 0;
  /// `options CLASS:TYPE:DATA,…`: sent in every datagram, in this order. The C bit is set
  /// when one of them is critical. On receive, a critical option is understood only when one
  /// of the same class and type is listed here (GN-10).
  std::vector<GeneveOption> options;
  std::uint32_t ageing_s = 300;        ///< FDB ageing of learned entries (seconds)
  /// `learning`: learn MAC → remote from received frames and take datagrams from any source
  /// (as VXLAN). Off by default: the kernel's classic geneve learns nothing and takes only its
  /// remote's datagrams (GN-13).
  bool learning = false;
  FdbLimits fdb_limits;                ///< `maxaddress` etc., as VxlanConfig::fdb_limits

  /// Bytes of options (4-byte headers + data): the header is 8 + this.
  std::size_t options_len() const noexcept;
  /// Bytes the encapsulation adds on the underlay: outer IP + UDP + Geneve header with its
  /// options + inner Ethernet (the kernel's GENEVE_IPV4_HLEN / GENEVE_IPV6_HLEN + options +
  /// ETH_HLEN).
  int overhead() const noexcept { return (ipv6() ? 40 : 20) + 8 + 8 + int(options_len()) + 14; }
  /// "geneve".
  std::string_view name() const noexcept { return "geneve"; }
  /// Its description for the configuration and reload (ofld/tunnel/encap_kind.hpp; defined in
  /// its src/tunnel/encap_*.cpp).
  static const EncapKind& kind();
  std::uint16_t src_min() const noexcept { return port_min || port_max ? port_min : 32768; }
  std::uint16_t src_max() const noexcept { return port_min || port_max ? port_max : 60999; }
};

/// Check a configuration; the error names the bad setting (id, local, remote, dstport,
/// srcport, options, udp6zerocsum*, mtu). need_remote false: no `remote` is required (EVPN
/// type-3 routes make the flood list).
std::optional<std::string> validate(const GeneveConfig& cfg, bool need_remote = true);

/// Write the Geneve header of cfg into `out` (RFC 8926 §3.4, GN-12): version 0, Opt Len, O clear,
/// C set when an option is critical, protocol type 0x6558, the VNI, reserved 0, then the
/// options. Returns its length (8 + options_len()), or 0 when `out` is shorter.
std::size_t geneve_build_header(const GeneveConfig& cfg, std::span<std::uint8_t> out) noexcept;

/// The receive of one UDP payload (geneve_udp_encap_recv + geneve_rx, GN-7, GN-9..GN-11), in
/// this order: IPv6 zero outer checksum without udp6zerocsumrx (RxUdp6ZeroCsum, RFC 6935);
/// fewer than 8 bytes or than 8 + Opt Len × 4 (RxTruncated); version ≠ 0 (RxBadHeader);
/// protocol type ≠ 0x6558 (RxBadProtocol); VNI ≠ cfg.vni (RxWrongVni); an option running past
/// Opt Len (RxBadHeader); O bit (RxOam: RFC 8926 §3.4, the payload of a control packet is not
/// forwarded); a critical option not listed in cfg.options, or the C bit with no critical
/// option (RxCriticalOption: RFC 8926 §3.5.1; the kernel drops every C-bit packet, knowing no
/// option); then the inner Ethernet frame as VXLAN's (decap_ethernet: RxTruncated without an
/// Ethernet header, the inner IP lengths, the K-9 seed, RFC 6040 with `outer_tos`).
/// `owner`: zero-copy receive buffer holding `payload` (as decap).
DecapResult geneve_decap(std::span<const std::uint8_t> payload, const GeneveConfig& cfg,
                         OuterCsum outer, Counters& c, const core::BufferRef* owner = nullptr,
                         int outer_tos = -1);

}  // namespace ofld::tunnel

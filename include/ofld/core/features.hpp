// ofld/core/features.hpp — device offload features (NETIF_F_*), their ethtool names, the
// configuration-time fix-ups (spec §3.1, F-1..F-9), the per-packet feature resolution and the
// transmit fallback decision (§3.2/§3.3, F-10..F-20), and the TUN offload knob (§3.4, F-22).
//
// Bit numbers are those of the 6.12 `enum netdev_features` (include/linux/netdev_features.h);
// names are the ethtool strings of net/ethtool/common.c:netdev_features_strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofld/core/packet.hpp"

namespace ofld::core {

/// A set of NETIF_F_* bits (netdev_features_t).
struct Features {
  std::uint64_t bits = 0;

  constexpr Features() noexcept = default;
  constexpr explicit Features(std::uint64_t b) noexcept : bits(b) {}
  static constexpr Features bit(unsigned n) noexcept { return Features{1ull << n}; }

  constexpr bool has(Features f) const noexcept { return (bits & f.bits) == f.bits; }  ///< all
  constexpr bool any(Features f) const noexcept { return (bits & f.bits) != 0; }       ///< any
  constexpr bool empty() const noexcept { return bits == 0; }
  constexpr Features operator|(Features o) const noexcept { return Features{bits | o.bits}; }
  constexpr Features operator&(Features o) const noexcept { return Features{bits & o.bits}; }
  constexpr Features operator~() const noexcept { return Features{~bits}; }
  constexpr Features& operator|=(Features o) noexcept { bits |= o.bits; return *this; }
  constexpr Features& operator&=(Features o) noexcept { bits &= o.bits; return *this; }
  /// Remove the bits of o.
  constexpr Features without(Features o) const noexcept { return Features{bits & ~o.bits}; }
  friend constexpr bool operator==(Features, Features) = default;
};

/// NETIF_F_* as Features constants; bit numbers from the 6.12 enum.
namespace netif_f {
inline constexpr unsigned GSO_SHIFT = 16;  ///< NETIF_F_GSO_SHIFT
inline constexpr Features SG = Features::bit(0);
inline constexpr Features IP_CSUM = Features::bit(1);
inline constexpr Features HW_CSUM = Features::bit(3);
inline constexpr Features IPV6_CSUM = Features::bit(4);
inline constexpr Features HIGHDMA = Features::bit(5);
inline constexpr Features FRAGLIST = Features::bit(6);
inline constexpr Features HW_VLAN_CTAG_TX = Features::bit(7);
inline constexpr Features HW_VLAN_CTAG_RX = Features::bit(8);
inline constexpr Features HW_VLAN_CTAG_FILTER = Features::bit(9);
inline constexpr Features VLAN_CHALLENGED = Features::bit(10);
inline constexpr Features GSO = Features::bit(11);
inline constexpr Features GRO = Features::bit(14);
inline constexpr Features LRO = Features::bit(15);
inline constexpr Features TSO = Features::bit(16);
inline constexpr Features GSO_ROBUST = Features::bit(17);
inline constexpr Features TSO_ECN = Features::bit(18);
inline constexpr Features TSO_MANGLEID = Features::bit(19);
inline constexpr Features TSO6 = Features::bit(20);
inline constexpr Features FSO = Features::bit(21);
inline constexpr Features GSO_GRE = Features::bit(22);
inline constexpr Features GSO_GRE_CSUM = Features::bit(23);
inline constexpr Features GSO_IPXIP4 = Features::bit(24);
inline constexpr Features GSO_IPXIP6 = Features::bit(25);
inline constexpr Features GSO_UDP_TUNNEL = Features::bit(26);
inline constexpr Features GSO_UDP_TUNNEL_CSUM = Features::bit(27);
inline constexpr Features GSO_PARTIAL = Features::bit(28);
inline constexpr Features GSO_TUNNEL_REMCSUM = Features::bit(29);
inline constexpr Features GSO_SCTP = Features::bit(30);
inline constexpr Features GSO_ESP = Features::bit(31);
inline constexpr Features GSO_UDP = Features::bit(32);
inline constexpr Features GSO_UDP_L4 = Features::bit(33);
inline constexpr Features GSO_FRAGLIST = Features::bit(34);
inline constexpr Features FCOE_CRC = Features::bit(35);
inline constexpr Features SCTP_CRC = Features::bit(36);
inline constexpr Features NTUPLE = Features::bit(38);
inline constexpr Features RXHASH = Features::bit(39);
inline constexpr Features RXCSUM = Features::bit(40);
inline constexpr Features NOCACHE_COPY = Features::bit(41);
inline constexpr Features LOOPBACK = Features::bit(42);
inline constexpr Features RXFCS = Features::bit(43);
inline constexpr Features RXALL = Features::bit(44);
inline constexpr Features HW_VLAN_STAG_TX = Features::bit(45);
inline constexpr Features HW_VLAN_STAG_RX = Features::bit(46);
inline constexpr Features HW_VLAN_STAG_FILTER = Features::bit(47);
inline constexpr Features HW_L2FW_DOFFLOAD = Features::bit(48);
inline constexpr Features HW_TC = Features::bit(49);
inline constexpr Features HW_ESP = Features::bit(50);
inline constexpr Features HW_ESP_TX_CSUM = Features::bit(51);
inline constexpr Features RX_UDP_TUNNEL_PORT = Features::bit(52);
inline constexpr Features HW_TLS_TX = Features::bit(53);
inline constexpr Features HW_TLS_RX = Features::bit(54);
inline constexpr Features GRO_HW = Features::bit(55);
inline constexpr Features HW_TLS_RECORD = Features::bit(56);
inline constexpr Features GRO_FRAGLIST = Features::bit(57);
inline constexpr Features HW_MACSEC = Features::bit(58);
inline constexpr Features GRO_UDP_FWD = Features::bit(59);
inline constexpr Features HW_HSR_TAG_INS = Features::bit(60);
inline constexpr Features HW_HSR_TAG_RM = Features::bit(61);
inline constexpr Features HW_HSR_FWD = Features::bit(62);
inline constexpr Features HW_HSR_DUP = Features::bit(63);

// groupings (netdev_features.h, spec §1.2)
inline constexpr Features CSUM_MASK = IP_CSUM | IPV6_CSUM | HW_CSUM;
inline constexpr Features ALL_TSO = TSO | TSO6 | TSO_ECN | TSO_MANGLEID;
inline constexpr Features GSO_MASK = Features{((1ull << 19) - 1) << GSO_SHIFT};  ///< bits 16..34
inline constexpr Features GSO_SOFTWARE = ALL_TSO | GSO_SCTP | GSO_UDP_L4 | GSO_FRAGLIST;
inline constexpr Features GSO_ENCAP_ALL = GSO_GRE | GSO_GRE_CSUM | GSO_IPXIP4 | GSO_IPXIP6 |
                                          GSO_UDP_TUNNEL | GSO_UDP_TUNNEL_CSUM;
inline constexpr Features SOFT_FEATURES = GSO | GRO;
inline constexpr Features SOFT_FEATURES_OFF = GRO_FRAGLIST | GRO_UDP_FWD;
inline constexpr Features VLAN_FEATURES = HW_VLAN_CTAG_TX | HW_VLAN_STAG_TX;  ///< tx tag insert
}  // namespace netif_f

/// Features a gso_type needs (net_gso_ok): bit k → feature bit 16+k for k <= 18; the [newer]
/// TCP_FIXEDID_OUTER/INNER bits → TSO_MANGLEID. TCP_ACCECN has no twin in 6.12 → returns
/// nullopt (no device can offload it; software GSO). Data-driven (table in features.cpp).
std::optional<Features> gso_type_features(std::uint32_t gso_type) noexcept;

// ---- names (ethtool) ---------------------------------------------------------------------------

/// ethtool string of one feature bit (e.g. "tx-scatter-gather"); "" if unnamed (GSO_UDP, holes).
std::string_view feature_name(unsigned bit) noexcept;
/// Bit number for an ethtool string; nullopt if unknown.
std::optional<unsigned> feature_bit(std::string_view name) noexcept;

/// Result of parse_features.
struct FeatureParse {
  Features features{};
  std::string error;  ///< empty on success; otherwise names the offending token
  bool ok() const noexcept { return error.empty(); }
};
/// Parse a comma/space separated list of ethtool feature names or ethtool -k group names
/// ("tx-checksumming", "scatter-gather", "tcp-segmentation-offload", "rx-checksumming",
/// "generic-segmentation-offload", "generic-receive-offload", "large-receive-offload",
/// "rx-vlan-offload", "tx-vlan-offload", "ntuple-filters", "receive-hashing"), or "none".
/// Groups expand to their member bits. Unknown name → error "unknown feature 'x'".
FeatureParse parse_features(std::string_view list);
/// `ethtool -k` style listing: one "name: on|off" line per named bit, in enum order.
std::string format_features(Features f);

// ---- the device -------------------------------------------------------------------------------

/// Size limits (spec §1.3).
inline constexpr std::uint32_t kGsoLegacyMaxSize = 65536;
inline constexpr std::uint32_t kGsoMaxSize = 8 * 65535;
inline constexpr std::uint16_t kGsoMaxSegs = 65535;

/// The feature-relevant part of a net_device. Defaults are the netdev alloc defaults.
struct Device {
  Features features{};              ///< dev->features (active)
  Features hw_features{};           ///< user-changeable set
  Features wanted_features{};       ///< requested by the user
  Features hw_enc_features{};       ///< features valid for encapsulated packets (F-12)
  Features vlan_features{};         ///< features for VLAN-tagged packets (F-13)
  Features mpls_features{};         ///< features for MPLS packets (F-15)
  Features gso_partial_features{};  ///< features only usable with GSO_PARTIAL (F-6, F-11)
  Features mangleid_features{netif_f::TSO_MANGLEID};  ///< removed when DF is clear (F-11)
  /// The four BIG TCP size limits (bytes; `ip link set ... gso_max_size` etc., netlink
  /// IFLA_GSO_MAX_SIZE / IFLA_GSO_IPV4_MAX_SIZE / IFLA_GRO_MAX_SIZE / IFLA_GRO_IPV4_MAX_SIZE;
  /// 65536 by default, at most kGsoMaxSize). GSO: a packet of skb->len >= the limit for its
  /// family loses the GSO features (F-10, software segmentation). GRO: an aggregate stays
  /// below the receiving device's limit (G-16; offload::GroConfig carries it for the engine).
  std::uint32_t gso_max_size = kGsoLegacyMaxSize;       ///< IPv6 / non-IPv4 GSO limit
  std::uint32_t gso_ipv4_max_size = kGsoLegacyMaxSize;  ///< IPv4 GSO limit
  std::uint32_t gro_max_size = kGsoLegacyMaxSize;       ///< IPv6 / non-IPv4 GRO limit
  std::uint32_t gro_ipv4_max_size = kGsoLegacyMaxSize;  ///< IPv4 GRO limit
  std::uint16_t gso_max_segs = kGsoMaxSegs;
  bool highdma_ok = true;  ///< false → device cannot DMA high memory (F-15 drops SG)

  /// A device with `f` as its active features and the same for encapsulated packets
  /// (hw_enc_features); every other field at its default.
  static Device with_features(Features f) noexcept {
    Device d;
    d.features = f;
    d.hw_enc_features = f;
    return d;
  }
};

/// F-1..F-8 netdev_fix_features: return `wanted` with the dependency rules applied for `dev`
/// (uses dev.gso_partial_features for F-6).
Features fix_features(Features wanted, const Device& dev) noexcept;
/// F-9 register-time adjustments (register_netdevice): returns dev with hw_features,
/// features, hw_enc_features, vlan_features adjusted (GSO/GRO forced on, TSO →
/// TSO_MANGLEID user-changeable, hw_enc gains SG|GSO_PARTIAL, vlan gains HIGHDMA), then
/// features = fix_features(features).
Device register_device(Device dev) noexcept;

// ---- per-packet resolution ---------------------------------------------------------------------

/// F-16 can_checksum_protocol(features, ethertype).
bool can_checksum_protocol(Features f, std::uint16_t ethertype) noexcept;
/// F-18 skb_gso_ok: every gso_type bit has its feature, and FRAGLIST present if a frag_list exists.
bool gso_ok(const Packet& p, Features f) noexcept;
/// F-17 netif_needs_gso.
bool needs_gso(const Packet& p, Features f) noexcept;
/// True if the packet has IPv6 extension headers in the sense the kernel checks (F-11):
/// protocol IPv6 (inner when encapsulated) and transport − network ≠ 40. `jumbo_hbh` is not
/// detected from bytes here; callers with a BIG-TCP jumbo packet pass it to the resolvers.
bool has_ipv6_ext_headers(const Packet& p) noexcept;
/// F-10..F-15 netif_skb_features(skb, dev). `jumbo_hbh` = BIG-TCP HBH jumbo packet (F-11
/// exemption). Needs protocol, network/transport (inner) positions, csum state, gso, vlan.
Features netif_skb_features(const Packet& p, const Device& dev, bool jumbo_hbh = false) noexcept;

/// Outcome of validate_xmit_skb (F-17..F-20) as flags.
struct TxAction {
  bool software_gso = false;    ///< segment in software with `gso_features`
  bool linearize = false;       ///< skb_needs_linearize (no GSO)
  bool checksum_help = false;   ///< finish the Internet checksum in software (skb_checksum_help)
  bool crc32c_help = false;     ///< finish an SCTP CRC32c in software
  Features gso_features{};      ///< features to segment with (= resolved features)
  Features features{};          ///< netif_skb_features result
  /// Nothing to do in software: hand the packet to the device as is.
  bool hand_over() const noexcept {
    return !software_gso && !linearize && !checksum_help && !crc32c_help;
  }
};
/// F-17..F-20 decision for one packet on `dev`. Pure: does not modify the packet.
TxAction resolve_tx(const Packet& p, const Device& dev, bool jumbo_hbh = false) noexcept;
/// F-20 skb_csum_hwoffload_help decision only: true if the device (features f) can finish
/// this PARTIAL packet; false → software checksum. Non-PARTIAL → true.
bool csum_hw_offload_ok(const Packet& p, Features f, bool jumbo_hbh = false) noexcept;

// ---- TUN -----------------------------------------------------------------------------------------

/// TUNSETOFFLOAD argument bits (include/uapi/linux/if_tun.h).
namespace tun_f {
inline constexpr unsigned CSUM = 0x01, TSO4 = 0x02, TSO6 = 0x04, TSO_ECN = 0x08, UFO = 0x10,
                          USO4 = 0x20, USO6 = 0x40;
}
/// The set TUN lets userspace control (tun.c TUN_USER_FEATURES).
inline constexpr Features kTunUserFeatures = netif_f::HW_CSUM | netif_f::TSO_ECN | netif_f::TSO |
                                             netif_f::TSO6 | netif_f::GSO_UDP_L4;
/// F-22 tun set_offload: map arg → features (not yet passed through fix_features); nullopt =
/// -EINVAL (a bit left over, e.g. TSO4 without CSUM).
std::optional<Features> tun_offload_features(unsigned long arg) noexcept;

}  // namespace ofld::core

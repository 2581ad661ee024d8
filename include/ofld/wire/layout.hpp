// ofld/wire/layout.hpp — one-pass frame parser: which headers a frame carries and where.
//
// parse_frame() walks a frame from the link header down through VLAN tags, IP (with options
// and IPv6 extension headers), L4 and recognised tunnels (repeatedly, up to kMaxTunnelDepth),
// and records every header in order, plus the kernel-style summary offsets that the offload
// code needs (skb->mac_header, network_header, transport_header, inner_*; skb->protocol,
// inner_protocol, encapsulation).
//
// Contract:
//  * Truncated or inconsistent input → a ParseError naming the layer and the problem.
//  * A payload the parser does not know (unknown ethertype, IP protocol, UDP port, GRE
//    protocol...) is NOT an error: parsing stops there and Layout::stop says where and why.
//  * Nothing is read outside the given span. The Layout holds offsets, not pointers, and
//    stays valid for any buffer holding the same bytes.
//  * Checksums are not verified here (that is ofld::offload / `ofld csum verify`).
//
// Tunnel recognition (ParseOptions): UDP destination ports 4789 and 8472 → VXLAN,
// 6081 → Geneve, 4754 → GRE-in-UDP (RFC 8086); GUE/FOU only on the ports configured in
// ParseOptions (Linux has no default FOU/GUE port; the kernel docs use 5555/6080 as
// examples, so we pick none by default — set gue_port / fou_port explicitly).
// IP protocol 47 → GRE (GRE 0x88BE → ERSPAN II / Type I, 0x22EB → ERSPAN III, 0x6558 →
// inner Ethernet, 0x0800/0x86DD → inner IP), 4 → IPIP, 41 → SIT / IPv6-in-IP.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ofld/wire/error.hpp"
#include "ofld/wire/numbers.hpp"

namespace ofld::wire {

// ---- named limits ---------------------------------------------------------------------------

inline constexpr std::size_t kMaxHeaders = 64;        ///< headers recorded per frame
inline constexpr std::size_t kMaxVlanTags = 8;        ///< stacked 802.1Q/802.1ad tags per L2
inline constexpr std::size_t kMaxIpv6ExtHeaders = 8;  ///< extension headers per IPv6 header
inline constexpr std::size_t kMaxTunnelDepth = 8;     ///< nested encapsulations (vxlan-triple=3)
inline constexpr std::uint32_t kNoOffset = 0xffffffffu;  ///< "unset" offset (kernel ~0U)

// Well-known numbers (ethertype::, ipproto::, udpport::) live in ofld/wire/numbers.hpp.

// ---- inputs ---------------------------------------------------------------------------------

/// Link-layer framing of the buffer. io/pcap maps DLT_* values onto this.
enum class LinkType : std::uint8_t {
  Ethernet,   ///< DLT_EN10MB
  RawIp,      ///< DLT_RAW / LINKTYPE_IPV4 / LINKTYPE_IPV6: version from the first nibble
  LinuxSll,   ///< DLT_LINUX_SLL (16-byte cooked header, protocol at offset 14)
  LinuxSll2,  ///< DLT_LINUX_SLL2 (20-byte cooked header, protocol at offset 0)
};
std::string_view to_string(LinkType t) noexcept;

/// Parser knobs. Defaults recognise the IANA/Linux ports listed above and nothing else.
struct ParseOptions {
  std::uint16_t vxlan_port = udpport::kVxlan;         ///< 0 disables
  std::uint16_t vxlan_legacy_port = udpport::kVxlanLinux;  ///< 0 disables
  std::uint16_t geneve_port = udpport::kGeneve;       ///< 0 disables
  std::uint16_t gre_in_udp_port = udpport::kGreInUdp; ///< 0 disables
  std::uint16_t gue_port = 0;  ///< GUE (variant 0, or version 1 = direct IP, V-7); 0 = none
  std::uint16_t fou_port = 0;  ///< FOU: UDP payload is IP protocol fou_proto directly; 0 = none
  std::uint8_t fou_proto = ipproto::kIpip;  ///< FOU's configured inner protocol (4, 41, 47)
  /// V-4: accept the VXLAN RCO flag (REMCSUM_RX). When false an RCO-flagged header still
  /// parses, but Vxlan::rco() is not decoded into the Layout (rco_start stays kNoOffset).
  bool vxlan_remcsum_rx = false;
  /// Linux VXLAN strictness (V-4): unknown flags or non-zero reserved bits → error. Off by
  /// default (RFC 7348 says receivers ignore reserved bits).
  bool vxlan_strict = false;
  /// Captures cut by snaplen: an IP/UDP length field larger than the bytes present is
  /// accepted (datagram end clamped, LayerFlag::Clipped) instead of Errc::LengthPastEnd.
  bool allow_clipped = false;
  /// Original length of the frame when the buffer is a snaplen-cut capture (pcap `len`);
  /// 0 = the buffer size. Only the IPv6 BIG TCP rule (payload length 0 over 65535 bytes)
  /// reads it, for the outermost datagram, as tcpdump does.
  std::uint32_t wire_len = 0;
  /// Capture tools (as tshark's UDP dissector): a UDP tunnel is also recognised on its
  /// source port, the lower of the two ports tried first. The kernel (engines, tunnel
  /// decapsulation) matches the receiving socket's port, the destination: false.
  bool tunnel_src_port = false;
  /// Follow tunnels at all (false: stop at the outer L4 with StopReason::TunnelsDisabled).
  bool follow_tunnels = true;
};

// ---- outputs --------------------------------------------------------------------------------

/// Tunnel kind of an encapsulation (kernel SKB_GSO_* families; ofld::tunnel uses this).
enum class TunnelKind : std::uint8_t {
  None,
  Vxlan,     ///< UDP + VXLAN (either port)
  Gue,       ///< UDP + GUE variant 0
  Fou,       ///< UDP + direct IP on the configured FOU port (GUE version 1 is reported as Gue)
  Gre,       ///< IP proto 47 (incl. TEB; ERSPAN is reported as Erspan)
  GreInUdp,  ///< UDP 4754 + GRE (RFC 8086)
  Geneve,    ///< UDP + Geneve
  Erspan,    ///< GRE + ERSPAN I/II/III
  Ipip,      ///< IPv4 payload directly in IP (proto 4): kernel IPIP / IPXIP4
  Sit,       ///< IPv6 payload directly in IP (proto 41): SIT / IPXIP6
};
std::string_view to_string(TunnelKind k) noexcept;

/// Per-header flags (bit mask in HeaderRef::flags).
namespace layer_flag {
/// IP total/payload length 0 on a TSO/BIG-TCP capture: datagram end taken from the frame.
/// Presumed only where tcpdump presumes it (print-ip.c, print-ip6.c): IPv4 total length 0
/// with protocol TCP or UDP (otherwise Errc::BadTotalLen); IPv6 payload length 0 with next
/// header TCP or UDP directly after the fixed header and more than 65535 bytes (otherwise
/// Errc::ZeroLength, unless a Jumbo Payload option gives the length: kJumbo).
inline constexpr std::uint16_t kLenFromFrame = 1u << 0;
/// IPv6 jumbogram (HBH jumbo option, RFC 2675): length taken from the option.
inline constexpr std::uint16_t kJumbo = 1u << 1;
/// IP: this datagram is the first fragment (MF set, offset 0): its L4 header is incomplete.
inline constexpr std::uint16_t kFirstFragment = 1u << 2;
/// IP: a non-first fragment (offset > 0): no L4 header follows.
inline constexpr std::uint16_t kLaterFragment = 1u << 3;
/// IPv6 atomic fragment (fragment header with offset 0 and M=0, RFC 6946): whole datagram.
inline constexpr std::uint16_t kAtomicFragment = 1u << 4;
/// Length field exceeds the bytes present and was clamped: ParseOptions::allow_clipped was
/// set (snaplen-cut capture), or the header sits inside a first IP fragment.
inline constexpr std::uint16_t kClipped = 1u << 5;
/// IPv6: a routing header with segments left > 0 supplies the pseudo-header destination.
inline constexpr std::uint16_t kRoutedDst = 1u << 6;
/// GRE: routing (R) bit set — refused; parsing stops at this header (V-12).
inline constexpr std::uint16_t kGreRouting = 1u << 7;
/// VXLAN: the RCO flag (V-1) is set.
inline constexpr std::uint16_t kRco = 1u << 8;
/// Frame carries bytes after the outermost IP datagram end (Ethernet padding, trailer).
inline constexpr std::uint16_t kTrailer = 1u << 9;
}  // namespace layer_flag

/// One recorded header.
struct HeaderRef {
  HeaderKind kind{};
  std::uint8_t level = 0;      ///< encapsulation level: 0 = outermost, +1 per tunnel
  std::uint16_t flags = 0;     ///< layer_flag bits
  std::uint32_t offset = 0;    ///< first byte of this header (from buffer start)
  std::uint32_t length = 0;    ///< header length in bytes (options/extensions included)
  /// IP headers: end of the IP datagram (offset + total length / 40 + payload length),
  /// i.e. where Ethernet padding starts (public bug A8). UDP: offset + UDP length.
  /// Other headers: end of the enclosing datagram (or frame).
  std::uint32_t end = 0;
  /// IPv4/IPv6: upper-layer protocol after all options/extension headers (the pseudo-header
  /// "next header"); TCP/UDP/ICMP: the index of the enclosing IP header in Layout::headers().
  std::uint8_t aux = 0;
  /// IPv6: offset of the 16-byte destination address to use in the L4 pseudo-header
  /// (fixed-header daddr, or the last address of a routing header with segments left > 0 —
  /// RFC 8200 §8.1). IPv4: offset of daddr. kNoOffset otherwise.
  std::uint32_t pseudo_daddr = kNoOffset;

  constexpr std::uint32_t header_end() const noexcept { return offset + length; }
};

/// Why parsing stopped (when it did not fail).
enum class StopReason : std::uint8_t {
  EndOfHeaders,      ///< reached an L4 header / payload we know (normal case)
  UnknownEthertype,  ///< stop_value = ethertype
  UnknownIpProto,    ///< stop_value = IP protocol / next header (e.g. ESP, OSPF)
  NoNextHeader,      ///< IPv6 next header 59
  LaterFragment,     ///< non-first IP fragment: no L4 header
  UnknownGreProto,   ///< stop_value = GRE protocol type
  GreRouting,        ///< GRE R bit (RFC 1701 routing) — refused
  GreVersion,        ///< GRE version != 0 (e.g. PPTP v1): stop_value = version
  GueControl,        ///< GUE C bit (control message)
  TunnelDepth,       ///< kMaxTunnelDepth reached; stop_value = depth
  HeaderLimit,       ///< kMaxHeaders reached
  TunnelsDisabled,   ///< ParseOptions::follow_tunnels == false and a tunnel was seen
  NonIpLink,         ///< SLL/SLL2 protocol < 0x0600 (not an ethertype): stop_value = it
  UnknownFrameType,  ///< ERSPAN III frame type other than Ethernet: stop_value = ft
  /// A first IP fragment ends inside a header (RFC 791 allows a fragment to end on any
  /// 8-octet boundary): the header continues in the next fragment; stop_value = its
  /// HeaderKind. The fragment still enters reassembly (IPv6: RFC 7112, see csum_check.hpp).
  HeaderInNextFragment,
};
std::string_view to_string(StopReason r) noexcept;

/// Fragment status of the innermost IP layer; First also inside an outer first fragment.
enum class FragStatus : std::uint8_t { None, First, Later, Atomic };

/// Result of parse_frame(): the header list plus kernel-style summary offsets.
struct Layout {
  LinkType link = LinkType::Ethernet;
  std::uint32_t frame_len = 0;  ///< bytes in the buffer

  // -- kernel-style summary (all offsets from buffer start; kNoOffset when absent) --------
  std::uint32_t mac_header = kNoOffset;        ///< outer L2 (Ethernet/SLL) header
  std::uint32_t network_header = kNoOffset;    ///< outermost IP header
  std::uint32_t transport_header = kNoOffset;  ///< L4 header belonging to the outermost IP
  std::uint32_t inner_mac_header = kNoOffset;  ///< first tunnel's inner Ethernet (if any)
  std::uint32_t inner_network_header = kNoOffset;    ///< first tunnel's inner IP
  std::uint32_t inner_transport_header = kNoOffset;  ///< first tunnel's inner L4
  std::uint16_t protocol = 0;        ///< outer L3 ethertype (skb->protocol), host order
  std::uint16_t inner_protocol = 0;  ///< ethertype of the first tunnel's payload (TEB for
                                     ///< inner Ethernet, like skb->inner_protocol)
  TunnelKind tunnel = TunnelKind::None;  ///< kind of the first (outermost) tunnel
  bool encapsulation = false;            ///< a tunnel was recognised (skb->encapsulation)
  std::uint8_t tunnel_depth = 0;         ///< number of tunnel layers recognised
  std::uint8_t l4_proto = 0;   ///< IP protocol of the innermost L4 found (0 = none)
  FragStatus frag = FragStatus::None;  ///< innermost IP header, or First inside an outer one
  /// VXLAN RCO of the first tunnel when decoded (ParseOptions::vxlan_remcsum_rx or GUE
  /// REMCSUM option): absolute offsets of the start of summing and of the checksum field.
  std::uint32_t rco_start = kNoOffset;
  std::uint32_t rco_offset = kNoOffset;

  // -- stop status --------------------------------------------------------------------------
  StopReason stop = StopReason::EndOfHeaders;
  std::uint32_t stop_offset = 0;  ///< first byte not parsed as a header (payload start)
  std::uint32_t stop_value = 0;   ///< see StopReason

  // -- header list --------------------------------------------------------------------------
  std::span<const HeaderRef> headers() const noexcept { return {hdrs_.data(), count_}; }
  std::size_t size() const noexcept { return count_; }
  /// The nth header of kind k (0 = outermost), or nullptr.
  const HeaderRef* find(HeaderKind k, std::size_t nth = 0) const noexcept;
  /// The innermost header of kind k, or nullptr.
  const HeaderRef* innermost(HeaderKind k) const noexcept;
  /// Innermost IPv4/IPv6 header, or nullptr.
  const HeaderRef* inner_ip() const noexcept;
  /// Innermost TCP/UDP header (the one a GSO/GRO engine acts on), or nullptr.
  const HeaderRef* inner_l4() const noexcept;
  /// Enclosing IP header of an L4 header (uses HeaderRef::aux), or nullptr.
  const HeaderRef* ip_of(const HeaderRef& l4) const noexcept;
  /// Payload offset of the innermost L4 header (its header end), or kNoOffset.
  std::uint32_t payload_offset() const noexcept;

  /// Append (used by the parser; false when kMaxHeaders is reached).
  bool push(const HeaderRef& h) noexcept;
  /// Mutable access to header i < size() (used by the parser to back-fill fields).
  HeaderRef& at(std::size_t i) noexcept { return hdrs_[i]; }

 private:
  std::array<HeaderRef, kMaxHeaders> hdrs_{};
  std::size_t count_ = 0;
};

/// Parse one frame. See the file comment for the contract.
Result<Layout> parse_frame(std::span<const std::uint8_t> frame, LinkType link,
                           const ParseOptions& opt = {});

/// As parse_frame, but on a parse error `out` keeps every header recorded before the failing
/// one (a diagnostic walk for tools such as `ofld csum verify`: check what could be read and
/// name what stopped it). Returns the error, or nullopt when the whole frame parsed (then
/// `out` equals parse_frame's result).
std::optional<ParseError> parse_frame_prefix(std::span<const std::uint8_t> frame, LinkType link,
                                             const ParseOptions& opt, Layout& out);

/// One-line human summary, e.g. "eth vlan ipv4 udp vxlan eth ipv4 icmp (vxlan)".
std::string describe(const Layout& l);

}  // namespace ofld::wire

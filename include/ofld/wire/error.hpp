// ofld/wire/error.hpp — parse error values and a minimal Result<T> (C++20 has no std::expected).
//
// A ParseError names the layer (HeaderKind), the problem (Errc) and up to two numbers that
// to_string() puts into a message such as "ipv4: ihl 3 < 5" or "vxlan: truncated at header
// (8 bytes needed, 5 available)". Errors are plain values: no exceptions, no allocation until
// to_string() is called.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ofld::wire {

/// Every header kind the parser knows (also the `layer` of a ParseError).
enum class HeaderKind : std::uint8_t {
  Ethernet,      ///< Ethernet II / 802.3 MAC header, 14 bytes
  Vlan,          ///< 802.1Q C-tag (TPID 0x8100), 4 bytes (TCI + inner ethertype)
  QinQ,          ///< 802.1ad S-tag (TPID 0x88A8; also 0x9100 legacy), 4 bytes
  LinuxSll,      ///< Linux cooked capture v1, 16 bytes
  LinuxSll2,     ///< Linux cooked capture v2, 20 bytes
  Ipv4,          ///< RFC 791 header incl. options (ihl*4 bytes)
  Ipv6,          ///< RFC 8200 fixed header, 40 bytes
  Ipv6HopByHop,  ///< RFC 8200 §4.3
  Ipv6Routing,   ///< RFC 8200 §4.4 (type 0: RFC 2460 / deprecated by RFC 5095)
  Ipv6Fragment,  ///< RFC 8200 §4.5, 8 bytes
  Ipv6DestOpts,  ///< RFC 8200 §4.6
  Ah,            ///< RFC 4302 Authentication Header ((len+2)*4 bytes)
  Tcp,           ///< RFC 9293 header incl. options (doff*4 bytes)
  Udp,           ///< RFC 768, 8 bytes
  Icmp,          ///< RFC 792, first 4 bytes recorded (type, code, checksum)
  Icmpv6,        ///< RFC 4443, first 4 bytes recorded
  Vxlan,         ///< RFC 7348 (+RCO, V-1..V-5), 8 bytes
  Gue,           ///< draft-ietf-intarea-gue variant 0 (V-6..V-10), 4 + hlen*4 bytes
  Gre,           ///< RFC 2784/2890 (V-12, V-13), 4..16 bytes
  ErspanII,      ///< ERSPAN type II header (V-15), 8 bytes
  ErspanIII,     ///< ERSPAN type III header (V-16), 12 bytes (+8 platform sub-header if O)
  Geneve,        ///< RFC 8926, 8 + opt_len*4 bytes
  VirtioNet,     ///< virtio_net_hdr (V-18), not produced by parse_frame
  Frame,         ///< the frame as a whole (errors not tied to one header)
};
/// Short lower-case name: "ethernet", "vlan", "ipv4", "ipv6-routing", "vxlan", ...
std::string_view to_string(HeaderKind k) noexcept;

/// What is wrong. The meaning of ParseError::value / ::limit is given per code.
enum class Errc : std::uint8_t {
  Truncated,       ///< header needs `limit` bytes, only `value` available
  BadVersion,      ///< version field `value`, expected `limit`
  BadHeaderLen,    ///< header length field gives `value` bytes, minimum `limit`
  HeaderPastEnd,   ///< header length `value` bytes exceeds the `limit` bytes available
  BadTotalLen,     ///< IP length field `value` < header length `limit`
  LengthPastEnd,   ///< IP/UDP length field says `value` bytes, only `limit` present
  BadFlags,        ///< unknown / reserved flag bits `value` set
  BadOption,       ///< malformed option or extension (value = offending type/len)
  BadRcoOffset,    ///< RCO offset `value` < start `limit` (V-9)
  Unsupported,     ///< recognised but refused (e.g. GRE routing R bit, V-13)
  TooDeep,         ///< nesting limit `limit` reached
  /// IPv6 payload length 0 that is not BIG TCP (tcpdump's rule, print-ip6.c): no Jumbo
  /// Payload option, and either a Hop-by-Hop header without one (layer Ipv6HopByHop), another
  /// extension header, or not TCP/UDP over 65535 bytes. `value` = next header, `limit` =
  /// bytes from the IPv6 header to the end of the packet.
  ZeroLength,
};
std::string_view to_string(Errc e) noexcept;

/// A parse failure: layer, problem, byte offset of the layer in the buffer, two numbers.
struct ParseError {
  HeaderKind layer = HeaderKind::Frame;
  Errc code = Errc::Truncated;
  std::uint32_t offset = 0;  ///< where the failing header starts (bytes from buffer start)
  std::uint32_t value = 0;
  std::uint32_t limit = 0;
  /// Human message, e.g. "ipv4: ihl 3 < 5" / "tcp: data offset 60 past end (40 available)".
  std::string to_string() const;
  friend bool operator==(const ParseError&, const ParseError&) = default;
};

/// Either a T or a ParseError. ok() first, then value() / error(); accessing the wrong
/// alternative is a programming error (std::get throws bad_variant_access).
template <class T>
class Result {
 public:
  Result(T v) : v_(std::move(v)) {}                 // NOLINT(implicit)
  Result(ParseError e) : v_(std::move(e)) {}        // NOLINT(implicit)
  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const ParseError& error() const& { return std::get<1>(v_); }

 private:
  std::variant<T, ParseError> v_;
};

/// Shorthand constructors used by the codecs.
constexpr ParseError truncated(HeaderKind k, std::size_t off, std::size_t have,
                               std::size_t need) noexcept {
  return {k, Errc::Truncated, std::uint32_t(off), std::uint32_t(have), std::uint32_t(need)};
}

}  // namespace ofld::wire

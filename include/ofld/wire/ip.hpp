// ofld/wire/ip.hpp — IPv4 (RFC 791) and IPv6 (RFC 8200) headers, IPv6 extension headers, AH.
//
// IPv4 offsets: ver|ihl 0, tos 1, tot_len 2, id 4, frag_off 6 (DF 0x4000, MF 0x2000,
// offset in 8-byte units in the low 13 bits), ttl 8, protocol 9, check 10, saddr 12, daddr 16,
// options 20..ihl*4.
// IPv6 offsets: ver|tc|flow 0..3, payload_len 4, next_header 6, hop_limit 7, saddr 8, daddr 24.
// Extension headers (RFC 8200 §4): next_header 0, hdr_ext_len 1 → (len+1)*8 bytes; routing:
// type 2, segments_left 3, type-0 addresses from offset 8; fragment (8 bytes): offset|res|M at
// 2, identification at 4. AH (RFC 4302 §2): next 0, payload_len 1 → (len+2)*4 bytes.
//
// parse() checks only what the header itself says (version, header length fits); the
// datagram-length checks that involve the enclosing frame are done by parse_frame().
#pragma once

#include <array>
#include <optional>

#include "ofld/wire/error.hpp"
#include "ofld/wire/numbers.hpp"
#include "ofld/wire/view.hpp"

namespace ofld::wire {

/// IPv4 field offsets (bytes from the header start), flags and sizes (RFC 791 §3.1; kernel
/// struct iphdr, IP_DF/IP_MF/IP_OFFSET).
namespace ipv4 {
inline constexpr std::size_t kVerIhlOffset = 0, kTosOffset = 1, kTotLenOffset = 2,
                             kIdOffset = 4, kFragOffOffset = 6, kTtlOffset = 8,
                             kProtocolOffset = 9, kCheckOffset = 10, kSaddrOffset = 12,
                             kDaddrOffset = 16, kOptionsOffset = 20;
inline constexpr std::size_t kMinLen = 20, kMaxLen = 60;  ///< ihl 5..15 words
inline constexpr std::size_t kAddrLen = 4;
/// frag_off field (host order): reserved/evil bit, DF, MF, offset in 8-byte units.
inline constexpr std::uint16_t kCE = 0x8000, kDF = 0x4000, kMF = 0x2000, kOffsetMask = 0x1fff;
/// First byte of an option-less header: version 4, ihl 5.
inline constexpr std::uint8_t kVerIhl5 = 0x45;
/// TOS byte: DSCP in the upper 6 bits, ECN in the low 2 (RFC 3168 §5, RFC 2474).
inline constexpr std::uint8_t kEcnMask = 0x03;
inline constexpr std::uint16_t kMaxTotLen = 0xffff;
}  // namespace ipv4

/// IPv6 field offsets (bytes), sizes (RFC 8200 §3; kernel struct ipv6hdr).
namespace ipv6 {
inline constexpr std::size_t kVerTcFlowOffset = 0, kPayloadLenOffset = 4,
                             kNextHeaderOffset = 6, kHopLimitOffset = 7, kSaddrOffset = 8,
                             kDaddrOffset = 24;
inline constexpr std::size_t kHdrLen = 40, kAddrLen = 16;
inline constexpr std::uint32_t kFlowLabelMask = 0x000fffff;  ///< of the first 32-bit word
/// Extension headers in the (next, hdr_ext_len) format (RFC 8200 §4.3-4.6): offsets, unit.
inline constexpr std::size_t kExtNextOffset = 0, kExtLenOffset = 1, kExtUnit = 8;
/// Routing header (RFC 8200 §4.4): routing type, segments left, addresses (type 0/2/4).
inline constexpr std::size_t kRtTypeOffset = 2, kRtSegLeftOffset = 3, kRtAddrOffset = 8;
/// Fragment header (RFC 8200 §4.5): 8 bytes; offset|res|M at 2 (offset in bytes & 0xfff8).
inline constexpr std::size_t kFragLen = 8, kFragOffOffset = 2, kFragIdOffset = 4;
inline constexpr std::uint16_t kFragOffsetMask = 0xfff8, kFragMore = 0x0001;
/// HBH jumbo payload option (RFC 2675 §2).
inline constexpr std::uint8_t kOptPad1 = 0, kOptPadN = 1, kOptJumbo = 0xC2;
}  // namespace ipv6

/// The IP version of the header at `p`: the upper nibble of byte 0, which IPv4 (RFC 791 §3.1)
/// and IPv6 (RFC 8200 §3) both place there (4, 6, or anything else for non-IP). `p` must
/// point at one readable byte; no other check.
constexpr unsigned ip_version(const std::uint8_t* p) noexcept { return unsigned(p[0]) >> 4; }
/// The IP version of a raw IP packet, 0 for an empty span (never a valid version).
constexpr unsigned ip_version(std::span<const std::uint8_t> p) noexcept {
  return p.empty() ? 0 : ip_version(p.data());
}

/// IPv4 header incl. options.
template <ByteT B = const std::uint8_t>
class Ipv4Header : public ViewBase<B> {
 public:
  static constexpr std::size_t kMinLen = 20;
  static constexpr std::uint16_t kDF = ipv4::kDF, kMF = ipv4::kMF, kOffsetMask = ipv4::kOffsetMask;
  static constexpr std::size_t kCheckOffset = ipv4::kCheckOffset,
                               kSaddrOffset = ipv4::kSaddrOffset, kDaddrOffset = ipv4::kDaddrOffset;
  /// Errors: Truncated (< 20 bytes), BadVersion (not 4), BadHeaderLen ("ihl 3 < 5"),
  /// HeaderPastEnd (ihl*4 > bytes available).
  static Result<Ipv4Header> parse(std::span<B> s) {
    if (s.size() < kMinLen) return truncated(HeaderKind::Ipv4, 0, s.size(), kMinLen);
    unsigned ver = s[0] >> 4, ihl = s[0] & 0xf;
    if (ver != 4) return ParseError{HeaderKind::Ipv4, Errc::BadVersion, 0, ver, 4};
    if (ihl < 5) return ParseError{HeaderKind::Ipv4, Errc::BadHeaderLen, 0, ihl, 5};
    if (ihl * 4u > s.size())
      return ParseError{HeaderKind::Ipv4, Errc::HeaderPastEnd, 0, ihl * 4u,
                        std::uint32_t(s.size())};
    return Ipv4Header(s.data(), ihl * 4u);
  }
  /// No checks: the caller has proven ihl*4 bytes at `p` and a valid ihl (hot paths).
  static constexpr Ipv4Header unchecked(B* p) noexcept { return Ipv4Header(p, (p[0] & 0xfu) * 4u); }
  std::uint8_t version() const noexcept { return this->u8(0) >> 4; }
  std::uint8_t ihl() const noexcept { return this->u8(0) & 0xf; }
  std::uint8_t tos() const noexcept { return this->u8(1); }
  std::uint16_t total_len() const noexcept { return this->be16(2); }
  std::uint16_t id() const noexcept { return this->be16(4); }
  std::uint16_t frag_off_field() const noexcept { return this->be16(6); }
  bool df() const noexcept { return frag_off_field() & kDF; }
  bool mf() const noexcept { return frag_off_field() & kMF; }
  /// Fragment offset in BYTES (field × 8).
  std::uint32_t frag_offset() const noexcept { return std::uint32_t(frag_off_field() & kOffsetMask) * 8; }
  bool is_fragment() const noexcept { return frag_off_field() & (kMF | kOffsetMask); }
  std::uint8_t ttl() const noexcept { return this->u8(8); }
  std::uint8_t protocol() const noexcept { return this->u8(9); }
  std::uint16_t check() const noexcept { return this->be16(10); }
  std::uint32_t saddr() const noexcept { return this->be32(12); }
  std::uint32_t daddr() const noexcept { return this->be32(16); }
  /// Option bytes (ihl*4 - 20).
  std::span<B> options() const noexcept { return this->header().subspan(kMinLen); }

  void set_tos(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable { this->w8(1, v); }
  void set_total_len(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(2, v); }
  void set_id(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(4, v); }
  void set_frag_off_field(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(6, v); }
  void set_ttl(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable { this->w8(8, v); }
  void set_protocol(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable { this->w8(9, v); }
  void set_check(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(10, v); }
  void set_saddr(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable { this->w32(12, v); }
  void set_daddr(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable { this->w32(16, v); }

 private:
  constexpr Ipv4Header(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

using Ipv6Addr = std::array<std::uint8_t, 16>;

/// IPv6 fixed header (40 bytes).
template <ByteT B = const std::uint8_t>
class Ipv6Header : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = 40;
  static constexpr std::size_t kSaddrOffset = ipv6::kSaddrOffset, kDaddrOffset = ipv6::kDaddrOffset;
  /// Errors: Truncated (< 40), BadVersion (not 6).
  static Result<Ipv6Header> parse(std::span<B> s) {
    if (s.size() < kLen) return truncated(HeaderKind::Ipv6, 0, s.size(), kLen);
    unsigned ver = s[0] >> 4;
    if (ver != 6) return ParseError{HeaderKind::Ipv6, Errc::BadVersion, 0, ver, 6};
    return Ipv6Header(s.data());
  }
  /// No checks: the caller has proven 40 bytes at `p`. Zero cost.
  static constexpr Ipv6Header unchecked(B* p) noexcept { return Ipv6Header(p); }
  std::uint8_t version() const noexcept { return this->u8(0) >> 4; }
  std::uint8_t traffic_class() const noexcept { return std::uint8_t(this->be16(0) >> 4); }
  std::uint32_t flow_label() const noexcept { return this->be32(0) & 0xfffff; }
  std::uint16_t payload_len() const noexcept { return this->be16(4); }
  std::uint8_t next_header() const noexcept { return this->u8(6); }
  std::uint8_t hop_limit() const noexcept { return this->u8(7); }
  Ipv6Addr saddr() const noexcept { return addr(8); }
  Ipv6Addr daddr() const noexcept { return addr(24); }

  void set_payload_len(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(4, v); }
  void set_next_header(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable { this->w8(6, v); }
  void set_hop_limit(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable { this->w8(7, v); }
  void set_traffic_class(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable {
    this->w16(0, std::uint16_t((this->be16(0) & 0xf00f) | (unsigned(v) << 4)));
  }
  void set_flow_label(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable {
    this->w32(0, (this->be32(0) & 0xfff00000u) | (v & 0xfffff));
  }

 private:
  constexpr explicit Ipv6Header(B* p) : ViewBase<B>(p, kLen) {}
  Ipv6Addr addr(std::size_t o) const noexcept {
    Ipv6Addr a{};
    for (std::size_t i = 0; i < 16; ++i) a[i] = this->p_[o + i];
    return a;
  }
};

/// True for the IPv6 next-header values walked as extension headers by parse_frame:
/// 0 (HBH), 43 (routing), 44 (fragment), 60 (dest opts), 51 (AH).
constexpr bool is_ipv6_ext(std::uint8_t nh) noexcept {
  return nh == ipproto::kHopOpts || nh == ipproto::kRouting || nh == ipproto::kFragment ||
         nh == ipproto::kDstOpts || nh == ipproto::kAh;
}

/// Generic IPv6 extension header in the (next, hdr_ext_len) format: HBH, dest opts, routing.
/// Length = (hdr_ext_len + 1) * 8.
template <ByteT B = const std::uint8_t>
class Ipv6ExtHeader : public ViewBase<B> {
 public:
  /// `kind` only labels errors. Errors: Truncated (< 8 bytes, or < declared length).
  static Result<Ipv6ExtHeader> parse(std::span<B> s, HeaderKind kind = HeaderKind::Ipv6DestOpts) {
    if (s.size() < 8) return truncated(kind, 0, s.size(), 8);
    std::size_t n = (std::size_t(s[1]) + 1) * 8;
    if (n > s.size()) return truncated(kind, 0, s.size(), n);
    return Ipv6ExtHeader(s.data(), n);
  }
  /// No checks: the caller has proven (hdr_ext_len+1)*8 bytes at `p`.
  static constexpr Ipv6ExtHeader unchecked(B* p) noexcept {
    return Ipv6ExtHeader(p, (std::size_t(p[1]) + 1) * 8);
  }
  std::uint8_t next_header() const noexcept { return this->u8(0); }
  std::uint8_t hdr_ext_len() const noexcept { return this->u8(1); }
  /// Routing header fields (valid when this is a routing header).
  std::uint8_t routing_type() const noexcept { return this->u8(2); }
  std::uint8_t segments_left() const noexcept { return this->u8(3); }
  /// Type-0/type-2/SRH: number of 16-byte addresses (hdr_ext_len / 2).
  std::size_t routing_addr_count() const noexcept { return hdr_ext_len() / 2; }
  /// Byte offset (within this header) of address i (RFC 2460 §4.4 type 0: from offset 8).
  static constexpr std::size_t routing_addr_offset(std::size_t i) noexcept { return 8 + 16 * i; }
  /// Offset within this header of the final destination for the pseudo-header when
  /// segments_left > 0 (RFC 8200 §8.1): type 0 → last address; type 2 (RFC 6275) → its one
  /// address; type 4 SRH (RFC 8754 §2) → Segment List[0]. kNoRoutedDst when not applicable.
  static constexpr std::size_t kNoRoutedDst = ~std::size_t(0);
  std::size_t final_dst_offset() const noexcept {
    if (segments_left() == 0 || routing_addr_count() == 0) return kNoRoutedDst;
    switch (routing_type()) {
      case 0: return routing_addr_offset(routing_addr_count() - 1);
      case 2: case 4: return routing_addr_offset(0);
      default: return kNoRoutedDst;
    }
  }
  /// Options area (bytes 2..len) of HBH / dest opts.
  std::span<B> options() const noexcept { return this->header().subspan(2); }
  /// HBH: the RFC 2675 jumbo payload length if a Jumbo option (type 0xC2, len 4) is present.
  /// Returns 0 when absent or the options are malformed.
  std::uint32_t jumbo_payload_len() const noexcept {
    auto o = options();
    std::size_t i = 0;
    while (i < o.size()) {
      if (o[i] == 0) { ++i; continue; }  // Pad1
      if (i + 2 > o.size()) return 0;
      std::size_t l = o[i + 1];
      if (i + 2 + l > o.size()) return 0;
      if (o[i] == 0xC2 && l == 4) return load_be32(&o[i + 2]);
      i += 2 + l;
    }
    return 0;
  }
  void set_next_header(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable { this->w8(0, v); }

 private:
  constexpr Ipv6ExtHeader(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

/// IPv6 Fragment header (8 bytes, RFC 8200 §4.5).
template <ByteT B = const std::uint8_t>
class Ipv6FragHeader : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = 8;
  static Result<Ipv6FragHeader> parse(std::span<B> s) {
    if (s.size() < kLen) return truncated(HeaderKind::Ipv6Fragment, 0, s.size(), kLen);
    return Ipv6FragHeader(s.data());
  }
  /// No checks: the caller has proven 8 bytes at `p`.
  static constexpr Ipv6FragHeader unchecked(B* p) noexcept { return Ipv6FragHeader(p); }
  std::uint8_t next_header() const noexcept { return this->u8(0); }
  /// Fragment offset in BYTES.
  std::uint32_t frag_offset() const noexcept { return this->be16(2) & 0xfff8; }
  bool more() const noexcept { return this->be16(2) & 1; }
  std::uint32_t identification() const noexcept { return this->be32(4); }
  void set_next_header(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable { this->w8(0, v); }
  /// offset in bytes (multiple of 8), M flag.
  void set_frag(std::uint32_t off, bool m) const noexcept requires ViewBase<B>::kMutable {
    this->w16(2, std::uint16_t((off & 0xfff8) | (m ? 1 : 0)));
  }
  void set_identification(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable { this->w32(4, v); }

 private:
  constexpr explicit Ipv6FragHeader(B* p) : ViewBase<B>(p, kLen) {}
};

/// Authentication Header (RFC 4302 §2): length (payload_len + 2) * 4, minimum 12.
template <ByteT B = const std::uint8_t>
class AhHeader : public ViewBase<B> {
 public:
  static constexpr std::size_t kMinLen = 12;
  static Result<AhHeader> parse(std::span<B> s) {
    if (s.size() < kMinLen) return truncated(HeaderKind::Ah, 0, s.size(), kMinLen);
    std::size_t n = (std::size_t(s[1]) + 2) * 4;
    if (n < kMinLen) return ParseError{HeaderKind::Ah, Errc::BadHeaderLen, 0, std::uint32_t(n), kMinLen};
    if (n > s.size()) return truncated(HeaderKind::Ah, 0, s.size(), n);
    return AhHeader(s.data(), n);
  }
  std::uint8_t next_header() const noexcept { return this->u8(0); }
  std::uint8_t payload_len() const noexcept { return this->u8(1); }
  std::uint32_t spi() const noexcept { return this->be32(4); }
  std::uint32_t seq() const noexcept { return this->be32(8); }

 private:
  AhHeader(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

// ============================== emit (Repr → bytes) =========================================
// In the manner of smoltcp's wire::*Repr: a value type holding the fields, from() reading
// them out of a parsed view, emit() writing a correct header into a buffer and returning the
// bytes written (0 when the buffer is too small or the value cannot be expressed).

/// IPv4 header value (RFC 791 §3.1). emit() writes version 4, ihl from the options, and
/// the header checksum (RFC 791 §3.1 / RFC 1071, via core's ip_compute_csum) unless `check`
/// is given, in which case that value is written as is (e.g. to reproduce a bad checksum).
struct Ipv4Repr {
  std::uint8_t tos = 0;           ///< DSCP << 2 | ECN
  std::uint16_t total_len = 0;    ///< header + payload bytes (0 allowed: BIG TCP / TSO)
  std::uint16_t id = 0;
  std::uint16_t frag_off = 0;     ///< the 16-bit field: ipv4::kDF | kMF | offset/8
  std::uint8_t ttl = 64;
  std::uint8_t protocol = 0;      ///< ipproto::*
  std::uint32_t saddr = 0;        ///< host order (192.0.2.1 = 0xC0000201)
  std::uint32_t daddr = 0;
  std::span<const std::uint8_t> options{};  ///< raw option bytes, length multiple of 4, <= 40
  std::optional<std::uint16_t> check;       ///< nullopt: computed
  std::size_t length() const noexcept { return ipv4::kMinLen + options.size(); }
  /// Fields of a parsed header (check kept as captured; options point into the view).
  template <ByteT B>
  static Ipv4Repr from(const Ipv4Header<B>& h) noexcept {
    return {h.tos(), h.total_len(), h.id(), h.frag_off_field(), h.ttl(), h.protocol(),
            h.saddr(), h.daddr(), h.options(), h.check()};
  }
  /// Returns length(), or 0 when `out` is too small or the options are not a multiple of 4
  /// bytes up to 40.
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;
};

/// IPv6 fixed header value (RFC 8200 §3). emit() writes 40 bytes (version 6).
struct Ipv6Repr {
  std::uint8_t traffic_class = 0;  ///< DSCP << 2 | ECN
  std::uint32_t flow_label = 0;    ///< low 20 bits
  std::uint16_t payload_len = 0;   ///< bytes after the fixed header (0: jumbo / BIG TCP)
  std::uint8_t next_header = 0;    ///< ipproto::*
  std::uint8_t hop_limit = 64;
  Ipv6Addr saddr{};
  Ipv6Addr daddr{};
  static constexpr std::size_t length() noexcept { return ipv6::kHdrLen; }
  template <ByteT B>
  static Ipv6Repr from(const Ipv6Header<B>& h) noexcept {
    return {h.traffic_class(), h.flow_label(), h.payload_len(), h.next_header(),
            h.hop_limit(), h.saddr(), h.daddr()};
  }
  /// Returns 40, or 0 when `out` is shorter.
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;
};

/// IPv6 extension header in the (next header, hdr_ext_len) format — hop-by-hop, destination
/// options, routing (RFC 8200 §4.3/4.4/4.6). `body` is everything after the first two bytes
/// (options with their padding; for routing: type, segments left, reserved, addresses).
struct Ipv6ExtRepr {
  std::uint8_t next_header = 0;
  std::span<const std::uint8_t> body{};  ///< 2 + body.size() must be a multiple of 8, <= 2048
  std::size_t length() const noexcept { return 2 + body.size(); }
  template <ByteT B>
  static Ipv6ExtRepr from(const Ipv6ExtHeader<B>& h) noexcept {
    return {h.next_header(), h.header().subspan(2)};
  }
  /// Writes next header, hdr_ext_len = length()/8 - 1, body. Returns length(), or 0 when
  /// `out` is too small or the length is not expressible.
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;
};

/// IPv6 fragment header value (RFC 8200 §4.5).
struct Ipv6FragRepr {
  std::uint8_t next_header = 0;
  std::uint16_t frag_offset = 0;  ///< in BYTES, multiple of 8
  bool more = false;              ///< M flag
  std::uint32_t identification = 0;
  static constexpr std::size_t length() noexcept { return ipv6::kFragLen; }
  template <ByteT B>
  static Ipv6FragRepr from(const Ipv6FragHeader<B>& h) noexcept {
    return {h.next_header(), std::uint16_t(h.frag_offset()), h.more(), h.identification()};
  }
  /// Returns 8, or 0 when `out` is shorter or frag_offset is not a multiple of 8.
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;
};

}  // namespace ofld::wire

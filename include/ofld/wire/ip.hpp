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

#include "ofld/wire/error.hpp"
#include "ofld/wire/view.hpp"

namespace ofld::wire {

/// IPv4 header incl. options.
template <ByteT B = const std::uint8_t>
class Ipv4Header : public ViewBase<B> {
 public:
  static constexpr std::size_t kMinLen = 20;
  static constexpr std::uint16_t kDF = 0x4000, kMF = 0x2000, kOffsetMask = 0x1fff;
  static constexpr std::size_t kCheckOffset = 10, kSaddrOffset = 12, kDaddrOffset = 16;
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
  Ipv4Header(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

using Ipv6Addr = std::array<std::uint8_t, 16>;

/// IPv6 fixed header (40 bytes).
template <ByteT B = const std::uint8_t>
class Ipv6Header : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = 40;
  static constexpr std::size_t kSaddrOffset = 8, kDaddrOffset = 24;
  /// Errors: Truncated (< 40), BadVersion (not 6).
  static Result<Ipv6Header> parse(std::span<B> s) {
    if (s.size() < kLen) return truncated(HeaderKind::Ipv6, 0, s.size(), kLen);
    unsigned ver = s[0] >> 4;
    if (ver != 6) return ParseError{HeaderKind::Ipv6, Errc::BadVersion, 0, ver, 6};
    return Ipv6Header(s.data());
  }
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
  explicit Ipv6Header(B* p) : ViewBase<B>(p, kLen) {}
  Ipv6Addr addr(std::size_t o) const noexcept {
    Ipv6Addr a{};
    for (std::size_t i = 0; i < 16; ++i) a[i] = this->p_[o + i];
    return a;
  }
};

/// True for the IPv6 next-header values walked as extension headers by parse_frame:
/// 0 (HBH), 43 (routing), 44 (fragment), 60 (dest opts), 51 (AH).
constexpr bool is_ipv6_ext(std::uint8_t nh) noexcept {
  return nh == 0 || nh == 43 || nh == 44 || nh == 60 || nh == 51;
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
  Ipv6ExtHeader(B* p, std::size_t n) : ViewBase<B>(p, n) {}
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
  explicit Ipv6FragHeader(B* p) : ViewBase<B>(p, kLen) {}
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

}  // namespace ofld::wire

// ofld/wire/l4.hpp — TCP (RFC 9293 §3.1) and UDP (RFC 768) headers.
//
// TCP offsets: sport 0, dport 2, seq 4, ack 8, doff(4)|res(3)|AE(1) 12, flags 13
// (CWR ECE URG ACK PSH RST SYN FIN, MSB first), window 14, check 16, urg_ptr 18,
// options 20..doff*4. UDP: sport 0, dport 2, len 4, check 6.
#pragma once

#include <array>
#include <optional>

#include "ofld/wire/error.hpp"
#include "ofld/wire/numbers.hpp"
#include "ofld/wire/view.hpp"

namespace ofld::wire {

/// TCP field offsets (bytes from the header start) and sizes (RFC 9293 §3.1; struct tcphdr).
namespace tcp {
inline constexpr std::size_t kSourceOffset = 0, kDestOffset = 2, kSeqOffset = 4,
                             kAckSeqOffset = 8, kDoffOffset = 12, kFlagsOffset = 13,
                             kWindowOffset = 14, kCheckOffset = 16, kUrgPtrOffset = 18,
                             kOptionsOffset = 20;
/// The 32-bit word holding doff|res|AE|flags|window (kernel tcp_flag_word): bytes 12..15.
inline constexpr std::size_t kFlagWordOffset = 12;
inline constexpr std::size_t kMinLen = 20, kMaxLen = 60;  ///< doff 5..15 words
/// Byte 12: data offset in the upper nibble, AE (RFC 3540 NS / accurate ECN) in bit 0.
inline constexpr std::uint8_t kDoffMask = 0xf0, kAeBit = 0x01;
}  // namespace tcp

/// TCP flag bits of byte 13 (RFC 9293 §3.1, RFC 3168 §6.1): the one definition.
namespace tcp_flag {
inline constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10,
                              kUrg = 0x20, kEce = 0x40, kCwr = 0x80;
}
/// The same flags as bits of the host-order 32-bit word at offset 12 (kernel TCP_FLAG_*,
/// tcp_flag_word()): compare with load_be32(th + tcp::kFlagWordOffset).
namespace tcp_flag_word {
inline constexpr std::uint32_t kFin = 0x00010000u, kSyn = 0x00020000u, kRst = 0x00040000u,
                               kPsh = 0x00080000u, kAck = 0x00100000u, kUrg = 0x00200000u,
                               kEce = 0x00400000u, kCwr = 0x00800000u, kAe = 0x01000000u;
inline constexpr std::uint32_t kReserved = 0x0F000000u;    ///< TCP_RESERVED_BITS (incl. AE)
inline constexpr std::uint32_t kDataOffset = 0xF0000000u;  ///< TCP_DATA_OFFSET
inline constexpr std::uint32_t kWindow = 0x0000FFFFu;
/// Lift a byte-13 flag set (tcp_flag::*) into the word form.
constexpr std::uint32_t from_flags(std::uint8_t f) noexcept { return std::uint32_t(f) << 16; }
}  // namespace tcp_flag_word

/// UDP field offsets and size (RFC 768; struct udphdr).
namespace udp {
inline constexpr std::size_t kSourceOffset = 0, kDestOffset = 2, kLenOffset = 4,
                             kCheckOffset = 6;
inline constexpr std::size_t kHdrLen = 8;
}  // namespace udp
namespace tcp_opt {
inline constexpr std::uint8_t kEol = 0, kNop = 1, kMss = 2, kWscale = 3, kSackPerm = 4,
                              kSack = 5, kTimestamp = 8;
}

/// TCP timestamp option values (RFC 7323 §3): TSval, TSecr, host order.
struct TcpTimestamp {
  std::uint32_t tsval = 0, tsecr = 0;
  /// Offset of the option's kind byte within the TCP header.
  std::size_t offset = 0;
  friend bool operator==(const TcpTimestamp&, const TcpTimestamp&) = default;
};

/// TCP header incl. options.
template <ByteT B = const std::uint8_t>
class TcpHeader : public ViewBase<B> {
 public:
  static constexpr std::size_t kMinLen = tcp::kMinLen, kCheckOffset = tcp::kCheckOffset;
  /// Errors: Truncated (< 20), BadHeaderLen ("tcp: data offset 16 < 20" bytes),
  /// HeaderPastEnd ("tcp: data offset 60 past end (40 available)").
  static Result<TcpHeader> parse(std::span<B> s) {
    if (s.size() < kMinLen) return truncated(HeaderKind::Tcp, 0, s.size(), kMinLen);
    std::size_t n = std::size_t(s[12] >> 4) * 4;
    if (n < kMinLen) return ParseError{HeaderKind::Tcp, Errc::BadHeaderLen, 0, std::uint32_t(n), kMinLen};
    if (n > s.size())
      return ParseError{HeaderKind::Tcp, Errc::HeaderPastEnd, 0, std::uint32_t(n), std::uint32_t(s.size())};
    return TcpHeader(s.data(), n);
  }
  /// No checks: the caller has proven doff*4 bytes at `p` and doff >= 5 (hot paths).
  static constexpr TcpHeader unchecked(B* p) noexcept { return TcpHeader(p, std::size_t(p[12] >> 4) * 4); }
  /// The host-order word at offset 12 (doff|res|AE|flags|window): tcp_flag_word::* masks.
  std::uint32_t flag_word() const noexcept { return this->be32(tcp::kFlagWordOffset); }
  std::uint16_t source() const noexcept { return this->be16(0); }
  std::uint16_t dest() const noexcept { return this->be16(2); }
  std::uint32_t seq() const noexcept { return this->be32(4); }
  std::uint32_t ack_seq() const noexcept { return this->be32(8); }
  /// Data offset in 32-bit words.
  std::uint8_t doff() const noexcept { return this->u8(12) >> 4; }
  /// The 8 classic flag bits (tcp_flag::*).
  std::uint8_t flags() const noexcept { return this->u8(13); }
  /// AE/NS bit (byte 12 bit 0; RFC 3540 / accurate ECN).
  bool ae() const noexcept { return this->u8(12) & 1; }
  std::uint16_t window() const noexcept { return this->be16(14); }
  std::uint16_t check() const noexcept { return this->be16(16); }
  std::uint16_t urg_ptr() const noexcept { return this->be16(18); }
  std::span<B> options() const noexcept { return this->header().subspan(kMinLen); }

  /// Walk the options: f(kind, offset_in_header, option_bytes_including_kind_len).
  /// Stops at EOL. Returns false if an option is malformed (len < 2 or past the header),
  /// true otherwise (Linux tcp_parse_options likewise stops silently on garbage).
  template <class F>
  bool for_each_option(F&& f) const {
    auto o = options();
    std::size_t i = 0;
    while (i < o.size()) {
      std::uint8_t k = o[i];
      if (k == tcp_opt::kEol) return true;
      if (k == tcp_opt::kNop) { f(k, kMinLen + i, o.subspan(i, 1)); ++i; continue; }
      if (i + 2 > o.size()) return false;
      std::size_t l = o[i + 1];
      if (l < 2 || i + l > o.size()) return false;
      f(k, kMinLen + i, o.subspan(i, l));
      i += l;
    }
    return true;
  }
  /// The timestamp option (kind 8, len 10) if present and well-formed.
  std::optional<TcpTimestamp> timestamp() const {
    std::optional<TcpTimestamp> r;
    for_each_option([&](std::uint8_t k, std::size_t off, std::span<B> b) {
      if (k == tcp_opt::kTimestamp && b.size() == 10 && !r)
        r = TcpTimestamp{load_be32(&b[2]), load_be32(&b[6]), off};
    });
    return r;
  }

  void set_source(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(0, v); }
  void set_dest(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(2, v); }
  void set_seq(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable { this->w32(4, v); }
  void set_ack_seq(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable { this->w32(8, v); }
  void set_flags(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable { this->w8(13, v); }
  void set_window(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(14, v); }
  void set_check(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(16, v); }
  void set_urg_ptr(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(18, v); }

 private:
  constexpr TcpHeader(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

/// UDP header (8 bytes). The length field is checked against the datagram by parse_frame().
template <ByteT B = const std::uint8_t>
class UdpHeader : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = udp::kHdrLen, kCheckOffset = udp::kCheckOffset;
  static Result<UdpHeader> parse(std::span<B> s) {
    if (s.size() < kLen) return truncated(HeaderKind::Udp, 0, s.size(), kLen);
    return UdpHeader(s.data());
  }
  /// No checks: the caller has proven 8 bytes at `p`. Zero cost.
  static constexpr UdpHeader unchecked(B* p) noexcept { return UdpHeader(p); }
  std::uint16_t source() const noexcept { return this->be16(0); }
  std::uint16_t dest() const noexcept { return this->be16(2); }
  /// Header + payload length in bytes (0 allowed on IPv6 jumbograms, RFC 2675 §4).
  std::uint16_t len() const noexcept { return this->be16(4); }
  std::uint16_t check() const noexcept { return this->be16(6); }
  void set_source(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(0, v); }
  void set_dest(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(2, v); }
  void set_len(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(4, v); }
  void set_check(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(6, v); }

 private:
  constexpr explicit UdpHeader(B* p) : ViewBase<B>(p, kLen) {}
};

/// ICMP / ICMPv6 common 4 bytes: type, code, checksum (RFC 792, RFC 4443 §2.1).
template <ByteT B = const std::uint8_t>
class IcmpHeader : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = 4, kCheckOffset = 2;
  static Result<IcmpHeader> parse(std::span<B> s, HeaderKind kind = HeaderKind::Icmp) {
    if (s.size() < kLen) return truncated(kind, 0, s.size(), kLen);
    return IcmpHeader(s.data());
  }
  std::uint8_t type() const noexcept { return this->u8(0); }
  std::uint8_t code() const noexcept { return this->u8(1); }
  std::uint16_t check() const noexcept { return this->be16(2); }
  void set_check(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(2, v); }

 private:
  explicit IcmpHeader(B* p) : ViewBase<B>(p, kLen) {}
};

// ============================== emit (Repr → bytes) =========================================
// Checksums are the caller's: emit() writes `check` as given (0 by default). To fill it,
// emit the header, place the payload after it, then store l4_checksum_v4/_v6(...) over the
// whole segment with the field still 0 (for UDP apply csum::udp_csum_mangle, RFC 768 / C-14),
// or for CHECKSUM_PARTIAL store the folded pseudo-header seed instead (l4_pseudo_seed_*).

/// TCP header value (RFC 9293 §3.1). doff follows from the options.
struct TcpRepr {
  std::uint16_t source = 0, dest = 0;
  std::uint32_t seq = 0, ack_seq = 0;
  std::uint8_t flags = 0;   ///< tcp_flag::*
  bool ae = false;          ///< byte 12 bit 0
  std::uint16_t window = 0;
  std::uint16_t check = 0;  ///< written as given (see above)
  std::uint16_t urg_ptr = 0;
  std::span<const std::uint8_t> options{};  ///< raw option bytes incl. padding, multiple of 4, <= 40
  std::size_t length() const noexcept { return tcp::kMinLen + options.size(); }
  template <ByteT B>
  static TcpRepr from(const TcpHeader<B>& h) noexcept {
    return {h.source(), h.dest(), h.seq(), h.ack_seq(), h.flags(), h.ae(), h.window(),
            h.check(), h.urg_ptr(), h.options()};
  }
  /// Returns length(), or 0 when `out` is too small or the options are not a multiple of 4
  /// up to 40 bytes. Reserved bits are written as zero.
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;
};

/// UDP header value (RFC 768).
struct UdpRepr {
  std::uint16_t source = 0, dest = 0;
  std::uint16_t len = 0;    ///< header + payload bytes (0 on IPv6 jumbograms, RFC 2675 §4)
  std::uint16_t check = 0;  ///< written as given (0 = no checksum on IPv4)
  static constexpr std::size_t length() noexcept { return udp::kHdrLen; }
  template <ByteT B>
  static UdpRepr from(const UdpHeader<B>& h) noexcept {
    return {h.source(), h.dest(), h.len(), h.check()};
  }
  /// Returns 8, or 0 when `out` is shorter.
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;
};

/// Internet checksum of a TCP/UDP segment (header + payload, its check field as it stands,
/// normally 0) under the IPv4 pseudo-header (RFC 9293 §3.1, RFC 768): the value to store in
/// the check field. Addresses host order. Via core csum_partial / csum_tcpudp_magic.
std::uint16_t l4_checksum_v4(std::uint32_t saddr, std::uint32_t daddr, std::uint8_t proto,
                             std::span<const std::uint8_t> segment) noexcept;
/// Same under the IPv6 pseudo-header (RFC 8200 §8.1), upper-layer length = segment size.
std::uint16_t l4_checksum_v6(const std::array<std::uint8_t, 16>& saddr,
                             const std::array<std::uint8_t, 16>& daddr, std::uint8_t proto,
                             std::span<const std::uint8_t> segment) noexcept;
/// The folded, NOT complemented pseudo-header sum that a CHECKSUM_PARTIAL segment carries in
/// its check field (kernel ~csum_tcpudp_magic(..., 0) / ~csum_ipv6_magic(..., 0)); `l4_len`
/// = header + payload bytes.
std::uint16_t l4_pseudo_seed_v4(std::uint32_t saddr, std::uint32_t daddr, std::uint8_t proto,
                                std::uint32_t l4_len) noexcept;
std::uint16_t l4_pseudo_seed_v6(const std::array<std::uint8_t, 16>& saddr,
                                const std::array<std::uint8_t, 16>& daddr, std::uint8_t proto,
                                std::uint32_t l4_len) noexcept;

}  // namespace ofld::wire

// ofld/wire/l4.hpp — TCP (RFC 9293 §3.1) and UDP (RFC 768) headers.
//
// TCP offsets: sport 0, dport 2, seq 4, ack 8, doff(4)|res(3)|AE(1) 12, flags 13
// (CWR ECE URG ACK PSH RST SYN FIN, MSB first), window 14, check 16, urg_ptr 18,
// options 20..doff*4. UDP: sport 0, dport 2, len 4, check 6.
#pragma once

#include <optional>

#include "ofld/wire/error.hpp"
#include "ofld/wire/view.hpp"

namespace ofld::wire {

namespace tcp_flag {
inline constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10,
                              kUrg = 0x20, kEce = 0x40, kCwr = 0x80;
}
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
  static constexpr std::size_t kMinLen = 20, kCheckOffset = 16;
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
  TcpHeader(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

/// UDP header (8 bytes). The length field is checked against the datagram by parse_frame().
template <ByteT B = const std::uint8_t>
class UdpHeader : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = 8, kCheckOffset = 6;
  static Result<UdpHeader> parse(std::span<B> s) {
    if (s.size() < kLen) return truncated(HeaderKind::Udp, 0, s.size(), kLen);
    return UdpHeader(s.data());
  }
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
  explicit UdpHeader(B* p) : ViewBase<B>(p, kLen) {}
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

}  // namespace ofld::wire

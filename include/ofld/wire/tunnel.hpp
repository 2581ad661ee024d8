// ofld/wire/tunnel.hpp — tunnel headers: VXLAN (+RCO), GUE, GRE, ERSPAN II/III, Geneve.
//
// Each header has a read/write view (static parse → Result) and a small value type with
// emit() that writes the header into a buffer (returns bytes written, or 0 if it does not
// fit). Sources: RFC 7348 + draft-herbert-vxlan-rco (spec V-1..V-5), draft-ietf-intarea-gue
// and Linux include/net/gue.h (V-6..V-10), RFC 2784/2890 (V-12, V-13), Linux
// include/net/erspan.h (V-14..V-17), RFC 8926 §3.4 (Geneve).
#pragma once

#include <optional>

#include "ofld/wire/error.hpp"
#include "ofld/wire/numbers.hpp"
#include "ofld/wire/view.hpp"

namespace ofld::wire {

// ============================== VXLAN ==========================================================

namespace vxlan {
inline constexpr std::size_t kLen = 8;
inline constexpr std::size_t kHlen = 16;  ///< VXLAN_HLEN: UDP + VXLAN (V-4)
/// Field offsets (RFC 7348 §5): flags word 0..3, VNI 4..6, reserved / RCO data byte 7.
inline constexpr std::size_t kFlagsOffset = 0, kVniOffset = 4, kRcoOffset = 7;
/// Outer headers + VXLAN over IPv4 / IPv6 (Ethernet 14 + IP + UDP 8 + VXLAN 8): the MTU
/// overhead of a VXLAN device (kernel VXLAN_HEADROOM / VXLAN6_HEADROOM).
inline constexpr std::size_t kHeadroom4 = 50, kHeadroom6 = 70;
inline constexpr std::uint32_t kVniMax = 0x00ffffffu;
/// word0 flag masks (host-order value of the first 32-bit word).
inline constexpr std::uint32_t kFlagVni = 0x08000000u;  ///< I bit
inline constexpr std::uint32_t kFlagRco = 0x00200000u;  ///< V-1: bit 21 from the LSB
inline constexpr std::uint32_t kFlagGbp = 0x80000000u;  ///< G (group policy) extension
inline constexpr std::uint32_t kFlagGpe = 0x04000000u;  ///< P (VXLAN-GPE next protocol)
/// word0 of a plain header as Linux sends it: I flag only, reserved zero.
inline constexpr std::uint32_t kWord0Vni = kFlagVni;
/// Flag bits Linux accepts with RCO enabled (V-4); every other bit of word0 is reserved.
inline constexpr std::uint32_t kFlagsKnown = kFlagVni | kFlagRco;
/// RCO byte (low byte of word1): bit 7 = UDP (csum at start+6), bits 0..6 = start >> 1 (V-2).
inline constexpr std::uint8_t kRcoUdp = 0x80, kRcoStartMask = 0x7f;

/// Decoded remote checksum offload data (V-3): `start` counted from the first byte after
/// the VXLAN header; `csum_offset` = 6 (UDP) or 16 (TCP), relative to start.
struct Rco {
  std::uint16_t start = 0;
  std::uint16_t csum_offset = 0;
  /// Offset of the checksum field from the end of the VXLAN header (V-3 "offset").
  constexpr std::uint32_t field() const noexcept { return std::uint32_t(start) + csum_offset; }
  friend constexpr bool operator==(const Rco&, const Rco&) = default;
};
/// V-3 decode: start = (b & 0x7F) << 1; csum_offset = b & 0x80 ? 6 : 16.
constexpr Rco rco_decode(std::uint8_t b) noexcept {
  return Rco{std::uint16_t((b & kRcoStartMask) << 1), std::uint16_t((b & kRcoUdp) ? 6 : 16)};
}
/// V-3 encode: byte = (start >> 1) | (csum_offset == 6 ? 0x80 : 0). Empty when start is odd or
/// > 254, or csum_offset is neither 6 (UDP) nor 16 (TCP) — the draft cannot express those.
constexpr std::optional<std::uint8_t> rco_encode(std::uint32_t start,
                                                 std::uint32_t csum_offset) noexcept {
  if ((start & 1) || start > 254 || (csum_offset != 6 && csum_offset != 16)) return std::nullopt;
  return std::uint8_t((start >> 1) | (csum_offset == 6 ? kRcoUdp : 0));
}
}  // namespace vxlan

/// VXLAN header view (8 bytes).
template <ByteT B = const std::uint8_t>
class VxlanHeader : public ViewBase<B> {
 public:
  static Result<VxlanHeader> parse(std::span<B> s) {
    if (s.size() < vxlan::kLen) return truncated(HeaderKind::Vxlan, 0, s.size(), vxlan::kLen);
    return VxlanHeader(s.data());
  }
  /// No checks: the caller has proven 8 bytes at `p`. Zero cost.
  static constexpr VxlanHeader unchecked(B* p) noexcept { return VxlanHeader(p); }
  /// First 32-bit word (flags + reserved), host order.
  std::uint32_t word0() const noexcept { return this->be32(0); }
  /// Second word: VNI(24) | low byte (reserved, or RCO data).
  std::uint32_t word1() const noexcept { return this->be32(4); }
  std::uint8_t flags() const noexcept { return this->u8(0); }
  bool vni_valid() const noexcept { return word0() & vxlan::kFlagVni; }
  bool rco() const noexcept { return word0() & vxlan::kFlagRco; }
  std::uint32_t vni() const noexcept { return this->be24(4); }
  std::uint8_t low_byte() const noexcept { return this->u8(7); }
  vxlan::Rco rco_data() const noexcept { return vxlan::rco_decode(low_byte()); }
  void set_vni(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable { this->w24(4, v); }
  void set_word0(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable { this->w32(0, v); }
  void set_low_byte(std::uint8_t v) const noexcept requires ViewBase<B>::kMutable { this->w8(7, v); }

 private:
  constexpr explicit VxlanHeader(B* p) : ViewBase<B>(p, vxlan::kLen) {}
};

/// VXLAN header value (RFC 7348 §5).
struct VxlanRepr {
  std::uint32_t vni = 0;
  std::optional<vxlan::Rco> rco;  ///< sets the RCO flag and low byte when present
  static constexpr std::size_t length() noexcept { return vxlan::kLen; }
  /// Fields of a parsed header (the RCO data only when the RCO flag is set; other flag bits
  /// and reserved bytes are not represented: emit() writes them as zero, RFC 7348 §5).
  template <ByteT B>
  static VxlanRepr from(const VxlanHeader<B>& h) noexcept {
    VxlanRepr r{h.vni(), std::nullopt};
    if (h.rco()) r.rco = h.rco_data();
    return r;
  }
  /// Writes 8 bytes (I flag set). Returns 8, or 0 if `out` is too small or rco unencodable.
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;
};

// ============================== GUE =============================================================

namespace gue {
inline constexpr std::size_t kBaseLen = 4;
/// Byte 0: version (2 bits) | C (control) | hlen (5 bits, optional fields in 32-bit words).
inline constexpr std::uint8_t kVersionMask = 0xc0, kControl = 0x20, kHlenMask = 0x1f;
inline constexpr unsigned kVersionShift = 6;
/// Field offsets: byte 0 as above, proto/ctype 1, flags 2..3, optional fields from 4.
inline constexpr std::size_t kProtoOffset = 1, kFlagsOffset = 2, kOptionsOffset = 4;
/// With P set and REMCSUM: private flags at 4..7, RCO option start 8..9, offset 10..11 (V-8).
inline constexpr std::size_t kPrivOffset = 4, kRcoStartOffset = 8, kRcoOffsetOffset = 10;
inline constexpr std::size_t kRcoHdrLen = 12;  ///< base + private flags + RCO option
/// GUE version 1 (direct IP, V-7): the first nibble of the payload is 4 or 6 → version bits 01.
inline constexpr std::uint8_t kVersion1 = 1;
inline constexpr std::uint16_t kFlagPriv = 0x0001;        ///< V-8: standard flag P (bit 0)
inline constexpr std::uint16_t kFlagsAll = kFlagPriv;     ///< all standard flags Linux knows
inline constexpr std::size_t kLenPriv = 4;                ///< private-flags word
inline constexpr std::uint32_t kPflagRemcsum = 0x80000000u;  ///< V-8 private flag REMCSUM
inline constexpr std::uint32_t kPflagsAll = kPflagRemcsum;
inline constexpr std::size_t kPlenRemcsum = 4;            ///< RCO option: start(16) offset(16)
}  // namespace gue

/// GUE variant-0 header view (4 + hlen*4 bytes). parse() applies the V-9 validation.
/// Version-1 GUE (direct IP) has no header: parse() returns BadVersion 1 for it; parse_frame
/// handles it by looking at the first nibble (V-7).
template <ByteT B = const std::uint8_t>
class GueHeader : public ViewBase<B> {
 public:
  /// Errors: Truncated, BadVersion (!= 0), HeaderPastEnd (hlen*4 beyond data), BadFlags
  /// (unknown standard or private flag, V-9), BadOption (options longer than hlen*4, V-9),
  /// BadRcoOffset (RCO offset < start, V-9). Control messages (C=1) are not validated
  /// beyond the length.
  static Result<GueHeader> parse(std::span<B> s);
  /// No checks (no V-9 validation either): the caller has proven 4 + hlen*4 bytes at `p`.
  static constexpr GueHeader unchecked(B* p) noexcept {
    return GueHeader(p, gue::kBaseLen + std::size_t(p[0] & gue::kHlenMask) * 4);
  }

  std::uint8_t version() const noexcept { return this->u8(0) >> 6; }
  bool control() const noexcept { return this->u8(0) & 0x20; }
  /// Optional-field length in 32-bit words (base header excluded).
  std::uint8_t hlen() const noexcept { return this->u8(0) & 0x1f; }
  /// IP protocol of the payload (C=0) or control type (C=1).
  std::uint8_t proto_ctype() const noexcept { return this->u8(1); }
  std::uint16_t flags() const noexcept { return this->be16(2); }
  bool has_priv() const noexcept { return flags() & gue::kFlagPriv; }
  /// Private flags word (0 when P is clear, for a control message — whose flags parse() does
  /// not validate, V-9 — and when the header is too short to hold it).
  std::uint32_t priv_flags() const noexcept {
    return has_priv() && !control() && this->header_len() >= gue::kBaseLen + gue::kLenPriv ? this->be32(4) : 0;
  }
  bool has_remcsum() const noexcept { return priv_flags() & gue::kPflagRemcsum; }
  /// RCO option (V-8): start and offset from the end of the GUE header; empty when absent.
  struct Remcsum { std::uint16_t start, offset; };
  std::optional<Remcsum> remcsum() const noexcept {
    if (!has_remcsum() || this->header_len() < gue::kBaseLen + gue::kLenPriv + gue::kPlenRemcsum) return std::nullopt;
    return Remcsum{this->be16(8), this->be16(10)};
  }

 private:
  constexpr GueHeader(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

namespace detail {
/// V-9 validation on raw bytes; returns the header length or an error.
Result<std::size_t> check_gue(std::span<const std::uint8_t> s);
}  // namespace detail

template <ByteT B>
Result<GueHeader<B>> GueHeader<B>::parse(std::span<B> s) {
  auto r = detail::check_gue(std::span<const std::uint8_t>(s.data(), s.size()));
  if (!r) return r.error();
  return GueHeader(s.data(), r.value());
}

/// GUE variant-0 header value as Linux builds it (V-10): bare 4-byte header, or with the
/// private-flags word + RCO option (12 bytes, hlen 2) when remcsum is set.
struct GueRepr {
  std::uint8_t proto = 0;
  std::optional<GueHeader<>::Remcsum> remcsum;
  std::size_t length() const noexcept { return remcsum ? gue::kRcoHdrLen : gue::kBaseLen; }
  /// Fields of a parsed data (C=0) header; options other than REMCSUM are not represented.
  template <ByteT B>
  static GueRepr from(const GueHeader<B>& h) noexcept {
    GueRepr r{h.proto_ctype(), std::nullopt};
    if (auto rc = h.remcsum()) r.remcsum = GueHeader<>::Remcsum{rc->start, rc->offset};
    return r;
  }
  /// Returns bytes written or 0 when `out` is too small.
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;
};

// ============================== GRE =============================================================

namespace gre {
/// V-12 masks on the first 16-bit word (host-order value).
inline constexpr std::uint16_t kCsum = 0x8000, kRouting = 0x4000, kKey = 0x2000, kSeq = 0x1000,
                               kStrict = 0x0800, kRecMask = 0x0700, kAck = 0x0080,
                               kFlagsMask = 0x0078, kVersionMask = 0x0007;
inline constexpr std::size_t kBaseLen = 4, kSectionLen = 4;  ///< GRE_HEADER_SECTION
inline constexpr std::size_t kCsumOffset = 4;                ///< V-13 GSO csum offset
/// Field offsets: flags|version 0..1, protocol 2..3, then C (csum+reserved1), K, S in order.
inline constexpr std::size_t kFlagsOffset = 0, kProtoOffset = 2;
inline constexpr std::size_t kMaxLen = 16;  ///< version 0 with C, K and S
}  // namespace gre

/// GRE header view (RFC 2784 + RFC 2890 key/sequence; version 1 = PPTP with ack, RFC 2637).
/// Length = 4 + 4·C + 4·K + 4·S (+ 4·A for version 1) — V-13 field order: checksum+reserved1,
/// key, sequence (, ack). With R set the RFC 1701 routing list is not walked: parse_frame
/// records the header and stops (GreRouting).
template <ByteT B = const std::uint8_t>
class GreHeader : public ViewBase<B> {
 public:
  static Result<GreHeader> parse(std::span<B> s) {
    if (s.size() < gre::kBaseLen) return truncated(HeaderKind::Gre, 0, s.size(), gre::kBaseLen);
    std::size_t n = length_for(load_be16(s.data()));
    if (n > s.size()) return truncated(HeaderKind::Gre, 0, s.size(), n);
    return GreHeader(s.data(), n);
  }
  /// No checks: the caller has proven length_for(flags) bytes at `p`.
  static constexpr GreHeader unchecked(B* p) noexcept { return GreHeader(p, length_for(load_be16(p))); }
  /// Header length implied by the flags word.
  static constexpr std::size_t length_for(std::uint16_t fw) noexcept {
    std::size_t n = gre::kBaseLen;
    if (fw & (gre::kCsum | gre::kRouting)) n += gre::kSectionLen;
    if (fw & gre::kKey) n += gre::kSectionLen;
    if (fw & gre::kSeq) n += gre::kSectionLen;
    if ((fw & gre::kVersionMask) == 1 && (fw & gre::kAck)) n += gre::kSectionLen;
    return n;
  }
  std::uint16_t flags_word() const noexcept { return this->be16(0); }
  bool csum_present() const noexcept { return flags_word() & gre::kCsum; }
  bool routing_present() const noexcept { return flags_word() & gre::kRouting; }
  bool key_present() const noexcept { return flags_word() & gre::kKey; }
  bool seq_present() const noexcept { return flags_word() & gre::kSeq; }
  bool ack_present() const noexcept { return version() == 1 && (flags_word() & gre::kAck); }
  std::uint8_t version() const noexcept { return flags_word() & gre::kVersionMask; }
  std::uint16_t protocol() const noexcept { return this->be16(2); }
  /// Offset of the key / sequence / ack fields within the header (valid when present).
  std::size_t key_offset() const noexcept { return 4 + (flags_word() & (gre::kCsum | gre::kRouting) ? 4 : 0); }
  std::size_t seq_offset() const noexcept { return key_offset() + (key_present() ? 4 : 0); }
  std::size_t ack_offset() const noexcept { return seq_offset() + (seq_present() ? 4 : 0); }
  std::optional<std::uint16_t> checksum() const noexcept {
    if (!csum_present()) return std::nullopt;
    return this->be16(gre::kCsumOffset);
  }
  std::optional<std::uint32_t> key() const noexcept {
    if (!key_present()) return std::nullopt;
    return this->be32(key_offset());
  }
  std::optional<std::uint32_t> seq() const noexcept {
    if (!seq_present()) return std::nullopt;
    return this->be32(seq_offset());
  }
  std::optional<std::uint32_t> ack() const noexcept {
    if (!ack_present()) return std::nullopt;
    return this->be32(ack_offset());
  }
  /// Writes the checksum field (only meaningful when C is set; no-op otherwise).
  void set_check(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable {
    if (csum_present()) this->w16(gre::kCsumOffset, v);
  }
  void set_protocol(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(2, v); }
  void set_seq(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable {
    if (seq_present()) this->w32(seq_offset(), v);
  }

 private:
  constexpr GreHeader(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

/// GRE version-0 header value (RFC 2784/2890).
struct GreRepr {
  std::uint16_t protocol = 0;
  std::optional<std::uint16_t> checksum;  ///< C flag; value written as given (0 = to fill)
  std::optional<std::uint32_t> key;       ///< K flag
  std::optional<std::uint32_t> seq;       ///< S flag
  std::size_t length() const noexcept {
    return gre::kBaseLen + (checksum ? gre::kSectionLen : 0) + (key ? gre::kSectionLen : 0) +
           (seq ? gre::kSectionLen : 0);
  }
  /// Fields of a parsed version-0 header without R (reserved bits are not represented).
  template <ByteT B>
  static GreRepr from(const GreHeader<B>& h) noexcept {
    return {h.protocol(), h.checksum(), h.key(), h.seq()};
  }
  /// Returns bytes written or 0 when `out` is too small.
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;
};

// ============================== ERSPAN ==========================================================

namespace erspan {
inline constexpr std::size_t kIILen = 8, kIIILen = 12, kPlatformLen = 8;
inline constexpr std::size_t kV1MdSize = 4, kV2MdSize = 8;  ///< V-17
inline constexpr std::uint8_t kVersionII = 1, kVersionIII = 2;
}  // namespace erspan

/// ERSPAN type II header view (V-15): Ver(4) VLAN(12) | COS(3) En(2) T(1) SessionID(10) |
/// Reserved(12) Index(20).
template <ByteT B = const std::uint8_t>
class ErspanIIHeader : public ViewBase<B> {
 public:
  /// Errors: Truncated, BadVersion (ver != 1).
  static Result<ErspanIIHeader> parse(std::span<B> s) {
    if (s.size() < erspan::kIILen) return truncated(HeaderKind::ErspanII, 0, s.size(), erspan::kIILen);
    unsigned v = s[0] >> 4;
    if (v != erspan::kVersionII) return ParseError{HeaderKind::ErspanII, Errc::BadVersion, 0, v, 1};
    return ErspanIIHeader(s.data());
  }
  std::uint8_t ver() const noexcept { return this->u8(0) >> 4; }
  std::uint16_t vlan() const noexcept { return this->be16(0) & 0x0fff; }
  std::uint8_t cos() const noexcept { return this->u8(2) >> 5; }
  std::uint8_t en() const noexcept { return (this->u8(2) >> 3) & 3; }
  bool t() const noexcept { return (this->u8(2) >> 2) & 1; }
  std::uint16_t session_id() const noexcept { return this->be16(2) & 0x03ff; }
  std::uint32_t index() const noexcept { return this->be32(4) & 0xfffff; }

 private:
  explicit ErspanIIHeader(B* p) : ViewBase<B>(p, erspan::kIILen) {}
};

/// ERSPAN type III header view (V-16): Ver VLAN | COS BSO T SessionID | Timestamp(32) |
/// SGT(16) P(1) FT(5) HwID(6) D(1) Gra(2) O(1) [| 8-byte platform sub-header if O].
template <ByteT B = const std::uint8_t>
class ErspanIIIHeader : public ViewBase<B> {
 public:
  /// Errors: Truncated (incl. the platform sub-header when O=1), BadVersion (ver != 2).
  static Result<ErspanIIIHeader> parse(std::span<B> s) {
    if (s.size() < erspan::kIIILen) return truncated(HeaderKind::ErspanIII, 0, s.size(), erspan::kIIILen);
    unsigned v = s[0] >> 4;
    if (v != erspan::kVersionIII) return ParseError{HeaderKind::ErspanIII, Errc::BadVersion, 0, v, 2};
    std::size_t n = erspan::kIIILen + ((s[11] & 1) ? erspan::kPlatformLen : 0);
    if (n > s.size()) return truncated(HeaderKind::ErspanIII, 0, s.size(), n);
    return ErspanIIIHeader(s.data(), n);
  }
  std::uint8_t ver() const noexcept { return this->u8(0) >> 4; }
  std::uint16_t vlan() const noexcept { return this->be16(0) & 0x0fff; }
  std::uint8_t cos() const noexcept { return this->u8(2) >> 5; }
  std::uint8_t bso() const noexcept { return (this->u8(2) >> 3) & 3; }
  bool t() const noexcept { return (this->u8(2) >> 2) & 1; }
  std::uint16_t session_id() const noexcept { return this->be16(2) & 0x03ff; }
  std::uint32_t timestamp() const noexcept { return this->be32(4); }
  std::uint16_t sgt() const noexcept { return this->be16(8); }
  bool p() const noexcept { return this->u8(10) >> 7; }
  /// Frame type: 0 = Ethernet, 2 = IP.
  std::uint8_t ft() const noexcept { return (this->u8(10) >> 2) & 0x1f; }
  std::uint8_t hw_id() const noexcept { return std::uint8_t(((this->u8(10) & 3) << 4) | (this->u8(11) >> 4)); }
  bool d() const noexcept { return (this->u8(11) >> 3) & 1; }
  std::uint8_t gra() const noexcept { return (this->u8(11) >> 1) & 3; }
  bool o() const noexcept { return this->u8(11) & 1; }
  /// Platform sub-header id (6 MSBs of its first byte); 0 when O=0.
  std::uint8_t platform_id() const noexcept { return o() ? this->u8(12) >> 2 : 0; }

 private:
  ErspanIIIHeader(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

/// ERSPAN II / III values for emit() (bit positions as in the views above).
struct ErspanIIRepr {
  std::uint16_t vlan = 0, session_id = 0;
  std::uint8_t cos = 0, en = 0;
  bool t = false;
  std::uint32_t index = 0;
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;  ///< 8 or 0
};
struct ErspanIIIRepr {
  std::uint16_t vlan = 0, session_id = 0, sgt = 0;
  std::uint8_t cos = 0, bso = 0, ft = 0, hw_id = 0, gra = 0;
  bool t = false, p = false, d = false;
  std::uint32_t timestamp = 0;
  std::optional<std::uint64_t> platform;  ///< sets O and appends the 8-byte sub-header
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;  ///< 12/20 or 0
};

// ============================== Geneve ==========================================================

namespace geneve {
inline constexpr std::size_t kBaseLen = 8, kOptHdrLen = 4;
/// Largest header: 8 bytes + Opt Len 63 × 4 = 260 bytes (RFC 8926 §3.4).
inline constexpr std::size_t kMaxLen = kBaseLen + 63 * 4;
inline constexpr unsigned kVersion = 0;  ///< the only version RFC 8926 defines
/// Byte 1 flag masks: O (control/OAM packet) and C (critical options present).
inline constexpr std::uint8_t kFlagOam = 0x80, kFlagCritical = 0x40;
/// An option's type byte with this bit set is critical (RFC 8926 §3.5.1).
inline constexpr std::uint8_t kOptTypeCritical = 0x80;
/// Overhead of Ethernet 14 + IPv4 20 / IPv6 40 + UDP 8 + Geneve 8 without options: the MTU
/// headroom of a Linux geneve device (GENEVE_IPV4_HLEN / GENEVE_IPV6_HLEN plus Ethernet).
inline constexpr std::size_t kHeadroom4 = 50, kHeadroom6 = 70;
}

/// Geneve header view (RFC 8926 §3.4): Ver(2) OptLen(6) | O C Rsvd(6) | Protocol Type(16) |
/// VNI(24) Reserved(8) | options (OptLen × 4 bytes).
template <ByteT B = const std::uint8_t>
class GeneveHeader : public ViewBase<B> {
 public:
  /// Errors: Truncated (< 8 or < 8 + opt_len*4), BadVersion (!= 0).
  static Result<GeneveHeader> parse(std::span<B> s) {
    if (s.size() < geneve::kBaseLen) return truncated(HeaderKind::Geneve, 0, s.size(), geneve::kBaseLen);
    unsigned v = s[0] >> 6;
    if (v != 0) return ParseError{HeaderKind::Geneve, Errc::BadVersion, 0, v, 0};
    std::size_t n = geneve::kBaseLen + std::size_t(s[0] & 0x3f) * 4;
    if (n > s.size()) return truncated(HeaderKind::Geneve, 0, s.size(), n);
    return GeneveHeader(s.data(), n);
  }
  /// A view over a header the caller has checked: at least 8 bytes, and 8 + Opt Len × 4
  /// bytes present (the length taken from p[0] without a bound).
  static constexpr GeneveHeader unchecked(B* p) noexcept {
    return GeneveHeader(p, geneve::kBaseLen + std::size_t(p[0] & 0x3f) * 4);
  }
  std::uint8_t version() const noexcept { return this->u8(0) >> 6; }
  /// Option length in 4-byte words.
  std::uint8_t opt_len() const noexcept { return this->u8(0) & 0x3f; }
  bool oam() const noexcept { return this->u8(1) & geneve::kFlagOam; }
  bool critical() const noexcept { return this->u8(1) & geneve::kFlagCritical; }
  std::uint16_t protocol() const noexcept { return this->be16(2); }
  std::uint32_t vni() const noexcept { return this->be24(4); }
  std::span<B> options() const noexcept { return this->header().subspan(geneve::kBaseLen); }
  /// Walk options: f(opt_class, type, data span). False if an option overruns opt_len.
  template <class F>
  bool for_each_option(F&& f) const {
    auto o = options();
    std::size_t i = 0;
    while (i < o.size()) {
      if (i + geneve::kOptHdrLen > o.size()) return false;
      std::size_t dl = std::size_t(o[i + 3] & 0x1f) * 4;
      if (i + geneve::kOptHdrLen + dl > o.size()) return false;
      f(load_be16(&o[i]), o[i + 2], o.subspan(i + geneve::kOptHdrLen, dl));
      i += geneve::kOptHdrLen + dl;
    }
    return true;
  }
  void set_vni(std::uint32_t v) const noexcept requires ViewBase<B>::kMutable { this->w24(4, v); }

 private:
  constexpr GeneveHeader(B* p, std::size_t n) : ViewBase<B>(p, n) {}
};

/// Geneve base header value (no options).
struct GeneveRepr {
  std::uint16_t protocol = 0x6558;
  std::uint32_t vni = 0;
  bool oam = false, critical = false;
  std::size_t emit(std::span<std::uint8_t> out) const noexcept;  ///< 8 or 0
};

}  // namespace ofld::wire

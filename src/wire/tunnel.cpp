// Tunnel header validation (GUE V-9) and emitters (VXLAN, GUE, GRE, ERSPAN, Geneve).
#include "ofld/wire/tunnel.hpp"

namespace ofld::wire {

namespace detail {

// Mirrors the rules of Linux validate_gue_flags() (spec V-9) plus the RCO start/offset check
// done on receive (offset must not precede start). Returns the full header length.
Result<std::size_t> check_gue(std::span<const std::uint8_t> s) {
  if (s.size() < gue::kBaseLen) return truncated(HeaderKind::Gue, 0, s.size(), gue::kBaseLen);
  const unsigned ver = s[0] >> 6;
  if (ver != 0) return ParseError{HeaderKind::Gue, Errc::BadVersion, 0, ver, 0};
  const std::size_t optlen = std::size_t(s[0] & 0x1f) * 4;
  const std::size_t n = gue::kBaseLen + optlen;
  if (n > s.size()) return truncated(HeaderKind::Gue, 0, s.size(), n);
  if (s[0] & 0x20) return n;  // control message: no flag validation

  const std::uint16_t flags = load_be16(&s[2]);
  if (flags & ~gue::kFlagsAll) return ParseError{HeaderKind::Gue, Errc::BadFlags, 0, flags, 0};
  std::size_t len = (flags & gue::kFlagPriv) ? gue::kLenPriv : 0;  // standard-flag fields
  if (len > optlen)
    return ParseError{HeaderKind::Gue, Errc::BadOption, 0, std::uint32_t(len), std::uint32_t(optlen)};
  if (flags & gue::kFlagPriv) {
    // private flags are the last 4 bytes of the standard-flag fields (V-8)
    const std::uint32_t pflags = load_be32(&s[gue::kBaseLen + len - gue::kLenPriv]);
    if (pflags & ~gue::kPflagsAll)
      return ParseError{HeaderKind::Gue, Errc::BadFlags, 0, pflags, 0};
    const std::size_t rco_at = gue::kBaseLen + len;
    if (pflags & gue::kPflagRemcsum) len += gue::kPlenRemcsum;
    if (len > optlen)
      return ParseError{HeaderKind::Gue, Errc::BadOption, 0, std::uint32_t(len),
                        std::uint32_t(optlen)};
    if (pflags & gue::kPflagRemcsum) {
      const std::uint16_t start = load_be16(&s[rco_at]), off = load_be16(&s[rco_at + 2]);
      if (off < start) return ParseError{HeaderKind::Gue, Errc::BadRcoOffset, 0, off, start};
    }
  }
  return n;
}

}  // namespace detail

std::size_t VxlanRepr::emit(std::span<std::uint8_t> out) const noexcept {
  if (out.size() < vxlan::kLen) return 0;
  std::uint32_t w0 = vxlan::kFlagVni;
  std::uint8_t low = 0;
  if (rco) {
    auto b = vxlan::rco_encode(rco->start, rco->csum_offset);
    if (!b) return 0;
    w0 |= vxlan::kFlagRco;
    low = *b;
  }
  store_be32(out.data(), w0);
  store_be24(out.data() + 4, vni);
  out[7] = low;
  return vxlan::kLen;
}

std::size_t GueRepr::emit(std::span<std::uint8_t> out) const noexcept {
  const std::size_t n = length();
  if (out.size() < n) return 0;
  out[0] = std::uint8_t(((n - 4) / 4) & 0x1f);  // ver 0, C 0, hlen
  out[1] = proto;
  store_be16(&out[2], remcsum ? gue::kFlagPriv : 0);
  if (remcsum) {
    store_be32(&out[4], gue::kPflagRemcsum);
    store_be16(&out[8], remcsum->start);
    store_be16(&out[10], remcsum->offset);
  }
  return n;
}

std::size_t GreRepr::emit(std::span<std::uint8_t> out) const noexcept {
  const std::size_t n = length();
  if (out.size() < n) return 0;
  std::uint16_t fw = 0;
  if (checksum) fw |= gre::kCsum;
  if (key) fw |= gre::kKey;
  if (seq) fw |= gre::kSeq;
  store_be16(&out[0], fw);
  store_be16(&out[2], protocol);
  std::size_t o = 4;
  if (checksum) {  // V-13 order: checksum + reserved1, key, sequence
    store_be16(&out[o], *checksum);
    store_be16(&out[o + 2], 0);
    o += 4;
  }
  if (key) { store_be32(&out[o], *key); o += 4; }
  if (seq) { store_be32(&out[o], *seq); o += 4; }
  return o;
}

namespace {
void store_erspan_word0(std::uint8_t* p, unsigned ver, std::uint16_t vlan, std::uint8_t cos,
                        std::uint8_t en, bool t, std::uint16_t session) {
  store_be16(p, std::uint16_t((ver << 12) | (vlan & 0x0fff)));
  store_be16(p + 2, std::uint16_t(((cos & 7u) << 13) | ((en & 3u) << 11) | (t ? 1u << 10 : 0) |
                                  (session & 0x03ffu)));
}
}  // namespace

std::size_t ErspanIIRepr::emit(std::span<std::uint8_t> out) const noexcept {
  if (out.size() < erspan::kIILen) return 0;
  store_erspan_word0(out.data(), erspan::kVersionII, vlan, cos, en, t, session_id);
  store_be32(&out[4], index & 0xfffff);  // reserved(12) = 0
  return erspan::kIILen;
}

std::size_t ErspanIIIRepr::emit(std::span<std::uint8_t> out) const noexcept {
  const std::size_t n = erspan::kIIILen + (platform ? erspan::kPlatformLen : 0);
  if (out.size() < n) return 0;
  store_erspan_word0(out.data(), erspan::kVersionIII, vlan, cos, bso, t, session_id);
  store_be32(&out[4], timestamp);
  store_be16(&out[8], sgt);
  out[10] = std::uint8_t((p ? 0x80 : 0) | ((ft & 0x1f) << 2) | ((hw_id >> 4) & 3));
  out[11] = std::uint8_t(((hw_id & 0xf) << 4) | (d ? 0x08 : 0) | ((gra & 3) << 1) |
                         (platform ? 1 : 0));
  if (platform) {
    for (int i = 0; i < 8; ++i) out[12 + i] = std::uint8_t(*platform >> (56 - 8 * i));
  }
  return n;
}

std::size_t GeneveRepr::emit(std::span<std::uint8_t> out) const noexcept {
  if (out.size() < geneve::kBaseLen) return 0;
  out[0] = 0;  // ver 0, opt_len 0
  out[1] = std::uint8_t((oam ? 0x80 : 0) | (critical ? 0x40 : 0));
  store_be16(&out[2], protocol);
  store_be24(&out[4], vni);
  out[7] = 0;
  return geneve::kBaseLen;
}

}  // namespace ofld::wire

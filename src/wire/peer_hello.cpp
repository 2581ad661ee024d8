// Peer session messages, versions 2 and 1 (see ofld/wire/peer_hello.hpp and docs/peer-protocol.md).
#include "ofld/wire/peer_hello.hpp"

#include <algorithm>

#include "ofld/core/csum.hpp"

namespace ofld::wire::peer {

namespace {

void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = std::uint8_t(v >> 8);
  p[1] = std::uint8_t(v);
}
void put32(std::uint8_t* p, std::uint32_t v) {
  put16(p, std::uint16_t(v >> 16));
  put16(p + 2, std::uint16_t(v));
}
std::uint16_t get16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }
std::uint32_t get32(const std::uint8_t* p) { return std::uint32_t(get16(p)) << 16 | get16(p + 2); }

constexpr std::uint8_t kGreC = 0x80, kGreK = 0x20;

/// The prefix length when `d` starts with this encapsulation's control prefix; 0 otherwise.
std::size_t match_prefix(const Encap& e, std::span<const std::uint8_t> d) {
  if (e.gre_options) {
    // Only C and K may be set in byte 0; the rest of the base as described.
    if (d.size() < e.len || (d[0] & ~(kGreC | kGreK)) != e.bytes[0] ||
        !std::equal(d.data() + 1, d.data() + e.len, e.bytes.data() + 1))
      return 0;
    const std::size_t pl = e.len + ((d[0] & kGreC) ? 4 : 0) + ((d[0] & kGreK) ? 4 : 0);
    return d.size() >= pl ? pl : 0;
  }
  if (d.size() < e.len) return 0;
  return std::equal(d.data(), d.data() + e.len, e.bytes.data()) ? e.len : 0;
}

void put64(std::uint8_t* p, std::uint64_t v) {
  put32(p, std::uint32_t(v >> 32));
  put32(p + 4, std::uint32_t(v));
}
std::uint64_t get64(const std::uint8_t* p) {
  return std::uint64_t(get32(p)) << 32 | get32(p + 4);
}

}  // namespace

std::size_t prefix_len(Encap e, GreOptions g) noexcept {
  if (e.gre_options) return e.len + (g.csum ? 4 : 0) + (g.key.has_value() ? 4 : 0);
  return e.len;
}

std::size_t encode(const Msg& m, Encap e, std::span<std::uint8_t> out, GreOptions g,
                   const Signer* sign) {
  const bool v2 = m.version == kVersion;
  if (!v2 && m.version != kVersionLegacy) return 0;
  const bool with_mac = v2 && sign != nullptr && *sign;
  const std::size_t body = !v2 ? kBodyLenV1 : with_mac ? kBodyLenMac : kBodyLen;
  const std::size_t pl = prefix_len(e, g), n = pl + body;
  if (out.size() < n || m.epoch == 0 || (v2 && m.nonce == 0)) return 0;
  std::uint8_t* p = out.data();
  std::copy_n(e.bytes.data(), e.len, p);
  if (e.gre_options) {
    std::size_t o = e.len;
    if (g.csum) {
      p[0] |= kGreC;
      put32(p + o, 0);  // checksum + reserved1, filled below
      o += 4;
    }
    if (g.key.has_value()) {
      p[0] |= kGreK;
      put32(p + o, *g.key);
    }
  }
  std::uint8_t* b = p + pl;
  std::fill_n(b, body, std::uint8_t(0));
  put32(b, kMagic);
  b[4] = m.version;
  b[5] = std::uint8_t(m.type);
  put16(b + 6, std::uint16_t(body));
  put32(b + 8, m.epoch);
  put32(b + 12, m.peer_epoch);
  if (v2) {
    put64(b + 16, m.nonce);
    put64(b + 24, m.echo);
    put32(b + 32, m.caps & kCapsKnown);
    put16(b + 36, m.gso_size);
    put16(b + 38, m.mtu);
    if (with_mac) {
      b[40] = kFlagMac;
      (*sign)(std::span<const std::uint8_t>(b, kBodyLen), std::span<std::uint8_t>(b + kBodyLen, kMacLen));
    }
  } else {
    // v1: a HELLO carries its seq, an ACK the seq it answers, in the same field.
    put32(b + 16, std::uint32_t(m.type == MsgType::Hello ? m.nonce : m.echo));
    put32(b + 20, m.caps & kCapsKnown);
    put16(b + 24, m.gso_size);
    put16(b + 26, m.mtu);
  }
  if (e.gre_options && g.csum) put16(p + e.len, csum::ip_compute_csum(p, n));  // RFC 2784 §2.5
  return n;
}

Parsed parse(std::span<const std::uint8_t> d, Encap e) noexcept {
  Parsed r;
  const std::size_t pl = match_prefix(e, d);
  if (pl == 0 || d.size() < pl + 4 || get32(d.data() + pl) != kMagic) return r;  // NotControl
  // GRE checksum over the whole GRE packet: it must sum to 0xffff (RFC 2784 §2.5).
  if (e.gre_options && (d[0] & kGreC) &&
      csum::csum_fold(csum::csum_partial(d, 0)) != 0) {
    r.verdict = Verdict::BadChecksum;
    return r;
  }
  const auto b = d.subspan(pl);
  auto fail = [&](Verdict v) {
    r.verdict = v;
    return r;
  };
  if (b.size() < 8) return fail(Verdict::Truncated);
  const std::uint8_t ver = b[4];
  if (ver != kVersion && ver != kVersionLegacy) return fail(Verdict::BadVersion);
  const bool v2 = ver == kVersion;
  if (b[5] != std::uint8_t(MsgType::Hello) && b[5] != std::uint8_t(MsgType::HelloAck))
    return fail(Verdict::BadType);
  const std::size_t min_body = v2 ? kBodyLen : kBodyLenV1;
  if (b.size() < min_body) return fail(Verdict::Truncated);
  const std::uint16_t len = get16(b.data() + 6);
  const bool with_mac = v2 && (b[40] & kFlagMac);
  if (len < (with_mac ? kBodyLenMac : min_body)) return fail(Verdict::BadLength);
  if (len > b.size()) return fail(Verdict::Truncated);
  Msg m;
  m.version = ver;
  m.type = MsgType(b[5]);
  m.epoch = get32(b.data() + 8);
  m.peer_epoch = get32(b.data() + 12);
  if (v2) {
    m.nonce = get64(b.data() + 16);
    m.echo = get64(b.data() + 24);
    m.caps = get32(b.data() + 32) & kCapsKnown;
    m.gso_size = get16(b.data() + 36);
    m.mtu = get16(b.data() + 38);
    m.mac = with_mac;
  } else {
    const std::uint32_t seq = get32(b.data() + 16);
    (m.type == MsgType::Hello ? m.nonce : m.echo) = seq;
    m.caps = get32(b.data() + 20) & kCapsKnown;
    m.gso_size = get16(b.data() + 24);
    m.mtu = get16(b.data() + 26);
  }
  if (m.epoch == 0) return fail(Verdict::ZeroEpoch);
  if (v2 && m.nonce == 0) return fail(Verdict::ZeroNonce);
  r.verdict = Verdict::Ok;
  r.msg = m;
  if (v2) {
    r.authed = b.first(kBodyLen);
    if (with_mac) r.mac = b.subspan(kBodyLen, kMacLen);
  }
  return r;
}

std::string_view to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::NotControl: return "not_control";
    case Verdict::Ok: return "ok";
    case Verdict::Truncated: return "truncated";
    case Verdict::BadVersion: return "bad_version";
    case Verdict::BadType: return "bad_type";
    case Verdict::BadLength: return "bad_length";
    case Verdict::ZeroEpoch: return "zero_epoch";
    case Verdict::BadChecksum: return "bad_checksum";
    case Verdict::ZeroNonce: return "zero_nonce";
  }
  return "unknown";
}

}  // namespace ofld::wire::peer

// Peer session messages (see ofld/wire/peer_hello.hpp and docs/peer-protocol.md).
#include "ofld/wire/peer_hello.hpp"

#include <algorithm>

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

/// The control prefix of each encapsulation (see the header).
void write_prefix(Encap e, std::uint8_t* p) {
  switch (e) {
    case Encap::Vxlan: std::fill_n(p, 8, std::uint8_t(0)); break;
    case Encap::Gue:
      p[0] = 0x20;  // version 0, C = 1, hlen 0
      p[1] = kGueCtype;
      p[2] = p[3] = 0;
      break;
    case Encap::Gre:
      p[0] = p[1] = 0;  // no C/K/S, version 0
      put16(p + 2, kGreProto);
      break;
  }
}

bool prefix_matches(Encap e, const std::uint8_t* p) {
  std::uint8_t want[8];
  write_prefix(e, want);
  return std::equal(p, p + prefix_len(e), want);
}

}  // namespace

std::size_t prefix_len(Encap e) noexcept { return e == Encap::Vxlan ? 8 : 4; }

std::size_t encode(const Msg& m, Encap e, std::span<std::uint8_t> out) noexcept {
  const std::size_t pl = prefix_len(e), n = pl + kBodyLen;
  if (out.size() < n || m.epoch == 0) return 0;
  std::uint8_t* p = out.data();
  write_prefix(e, p);
  std::uint8_t* b = p + pl;
  put32(b, kMagic);
  b[4] = kVersion;
  b[5] = std::uint8_t(m.type);
  put16(b + 6, std::uint16_t(kBodyLen));
  put32(b + 8, m.epoch);
  put32(b + 12, m.peer_epoch);
  put32(b + 16, m.seq);
  put32(b + 20, m.caps & kCapsKnown);
  put16(b + 24, m.gso_size);
  put16(b + 26, m.mtu);
  return n;
}

Parsed parse(std::span<const std::uint8_t> d, Encap e) noexcept {
  Parsed r;
  const std::size_t pl = prefix_len(e);
  if (d.size() < pl + 4 || !prefix_matches(e, d.data()) || get32(d.data() + pl) != kMagic)
    return r;  // NotControl
  const auto b = d.subspan(pl);
  if (b.size() < kBodyLen) {
    r.verdict = Verdict::Truncated;
    return r;
  }
  if (b[4] != kVersion) {
    r.verdict = Verdict::BadVersion;
    return r;
  }
  if (b[5] != std::uint8_t(MsgType::Hello) && b[5] != std::uint8_t(MsgType::HelloAck)) {
    r.verdict = Verdict::BadType;
    return r;
  }
  const std::uint16_t len = get16(b.data() + 6);
  if (len < kBodyLen) {
    r.verdict = Verdict::BadLength;
    return r;
  }
  if (len > b.size()) {
    r.verdict = Verdict::Truncated;
    return r;
  }
  Msg m;
  m.type = MsgType(b[5]);
  m.epoch = get32(b.data() + 8);
  m.peer_epoch = get32(b.data() + 12);
  m.seq = get32(b.data() + 16);
  m.caps = get32(b.data() + 20) & kCapsKnown;
  m.gso_size = get16(b.data() + 24);
  m.mtu = get16(b.data() + 26);
  if (m.epoch == 0) {
    r.verdict = Verdict::ZeroEpoch;
    return r;
  }
  r.verdict = Verdict::Ok;
  r.msg = m;
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
  }
  return "unknown";
}

}  // namespace ofld::wire::peer

// Checksum bookkeeping on Packet: the skbuff.h / skbuff.c / dev.c helpers (spec §2.4–§2.8).
#include <algorithm>
#include <cstring>

#include "ofld/core/packet.hpp"

namespace ofld::core {
namespace {

std::uint16_t load_be16(const std::uint8_t* p) noexcept {
  return std::uint16_t((unsigned(p[0]) << 8) | p[1]);
}
void store_be16(std::uint8_t* p, std::uint16_t v) noexcept {
  p[0] = std::uint8_t(v >> 8);
  p[1] = std::uint8_t(v);
}

// __skb_checksum_complete with an explicit stored csum (the kernel reads skb->csum).
std::uint16_t checksum_complete_with(Packet& p, wsum stored) noexcept {
  wsum whole = p.checksum(0, p.len(), 0);
  std::uint16_t sum = csum::csum_fold(csum::csum_add(stored, whole));
  // A zero result after a COMPLETE mismatch that hardware produced would be reported by the
  // kernel as netdev_rx_csum_fault (diagnostic only); ofld has no such report.
  p.csum = CsumComplete{whole};
  p.csum_complete_sw = true;
  p.csum_valid = (sum == 0);
  return sum;
}

}  // namespace

void postpull_rcsum(Packet& p, std::span<const std::uint8_t> removed, std::size_t off) noexcept {
  if (auto* c = std::get_if<CsumComplete>(&p.csum)) {
    c->csum = csum::csum_block_sub(c->csum, csum::csum_partial(removed.data(), removed.size(), 0),
                                   off);
  } else if (std::holds_alternative<CsumPartial>(p.csum) && p.csum_start_offset() < 0) {
    p.csum = CsumNone{};
  }
}

void postpush_rcsum(Packet& p, std::span<const std::uint8_t> pushed, std::size_t off) noexcept {
  if (auto* c = std::get_if<CsumComplete>(&p.csum))
    c->csum = csum::csum_block_add(c->csum, csum::csum_partial(pushed.data(), pushed.size(), 0),
                                   off);
}

// Odd lengths: the kernel only ever pulls/pushes even-length headers, and its
// skb_pull_rcsum/skb_push_rcsum leave COMPLETE byte-swapped for an odd length. We keep
// COMPLETE equal to the sum over [data, end) for any length by re-aligning (csum_shift) the
// remaining sum when n is odd; for even n the result is the kernel's exactly.
std::uint8_t* pull_rcsum(Packet& p, std::size_t n) {
  if (!p.may_pull(n)) return nullptr;
  const std::uint8_t* old = p.data();
  p.pull(n);
  postpull_rcsum(p, {old, n}, 0);  // pulled bytes stay in the headroom
  if (auto* c = std::get_if<CsumComplete>(&p.csum); c && (n & 1)) c->csum = csum::csum_shift(c->csum, 1);
  return p.data();
}

namespace {
void realign_for_push(Packet& p, std::size_t n) noexcept {
  if (auto* c = std::get_if<CsumComplete>(&p.csum); c && (n & 1)) c->csum = csum::csum_shift(c->csum, 1);
}
}  // namespace

std::uint8_t* push_rcsum(Packet& p, std::size_t n) {
  p.push(n);
  realign_for_push(p, n);
  postpush_rcsum(p, {p.data(), n}, 0);
  return p.data();
}

std::uint8_t* push_rcsum(Packet& p, std::span<const std::uint8_t> bytes) {
  std::uint8_t* d = p.push(bytes.size());
  if (!bytes.empty()) std::memcpy(d, bytes.data(), bytes.size());
  realign_for_push(p, bytes.size());
  postpush_rcsum(p, {d, bytes.size()}, 0);
  return d;
}

PacketError trim_rcsum(Packet& p, std::size_t new_len) {
  std::size_t len = p.len();
  if (new_len >= len) return PacketError::Ok;
  if (auto* c = std::get_if<CsumComplete>(&p.csum)) {
    c->csum = csum::csum_block_sub(c->csum, p.checksum(new_len, len - new_len, 0), new_len);
  } else if (auto* pc = std::get_if<CsumPartial>(&p.csum)) {
    long hdlen = long(std::min(new_len, p.headlen()));
    long field = long(p.csum_start_offset()) + pc->csum_offset;
    if (field + 2 > hdlen) return PacketError::NotInHead;
  }
  p.trim(new_len);
  return PacketError::Ok;
}

void forward_csum(Packet& p) noexcept {
  if (std::holds_alternative<CsumComplete>(p.csum)) p.csum = CsumNone{};
}

bool csum_unnecessary(const Packet& p) noexcept {
  return std::holds_alternative<CsumUnnecessary>(p.csum) || p.csum_valid ||
         (std::holds_alternative<CsumPartial>(p.csum) && p.csum_start_offset() >= 0);
}

void decr_checksum_unnecessary(Packet& p) noexcept {
  if (auto* u = std::get_if<CsumUnnecessary>(&p.csum)) {
    if (u->level.value() == 0)
      p.csum = CsumNone{};
    else
      u->level = CsumLevel(u->level.value() - 1u);
  }
}

void incr_checksum_unnecessary(Packet& p) noexcept {
  if (auto* u = std::get_if<CsumUnnecessary>(&p.csum))
    u->level = CsumLevel(u->level.value() + 1u);  // saturates at 3
  else if (std::holds_alternative<CsumNone>(p.csum))
    p.csum = CsumUnnecessary{CsumLevel(0)};
}

std::uint16_t checksum_complete(Packet& p) noexcept {
  const auto* c = std::get_if<CsumComplete>(&p.csum);
  return checksum_complete_with(p, c ? c->csum : p.pending_csum);
}

std::uint16_t checksum_validate(Packet& p, wsum pseudo, bool complete, bool zero_okay,
                                std::uint16_t check) noexcept {
  p.csum_valid = false;
  // __skb_checksum_validate_needed
  if (csum_unnecessary(p) || (zero_okay && check == 0)) {
    p.csum_valid = true;
    decr_checksum_unnecessary(p);
    return 0;
  }
  // __skb_checksum_validate_complete
  if (auto* c = std::get_if<CsumComplete>(&p.csum)) {
    if (csum::csum_fold(csum::csum_add(pseudo, c->csum)) == 0) {
      p.csum_valid = true;
      return 0;
    }
    c->csum = pseudo;  // kernel: skb->csum = psum, ip_summed stays COMPLETE
  } else {
    p.pending_csum = pseudo;
  }
  if (complete || p.len() <= kChecksumBreak) return checksum_complete_with(p, pseudo);
  return 0;  // deferred: a later checksum_complete() finishes it
}

void checksum_try_convert(Packet& p, wsum pseudo) noexcept {
  if (std::holds_alternative<CsumNone>(p.csum) && p.csum_valid) p.csum = CsumComplete{~pseudo};
}

// Choice (C-29): Linux 6.12 net/core/dev.c:skb_checksum_help writes CSUM_MANGLED_0 (0xFFFF)
// whenever the folded result is 0, whatever the protocol; we do the same. For TCP, 0x0000 and
// 0xFFFF are the same ones'-complement value, so receivers accept either.
PacketError checksum_help(Packet& p) {
  if (std::holds_alternative<CsumComplete>(p.csum)) {
    p.csum = CsumNone{};
    return PacketError::Ok;
  }
  auto* pc = std::get_if<CsumPartial>(&p.csum);
  if (!pc) return PacketError::Ok;  // NONE / UNNECESSARY: nothing to finish
  if (p.is_gso()) return PacketError::IsGso;
  if (p.frags_shared()) {
    p.linearize();
    pc = std::get_if<CsumPartial>(&p.csum);
  }
  int start = p.csum_start_offset();
  if (start < 0) return PacketError::OutOfRange;
  if (std::size_t(start) >= p.headlen()) return PacketError::NotInHead;
  std::size_t field = std::size_t(start) + pc->csum_offset;
  if (field + 2 > p.headlen()) return PacketError::NotInHead;
  wsum sum = p.checksum(std::size_t(start), p.len() - std::size_t(start), 0);
  std::uint16_t v = csum::csum_fold(sum);
  store_be16(p.data() + field, v == 0 ? 0xFFFF : v);
  p.csum = CsumNone{};
  return PacketError::Ok;
}

PacketError checksum_help_bytes(std::span<std::uint8_t> bytes, std::size_t csum_start,
                                std::size_t csum_offset, bool zero_as_ffff) noexcept {
  if (csum_start >= bytes.size() || csum_offset > bytes.size() - csum_start ||
      bytes.size() - csum_start - csum_offset < 2)
    return PacketError::OutOfRange;
  const std::uint16_t v =
      csum::csum_fold(csum::csum_partial(bytes.data() + csum_start, bytes.size() - csum_start, 0));
  store_be16(bytes.data() + csum_start + csum_offset, v == 0 && zero_as_ffff ? 0xFFFF : v);
  return PacketError::Ok;
}

wsum remcsum_adjust(std::span<std::uint8_t> region, wsum c, std::size_t start,
                    std::size_t offset) noexcept {
  if (start > region.size() || offset > region.size() || region.size() - offset < 2) return 0;
  c = csum::csum_sub(c, csum::csum_partial(region.data(), start, 0));
  std::uint16_t nf = csum::csum_fold(c);
  std::uint16_t of = load_be16(region.data() + offset);
  wsum delta = csum::csum_sub(nf, of);
  store_be16(region.data() + offset, nf);
  return delta;
}

void remcsum_unadjust(std::uint8_t* field, wsum delta) noexcept {
  store_be16(field, csum::csum_fold(csum::csum_sub(delta, load_be16(field))));
}

PacketError remcsum_process(Packet& p, std::size_t ptr_off, std::size_t start,
                            std::size_t offset, bool nopartial) {
  if (offset < start || offset - start > 0xFFFF) return PacketError::BadArgument;
  if (ptr_off > p.len() || start > p.len() - ptr_off) return PacketError::OutOfRange;
  if (!nopartial) {
    p.set_partial(int(ptr_off + start), std::uint16_t(offset - start));
    return PacketError::Ok;
  }
  if (ptr_off + offset + 2 > p.headlen()) return PacketError::NotInHead;
  if (!std::holds_alternative<CsumComplete>(p.csum)) {
    checksum_complete(p);
    postpull_rcsum(p, {p.data(), ptr_off}, 0);
  }
  auto& c = std::get<CsumComplete>(p.csum);
  wsum delta = remcsum_adjust({p.data() + ptr_off, p.headlen() - ptr_off}, c.csum, start, offset);
  c.csum = csum::csum_add(c.csum, delta);
  return PacketError::Ok;
}

}  // namespace ofld::core

// Copy and checksum in one pass (net/core/skbuff.c skb_copy_and_csum_bits / _dev).
#include "ofld/core/skb_copy_csum.hpp"

#include <algorithm>
#include <cstring>

namespace ofld::core {
namespace {

/// Walks a packet's pieces (head, frags, frag_list members, in byte order) and copies the
/// packet range [offset, offset + n) to `to`; bytes from to-index `sum_at` on are copied with
/// csum_partial_copy and their sums placed at their offset from sum_at.
struct CopySum {
  std::uint8_t* to;
  std::size_t n;       // bytes to write
  std::size_t offset;  // packet offset of to[0]
  std::size_t sum_at;  // first summed to-index
  std::size_t pos = 0; // packet offset of the next piece
  std::size_t w = 0;   // bytes written so far
  csum::wsum sum = 0;

  void piece(const std::uint8_t* s, std::size_t len) noexcept {
    const std::size_t end = pos + len;
    if (end > offset && w < n) {
      const std::size_t from = offset > pos ? offset - pos : 0;
      std::size_t take = std::min(len - from, n - w);
      s += from;
      if (w < sum_at) {
        const std::size_t c = std::min(take, sum_at - w);
        std::memcpy(to + w, s, c);
        w += c;
        s += c;
        take -= c;
      }
      if (take) {
        sum = csum::csum_block_add(sum, csum::csum_partial_copy(to + w, s, take, 0), w - sum_at);
        w += take;
      }
    }
    pos = end;
  }
  void packet(const Packet& p) noexcept {
    if (p.headlen()) piece(p.data(), p.headlen());
    for (const auto& f : p.frags()) {
      if (w == n) return;
      const auto b = f.bytes();
      if (!b.empty()) piece(b.data(), b.size());
    }
    for (const auto& m : p.frag_list()) {
      if (w == n) return;
      packet(m);
    }
  }
};

void store_be16(std::uint8_t* p, std::uint16_t v) noexcept {
  p[0] = std::uint8_t(v >> 8);
  p[1] = std::uint8_t(v);
}

}  // namespace

PacketError copy_and_csum_bits(const Packet& p, std::size_t offset, std::span<std::uint8_t> to,
                               csum::wsum& csum) noexcept {
  csum = 0;
  const std::size_t total = p.len();
  if (offset > total || to.size() > total - offset) return PacketError::OutOfRange;
  if (to.empty()) return PacketError::Ok;
  CopySum c{to.data(), to.size(), offset, 0};
  c.packet(p);
  if (c.w != to.size()) {  // defensive: the pieces did not add up to len()
    if (p.copy_bits(offset, to) != PacketError::Ok) return PacketError::OutOfRange;
    csum = csum::csum_partial(to.data(), to.size(), 0);
    return PacketError::Ok;
  }
  csum = c.sum;
  return PacketError::Ok;
}

PacketError copy_and_checksum_help(const Packet& p, std::span<std::uint8_t> to,
                                   std::size_t csum_start, std::size_t csum_offset,
                                   bool zero_as_ffff) noexcept {
  const std::size_t n = to.size();
  // The same bounds as checksum_help_bytes over the copy.
  if (n != p.len() || csum_start >= n || csum_offset > n - csum_start ||
      n - csum_start - csum_offset < 2)
    return PacketError::OutOfRange;
  CopySum c{to.data(), n, 0, csum_start};
  c.packet(p);
  csum::wsum sum = c.sum;
  if (c.w != n) {  // defensive: the pieces did not add up to len(); copy, then sum the copy
    if (p.copy_bits(0, to) != PacketError::Ok) return PacketError::OutOfRange;
    sum = csum::csum_partial(to.data() + csum_start, n - csum_start, 0);
  }
  const std::uint16_t v = csum::csum_fold(sum);
  store_be16(to.data() + csum_start + csum_offset, v == 0 && zero_as_ffff ? 0xFFFF : v);
  return PacketError::Ok;
}

}  // namespace ofld::core

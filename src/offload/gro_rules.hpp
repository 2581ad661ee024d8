// Private: the GRO merge rules of the IPv4, IPv6 and TCP modules that both their general
// receive hooks (ipv4.cpp, ipv6.cpp, tcp.cpp) and the TCP fast receive hook (tcp.cpp) apply,
// written once here. Each takes header pointers whose bytes the caller has already proven
// present (unchecked constant-offset reads).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ofld/core/csum_short.hpp"
#include "ofld/offload/gro_context.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"

namespace ofld::offload::gro_rules {

// ---- IPv4 (inet_gro_receive, inet_gro_flush) -------------------------------------------

/// N-1 hard rejects of a 20-byte IPv4 header: options or not version 4 (first byte ≠ 0x45),
/// a fragment (MF or offset), a bad header checksum. The skb is flushed, no flow completed.
inline GroReason inet_hard(const std::uint8_t* iph) noexcept {
  namespace v4 = wire::ipv4;
  if (iph[v4::kVerIhlOffset] != v4::kVerIhl5) return GroReason::IpOptions;
  if (wire::load_be16(iph + v4::kFragOffOffset) & (v4::kMF | v4::kOffsetMask))
    return GroReason::IpFragment;
  if (!csum::ipv4_header_csum_ok(iph)) return GroReason::IpHeaderCsum;
  return GroReason::None;
}
/// N-2 soft flushes: tot_len ≠ the bytes from the IPv4 header on (`len`, modulo 2^16 as
/// the kernel compares), the reserved fragment bit. L4 still runs for these.
inline GroReason inet_soft(const std::uint8_t* iph, std::size_t len) noexcept {
  namespace v4 = wire::ipv4;
  if (wire::load_be16(iph + v4::kTotLenOffset) != std::uint16_t(len)) return GroReason::IpLength;
  if (wire::load_be16(iph + v4::kFragOffOffset) & v4::kCE) return GroReason::IpReservedBit;
  return GroReason::None;
}
/// N-15 (as on 6.18): the IP ID of the arriving header `id` against the held one `id2` of a
/// flow of `count` segments whose fixed-ID mark for this header is `fixed`. `ok`: the ID
/// is acceptable; `mark`: the flow becomes fixed-ID (a second segment with the same ID).
struct IdCheck {
  bool ok;
  bool mark;
};
inline IdCheck inet_id(std::uint16_t id, std::uint16_t id2, std::uint16_t count, bool fixed) noexcept {
  const std::uint16_t delta = std::uint16_t(id - id2);
  const bool mark = count == 1 && delta == 0;
  const std::uint16_t want = (fixed || mark) ? 0 : count;
  return {delta == want, mark};
}

// ---- IPv6 (ipv6_gro_receive) -----------------------------------------------------------

/// N-6: payload_len equals the bytes after the fixed header (`len_after`).
inline bool ipv6_len_ok(const std::uint8_t* iph, std::size_t len_after) noexcept {
  return wire::load_be16(iph + wire::ipv6::kPayloadLenOffset) == len_after;
}

// ---- TCP (tcp_gro_receive, tcp_gro_complete) -------------------------------------------

using wire::tcp_flag::kCwr;  // the TCP flag bits of byte 13 (wire/l4.hpp)
using wire::tcp_flag::kFin;
using wire::tcp_flag::kPsh;
using wire::tcp_flag::kRst;
using wire::tcp_flag::kSyn;
using wire::tcp_flag::kUrg;
/// T-6: the flags not compared between a segment and its flow (all others, CWR included,
/// must be equal — as on 6.18); T-15: the ones OR'ed into the aggregate's header.
inline constexpr std::uint8_t kFlagsUncompared = kFin | kPsh;
/// T-5 (as on 6.18): a segment with CWR never joins a held flow.
inline constexpr std::uint8_t kFlagsNeverJoin = kCwr;
/// T-17: flags that end the flow (merged first when possible, then completed).
inline constexpr std::uint8_t kFlagsFinal = kUrg | kPsh | kRst | kSyn | kFin;
/// T-2: the data offset's header length in bytes (valid when ≥ 20).
inline std::size_t tcp_hdrlen(const std::uint8_t* th) noexcept {
  return std::size_t(th[wire::tcp::kDoffOffset] >> 4) * 4;
}
/// T-10 for a non-GSO segment: 0 < payload ≤ mss.
inline bool tcp_size_ok(std::size_t len, std::size_t mss) noexcept { return len - 1 < mss; }
/// T-11: the segment's sequence number follows the flow's (held first header `th2`,
/// `plen` payload bytes held).
inline bool tcp_seq_follows(const std::uint8_t* th, const std::uint8_t* th2, std::uint32_t plen) noexcept {
  return wire::load_be32(th2 + wire::tcp::kSeqOffset) + plen == wire::load_be32(th + wire::tcp::kSeqOffset);
}
/// T-16 / T-17 for a merged non-GSO segment: the reason its flow is completed now, or None.
inline GroReason tcp_final(std::uint8_t flags, std::size_t len, std::size_t mss) noexcept {
  if (flags & kFlagsFinal) return GroReason::FinalFlags;
  if (len < mss) return GroReason::ShortSegment;
  return GroReason::None;
}

}  // namespace ofld::offload::gro_rules

// ofld/core/skb_gro.hpp — GRO's merge of one packet into a held one (net/core/gro.c:
// skb_gro_receive, skb_gro_receive_list; spec G-16..G-21). Like skb_segment, these work on
// two packets only and know no protocol: the callers (the protocol modules' gro_receive
// hooks, ofld/offload/gro_context.hpp) decide which bytes are headers and which limit applies.
//
// Offsets are in bytes from each packet's data(). Lengths are bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "ofld/core/packet.hpp"

namespace ofld::core {

namespace detail {
void skb_gro_append_general(Packet& p, BufferRef& agg, Packet& skb, std::size_t data_offset) noexcept;
}

/// The storage step of skb_gro_receive (G-19 as modelled): append skb's bytes from
/// `data_offset` to its end to `p`. Payload in skb's linear head is copied into `agg` (p's
/// aggregate buffer, created on first use with room for 64 KiB); skb's fragments are moved
/// over by reference. No size limit is checked. skb must have an empty frag_list.
/// Inline for the common case of a packet whose head holds only headers (the fragments are
/// taken over as they are, with room reserved for an aggregate's worth of fragments).
[[gnu::always_inline]] inline void skb_gro_append(Packet& p, BufferRef& agg, Packet& skb,
                                                std::size_t data_offset) noexcept {
  if (data_offset == skb.headlen() && !p.has_frag_list()) {
    const std::size_t have = p.nr_frags();
    // One fragment into an array with room (no reserve below: have + 1 crosses kInline only
    // from kInline).
    if (have != detail::FragVec::kInline && p.append_one_frag_from(skb)) return;
    const std::size_t want = have + skb.nr_frags();
    if (have <= detail::FragVec::kInline && want > detail::FragVec::kInline)
      p.reserve_frags(std::max<std::size_t>(want, 64));
    p.append_frags_from(skb);
    return;
  }
  detail::skb_gro_append_general(p, agg, skb, data_offset);
}

/// G-16: may `len` more bytes join an aggregate of `p_len` bytes (counted from its network
/// header) under the limit `max` (gro_max_size)? The sum must stay below max.
inline bool skb_gro_within(std::size_t p_len, std::size_t len, std::uint32_t max) noexcept {
  return p_len + len < max;
}

/// skb_gro_receive (G-16..G-20): append skb's payload [data_offset, end) to p.
/// `p_len` is p's length counted from its (outermost) network header, `max` the size limit
/// (gro_max_size / gro_ipv4_max_size, G-16), `beyond_64k` whether the aggregate may exceed
/// 65535 bytes (G-17: only plain TCP). Refused (false, nothing changed) when
/// p_len + payload >= max, when !beyond_64k and p_len + payload >= 65536, or when skb has a
/// frag_list.
inline bool skb_gro_receive(Packet& p, BufferRef& agg, Packet& skb, std::size_t data_offset,
                            std::size_t p_len, std::uint32_t max, bool beyond_64k) noexcept {
  const std::size_t len = skb.len() - data_offset;
  if (!skb_gro_within(p_len, len, max)) return false;       // G-16
  if (p_len + len >= 65536 && !beyond_64k) return false;    // G-17
  if (!skb.frag_list().empty()) return false;
  skb_gro_append(p, agg, skb, data_offset);
  return true;
}

/// skb_gro_receive_list (G-21): chain skb on p's frag_list with its headers pulled, after
/// recording its network header at `nhoff` and transport header at `thoff` (offsets from
/// skb's data()). `p_len` / `skb_len`: both packets' lengths from their outermost network
/// header. Refused (false) when p_len + skb_len reaches 65536 (a fixed cap, not
/// gro_max_size), when skb has a frag_list itself, or data_offset is beyond its end.
/// On success skb is moved into p (left empty).
bool skb_gro_receive_list(Packet& p, Packet& skb, std::size_t data_offset, int nhoff, int thoff,
                          std::size_t p_len, std::size_t skb_len) noexcept;

}  // namespace ofld::core

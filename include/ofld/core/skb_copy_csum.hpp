// ofld/core/skb_copy_csum.hpp — copy a packet's bytes out and checksum them in the same pass
// (net/core/skbuff.c skb_copy_and_csum_bits, skb_copy_and_csum_dev).
//
// What a device driver without checksum offload does on transmit: the bytes are summed
// while they are copied into the device's buffer (csum_partial_copy per piece), instead of
// a copy followed by a second pass over the copy (copy_bits then checksum_help_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"

namespace ofld::core {

/// skb_copy_and_csum_bits: copy to.size() bytes of `p` starting at `offset` (from data(),
/// over head, page fragments and frag_list in byte order, as copy_bits) into `to`, and set
/// `csum` to their ones'-complement sum (a wsum: the copied range starts at offset 0 of the
/// sum, seed 0; pieces at odd offsets are placed with csum_block_add, RFC 1071 §2(B)).
/// Errors: OutOfRange when [offset, offset + to.size()) exceeds len(); nothing is copied
/// and `csum` is 0.
PacketError copy_and_csum_bits(const Packet& p, std::size_t offset, std::span<std::uint8_t> to,
                               csum::wsum& csum) noexcept;

/// skb_copy_and_csum_dev with the checksum position given explicitly (as checksum_help_bytes
/// takes it): copy all of `p` into `to` (to.size() must equal len()), summing the bytes from
/// `csum_start` to the end while copying (the field holding the pseudo-header seed included),
/// and store the folded, complemented sum big-endian at csum_start + csum_offset. A folded 0
/// is written as 0xFFFF when `zero_as_ffff` (skb_checksum_help, UDP segments), as 0 when not
/// (TCP segments, tcp_gso_segment). The result is byte for byte that of copy_bits(0, to)
/// followed by checksum_help_bytes(to, csum_start, csum_offset, zero_as_ffff).
/// Errors: OutOfRange when to.size() != len() or the 16-bit field does not fit in the summed
/// range; nothing is written then.
PacketError copy_and_checksum_help(const Packet& p, std::span<std::uint8_t> to,
                                   std::size_t csum_start, std::size_t csum_offset,
                                   bool zero_as_ffff = true) noexcept;

}  // namespace ofld::core

// ofld/core/csum_short.hpp — inline ones'-complement sums for short, fixed-size headers (an
// IPv4 header, pseudo-headers) on hot paths, where the call into csum_partial's dispatch
// costs more than the sum itself (csum_partial is itself inline up to 64 bytes now; these
// fixed-size forms stay for the header checks and pseudo-headers). Every function returns exactly the wsum its out-of-line
// twin in ofld/core/csum.hpp returns (canonical folded value added to the seed; see
// src/core/csum_internal.hpp), so the two can be mixed freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ofld/core/csum.hpp"

namespace ofld::csum {

namespace short_detail {
inline std::uint64_t add64c(std::uint64_t a, std::uint64_t b) noexcept {
  const std::uint64_t s = a + b;
  return s + (s < b);
}
/// Fold a 64-bit host-order-word ones'-complement sum to its canonical 16-bit value (0 only
/// for all-zero data) and convert it to the network-order wsum convention.
inline wsum finish(std::uint64_t s, wsum seed) noexcept {
  std::uint16_t v = csum_fold64(s);
  if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) v = __builtin_bswap16(v);
  return csum_add(seed, v);
}
}  // namespace short_detail

/// csum_partial for buffers of at most 64 bytes, inline (same result as csum_partial).
[[gnu::always_inline]] inline wsum csum_partial_short(const void* data, std::size_t len,
                                                   wsum seed = 0) noexcept {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::uint64_t s = 0;
  while (len >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    s = short_detail::add64c(s, v);
    p += 8;
    len -= 8;
  }
  if (len & 4) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    s = short_detail::add64c(s, v);
    p += 4;
  }
  if (len & 2) {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    s = short_detail::add64c(s, v);
    p += 2;
  }
  if (len & 1) s = short_detail::add64c(s, std::uint64_t(*p));
  return short_detail::finish(s, seed);
}

/// True when the 20-byte IPv4 header at `iph` (no options) has a valid header checksum,
/// i.e. csum_fold(csum_partial(iph, 20)) == 0 (kernel ip_fast_csum == 0).
inline bool ipv4_header_csum_ok(const std::uint8_t* iph) noexcept {
  std::uint64_t a, b;
  std::uint32_t c;
  std::memcpy(&a, iph, 8);
  std::memcpy(&b, iph + 8, 8);
  std::memcpy(&c, iph + 16, 4);
  std::uint64_t s = short_detail::add64c(a, b);
  s = short_detail::add64c(s, c);
  // Not csum_fold64: two 16-bit folds already reach 16 bits (the value after the 32-bit folds
  // is at most 0xffffffff), and csum_fold64's third would add three instructions to the GRO
  // fast path that calls this for every packet.
  s = (s & 0xffffffffu) + (s >> 32);
  s = (s & 0xffffffffu) + (s >> 32);
  s = (s & 0xffffu) + (s >> 16);
  s = (s & 0xffffu) + (s >> 16);
  return (s & 0xffffu) == 0xffffu;
}

/// Inline csum_tcpudp_nofold (identical result).
inline wsum csum_tcpudp_nofold_inline(const std::uint8_t saddr[4], const std::uint8_t daddr[4],
                                      std::uint32_t len, std::uint8_t proto,
                                      wsum seed = 0) noexcept {
  std::uint64_t s = seed;
  s += std::uint64_t(saddr[0]) << 8 | saddr[1];
  s += std::uint64_t(saddr[2]) << 8 | saddr[3];
  s += std::uint64_t(daddr[0]) << 8 | daddr[1];
  s += std::uint64_t(daddr[2]) << 8 | daddr[3];
  s += proto;
  s += len;
  s = (s & 0xffffffffu) + (s >> 32);
  s = (s & 0xffffffffu) + (s >> 32);
  return wsum(s);
}

/// Inline csum_ipv6_nofold (identical result).
inline wsum csum_ipv6_nofold_inline(const std::uint8_t saddr[16], const std::uint8_t daddr[16],
                                    std::uint32_t len, std::uint8_t proto,
                                    wsum seed = 0) noexcept {
  std::uint64_t s = seed;
  for (int i = 0; i < 16; i += 2)
    s += (std::uint64_t(saddr[i]) << 8 | saddr[i + 1]) + (std::uint64_t(daddr[i]) << 8 | daddr[i + 1]);
  s += std::uint64_t(len >> 16) + (len & 0xffffu);
  s += proto;
  s = (s & 0xffffffffu) + (s >> 32);
  s = (s & 0xffffffffu) + (s >> 32);
  return wsum(s);
}

}  // namespace ofld::csum

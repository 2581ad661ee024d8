// ofld/core/csum_state.hpp — a packet's checksum state as a type (skb->ip_summed with its
// csum / csum_start / csum_offset / csum_level / csum_not_inet, spec §1.1, §2.1, §2.2).
// Sums follow ofld/core/csum.hpp (wsum in network-order semantics).
#pragma once

#include <cstdint>
#include <variant>

#include "ofld/core/csum.hpp"

namespace ofld::core {

using csum::wsum;
/// A byte position relative to the packet origin (see ofld/core/packet.hpp). Signed.
using pos_t = std::int32_t;

/// ip_summed numeric values; order is relied upon by callers, as in the kernel.
enum class IpSummed : std::uint8_t { None = 0, Unnecessary = 1, Complete = 2, Partial = 3 };

/// csum_level: 0..3 (SKB_MAX_CSUM_LEVEL). Construction saturates at 3, so an out-of-range
/// level cannot be represented.
class CsumLevel {
 public:
  static constexpr std::uint8_t kMax = 3;
  constexpr CsumLevel() noexcept = default;
  constexpr explicit CsumLevel(unsigned v) noexcept : v_(v > kMax ? kMax : std::uint8_t(v)) {}
  constexpr std::uint8_t value() const noexcept { return v_; }
  friend constexpr bool operator==(CsumLevel, CsumLevel) = default;

 private:
  std::uint8_t v_ = 0;
};

/// CHECKSUM_NONE (C-1 RX: nothing verified; C-7 TX: already done).
struct CsumNone {
  friend constexpr bool operator==(CsumNone, CsumNone) = default;
};
/// CHECKSUM_UNNECESSARY (C-2/C-3): `level`+1 consecutive checksums verified, outside in.
struct CsumUnnecessary {
  CsumLevel level{};
  friend constexpr bool operator==(CsumUnnecessary, CsumUnnecessary) = default;
};
/// CHECKSUM_COMPLETE (C-4): `csum` = sum over [data, end) (or, transiently during validation,
/// the pseudo-header sum as the kernel stores it in skb->csum).
struct CsumComplete {
  wsum csum = 0;
  friend constexpr bool operator==(CsumComplete, CsumComplete) = default;
};
/// CHECKSUM_PARTIAL (C-5/C-6): sum from position `csum_start` (origin-relative, see the
/// position convention in ofld/core/packet.hpp) to the end, store the folded complement at
/// csum_start + csum_offset. `not_inet` = csum_not_inet (CRC32c for SCTP, C-8).
struct CsumPartial {
  pos_t csum_start = 0;
  std::uint16_t csum_offset = 0;
  bool not_inet = false;
  friend constexpr bool operator==(CsumPartial, CsumPartial) = default;
};
using CsumState = std::variant<CsumNone, CsumUnnecessary, CsumComplete, CsumPartial>;

constexpr IpSummed ip_summed_of(const CsumState& s) noexcept {
  return static_cast<IpSummed>(s.index());
}

}  // namespace ofld::core

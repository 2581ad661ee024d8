// ofld/wire/virtio_net.hpp — struct virtio_net_hdr codec (include/uapi/linux/virtio_net.h,
// spec V-18..V-21).
//
// Layout (bytes): flags 0 (u8), gso_type 1 (u8), hdr_len 2 (u16), gso_size 4 (u16),
// csum_start 6 (u16), csum_offset 8 (u16)  → 10 bytes (legacy);
// + num_buffers 10 (u16) → 12 bytes (mergeable buffers / virtio 1.0 header);
// + hash_value 12 (u32), hash_report 16 (u16), padding 18 (u16) → 20 bytes (v1_hash).
// Multi-byte fields are little-endian (virtio 1.0, or TAP with TUNSETVNETLE) or big-endian
// (legacy on a BE host / TUNSETVNETBE); the byte order is a parameter, never the host's.
// parse() and emit() are exact inverses for every field (a round-trip test guards the
// per-field getters, cf. the gVisor getter bug noted in STYLE.md).
#pragma once

#include <span>

#include "ofld/wire/error.hpp"

namespace ofld::wire::virtio_net {

inline constexpr std::size_t kHdrLen = 10;          ///< struct virtio_net_hdr
inline constexpr std::size_t kHdrMrgRxbufLen = 12;  ///< + num_buffers (also virtio_net_hdr_v1)
inline constexpr std::size_t kHdrV1HashLen = 20;    ///< virtio_net_hdr_v1_hash

/// V-19 flags.
inline constexpr std::uint8_t kFlagNeedsCsum = 1, kFlagDataValid = 2, kFlagRscInfo = 4;
/// V-20 gso_type values.
inline constexpr std::uint8_t kGsoNone = 0, kGsoTcpv4 = 1, kGsoUdp = 3, kGsoTcpv6 = 4,
                              kGsoUdpL4 = 5, kGsoEcn = 0x80;
/// V-21 TAP knobs.
inline constexpr unsigned kIffVnetHdr = 0x4000;
inline constexpr std::size_t kTapDefaultVnetHdrSz = 10, kTapMinVnetHdrSz = 10;

enum class ByteOrder : std::uint8_t { Little, Big };

/// Decoded header. Fields beyond the chosen size are zero after parse() and ignored by emit().
struct Hdr {
  std::uint8_t flags = 0;
  std::uint8_t gso_type = 0;
  std::uint16_t hdr_len = 0;
  std::uint16_t gso_size = 0;
  std::uint16_t csum_start = 0;
  std::uint16_t csum_offset = 0;
  std::uint16_t num_buffers = 0;  ///< size >= 12
  std::uint32_t hash_value = 0;   ///< size == 20
  std::uint16_t hash_report = 0;  ///< size == 20
  friend bool operator==(const Hdr&, const Hdr&) = default;
};

/// True for the three sizes the kernel defines: 10, 12, 20.
constexpr bool valid_size(std::size_t n) noexcept {
  return n == kHdrLen || n == kHdrMrgRxbufLen || n == kHdrV1HashLen;
}

/// Decode a header of `size` bytes (10/12/20) from the start of `in`.
/// Errors: BadHeaderLen (size not 10/12/20), Truncated (in shorter than size).
Result<Hdr> parse(std::span<const std::uint8_t> in, std::size_t size = kHdrLen,
                  ByteOrder order = ByteOrder::Little);

/// Encode `h` as `size` bytes (10/12/20) at the start of `out` (padding written as zero).
/// Returns bytes written, or 0 when size is invalid or `out` is too small.
std::size_t emit(const Hdr& h, std::span<std::uint8_t> out, std::size_t size = kHdrLen,
                 ByteOrder order = ByteOrder::Little) noexcept;

}  // namespace ofld::wire::virtio_net

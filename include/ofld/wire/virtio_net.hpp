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

#include <bit>
#include <span>

#include "ofld/wire/error.hpp"

namespace ofld::wire::virtio_net {

inline constexpr std::size_t kHdrLen = 10;          ///< struct virtio_net_hdr
inline constexpr std::size_t kHdrMrgRxbufLen = 12;  ///< + num_buffers (also virtio_net_hdr_v1)
inline constexpr std::size_t kHdrV1HashLen = 20;    ///< virtio_net_hdr_v1_hash

/// Field offsets (bytes; struct virtio_net_hdr / _mrg_rxbuf / _v1_hash, V-18).
inline constexpr std::size_t kOffFlags = 0, kOffGsoType = 1, kOffHdrLen = 2, kOffGsoSize = 4,
                             kOffCsumStart = 6, kOffCsumOffset = 8, kOffNumBuffers = 10,
                             kOffHashValue = 12, kOffHashReport = 16, kOffPadding = 18;

/// V-19 flags.
inline constexpr std::uint8_t kFlagNeedsCsum = 1, kFlagDataValid = 2, kFlagRscInfo = 4;
/// V-20 gso_type values.
inline constexpr std::uint8_t kGsoNone = 0, kGsoTcpv4 = 1, kGsoUdp = 3, kGsoTcpv6 = 4,
                              kGsoUdpL4 = 5, kGsoEcn = 0x80;
/// V-21 TAP knobs.
inline constexpr unsigned kIffVnetHdr = 0x4000;
inline constexpr std::size_t kTapDefaultVnetHdrSz = 10, kTapMinVnetHdrSz = 10;

enum class ByteOrder : std::uint8_t { Little, Big };

/// True when the host is little-endian: what "native order" means for a legacy header on a
/// TAP without TUNSETVNETLE/BE and on AF_PACKET's PACKET_VNET_HDR.
constexpr bool host_is_little_endian() noexcept { return std::endian::native == std::endian::little; }

/// Decoded header (values host order). Fields beyond the chosen size are zero after parse()
/// and ignored by emit(). This is the one virtio_net_hdr type: io::VnetHdr and
/// offload::virtio::VnetHdr are aliases of it.
struct Hdr {
  // Names as io::VnetHdr spelled them (kept reachable for its users).
  static constexpr std::size_t kSize = kHdrLen;
  static constexpr std::uint8_t kNeedsCsum = kFlagNeedsCsum;  ///< VIRTIO_NET_HDR_F_NEEDS_CSUM
  static constexpr std::uint8_t kDataValid = kFlagDataValid;  ///< VIRTIO_NET_HDR_F_DATA_VALID
  static constexpr std::uint8_t kRscInfo = kFlagRscInfo;      ///< VIRTIO_NET_HDR_F_RSC_INFO
  static constexpr std::uint8_t kGsoNone = virtio_net::kGsoNone;
  static constexpr std::uint8_t kGsoTcpv4 = virtio_net::kGsoTcpv4;
  static constexpr std::uint8_t kGsoUdp = virtio_net::kGsoUdp;  ///< UFO
  static constexpr std::uint8_t kGsoTcpv6 = virtio_net::kGsoTcpv6;
  static constexpr std::uint8_t kGsoUdpL4 = virtio_net::kGsoUdpL4;  ///< USO
  static constexpr std::uint8_t kGsoEcn = virtio_net::kGsoEcn;

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

  /// Write the 10-byte legacy header at `p` (little_endian: LE fields, else big-endian).
  void store(std::uint8_t* p, bool little_endian = true) const noexcept;
  /// Read a 10-byte legacy header at `p` (fields past 10 bytes zero).
  static Hdr load(const std::uint8_t* p, bool little_endian = true) noexcept;
  static constexpr bool host_is_little_endian() noexcept {
    return virtio_net::host_is_little_endian();
  }
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

// ofld/wire/bytes.hpp — explicit byte-order loads and stores.
//
// Every header codec in ofld::wire reads and writes fields through these helpers; nothing
// casts a byte pointer to a struct. `p` must point at enough bytes (the callers' views check
// lengths once in their parse/check step). Values are host-order numbers.
#pragma once

#include <cstdint>

namespace ofld::wire {

/// Big-endian (network order) 16-bit load: (p[0] << 8) | p[1].
constexpr std::uint16_t load_be16(const std::uint8_t* p) noexcept {
  return std::uint16_t((unsigned(p[0]) << 8) | p[1]);
}
/// Big-endian 24-bit load into the low bits (VXLAN VNI, Geneve VNI).
constexpr std::uint32_t load_be24(const std::uint8_t* p) noexcept {
  return (std::uint32_t(p[0]) << 16) | (std::uint32_t(p[1]) << 8) | p[2];
}
/// Big-endian 32-bit load.
constexpr std::uint32_t load_be32(const std::uint8_t* p) noexcept {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
         p[3];
}
/// Big-endian 64-bit load.
constexpr std::uint64_t load_be64(const std::uint8_t* p) noexcept {
  return (std::uint64_t(load_be32(p)) << 32) | load_be32(p + 4);
}
/// Big-endian 16-bit store.
constexpr void store_be16(std::uint8_t* p, std::uint16_t v) noexcept {
  p[0] = std::uint8_t(v >> 8);
  p[1] = std::uint8_t(v);
}
/// Big-endian 24-bit store of the low 24 bits of v.
constexpr void store_be24(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = std::uint8_t(v >> 16);
  p[1] = std::uint8_t(v >> 8);
  p[2] = std::uint8_t(v);
}
/// Big-endian 32-bit store.
constexpr void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = std::uint8_t(v >> 24);
  p[1] = std::uint8_t(v >> 16);
  p[2] = std::uint8_t(v >> 8);
  p[3] = std::uint8_t(v);
}

/// Little-endian loads/stores (virtio_net_hdr fields under VIRTIO_F_VERSION_1, V-18).
constexpr std::uint16_t load_le16(const std::uint8_t* p) noexcept {
  return std::uint16_t(p[0] | (unsigned(p[1]) << 8));
}
constexpr std::uint32_t load_le32(const std::uint8_t* p) noexcept {
  return p[0] | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) |
         (std::uint32_t(p[3]) << 24);
}
constexpr void store_le16(std::uint8_t* p, std::uint16_t v) noexcept {
  p[0] = std::uint8_t(v);
  p[1] = std::uint8_t(v >> 8);
}
constexpr void store_le32(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = std::uint8_t(v);
  p[1] = std::uint8_t(v >> 8);
  p[2] = std::uint8_t(v >> 16);
  p[3] = std::uint8_t(v >> 24);
}

}  // namespace ofld::wire

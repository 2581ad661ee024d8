// Private: the building blocks of the GRO flow hash (gro_flow_hash in flow_hash.cpp), shared
// with the TCP fast receive hook (tcp.cpp), which computes the same value for a packet whose
// layout it has already checked. Words are host-order loads (equal bytes ⇔ equal words).
#pragma once

#include <cstdint>
#include <cstring>

namespace ofld::offload::flowhash {

inline std::uint64_t mix(std::uint64_t k) noexcept {  // murmur3 fmix64: a bijection of 64 bits
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
inline std::uint64_t raw64(const std::uint8_t* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline std::uint32_t raw32(const std::uint8_t* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline std::uint32_t fold(std::uint64_t x) noexcept { return std::uint32_t(x ^ (x >> 32)); }

/// The per-(key, ethertype, protocol) starting state: secret for a secret key, so that the
/// whole chain (and equal hashes of two flows) is a function of the key.
inline std::uint64_t seed(std::uint64_t key, std::uint16_t type, std::uint8_t proto) noexcept {
  return mix(key ^ (std::uint64_t(type) << 8 | proto));
}
/// The IPv4 addresses (saddr, daddr: one word at `addrs`, the header's byte 12).
inline std::uint64_t ipv4_addrs(std::uint64_t h, const std::uint8_t* addrs) noexcept {
  return mix(h ^ raw64(addrs));
}
/// The IPv6 addresses (32 bytes at `addrs`, the header's byte 8).
inline std::uint64_t ipv6_addrs(std::uint64_t h, const std::uint8_t* addrs) noexcept {
  h = mix(h ^ raw64(addrs));
  h = mix(h ^ raw64(addrs + 8));
  h = mix(h ^ raw64(addrs + 16));
  return mix(h ^ raw64(addrs + 24));
}
/// The TCP/UDP source and destination ports (the L4 header's first word).
inline std::uint64_t ports(std::uint64_t h, const std::uint8_t* l4) noexcept {
  return mix(h ^ raw32(l4));
}

}  // namespace ofld::offload::flowhash

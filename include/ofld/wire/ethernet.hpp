// ofld/wire/ethernet.hpp — link headers: Ethernet II, 802.1Q/802.1ad tags, Linux SLL/SLL2.
//
// Offsets (bytes): Ethernet (IEEE 802.3 §3.2): dst 0..5, src 6..11, ethertype/TPID 12..13.
// VLAN tag body as the kernel's struct vlan_hdr: TCI 0..1 (PCP 3 | DEI 1 | VID 12),
// encapsulated ethertype 2..3; the TPID is the preceding ethertype field.
// SLL (tcpdump.org LINKTYPE_LINUX_SLL): pkttype 0, hatype 2, halen 4, addr 6..13, protocol 14.
// SLL2 (LINKTYPE_LINUX_SLL2): protocol 0, reserved 2, ifindex 4, hatype 8, pkttype 10,
// halen 11, addr 12..19.
#pragma once

#include <array>

#include "ofld/wire/error.hpp"
#include "ofld/wire/view.hpp"

namespace ofld::wire {

using MacAddr = std::array<std::uint8_t, 6>;

/// Ethernet II header (14 bytes).
template <ByteT B = const std::uint8_t>
class EthernetHeader : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = 14;
  /// Errors: Truncated (fewer than 14 bytes).
  static Result<EthernetHeader> parse(std::span<B> s) {
    if (s.size() < kLen) return truncated(HeaderKind::Ethernet, 0, s.size(), kLen);
    return EthernetHeader(s.data());
  }
  MacAddr dst() const noexcept { return mac(0); }
  MacAddr src() const noexcept { return mac(6); }
  /// Ethertype or TPID (host order).
  std::uint16_t ethertype() const noexcept { return this->be16(12); }
  void set_ethertype(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(12, v); }
  void set_dst(const MacAddr& m) const noexcept requires ViewBase<B>::kMutable { set_mac(0, m); }
  void set_src(const MacAddr& m) const noexcept requires ViewBase<B>::kMutable { set_mac(6, m); }

 private:
  explicit EthernetHeader(B* p) : ViewBase<B>(p, kLen) {}
  MacAddr mac(std::size_t o) const noexcept {
    MacAddr m{};
    for (std::size_t i = 0; i < 6; ++i) m[i] = this->p_[o + i];
    return m;
  }
  void set_mac(std::size_t o, const MacAddr& m) const noexcept requires ViewBase<B>::kMutable {
    for (std::size_t i = 0; i < 6; ++i) this->p_[o + i] = m[i];
  }
};

/// True for the TPIDs treated as VLAN tags: 0x8100 (802.1Q C-tag), 0x88A8 (802.1ad S-tag),
/// 0x9100 (pre-standard QinQ).
constexpr bool is_vlan_tpid(std::uint16_t et) noexcept {
  return et == 0x8100 || et == 0x88A8 || et == 0x9100;
}

/// VLAN tag body (4 bytes after the TPID): TCI + encapsulated ethertype (IEEE 802.1Q §9.6).
template <ByteT B = const std::uint8_t>
class VlanTag : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = 4;
  static Result<VlanTag> parse(std::span<B> s) {
    if (s.size() < kLen) return truncated(HeaderKind::Vlan, 0, s.size(), kLen);
    return VlanTag(s.data());
  }
  std::uint16_t tci() const noexcept { return this->be16(0); }
  std::uint8_t pcp() const noexcept { return std::uint8_t(tci() >> 13); }
  bool dei() const noexcept { return (tci() >> 12) & 1; }
  std::uint16_t vid() const noexcept { return tci() & 0x0fff; }
  /// Ethertype of what follows the tag (host order).
  std::uint16_t ethertype() const noexcept { return this->be16(2); }
  void set_tci(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(0, v); }
  void set_ethertype(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(2, v); }

 private:
  explicit VlanTag(B* p) : ViewBase<B>(p, kLen) {}
};

/// Linux cooked capture v1 (16 bytes).
template <ByteT B = const std::uint8_t>
class SllHeader : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = 16;
  static Result<SllHeader> parse(std::span<B> s) {
    if (s.size() < kLen) return truncated(HeaderKind::LinuxSll, 0, s.size(), kLen);
    return SllHeader(s.data());
  }
  std::uint16_t pkttype() const noexcept { return this->be16(0); }
  std::uint16_t hatype() const noexcept { return this->be16(2); }
  std::uint16_t halen() const noexcept { return this->be16(4); }
  /// Ethertype for hatype ARPHRD_ETHER etc. (host order).
  std::uint16_t protocol() const noexcept { return this->be16(14); }

 private:
  explicit SllHeader(B* p) : ViewBase<B>(p, kLen) {}
};

/// Linux cooked capture v2 (20 bytes).
template <ByteT B = const std::uint8_t>
class Sll2Header : public ViewBase<B> {
 public:
  static constexpr std::size_t kLen = 20;
  static Result<Sll2Header> parse(std::span<B> s) {
    if (s.size() < kLen) return truncated(HeaderKind::LinuxSll2, 0, s.size(), kLen);
    return Sll2Header(s.data());
  }
  std::uint16_t protocol() const noexcept { return this->be16(0); }
  std::uint32_t ifindex() const noexcept { return this->be32(4); }
  std::uint16_t hatype() const noexcept { return this->be16(8); }
  std::uint8_t pkttype() const noexcept { return this->u8(10); }
  std::uint8_t halen() const noexcept { return this->u8(11); }

 private:
  explicit Sll2Header(B* p) : ViewBase<B>(p, kLen) {}
};

}  // namespace ofld::wire

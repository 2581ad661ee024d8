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
#include "ofld/wire/numbers.hpp"
#include "ofld/wire/view.hpp"

namespace ofld::wire {

using MacAddr = std::array<std::uint8_t, 6>;

/// Ethernet II field offsets and sizes (bytes; IEEE 802.3 §3.2, kernel struct ethhdr).
namespace eth {
inline constexpr std::size_t kDstOffset = 0, kSrcOffset = 6, kTypeOffset = 12;
inline constexpr std::size_t kAddrLen = 6;    ///< ETH_ALEN
inline constexpr std::size_t kHdrLen = 14;    ///< ETH_HLEN
inline constexpr std::size_t kMinFrame = 60;  ///< ETH_ZLEN: minimum frame without FCS
inline constexpr std::size_t kFcsLen = 4;     ///< ETH_FCS_LEN
inline constexpr std::size_t kDataLen = 1500; ///< ETH_DATA_LEN (default MTU)
}  // namespace eth

/// 802.1Q tag: offsets within the 4-byte tag body (after the TPID) and TCI masks
/// (IEEE 802.1Q §9.6; kernel struct vlan_hdr, VLAN_*_MASK).
namespace vlan {
inline constexpr std::size_t kTciOffset = 0, kTypeOffset = 2;
inline constexpr std::size_t kHdrLen = 4;                  ///< VLAN_HLEN
inline constexpr std::size_t kEthHdrLen = 18;              ///< VLAN_ETH_HLEN
inline constexpr std::uint16_t kPcpMask = 0xe000, kDeiMask = 0x1000, kVidMask = 0x0fff;
inline constexpr unsigned kPcpShift = 13;
/// TCI from its parts: pcp (0..7) << 13 | dei << 12 | vid (0..4095).
constexpr std::uint16_t make_tci(std::uint8_t pcp, bool dei, std::uint16_t vid) noexcept {
  return std::uint16_t((unsigned(pcp & 7) << kPcpShift) | (dei ? kDeiMask : 0) | (vid & kVidMask));
}
}  // namespace vlan

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
  /// No length check: the caller has proven 14 bytes at `p` (hot paths). Zero cost.
  static constexpr EthernetHeader unchecked(B* p) noexcept { return EthernetHeader(p); }
  MacAddr dst() const noexcept { return mac(0); }
  MacAddr src() const noexcept { return mac(6); }
  /// Ethertype or TPID (host order).
  std::uint16_t ethertype() const noexcept { return this->be16(12); }
  void set_ethertype(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(12, v); }
  void set_dst(const MacAddr& m) const noexcept requires ViewBase<B>::kMutable { set_mac(0, m); }
  void set_src(const MacAddr& m) const noexcept requires ViewBase<B>::kMutable { set_mac(6, m); }

 private:
  constexpr explicit EthernetHeader(B* p) : ViewBase<B>(p, kLen) {}
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
  return et == ethertype::kVlan || et == ethertype::kQinQ || et == ethertype::kQinQ9100;
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
  /// No length check: the caller has proven 4 bytes at `p`. Zero cost.
  static constexpr VlanTag unchecked(B* p) noexcept { return VlanTag(p); }
  std::uint16_t tci() const noexcept { return this->be16(0); }
  std::uint8_t pcp() const noexcept { return std::uint8_t(tci() >> 13); }
  bool dei() const noexcept { return (tci() >> 12) & 1; }
  std::uint16_t vid() const noexcept { return tci() & 0x0fff; }
  /// Ethertype of what follows the tag (host order).
  std::uint16_t ethertype() const noexcept { return this->be16(2); }
  void set_tci(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(0, v); }
  void set_ethertype(std::uint16_t v) const noexcept requires ViewBase<B>::kMutable { this->w16(2, v); }

 private:
  constexpr explicit VlanTag(B* p) : ViewBase<B>(p, kLen) {}
};

/// Ethernet II header value (smoltcp-style Repr). emit() writes dst, src, ethertype.
struct EthernetRepr {
  MacAddr dst{};
  MacAddr src{};
  std::uint16_t ethertype = 0;  ///< host order (ethertype::*)
  static constexpr std::size_t length() noexcept { return eth::kHdrLen; }
  template <ByteT B>
  static EthernetRepr from(const EthernetHeader<B>& h) noexcept {
    return {h.dst(), h.src(), h.ethertype()};
  }
  /// Writes 14 bytes. Returns 14, or 0 when `out` is shorter.
  constexpr std::size_t emit(std::span<std::uint8_t> out) const noexcept {
    if (out.size() < eth::kHdrLen) return 0;
    for (std::size_t i = 0; i < eth::kAddrLen; ++i) {
      out[eth::kDstOffset + i] = dst[i];
      out[eth::kSrcOffset + i] = src[i];
    }
    store_be16(out.data() + eth::kTypeOffset, ethertype);
    return eth::kHdrLen;
  }
  friend bool operator==(const EthernetRepr&, const EthernetRepr&) = default;
};

/// VLAN tag body value (TCI + encapsulated ethertype; the TPID is the ethertype of the header
/// before it). emit() writes 4 bytes.
struct VlanRepr {
  std::uint16_t tci = 0;        ///< vlan::make_tci(pcp, dei, vid)
  std::uint16_t ethertype = 0;  ///< what follows the tag, host order
  static constexpr std::size_t length() noexcept { return vlan::kHdrLen; }
  template <ByteT B>
  static VlanRepr from(const VlanTag<B>& t) noexcept { return {t.tci(), t.ethertype()}; }
  /// Returns 4, or 0 when `out` is shorter.
  constexpr std::size_t emit(std::span<std::uint8_t> out) const noexcept {
    if (out.size() < vlan::kHdrLen) return 0;
    store_be16(out.data() + vlan::kTciOffset, tci);
    store_be16(out.data() + vlan::kTypeOffset, ethertype);
    return vlan::kHdrLen;
  }
  friend bool operator==(const VlanRepr&, const VlanRepr&) = default;
};

/// Linux cooked capture v1/v2 field offsets (tcpdump.org LINKTYPE_LINUX_SLL / _SLL2).
namespace sll {
inline constexpr std::size_t kPkttypeOffset = 0, kHatypeOffset = 2, kHalenOffset = 4,
                             kAddrOffset = 6, kProtocolOffset = 14, kHdrLen = 16;
}
namespace sll2 {
inline constexpr std::size_t kProtocolOffset = 0, kIfindexOffset = 4, kHatypeOffset = 8,
                             kPkttypeOffset = 10, kHalenOffset = 11, kAddrOffset = 12,
                             kHdrLen = 20;
}

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

// ofld/offload/virtio_net.hpp — virtio_net_hdr ⇄ packet metadata (include/linux/virtio_net.h
// virtio_net_hdr_to_skb / virtio_net_hdr_from_skb; spec §11.1 S-1..S-6, §11.2 S-7/S-8).
//
// to_packet() is the gate every externally supplied GSO request passes (TAP write, packet
// socket, fuzz input): a header that does not fit its frame or its gso_type is refused with a
// named, counted reason (public bugs B1, B2, B5), never a crash. hdr_len is only a hint and
// is not used to locate anything (B5). Offsets in the header count from the first byte of
// the frame (the Ethernet header on TAP).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::offload::virtio {

using VnetHdr = wire::virtio_net::Hdr;

/// Why virtio_net_hdr_to_skb refuses a header (each -EINVAL in the kernel).
enum class VnetReject : std::uint8_t {
  Ok = 0,
  UnknownGsoType,      ///< S-1: gso_type not TCPV4/TCPV6/UDP/UDP_L4 (± ECN)
  GsoSizeZero,         ///< S-1: GSO with gso_size 0
  CsumOutsideFrame,    ///< S-2: csum_start + max(L4 hdr, csum_offset + 2) beyond the frame
  CsumStartTooSmall,   ///< S-2: transport offset < 20 (40 for TCPV6): inside the L3 header
  L4HeaderMissing,     ///< S-2/S-3: the L4 header does not fit after the transport offset
  Unparseable,         ///< S-3: no IP header found by dissection
  L4ProtoMismatch,     ///< S-3: the dissected IP protocol is not the gso_type's
  UsoWithoutNeedsCsum, ///< S-4: UDP_L4 without NEEDS_CSUM (K-6)
  UsoBadCsumOffset,    ///< S-4: UDP_L4 with csum_offset != 6
  UsoTooManySegments,  ///< S-4: payload > gso_size × 128 (UDP_MAX_SEGMENTS)
  UsoWithEcn,          ///< S-4: UDP_L4 with the ECN modifier
  TcpBadCsumOffset,    ///< S-4: TCP GSO, NEEDS_CSUM with csum_offset != 16 (B2a)
  GsoByFrags,          ///< S-4: gso_size 0xFFFF
  kCount
};
std::string_view to_string(VnetReject r) noexcept;

/// Per-reason counters of to_packet().
struct VnetCounters {
  std::uint64_t accepted = 0;
  std::uint64_t accepted_gso = 0;  ///< accepted and made GSO (S-5)
  std::array<std::uint64_t, std::size_t(VnetReject::kCount)> rejected{};
};

/// The skb GSO types a virtio_net_hdr can describe (VIRTIO_NET_HDR_GSO_TCPV4, _TCPV6,
/// _UDP_L4, the _ECN flag; virtio_net_hdr_from_skb refuses the rest): what GRO may build for a
/// TAP/TUN write (gro::EngineOptions::gso_types). No tunnel type: a GRE or IPIP aggregate
/// would reach the TAP marked as plain TCP.
inline constexpr std::uint32_t kGsoTypes =
    core::skb_gso::TCPV4 | core::skb_gso::TCPV6 | core::skb_gso::UDP_L4 | core::skb_gso::TCP_ECN;

/// UDP_MAX_SEGMENTS in 6.12 (spec §1.3).
inline constexpr std::uint32_t kUdpMaxSegments = 128;

struct ToPacket {
  core::Packet pkt;
  VnetReject reason = VnetReject::Ok;
  bool ok() const noexcept { return reason == VnetReject::Ok; }
};

/// virtio_net_hdr_to_skb for `frame` (link framing `link`). On success the packet carries
/// PARTIAL (NEEDS_CSUM) with transport_header = csum_start, GSO fields per S-5 (gso_type |
/// DODGY, gso_segs 0, only when the payload exceeds gso_size), and the header positions /
/// protocol from dissecting the frame (wire::parse_frame, tunnels not followed).
/// DATA_VALID is ignored (S-6, TAP semantics). Counts into `counters` when given.
/// `owner`: when given, `frame` lies inside *owner (the device read buffer) and a GSO
/// packet's payload after its headers stays there as one fragment (a reference, no copy;
/// tun_get_user's zero-copy frags), the headers being copied into the head; otherwise, and
/// for a non-GSO frame, every byte is copied into the head.
ToPacket to_packet(const VnetHdr& h, std::span<const std::uint8_t> frame,
                   wire::LinkType link = wire::LinkType::Ethernet,
                   VnetCounters* counters = nullptr, const core::BufferRef* owner = nullptr);

/// virtio_net_hdr_from_skb (S-7, S-8). `has_data_valid`: report UNNECESSARY as DATA_VALID.
/// `vlan_hlen`: bytes of a VLAN tag inserted inline in front (added to csum_start).
/// nullopt = -EINVAL (a GSO type with none of TCPV4/TCPV6/UDP_L4).
std::optional<VnetHdr> from_packet(const core::Packet& p, bool has_data_valid = true,
                                   int vlan_hlen = 0) noexcept;
/// from_packet() from a packet's metadata alone: `headlen` its linear bytes (hdr_len of a GSO
/// packet), `data_pos` the position of its first byte (csum_start is counted from there).
/// For segments that are not packets (core::SegmentBatch: header_len(), position 0).
std::optional<VnetHdr> from_meta(const core::PacketMeta& m, std::size_t headlen,
                                 core::pos_t data_pos, bool has_data_valid = true,
                                 int vlan_hlen = 0) noexcept;

/// A frame for a TAP/TUN device write (TAP: Ethernet frame; TUN: IP packet): its
/// virtio_net_hdr (host-order values, from_packet) + its bytes kept in `pkt` (head, frags,
/// frag_list: written with one writev over tap_pieces(), no flattening copy; a default-made
/// frame has none and is empty). Made by the tunnel endpoint's receive path, written by
/// io::VnetWriter.
struct TapFrame {
  TapFrame() = default;
  TapFrame(const wire::virtio_net::Hdr& h, core::Packet p) : vnet(h), pkt(std::move(p)) {}
  wire::virtio_net::Hdr vnet{};
  std::optional<core::Packet> pkt;
  /// Frame length in bytes.
  std::size_t size() const noexcept { return pkt ? pkt->len() : 0; }
};

/// The byte pieces of a device frame in order (pkt's head, frags and frag_list
/// members), appended to `out`; for a writev. Returns the number of pieces appended.
std::size_t tap_pieces(const TapFrame& f, std::vector<std::span<const std::uint8_t>>& out);

}  // namespace ofld::offload::virtio

// ofld/offload/registry.hpp — the offload chain's dispatch table (docs/ARCHITECTURE.md:
// offload).
//
// Like the kernel's packet_offload / net_offload tables (net/core/gro.c, net/ipv4/protocol.c):
// one entry per protocol, keyed by where its number is found — an ethertype (L3 handlers:
// IPv4, IPv6, TEB), an IP protocol number (L4 and IP tunnels: TCP, UDP, GRE, IPIP) or a UDP
// destination port (UDP tunnels: VXLAN, Geneve, GUE). An entry carries the protocol's three hooks;
// a tunnel hook hands the inner packet back to the table, so the chain composes and adding a
// protocol is adding one module plus one row in the protocol table (src/offload/protocols.cpp).
//
// The table is built explicitly from that list (make_registry) and handed to the engines
// (gso::gso_segment, gro::Engine), whose default is builtin_registry().
//
// The hook signatures take the engines' context types (defined by gso/ and gro/ in
// ofld/offload/gso_context.hpp and ofld/offload/gro_context.hpp); they are only
// forward-declared here so that the table does not depend on either engine.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace ofld::offload {

struct GsoContext;  // defined in ofld/offload/gso_context.hpp
struct GroContext;  // defined in ofld/offload/gro_context.hpp

/// Segment the packet held by ctx at the current header (kernel .gso_segment).
/// Returns 0, or a negative errno-style code; the reason is recorded in ctx.
using SegmentFn = int (*)(GsoContext& ctx);
/// Try to merge ctx's packet into a held flow at the current header (kernel .gro_receive).
using GroReceiveFn = void (*)(GroContext& ctx);
/// Finish an aggregate whose current header starts at byte `nhoff` (kernel .gro_complete).
using GroCompleteFn = int (*)(GroContext& ctx, std::uint32_t nhoff);

/// Where a protocol number is looked up.
enum class Key : std::uint8_t { Ethertype, IpProto, UdpPort };

/// One protocol's hooks; any of them may be null (then that engine passes the packet on).
struct ProtocolOffload {
  std::string_view name;
  SegmentFn segment = nullptr;
  GroReceiveFn gro_receive = nullptr;
  GroCompleteFn gro_complete = nullptr;
};

/// The table. Lookups are O(log n) over a handful of entries; fill it once at start-up.
class Registry {
 public:
  static constexpr std::size_t kMaxEntries = 64;

  /// Add or extend the entry for (key, number): non-null hooks in `hooks` overwrite.
  /// Returns false when the table is full.
  bool add(Key key, std::uint16_t number, const ProtocolOffload& hooks) noexcept;
  /// The entry for (key, number), or nullptr.
  const ProtocolOffload* find(Key key, std::uint16_t number) const noexcept;

 private:
  struct Slot {
    Key key;
    std::uint16_t number;
    ProtocolOffload hooks;
  };
  static constexpr std::size_t kIndexSize = 256;  // open addressing over slots_, load <= 1/4
  static std::size_t bucket(Key key, std::uint16_t number) noexcept {
    return ((std::uint32_t(number) * 0x9E3779B1u) >> 24 ^ std::uint32_t(key) * 0x55u) &
           (kIndexSize - 1);
  }
  std::array<Slot, kMaxEntries> slots_{};
  std::array<std::uint8_t, kIndexSize> index_{};  // slot number + 1; 0 = empty
  std::size_t count_ = 0;
};

/// Dispatch at the MAC level (skb_mac_gso_segment): the segment hook for ethertype
/// `protocol` (0x6558 TEB = an Ethernet header follows) in ctx.reg. Records
/// UnknownEthertype when none, RecursionLimit past kMaxGsoRecursion nested calls.
int mac_gso_segment(GsoContext& ctx, std::uint16_t protocol);
/// Dispatch to the IP-protocol segment hook (inet_offloads[proto]). Records UnknownIpProto.
int ipproto_gso_segment(GsoContext& ctx, std::uint8_t proto);

/// One row of a protocol table: where the protocol's number is looked up, the number and
/// the protocol's hooks.
struct ProtocolEntry {
  Key key;
  std::uint16_t number;
  ProtocolOffload hooks;
};

/// The built-in protocols, one row per (key, number), each with its GSO and GRO hooks:
/// Ethernet (TEB), IPv4, IPv6, TCP, UDP, GRE, IPIP, SIT, VXLAN (UDP 4789, 8472), Geneve (UDP
/// 6081) and GUE (UDP 5555, 6080). The one list both engines use (src/offload/protocols.cpp).
std::span<const ProtocolEntry> builtin_protocols() noexcept;

/// A table holding `rows` (later rows extend earlier ones with the same key and number, as
/// Registry::add). Throws std::length_error when they do not fit (Registry::kMaxEntries).
Registry make_registry(std::span<const ProtocolEntry> rows);

/// make_registry(builtin_protocols()), built on first use; the engines' default table.
const Registry& builtin_registry();

}  // namespace ofld::offload

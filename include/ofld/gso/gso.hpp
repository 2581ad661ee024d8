// ofld/gso/gso.hpp — the software GSO engine (docs/ARCHITECTURE.md: gso; spec §4, docs/rules.md X-).
//
// gso_segment() drives the offload chain (ofld/offload/registry.hpp) from the frame's first
// header down to the L4 hook, which calls core::skb_segment() to build the segments; on the way back
// up each hook rewrites its header per segment (TCP X-21, IPv4/IPv6, UDP X-29, UDP
// tunnels X-31, GRE X-33). tx_prepare() is validate_xmit_skb: it carries out what
// core::resolve_tx decides for a device (software GSO, linearize, checksum help).
//
// Input contract for gso_segment(): data() at the first byte of the frame (the Ethernet header,
// or the IP header of a raw-IP frame); mac_header (Ethernet frames), network_header,
// transport_header, protocol set; for tunnels encapsulation + inner_* positions +
// inner_protocol(_type); gso.size/gso.type set; csum PARTIAL at the innermost L4 header with
// the pseudo-header seed in its field (or NONE: TCP reseeds, X-17). prepare_frame() fills all
// of this from a parsed frame.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ofld/core/features.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/core/segment_batch.hpp"
#include "ofld/offload/gso_context.hpp"
#include "ofld/offload/registry.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::gso {

using offload::GsoContext;
using offload::GsoCounters;
using offload::GsoOptions;
using offload::GsoReason;
using offload::GsoSeg;
using offload::SegMode;

// skb_segment and the other segment builders the protocol hooks call (skb_segment_list,
// segment_payload for GSO_PARTIAL, the SKB_GSO_CB checksum helpers, pseudo_seed, the fast-path
// switch) are core's: ofld/core/skb_segment.hpp. The dispatch helpers (mac_gso_segment,
// ipproto_gso_segment) are the registry's: ofld/offload/registry.hpp.

// ---- the engine -----------------------------------------------------------------------------

struct GsoResult {
  GsoResult() = default;
  GsoResult(GsoResult&&) noexcept = default;
  GsoResult& operator=(GsoResult&&) noexcept = default;
  /// Drops the segments' page references per page, not per segment (core::destroy_packets).
  ~GsoResult() { core::destroy_packets(segs); }

  std::vector<core::Packet> segs;  ///< output frames (data() at the frame start)
  GsoReason reason = GsoReason::Ok;
  /// the device segments; `segs` holds the input packet unchanged (gso_segs set).
  bool hw = false;
  bool ok() const noexcept { return reason == GsoReason::Ok; }
};

/// __skb_gso_segment(skb, features) for a packet on `dev` (dev.features for offload_csum,
/// dev.hw_enc_features for tunnels), through the protocol hooks of `opts.registry` (the
/// built-in table when null; it must outlive the call). Counts into `counters` (may be null).
/// On error the input packet is dropped and the reason returned (and counted).
GsoResult gso_segment(core::Packet&& p, core::Features features, const core::Device& dev,
                      GsoCounters* counters = nullptr, const GsoOptions& opts = {});

/// What gso_segment_batch() did; the segments are in the caller's SegmentBatch.
struct GsoBatchResult {
  GsoReason reason = GsoReason::Ok;
  /// the device segments; the batch holds the input packet unchanged (packet form).
  bool hw = false;
  bool ok() const noexcept { return reason == GsoReason::Ok; }
};

/// gso_segment() with the segments put into `out` (replacing what it held; its storage is
/// reused, so a batch kept across calls allocates nothing in the steady state). The segments,
/// their bytes, metadata and the counters are exactly gso_segment()'s.
///
/// The common TSO case — a TCP super-packet (SKB_GSO_TCPV4/TCPV6, with TCP_ECN, TCP_FIXEDID*
/// or DODGY) over Ethernet/VLAN and IPv4/IPv6, plain or in one UDP tunnel (VXLAN, Geneve,
/// GUE: UDP_TUNNEL[_CSUM], the outer checksum by LCO, C-30) or IP-in-IP (IPXIP4/6), without
/// remcsum or GSO-partial, headers in the linear head and the payload in page fragments, a
/// device with NETIF_F_SG and the checksum offload for the (inner) protocol, the
/// built-in hooks and GsoOptions::fast_path — gives the slab form: the
/// headers of every segment in one slab, the payload as slices of the input's buffers, one
/// metadata template (core::SegmentBatch). It builds no Packet per segment, which makes it
/// several times cheaper per segment. Every other case gives the packet form (gso_segment's
/// packets). On error `out` is empty and the reason returned (and counted).
GsoBatchResult gso_segment_batch(core::Packet&& p, core::Features features, const core::Device& dev,
                                 core::SegmentBatch& out, GsoCounters* counters = nullptr,
                                 const GsoOptions& opts = {});

/// validate_xmit_skb (F-17..F-20): resolve the packet against `dev` and do what is needed in
/// software. Output: what the device is handed (one packet, or the segments).
struct TxResult {
  TxResult() = default;
  TxResult(TxResult&&) noexcept = default;
  TxResult& operator=(TxResult&&) noexcept = default;
  ~TxResult() { core::destroy_packets(out); }  ///< as ~GsoResult

  std::vector<core::Packet> out;
  core::TxAction action{};
  GsoReason gso_reason = GsoReason::Ok;
  core::PacketError csum_error = core::PacketError::Ok;
  bool dropped() const noexcept {
    return gso_reason != GsoReason::Ok || csum_error != core::PacketError::Ok;
  }
};
TxResult tx_prepare(core::Packet&& p, const core::Device& dev, GsoCounters* counters = nullptr,
                    const offload::Registry& reg = offload::builtin_registry());

/// tx_prepare() with what the device is handed put into `out` (replacing what it held): the
/// segments of software GSO as gso_segment_batch() gives them (a slab where it can), else
/// the one packet (packet form). `out` is empty when the result is dropped().
struct TxBatchResult {
  core::TxAction action{};
  GsoReason gso_reason = GsoReason::Ok;
  core::PacketError csum_error = core::PacketError::Ok;
  bool dropped() const noexcept {
    return gso_reason != GsoReason::Ok || csum_error != core::PacketError::Ok;
  }
};
TxBatchResult tx_prepare_batch(core::Packet&& p, const core::Device& dev, core::SegmentBatch& out,
                               GsoCounters* counters = nullptr,
                               const offload::Registry& reg = offload::builtin_registry());

// ---- packets from frames --------------------------------------------------------------------

/// How the L4 checksum fields of a frame should be read by prepare_frame().
enum class InputCsum : std::uint8_t {
  Complete,  ///< fields hold full checksums: replace them with pseudo-header seeds
  Seeds,     ///< fields already hold seeds (capture from a host with offloads)
};

struct PrepareOptions {
  std::uint16_t gso_size = 0;  ///< mss; 0 = not GSO
  InputCsum input = InputCsum::Complete;
  /// > 0: put the innermost L4 payload in page fragments of this many bytes (like a TCP
  /// socket's skb: headers linear, data in pages), so SG segments can reference it.
  std::size_t frag_size = 0;
};

/// Why prepare_frame() did not produce a GSO packet.
enum class PrepareStatus : std::uint8_t {
  Gso,          ///< packet set up for GSO
  Finish,       ///< not GSO, but PARTIAL with a seed (InputCsum::Seeds): checksum to finish
  PassThrough,  ///< not TCP/UDP, fragment, payload <= gso_size, unsupported tunnel...
};

struct Prepared {
  core::Packet pkt;
  PrepareStatus status = PrepareStatus::PassThrough;
  std::string why;  ///< pass-through reason (human text)
  /// PassThrough of a frame whose payload exceeds gso_size (it leaves unsegmented, e.g.
  /// "gre-in-udp (not supported)"), as opposed to one that needs no segmenting.
  bool oversize = false;
};

/// Set up `frame` (already parsed as `layout`) as the kernel stack would hand it to GSO:
/// header positions, protocol, tunnel metadata (VXLAN / GUE / GRE / IPIP / SIT / IP4IP6 /
/// IP6IP6, encapsulation, inner_*), gso_type (TCPV4/TCPV6/UDP_L4, TCP_ECN if CWR,
/// IPXIP4/IPXIP6 by the outer family for IP-in-IP and GUE, UDP_TUNNEL(_CSUM), GRE(_CSUM),
/// TUNNEL_REMCSUM for an RCO VXLAN header), PARTIAL at the innermost L4 header with the
/// pseudo-header seed (C-12), outer UDP seed for UDP_TUNNEL_CSUM (C-30 GSO case).
/// Frames with an Ethernet padding trailer are trimmed to the IP datagram.
Prepared prepare_frame(std::span<const std::uint8_t> frame, const wire::Layout& layout,
                       const PrepareOptions& opt);

}  // namespace ofld::gso

// ofld/gso/gso.hpp — the software GSO engine (docs/ARCHITECTURE.md: gso; spec §4 X-1..X-36).
//
// gso_segment() drives the offload chain (ofld/offload/registry.hpp) from the frame's first
// header down to the L4 hook, which calls skb_segment() to build the segments; on the way back
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
#include "ofld/offload/gso_context.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::gso {

using offload::GsoContext;
using offload::GsoCounters;
using offload::GsoOptions;
using offload::GsoReason;
using offload::GsoSeg;
using offload::SegMode;

// ---- building blocks used by the protocol hooks ---------------------------------------------

/// skb_segment (X-5..X-13): split ctx.skb's payload (from data() to the end) into gso_size
/// pieces; every segment gets a copy of the headers [frame_start, data). Construction mode by
/// features: SG → fragment references; no SG + csum → plain copy (PARTIAL kept); neither →
/// fused copy-and-sum (NONE, CB.csum = payload sum). Fills ctx.segs. Returns 0 or -EINVAL
/// (reason TooManyFrags / NothingToSegment).
int skb_segment(GsoContext& ctx);

/// What the L4 hooks call instead of skb_segment(): sets ctx.data_offset, then
///  * gso_size == GSO_BY_FRAGS → skb_segment_by_frags();
///  * sg && csum at this level and GSO_PARTIAL in ctx.features (X-10 GSO-partial branch):
///    partial_segs = min(payload, 65534) / gso_size; if > 1 the payload is split into chunks
///    of partial_segs × gso_size (skb_segment() run with the enlarged gso.size, restored
///    afterwards) and every output becomes a GSO skb: gso_size = the original, gso_segs =
///    partial_segs, type |= PARTIAL, DODGY cleared; a tail of at most one gso_size gets
///    gso_size 0, a longer tail gso_segs = ceil(tail payload / gso_size). ctx.gso_partial set;
///  * otherwise plain skb_segment().
/// Returns 0 or -EINVAL with ctx.reason set, as skb_segment().
int segment_payload(GsoContext& ctx);

/// X-11 GSO_BY_FRAGS: one segment per payload run — the head's own payload (head + page
/// frags), then each frag_list member's [data, end) — each with the headers
/// [frame_start, data) copied. Construction as skb_segment (SG references page frags;
/// without SG or without csum the bytes are copied and summed into the GSO CB, X-8/X-9).
int skb_segment_by_frags(GsoContext& ctx);

/// X-32 skb_segment_list (ctx.skb's data() at the head's payload, as for skb_segment):
/// the head (its own bytes, frag_list removed) and every frag_list
/// member become packets again. Members keep their own network and transport headers (the
/// bytes in front of their data(), as GRO left them; their network_header/transport_header
/// positions must be set); the bytes from the frame start up to the head's network header
/// (link header + any tunnel headers) are copied from the head in front of each. Member
/// metadata is the head's (__copy_skb_header), positions re-based; gso cleared. Lengths,
/// IDs and checksums are left to the L3/L4 hooks. Errors: HeaderTruncated (member without
/// its headers), BadGsoType (no frag_list).
int skb_segment_list(GsoContext& ctx);

/// X-22 (TCP) / X-28 (UDP) fraglist NAT fix-up after skb_segment_list(): if the second
/// segment's addresses and ports equal the head's (at segment offsets `nhoff` / `thoff`),
/// nothing changes; otherwise every later segment gets the head's addresses and ports, its
/// L4 checksum field (at thoff + check_off) patched incrementally (RFC 1624; a PARTIAL
/// segment's seed only for the address words; UDP: a zero field is left alone and a patched
/// 0 becomes 0xFFFF) and its IPv4 header checksum recomputed. Uses each segment's own
/// network/transport positions. Returns 0 or -EINVAL (HeaderTruncated).
int segment_list_nat_fixup(GsoContext& ctx, int nhoff, int thoff, std::uint16_t check_off,
                           bool udp);

/// __copy_skb_header as the GSO builders use it: header positions re-based by `base` (the
/// frame start becomes position 0), protocol/inner/vlan/encapsulation metadata, the checksum
/// state (a PARTIAL csum_start re-based too). gso info (and csum_valid, csum_complete_sw,
/// pending_csum) is not copied. Works on any PacketMeta, so a metadata template can be filled
/// once and stamped into many segments (skb_segment's fast path).
void copy_skb_header(const core::PacketMeta& src, core::PacketMeta& dst, core::pos_t base);

/// For GSO-partial outputs (ctx.gso_partial): the length counted from segment offset
/// `from` of a packet carrying one gso_size of payload (X-25 tot_len, X-27 payload_len,
/// X-31 uh->len). For any other segment: its actual length from `from`.
std::size_t one_mss_len(const GsoContext& ctx, const GsoSeg& s, int from) noexcept;

/// X-15 gso_make_checksum: fold(sum(transport header .. CB.csum_start) + CB.csum), then
/// CB := (res, transport header). Returns the checksum field value (host order).
std::uint16_t gso_make_checksum(GsoSeg& s, csum::wsum res) noexcept;
/// X-14 gso_reset_checksum: CB := (res, csum_start) unless remcsum_offload.
void gso_reset_checksum(GsoSeg& s, csum::wsum res) noexcept;

/// Dispatch at the MAC level (skb_mac_gso_segment): the hook for ethertype `protocol`
/// (0x6558 TEB = an Ethernet header follows). Records UnknownEthertype when none.
int mac_gso_segment(GsoContext& ctx, std::uint16_t protocol);
/// Dispatch to the IP-protocol hook (inet_offloads[proto]). Records UnknownIpProto.
int ipproto_gso_segment(GsoContext& ctx, std::uint8_t proto);

/// Pseudo-header seed (C-12: folded, not complemented) for the L4 header at `l4_pos` whose IP
/// header is at `ip_pos` (version from its first nibble), for an L4 length of `len` bytes.
std::uint16_t pseudo_seed(const core::Packet& p, core::pos_t ip_pos, std::uint32_t len,
                          std::uint8_t proto) noexcept;

// ---- the engine -----------------------------------------------------------------------------

struct GsoResult {
  std::vector<core::Packet> segs;  ///< output frames (data() at the frame start)
  GsoReason reason = GsoReason::Ok;
  /// the device segments; `segs` holds the input packet unchanged (gso_segs set).
  bool hw = false;
  bool ok() const noexcept { return reason == GsoReason::Ok; }
};

/// __skb_gso_segment(skb, features) for a packet on `dev` (dev.features for offload_csum,
/// dev.hw_enc_features for tunnels). Counts into `counters` (may be null). On error the
/// input packet is dropped and the reason returned (and counted). `opts`: GsoOptions.
GsoResult gso_segment(core::Packet&& p, core::Features features, const core::Device& dev,
                      GsoCounters* counters = nullptr, const GsoOptions& opts = {});

/// validate_xmit_skb (F-17..F-20): resolve the packet against `dev` and do what is needed in
/// software. Output: what the device is handed (one packet, or the segments).
struct TxResult {
  std::vector<core::Packet> out;
  core::TxAction action{};
  GsoReason gso_reason = GsoReason::Ok;
  core::PacketError csum_error = core::PacketError::Ok;
  bool dropped() const noexcept {
    return gso_reason != GsoReason::Ok || csum_error != core::PacketError::Ok;
  }
};
TxResult tx_prepare(core::Packet&& p, const core::Device& dev, GsoCounters* counters = nullptr);

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
  /// "geneve (not supported)"), as opposed to one that needs no segmenting.
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

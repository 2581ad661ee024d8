// ofld/offload/gro_context.hpp — the state the GRO offload chain works on (the analogue of the
// kernel's NAPI_GRO_CB control block, struct napi_gro_cb in include/net/gro.h) and the
// helpers every protocol module shares (header access, checksum rules G-11..G-15, the merge
// skb_gro_receive G-16..G-20, remote checksum offload W-22/W-23, dispatch through the
// registry with the recursion limit G-10).
//
// Offsets: every offset here is in bytes from the arriving packet's data(), which is the
// start of the outer Ethernet header (unlike the kernel, where data is at the network header
// by the time GRO runs). Held aggregates are stored the same way, so a header of a held
// packet that matches the current one in layout is found at the same offset
// (`p->data + off` in the kernel).
//
// Version choices (kernel 6.18, spec §16 K-7, written down here once):
//  * CWR, measured on 6.18 with `ofld conformance gro` (flags_cwr: 5 segments, #1 and #2 with
//    CWR → kernel [100, 100, 100, 200]): a CWR segment never joins a held flow (T-5 of 6.12)
//    AND CWR is part of the compared flag word (only FIN and PSH masked, T-6 [newer]). So
//    neither the spec's 6.12 expectation [100, 100, 300] nor the [newer] one [100, 200, 200]
//    holds on 6.18. Completion records SKB_GSO_TCP_ACCECN when the first header has CWR
//    (unreachable: a CWR head never merges). Re-run after the change (`ofld conformance gro`,
//    6.18.44): all 51 built-in veth cases agree with the kernel byte for byte, flags_cwr
//    included, in both address families.
//  * IPv4 ID: N-15 — fixed-ID marking without DF, separate bits for the outer (bit 0) and the
//    inner (bit 1) IPv4 header, outer IDs checked like inner ones (no DF exemption).
//  * BIG TCP (G-16, G-17): with gro_ipv4_max_size raised, plain TCP over IPv4 aggregates past
//    65535 bytes and completes with total length 0 (N-5), as the kernel does. IPv6: the
//    running kernel (6.18.44, veth with gro_max_size 185000) was seen to stop IPv6 TCP
//    aggregates below 65536 bytes (conformance case big_tcp_v6), so that is the default;
//    GroConfig::ipv6_big_tcp builds them up to gro_max_size with payload length 0 and no
//    Jumbo hop-by-hop option, the form kernels with "BIG TCP without HBH" build (N-11 without
//    the HBH; tcpdump's bigtcp-ipv6.pcap).
//  * Fraglist GRO (GroConfig::gro_fraglist = NETIF_F_GRO_FRAGLIST; T-4, T-13, T-21, G-21,
//    U-3, U-8, U-10, U-12): members are chained on the head's frag_list with their headers
//    pulled (network/transport header kept, as skb_segment_list needs them). Only for flows
//    that are not inside a tunnel (encap_mark clear). The socket lookup of T-4 is modelled by
//    GroConfig::tcp_established_ports (a local established socket on the destination port).
//    A GSO skb never starts a fraglist flow; one arriving at a fraglist flow of count 1
//    turns it into a normal flow (T-4); at a larger fraglist flow it is not merged (flush).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/offload/registry.hpp"

namespace ofld::offload {

/// Why a packet was not merged, or why a held aggregate was completed. Every packet that
/// GRO does not merge and every completion is counted under exactly one reason.
enum class GroReason : std::uint8_t {
  None = 0,
  NewFlow,         ///< (not merged) held as the first packet of a new flow
  GroDisabled,     ///< G-1
  NoHandler,       ///< G-3 / N-1 / N-7 / W-7: protocol without a GRO handler
  Truncated,       ///< a header is not fully present (C5)
  HasFragList,     ///< G-4: the packet already has a frag_list
  GsoInput,        ///< G-4: already-GSO input that may not be merged
  Recursion,       ///< G-10: 15 nested gro_receive calls
  IpOptions,       ///< N-1: first byte != 0x45 (options or not version 4)
  IpFragment,      ///< N-1 / N-7: IPv4 fragment or IPv6 Fragment header
  IpHeaderCsum,    ///< N-1: bad IPv4 header checksum
  IpLength,        ///< N-2 / N-6: tot_len / payload_len != real length (padding, truncation)
  IpReservedBit,   ///< N-2: frag_off bit other than DF
  Ttl,             ///< N-10 / N-12: TTL / hop limit differ
  Tos,             ///< N-10 / N-12: TOS / traffic class (incl. ECN) differ
  Df,              ///< N-12: DF differs
  IpId,            ///< N-14 / N-15: IPv4 ID neither incrementing nor fixed
  Checksum,        ///< T-1 / U-1 / W-8: L4 or GRE checksum invalid
  TcpHeader,       ///< T-2: doff < 5 or header not present
  Flags,           ///< T-6: flag word (incl. window, doff, CWR) differs
  Ack,             ///< T-7
  Options,         ///< T-8
  Size,            ///< T-10: payload larger than mss, zero-length, or gso_size mismatch
  SeqGap,          ///< T-11
  SizeLimit,       ///< G-16: merged datagram would exceed 65535 bytes
  FinalFlags,      ///< T-17: URG/PSH/RST/SYN/FIN in the packet (merged first if possible)
  FraglistCsum,    ///< T-13 / U-10: fraglist member with another ip_summed or csum_level
  FraglistCount,   ///< T-13: fraglist flow already holds 64 segments
  FraglistMode,    ///< T-4 / U-8: fraglist mode differs between packet and flow
  ShortSegment,    ///< T-16 / U-11: shorter than mss (merged, then completed)
  UdpZeroCsum,     ///< U-5
  UdpLength,       ///< U-6
  UdpNoGro,        ///< U-3: no eligible UDP GRO mode (no UDP_GRO socket, no GRO_UDP_FWD)
  UdpLonger,       ///< U-9: datagram longer than the flow's first
  UdpCountMax,     ///< U-11: 64 segments
  UdpEncapLocal,   ///< U-3: already encapsulated (locally built tunnel packet, E8)
  TunnelNested,    ///< W-1 / U-4: a second tunnel layer in one pass
  TunnelCsum,      ///< U-4: outer UDP checksum non-zero and not validated
  GreFlags,        ///< W-5: GRE version != 0 or a flag other than C/K
  GreCsumFou,      ///< W-6
  GueInvalid,      ///< W-21 / V-9
  RcoNoCsum,       ///< W-15 / W-21: RCO needs a validated checksum
  TableFull,       ///< G-7: bucket held 8 flows, the oldest is completed
  Timeout,         ///< G-9: flush timeout expired
  PollEnd,         ///< G-9: end of a NAPI-style batch (flush of every held flow)
  GeneveVerOam,    ///< GN-2 (docs/geneve.md): Geneve version != 0 or the O (OAM) bit set
  Count_
};
inline constexpr std::size_t kGroReasonCount = std::size_t(GroReason::Count_);
/// Short stable name ("seq_gap", "table_full", ...).
std::string_view to_string(GroReason r) noexcept;

/// Limits (spec §1.3).
inline constexpr std::size_t kGroHashBuckets = 8;      ///< GRO_HASH_BUCKETS
inline constexpr std::size_t kMaxGroSkbs = 8;          ///< MAX_GRO_SKBS per bucket
inline constexpr unsigned kGroRecursionLimit = 15;     ///< GRO_RECURSION_LIMIT
inline constexpr std::uint32_t kGroMaxSize = 65536;    ///< gro_max_size default (bytes)
inline constexpr std::uint16_t kUdpGroCntMax = 64;     ///< UDP_GRO_CNT_MAX

/// UDP tunnel sockets and UDP_GRO sockets the host "has" (what the kernel's socket lookup
/// would find, U-2..U-4). Ports in host order.
struct GroUdpTunnel {
  std::uint16_t port = 0;           ///< local UDP port the tunnel listens on
  std::uint16_t registry_port = 0;  ///< registry UdpPort entry with the hooks (4789 VXLAN,
                                    ///< 6080 GUE, 6081 Geneve)
  bool remcsum_rx = false;          ///< VXLAN_F_REMCSUM_RX (GUE: always honoured, V-10)
  bool remcsum_nopartial = false;   ///< *_REMCSUM_NOPARTIAL (W-22 no-partial mode)
};
struct GroConfig {
  bool gro = true;                          ///< NETIF_F_GRO (G-1)
  bool udp_gro_fwd = false;                 ///< NETIF_F_GRO_UDP_FWD (U-3)
  std::vector<std::uint16_t> udp_gro_socks; ///< local sockets with UDP_GRO (by dest port)
  std::vector<GroUdpTunnel> udp_tunnels;    ///< UDP tunnel sockets (by dest port)
  bool gro_fraglist = false;                ///< NETIF_F_GRO_FRAGLIST (T-4, U-3)
  /// Local TCP ports with an established socket (T-4's lookup, by destination port, host
  /// order): such flows use normal GRO even when gro_fraglist is on.
  std::vector<std::uint16_t> tcp_established_ports;
  std::uint32_t gro_max_size = kGroMaxSize; ///< G-16 (IPv6; dev->gro_max_size, bytes)
  std::uint32_t gro_ipv4_max_size = kGroMaxSize;  ///< G-16 (IPv4; dev->gro_ipv4_max_size, bytes)
  /// G-17 for IPv6: false (the running 6.18 kernel as measured) keeps IPv6 aggregates below
  /// 65536 bytes whatever gro_max_size says; true lets plain TCP over IPv6 grow to
  /// gro_max_size, completed with payload length 0 and no hop-by-hop header.
  bool ipv6_big_tcp = false;
  /// Key of the engine's flow hash (gro::flow_hash; bucket choice and the first flow test,
  /// G-2). Unset (the default): each engine draws a random key, as the kernel keys its RSS
  /// and flow-dissector hashes, so that nobody can aim flows into one bucket or build
  /// colliding flows offline. Set it where output order must be reproducible: flows in
  /// different buckets complete in bucket order at a flush (G-9), so the order of
  /// different flows' aggregates depends on the key (`ofld gro` fixes it, gro_tool.hpp).
  std::optional<std::uint64_t> flow_hash_key;

  const GroUdpTunnel* tunnel(std::uint16_t dport) const noexcept {
    for (const auto& t : udp_tunnels)
      if (t.port == dport) return &t;
    return nullptr;
  }
  bool tcp_established(std::uint16_t dport) const noexcept {
    for (auto p : tcp_established_ports)
      if (p == dport) return true;
    return false;
  }
  bool udp_gro_sock(std::uint16_t dport) const noexcept {
    for (auto p : udp_gro_socks)
      if (p == dport) return true;
    return false;
  }
};

/// G-16/G-17: the bytes (counted from the outermost network header) an aggregate must stay
/// below: gro_ipv4_max_size, or for an outermost IPv6 header gro_max_size, at most 65536
/// unless GroConfig::ipv6_big_tcp.
inline std::uint32_t gro_size_limit(const GroConfig& c, bool ipv6) noexcept {
  if (!ipv6) return c.gro_ipv4_max_size;
  return c.ipv6_big_tcp || c.gro_max_size < kGroMaxSize ? c.gro_max_size : kGroMaxSize;
}

/// The link layer a GRO engine receives (the device type): Ethernet frames (the MAC header
/// is compared, G-2, and the ethertype dispatches, G-3) or raw IP (for gro_cells after an L3
/// tunnel such as ip6gre: frames start at the IP header, the version nibble dispatches).
enum class GroLink : std::uint8_t { Ethernet, RawIp };

/// Bytes of per-flow state a held flow keeps for the protocol module that owns its fast
/// receive hook (GroFastHook); the engine stores it and never reads it.
inline constexpr std::size_t kGroFlowAreaSize = 144;

/// A held aggregate: the packet plus its control block (NAPI_GRO_CB(p)).
struct GroHeld {
  core::Packet pkt;
  std::uint32_t hash = 0;
  std::uint16_t count = 1;          ///< segments aggregated
  std::uint16_t data_offset = 0;    ///< payload offset = length of all parsed headers
  std::array<std::uint16_t, 2> network_offsets{};  ///< [outer, inner] L3 header offsets
  std::uint16_t transport_offset = 0;  ///< innermost L4 header offset (skb_transport_offset)
  std::uint8_t proto = 0;           ///< innermost L4 protocol
  std::uint8_t ip_fixedid = 0;      ///< N-15: bit 0 outer/only IPv4 header, bit 1 inner
  bool encap_mark = false;          ///< a tunnel layer was parsed (selects the inner offset)
  bool is_ipv6 = false;             ///< the outermost L3 header is IPv6 (G-16's limit)
  bool is_flist = false;            ///< fraglist flow (T-4, U-3): members on frag_list
  bool same_flow = false;           ///< per-round candidate mark (gro_list_prepare, L3, L4)
  std::uint64_t age_ns = 0;         ///< when it was held (napi jiffies analogue)
  /// Opaque to the engine: the state of the fast receive hook's module for this flow (the
  /// TCP module's header template, tcp.cpp), written by GroFastHook::hold when the flow is
  /// held.
  alignas(16) std::array<std::uint8_t, kGroFlowAreaSize> flow_area{};
  core::BufferRef agg;              ///< storage for merged payload that had to be copied
};

/// The arriving packet's control block plus the round's candidates and result.
struct GroContext {
  // -- configuration --
  const GroConfig* cfg = nullptr;
  const Registry* reg = nullptr;

  // -- the arriving packet (skb) and NAPI_GRO_CB(skb) --
  core::Packet* skb = nullptr;
  std::uint32_t data_offset = 0;    ///< skb_gro_offset
  std::uint16_t count = 1;
  bool flush = false;
  bool same_flow = false;           ///< set when merged
  std::uint8_t proto = 0;
  bool encap_mark = false;
  bool is_fou = false;
  bool is_ipv6 = false;
  bool is_flist = false;            ///< T-4 / U-3 decision for this packet
  bool csum_valid = false;
  std::uint8_t csum_cnt = 0;
  core::wsum csum = 0;
  std::int64_t gro_remcsum_start = -1;
  std::uint8_t recursion = 0;
  std::uint16_t protocol = 0;       ///< skb->protocol: the outermost L3 ethertype
                                    ///< (gro_link_prepare)
  std::array<std::uint16_t, 2> network_offsets{};
  std::uint16_t transport_offset = 0;
  const GroUdpTunnel* udp_tunnel = nullptr;  ///< tunnel socket found by UDP (U-4)

  // -- candidates (the bucket, newest first) and the outcome --
  std::span<GroHeld*> candidates;
  GroHeld* pp = nullptr;            ///< held flow to complete now (the kernel's pp)
  GroReason skb_reason = GroReason::None;  ///< why the skb was not merged / was flushed
  GroReason pp_reason = GroReason::None;   ///< why pp is completed

  // -- complete side --
  GroHeld* cp = nullptr;            ///< aggregate being completed
  std::uint32_t l3_off = 0;         ///< offset of the L3 header of the current layer
  bool l3_v6 = false;

  /// Record why the skb is not merged (first reason wins) and set its flush flag.
  void flush_skb(GroReason r) noexcept {
    flush = true;
    if (skb_reason == GroReason::None) skb_reason = r;
  }
  /// Mark p for completion with reason r (first reason wins).
  void complete_p(GroHeld* p, GroReason r) noexcept {
    pp = p;
    if (pp_reason == GroReason::None) pp_reason = r;
  }
  void note_skb(GroReason r) noexcept {
    if (skb_reason == GroReason::None) skb_reason = r;
  }
  std::size_t gro_len() const noexcept { return skb->len() - data_offset; }  ///< skb_gro_len
};

// ---- helpers shared by the protocol modules (src/offload/gro_hooks.cpp) ---------------------

/// skb_gro_header: pointer to [off, off+n) of the skb's bytes made linear; nullptr if the
/// packet is shorter.
/// Inline for the common case (the bytes are already in the head); gro_header_pull does the
/// rest.
const std::uint8_t* gro_header_pull(GroContext& ctx, std::size_t off, std::size_t n) noexcept;
inline const std::uint8_t* gro_header(GroContext& ctx, std::size_t off, std::size_t n) noexcept {
  core::Packet& p = *ctx.skb;
  if (off + n <= p.headlen()) return p.data() + off;
  return gro_header_pull(ctx, off, n);
}
/// Mutable variant (for RCO no-partial rewrites).
std::uint8_t* gro_header_mut(GroContext& ctx, std::size_t off, std::size_t n) noexcept;
/// Header of a held packet at the same offset (its headers are linear).
inline const std::uint8_t* held_header(const GroHeld& p, std::size_t off) noexcept {
  return p.pkt.data() + off;
}

/// G-11: is validation needed for a checksum whose field is `check` (zero_okay for UDP)?
bool gro_checksum_validate_needed(const GroContext& ctx, bool zero_okay, std::uint16_t check) noexcept;
/// G-11..G-13 __skb_gro_checksum_validate over [data_offset, end) with pseudo sum `psum`.
/// Returns 0 when valid; otherwise the non-zero folded result.
std::uint16_t gro_checksum_validate(GroContext& ctx, bool zero_okay, std::uint16_t check,
                                    core::wsum psum) noexcept;
/// G-14 skb_gro_checksum_try_convert.
void gro_checksum_try_convert(GroContext& ctx, core::wsum psum) noexcept;
/// G-15 skb_gro_postpull_rcsum over header bytes [off, off+n).
void gro_postpull_rcsum(GroContext& ctx, std::size_t off, std::size_t n) noexcept;

/// G-16..G-20 skb_gro_receive (core::skb_gro_receive, ofld/core/skb_gro.hpp) with the
/// control-block state: append the skb's payload [data_offset, end) to p, add ctx.count to
/// p.count and mark the skb merged. Returns false (E2BIG) when the size limit or the skb's
/// flush flag refuses the merge.
bool gro_merge(GroContext& ctx, GroHeld& p) noexcept;

/// G-21 skb_gro_receive_list (core::skb_gro_receive_list): chain the skb on p's frag_list
/// with its headers pulled (network and transport header recorded first). Refused (false)
/// when p's length from its network header plus the skb's would reach 65536 (fixed cap, not
/// gro_max_size), or the skb is flushed or has a frag_list itself.
bool gro_merge_list(GroContext& ctx, GroHeld& p) noexcept;
/// The T-13 / U-10 checksum-state condition for a fraglist merge: equal ip_summed and, for
/// CHECKSUM_UNNECESSARY, equal csum_level.
bool gro_flist_csum_match(const core::Packet& a, const core::Packet& b) noexcept;

/// Call the receive hook of (key, number) with the recursion limit (G-10). No hook or the
/// limit reached → skb flushed with NoHandler / Recursion.
void gro_call_receive(GroContext& ctx, Key key, std::uint16_t number) noexcept;
/// Call the complete hook of (key, number) at nhoff. Returns -1 when there is none.
int gro_call_complete(GroContext& ctx, Key key, std::uint16_t number, std::uint32_t nhoff) noexcept;

/// N-10..N-16 gro_receive_network_flush: compare the L3 header(s) in front of the L4 header at
/// `th_off` with p's; IPv4 ID state is kept in p. Returns the reason or None.
GroReason gro_network_flush(GroContext& ctx, GroHeld& p, std::size_t th_off) noexcept;

/// RCO state of one tunnel gro_receive (struct gro_remcsum).
struct GroRemcsum {
  std::uint32_t offset = 0;
  core::wsum delta = 0;
};
/// W-22 skb_gro_remcsum_process: `off` = tunnel header offset, `hdrlen` its length,
/// start/offset relative to the end of the tunnel header. Requires ctx.csum_valid.
/// Returns false when the bytes are not present.
bool gro_remcsum_process(GroContext& ctx, std::size_t off, std::size_t hdrlen, std::size_t start,
                         std::size_t offset, GroRemcsum& grc, bool nopartial) noexcept;
/// W-23 skb_gro_flush_final_remcsum: OR the flush, undo the rewrite, clear remcsum_offload.
void gro_flush_final_remcsum(GroContext& ctx, bool flush, const GroRemcsum& grc) noexcept;

// ---- the link layer, the flow hash and the fast receive hook (used by the engine) -------

/// Flow hash standing for the device's RSS hash (G-2's first test, bucket choice): the
/// outermost L3 family (ethertype, or the version nibble on a raw-IP link), L4 protocol,
/// addresses, and ports for TCP/UDP (not for IPv4 fragments), as 64-bit words (host order)
/// chained through a bijective 64-bit mixer (murmur3's fmix64) from a starting state derived
/// from `key`, folded to 32 bits. Reads only `frame` (any length; short frames hash their
/// family alone). Not a cryptographic PRF. The TCP fast hook computes the same value from
/// the same building blocks (src/offload/flow_hash.hpp).
std::uint32_t gro_flow_hash(std::span<const std::uint8_t> frame, GroLink link,
                            std::uint64_t key) noexcept;

/// The link layer's part of gro_list_prepare for ctx.skb (ctx.candidates already marked
/// same_flow by hash): sets ctx.protocol (eth_type_trans: the ethertype, or the version
/// nibble on a raw-IP link) and ctx.data_offset (the link header's length), and unmarks the
/// candidates whose link header differs (G-2: MAC header; raw IP: the version nibble).
/// Returns false for a packet without a link header and one byte after it: flushed as
/// Truncated, no candidate kept.
bool gro_link_prepare(GroContext& ctx, GroLink link) noexcept;
/// After gro_link_prepare and the engine's G-4/G-5 state: pull the link header from a
/// CHECKSUM_COMPLETE sum (G-5) and run the L3 protocol's receive hook (G-3).
void gro_link_receive(GroContext& ctx, GroLink link) noexcept;
/// napi_gro_complete's dispatch for the aggregate ctx.cp (count > 1): sets protocol and the
/// MAC header, then runs the L3 protocol's complete hook.
int gro_link_complete(GroContext& ctx, GroLink link) noexcept;
/// The offload fields of a newly held flow from the round's control block (count, offsets,
/// protocol, encapsulation and fraglist marks, family); hash, age and packet are the engine's.
void gro_hold_init(GroHeld& h, const GroContext& ctx) noexcept;
/// The offload fields of the next aggregate of the held flow `p` (a packet of p's layout that
/// p could not take): hash, offsets, protocol, marks, family and the fast hook's flow state
/// as p's; count 1, no fixed-ID mark. Age and packet are the engine's.
void gro_hold_next(GroHeld& h, const GroHeld& p) noexcept;

/// What a fast receive hook may see of the engine: its configuration, link, flow-hash key
/// and mask, the flow table (buckets, each oldest first, as the engine keeps them) and a hint.
using GroBucket = std::vector<GroHeld*>;
struct GroFastState {
  const GroConfig* cfg = nullptr;
  GroLink link = GroLink::Ethernet;
  std::uint32_t hash_mask = ~0u;    ///< EngineOptions::flow_hash_mask
  std::uint64_t key = 0;            ///< the engine's flow-hash key
  GroBucket* buckets = nullptr;     ///< kGroHashBuckets lists, oldest first
  /// The flow of the last fast merge or fast-eligible hold (cleared by the engine when it
  /// completes that flow); a hint the hook may use to skip the bucket search.
  GroHeld* last = nullptr;
  std::array<std::uint64_t, 2> priv{};  ///< the hook's own per-engine values (init)
};
/// Outcome of a fast receive: p == nullptr → not taken, nothing changed (the general chain
/// must run); else the packet was merged into p (payload taken, p's count and headers
/// updated, the skb to be discarded) and, unless `complete` is None, p must be completed now
/// with that reason.
struct GroFastResult {
  GroHeld* p = nullptr;
  GroReason complete = GroReason::None;
  /// Set by receive_run only (with complete None): the packet after the run, left unchanged
  /// but for its checksum state, is the one the general chain would refuse for p's size
  /// limit alone (G-16) and hold as p's flow's next aggregate — p completed with reason
  /// SizeLimit, then the packet held with the same hash and layout (gro_hold_next) and the
  /// checksum state the chain's T-1 validation leaves (C-26).
  bool restart = false;
  /// Set by receive (and by receive_run, then with nothing merged) with p nullptr: the
  /// packet, left unchanged but for its checksum state (C-26, as T-1 leaves it), is one the
  /// general chain would hold as a new flow — no held flow of its key in its bucket, no
  /// flush condition, fraglist mode off — with flow hash `hash`. The engine holds it as the
  /// chain would (the bucket's oldest flow completed first when the bucket is full, G-7) and
  /// calls the hook's hold_new for the entry's fields.
  bool hold = false;
  std::uint32_t hash = 0;
};
/// A protocol module's fast receive path: the whole chain for its most common packet in one
/// pass, merging exactly when (and as) the general chain would. `hold` runs for every flow
/// the engine holds (after the chain) and writes that flow's GroHeld::flow_area; it returns
/// true when later packets of the flow may take the fast path.
///
/// `receive_run` is `receive` over the packets of `skbs` in order, for as long as each is
/// merged: it stops before the first packet `receive` would not take (left unchanged, or
/// marked last.restart or, when it is the first, last.hold) and after the first merged
/// packet whose flow must be completed.
/// Every merged packet is discarded (core::Packet::discard) by the hook. Returns how many
/// packets were merged; when that is at least one, `last` is the last merge's result (every
/// packet of the run merged into last.p, and only the last one may ask for a completion).
struct GroFastHook {
  void (*init)(GroFastState& st) noexcept;
  GroFastResult (*receive)(GroFastState& st, core::Packet& skb) noexcept;
  bool (*hold)(const GroFastState& st, GroHeld& h, const GroContext& ctx) noexcept;
  std::size_t (*receive_run)(GroFastState& st, std::span<core::Packet> skbs,
                             GroFastResult& last) noexcept;
  /// For a packet receive marked GroFastResult::hold, now h.pkt: the fields gro_hold_init
  /// would set from the chain's control block and the flow state `hold` would write.
  void (*hold_new)(const GroFastState& st, GroHeld& h) noexcept;
};
/// The fast receive hook that serves `reg` (the TCP module's, when reg's IPv4, IPv6 and TCP
/// receive hooks are the IP and TCP modules' own), or nullptr.
const GroFastHook* gro_fast_hook(const Registry& reg) noexcept;

/// The GRO protocol table for an output that can carry only the GSO types `gso_types`
/// (core::skb_gso bits): nullptr when every GRO type is included (use `base`), else a copy
/// of `base` without the protocols whose aggregates would need another type; `cfg` loses the
/// UDP tunnels, UDP GRO sockets / forwarding and fraglist mode the types exclude
/// (gro::EngineOptions::gso_types).
std::unique_ptr<Registry> gro_registry_for(const Registry& base, std::uint32_t gso_types,
                                           GroConfig& cfg);

/// Finish a CHECKSUM_PARTIAL GRO output in software (checksum_help on the bytes, gso metadata
/// kept): the innermost L4 checksum, and an outer UDP tunnel checksum left as a seed or a
/// stale GRE checksum. Non-Partial packets are unchanged.
void gro_finish_checksums(core::Packet& p);

}  // namespace ofld::offload

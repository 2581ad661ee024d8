// ofld/gro/engine.hpp — the GRO engine (net/core/gro.c: dev_gro_receive, napi_gro_complete,
// napi_gro_flush; spec §5 G-1..G-20).
//
// Owns the flow table (8 buckets × at most 8 held flows, bucket = flow hash & 7, each bucket
// newest first), drives the protocol chain of ofld/offload (the link layer, then registry
// hooks; before it, the table's fast receive hook — the TCP module's, offload::GroFastHook —
// which may merge a packet in one pass), and applies the outcome rules: a held flow the chain
// returns is completed now, a merged packet is consumed, a flushed packet is delivered at once
// and untouched, any other packet is held (evicting the bucket's oldest flow when 8 are held).
// A held packet that never merged is delivered exactly as received (G-8). Completed
// aggregates carry gso_type / gso_size / gso_segs and
// CHECKSUM_PARTIAL at the innermost L4 header with the pseudo-header seed in the checksum
// field (K-4); call finish_checksums() on an output packet to get a valid frame instead.
// The engine reads no header bytes itself: hashing, link headers and every protocol rule are
// offload's (gro_flow_hash, gro_link_*, the hooks).
//
// Batches: feed up to `batch` packets, then poll_end() (the NAPI poll's end) completes every
// held flow, or with a flush timeout only the flows older than it (G-9); tick() is the
// timer. Time is supplied by the caller in nanoseconds (capture timestamps or a clock).
//
// Flow hash: the kernel uses the device's RSS hash (keyed: Toeplitz with a random key, or
// the flow dissector's siphash with a boot-time random key); we hash the outermost family,
// protocol, addresses and, for TCP/UDP, ports under a 64-bit key (GroConfig::flow_hash_key:
// random per engine unless fixed), so that flows cannot be aimed into one bucket or made to
// collide without knowing the key (K-7: veth's all-in-one-bucket artifact is not copied).
// The hash only groups: flow identity is decided by the per-layer comparisons, which include
// the L3 family and the L4 protocol at every level (N-3, N-8). Completion order at a
// flush: bucket index order, oldest first within a bucket (G-9) — so with a random key the
// order of different flows' completions differs between engines; fix the key to reproduce it.
//
// Link layer: Ethernet (the outer MAC header is compared, G-2, and dispatched by ethertype;
// VLAN-tagged frames have no handler and pass through, G-3) or raw IP (for gro_cells after an
// L3 tunnel such as ip6gre, where frames start at the IP header).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/offload/gro_context.hpp"
#include "ofld/offload/registry.hpp"

namespace ofld::gro {

using offload::GroConfig;
using offload::GroReason;
using offload::kGroReasonCount;

/// The link layer the engine receives (offload::GroLink).
using LinkLayer = offload::GroLink;

struct EngineOptions {
  GroConfig config{};
  LinkLayer link = LinkLayer::Ethernet;
  std::size_t batch = 64;                ///< packets per poll (NAPI budget)
  std::uint64_t flush_timeout_ns = 0;    ///< 0 = flush every held flow at poll end
  /// The fast receive hook of the protocol table (offload::gro_fast_hook: the TCP module's):
  /// on by default. It never changes an output byte, metadata field or counter; false runs
  /// every packet through the general chain (the reference the differential test compares
  /// the fast path with). Off when the table has no fast hook (e.g. gso_types without TCP).
  bool fast_path = true;
  /// Test seam: ANDed into every flow hash (general and fast path). 0 gives every packet the
  /// same hash and bucket, i.e. every flow collides with every other, so that the per-layer
  /// flow comparisons alone keep flows apart. Leave at ~0u.
  std::uint32_t flow_hash_mask = ~0u;
  /// The GSO types an aggregate may carry (core::skb_gso bits): what the device that
  /// receives the output can describe, as the kernel builds only what the device's features
  /// allow. ~0 = any. Protocols whose aggregates would need a type outside the mask get no
  /// handler — GRE (GRE, GRE_CSUM; also Ethernet over GRE), IPIP/SIT/ip6ip6 (IPXIP4, IPXIP6),
  /// UDP tunnels (UDP_TUNNEL, UDP_TUNNEL_CSUM: config.udp_tunnels ignored), TCP (TCPV4 and
  /// TCPV6; the fast path too), plain UDP (UDP_L4: udp_gro_fwd / udp_gro_socks ignored),
  /// fraglist (FRAGLIST: gro_fraglist ignored) — and their packets are delivered unmerged
  /// (not_merged no_handler / udp_no_gro). GRO after decapsulation onto a TAP sets
  /// offload::virtio::kGsoTypes (a virtio_net_hdr says TCPv4, TCPv6 or UDP, never GRE).
  std::uint32_t gso_types = ~std::uint32_t(0);
};

/// Counters. Every received packet ends in exactly one of: merged, held (possibly delivered
/// later alone), delivered at once (not_merged[reason]). Every completion counts once in
/// completed[reason]; `aggregates` are completions with count > 1.
struct Counters {
  std::uint64_t packets_in = 0;
  std::uint64_t merged = 0;
  std::uint64_t held = 0;
  std::uint64_t delivered_now = 0;   ///< flushed packets passed up at once (untouched)
  std::uint64_t aggregates = 0;      ///< completions with count > 1
  std::uint64_t singles = 0;         ///< completions with count == 1 (delivered untouched)
  std::uint64_t segments_out = 0;    ///< sum of count over all completions
  std::array<std::uint64_t, kGroReasonCount> not_merged{};
  std::array<std::uint64_t, kGroReasonCount> completed{};
  /// Diagnostic, not a GRO outcome: how many of `merged` the TCP fast path merged (0 with
  /// EngineOptions::fast_path off). Every other counter is the same with the fast path on
  /// or off.
  std::uint64_t fast_merged = 0;
  /// Diagnostic, like fast_merged: how many of `held` the fast path held itself — a new flow
  /// (GroFastResult::hold), or a flow's next aggregate after its size limit (G-16,
  /// GroFastResult::restart).
  std::uint64_t fast_held = 0;
  /// Of fast_held, the next aggregates after a size limit (GroFastResult::restart).
  std::uint64_t fast_held_next = 0;
  Counters& operator+=(const Counters& o) noexcept;
};

class Engine {
 public:
  /// An engine dispatching through the protocol hooks of `reg` (it must outlive the engine).
  explicit Engine(EngineOptions opts = {},
                  const offload::Registry& reg = offload::builtin_registry());
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// napi_gro_receive: run one packet through GRO at time `now_ns`. Outputs (completed
  /// aggregates, packets delivered untouched) are appended to output() in delivery order.
  /// When `batch` packets were received since the last poll end, poll_end(now_ns) runs.
  /// The packet is consumed: on return `pkt` holds no storage (held, delivered, or merged
  /// and discarded) and may only be destroyed or assigned. Taken by reference so that the
  /// hot path moves no Packet in (a merged packet's shell stays where the caller keeps it).
  /// `pkt` must not be an element of output(): that vector may grow during the call.
  void receive(core::Packet&& pkt, std::uint64_t now_ns = 0);
  /// receive() of every packet of `pkts` in order (the NAPI poll loop over a burst, e.g. one
  /// recvmmsg or a TAP read batch); each is consumed as by receive(). Not output()'s elements.
  void receive_batch(std::span<core::Packet> pkts, std::uint64_t now_ns = 0);
  /// End of a NAPI poll: complete every held flow (no timeout) or the flows at least
  /// flush_timeout old (G-9).
  void poll_end(std::uint64_t now_ns = 0);
  /// gro_flush_timeout timer: complete flows at least flush_timeout old (reason Timeout).
  void tick(std::uint64_t now_ns);
  /// Complete every held flow (reason PollEnd), e.g. at the end of input.
  void flush_all();

  std::vector<core::Packet>& output() noexcept { return out_; }
  std::vector<core::Packet> take_output() noexcept;
  const Counters& counters() const noexcept { return ctr_; }
  const EngineOptions& options() const noexcept { return opts_; }
  /// The key of this engine's flow hash (GroConfig::flow_hash_key, or the random one drawn
  /// at construction): flow_hash(frame, link, flow_hash_key()) is the hash it uses.
  std::uint64_t flow_hash_key() const noexcept { return key_; }
  std::size_t held_flows() const noexcept;

 private:
  using Bucket = offload::GroBucket;  // oldest first (the kernel's list is newest first)
  void complete(offload::GroHeld* h, GroReason why);
  void remove(Bucket& b, offload::GroHeld* h);
  offload::GroHeld* alloc();
  void release(offload::GroHeld* h);
  void flush_older(std::uint64_t now_ns, GroReason why);
  void receive_general(core::Packet& pkt, std::uint64_t now_ns);  // the chain (G-1..G-7)
  // receive_general's outcome for a packet the fast hook marked GroFastResult::restart
  void hold_next(offload::GroHeld* p, core::Packet& pkt, std::uint64_t now_ns);
  // receive_general's outcome for a packet the fast hook marked GroFastResult::hold
  void hold_new(core::Packet& pkt, std::uint32_t hash, std::uint64_t now_ns);

  EngineOptions opts_;
  std::uint64_t key_;                        // flow hash key
  /// The protocol table the chain uses: the one handed to the constructor, or own_reg_ when gso_types
  /// leaves some protocols out.
  const offload::Registry* reg_ = nullptr;
  std::unique_ptr<offload::Registry> own_reg_;
  std::array<Bucket, offload::kGroHashBuckets> buckets_;
  std::vector<std::unique_ptr<offload::GroHeld>> pool_;
  std::vector<offload::GroHeld*> free_;
  std::vector<offload::GroHeld*> cand_;  // scratch: candidates newest first
  std::vector<core::Packet> out_;
  Counters ctr_;
  std::size_t in_batch_ = 0;
  const offload::GroFastHook* fast_ = nullptr;  // the table's fast receive hook (or none)
  offload::GroFastState fast_state_;            // what the hook sees of this engine
};

/// Flow hash used for bucket selection: the outermost L3 family (ethertype, or the version
/// nibble on a raw-IP link), L4 protocol, addresses, and ports for TCP/UDP (not for IPv4
/// fragments), as 64-bit words (host order) chained through a bijective 64-bit mixer
/// (murmur3's fmix64) from a starting state derived from `key`, folded to 32 bits; which
/// flows collide depends on the key. Not a cryptographic PRF: it does not
/// resist an attacker who can observe hash values. Key 0 is a fixed key like any other (the
/// default, used by the VXLAN source-port choice).
std::uint32_t flow_hash(std::span<const std::uint8_t> frame, LinkLayer link,
                        std::uint64_t key = 0) noexcept;

/// Finish a CHECKSUM_PARTIAL output packet in software (checksum_help on the bytes, gso
/// metadata kept) so that it is a valid frame. Non-Partial packets are unchanged.
void finish_checksums(core::Packet& p);

}  // namespace ofld::gro

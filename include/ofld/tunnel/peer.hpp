// ofld/tunnel/peer.hpp — per-remote peer sessions (issue 15; docs/peer-protocol.md).
//
// Each configured remote gets a session: HELLO at first contact, retried with exponential
// backoff (retry, 2·retry, … up to refresh) while unanswered, then refreshed every `refresh`;
// a HELLO received is answered with a HELLO-ACK. Both carry the sender's epoch (new at every
// start) and capabilities (wire::peer). The model is IPoIB connected mode's capability
// exchange (spec I-6/I-7): inner checksums are elided toward a peer only while
//   - this endpoint has integrity mode on, and
//   - the peer's last answer (HELLO or ACK) advertised kCapIntegrity, is fresh (younger than
//     `fresh`), and the session epoch it came with is still the peer's epoch;
// a message from the peer with another epoch (a restart) replaces the session at once with
// what that message says, so a peer restarted without the capability is downgraded before
// anything else of it is believed. A peer that never answers (the kernel VXLAN device, an
// older ofld) has no capabilities. Malformed messages and messages from addresses that are
// not configured remotes are counted and ignored.
//
// Thread-safe (one table shared by the workers of a multi-queue endpoint; a mutex).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/wire/ip_addr.hpp"
#include "ofld/wire/peer_hello.hpp"

namespace ofld::tunnel {

using wire::IpAddr;

struct PeerOptions {
  wire::peer::Encap encap = wire::peer::Encap::Vxlan;
  wire::peer::GreOptions gre;    ///< GRE: the tunnel's ocsum / okey, carried like on data
  bool integrity = false;        ///< this endpoint elides/accepts elided inner checksums
  bool rco_rx = false;           ///< remcsumrx configured (advertised, informational)
  std::uint16_t gso_size = 0;    ///< largest inner GSO packet taken (bytes of inner L3)
  std::uint16_t mtu = 0;         ///< device MTU (bytes of inner L3)
  std::uint32_t epoch = 0;       ///< session epoch; 0 = a random non-zero one
  std::uint64_t retry_ns = 1'000'000'000ull;     ///< first retry of an unanswered HELLO
  std::uint64_t refresh_ns = 10'000'000'000ull;  ///< HELLO period once answered; backoff cap
  std::uint64_t fresh_ns = 0;    ///< an answer older than this is stale; 0 = 3 × refresh + retry
};

/// Session states (names via to_string): no HELLO sent yet; HELLOs sent, never answered
/// (probing, then silent after 3); answered and fresh (established); answered once, not fresh
/// any more (stale).
enum class SessionState : std::uint8_t { Idle, Probing, Silent, Established, Stale };
std::string_view to_string(SessionState s) noexcept;

/// What one peer's session knows (a copy; PeerTable::session()).
struct SessionInfo {
  SessionState state = SessionState::Idle;
  std::uint32_t peer_epoch = 0;      ///< the peer's epoch (0: never heard)
  std::uint32_t caps = 0;            ///< its capabilities (wire::peer::kCap*)
  std::uint16_t gso_size = 0, mtu = 0;
  std::uint64_t last_answer_ns = 0;  ///< when its last HELLO / ACK arrived (0: never)
  std::uint64_t rtt_ns = 0;          ///< last HELLO → ACK round trip (0: none measured)
  std::uint64_t hellos_sent = 0, acks_sent = 0, hellos_received = 0, acks_received = 0;
  std::uint64_t epoch_changes = 0;   ///< messages with a new epoch after the first (restarts)
  std::uint64_t downgrades = 0;      ///< integrity lost (new epoch without it, or gone stale)
  bool integrity = false;            ///< elide toward it now (see the header comment)
};

class PeerTable {
 public:
  /// A message to send: `bytes` (prefix + body) as one datagram to `to`.
  struct Out {
    IpAddr to;
    std::vector<std::uint8_t> bytes;
  };
  explicit PeerTable(PeerOptions o);
  const PeerOptions& options() const noexcept { return o_; }
  std::uint32_t epoch() const noexcept { return o_.epoch; }

  /// A configured remote: gets a session (HELLO at the next due()).
  void add(const IpAddr& a);
  /// HELLOs due at `now` (first contact, retries with backoff, refresh) appended to `out`.
  void due(std::uint64_t now_ns, std::vector<Out>& out);
  /// One received datagram (from its tunnel header on). Returns true when it is a control
  /// message of ours (consumed: valid, malformed or from an unknown address — counted), false
  /// when it is not (hand it to decapsulation). ACKs to send are queued for take_replies().
  bool receive(std::span<const std::uint8_t> d, const IpAddr& from, std::uint64_t now_ns);
  /// Replies queued by receive(), appended to `out` (and forgotten here).
  void take_replies(std::vector<Out>& out);

  /// Elide inner checksums toward `a` now? (integrity on here, advertised by a fresh answer of
  /// the peer's current epoch.) Also turns a session that went stale into Stale (downgrade).
  bool elide(const IpAddr& a, std::uint64_t now_ns);

  SessionInfo session(const IpAddr& a, std::uint64_t now_ns) const;
  /// {"epoch", "integrity", "malformed": {reason: n}, "unknown_source", "stale_ack",
  ///  "sessions": {addr: {state, epoch, caps: [names], gso_size, mtu, age_ms, rtt_us, ...}}}
  nlohmann::json to_json(std::uint64_t now_ns) const;

  std::uint64_t malformed_total() const;
  std::uint64_t unknown_source() const;

 private:
  struct S {
    SessionInfo i;
    std::uint32_t seq = 0;             // last HELLO seq sent
    std::uint64_t sent_ns = 0;         // when it was sent
    std::uint64_t next_ns = 0;         // next HELLO due
    std::uint64_t backoff_ns = 0;      // current retry interval
    std::uint32_t unanswered = 0;      // HELLOs since the last answer
  };
  std::uint32_t local_caps() const noexcept;
  void apply(S& s, const wire::peer::Msg& m, std::uint64_t now_ns);
  SessionState state_of(const S& s, std::uint64_t now_ns) const noexcept;
  bool fresh(const S& s, std::uint64_t now_ns) const noexcept;
  wire::peer::Msg hello(S& s, std::uint64_t now_ns);
  Out encode(const IpAddr& to, const wire::peer::Msg& m) const;

  PeerOptions o_;
  mutable std::mutex mu_;
  std::map<IpAddr, S> s_;
  std::vector<Out> replies_;
  std::map<std::string, std::uint64_t> malformed_;
  std::uint64_t unknown_ = 0, stale_ack_ = 0;
};

}  // namespace ofld::tunnel

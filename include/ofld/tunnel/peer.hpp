// ofld/tunnel/peer.hpp — per-remote peer sessions (docs/peer-protocol.md, state table there).
//
// Each configured remote gets a session: HELLO at first contact, retried with exponential
// backoff (retry, 2·retry, … up to refresh) while unanswered, then refreshed every `refresh`;
// a HELLO received is answered with a HELLO-ACK. Both carry the sender's epoch (random, new at
// every start), a random nonce (new for every message, getrandom(2)) and the capabilities.
// The model is IPoIB connected mode's capability exchange (spec I-6/I-7), with a cookie round
// trip as TCP's three-way handshake (RFC 9293 §3.5) and WireGuard's cookie reply: what the
// peer says counts only when the message PROVES that the sender sees our datagrams — its
// peer_epoch is our epoch and its echo is a nonce we sent it recently (a window of
// kNonceWindow per session; each nonce proves once, so a replay proves nothing). Inner
// checksums are elided toward a peer only while
//   - this endpoint has integrity mode on, and
//   - the peer's last proven message advertised kCapIntegrity and is fresh (younger than
//     `fresh`), and
//   - no unproven claim about the peer (another epoch, other capabilities, a version-1
//     message) has stood unrefuted for 2 × retry (the probe it triggered was not answered
//     with proof: the peer does not prove itself, so full checksums — never the reverse).
// A message without proof never changes the session: it is counted (`unproven`) and makes the
// next HELLO due at once (a probe: only the real peer can answer it with proof), at most one
// HELLO per `retry` per session. Unproven HELLOs are answered within a budget of
// kReplyBudget ACKs per `retry` per session (those claiming another epoch and those of the
// peer's known epoch apart), so a flood costs O(1) state and bounded sends. With a key
// (`peer-key`), every message carries an HMAC-SHA-256 and one without a valid MAC is ignored
// and counted. Version-1 peers (no nonce) are answered in version 1 and never elided toward.
//
// Thread-safe (one table shared by the workers of a multi-queue endpoint; a mutex).
#pragma once

#include <atomic>
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
  /// Pre-shared key (`peer-key FILE`): empty = unauthenticated; else every message sent carries
  /// an HMAC-SHA-256 under it and every message received must carry a valid one.
  std::vector<std::uint8_t> key;
};

inline constexpr std::size_t kNonceWindow = 16;  ///< recent nonces per session that prove a round trip
inline constexpr std::uint32_t kReplyBudget = 4; ///< ACKs to unproven HELLOs per retry, per kind

/// Reads a peer-key file: its bytes, trailing whitespace removed; at least 16 bytes. Returns
/// the key, or an error message in `err` (unreadable, too short) and an empty vector.
std::vector<std::uint8_t> read_peer_key(const std::string& path, std::string& err);

/// Session states (names via to_string): no HELLO sent yet; HELLOs sent, never answered with
/// proof (probing, then silent after 3); only version-1 messages heard, fresh (legacy);
/// proven and fresh (established); proven once, not fresh any more (stale).
enum class SessionState : std::uint8_t { Idle, Probing, Silent, Established, Stale, Legacy };
std::string_view to_string(SessionState s) noexcept;

/// What one peer's session knows (a copy; PeerTable::session()).
struct SessionInfo {
  SessionState state = SessionState::Idle;
  std::uint32_t peer_epoch = 0;      ///< the peer's proven epoch (0: never proven)
  std::uint32_t caps = 0;            ///< its capabilities (wire::peer::kCap*)
  std::uint16_t gso_size = 0, mtu = 0;
  std::uint64_t last_answer_ns = 0;  ///< when its last proven HELLO / ACK arrived (0: never)
  std::uint64_t rtt_ns = 0;          ///< last HELLO → ACK round trip (0: none measured)
  std::uint64_t hellos_sent = 0, acks_sent = 0, hellos_received = 0, acks_received = 0;
  std::uint64_t epoch_changes = 0;   ///< messages with a new epoch after the first (restarts)
  std::uint64_t downgrades = 0;      ///< integrity lost (new epoch without it, or gone stale)
  std::uint64_t unproven = 0;        ///< claims refused: messages that would change it, unproven
  std::uint64_t probes = 0;          ///< HELLOs brought forward by an unproven claim
  std::uint64_t legacy_received = 0; ///< version-1 messages heard
  std::uint64_t claim_ns = 0;        ///< an unproven claim pending since (0: none)
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
  /// The options as constructed, with integrity and key as the last reconfigure() left them;
  /// read it on the thread that reconfigures (the data path reads integrity()).
  const PeerOptions& options() const noexcept { return o_; }
  std::uint32_t epoch() const noexcept { return o_.epoch; }
  /// Integrity mode on here now (any thread).
  bool integrity() const noexcept { return integrity_.load(std::memory_order_relaxed); }

  /// A reload's integrity mode and key (`integrity`, `peer-key`; an empty key =
  /// unauthenticated). Elision toward every peer stops at once and resumes only once a
  /// message proven under the new settings shows the peer has integrity too; every session's
  /// next HELLO is due now, so that peers learn the new capabilities within a round trip.
  /// A new key also forgets what each session proved (it shows Probing until a message under
  /// the new key proves it again); a message under the old key then counts as bad_mac. The
  /// epoch stays: this is not a restart. Receiving elided inner checksums does not depend on
  /// integrity (the outer checksum protects them, K-9), so nothing in flight is lost.
  void reconfigure(bool integrity, std::vector<std::uint8_t> key);

  /// A configured remote: gets a session (HELLO at the next due()).
  void add(const IpAddr& a);
  /// A remote taken out of the configuration (a reload): its session ends (no more HELLOs).
  void remove(const IpAddr& a);
  /// HELLOs due at `now` (first contact, retries with backoff, refresh) appended to `out`.
  void due(std::uint64_t now_ns, std::vector<Out>& out);
  /// One received datagram (from its tunnel header on). Returns true when it is a control
  /// message of ours (consumed: valid, malformed or from an unknown address — counted), false
  /// when it is not (hand it to decapsulation). ACKs to send are queued for take_replies().
  bool receive(std::span<const std::uint8_t> d, const IpAddr& from, std::uint64_t now_ns);
  /// Replies queued by receive(), appended to `out` (and forgotten here).
  void take_replies(std::vector<Out>& out);

  /// Elide inner checksums toward `a` now? (integrity on here, advertised by a fresh proven
  /// message, no unrefuted claim.) Also turns a session that went stale into Stale (downgrade).
  bool elide(const IpAddr& a, std::uint64_t now_ns);

  SessionInfo session(const IpAddr& a, std::uint64_t now_ns) const;
  /// {"epoch", "version", "authenticated", "caps", "malformed": {reason: n}, "unknown_source",
  ///  "stale_ack", "unproven", "rate_limited", "bad_mac", "unauthenticated", "legacy",
  ///  "sessions": {addr: {state, epoch, caps: [names], gso_size, mtu, age_ms, rtt_us, ...}}}
  nlohmann::json to_json(std::uint64_t now_ns) const;

  std::uint64_t malformed_total() const;
  std::uint64_t unknown_source() const;
  std::uint64_t unproven() const;      ///< claims refused (all sessions)
  std::uint64_t rate_limited() const;  ///< ACKs not sent: the session's reply budget was spent
  std::uint64_t bad_mac() const;       ///< with a key: MAC present, not valid
  std::uint64_t unauthenticated() const;  ///< with a key: no MAC (or version 1)

 private:
  struct Sent {
    std::uint64_t nonce = 0, at_ns = 0;  // nonce 0: free (or used)
  };
  struct S {
    SessionInfo i;
    std::uint64_t hello_nonce = 0;     // nonce of the last HELLO sent (for the RTT)
    std::uint64_t sent_ns = 0;         // when it was sent
    std::uint64_t next_ns = 0;         // next HELLO due
    std::uint64_t backoff_ns = 0;      // current retry interval
    std::uint32_t unanswered = 0;      // HELLOs since the last proven message
    std::uint32_t heard_epoch = 0;     // epoch and nonce of the last v2 message heard (echoed)
    std::uint64_t heard_nonce = 0;
    std::uint64_t legacy_ns = 0;       // last version-1 message heard
    Sent window[kNonceWindow];         // nonces sent recently (ring)
    std::size_t window_next = 0;
    std::uint64_t budget_ns = 0;       // start of the current reply-budget period
    std::uint32_t spent_claim = 0, spent_known = 0;
  };
  std::uint32_t local_caps() const noexcept;
  static wire::peer::Signer make_signer(const std::vector<std::uint8_t>& key);  // null for no key
  void apply(S& s, const wire::peer::Msg& m, std::uint64_t now_ns);
  bool proves(S& s, const wire::peer::Msg& m, std::uint64_t now_ns);
  void claim(S& s, std::uint64_t now_ns);
  bool spend(S& s, bool claim, std::uint64_t now_ns);
  void reply(S& s, const IpAddr& to, const wire::peer::Msg& m, std::uint64_t now_ns);
  SessionState state_of(const S& s, std::uint64_t now_ns) const noexcept;
  bool fresh(const S& s, std::uint64_t now_ns) const noexcept;
  bool eliding(const S& s, std::uint64_t now_ns) const noexcept;
  wire::peer::Msg hello(S& s, std::uint64_t now_ns);
  std::uint64_t remember(S& s, std::uint64_t now_ns);  // a fresh nonce, kept in the window
  Out encode(const IpAddr& to, const wire::peer::Msg& m) const;
  bool mac_ok(const wire::peer::Parsed& p) const;

  PeerOptions o_;
  std::atomic<bool> integrity_{false};  ///< o_.integrity, for the data path's unlocked reads
  wire::peer::Signer signer_;
  mutable std::mutex mu_;
  std::map<IpAddr, S> s_;
  std::vector<Out> replies_;
  std::map<std::string, std::uint64_t> malformed_;
  std::uint64_t unknown_ = 0, stale_ack_ = 0, unproven_ = 0, rate_limited_ = 0, bad_mac_ = 0,
                unauth_ = 0, legacy_ = 0;
};

}  // namespace ofld::tunnel

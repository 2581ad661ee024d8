// Per-remote peer sessions (see ofld/tunnel/peer.hpp, docs/peer-protocol.md).
#include "ofld/tunnel/peer.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace ofld::tunnel {

namespace pw = wire::peer;

std::string_view to_string(SessionState s) noexcept {
  switch (s) {
    case SessionState::Idle: return "idle";
    case SessionState::Probing: return "probing";
    case SessionState::Silent: return "silent";
    case SessionState::Established: return "established";
    case SessionState::Stale: return "stale";
    case SessionState::Legacy: return "legacy";
  }
  return "unknown";
}

namespace {
constexpr std::uint32_t kSilentAfter = 3;  // unanswered HELLOs before "silent"

/// A random 64-bit value from the kernel's CSPRNG (getrandom(2), blocking only until the pool
/// is initialised at boot).
std::uint64_t random64() {
  std::uint64_t v = 0;
  auto* p = reinterpret_cast<unsigned char*>(&v);
  std::size_t got = 0;
  while (got < sizeof v) {
    const ssize_t n = ::getrandom(p + got, sizeof v - got, 0);
    if (n > 0) got += std::size_t(n);
    else if (n < 0 && errno != EINTR) std::abort();  // ENOSYS on a kernel < 3.17: none supported
  }
  return v;
}
std::uint64_t random_nonzero64() {
  std::uint64_t v = 0;
  while (v == 0) v = random64();
  return v;
}
}  // namespace

std::vector<std::uint8_t> read_peer_key(const std::string& path, std::string& err) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    err = "peer-key " + path + ": cannot be read: " + std::strerror(errno);
    return {};
  }
  std::vector<std::uint8_t> k((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!k.empty() && (k.back() == '\n' || k.back() == '\r' || k.back() == ' ' || k.back() == '\t'))
    k.pop_back();
  if (k.size() < 16) {
    err = "peer-key " + path + ": " + std::to_string(k.size()) +
          " bytes; a key needs at least 16 (e.g. head -c 32 /dev/urandom | base64 > FILE)";
    return {};
  }
  return k;
}

PeerTable::PeerTable(PeerOptions o) : o_(std::move(o)) {
  if (o_.refresh_ns == 0) o_.refresh_ns = 10'000'000'000ull;
  if (o_.retry_ns == 0 || o_.retry_ns > o_.refresh_ns) o_.retry_ns = o_.refresh_ns;
  if (o_.fresh_ns == 0) o_.fresh_ns = 3 * o_.refresh_ns + o_.retry_ns;
  while (o_.epoch == 0) o_.epoch = std::uint32_t(random64());
  integrity_ = o_.integrity;
  signer_ = make_signer(o_.key);
}

wire::peer::Signer PeerTable::make_signer(const std::vector<std::uint8_t>& key) {
  if (key.empty()) return nullptr;
  return [key](std::span<const std::uint8_t> in, std::span<std::uint8_t> mac) {
    unsigned len = 0;
    HMAC(EVP_sha256(), key.data(), int(key.size()), in.data(), in.size(), mac.data(), &len);
  };
}

void PeerTable::reconfigure(bool integrity, std::vector<std::uint8_t> key) {
  std::lock_guard g(mu_);
  const bool new_key = key != o_.key;
  o_.integrity = integrity;
  integrity_ = integrity;
  if (new_key) {
    o_.key = std::move(key);
    signer_ = make_signer(o_.key);
  }
  for (auto& [a, s] : s_) {
    if (s.i.integrity) {  // until a message proven under the new settings says otherwise
      s.i.integrity = false;
      ++s.i.downgrades;
    }
    if (new_key) {  // nothing was proven under this key yet
      s.i.last_answer_ns = 0;
      for (auto& w : s.window) w.nonce = 0;
    }
    s.next_ns = 0;  // a HELLO with the new capabilities at the next due()
    s.backoff_ns = 0;
  }
}

std::uint32_t PeerTable::local_caps() const noexcept {
  return (o_.integrity ? pw::kCapIntegrity : 0u) | (o_.rco_rx ? pw::kCapRcoRx : 0u);
}

void PeerTable::add(const IpAddr& a) {
  std::lock_guard g(mu_);
  s_.try_emplace(a);
}

void PeerTable::remove(const IpAddr& a) {
  std::lock_guard g(mu_);
  s_.erase(a);
}

bool PeerTable::fresh(const S& s, std::uint64_t now) const noexcept {
  return s.i.last_answer_ns != 0 && now >= s.i.last_answer_ns &&
         now - s.i.last_answer_ns <= o_.fresh_ns;
}

bool PeerTable::eliding(const S& s, std::uint64_t now) const noexcept {
  if (!s.i.integrity || !fresh(s, now)) return false;
  // An unproven claim that the probe it caused has not refuted within 2 × retry: the peer
  // does not prove itself any more, full checksums (never a blackhole) until it does.
  return s.i.claim_ns == 0 || now < s.i.claim_ns + 2 * o_.retry_ns;
}

SessionState PeerTable::state_of(const S& s, std::uint64_t now) const noexcept {
  if (s.i.last_answer_ns == 0) {
    if (s.legacy_ns != 0 && now >= s.legacy_ns && now - s.legacy_ns <= o_.fresh_ns)
      return SessionState::Legacy;
    if (s.i.hellos_sent == 0) return SessionState::Idle;
    return s.unanswered >= kSilentAfter ? SessionState::Silent : SessionState::Probing;
  }
  return fresh(s, now) ? SessionState::Established : SessionState::Stale;
}

std::uint64_t PeerTable::remember(S& s, std::uint64_t now) {
  const std::uint64_t n = random_nonzero64();
  s.window[s.window_next] = Sent{n, now};
  s.window_next = (s.window_next + 1) % kNonceWindow;
  return n;
}

pw::Msg PeerTable::hello(S& s, std::uint64_t now) {
  pw::Msg m;
  m.type = pw::MsgType::Hello;
  m.epoch = o_.epoch;
  m.peer_epoch = s.heard_epoch;
  m.nonce = remember(s, now);
  m.echo = s.heard_nonce;
  m.caps = local_caps();
  m.gso_size = o_.gso_size;
  m.mtu = o_.mtu;
  s.hello_nonce = m.nonce;
  s.sent_ns = now;
  ++s.i.hellos_sent;
  ++s.unanswered;
  return m;
}

PeerTable::Out PeerTable::encode(const IpAddr& to, const pw::Msg& m) const {
  Out o{to, std::vector<std::uint8_t>(pw::kMaxMsgLen)};
  o.bytes.resize(pw::encode(m, o_.encap, o.bytes, o_.gre,
                            signer_ && m.version == pw::kVersion ? &signer_ : nullptr));
  return o;
}

bool PeerTable::mac_ok(const pw::Parsed& p) const {
  if (p.mac.size() != pw::kMacLen || p.authed.empty()) return false;
  std::uint8_t want[pw::kMacLen];
  signer_(p.authed, want);
  return CRYPTO_memcmp(want, p.mac.data(), pw::kMacLen) == 0;
}

void PeerTable::due(std::uint64_t now, std::vector<Out>& out) {
  std::lock_guard g(mu_);
  for (auto& [a, s] : s_) {
    if (s.i.hellos_sent != 0 && now < s.next_ns) continue;
    // A probe for a pending claim is retried like an unanswered HELLO (1 s, 2 s, …), not
    // after a whole refresh: the real peer's proof is what clears the claim.
    const bool answered = fresh(s, now) && s.unanswered == 0 && s.i.claim_ns == 0;
    if (answered) {
      s.backoff_ns = 0;
      s.next_ns = now + o_.refresh_ns;
    } else {
      // Unanswered (or stale): retry, 2·retry, 4·retry, … up to refresh.
      s.backoff_ns = s.backoff_ns == 0 ? o_.retry_ns : std::min(2 * s.backoff_ns, o_.refresh_ns);
      s.next_ns = now + s.backoff_ns;
    }
    out.push_back(encode(a, hello(s, now)));
  }
}

bool PeerTable::proves(S& s, const pw::Msg& m, std::uint64_t now) {
  if (m.version != pw::kVersion || m.peer_epoch != o_.epoch || m.echo == 0) return false;
  for (auto& w : s.window) {
    if (w.nonce != m.echo) continue;
    if (now < w.at_ns || now - w.at_ns > o_.fresh_ns) return false;
    w.nonce = 0;  // each nonce proves once: a replay proves nothing
    return true;
  }
  return false;
}

void PeerTable::claim(S& s, std::uint64_t now) {
  ++s.i.unproven;
  ++unproven_;
  if (s.i.claim_ns == 0) s.i.claim_ns = now;
  // Probe: the next HELLO at once, but at most one HELLO per retry for this session.
  if (s.i.hellos_sent == 0) return;  // the first HELLO is due anyway
  const std::uint64_t at = std::max(now, s.sent_ns + o_.retry_ns);
  if (at < s.next_ns) {
    s.next_ns = at;
    ++s.i.probes;
  }
}

bool PeerTable::spend(S& s, bool claim_kind, std::uint64_t now) {
  if (now < s.budget_ns || now - s.budget_ns >= o_.retry_ns) {
    s.budget_ns = now;
    s.spent_claim = s.spent_known = 0;
  }
  std::uint32_t& spent = claim_kind ? s.spent_claim : s.spent_known;
  if (spent >= kReplyBudget) {
    ++rate_limited_;
    return false;
  }
  ++spent;
  return true;
}

void PeerTable::reply(S& s, const IpAddr& to, const pw::Msg& m, std::uint64_t now) {
  pw::Msg a;
  a.version = m.version;  // a version-1 HELLO gets a version-1 ACK (legacy peers)
  a.type = pw::MsgType::HelloAck;
  a.epoch = o_.epoch;
  a.peer_epoch = m.epoch;
  a.echo = m.nonce;
  a.nonce = m.version == pw::kVersion ? remember(s, now) : 0;
  a.caps = local_caps();
  a.gso_size = o_.gso_size;
  a.mtu = o_.mtu;
  ++s.i.acks_sent;
  replies_.push_back(encode(to, a));
}

void PeerTable::apply(S& s, const pw::Msg& m, std::uint64_t now) {
  const bool had = s.i.integrity;
  if (s.i.peer_epoch != 0 && s.i.peer_epoch != m.epoch) {
    // A proven restart: nothing the old epoch said holds any more.
    ++s.i.epoch_changes;
    s.i.caps = 0;
    s.i.integrity = false;
  }
  s.i.peer_epoch = m.epoch;
  s.i.caps = m.caps;
  s.i.gso_size = m.gso_size;
  s.i.mtu = m.mtu;
  s.i.last_answer_ns = now;
  s.i.claim_ns = 0;
  s.unanswered = 0;
  // Proven: back to the refresh period (a probe still pending is not needed any more).
  s.backoff_ns = 0;
  if (s.i.hellos_sent != 0) s.next_ns = std::max(s.next_ns, s.sent_ns + o_.refresh_ns);
  s.i.integrity = o_.integrity && (m.caps & pw::kCapIntegrity);
  if (had && !s.i.integrity) ++s.i.downgrades;
}

bool PeerTable::receive(std::span<const std::uint8_t> d, const IpAddr& from, std::uint64_t now) {
  if (!pw::maybe_control(d, o_.encap)) return false;
  const auto p = pw::parse(d, o_.encap);
  if (p.verdict == pw::Verdict::NotControl) return false;
  std::lock_guard g(mu_);
  if (p.verdict != pw::Verdict::Ok) {
    ++malformed_[std::string(pw::to_string(p.verdict))];
    return true;
  }
  auto it = s_.find(from);
  if (it == s_.end()) {
    ++unknown_;
    return true;
  }
  if (signer_) {  // authenticated sessions: nothing without a valid MAC counts
    if (!p.msg.mac) {
      ++unauth_;
      return true;
    }
    if (!mac_ok(p)) {
      ++bad_mac_;
      return true;
    }
  }
  S& s = it->second;
  const pw::Msg& m = p.msg;
  if (m.type == pw::MsgType::Hello) ++s.i.hellos_received;
  else ++s.i.acks_received;

  if (m.version != pw::kVersion) {
    // Version 1: no nonce, so never proof — a claim, counted and probed like any other (toward
    // a peer proven in version 2: "restarted as an older ofld"). A legacy peer is answered in
    // its version (it sees our capabilities as before) and gets full checksums.
    ++legacy_;
    ++s.i.legacy_received;
    s.legacy_ns = now;
    claim(s, now);
    if (m.type == pw::MsgType::Hello && spend(s, true, now)) reply(s, from, m, now);
    return true;
  }

  s.heard_epoch = m.epoch;
  s.heard_nonce = m.nonce;
  const bool proven = proves(s, m, now);
  if (proven) {
    if (m.type == pw::MsgType::HelloAck && m.echo == s.hello_nonce && now >= s.sent_ns)
      s.i.rtt_ns = now - s.sent_ns;
    apply(s, m, now);
  } else {
    const bool same = s.i.peer_epoch != 0 && m.epoch == s.i.peer_epoch && m.caps == s.i.caps &&
                      m.gso_size == s.i.gso_size && m.mtu == s.i.mtu;
    if (!same) claim(s, now);  // would change the session: refused, probed
    if (m.type == pw::MsgType::HelloAck) ++stale_ack_;
  }
  if (m.type == pw::MsgType::Hello) {
    // Proven HELLOs are always answered; others within a budget per retry, one for HELLOs of
    // the peer's proven epoch (the real peer's, short of a guess of 32 random bits) and one
    // for the rest, so that a flood of made-up epochs does not silence the real peer.
    const bool known = s.i.peer_epoch != 0 && m.epoch == s.i.peer_epoch;
    if (proven || spend(s, !known, now)) reply(s, from, m, now);
  }
  return true;
}

void PeerTable::take_replies(std::vector<Out>& out) {
  std::lock_guard g(mu_);
  for (auto& r : replies_) out.push_back(std::move(r));
  replies_.clear();
}

bool PeerTable::elide(const IpAddr& a, std::uint64_t now) {
  if (!integrity()) return false;
  std::lock_guard g(mu_);
  auto it = s_.find(a);
  if (it == s_.end()) return false;
  S& s = it->second;
  if (!s.i.integrity) return false;
  if (!fresh(s, now)) {  // the answer went stale: full checksums until the peer answers again
    s.i.integrity = false;
    ++s.i.downgrades;
    return false;
  }
  return eliding(s, now);
}

SessionInfo PeerTable::session(const IpAddr& a, std::uint64_t now) const {
  std::lock_guard g(mu_);
  auto it = s_.find(a);
  if (it == s_.end()) return {};
  SessionInfo i = it->second.i;
  i.state = state_of(it->second, now);
  i.integrity = eliding(it->second, now);
  return i;
}

std::uint64_t PeerTable::malformed_total() const {
  std::lock_guard g(mu_);
  std::uint64_t n = 0;
  for (const auto& [k, v] : malformed_) n += v;
  return n;
}

std::uint64_t PeerTable::unknown_source() const {
  std::lock_guard g(mu_);
  return unknown_;
}
std::uint64_t PeerTable::unproven() const {
  std::lock_guard g(mu_);
  return unproven_;
}
std::uint64_t PeerTable::rate_limited() const {
  std::lock_guard g(mu_);
  return rate_limited_;
}
std::uint64_t PeerTable::bad_mac() const {
  std::lock_guard g(mu_);
  return bad_mac_;
}
std::uint64_t PeerTable::unauthenticated() const {
  std::lock_guard g(mu_);
  return unauth_;
}

nlohmann::json PeerTable::to_json(std::uint64_t now) const {
  using json = nlohmann::json;
  std::lock_guard g(mu_);
  json sessions = json::object();
  for (const auto& [a, s] : s_) {
    const auto& i = s.i;
    json caps = json::array();
    if (i.caps & pw::kCapIntegrity) caps.push_back("integrity");
    if (i.caps & pw::kCapRcoRx) caps.push_back("rco-rx");
    sessions[a.to_string()] = {
        {"state", std::string(to_string(state_of(s, now)))},
        {"epoch", i.peer_epoch},
        {"caps", caps},
        {"gso_size", i.gso_size},
        {"mtu", i.mtu},
        {"integrity", eliding(s, now)},
        {"age_ms", i.last_answer_ns && now >= i.last_answer_ns
                       ? json((now - i.last_answer_ns) / 1000000)
                       : json(nullptr)},
        {"rtt_us", i.rtt_ns ? json(i.rtt_ns / 1000) : json(nullptr)},
        {"claim_pending_ms", i.claim_ns && now >= i.claim_ns ? json((now - i.claim_ns) / 1000000)
                                                              : json(nullptr)},
        {"hellos_sent", i.hellos_sent}, {"acks_sent", i.acks_sent},
        {"hellos_received", i.hellos_received}, {"acks_received", i.acks_received},
        {"epoch_changes", i.epoch_changes}, {"downgrades", i.downgrades},
        {"unproven", i.unproven}, {"probes", i.probes},
        {"legacy_received", i.legacy_received}};
  }
  json mal = json::object();
  for (const auto& [k, v] : malformed_) mal[k] = v;
  json caps = json::array();
  if (o_.integrity) caps.push_back("integrity");
  if (o_.rco_rx) caps.push_back("rco-rx");
  return {{"epoch", o_.epoch}, {"version", pw::kVersion}, {"authenticated", bool(signer_)},
          {"caps", caps}, {"malformed", mal}, {"unknown_source", unknown_},
          {"stale_ack", stale_ack_}, {"unproven", unproven_}, {"rate_limited", rate_limited_},
          {"bad_mac", bad_mac_}, {"unauthenticated", unauth_}, {"legacy", legacy_},
          {"sessions", sessions}};
}

}  // namespace ofld::tunnel

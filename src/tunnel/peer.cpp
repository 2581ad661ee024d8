// Per-remote peer sessions (see ofld/tunnel/peer.hpp, docs/peer-protocol.md).
#include "ofld/tunnel/peer.hpp"

#include <algorithm>
#include <random>

namespace ofld::tunnel {

namespace pw = wire::peer;

std::string_view to_string(SessionState s) noexcept {
  switch (s) {
    case SessionState::Idle: return "idle";
    case SessionState::Probing: return "probing";
    case SessionState::Silent: return "silent";
    case SessionState::Established: return "established";
    case SessionState::Stale: return "stale";
  }
  return "unknown";
}

namespace {
constexpr std::uint32_t kSilentAfter = 3;  // unanswered HELLOs before "silent"
}

PeerTable::PeerTable(PeerOptions o) : o_(o) {
  if (o_.refresh_ns == 0) o_.refresh_ns = 10'000'000'000ull;
  if (o_.retry_ns == 0 || o_.retry_ns > o_.refresh_ns) o_.retry_ns = o_.refresh_ns;
  if (o_.fresh_ns == 0) o_.fresh_ns = 3 * o_.refresh_ns + o_.retry_ns;
  while (o_.epoch == 0) {
    std::random_device rd;
    o_.epoch = rd();
  }
}

std::uint32_t PeerTable::local_caps() const noexcept {
  return (o_.integrity ? pw::kCapIntegrity : 0u) | (o_.rco_rx ? pw::kCapRcoRx : 0u);
}

void PeerTable::add(const IpAddr& a) {
  std::lock_guard g(mu_);
  s_.try_emplace(a);
}

bool PeerTable::fresh(const S& s, std::uint64_t now) const noexcept {
  return s.i.last_answer_ns != 0 && now >= s.i.last_answer_ns &&
         now - s.i.last_answer_ns <= o_.fresh_ns;
}

SessionState PeerTable::state_of(const S& s, std::uint64_t now) const noexcept {
  if (s.i.last_answer_ns == 0) {
    if (s.i.hellos_sent == 0) return SessionState::Idle;
    return s.unanswered >= kSilentAfter ? SessionState::Silent : SessionState::Probing;
  }
  return fresh(s, now) ? SessionState::Established : SessionState::Stale;
}

pw::Msg PeerTable::hello(S& s, std::uint64_t now) {
  pw::Msg m;
  m.type = pw::MsgType::Hello;
  m.epoch = o_.epoch;
  m.peer_epoch = s.i.peer_epoch;
  m.seq = ++s.seq;
  m.caps = local_caps();
  m.gso_size = o_.gso_size;
  m.mtu = o_.mtu;
  s.sent_ns = now;
  ++s.i.hellos_sent;
  ++s.unanswered;
  return m;
}

PeerTable::Out PeerTable::encode(const IpAddr& to, const pw::Msg& m) const {
  Out o{to, std::vector<std::uint8_t>(pw::kMaxMsgLen)};
  o.bytes.resize(pw::encode(m, o_.encap, o.bytes, o_.gre));
  return o;
}

void PeerTable::due(std::uint64_t now, std::vector<Out>& out) {
  std::lock_guard g(mu_);
  for (auto& [a, s] : s_) {
    if (s.i.hellos_sent != 0 && now < s.next_ns) continue;
    const bool answered = fresh(s, now) && s.unanswered == 0;
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

void PeerTable::apply(S& s, const pw::Msg& m, std::uint64_t now) {
  const bool had = s.i.integrity;
  if (s.i.peer_epoch != 0 && s.i.peer_epoch != m.epoch) {
    // A restart: nothing the old epoch said holds any more.
    ++s.i.epoch_changes;
    s.i.caps = 0;
    s.i.integrity = false;
  }
  s.i.peer_epoch = m.epoch;
  s.i.caps = m.caps;
  s.i.gso_size = m.gso_size;
  s.i.mtu = m.mtu;
  s.i.last_answer_ns = now;
  s.unanswered = 0;
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
  S& s = it->second;
  const pw::Msg& m = p.msg;
  if (m.type == pw::MsgType::Hello) {
    ++s.i.hellos_received;
    apply(s, m, now);
    pw::Msg a;
    a.type = pw::MsgType::HelloAck;
    a.epoch = o_.epoch;
    a.peer_epoch = m.epoch;
    a.seq = m.seq;
    a.caps = local_caps();
    a.gso_size = o_.gso_size;
    a.mtu = o_.mtu;
    ++s.i.acks_sent;
    replies_.push_back(encode(from, a));
    // The peer does not know our epoch (it restarted, or we did): it has the ACK now, and our
    // next HELLO comes at once so that its session is refreshed from our side too.
    if (m.peer_epoch != o_.epoch) s.next_ns = now;
    return true;
  }
  // HELLO-ACK: must answer one of our HELLOs of this epoch.
  if (m.peer_epoch != o_.epoch || m.seq == 0 || m.seq > s.seq) {
    ++stale_ack_;
    return true;
  }
  ++s.i.acks_received;
  if (m.seq == s.seq && now >= s.sent_ns) s.i.rtt_ns = now - s.sent_ns;
  apply(s, m, now);
  if (s.backoff_ns != 0) {  // answered: back to the refresh period
    s.backoff_ns = 0;
    s.next_ns = s.sent_ns + o_.refresh_ns;
  }
  return true;
}

void PeerTable::take_replies(std::vector<Out>& out) {
  std::lock_guard g(mu_);
  for (auto& r : replies_) out.push_back(std::move(r));
  replies_.clear();
}

bool PeerTable::elide(const IpAddr& a, std::uint64_t now) {
  if (!o_.integrity) return false;
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
  return true;
}

SessionInfo PeerTable::session(const IpAddr& a, std::uint64_t now) const {
  std::lock_guard g(mu_);
  auto it = s_.find(a);
  if (it == s_.end()) return {};
  SessionInfo i = it->second.i;
  i.state = state_of(it->second, now);
  i.integrity = i.integrity && fresh(it->second, now);
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
        {"integrity", i.integrity && fresh(s, now)},
        {"age_ms", i.last_answer_ns && now >= i.last_answer_ns
                       ? json((now - i.last_answer_ns) / 1000000)
                       : json(nullptr)},
        {"rtt_us", i.rtt_ns ? json(i.rtt_ns / 1000) : json(nullptr)},
        {"hellos_sent", i.hellos_sent}, {"acks_sent", i.acks_sent},
        {"hellos_received", i.hellos_received}, {"acks_received", i.acks_received},
        {"epoch_changes", i.epoch_changes}, {"downgrades", i.downgrades}};
  }
  json mal = json::object();
  for (const auto& [k, v] : malformed_) mal[k] = v;
  json caps = json::array();
  if (o_.integrity) caps.push_back("integrity");
  if (o_.rco_rx) caps.push_back("rco-rx");
  return {{"epoch", o_.epoch}, {"caps", caps}, {"malformed", mal}, {"unknown_source", unknown_},
          {"stale_ack", stale_ack_}, {"sessions", sessions}};
}

}  // namespace ofld::tunnel

// The Endpoint's peer-session and integrity-mode parts (docs/peer-protocol.md),
// kept apart from the packet path in endpoint.cpp: control messages in and out, and the
// decision to elide inner checksums toward a peer.
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/peer.hpp"

namespace ofld::tunnel {

bool Endpoint::tx_elide(std::uint64_t now_ns) {
  auto* t = opts_.peer_sessions.get();
  if (!t || !t->integrity() || remotes_.empty()) return false;
  // Flooded frames go to every remote in the same trains: elide only if all take it.
  for (const auto& r : remotes_)
    if (!t->elide(r, now_ns)) return false;
  return true;
}

bool Endpoint::rx_control(std::span<const std::uint8_t> payload, const IpAddr& from,
                          std::uint64_t now_ns) {
  return opts_.peer_sessions->receive(payload, from, now_ns);
}

void Endpoint::control_out(std::uint64_t now_ns, bool hellos, std::vector<TxTrain>& out) {
  auto* t = opts_.peer_sessions.get();
  if (!t) return;
  std::vector<PeerTable::Out> msgs;
  if (hellos) t->due(now_ns, msgs);
  t->take_replies(msgs);
  for (auto& m : msgs) {
    const auto n = std::uint16_t(m.bytes.size());
    out.push_back(TxTrain{m.to, enc_->dst_port(), n, 1, std::move(m.bytes), 0, enc_->common().ttl, -1});
  }
}

}  // namespace ofld::tunnel

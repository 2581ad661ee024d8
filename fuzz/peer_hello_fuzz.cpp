// libFuzzer target: arbitrary datagrams → the peer session codec (versions 2 and 1, with and
// without a MAC) and the session table (docs/peer-protocol.md). parse() never reads outside
// its input; a message it accepts re-encodes to the same message (MAC bytes included); the
// table never answers a malformed message or one from an unknown address, never answers a
// message without a valid MAC when it has a key, and nothing it receives without a round
// trip (one datagram) makes it elide.
// Byte 0 selects the encapsulation (mod 3), integrity (4), a configured sender (8), GRE
// options (16) and a key (32).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ofld/tunnel/peer.hpp"
#include "ofld/wire/peer_hello.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  using namespace ofld;
  namespace pw = wire::peer;
  const pw::Encap kEncaps[] = {pw::Encap::Vxlan, pw::Encap::Gue, pw::Encap::Gre, pw::Encap::Geneve};
  const auto enc = kEncaps[data[0] % 4];
  const pw::GreOptions gre = (data[0] & 16) ? pw::GreOptions{true, 42} : pw::GreOptions{};
  // Copy into an exactly sized buffer so ASan sees any over-read.
  std::vector<std::uint8_t> d(data + 1, data + size);
  auto p = pw::parse(d, enc);
  if (p.verdict == pw::Verdict::Ok) {
    std::uint8_t out[pw::kMaxMsgLen];
    std::vector<std::uint8_t> mac(p.mac.begin(), p.mac.end());
    pw::Signer copy = [&](std::span<const std::uint8_t>, std::span<std::uint8_t> m) {
      std::memcpy(m.data(), mac.data(), m.size());
    };
    if (p.msg.mac && mac.size() != pw::kMacLen) std::abort();
    if (p.msg.version == pw::kVersion && p.authed.size() != pw::kBodyLen) std::abort();
    const std::size_t n = pw::encode(p.msg, enc, out, gre, p.msg.mac ? &copy : nullptr);
    if (n == 0) std::abort();
    auto q = pw::parse(std::span<const std::uint8_t>(out, n), enc);
    if (q.verdict != pw::Verdict::Ok || !(q.msg == p.msg)) std::abort();
    if (!std::equal(q.mac.begin(), q.mac.end(), mac.begin(), mac.end())) std::abort();
  }
  if (pw::maybe_control(d, enc) == false && p.verdict != pw::Verdict::NotControl) std::abort();

  tunnel::PeerOptions o;
  o.encap = enc;
  o.integrity = data[0] & 4;
  o.epoch = 0x11111111;
  o.gre = gre;
  const bool keyed = data[0] & 32;
  if (keyed) o.key.assign(16, 0x5a);
  tunnel::PeerTable t(o);
  const auto remote = *tunnel::IpAddr::parse("10.0.0.2");
  t.add(remote);
  const auto from = (data[0] & 8) ? remote : *tunnel::IpAddr::parse("10.0.0.9");
  std::vector<tunnel::PeerTable::Out> out;
  t.due(1, out);
  out.clear();
  const bool ours = t.receive(d, from, 2);
  t.take_replies(out);
  if (!ours && !out.empty()) std::abort();
  if ((p.verdict != pw::Verdict::Ok || !(data[0] & 8)) && !out.empty()) std::abort();
  if (keyed && !p.msg.mac && !out.empty()) std::abort();
  // One datagram is never a round trip: its echo cannot name a nonce it has not seen.
  if (t.elide(remote, 3)) std::abort();
  // Every reply parses as a message of ours.
  for (const auto& r : out)
    if (pw::parse(r.bytes, enc).verdict != pw::Verdict::Ok) std::abort();
  (void)t.to_json(3);
  return 0;
}

// libFuzzer target (issue 15): arbitrary datagrams → the peer session codec and the session
// table. parse() never reads outside its input; a message it accepts re-encodes to the same
// body; the table never answers a malformed message or one from an unknown address.
// Byte 0 selects the encapsulation (mod 3) and whether the sender is a configured remote.
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
  const auto enc = pw::Encap(data[0] % 3);
  // Copy into an exactly sized buffer so ASan sees any over-read.
  std::vector<std::uint8_t> d(data + 1, data + size);
  auto p = pw::parse(d, enc);
  if (p.verdict == pw::Verdict::Ok) {
    std::uint8_t out[pw::kMaxMsgLen];
    const std::size_t n = pw::encode(p.msg, enc, out);
    if (n == 0) std::abort();
    auto q = pw::parse(std::span<const std::uint8_t>(out, n), enc);
    if (q.verdict != pw::Verdict::Ok || !(q.msg == p.msg)) std::abort();
  }
  if (pw::maybe_control(d, enc) == false && p.verdict != pw::Verdict::NotControl) std::abort();

  tunnel::PeerOptions o;
  o.encap = enc;
  o.integrity = data[0] & 4;
  o.epoch = 0x11111111;
  if (data[0] & 16) o.gre = pw::GreOptions{true, 42};
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
  (void)t.elide(remote, 3);
  (void)t.to_json(3);
  return 0;
}

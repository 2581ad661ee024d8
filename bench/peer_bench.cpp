// Google Benchmark: what one peer session message costs the receiving endpoint
// (tunnel::PeerTable::receive, no sockets), to size the budget a flood of forged HELLOs can
// take (docs/peer-protocol.md, "Bounded cost of a flood"). Baseline in the same run:
//   * BM_PeerParse: wire::peer::parse of the same HELLO (the codec alone);
//   * BM_PeerForgedHello: a HELLO with a new random epoch from a configured remote, as in a
//     flood — counted, a probe scheduled, an ACK only while the budget lasts (mostly not);
//   * BM_PeerForgedHelloKeyed: the same with `peer-key` (HMAC-SHA-256 checked, refused);
//   * BM_PeerProvenHello: a HELLO that proves a round trip (echoes a fresh nonce of ours) and
//     is answered — the real peer's refresh: getrandom(2) for the ACK's nonce, an encode;
//   * BM_PeerElide: elide() for one remote, what the transmit path asks per train.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "ofld/tunnel/peer.hpp"
#include "ofld/wire/peer_hello.hpp"

namespace {

namespace tn = ofld::tunnel;
namespace pw = ofld::wire::peer;
const tn::IpAddr kA = *tn::IpAddr::parse("10.0.0.1");
const tn::IpAddr kB = *tn::IpAddr::parse("10.0.0.2");

tn::PeerOptions opts(std::uint32_t epoch, bool keyed) {
  tn::PeerOptions o;
  o.integrity = true;
  o.epoch = epoch;
  if (keyed) o.key.assign(32, 0x42);
  return o;
}

std::vector<std::uint8_t> hello(std::uint32_t epoch, std::uint64_t nonce) {
  pw::Msg m;
  m.epoch = epoch;
  m.nonce = nonce;
  m.caps = pw::kCapIntegrity;
  std::vector<std::uint8_t> b(pw::kMaxMsgLen);
  b.resize(pw::encode(m, pw::Encap::Vxlan, b));
  return b;
}

void BM_PeerParse(benchmark::State& st) {
  const auto h = hello(0x12345678, 99);
  for (auto _ : st) benchmark::DoNotOptimize(pw::parse(h, pw::Encap::Vxlan));
}
BENCHMARK(BM_PeerParse);

void forged(benchmark::State& st, bool keyed) {
  tn::PeerTable a(opts(0x1111, keyed));
  a.add(kB);
  std::mt19937_64 rng(1);
  std::vector<std::vector<std::uint8_t>> msgs;
  for (int i = 0; i < 1024; ++i) msgs.push_back(hello(std::uint32_t(rng()) | 1, rng() | 1));
  std::vector<tn::PeerTable::Out> out;
  std::uint64_t now = 1, k = 0;
  for (auto _ : st) {
    benchmark::DoNotOptimize(a.receive(msgs[k++ & 1023], kB, now += 1000));
    if ((k & 63) == 0) {
      a.take_replies(out);
      out.clear();
    }
  }
}
void BM_PeerForgedHello(benchmark::State& st) { forged(st, false); }
void BM_PeerForgedHelloKeyed(benchmark::State& st) { forged(st, true); }
BENCHMARK(BM_PeerForgedHello);
BENCHMARK(BM_PeerForgedHelloKeyed);

void BM_PeerProvenHello(benchmark::State& st) {
  // Each iteration: b's HELLO that echoes the nonce of a's last ACK to it (untimed: the
  // exchange that makes it so), then a receives it — proven, answered.
  tn::PeerTable a(opts(0x1111, false)), b(opts(0x2222, false));
  a.add(kB);
  b.add(kA);
  std::vector<tn::PeerTable::Out> m, r;
  std::uint64_t now = 1;
  auto relay = [&](tn::PeerTable& from, tn::PeerTable& to, const tn::IpAddr& src) {
    from.take_replies(r);
    for (auto& x : r) to.receive(x.bytes, src, now);
    r.clear();
  };
  for (auto _ : st) {
    st.PauseTiming();
    now += 20'000'000'000ull;
    b.due(now, m);
    for (auto& x : m) a.receive(x.bytes, kB, now);
    m.clear();
    relay(a, b, kA);  // a's ACK: b now echoes its nonce
    now += 20'000'000'000ull;
    b.due(now, m);
    st.ResumeTiming();
    benchmark::DoNotOptimize(a.receive(m[0].bytes, kB, now));
    st.PauseTiming();
    m.clear();
    relay(a, b, kA);
    st.ResumeTiming();
  }
  if (a.session(kB, now).hellos_received == 0 || a.unproven() > 2) st.SkipWithError("not proven");
}
BENCHMARK(BM_PeerProvenHello);

void BM_PeerElide(benchmark::State& st) {
  tn::PeerTable a(opts(0x1111, false)), b(opts(0x2222, false));
  a.add(kB);
  b.add(kA);
  std::vector<tn::PeerTable::Out> m;
  a.due(1, m);
  for (auto& x : m) b.receive(x.bytes, kA, 1);
  m.clear();
  b.take_replies(m);
  for (auto& x : m) a.receive(x.bytes, kB, 2);
  if (!a.elide(kB, 3)) st.SkipWithError("not established");
  for (auto _ : st) benchmark::DoNotOptimize(a.elide(kB, 3));
}
BENCHMARK(BM_PeerElide);

}  // namespace

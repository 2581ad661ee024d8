// Per-remote peer sessions (tunnel::PeerTable). The rules under test are spec I-6/I-7 carried
// over to the tunnel — a capability counts only when the peer advertised it at session setup;
// a peer that did not (or never answered) gets full checksums — and the round-trip proof of
// docs/peer-protocol.md: what a message says counts only when it echoes our current epoch and
// a nonce we sent recently (each nonce proves once), so that an address alone proves nothing.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "ofld/tunnel/peer.hpp"

using namespace ofld::tunnel;
namespace pw = ofld::wire::peer;

namespace {
constexpr std::uint64_t kS = 1'000'000'000ull;
constexpr std::uint64_t kMs = 1'000'000ull;
const IpAddr kA = *IpAddr::parse("10.0.0.1");
const IpAddr kB = *IpAddr::parse("10.0.0.2");

PeerOptions opts(bool integrity, std::uint32_t epoch, std::vector<std::uint8_t> key = {}) {
  PeerOptions o;
  o.integrity = integrity;
  o.epoch = epoch;
  o.retry_ns = 1 * kS;
  o.refresh_ns = 8 * kS;
  o.gso_size = 65535;
  o.mtu = 1450;
  o.key = std::move(key);
  return o;
}

/// Deliver every message in `msgs` to `to` as coming from `from`.
void deliver(std::vector<PeerTable::Out>& msgs, PeerTable& to, const IpAddr& from, std::uint64_t now) {
  for (auto& m : msgs) ASSERT_TRUE(to.receive(m.bytes, from, now));
  msgs.clear();
}

/// One exchange: x's due HELLOs to y, y's ACKs back.
void exchange(PeerTable& x, const IpAddr& x_addr, PeerTable& y, const IpAddr& y_addr, std::uint64_t now) {
  std::vector<PeerTable::Out> m;
  x.due(now, m);
  deliver(m, y, x_addr, now);
  y.take_replies(m);
  deliver(m, x, y_addr, now + 1000);
}

/// a and b as kA and kB: a's HELLO answered by b, then b's HELLO (due at once: it never sent
/// one) answered by a — each side has a round trip of its own.
void handshake(PeerTable& a, PeerTable& b, std::uint64_t now) {
  exchange(a, kA, b, kB, now);
  exchange(b, kB, a, kA, now + 2000);
}

/// A version-2 HELLO as an attacker on the underlay writes it: a made-up epoch, nothing echoed.
std::vector<std::uint8_t> forged_hello(std::uint32_t epoch, std::uint32_t caps, std::uint64_t nonce,
                                       std::uint32_t peer_epoch = 0, std::uint64_t echo = 0) {
  pw::Msg m;
  m.type = pw::MsgType::Hello;
  m.epoch = epoch;
  m.peer_epoch = peer_epoch;
  m.nonce = nonce;
  m.echo = echo;
  m.caps = caps;
  std::vector<std::uint8_t> b(pw::kMaxMsgLen);
  b.resize(pw::encode(m, pw::Encap::Vxlan, b));
  return b;
}
}  // namespace

TEST(TunnelPeer, I6_BothWithIntegrityElideAfterEachRoundTrip) {
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  EXPECT_FALSE(a.elide(kB, 0));  // before any answer: full checksums (I-7)
  exchange(a, kA, b, kB, 1 * kS);
  EXPECT_TRUE(a.elide(kB, 1 * kS + 2000));  // a's HELLO was answered with proof
  // b only heard a's HELLO: it proves nothing about a, b waits for its own round trip.
  EXPECT_FALSE(b.elide(kA, 1 * kS + 2000));
  EXPECT_EQ(b.session(kA, 1 * kS + 2000).state, SessionState::Idle);
  exchange(b, kB, a, kA, 1 * kS + 2000);
  EXPECT_TRUE(b.elide(kA, 1 * kS + 4000));
  const auto i = a.session(kB, 1 * kS + 4000);
  EXPECT_EQ(i.state, SessionState::Established);
  EXPECT_EQ(i.peer_epoch, 0x2222u);
  EXPECT_EQ(i.caps, pw::kCapIntegrity);
  EXPECT_EQ(i.rtt_ns, 1000u);
  EXPECT_EQ(i.mtu, 1450);
  EXPECT_EQ(i.gso_size, 65535);
}

TEST(TunnelPeer, I7_PeerWithoutCapabilityGetsFullChecksums) {
  PeerTable a(opts(true, 0x1111)), b(opts(false, 0x2222));
  a.add(kB);
  b.add(kA);
  handshake(a, b, 1 * kS);
  EXPECT_EQ(a.session(kB, 1 * kS + 5000).state, SessionState::Established);
  EXPECT_FALSE(a.elide(kB, 1 * kS + 5000));
  EXPECT_FALSE(b.elide(kA, 1 * kS + 5000));  // integrity off locally: never
}

TEST(TunnelPeer, I7_SilentPeerHasNoCapabilitiesAndBacksOff) {
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  std::vector<std::uint64_t> sent_at;
  for (std::uint64_t t = 0; t <= 40 * kS; t += kS / 10) {
    std::vector<PeerTable::Out> m;
    a.due(t, m);
    if (!m.empty()) sent_at.push_back(t);
  }
  // retry 1 s, doubling, capped at refresh (8 s): 0, 1, 3, 7, 15, 23, 31, 39
  const std::vector<std::uint64_t> want = {0, 1 * kS, 3 * kS, 7 * kS, 15 * kS, 23 * kS, 31 * kS, 39 * kS};
  EXPECT_EQ(sent_at, want);
  EXPECT_EQ(a.session(kB, 40 * kS).state, SessionState::Silent);
  EXPECT_FALSE(a.elide(kB, 40 * kS));
}

TEST(TunnelPeer, I7_RestartWithoutCapabilityDowngradesAfterTheProbe) {
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  {
    PeerTable b(opts(true, 0x2222));
    b.add(kA);
    handshake(a, b, 1 * kS);
    ASSERT_TRUE(a.elide(kB, 1 * kS + 5000));
  }
  // b restarts with a new epoch and without integrity; its first HELLO reaches a. It echoes
  // nothing of a's: a claim, not proof — a probes (its next HELLO due at once).
  PeerTable b2(opts(false, 0x3333));
  b2.add(kA);
  std::vector<PeerTable::Out> m;
  b2.due(3 * kS, m);
  deliver(m, a, kB, 3 * kS);
  auto i = a.session(kB, 3 * kS);
  EXPECT_EQ(i.peer_epoch, 0x2222u);
  EXPECT_EQ(i.unproven, 1u);
  a.take_replies(m);
  ASSERT_EQ(m.size(), 1u);  // b2's HELLO is answered: b2 gets its round trip
  deliver(m, b2, kA, 3 * kS + 1000);
  // The probe: a's HELLO to b2, b2's ACK echoes it — now a believes the restart.
  exchange(a, kA, b2, kB, 3 * kS + 2000);
  EXPECT_FALSE(a.elide(kB, 3 * kS + 4000));
  i = a.session(kB, 3 * kS + 4000);
  EXPECT_EQ(i.peer_epoch, 0x3333u);
  EXPECT_EQ(i.epoch_changes, 1u);
  EXPECT_EQ(i.downgrades, 1u);
  EXPECT_EQ(i.claim_ns, 0u);
  EXPECT_EQ(b2.session(kA, 3 * kS + 4000).state, SessionState::Established);
}

TEST(TunnelPeer, I7_RestartNotHeardIsCaughtByRefresh) {
  // b restarts without integrity and does not send a HELLO of its own (e.g. a learned
  // remote): a's refresh HELLO gets an ACK of the new epoch that echoes it — downgraded
  // within one refresh.
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  {
    PeerTable b(opts(true, 0x2222));
    b.add(kA);
    handshake(a, b, 1 * kS);
  }
  PeerTable b2(opts(false, 0x4444));
  b2.add(kA);
  exchange(a, kA, b2, kB, 9 * kS);  // the refresh is due 8 s after the first HELLO
  EXPECT_FALSE(a.elide(kB, 9 * kS + 2000));
  EXPECT_EQ(a.session(kB, 9 * kS + 2000).peer_epoch, 0x4444u);
}

TEST(TunnelPeer, I7_StaleAnswerStopsElision) {
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  exchange(a, kA, b, kB, 1 * kS);
  ASSERT_TRUE(a.elide(kB, 2 * kS));
  // fresh = 3 × refresh + retry = 25 s; no answer since 1 s.
  EXPECT_TRUE(a.elide(kB, 26 * kS + 1000));
  EXPECT_FALSE(a.elide(kB, 26 * kS + 1001));
  EXPECT_EQ(a.session(kB, 27 * kS).state, SessionState::Stale);
  EXPECT_EQ(a.session(kB, 27 * kS).downgrades, 1u);
}

TEST(TunnelPeer, MalformedAndUnknownCountedAndIgnored) {
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  std::vector<PeerTable::Out> m;
  b.due(1 * kS, m);
  ASSERT_EQ(m.size(), 1u);
  auto bytes = m[0].bytes;
  m.clear();
  // from an address that is no configured remote
  EXPECT_TRUE(a.receive(bytes, *IpAddr::parse("10.0.0.99"), 1 * kS));
  EXPECT_EQ(a.unknown_source(), 1u);
  // malformed: bad version
  auto bad = bytes;
  bad[8 + 4] = 9;
  EXPECT_TRUE(a.receive(bad, kB, 1 * kS));
  // truncated
  bad = bytes;
  bad.resize(20);
  EXPECT_TRUE(a.receive(bad, kB, 1 * kS));
  EXPECT_EQ(a.malformed_total(), 2u);
  a.take_replies(m);
  EXPECT_TRUE(m.empty());  // nothing answered
  EXPECT_FALSE(a.elide(kB, 1 * kS));
  // a data datagram is not consumed
  const std::vector<std::uint8_t> data = {0x08, 0, 0, 0, 0, 0, 42, 0, 1, 2, 3, 4};
  EXPECT_FALSE(a.receive(data, kB, 1 * kS));
  // an ACK for another epoch (not an answer to our HELLO) does not establish anything
  PeerTable c(opts(true, 0x5555));
  c.add(kB);
  std::vector<PeerTable::Out> hm;
  c.due(1 * kS, hm);
  ASSERT_TRUE(b.receive(hm[0].bytes, kA, 1 * kS));
  b.take_replies(m);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(a.receive(m[0].bytes, kB, 1 * kS));  // ACK of c's epoch, delivered to a
  EXPECT_FALSE(a.elide(kB, 1 * kS));
  EXPECT_EQ(a.to_json(1 * kS)["stale_ack"], 1u);
  EXPECT_EQ(a.session(kB, 1 * kS).state, SessionState::Idle);
}

// ---- proof of a round trip (docs/peer-protocol.md, "Sessions")

TEST(TunnelPeerProof, I7_ForgedHelloFromTheRemotesAddressNeverUpgrades) {
  // The remote never answers (a kernel VXLAN device): silent. A HELLO from its address with a
  // made-up epoch, echoing nothing, claiming integrity, must not make it established.
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  std::vector<PeerTable::Out> m;
  for (std::uint64_t t = 0; t <= 8 * kS; t += kS / 10) a.due(t, m);
  m.clear();
  ASSERT_EQ(a.session(kB, 8 * kS).state, SessionState::Silent);
  // Also a forged version-2 HELLO that claims to know our epoch (guessing the echo).
  for (const auto& f : {forged_hello(0xdeadbeef, pw::kCapIntegrity, 77),
                        forged_hello(0xdeadbeef, pw::kCapIntegrity, 78, 0x1111, 12345)}) {
    EXPECT_TRUE(a.receive(f, kB, 8 * kS + 100));
    EXPECT_FALSE(a.elide(kB, 8 * kS + 200));
    EXPECT_EQ(a.session(kB, 8 * kS + 200).state, SessionState::Silent);
  }
  EXPECT_EQ(a.unproven(), 2u);
  EXPECT_EQ(a.session(kB, 8 * kS + 200).unproven, 2u);
  EXPECT_EQ(a.session(kB, 8 * kS + 200).peer_epoch, 0u);
  // The only thing it causes: ACKs (to the real address) and a probe HELLO, at most one per
  // retry (the last HELLO left at 7 s: the probe at 8.1 s).
  a.take_replies(m);
  EXPECT_EQ(m.size(), 2u);
  for (auto& o : m) EXPECT_EQ(o.to, kB);
  m.clear();
  a.due(8 * kS + 200, m);
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(a.session(kB, 8 * kS + 200).probes, 1u);
}

TEST(TunnelPeerProof, I7_ForgedDowngradeIsRefutedByTheRealPeer) {
  // A forged HELLO claims that b restarted without integrity. a keeps eliding; its probe is
  // answered by the real b with proof of the old epoch, which clears the claim.
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  handshake(a, b, 1 * kS);
  ASSERT_TRUE(a.elide(kB, 2 * kS));
  ASSERT_TRUE(a.receive(forged_hello(0x6666, 0, 99), kB, 2 * kS));
  EXPECT_TRUE(a.elide(kB, 2 * kS + 1));
  auto i = a.session(kB, 2 * kS + 1);
  EXPECT_EQ(i.peer_epoch, 0x2222u);
  EXPECT_EQ(i.downgrades, 0u);
  EXPECT_NE(i.claim_ns, 0u);
  exchange(a, kA, b, kB, 2 * kS + 10);  // the probe (the last HELLO left at 1 s)
  i = a.session(kB, 2 * kS + 2000);
  EXPECT_EQ(i.claim_ns, 0u);
  EXPECT_EQ(i.peer_epoch, 0x2222u);
  EXPECT_EQ(i.epoch_changes, 0u);
  EXPECT_TRUE(a.elide(kB, 5 * kS));  // long after 2 × retry: refuted, still eliding
}

TEST(TunnelPeerProof, I7_UnrefutedClaimStopsElisionAfterTwoRetries) {
  // The same claim when the real b does not answer the probe (it went away, or became a
  // version-1 ofld): full checksums 2 × retry after the claim, never a blackhole.
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  handshake(a, b, 1 * kS);
  ASSERT_TRUE(a.receive(forged_hello(0x6666, 0, 99), kB, 2 * kS));
  std::vector<PeerTable::Out> m;
  a.due(2 * kS, m);  // the probe, unanswered
  EXPECT_EQ(m.size(), 1u);
  EXPECT_TRUE(a.elide(kB, 4 * kS - 1));
  EXPECT_FALSE(a.elide(kB, 4 * kS));
  EXPECT_EQ(a.session(kB, 4 * kS).peer_epoch, 0x2222u);  // nothing of the claim believed
  // b answers again: eliding again.
  exchange(a, kA, b, kB, 5 * kS);
  EXPECT_TRUE(a.elide(kB, 5 * kS + 2000));
}

TEST(TunnelPeerProof, I7_ReplayedHelloAndAckProveNothing) {
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  std::vector<std::uint8_t> old_ack, old_hello;
  {
    PeerTable b(opts(true, 0x2222));
    b.add(kA);
    std::vector<PeerTable::Out> m;
    a.due(1 * kS, m);
    deliver(m, b, kA, 1 * kS);
    b.take_replies(m);
    old_ack = m[0].bytes;  // captured on the underlay
    deliver(m, a, kB, 1 * kS + 1000);
    b.due(1 * kS + 2000, m);
    old_hello = m[0].bytes;
    deliver(m, a, kB, 1 * kS + 2000);
    a.take_replies(m);
    deliver(m, b, kA, 1 * kS + 3000);
    ASSERT_TRUE(a.elide(kB, 1 * kS + 3000));
    // The same ACK again: its nonce proved once already.
    ASSERT_TRUE(a.receive(old_ack, kB, 1 * kS + 4000));
    EXPECT_EQ(a.to_json(1 * kS + 4000)["stale_ack"], 1u);
  }
  // b restarts without integrity; a learns it with proof.
  PeerTable b2(opts(false, 0x3333));
  b2.add(kA);
  exchange(a, kA, b2, kB, 9 * kS);
  ASSERT_EQ(a.session(kB, 9 * kS + 2000).peer_epoch, 0x3333u);
  ASSERT_FALSE(a.elide(kB, 9 * kS + 2000));
  // Replays of the old epoch's HELLO and ACK (integrity advertised) change nothing.
  const auto before = a.unproven();
  ASSERT_TRUE(a.receive(old_ack, kB, 9 * kS + 3000));
  ASSERT_TRUE(a.receive(old_hello, kB, 9 * kS + 3000));
  const auto i = a.session(kB, 9 * kS + 3000);
  EXPECT_EQ(i.peer_epoch, 0x3333u);
  EXPECT_EQ(i.caps, 0u);
  EXPECT_FALSE(a.elide(kB, 9 * kS + 3000));
  EXPECT_EQ(a.unproven(), before + 2);
}

TEST(TunnelPeerProof, I7_FloodOfRandomEpochsBoundedStateAndSends) {
  // 20,000 forged HELLOs with random epochs and nonces over 2 s from b's address, while the
  // real b keeps answering a's HELLOs. State: one session, as before. Sends: at most
  // kReplyBudget ACKs per retry to forged HELLOs, at most one HELLO per retry.
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  handshake(a, b, 1 * kS);
  std::mt19937_64 rng(7);
  std::size_t acks = 0, hellos = 0;
  const std::uint64_t t0 = 2 * kS;
  for (int k = 0; k < 20000; ++k) {
    const std::uint64_t now = t0 + std::uint64_t(k) * 100'000;  // every 100 µs
    auto e = std::uint32_t(rng()) | 1u;
    ASSERT_TRUE(a.receive(forged_hello(e, k & 1 ? 0u : pw::kCapIntegrity, rng() | 1), kB, now));
    std::vector<PeerTable::Out> m;
    a.take_replies(m);
    acks += m.size();
    m.clear();
    a.due(now, m);  // a's HELLOs (probes) go to the real b, which answers with proof
    hellos += m.size();
    deliver(m, b, kA, now);
    b.take_replies(m);
    deliver(m, a, kB, now + 1000);
    EXPECT_TRUE(a.elide(kB, now + 1000)) << k;
  }
  EXPECT_LE(acks, 3u * kReplyBudget);  // 2 s: 3 budget periods at most
  EXPECT_LE(hellos, 3u);
  EXPECT_EQ(a.to_json(4 * kS)["sessions"].size(), 1u);
  EXPECT_EQ(a.unproven(), 20000u);
  EXPECT_GE(a.rate_limited(), 20000u - 3u * kReplyBudget);
  const auto i = a.session(kB, 4 * kS);
  EXPECT_EQ(i.peer_epoch, 0x2222u);
  EXPECT_EQ(i.epoch_changes, 0u);
  EXPECT_EQ(i.downgrades, 0u);
  // The real b's own HELLO (its epoch) is still answered: another budget than the flood's.
  std::vector<PeerTable::Out> m;
  b.due(10 * kS, m);
  ASSERT_EQ(m.size(), 1u);
  deliver(m, a, kB, 10 * kS);
  a.take_replies(m);
  EXPECT_EQ(m.size(), 1u);
}

TEST(TunnelPeerProof, I6_RealRestartsPickedUpWithinOneRefresh) {
  // a and b run their timers every 100 ms and deliver to each other at once. b restarts at
  // 20 s — with integrity, then (at 40 s) without; a must hold the new epoch and the right
  // elision within one refresh (8 s) of each restart.
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  auto b = std::make_unique<PeerTable>(opts(true, 0x2222));
  b->add(kA);
  auto run = [&](std::uint64_t from, std::uint64_t to) {
    for (std::uint64_t t = from; t < to; t += 100 * kMs) {
      std::vector<PeerTable::Out> m;
      a.due(t, m);
      deliver(m, *b, kA, t);
      b->take_replies(m);
      deliver(m, a, kB, t);
      b->due(t, m);
      deliver(m, a, kB, t);
      a.take_replies(m);
      deliver(m, *b, kA, t);
      a.take_replies(m);  // (answers to b's ACKs: none)
      ASSERT_TRUE(m.empty());
    }
  };
  run(0, 20 * kS);
  ASSERT_TRUE(a.elide(kB, 20 * kS));
  // In steady state nothing is refused: only b's session counted a's first HELLO (it came
  // before any round trip of b's own).
  EXPECT_EQ(a.unproven(), 0u);
  EXPECT_EQ(b->unproven(), 1u);
  EXPECT_EQ(a.rate_limited() + b->rate_limited(), 0u);
  b = std::make_unique<PeerTable>(opts(true, 0x3333));
  b->add(kA);
  run(20 * kS, 28 * kS);
  auto i = a.session(kB, 28 * kS);
  EXPECT_EQ(i.peer_epoch, 0x3333u);
  EXPECT_EQ(i.epoch_changes, 1u);
  EXPECT_TRUE(a.elide(kB, 28 * kS));
  EXPECT_TRUE(b->elide(kA, 28 * kS));
  b = std::make_unique<PeerTable>(opts(false, 0x4444));
  b->add(kA);
  run(40 * kS, 48 * kS);
  i = a.session(kB, 48 * kS);
  EXPECT_EQ(i.peer_epoch, 0x4444u);
  EXPECT_EQ(i.epoch_changes, 2u);
  EXPECT_EQ(i.downgrades, 1u);
  EXPECT_FALSE(a.elide(kB, 48 * kS));
}

TEST(TunnelPeerProof, I7_LegacyPeerAnsweredInVersion1NeverElided) {
  // A version-1 ofld (hand-built HELLO, the old layout): answered with a version-1 ACK that
  // echoes its seq (so it sees our capabilities as before), shown `legacy`, and never elided
  // toward, even though it advertises integrity.
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  const std::vector<std::uint8_t> v1_hello = {
      0, 0, 0, 0, 0, 0, 0, 0,                          // VXLAN, I flag clear
      0x6f, 0x66, 0x6c, 0x64, 1, 1, 0, 28,            // "ofld", v1, HELLO, length 28
      0x0b, 0x0b, 0x0b, 0x0b, 0, 0, 0, 0, 0, 0, 0, 5,  // epoch, peer_epoch 0, seq 5
      0, 0, 0, 1, 0xff, 0xff, 0x05, 0xaa};             // caps integrity, gso, mtu
  ASSERT_TRUE(a.receive(v1_hello, kB, 1 * kS));
  std::vector<PeerTable::Out> m;
  a.take_replies(m);
  ASSERT_EQ(m.size(), 1u);
  const std::vector<std::uint8_t> want = {
      0, 0, 0, 0, 0, 0, 0, 0,
      0x6f, 0x66, 0x6c, 0x64, 1, 2, 0, 28,            // v1, ACK
      0, 0, 0x11, 0x11, 0x0b, 0x0b, 0x0b, 0x0b, 0, 0, 0, 5,  // our epoch, its epoch, its seq
      0, 0, 0, 1, 0xff, 0xff, 0x05, 0xaa};
  EXPECT_EQ(m[0].bytes, want);
  const auto i = a.session(kB, 1 * kS);
  EXPECT_EQ(i.state, SessionState::Legacy);
  EXPECT_EQ(i.legacy_received, 1u);
  EXPECT_EQ(i.peer_epoch, 0u);
  EXPECT_FALSE(a.elide(kB, 1 * kS));
  EXPECT_EQ(a.to_json(1 * kS)["legacy"], 1u);
  // A version-1 ACK (answering a HELLO we never sent in version 1) proves nothing either.
  auto v1_ack = want;
  v1_ack[16] = 0x0b, v1_ack[17] = 0x0b, v1_ack[18] = 0x0b, v1_ack[19] = 0x0b;
  v1_ack[20] = v1_ack[21] = 0, v1_ack[22] = v1_ack[23] = 0x11;
  ASSERT_TRUE(a.receive(v1_ack, kB, 1 * kS));
  EXPECT_FALSE(a.elide(kB, 1 * kS));
}

TEST(TunnelPeerProof, PeerKeyMatchEstablishesMismatchIsRefused) {
  const std::vector<std::uint8_t> k1(32, 0x41), k2(32, 0x42);
  {  // same key: established both ways
    PeerTable a(opts(true, 0x1111, k1)), b(opts(true, 0x2222, k1));
    a.add(kB);
    b.add(kA);
    handshake(a, b, 1 * kS);
    EXPECT_TRUE(a.elide(kB, 1 * kS + 5000));
    EXPECT_TRUE(b.elide(kA, 1 * kS + 5000));
    EXPECT_EQ(a.to_json(0)["authenticated"], true);
  }
  // another key: every message refused (bad_mac), nothing answered, nothing established
  PeerTable a(opts(true, 0x1111, k1)), b(opts(true, 0x2222, k2));
  a.add(kB);
  b.add(kA);
  std::vector<PeerTable::Out> m;
  a.due(1 * kS, m);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].bytes.size(), 8 + pw::kBodyLenMac);
  deliver(m, b, kA, 1 * kS);
  b.take_replies(m);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(b.bad_mac(), 1u);
  EXPECT_EQ(b.session(kA, 1 * kS).hellos_received, 0u);
  EXPECT_EQ(b.unproven(), 0u);
  // without a MAC (an unauthenticated endpoint, a forger, a version-1 peer): refused too
  ASSERT_TRUE(a.receive(forged_hello(0x2222, pw::kCapIntegrity, 5), kB, 1 * kS));
  EXPECT_EQ(a.unauthenticated(), 1u);
  a.take_replies(m);
  EXPECT_TRUE(m.empty());
  // a MAC flipped in one bit
  PeerTable c(opts(true, 0x3333, k1));
  c.add(kA);
  c.due(1 * kS, m);
  m[0].bytes.back() ^= 1;
  deliver(m, a, kB, 1 * kS);
  EXPECT_EQ(a.bad_mac(), 1u);
  EXPECT_FALSE(a.elide(kB, 1 * kS));
  EXPECT_EQ(a.session(kB, 1 * kS).state, SessionState::Probing);
}

TEST(TunnelPeerProof, ReadPeerKeyNeedsSixteenBytes) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/tunnel_peer_key_good", bad = dir + "/tunnel_peer_key_short";
  FILE* f = std::fopen(good.c_str(), "w");
  std::fputs("0123456789abcdef0123\n", f);
  std::fclose(f);
  f = std::fopen(bad.c_str(), "w");
  std::fputs("short\n", f);
  std::fclose(f);
  std::string err;
  EXPECT_EQ(read_peer_key(good, err).size(), 20u);
  EXPECT_TRUE(err.empty());
  EXPECT_TRUE(read_peer_key(bad, err).empty());
  EXPECT_NE(err.find("at least 16"), std::string::npos) << err;
  err.clear();
  EXPECT_TRUE(read_peer_key(dir + "/tunnel_peer_key_none", err).empty());
  EXPECT_NE(err.find("cannot be read"), std::string::npos) << err;
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

// A reload turning integrity off on one side (PeerTable::reconfigure): it stops eliding at
// once, and its next HELLO is due at once, carrying no integrity capability. To the peer that
// HELLO is a claim (it proves nothing: docs/peer-protocol.md), so the peer probes, and the
// answer to its probe — one retry after its last HELLO — proves the change: it stops eliding
// too (I-7: a capability counts only while the peer advertises it). Turned on again, elision
// resumes only after a round trip in each direction, never from the old advertisement.
TEST(TunnelPeer, I7_ReconfiguredIntegrityRenegotiatedWithinOneRetry) {
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  handshake(a, b, 1 * kS);  // b's last HELLO: 1 s + 2000 ns
  ASSERT_TRUE(a.elide(kB, 1 * kS + 5000));
  ASSERT_TRUE(b.elide(kA, 1 * kS + 5000));
  const std::uint64_t unproven0 = b.session(kA, 1 * kS + 5000).unproven;  // one at start (the docs)
  a.reconfigure(false, {});
  EXPECT_FALSE(a.integrity());
  EXPECT_FALSE(a.elide(kB, 1 * kS + 6000));  // at once
  std::vector<PeerTable::Out> m;
  a.due(1 * kS + 7000, m);  // due now, not after the 8 s refresh
  ASSERT_EQ(m.size(), 1u);
  deliver(m, b, kA, 1 * kS + 7000);
  EXPECT_EQ(b.session(kA, 1 * kS + 7000).unproven, unproven0 + 1);  // a claim: believed once proven
  EXPECT_TRUE(b.elide(kA, 1 * kS + 7000));  // not yet
  b.take_replies(m);
  deliver(m, a, kB, 1 * kS + 8000);
  b.due(1 * kS + 9000, m);
  EXPECT_TRUE(m.empty());  // the probe waits one retry after b's last HELLO
  exchange(b, kB, a, kA, 2 * kS + 2000);  // the probe, answered by a with proof
  EXPECT_FALSE(b.elide(kA, 2 * kS + 3000));
  EXPECT_EQ(b.session(kA, 2 * kS + 3000).caps, 0u);
  EXPECT_EQ(b.session(kA, 2 * kS + 3000).downgrades, 1u);
  EXPECT_EQ(b.session(kA, 2 * kS + 3000).epoch_changes, 0u);  // not a restart: the epoch stays
  EXPECT_EQ(a.session(kB, 2 * kS + 3000).state, SessionState::Established);
  // on again: no elision from the old advertisement, only after a's own round trip
  a.reconfigure(true, {});
  EXPECT_TRUE(a.integrity());
  EXPECT_FALSE(a.elide(kB, 3 * kS));
  exchange(a, kA, b, kB, 4 * kS);
  EXPECT_TRUE(a.elide(kB, 4 * kS + 2000));
  EXPECT_FALSE(b.elide(kA, 4 * kS + 2000));  // a's HELLO alone proves nothing to b
  exchange(b, kB, a, kA, 5 * kS);             // b's own round trip (its probe)
  EXPECT_TRUE(b.elide(kA, 5 * kS + 2000));
  EXPECT_EQ(b.session(kA, 5 * kS + 2000).caps, pw::kCapIntegrity);
}

// A reload with a new peer key: what was proven under the old key is forgotten (Probing, no
// elision), messages under the old key are refused as bad_mac, and once both ends have the
// new key one exchange each way establishes the sessions again.
TEST(TunnelPeerProof, ReconfiguredPeerKeyForgetsProofUntilTheNewKeyProves) {
  const std::vector<std::uint8_t> k1(32, 0x41), k2(32, 0x42);
  PeerTable a(opts(true, 0x1111, k1)), b(opts(true, 0x2222, k1));
  a.add(kB);
  b.add(kA);
  handshake(a, b, 1 * kS);
  ASSERT_TRUE(a.elide(kB, 1 * kS + 5000));
  a.reconfigure(true, k2);
  EXPECT_FALSE(a.elide(kB, 1 * kS + 6000));
  EXPECT_EQ(a.session(kB, 1 * kS + 6000).state, SessionState::Probing);
  // b still on k1: a's HELLO (due at once) is refused by b, b's is refused by a
  std::vector<PeerTable::Out> m;
  a.due(1 * kS + 7000, m);
  ASSERT_EQ(m.size(), 1u);
  deliver(m, b, kA, 1 * kS + 7000);
  EXPECT_EQ(b.bad_mac(), 1u);
  b.take_replies(m);
  EXPECT_TRUE(m.empty());
  ASSERT_TRUE(a.receive(forged_hello(0x2222, pw::kCapIntegrity, 9), kB, 1 * kS + 7000));
  EXPECT_EQ(a.unauthenticated(), 1u);
  EXPECT_FALSE(a.elide(kB, 1 * kS + 8000));
  // b gets the new key too: one exchange each way and both elide again
  b.reconfigure(true, k2);
  EXPECT_FALSE(b.elide(kA, 1 * kS + 8000));
  handshake(a, b, 3 * kS);
  EXPECT_TRUE(a.elide(kB, 3 * kS + 5000));
  EXPECT_TRUE(b.elide(kA, 3 * kS + 5000));
  EXPECT_EQ(a.to_json(3 * kS)["authenticated"], true);
  // and back to no key: unauthenticated sessions, established after an exchange each way
  a.reconfigure(true, {});
  b.reconfigure(true, {});
  EXPECT_EQ(a.to_json(4 * kS)["authenticated"], false);
  handshake(a, b, 4 * kS);
  EXPECT_TRUE(a.elide(kB, 4 * kS + 5000));
}

// Bounded VXLAN FDB learning: `maxaddress` (the kernel's IFLA_VXLAN_LIMIT, checked in
// vxlan_fdb_create: a new entry past the limit is refused, -ENOSPC), learned entries per
// remote, `learning-from remotes|any`, local MACs (`local-maxaddress`), the compact table
// (flat open addressing, 24-byte slots) against a reference model, and a flood of new
// source MACs through an Endpoint.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <unistd.h>

#include "ofld/daemon/config.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/fdb.hpp"

namespace {

using namespace ofld::tunnel;
constexpr std::uint64_t kSec = 1000000000ull;

IpAddr ip(const char* s) { return *IpAddr::parse(s); }
Mac mac(std::uint32_t i) {
  return Mac{0x02, 0x10, std::uint8_t(i >> 24), std::uint8_t(i >> 16), std::uint8_t(i >> 8), std::uint8_t(i)};
}
FdbLimits limits(std::uint32_t max, LearnFrom from = LearnFrom::Any, std::uint32_t per = 0,
                 std::uint32_t local = FdbLimits::kDefaultLocalMax) {
  FdbLimits l;
  l.maxaddress = max, l.from = from, l.per_remote = per, l.local_max = local;
  return l;
}

// maxaddress N: N learned entries are created, the next new one is refused and counted;
// refreshing and moving an existing entry still work; once one ages out there is room again.
TEST(TunnelFdbBound, MaxaddressRefusesNewLearnedEntriesOnly) {
  Fdb f(300 * kSec);
  f.set_limits(limits(4));
  const IpAddr r1 = ip("10.0.0.5"), r2 = ip("10.0.0.6");
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(f.learn_ex(mac(i), r1, 1 * kSec), LearnResult::Created);
  EXPECT_EQ(f.learn_ex(mac(4), r1, 2 * kSec), LearnResult::RefusedFull);
  EXPECT_EQ(f.learn_ex(mac(5), r2, 2 * kSec), LearnResult::RefusedFull);
  EXPECT_EQ(f.refusals().maxaddress, 2u);
  EXPECT_EQ(f.size(), 4u);
  EXPECT_EQ(f.learn_ex(mac(0), r1, 3 * kSec), LearnResult::Refreshed);
  EXPECT_EQ(f.learn_ex(mac(1), r2, 3 * kSec), LearnResult::Moved);
  EXPECT_EQ(f.lookup(mac(1), 3 * kSec).remotes[0], r2);
  EXPECT_TRUE(f.lookup(mac(4), 3 * kSec).flooded);  // never learned
  // mac(2), mac(3) were last updated at 1 s: gone at 301 s; mac(0), mac(1) at 3 s stay
  EXPECT_EQ(f.age(301 * kSec), 2u);
  EXPECT_EQ(f.learned_count(), 2u);
  EXPECT_EQ(f.learn_ex(mac(4), r1, 301 * kSec), LearnResult::Created);
  EXPECT_EQ(f.learn_ex(mac(5), r1, 301 * kSec), LearnResult::Created);
  EXPECT_EQ(f.learn_ex(mac(6), r1, 301 * kSec), LearnResult::RefusedFull);
  f.set_limits(limits(0));  // 0: unbounded (the kernel's default)
  EXPECT_EQ(f.learn_ex(mac(6), r1, 302 * kSec), LearnResult::Created);
}

// Static and EVPN entries are never refused because of learned ones and do not count; an
// EVPN route for a learned MAC takes the entry over and frees its place.
TEST(TunnelFdbBound, StaticAndEvpnEntriesAreNeverRefused) {
  Fdb f;
  f.set_limits(limits(2));
  const IpAddr r = ip("10.0.0.5");
  EXPECT_TRUE(f.learn(mac(0), r, 0));
  EXPECT_TRUE(f.learn(mac(1), r, 0));
  EXPECT_EQ(f.learn_ex(mac(2), r, 0), LearnResult::RefusedFull);
  f.add_static(mac(10), ip("10.0.0.7"));
  EXPECT_TRUE(f.set_evpn(mac(11), ip("10.0.0.8"), 0, 0));
  EXPECT_EQ(f.size(), 4u);
  EXPECT_EQ(f.learned_count(), 2u);
  EXPECT_FALSE(f.lookup(mac(10), 0).flooded);
  EXPECT_FALSE(f.lookup(mac(11), 0).flooded);
  EXPECT_TRUE(f.set_evpn(mac(0), ip("10.0.0.8"), 1, 0));  // learned → EVPN
  EXPECT_EQ(f.learned_count(), 1u);
  EXPECT_EQ(f.learn_ex(mac(2), r, 0), LearnResult::Created);
  f.add_static(mac(1), ip("10.0.0.7"));  // learned → static
  EXPECT_EQ(f.learned_count(), 1u);
  EXPECT_EQ(f.entries().at(mac(1)).source, FdbSource::Static);
}

// maxaddress-per-remote: one remote stops at its limit while another still learns; a move
// is not a new entry (not refused).
TEST(TunnelFdbBound, PerRemoteLimitStopsOneRemoteOnly) {
  Fdb f;
  f.set_limits(limits(100, LearnFrom::Any, 2));
  const IpAddr r1 = ip("10.0.0.5"), r2 = ip("10.0.0.6");
  EXPECT_EQ(f.learn_ex(mac(0), r1, 0), LearnResult::Created);
  EXPECT_EQ(f.learn_ex(mac(1), r1, 0), LearnResult::Created);
  EXPECT_EQ(f.learn_ex(mac(2), r1, 0), LearnResult::RefusedPerRemote);
  EXPECT_EQ(f.learn_ex(mac(3), r2, 0), LearnResult::Created);
  EXPECT_EQ(f.learn_ex(mac(0), r2, 0), LearnResult::Moved);  // r1 has room again
  EXPECT_EQ(f.learn_ex(mac(2), r1, 0), LearnResult::Created);
  EXPECT_EQ(f.refusals().per_remote, 1u);
  EXPECT_EQ(f.refusals().maxaddress, 0u);
}

// learning-from remotes: a source that is not a configured remote, a static entry's remote or
// an EVPN VTEP neither creates nor moves entries (counted); each kind of known remote does.
TEST(TunnelFdbBound, LearningFromRemotesRefusesUnknownSources) {
  Fdb f;
  f.set_limits(limits(100, LearnFrom::Remotes));
  const IpAddr conf = ip("10.0.0.2"), stranger = ip("10.0.0.99");
  f.add_default_remote(conf);
  EXPECT_EQ(f.learn_ex(mac(0), conf, 0), LearnResult::Created);
  EXPECT_EQ(f.learn_ex(mac(1), stranger, 0), LearnResult::RefusedUnknownSource);
  EXPECT_EQ(f.learn_ex(mac(0), stranger, 0), LearnResult::RefusedUnknownSource);  // no hijack
  EXPECT_EQ(f.lookup(mac(0), 0).remotes[0], conf);
  EXPECT_EQ(f.refusals().unknown_source, 2u);
  f.add_flood(ip("10.0.0.3"), FdbSource::Evpn);      // type-3 VTEP
  f.set_evpn(mac(20), ip("10.0.0.4"), 0, 0);         // type-2 next hop
  f.add_static(mac(21), ip("10.0.0.5"));             // static entry's remote
  EXPECT_EQ(f.learn_ex(mac(2), ip("10.0.0.3"), 0), LearnResult::Created);
  EXPECT_EQ(f.learn_ex(mac(3), ip("10.0.0.4"), 0), LearnResult::Created);
  EXPECT_EQ(f.learn_ex(mac(4), ip("10.0.0.5"), 0), LearnResult::Created);
  EXPECT_EQ(f.size(), 6u);
  f.set_limits(limits(100, LearnFrom::Any));
  EXPECT_EQ(f.learn_ex(mac(1), stranger, 0), LearnResult::Created);
}

// The default (auto): known remotes only, but any source while the flood list has an
// underlay multicast group (its members are only known by learning, as in the kernel).
TEST(TunnelFdbBound, AutoLearnsFromAnySourceOnlyWithAGroup) {
  SharedFdb f;
  EXPECT_EQ(f.limits().from, LearnFrom::Auto);
  EXPECT_EQ(f.learn_ex(mac(0), ip("10.0.0.9"), 0), LearnResult::RefusedUnknownSource);
  const std::uint32_t g0 = f.known_generation();
  f.add_flood(ip("239.1.1.1"), FdbSource::Group);
  EXPECT_NE(f.known_generation(), g0);  // cached "unknown" answers must be asked again
  EXPECT_EQ(f.learn_ex(mac(0), ip("10.0.0.9"), 0), LearnResult::Created);
  f.remove_flood(ip("239.1.1.1"), FdbSource::Group);
  EXPECT_EQ(f.learn_ex(mac(1), ip("10.0.0.10"), 0), LearnResult::RefusedUnknownSource);
}

// local-maxaddress: new MACs behind our TAP past the bound are refused (counted); known
// ones refresh; an aged one makes room.
TEST(TunnelFdbBound, LocalMaxaddressRefusesNewLocalMacs) {
  SharedFdb f(10 * kSec);
  f.set_limits(limits(100, LearnFrom::Any, 0, 2));
  f.add_default_remote(ip("10.0.0.2"));
  f.set_local_learning(true);
  std::vector<IpAddr> out;
  LocalResult r{};
  f.lookup_tx(mac(0), mac(100), 0, out, &r);
  EXPECT_EQ(r, LocalResult::Created);
  f.lookup_tx(mac(1), mac(100), 1 * kSec, out, &r);
  EXPECT_EQ(r, LocalResult::Created);
  f.lookup_tx(mac(2), mac(100), 2 * kSec, out, &r);
  EXPECT_EQ(r, LocalResult::RefusedFull);
  f.lookup_tx(mac(0), mac(100), 3 * kSec, out, &r);
  EXPECT_EQ(r, LocalResult::Refreshed);
  EXPECT_EQ(f.locals().size(), 2u);
  EXPECT_EQ(f.refusals().local_max, 1u);
  f.age(11 * kSec);  // mac(1) (1 s) aged, mac(0) (3 s) not
  EXPECT_EQ(f.local_count(), 1u);
  f.lookup_tx(mac(2), mac(100), 11 * kSec, out, &r);
  EXPECT_EQ(r, LocalResult::Created);
}

// The flat table against a reference model (std::map with the same vxlan_snoop / ageing
// rules) over a long random run of learning, moving, EVPN entries, withdrawals, lookups and
// ageing: insertion, backward-shift deletion, growth and shrinking keep every entry findable.
TEST(TunnelFdbBound, FlatTableMatchesAReferenceModel) {
  Fdb f(50);
  f.set_limits(limits(0));
  struct Ref {
    IpAddr remote;
    FdbSource source;
    std::uint64_t updated;
  };
  std::map<Mac, Ref> ref;
  const IpAddr rs[3] = {ip("10.0.0.1"), ip("10.0.0.2"), ip("10.0.0.3")};
  std::mt19937 rng(7);
  std::uint64_t now = 100;
  for (int step = 0; step < 200000; ++step) {
    const Mac m = mac(rng() % 3000);
    const IpAddr& r = rs[rng() % 3];
    const unsigned op = rng() % 100;
    if (op < 60) {
      auto it = ref.find(m);
      if (it != ref.end() && it->second.source == FdbSource::Learned && now >= it->second.updated + 50)
        ref.erase(it);  // expired (the table may still hold it: learning refreshes it)
      f.learn(m, r, now);
      it = ref.find(m);
      if (it == ref.end()) ref[m] = {r, FdbSource::Learned, now};
      else if (it->second.source == FdbSource::Learned) it->second = {r, FdbSource::Learned, now};
    } else if (op < 65) {
      f.set_evpn(m, r, 0, now);
      ref[m] = {r, FdbSource::Evpn, now};
    } else if (op < 70) {
      if (f.remove_evpn(m, r) != (ref.count(m) && ref[m].source == FdbSource::Evpn && ref[m].remote == r))
        FAIL() << "remove_evpn disagrees at step " << step;
      if (ref.count(m) && ref[m].source == FdbSource::Evpn && ref[m].remote == r) ref.erase(m);
    } else if (op < 95) {
      auto l = f.lookup(m, now);
      auto it = ref.find(m);
      const bool live = it != ref.end() &&
                        !(it->second.source == FdbSource::Learned && now >= it->second.updated + 50);
      ASSERT_EQ(!l.flooded, live) << "step " << step;
      if (live) ASSERT_EQ(l.remotes[0], it->second.remote) << "step " << step;
      else if (it != ref.end()) ref.erase(it);
    } else {
      f.age(now);
      std::erase_if(ref, [&](const auto& kv) {
        return kv.second.source == FdbSource::Learned && now >= kv.second.updated + 50;
      });
      ASSERT_EQ(f.size(), ref.size()) << "step " << step;
    }
    now += rng() % 3;
  }
  f.age(now);
  std::erase_if(ref, [&](const auto& kv) { return kv.second.source == FdbSource::Learned && now >= kv.second.updated + 50; });
  ASSERT_EQ(f.size(), ref.size());
  for (const auto& [m, e] : f.entries()) {
    ASSERT_TRUE(ref.count(m));
    EXPECT_EQ(e.remote, ref[m].remote);
    EXPECT_EQ(e.source, ref[m].source);
  }
  std::size_t learned = 0;
  for (const auto& [m, e] : ref) learned += e.source == FdbSource::Learned;
  EXPECT_EQ(f.learned_count(), learned);
  f.age(now + 1000);  // every learned entry expired: the table shrinks back
  EXPECT_EQ(f.learned_count(), 0u);
}

// Entry size by arithmetic: 24-byte slots at a load of at most 3/4 and at least 3/8 (doubling),
// so a full table of the default bound holds ≤ 64 bytes an entry.
TEST(TunnelFdbBound, FullDefaultTableIsAtMost64BytesAnEntry) {
  SharedFdb f;
  f.set_limits(limits(FdbLimits::kDefaultMaxAddress));
  const IpAddr r = ip("10.0.0.5");
  std::size_t refused = 0;
  for (std::uint32_t i = 0; i < 2 * FdbLimits::kDefaultMaxAddress; ++i)
    refused += f.learn_ex(mac(i * 2654435761u), r, 0) == LearnResult::RefusedFull;
  EXPECT_EQ(f.learned_count(), FdbLimits::kDefaultMaxAddress);
  EXPECT_EQ(refused, FdbLimits::kDefaultMaxAddress);
  const double per_entry = double(f.table_bytes()) / FdbLimits::kDefaultMaxAddress;
  EXPECT_LE(per_entry, 64.0);
  RecordProperty("table_bytes_per_entry", std::to_string(per_entry));
}

// ---- through an Endpoint --------------------------------------------------------------------

/// A VXLAN datagram (RFC 7348 §5: I flag, VNI) carrying a broadcast ARP-sized frame from `src`.
std::vector<std::uint8_t> dgram(std::uint32_t vni, const Mac& src, const Mac& dst) {
  std::vector<std::uint8_t> d = {0x08, 0, 0, 0, std::uint8_t(vni >> 16), std::uint8_t(vni >> 8), std::uint8_t(vni), 0};
  d.insert(d.end(), dst.begin(), dst.end());
  d.insert(d.end(), src.begin(), src.end());
  d.push_back(0x08), d.push_back(0x06);  // ARP
  d.resize(d.size() + 46, 0);
  return d;
}

std::size_t rss_bytes() {
  std::ifstream s("/proc/self/statm");
  std::size_t size = 0, rss = 0;
  s >> size >> rss;
  return rss * std::size_t(sysconf(_SC_PAGESIZE));
}

// A flood of new source MACs from a configured remote and from an unknown source: learning
// stops at maxaddress (counted: maxaddress, unknown_source), every frame is still delivered,
// and the stations learned before the flood keep their entries (unicast, not flooded).
TEST(TunnelFdbFlood, NewSourceMacsStopAtTheBoundAndKnownHostsKeepTheirEntries) {
  VxlanConfig c;
  c.vni = 42;
  c.local = ip("10.0.0.1");
  c.remotes = {ip("10.0.0.2"), ip("10.0.0.3")};
  c.fdb_limits = limits(1000, LearnFrom::Remotes);
  Endpoint ep(c);
  const Mac host_a{0x02, 0, 0, 0, 0, 0xaa}, host_b{0x02, 0, 0, 0, 0, 0xbb};
  const Mac bcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  std::vector<TapFrame> frames;
  std::uint64_t now = 1;
  ep.receive(dgram(42, host_a, bcast), ip("10.0.0.3"), OuterCsum::Present, now++);
  std::mt19937 rng(1);
  auto flood = [&](const char* from, int n) {
    for (int i = 0; i < n; ++i) {
      Mac m{std::uint8_t((rng() & 0xfc) | 0x02), std::uint8_t(rng()), std::uint8_t(rng()),
            std::uint8_t(rng()), std::uint8_t(rng()), std::uint8_t(rng())};
      ep.receive(dgram(42, m, bcast), ip(from), OuterCsum::Present, now++);
      if (i % 64 == 63) ep.rx_flush(now, frames);
    }
    ep.rx_flush(now, frames);
  };
  flood("10.0.0.2", 5000);
  flood("10.0.0.99", 3000);
  const auto& k = ep.counters();
  EXPECT_EQ(ep.fdb()->learned_count(), 1000u);
  EXPECT_EQ(k.fdb_learned, 1000u);                  // host_a + 999 of the flood
  EXPECT_EQ(k.fdb_refused_maxaddress, 4001u);       // the rest of the configured remote's flood
  EXPECT_EQ(k.fdb_refused_unknown_source, 3000u);   // the unknown source: never learned from
  EXPECT_EQ(ep.fdb()->refusals().maxaddress, 4001u);
  EXPECT_EQ(ep.stats()["fdb"]["learn_refused"]["unknown_source"], 3000u);
  EXPECT_EQ(k.rx_frames + frames.size(), 8001u);    // learning refused, frames delivered
  EXPECT_EQ(k.drops_total(), 0u);
  // host_b → host_a: unicast to host_a's remote, as before the flood
  std::vector<TxTrain> out;
  std::vector<std::uint8_t> f = dgram(42, host_b, host_a);
  f.erase(f.begin(), f.begin() + 8);
  ep.transmit(ofld::wire::virtio_net::Hdr{}, f, now, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].remote, ip("10.0.0.3"));
  EXPECT_EQ(k.tx_flooded, 0u);
}

// RSS while the endpoint learns a flood of 200,000 new source MACs with the default bound:
// the growth stays within the bound's arithmetic (65,536 entries × 64 bytes, plus 1 MiB for
// the remote table and allocator slack), where an unbounded table grew ~100 bytes an entry.
TEST(TunnelFdbFlood, RssStaysWithinTheDefaultBound) {
  VxlanConfig c;
  c.vni = 42;
  c.local = ip("10.0.0.1");
  c.remotes = {ip("10.0.0.2")};
  Endpoint ep(c);
  const Mac bcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  std::vector<TapFrame> frames;
  std::uint64_t now = 1;
  auto feed = [&](std::uint32_t from, std::uint32_t n) {
    for (std::uint32_t i = from; i < from + n; ++i) {
      ep.receive(dgram(42, mac(i * 2654435761u), bcast), ip("10.0.0.2"), OuterCsum::Present, now++);
      if (i % 64 == 63) {
        ep.rx_flush(now, frames);
        frames.clear();
      }
    }
    ep.rx_flush(now, frames);
    frames.clear();
  };
  feed(0, 1000);  // warm the receive path's buffers
  const std::size_t before = rss_bytes();
  feed(1000, 200000);
  const std::size_t grown = rss_bytes() - std::min(rss_bytes(), before);
  EXPECT_EQ(ep.fdb()->learned_count(), FdbLimits::kDefaultMaxAddress);
  EXPECT_EQ(ep.counters().fdb_refused_maxaddress, 201000u - FdbLimits::kDefaultMaxAddress);
  EXPECT_LE(grown, std::size_t(FdbLimits::kDefaultMaxAddress) * 64 + (1u << 20));
  RecordProperty("rss_growth_bytes", std::to_string(grown));
}

// ---- configuration ----------------------------------------------------------------------------

TEST(TunnelFdbConfig, WordsAndTomlSetTheBounds) {
  using ofld::daemon::DaemonConfig;
  DaemonConfig w;
  auto e = ofld::daemon::parse_tunnel_words({"vxlan", "id", "42", "local", "10.0.0.1", "remote", "10.0.0.2",
                                             "maxaddress", "500", "maxaddress-per-remote", "50",
                                             "learning-from", "any", "local-maxaddress", "7"},
                                            w);
  ASSERT_FALSE(e) << *e;
  EXPECT_EQ(w.vxlan.fdb_limits.maxaddress, 500u);
  EXPECT_EQ(w.vxlan.fdb_limits.per_remote, 50u);
  EXPECT_EQ(w.vxlan.fdb_limits.from, LearnFrom::Any);
  EXPECT_EQ(w.vxlan.fdb_limits.local_max, 7u);
  auto t = ofld::daemon::parse_toml(
      "[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nmaxaddress = 500\n"
      "maxaddress-per-remote = 50\nlearning-from = \"any\"\nlocal-maxaddress = 7\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(t)) << std::get<std::string>(t);
  const auto& tc = std::get<DaemonConfig>(t).vxlan.fdb_limits;
  EXPECT_EQ(tc.maxaddress, 500u);
  EXPECT_EQ(tc.per_remote, 50u);
  EXPECT_EQ(tc.from, LearnFrom::Any);
  EXPECT_EQ(tc.local_max, 7u);
  DaemonConfig d;  // defaults: bounded
  ASSERT_FALSE(ofld::daemon::parse_tunnel_words({"vxlan", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2"}, d));
  EXPECT_EQ(d.vxlan.fdb_limits.maxaddress, FdbLimits::kDefaultMaxAddress);
  EXPECT_EQ(d.vxlan.fdb_limits.from, LearnFrom::Auto);
  DaemonConfig bad;
  auto err = ofld::daemon::parse_tunnel_words({"vxlan", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2",
                                               "learning-from", "everyone"},
                                              bad);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("learning-from"), std::string::npos) << *err;
  err = ofld::daemon::parse_tunnel_words({"vxlan", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2",
                                          "maxaddress", "-1"},
                                         bad);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("maxaddress"), std::string::npos) << *err;
}

// write_json is valid JSON equal to to_json, with the limits and refusal counters.
TEST(TunnelFdbJson, WriteJsonIsTheDocumentWithLimitsAndRefusals) {
  SharedFdb f(300 * kSec);
  f.set_limits(limits(1, LearnFrom::Remotes));
  f.add_default_remote(ip("10.0.0.2"));
  f.add_static(mac(1), ip("10.0.0.3"));
  f.learn(mac(2), ip("10.0.0.2"), 1 * kSec);
  f.learn(mac(3), ip("10.0.0.2"), 1 * kSec);   // refused: maxaddress
  f.learn(mac(4), ip("10.0.0.77"), 1 * kSec);  // refused: unknown source
  std::string text;
  f.write_json(text, 2 * kSec);
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j, f.to_json(2 * kSec));
  ASSERT_EQ(j["entries"].size(), 2u);
  EXPECT_EQ(j["entries"][0]["mac"], "02:10:00:00:00:01");
  EXPECT_EQ(j["entries"][1]["age_ms"], 1000u);
  EXPECT_EQ(j["limits"]["maxaddress"], 1u);
  EXPECT_EQ(j["limits"]["learning_from"], "remotes");
  EXPECT_EQ(j["learned"], 1u);
  EXPECT_EQ(j["refused"]["maxaddress"], 1u);
  EXPECT_EQ(j["refused"]["unknown_source"], 1u);
}

}  // namespace

#include "../../src/daemon/evpn.hpp"

namespace {

// The type-2 advertisement rate limit is a token bucket: `burst` at once, then `per_s` a
// second (what is refused waits for a later sync).
TEST(EvpnAdvertiseLimit, BurstThenRate) {
  ofld::daemon::AdvertiseLimiter l(2, 3);
  const std::uint64_t t = 5 * kSec;
  EXPECT_TRUE(l.take(t));
  EXPECT_TRUE(l.take(t));
  EXPECT_TRUE(l.take(t));
  EXPECT_FALSE(l.take(t));               // burst spent
  EXPECT_FALSE(l.take(t + kSec / 4));    // half a token
  EXPECT_TRUE(l.take(t + kSec / 2));     // one token after 0.5 s at 2/s
  EXPECT_FALSE(l.take(t + kSec / 2));
  EXPECT_TRUE(l.take(t + 100 * kSec));   // refilled, but only up to the burst
  EXPECT_TRUE(l.take(t + 100 * kSec));
  EXPECT_TRUE(l.take(t + 100 * kSec));
  EXPECT_FALSE(l.take(t + 100 * kSec));
}

}  // namespace

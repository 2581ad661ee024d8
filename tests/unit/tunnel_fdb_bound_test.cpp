// Bounded VXLAN FDB learning: `maxaddress` (the kernel's IFLA_VXLAN_LIMIT, checked in
// vxlan_fdb_create: a new entry past the limit is refused, -ENOSPC), learned entries per
// remote, `learning-from remotes|any`, local MACs (`local-maxaddress`), the compact table
// (flat open addressing, 24-byte slots) against a reference model, the JSON document.
// Through an Endpoint: tunnel_fdb_flood_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

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
  EXPECT_EQ(f.limits().from, LearnFrom::Any);  // a bare table: the kernel's vxlan_snoop
  f.set_limits(FdbLimits{});                    // an endpoint's default
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

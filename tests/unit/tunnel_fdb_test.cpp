// VXLAN forwarding database: learning, moving, static entries, ageing, flooding
// (drivers/net/vxlan/vxlan_core.c vxlan_snoop / vxlan_cleanup / default-entry flooding).
#include <gtest/gtest.h>

#include "ofld/tunnel/fdb.hpp"

#include <atomic>
#include <thread>
#include <vector>

namespace {

using namespace ofld::tunnel;
constexpr std::uint64_t kSec = 1000000000ull;

IpAddr ip(const char* s) { return *IpAddr::parse(s); }
const Mac kA{0x02, 0, 0, 0, 0, 0x0a}, kB{0x02, 0, 0, 0, 0, 0x0b};
const Mac kBcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, kMcast{0x01, 0x00, 0x5e, 0, 0, 1};

TEST(TunnelFdb, UnknownAndGroupDestinationsAreFlooded) {
  Fdb f;
  f.add_default_remote(ip("10.0.0.2"));
  f.add_default_remote(ip("10.0.0.3"));
  f.add_default_remote(ip("10.0.0.2"));  // duplicate ignored
  for (const Mac& m : {kA, kBcast, kMcast}) {
    auto l = f.lookup(m, 0);
    EXPECT_TRUE(l.flooded);
    EXPECT_EQ(l.remotes.size(), 2u);
  }
}

TEST(TunnelFdb, LearnsMovesAndRefreshes) {
  Fdb f(300 * kSec);
  f.add_default_remote(ip("10.0.0.2"));
  EXPECT_TRUE(f.learn(kA, ip("10.0.0.5"), 1 * kSec));
  EXPECT_FALSE(f.learn(kA, ip("10.0.0.5"), 2 * kSec));  // same remote: refresh only
  auto l = f.lookup(kA, 3 * kSec);
  ASSERT_EQ(l.remotes.size(), 1u);
  EXPECT_FALSE(l.flooded);
  EXPECT_EQ(l.remotes[0], ip("10.0.0.5"));
  EXPECT_TRUE(f.learn(kA, ip("10.0.0.6"), 4 * kSec));  // station moved
  EXPECT_EQ(f.lookup(kA, 5 * kSec).remotes[0], ip("10.0.0.6"));
  // group and all-zero sources are never learned
  EXPECT_FALSE(f.learn(kBcast, ip("10.0.0.5"), 0));
  EXPECT_FALSE(f.learn(kMcast, ip("10.0.0.5"), 0));
  EXPECT_FALSE(f.learn(Mac{}, ip("10.0.0.5"), 0));
  EXPECT_EQ(f.size(), 1u);
}

TEST(TunnelFdb, AgeingRemovesDynamicEntriesOnly) {
  Fdb f(300 * kSec);
  f.add_default_remote(ip("10.0.0.2"));
  f.learn(kA, ip("10.0.0.5"), 10 * kSec);
  f.add_static(kB, ip("10.0.0.7"));
  EXPECT_EQ(f.age(309 * kSec), 0u);   // updated at 10 s: expires at 310 s
  f.learn(kA, ip("10.0.0.5"), 100 * kSec);  // refresh moves the deadline to 400 s
  EXPECT_EQ(f.age(399 * kSec), 0u);
  EXPECT_EQ(f.age(400 * kSec), 1u);
  EXPECT_TRUE(f.lookup(kA, 400 * kSec).flooded);
  auto l = f.lookup(kB, 1000000 * kSec);  // static: never aged
  EXPECT_FALSE(l.flooded);
  EXPECT_EQ(l.remotes[0], ip("10.0.0.7"));
}

TEST(TunnelFdb, ExpiredEntryIsUnknownAtLookup) {
  Fdb f(5 * kSec);
  f.add_default_remote(ip("10.0.0.2"));
  f.learn(kA, ip("10.0.0.5"), 0);
  EXPECT_FALSE(f.lookup(kA, 4 * kSec).flooded);
  EXPECT_TRUE(f.lookup(kA, 5 * kSec).flooded);
  EXPECT_EQ(f.size(), 0u);
}

TEST(TunnelFdb, StaticEntriesAreNotLearnedOver) {
  Fdb f;
  f.add_static(kA, ip("10.0.0.7"));
  EXPECT_FALSE(f.learn(kA, ip("10.0.0.8"), 0));
  EXPECT_EQ(f.lookup(kA, 0).remotes[0], ip("10.0.0.7"));
}

// SharedFdb (the workers of a multi-queue endpoint): learning from several threads while
// others look up and one ages; afterwards every learned MAC is found at the remote it was
// last learned from, and a lookup never sees a torn entry (always one of the two remotes).
TEST(TunnelFdb, SharedFdbConcurrentLearnLookupAge) {
  SharedFdb f(1000 * kSec);
  f.add_default_remote(ip("10.0.0.2"));
  const IpAddr r1 = ip("10.0.0.5"), r2 = ip("10.0.0.6");
  auto mac = [](int i) { return Mac{0x02, 0, 0, 0, std::uint8_t(i >> 8), std::uint8_t(i)}; };
  constexpr int kMacs = 200, kRounds = 50;
  std::atomic<bool> bad{false};
  std::vector<std::thread> ts;
  for (int w = 0; w < 2; ++w)
    ts.emplace_back([&, w] {
      for (int r = 0; r < kRounds; ++r)
        for (int i = w; i < kMacs; i += 2) f.learn(mac(i), (r & 1) ? r2 : r1, std::uint64_t(r) * kSec);
    });
  ts.emplace_back([&] {
    std::vector<IpAddr> out;
    for (int r = 0; r < kRounds * 20; ++r) {
      bool flooded = f.lookup(mac(r % kMacs), std::uint64_t(r % kRounds) * kSec, out);
      if (out.size() != 1 || (!flooded && out[0] != r1 && out[0] != r2)) bad = true;
    }
  });
  ts.emplace_back([&] {
    for (int r = 0; r < kRounds; ++r) f.age(std::uint64_t(r) * kSec);  // nothing is 1000 s old
  });
  for (auto& t : ts) t.join();
  EXPECT_FALSE(bad);
  EXPECT_EQ(f.size(), std::size_t(kMacs));
  std::vector<IpAddr> out;
  for (int i = 0; i < kMacs; ++i) {
    EXPECT_FALSE(f.lookup(mac(i), kRounds * kSec, out)) << i;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0], ((kRounds - 1) & 1) ? r2 : r1) << i;  // the last learning round wins
  }
  EXPECT_EQ(f.age(2000 * kSec), std::size_t(kMacs));  // vxlan_cleanup after the ageing time
}

}  // namespace

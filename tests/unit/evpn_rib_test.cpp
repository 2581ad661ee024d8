// The EVPN route set (src/daemon/evpn_rib.hpp): the FDB entry of a MAC and the flood list as
// a function of the routes present (RFC 7432 §7.2, §7.3, §11), best-route choice and MAC
// Mobility (RFC 7432 §15.1), duplicate MAC detection with FRR's `dup-addr-detection`
// defaults (5 moves in 180 s) and `freeze`. Expected values come from the RFC's rules, never
// from the set's own output.
#include <gtest/gtest.h>

#include <memory>

#include "../../src/daemon/evpn_rib.hpp"

namespace {

using ofld::daemon::DupAddrDetection;
using ofld::daemon::EvpnRib;
using ofld::tunnel::FdbSource;
using ofld::tunnel::IpAddr;
using ofld::tunnel::Mac;
using ofld::tunnel::SharedFdb;

constexpr std::uint64_t kS = 1000000000ull;
IpAddr ip(const char* s) { return *IpAddr::parse(s); }
const Mac kMac{0x02, 0, 0, 0, 0, 0x11};

struct RouteSet : ::testing::Test {
  std::shared_ptr<SharedFdb> fdb = std::make_shared<SharedFdb>(0);
  std::unique_ptr<EvpnRib> rib;
  void SetUp() override { make({}); }
  void make(DupAddrDetection d) {
    fdb->set_own_vtep(ip("10.0.0.5"));
    fdb->set_local_learning(true);
    rib = std::make_unique<EvpnRib>(fdb, d);
  }
  std::string at(const Mac& m) {
    auto e = fdb->find(m);
    if (!e) return "none";
    return std::string(to_string(e->source)) + " " + e->remote.to_string();
  }
  bool flooded_to(const char* a) {
    for (const auto& [r, s] : fdb->flood_list())
      if (r == ip(a) && s == FdbSource::Evpn) return true;
    return false;
  }
};

// RFC 7432 §7.2: a MAC may be advertised by several routes (another Ethernet tag, a MAC-only
// and a MAC+IP route); withdrawing one leaves the entry as long as another is present.
TEST_F(RouteSet, Rfc7432_7_2_WithdrawingOneOfTwoRoutesForAMacKeepsTheEntry) {
  rib->update_mac(1, kMac, ip("10.0.0.2"), 0, 1);  // MAC-only route
  rib->update_mac(2, kMac, ip("10.0.0.2"), 0, 2);  // MAC+IP route, same MAC
  rib->withdraw_mac(1, kMac, 3);
  EXPECT_EQ(at(kMac), "evpn 10.0.0.2");
  rib->withdraw_mac(2, kMac, 4);
  EXPECT_EQ(at(kMac), "none");
  EXPECT_EQ(rib->remote_macs(), 0u);
}

// RFC 7432 §15.1: the lower-sequence route from another VTEP becomes the best once the
// higher one is withdrawn (it is still in the RIB).
TEST_F(RouteSet, Rfc7432_15_1_LowerSequenceRouteTakesOverWhenTheHigherIsWithdrawn) {
  rib->update_mac(1, kMac, ip("10.0.0.2"), 1, 1);
  rib->update_mac(2, kMac, ip("10.0.0.3"), 2, 2);
  EXPECT_EQ(at(kMac), "evpn 10.0.0.3");
  rib->withdraw_mac(2, kMac, 3);
  EXPECT_EQ(at(kMac), "evpn 10.0.0.2");
  EXPECT_EQ(fdb->find(kMac)->seq, 1u);
}

// RFC 7432 §15.1: of equal sequence numbers the route from the lowest VTEP address wins,
// whatever the order of arrival.
TEST_F(RouteSet, Rfc7432_15_1_EqualSequenceLowerVtepWinsInEitherOrder) {
  rib->update_mac(1, kMac, ip("10.0.0.9"), 3, 1);
  rib->update_mac(2, kMac, ip("10.0.0.3"), 3, 2);
  EXPECT_EQ(at(kMac), "evpn 10.0.0.3");
  const Mac m2{0x02, 0, 0, 0, 0, 0x12};
  rib->update_mac(3, m2, ip("10.0.0.3"), 3, 3);
  rib->update_mac(4, m2, ip("10.0.0.9"), 3, 4);
  EXPECT_EQ(at(m2), "evpn 10.0.0.3");
}

// RFC 7432 §15.1 against our own (local) MAC: equal sequence numbers, our VTEP 10.0.0.5 is
// lower than 10.0.0.9 (we keep it) and higher than 10.0.0.2 (it moves there).
TEST_F(RouteSet, Rfc7432_15_1_EqualSequenceAgainstALocalMacLowerVtepWins) {
  std::vector<IpAddr> out;
  fdb->lookup_tx(kMac, Mac{0x02, 0, 0, 0, 0, 0x99}, 1, out);  // a frame from kMac on our TAP
  ASSERT_TRUE(fdb->is_local(kMac));
  rib->update_mac(1, kMac, ip("10.0.0.9"), 0, 2);
  EXPECT_TRUE(fdb->is_local(kMac)) << "10.0.0.5 < 10.0.0.9: ours stays";
  EXPECT_EQ(at(kMac), "none");
  rib->update_mac(2, kMac, ip("10.0.0.2"), 0, 3);
  EXPECT_FALSE(fdb->is_local(kMac)) << "10.0.0.2 < 10.0.0.5: it moved";
  EXPECT_EQ(at(kMac), "evpn 10.0.0.2");
}

// A withdrawn route leaves no entry when a sequence number higher than the remaining route's
// was seen before (the old FDB refused the lower-sequence route of another VTEP).
TEST_F(RouteSet, Rfc7432_15_1_ReplacedRouteForTheSameNlriIsNotKeptBeside) {
  rib->update_mac(1, kMac, ip("10.0.0.2"), 0, 1);
  rib->update_mac(1, kMac, ip("10.0.0.3"), 1, 2);  // the same NLRI, a new best path
  EXPECT_EQ(rib->mac_routes(), 1u);
  rib->withdraw_mac(1, kMac, 3);
  EXPECT_EQ(at(kMac), "none");
}

// RFC 7432 §11 (type-3): a VTEP stays in the flood list while any IMET route names it.
TEST_F(RouteSet, Rfc7432_11_VtepStaysInFloodListWhileAnyImetRouteRemains) {
  rib->update_imet(10, ip("10.0.0.2"));  // e.g. Ethernet tag 0
  rib->update_imet(11, ip("10.0.0.2"));  // another RD / tag from the same VTEP
  rib->withdraw_imet(10);
  EXPECT_TRUE(flooded_to("10.0.0.2"));
  rib->withdraw_imet(11);
  EXPECT_FALSE(flooded_to("10.0.0.2"));
  EXPECT_EQ(rib->vteps(), 0u);
}

TEST_F(RouteSet, Rfc7432_11_ImetRouteReplacedByAnotherVtepMovesTheMember) {
  rib->update_imet(10, ip("10.0.0.2"));
  rib->update_imet(10, ip("10.0.0.3"));
  EXPECT_FALSE(flooded_to("10.0.0.2"));
  EXPECT_TRUE(flooded_to("10.0.0.3"));
  rib->withdraw_imet(10);
  EXPECT_FALSE(flooded_to("10.0.0.3"));
}

// A re-synchronisation keeps what is received again and withdraws the rest.
TEST_F(RouteSet, ResyncWithdrawsOnlyRoutesNotReceivedAgain) {
  const Mac m2{0x02, 0, 0, 0, 0, 0x12};
  rib->update_mac(1, kMac, ip("10.0.0.2"), 0, 1);
  rib->update_mac(2, m2, ip("10.0.0.3"), 0, 1);
  rib->update_imet(10, ip("10.0.0.2"));
  rib->update_imet(11, ip("10.0.0.3"));
  rib->begin_resync();
  EXPECT_EQ(rib->stale_routes(), 4u);
  rib->update_mac(1, kMac, ip("10.0.0.2"), 0, 2);
  rib->update_imet(10, ip("10.0.0.2"));
  EXPECT_EQ(rib->stale_routes(), 2u);
  EXPECT_EQ(at(m2), "evpn 10.0.0.3") << "kept until the re-synchronisation ends";
  EXPECT_EQ(rib->end_resync(3), 2u);
  EXPECT_EQ(at(kMac), "evpn 10.0.0.2");
  EXPECT_EQ(at(m2), "none");
  EXPECT_TRUE(flooded_to("10.0.0.2"));
  EXPECT_FALSE(flooded_to("10.0.0.3"));
}

// The stale time of a re-synchronisation runs from the last route confirmed (a restarted
// gobgpd takes routes in over seconds), capped at the maximum after the reconnection (FRR's
// graceful-restart restart-time, 120 s). Values: 15 s and 120 s, as the client's.
TEST(StaleTimer, RunsFromTheLastConfirmationUpToTheMaximum) {
  ofld::daemon::StaleTimer t(15000, 120000);
  t.begin(0, 100);
  EXPECT_FALSE(t.due(10 * kS, 100));
  EXPECT_TRUE(t.due(15 * kS, 100)) << "nothing confirmed: 15 s after the reconnection";
  t.begin(0, 100);
  EXPECT_FALSE(t.due(10 * kS, 60)) << "40 confirmed at 10 s";
  EXPECT_FALSE(t.due(24 * kS, 60)) << "15 s run from 10 s";
  EXPECT_TRUE(t.due(25 * kS, 60));
  t.begin(0, 100);
  for (std::uint64_t s = 10, left = 99; s < 120; s += 10, --left) EXPECT_FALSE(t.due(s * kS, left)) << s;
  EXPECT_FALSE(t.due(119 * kS, 80));
  EXPECT_TRUE(t.due(120 * kS, 79)) << "still confirming at 120 s: the maximum ends it";
}

// The heap is trimmed once a large drop of what the client holds is over: 10,000 gone or
// half of the peak, then 1 s without change; never for a few withdrawals from a large set,
// never while the drop goes on.
TEST(TrimTrigger, AfterALargeDropOnceItIsOver) {
  ofld::daemon::TrimTrigger t(10000, 1000);
  const std::uint64_t ms = kS / 1000;
  EXPECT_FALSE(t.due(0, 100000));
  EXPECT_FALSE(t.due(5 * kS, 99990)) << "10 withdrawn of 100,000";
  EXPECT_FALSE(t.due(7 * kS, 99990));
  EXPECT_FALSE(t.due(8 * kS, 60000)) << "dropping";
  EXPECT_FALSE(t.due(8 * kS + 900 * ms, 60000)) << "0.9 s quiet";
  EXPECT_TRUE(t.due(9 * kS, 60000)) << "1 s quiet after 40,000 gone";
  EXPECT_FALSE(t.due(9 * kS + 100 * ms, 60000)) << "once";
  EXPECT_FALSE(t.due(10 * kS, 55000)) << "the peak started over at 60,000: 5,000 of it gone";
  EXPECT_FALSE(t.due(12 * kS, 55000));
  EXPECT_FALSE(t.due(13 * kS, 8000));
  EXPECT_TRUE(t.due(14 * kS, 8000)) << "52,000 of 60,000";
  EXPECT_FALSE(t.due(15 * kS, 0));
  EXPECT_TRUE(t.due(16 * kS, 0)) << "the last 8,000: less than 10,000 but all of the peak";
  EXPECT_FALSE(t.due(30 * kS, 0));
}

// RFC 7432 §15.1 duplicate detection with FRR's defaults: the 5th move within 180 s marks
// the MAC duplicate; 4 moves do not; moves spread over more than 180 s do not.
TEST_F(RouteSet, Rfc7432_15_1_FifthMoveWithin180sMarksDuplicate) {
  std::uint32_t seq = 0;
  auto move_to = [&](const char* v, std::uint64_t t) { rib->update_mac(1, kMac, ip(v), ++seq, t * kS); };
  move_to("10.0.0.2", 0);  // first advertisement: not a move
  move_to("10.0.0.3", 10);
  move_to("10.0.0.2", 20);
  move_to("10.0.0.3", 30);
  move_to("10.0.0.2", 40);
  EXPECT_FALSE(rib->duplicate(kMac)) << "4 moves";
  move_to("10.0.0.3", 179);
  EXPECT_TRUE(rib->duplicate(kMac)) << "5 moves within 180 s";
  EXPECT_EQ(rib->duplicates_detected(), 1u);
  EXPECT_EQ(at(kMac), "evpn 10.0.0.3") << "without freeze the moves are followed";
}

TEST_F(RouteSet, Rfc7432_15_1_MovesSpreadOverMoreThanTheWindowAreNotDuplicate) {
  std::uint32_t seq = 0;
  const char* v[] = {"10.0.0.2", "10.0.0.3"};
  for (int i = 0; i < 12; ++i) rib->update_mac(1, kMac, ip(v[i % 2]), ++seq, std::uint64_t(i) * 50 * kS);
  EXPECT_FALSE(rib->duplicate(kMac));
  EXPECT_EQ(rib->moves(), 11u);
}

// `dup-addr-detection freeze 30`: a duplicate MAC's entry stays where it was; the freeze
// ends after 30 s and the routes present are followed again.
TEST_F(RouteSet, DupAddrDetectionFreezeStopsFollowingUntilTheFreezeEnds) {
  make({true, 5, 180, 30, false});
  std::uint32_t seq = 0;
  const char* v[] = {"10.0.0.2", "10.0.0.3"};
  for (int i = 0; i < 6; ++i) rib->update_mac(1, kMac, ip(v[i % 2]), ++seq, std::uint64_t(i) * kS);
  ASSERT_TRUE(rib->duplicate(kMac));
  ASSERT_TRUE(rib->frozen(kMac, 6 * kS));
  EXPECT_EQ(at(kMac), "evpn 10.0.0.3");
  rib->update_mac(1, kMac, ip("10.0.0.4"), ++seq, 10 * kS);
  EXPECT_EQ(at(kMac), "evpn 10.0.0.3") << "frozen: not followed";
  auto d = rib->duplicates_json(10 * kS);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]["mac"], "02:00:00:00:00:11");
  EXPECT_TRUE(d[0]["frozen"].get<bool>());
  rib->tick(36 * kS);  // frozen at t = 5 s: until 35 s
  EXPECT_FALSE(rib->duplicate(kMac));
  EXPECT_EQ(at(kMac), "evpn 10.0.0.4") << "after the freeze the best route is followed";
}

TEST_F(RouteSet, DupAddrDetectionFreezePermanentAndWithdrawalOfAllStillRemoves) {
  make({true, 2, 180, 0, true});
  rib->update_mac(1, kMac, ip("10.0.0.2"), 1, 0);
  rib->update_mac(1, kMac, ip("10.0.0.3"), 2, kS);
  rib->update_mac(1, kMac, ip("10.0.0.2"), 3, 2 * kS);  // 2nd move: duplicate, frozen here
  ASSERT_TRUE(rib->frozen(kMac, 1000000 * kS));
  rib->update_mac(1, kMac, ip("10.0.0.3"), 4, 3 * kS);
  EXPECT_EQ(at(kMac), "evpn 10.0.0.2");
  rib->tick(100000 * kS);
  EXPECT_TRUE(rib->frozen(kMac, 100000 * kS));
  rib->withdraw_mac(1, kMac, 4 * kS);
  EXPECT_EQ(at(kMac), "none") << "no route left: no entry, frozen or not";
}

TEST_F(RouteSet, NoDupAddrDetectionNeverMarks) {
  make({false, 5, 180, 0, false});
  for (std::uint32_t i = 0; i < 20; ++i) rib->update_mac(1, kMac, ip(i % 2 ? "10.0.0.2" : "10.0.0.3"), i, i);
  EXPECT_FALSE(rib->duplicate(kMac));
  EXPECT_EQ(rib->duplicates_detected(), 0u);
}

// A MAC that moves between a remote VTEP and us counts as moving too.
TEST_F(RouteSet, Rfc7432_15_1_MovesBetweenUsAndARemoteAreCounted) {
  rib->update_mac(1, kMac, ip("10.0.0.2"), 0, 0);
  std::vector<IpAddr> out;
  fdb->lookup_tx(kMac, Mac{0x02, 0, 0, 0, 0, 0x99}, kS, out);  // it appears here
  rib->local_appeared(kMac, kS);
  EXPECT_EQ(rib->moves(), 1u);
  rib->update_mac(1, kMac, ip("10.0.0.2"), 2, 2 * kS);  // and back, with a higher sequence
  EXPECT_FALSE(fdb->is_local(kMac));
  EXPECT_EQ(rib->moves(), 2u);
}

// A local MAC that ages out gives the MAC to the route still present (it lost to ours).
TEST_F(RouteSet, LocalGoneProgramsTheRoutePresent) {
  fdb = std::make_shared<SharedFdb>(10 * kS);  // ageing 10 s
  make({});
  std::vector<IpAddr> out;
  fdb->lookup_tx(kMac, Mac{0x02, 0, 0, 0, 0, 0x99}, 1, out);
  rib->update_mac(1, kMac, ip("10.0.0.9"), 0, 2);  // loses to ours (10.0.0.5 is lower)
  ASSERT_EQ(at(kMac), "none");
  fdb->age(20 * kS);
  ASSERT_FALSE(fdb->is_local(kMac));
  rib->local_gone(kMac, 20 * kS);
  EXPECT_EQ(at(kMac), "evpn 10.0.0.9");
}

}  // namespace

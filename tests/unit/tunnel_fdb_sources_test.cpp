// FDB entries with their source (static, learned, evpn), the flood list by source
// (static remote, multicast group, EVPN type-3), local MACs and MAC moves.
// Expected behaviour from the kernel (drivers/net/vxlan/vxlan_core.c: vxlan_cleanup skips
// NTF_EXT_LEARNED entries; vxlan_fdb_update does not let an externally learned entry take over
// one added by the user; vxlan_snoop does not migrate NUD_NOARP entries, which zebra installs
// for EVPN MACs) and RFC 7432 §7.2/§7.3 (type-2 → entry, type-3 → flood list), §15 (MAC
// Mobility sequence numbers).
#include <gtest/gtest.h>

#include "ofld/tunnel/fdb.hpp"

namespace {

using namespace ofld::tunnel;
constexpr std::uint64_t kSec = 1000000000ull;

IpAddr ip(const char* s) { return *IpAddr::parse(s); }
const Mac kA{0x02, 0, 0, 0, 0, 0x0a}, kB{0x02, 0, 0, 0, 0, 0x0b}, kC{0x02, 0, 0, 0, 0, 0x0c};

const FdbEntry& at(const Fdb& f, const Mac& m) { return f.entries().at(m); }

TEST(FdbSources, EachEntryHasItsSource) {
  Fdb f(300 * kSec);
  f.add_static(kA, ip("10.0.0.2"));
  f.learn(kB, ip("10.0.0.3"), 1 * kSec);
  EXPECT_TRUE(f.set_evpn(kC, ip("10.0.0.4"), 0, 2 * kSec));
  EXPECT_EQ(at(f, kA).source, FdbSource::Static);
  EXPECT_EQ(at(f, kB).source, FdbSource::Learned);
  EXPECT_EQ(at(f, kC).source, FdbSource::Evpn);
  EXPECT_EQ(to_string(FdbSource::Static), "static");
  EXPECT_EQ(to_string(FdbSource::Learned), "learned");
  EXPECT_EQ(to_string(FdbSource::Evpn), "evpn");
}

// vxlan_cleanup: NTF_EXT_LEARNED entries are never aged; a withdrawal removes them.
TEST(FdbSources, EvpnEntriesAreNotAgedButWithdrawn) {
  Fdb f(10 * kSec);
  f.set_evpn(kC, ip("10.0.0.4"), 0, 0);
  f.learn(kB, ip("10.0.0.3"), 0);
  EXPECT_EQ(f.age(1000 * kSec), 1u);  // the learned one only
  EXPECT_FALSE(f.lookup(kC, 1000 * kSec).flooded);
  EXPECT_FALSE(f.remove_evpn(kC, ip("10.0.0.9")));  // a withdrawal from another VTEP: kept
  EXPECT_TRUE(f.remove_evpn(kC, ip("10.0.0.4")));
  EXPECT_TRUE(f.lookup(kC, 1000 * kSec).flooded);
}

// vxlan_fdb_update: an externally learned entry does not take over a user's entry; it does
// replace a learned one. vxlan_snoop: a datagram does not move an EVPN (NUD_NOARP) entry.
TEST(FdbSources, PrecedenceStaticOverEvpnOverLearned) {
  Fdb f;
  f.add_static(kA, ip("10.0.0.2"));
  EXPECT_FALSE(f.set_evpn(kA, ip("10.0.0.4"), 0, 0));
  EXPECT_EQ(f.lookup(kA, 0).remotes[0], ip("10.0.0.2"));
  f.learn(kB, ip("10.0.0.3"), 0);
  EXPECT_TRUE(f.set_evpn(kB, ip("10.0.0.4"), 0, 0));
  EXPECT_EQ(at(f, kB).source, FdbSource::Evpn);
  EXPECT_FALSE(f.learn(kB, ip("10.0.0.5"), 1));
  EXPECT_EQ(f.lookup(kB, 1).remotes[0], ip("10.0.0.4"));
  EXPECT_FALSE(f.remove_evpn(kA, ip("10.0.0.2")));  // a static entry is not withdrawn by BGP
  EXPECT_EQ(f.entries().size(), 2u);
}

// RFC 7432 §7.3: the flood list is the set of VTEPs with a type-3 route (plus configured
// remotes and the group); a member stays while any source names it.
TEST(FdbSources, FloodListBySource) {
  Fdb f;
  f.add_default_remote(ip("10.0.0.2"));
  f.add_flood(ip("239.1.1.1"), FdbSource::Group);
  f.add_flood(ip("10.0.0.3"), FdbSource::Evpn);
  f.add_flood(ip("10.0.0.2"), FdbSource::Evpn);  // also configured
  EXPECT_EQ(f.lookup(kA, 0).remotes.size(), 3u);
  f.remove_flood(ip("10.0.0.2"), FdbSource::Evpn);  // type-3 withdrawn; still configured
  f.remove_flood(ip("10.0.0.3"), FdbSource::Evpn);
  auto l = f.lookup(kA, 0);
  ASSERT_EQ(l.remotes.size(), 2u);
  EXPECT_EQ(l.remotes[0], ip("10.0.0.2"));
  EXPECT_EQ(l.remotes[1], ip("239.1.1.1"));
  auto fl = f.flood_list();
  ASSERT_EQ(fl.size(), 2u);
  EXPECT_EQ(fl[0].second, FdbSource::Static);
  EXPECT_EQ(fl[1].second, FdbSource::Group);
}

// RFC 7432 §15: a MAC that appears behind our TAP while an EVPN route says it is elsewhere
// moved here: the remote entry goes and ours is advertised with seq + 1; a remote route with
// a seq at least ours means it moved away: our local entry goes.
TEST(FdbSources, MacMoveFollowsSequenceNumbers) {
  Fdb f(300 * kSec);
  f.set_local_learning(true);
  EXPECT_TRUE(f.set_evpn(kA, ip("10.0.0.4"), 3, 0));
  EXPECT_TRUE(f.learn_local(kA, 1 * kSec));
  EXPECT_EQ(f.entries().count(kA), 0u);
  ASSERT_EQ(f.locals().count(kA), 1u);
  EXPECT_EQ(f.locals().at(kA).seq, 4u);
  EXPECT_FALSE(f.learn_local(kA, 2 * kSec));  // refresh only
  EXPECT_EQ(f.locals().at(kA).updated_ns, 2 * kSec);
  EXPECT_FALSE(f.set_evpn(kA, ip("10.0.0.4"), 3, 3 * kSec));  // stale route: ours is newer
  EXPECT_EQ(f.locals().count(kA), 1u);
  EXPECT_TRUE(f.set_evpn(kA, ip("10.0.0.5"), 5, 4 * kSec));  // moved away again
  EXPECT_EQ(f.locals().count(kA), 0u);
  EXPECT_EQ(f.lookup(kA, 4 * kSec).remotes[0], ip("10.0.0.5"));
  // a learned entry also yields to the local MAC; group/zero sources are never local
  f.learn(kB, ip("10.0.0.3"), 0);
  EXPECT_TRUE(f.learn_local(kB, 5 * kSec));
  EXPECT_EQ(f.entries().count(kB), 0u);
  EXPECT_FALSE(f.learn_local(Mac{0x01, 0, 0x5e, 0, 0, 1}, 0));
  EXPECT_FALSE(f.learn_local(Mac{}, 0));
}

TEST(FdbSources, LocalMacsAgeLikeLearnedEntries) {
  Fdb f(10 * kSec);
  f.set_local_learning(true);
  f.learn_local(kA, 0);
  f.age(9 * kSec);
  EXPECT_EQ(f.locals().size(), 1u);
  f.age(10 * kSec);
  EXPECT_EQ(f.locals().size(), 0u);
}

// SharedFdb::lookup_tx learns the source only with local learning on (off: as before).
TEST(FdbSources, LookupTxLearnsLocalOnlyWhenOn) {
  SharedFdb f;
  f.add_default_remote(ip("10.0.0.2"));
  std::vector<IpAddr> out;
  EXPECT_TRUE(f.lookup_tx(kA, kB, 0, out));
  EXPECT_TRUE(f.locals().empty());
  f.set_local_learning(true);
  EXPECT_TRUE(f.lookup_tx(kA, kB, 0, out));
  EXPECT_EQ(f.locals().size(), 1u);
  EXPECT_EQ(out.size(), 1u);
}

// `ofld fdb --json`: every entry with mac, remote, source and age (ms since last update).
TEST(FdbSources, JsonListsSourceAgeAndRemote) {
  SharedFdb f(300 * kSec);
  f.add_static(kA, ip("10.0.0.2"));
  f.learn(kB, ip("10.0.0.3"), 1 * kSec);
  f.set_evpn(kC, ip("10.0.0.4"), 2, 2 * kSec);
  f.add_flood(ip("10.0.0.4"), FdbSource::Evpn);
  auto j = f.to_json(5 * kSec + 500000000ull);
  ASSERT_EQ(j["entries"].size(), 3u);
  EXPECT_EQ(j["entries"][0]["mac"], "02:00:00:00:00:0a");
  EXPECT_EQ(j["entries"][0]["source"], "static");
  EXPECT_EQ(j["entries"][1]["source"], "learned");
  EXPECT_EQ(j["entries"][1]["remote"], "10.0.0.3");
  EXPECT_EQ(j["entries"][1]["age_ms"], 4500u);
  EXPECT_EQ(j["entries"][2]["source"], "evpn");
  EXPECT_EQ(j["entries"][2]["age_ms"], 3500u);
  EXPECT_EQ(j["entries"][2]["seq"], 2u);
  ASSERT_EQ(j["flood"].size(), 1u);
  EXPECT_EQ(j["flood"][0]["source"], "evpn");
  EXPECT_FALSE(j.contains("local"));
}

}  // namespace

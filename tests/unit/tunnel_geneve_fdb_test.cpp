// `ofld tunnel geneve` with several remotes and a forwarding database (GN-13): the VXLAN
// settings reused (`remote` repeated, `fdb`, `learning`, `ageing`, `maxaddress`, `evpn`),
// broadcast / unknown-unicast flooded to every remote as the kernel's VXLAN FDB floods to its
// all-zeros entry (vxlan_xmit: the default destinations), a known MAC sent to its one remote,
// and the sources taken: with one remote only its datagrams (the kernel's geneve_lookup),
// with more the known remotes (configured, static entries), any source with `learning`
// (vxlan_snoop learns the inner source MAC) or EVPN.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ofld/daemon/config.hpp"
#include "ofld/daemon/reload.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/geneve.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace {

using namespace ofld;
using namespace ofld::tunnel;
using Bytes = std::vector<std::uint8_t>;

IpAddr ip(const char* s) { return *IpAddr::parse(s); }

GeneveConfig cfg_of(std::vector<std::string> w, daemon::DaemonConfig* out = nullptr) {
  daemon::DaemonConfig c;
  w.insert(w.begin(), {"geneve", "id", "42", "local", "10.0.0.1"});
  auto e = daemon::parse_tunnel_words(w, c);
  EXPECT_FALSE(e) << *e;
  if (out) *out = c;
  return std::get<GeneveConfig>(c.tunnel.encap);
}

const Mac kBcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
const Mac kHostA{0x02, 0, 0, 0, 0, 0xaa};
const Mac kHostB{0x02, 0, 0, 0, 0, 0xbb};

/// An Ethernet frame dst, src, ARP ethertype, 46 bytes of padding (no IP: no length checks).
Bytes frame(const Mac& dst, const Mac& src) {
  Bytes f(dst.begin(), dst.end());
  f.insert(f.end(), src.begin(), src.end());
  f.push_back(0x08), f.push_back(0x06);
  f.resize(f.size() + 46, 0);
  return f;
}

/// A Geneve datagram (RFC 8926 §3.4: version 0, Opt Len 0, flags 0, protocol 0x6558, VNI 42)
/// carrying `inner`; written by hand, not by the code under test.
Bytes datagram(const Bytes& inner) {
  Bytes d = {0x00, 0x00, 0x65, 0x58, 0x00, 0x00, 42, 0x00};
  d.insert(d.end(), inner.begin(), inner.end());
  return d;
}

/// The remotes `ep` sends `f` to (one train each).
std::multiset<std::string> sent_to(Endpoint& ep, const Bytes& f) {
  std::vector<TxTrain> trains;
  ep.transmit(wire::virtio_net::Hdr{}, f, 1, trains);
  std::multiset<std::string> r;
  for (const auto& t : trains) r.insert(t.remote.to_string());
  ep.recycle(trains);
  return r;
}

std::uint64_t drops(const Counters& c, Drop d) { return c.drops[std::size_t(d)]; }

TEST(TunnelGeneveFdb, GN13_VxlanFdbSettingsAreGeneveSettings) {
  daemon::DaemonConfig d;
  const auto g = cfg_of({"remote", "10.0.0.2", "remote", "10.0.0.3", "learning", "ageing", "60",
                         "maxaddress", "10", "learning-from", "any", "fdb", "02:00:00:00:00:09", "10.0.0.4"},
                        &d);
  ASSERT_EQ(g.remotes.size(), 2u);
  EXPECT_EQ(g.remotes[1], ip("10.0.0.3"));
  EXPECT_TRUE(g.learning);
  EXPECT_EQ(g.ageing_s, 60u);
  EXPECT_EQ(g.fdb_limits.maxaddress, 10u);
  EXPECT_EQ(g.fdb_limits.from, LearnFrom::Any);
  ASSERT_EQ(d.static_fdb.size(), 1u);
  EXPECT_EQ(d.static_fdb[0].second, ip("10.0.0.4"));
  // the defaults: the kernel's classic device (no learning), VXLAN's ageing and bound
  const auto one = cfg_of({"remote", "10.0.0.2"});
  EXPECT_FALSE(one.learning);
  EXPECT_EQ(one.ageing_s, 300u);
  EXPECT_EQ(one.fdb_limits.maxaddress, FdbLimits::kDefaultMaxAddress);
  // EVPN supplies the remotes: none needed; without it one is
  daemon::DaemonConfig e;
  EXPECT_FALSE(daemon::parse_tunnel_words({"geneve", "id", "42", "local", "10.0.0.1", "evpn"}, e));
  EXPECT_TRUE(e.evpn);
  daemon::DaemonConfig n;
  auto err = daemon::parse_tunnel_words({"geneve", "id", "42", "local", "10.0.0.1"}, n);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->rfind("remote:", 0), 0u) << *err;
  err = daemon::parse_tunnel_words({"geneve", "id", "42", "local", "10.0.0.1", "remote", "10.0.0.2", "remote", "10.0.0.2"}, n);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("given twice"), std::string::npos) << *err;
  // the multicast group stays VXLAN's
  err = daemon::parse_tunnel_words({"geneve", "id", "42", "local", "10.0.0.1", "group", "239.1.1.1"}, n);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("not a geneve setting"), std::string::npos) << *err;
  // TOML: remote a list, [[fdb]] entries beside a [geneve] table
  auto t = daemon::parse_toml("[geneve]\nid = 42\nlocal = \"10.0.0.1\"\nremote = [\"10.0.0.2\", \"10.0.0.3\"]\n"
                              "learning = true\n[[fdb]]\nmac = \"02:00:00:00:00:09\"\nremote = \"10.0.0.4\"\n");
  ASSERT_TRUE(std::holds_alternative<daemon::DaemonConfig>(t)) << std::get<std::string>(t);
  const auto& td = std::get<daemon::DaemonConfig>(t);
  EXPECT_EQ(td.tunnel.get<GeneveConfig>()->remotes.size(), 2u);
  EXPECT_TRUE(td.tunnel.get<GeneveConfig>()->learning);
  EXPECT_EQ(td.static_fdb.size(), 1u);
}

// vxlan_xmit: a group or unknown destination goes to every default remote; a known one to
// its entry's remote only. With one remote every frame goes there, as the classic device.
TEST(TunnelGeneveFdb, GN13_BumFramesFloodToEveryRemoteKnownMacsToTheirs) {
  Endpoint ep(cfg_of({"remote", "10.0.0.2", "remote", "10.0.0.3", "remote", "10.0.0.4"}));
  ASSERT_NE(ep.fdb(), nullptr) << "a Geneve endpoint has an FDB";
  const std::multiset<std::string> all = {"10.0.0.2", "10.0.0.3", "10.0.0.4"};
  EXPECT_EQ(sent_to(ep, frame(kBcast, kHostA)), all);
  EXPECT_EQ(sent_to(ep, frame(kHostB, kHostA)), all) << "unknown unicast floods";
  EXPECT_EQ(ep.counters().tx_flooded, 2u);
  ep.fdb()->add_static(kHostB, ip("10.0.0.3"));
  EXPECT_EQ(sent_to(ep, frame(kHostB, kHostA)), std::multiset<std::string>{"10.0.0.3"});
  EXPECT_EQ(ep.counters().tx_flooded, 2u);

  Endpoint one(cfg_of({"remote", "10.0.0.2"}));
  EXPECT_EQ(sent_to(one, frame(kBcast, kHostA)), std::multiset<std::string>{"10.0.0.2"});
  EXPECT_EQ(sent_to(one, frame(kHostB, kHostA)), std::multiset<std::string>{"10.0.0.2"});
  EXPECT_EQ(one.counters().tx_flooded, 0u) << "one remote: nothing is flooded";
}

// Sources: the known remotes (configured, static entries) without learning — one remote is
// geneve_lookup's rule exactly —; any source with `learning` (its MACs learned) or EVPN.
TEST(TunnelGeneveFdb, GN13_SourcesTakenAreTheKnownRemotesUnlessLearningOrEvpn) {
  const Bytes d = datagram(frame(kBcast, kHostA));
  {
    Endpoint ep(cfg_of({"remote", "10.0.0.2", "remote", "10.0.0.3"}));
    ep.receive(d, ip("10.0.0.3"), OuterCsum::Present, 1);
    EXPECT_EQ(drops(ep.counters(), Drop::RxWrongSource), 0u);
    ep.receive(d, ip("10.0.0.9"), OuterCsum::Present, 2);
    ep.receive(d, ip("10.0.0.9"), OuterCsum::Present, 3);
    EXPECT_EQ(drops(ep.counters(), Drop::RxWrongSource), 2u) << "not a remote";
    ep.fdb()->add_static(kHostB, ip("10.0.0.9"));  // the remote of a static entry is known
    ep.receive(d, ip("10.0.0.9"), OuterCsum::Present, 4);
    EXPECT_EQ(drops(ep.counters(), Drop::RxWrongSource), 2u) << "a static entry's remote";
    EXPECT_EQ(ep.counters().fdb_learned, 0u) << "no learning by default";
    EXPECT_FALSE(ep.fdb()->find(kHostA)) << "no learning by default";
    std::vector<TapFrame> out;
    ep.rx_flush(5, out);
    EXPECT_EQ(out.size(), 2u);
  }
  {
    Endpoint ep(cfg_of({"remote", "10.0.0.2", "learning"}));
    ep.receive(d, ip("10.0.0.8"), OuterCsum::Present, 1);
    EXPECT_EQ(drops(ep.counters(), Drop::RxWrongSource), 0u) << "learning: any source";
    // learning-from auto = remotes: an unknown source is not learned from (docs/fdb.md)
    EXPECT_EQ(ep.counters().fdb_refused_unknown_source, 1u);
    ep.receive(d, ip("10.0.0.2"), OuterCsum::Present, 2);
    EXPECT_EQ(ep.counters().fdb_learned, 1u);
    const auto e = ep.fdb()->find(kHostA);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->remote, ip("10.0.0.2"));
    EXPECT_EQ(e->source, FdbSource::Learned);
    EXPECT_EQ(sent_to(ep, frame(kHostA, kHostB)), std::multiset<std::string>{"10.0.0.2"});
  }
  {
    EndpointOptions o;
    o.any_source = true;  // what the daemon sets with `evpn`
    Endpoint ep(cfg_of({"remote", "10.0.0.2"}), o);
    ep.receive(d, ip("10.0.0.7"), OuterCsum::Present, 1);
    EXPECT_EQ(drops(ep.counters(), Drop::RxWrongSource), 0u) << "EVPN: any source";
    EXPECT_FALSE(ep.fdb()->find(kHostA)) << "EVPN without learning: entries come from routes";
  }
}

// A reload applies Geneve's remotes and static entries as VXLAN's (the FDB's flood list and
// entries change in place); the FDB settings that shape learning need a restart.
TEST(TunnelGeneveFdb, GN13_ReloadAppliesRemotesAndStaticEntries) {
  daemon::DaemonConfig a, z, l;
  cfg_of({"remote", "10.0.0.2"}, &a);
  cfg_of({"remote", "10.0.0.2", "remote", "10.0.0.3", "fdb", "02:00:00:00:00:09", "10.0.0.3"}, &z);
  auto p = daemon::plan_reload(a, z);
  EXPECT_EQ(p.refused, "");
  ASSERT_EQ(p.remotes_added.size(), 1u);
  EXPECT_EQ(p.remotes_added[0], ip("10.0.0.3"));
  EXPECT_EQ(p.fdb_added.size(), 1u);
  cfg_of({"remote", "10.0.0.2", "learning"}, &l);
  p = daemon::plan_reload(a, l);
  EXPECT_EQ(p.refused.rfind("learning:", 0), 0u) << p.refused;
}

}  // namespace

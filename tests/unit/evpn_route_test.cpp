// The EVPN route → FDB action mapping (src/daemon/evpn_route.hpp), fed apipb::Path
// messages built as gobgpd delivers them on WatchEvent (pkg/apiutil: the NLRI as an Any,
// MP_REACH_NLRI with the next hop, extended communities, PMSI tunnel). Expected values come
// from RFC 7432 (EVPN), RFC 8365 (EVPN with VXLAN), RFC 6514 §5 (PMSI tunnel attribute) and
// RFC 4760 (MP_REACH_NLRI), never from the mapping's own output.
#include <gtest/gtest.h>

#ifndef OFLD_HAVE_EVPN

TEST(EvpnRoute, NeedsTheGrpcClient) {
  GTEST_SKIP() << "built without the EVPN client (OFLD_EVPN: protoc, grpc_cpp_plugin, grpc++, "
                  "gobgp.proto of scripts/deps.sh)";
}

#else

#include <initializer_list>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "../../src/daemon/evpn.hpp"
#include "../../src/daemon/evpn_route.hpp"
#include "attribute.pb.h"
#include "gobgp.pb.h"

// readable gtest messages (internal linkage: no clash with other test files)
namespace ofld::daemon {
[[maybe_unused]] static void PrintTo(RouteIgnored r, std::ostream* os) { *os << to_string(r); }
}  // namespace ofld::daemon
namespace ofld::wire {
[[maybe_unused]] static void PrintTo(const IpAddr& a, std::ostream* os) { *os << a.to_string(); }
}  // namespace ofld::wire

namespace {

using ofld::daemon::EvpnRouteAction;
using ofld::daemon::EvpnRouteContext;
using ofld::daemon::map_evpn_route;
using ofld::daemon::parse_evpn_mac;
using ofld::daemon::RouteIgnored;
using ofld::tunnel::IpAddr;
using ofld::tunnel::Mac;
using Kind = EvpnRouteAction::Kind;

constexpr std::uint32_t kVni = 100;
constexpr std::uint32_t kAsn = 65000;

IpAddr ip(const char* s) { return *IpAddr::parse(s); }
EvpnRouteContext ctx4() { return {ip("10.0.0.1"), kVni}; }

apipb::Family evpn_family() {
  apipb::Family f;
  f.set_afi(apipb::Family::AFI_L2VPN);  // AFI 25 (RFC 4761), SAFI 70 (RFC 7432 §20)
  f.set_safi(apipb::Family::SAFI_EVPN);
  return f;
}

google::protobuf::Any rd(const char* admin, std::uint32_t assigned) {
  apipb::RouteDistinguisherIPAddress r;  // RFC 7432 §7.9: type 1, IP:number
  r.set_admin(admin);
  r.set_assigned(assigned);
  google::protobuf::Any a;
  a.PackFrom(r);
  return a;
}

// What gobgpd puts beside the NLRI: ORIGIN, MP_REACH_NLRI (RFC 4760 §3: the next hop of an
// EVPN route), extended communities (route target, encapsulation, MAC Mobility).
struct Attrs {
  std::string next_hop = "10.0.0.2";
  bool mp_reach = true;  // false: NextHopAttribute instead
  std::optional<std::uint32_t> rt_local_admin = kVni;
  std::optional<std::uint32_t> mac_mobility_seq;
  /// BGP Encapsulation extended communities (RFC 9012 §4.1; RFC 8365 §5.1.3): tunnel types.
  std::vector<std::uint32_t> encaps = {8};
};

void add_attrs(apipb::Path& p, const Attrs& a) {
  apipb::OriginAttribute origin;
  origin.set_origin(0);
  p.add_pattrs()->PackFrom(origin);
  if (a.mp_reach) {
    apipb::MpReachNLRIAttribute mp;
    *mp.mutable_family() = evpn_family();
    mp.add_next_hops(a.next_hop);
    *mp.add_nlris() = p.nlri();
    p.add_pattrs()->PackFrom(mp);
  } else {
    apipb::NextHopAttribute nh;
    nh.set_next_hop(a.next_hop);
    p.add_pattrs()->PackFrom(nh);
  }
  apipb::ExtendedCommunitiesAttribute ec;
  if (a.rt_local_admin) {
    apipb::TwoOctetAsSpecificExtended rt;  // RFC 4360 §4 route target, RFC 8365 §5.1.2.1 AS:VNI
    rt.set_is_transitive(true);
    rt.set_sub_type(0x02);
    rt.set_asn(kAsn);
    rt.set_local_admin(*a.rt_local_admin);
    ec.add_communities()->PackFrom(rt);
  }
  for (std::uint32_t t : a.encaps) {
    apipb::EncapExtended enc;  // RFC 9012 tunnel type: 8 VXLAN, 19 Geneve (IANA registry)
    enc.set_tunnel_type(t);
    ec.add_communities()->PackFrom(enc);
  }
  if (a.mac_mobility_seq) {
    apipb::MacMobilityExtended mm;  // RFC 7432 §7.7
    mm.set_sequence_num(*a.mac_mobility_seq);
    ec.add_communities()->PackFrom(mm);
  }
  p.add_pattrs()->PackFrom(ec);
}

// A type-2 MAC/IP Advertisement route (RFC 7432 §7.2) as gobgpd delivers it: MAC as Go's
// net.HardwareAddr.String(), label 1 = the VNI (RFC 8365 §5.1.3), Ethernet Tag 0 (§5.1.2).
apipb::Path type2(const std::string& mac, std::uint32_t label = kVni, const Attrs& a = {},
                  bool withdraw = false) {
  apipb::Path p;
  apipb::EVPNMACIPAdvertisementRoute r;
  *r.mutable_rd() = rd(a.next_hop.c_str(), label & 0xFFFF);
  r.mutable_esi()->set_type(0);
  r.mutable_esi()->set_value(std::string(9, '\0'));
  r.set_ethernet_tag(0);
  r.set_mac_address(mac);
  r.add_labels(label);
  p.mutable_nlri()->PackFrom(r);
  *p.mutable_family() = evpn_family();
  p.set_is_withdraw(withdraw);
  add_attrs(p, a);
  return p;
}

struct Pmsi {
  std::uint32_t type = 6;  // RFC 6514 §5: 6 = Ingress Replication
  std::uint32_t label = kVni;
  std::string id;
};

std::string addr_bytes(const char* s) {
  const IpAddr a = ip(s);
  return std::string(reinterpret_cast<const char*>(a.bytes.data()), a.is_v6() ? 16 : 4);
}

// A type-3 Inclusive Multicast Ethernet Tag route (RFC 7432 §7.3) with the PMSI tunnel
// attribute (RFC 6514 §5; RFC 8365 §5.1.3: its label carries the VNI).
apipb::Path type3(const std::string& originator, std::optional<Pmsi> pmsi, const Attrs& a = {},
                  bool withdraw = false, std::uint32_t ethernet_tag = 0) {
  apipb::Path p;
  apipb::EVPNInclusiveMulticastEthernetTagRoute r;
  *r.mutable_rd() = rd(originator.c_str(), kVni);
  r.set_ethernet_tag(ethernet_tag);
  r.set_ip_address(originator);
  p.mutable_nlri()->PackFrom(r);
  *p.mutable_family() = evpn_family();
  p.set_is_withdraw(withdraw);
  add_attrs(p, a);
  if (pmsi) {
    apipb::PmsiTunnelAttribute pm;
    pm.set_flags(0);
    pm.set_type(pmsi->type);
    pm.set_label(pmsi->label);
    pm.set_id(pmsi->id);
    p.add_pattrs()->PackFrom(pm);
  }
  return p;
}

constexpr Mac kMac{0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

// IANA "BGP Tunnel Encapsulation Attribute Tunnel Types" (RFC 9012): VXLAN 8 (RFC 8365),
// MPLS 10, Geneve 19 — written here from the registry, not taken from the code.
constexpr std::uint32_t kVxlanType = 8, kMplsType = 10, kGeneveType = 19;
EvpnRouteContext ctx4_geneve() { return {ip("10.0.0.1"), kVni, 19}; }
Attrs with_encaps(std::vector<std::uint32_t> t) {
  Attrs a;
  a.encaps = std::move(t);
  return a;
}

// ---- the route's encapsulation (GN-14, GN-15)

TEST(EvpnRouteEncap, GN14_TunnelTypesAreTheIanaNumbers) {
  EXPECT_EQ(ofld::daemon::kTunnelTypeVxlan, kVxlanType);
  EXPECT_EQ(ofld::daemon::kTunnelTypeGeneve, kGeneveType);
  EXPECT_EQ(ofld::daemon::EvpnOptions{}.tunnel_type, kVxlanType) << "VXLAN unless told";
  EXPECT_EQ(to_string(RouteIgnored::OtherEncapsulation), "other-encapsulation");
  EXPECT_EQ(to_string(RouteIgnored::NoEncapsulation), "no-encapsulation");
}

// A Geneve endpoint takes routes naming Geneve (alone or among others: RFC 8365 §5.1.3 lets a
// route list every encapsulation its NVE supports) and skips VXLAN's, MPLS's and those naming
// none (§5.1.3: then MPLS or a statically configured encapsulation is meant, not Geneve).
TEST(EvpnRouteEncap, GN15_GeneveEndpointTakesOnlyRoutesNamingGeneve_RFC8365_5_1_3) {
  const std::string m = "52:54:00:12:34:56";
  auto d = map_evpn_route(type2(m, kVni, with_encaps({kGeneveType})), ctx4_geneve());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.2"));
  d = map_evpn_route(type2(m, kVni, with_encaps({kVxlanType, kGeneveType})), ctx4_geneve());
  EXPECT_TRUE(d.action) << to_string(d.reason);
  d = map_evpn_route(type2(m, kVni, with_encaps({kVxlanType})), ctx4_geneve());
  ASSERT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherEncapsulation);
  d = map_evpn_route(type2(m, kVni, with_encaps({kMplsType})), ctx4_geneve());
  ASSERT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherEncapsulation);
  d = map_evpn_route(type2(m, kVni, with_encaps({})), ctx4_geneve());
  ASSERT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::NoEncapsulation);
  // type-3 alike: a VXLAN VTEP is no flood member of a Geneve endpoint
  Attrs a = with_encaps({kGeneveType});
  a.next_hop = "10.0.0.3";
  d = map_evpn_route(type3("10.0.0.3", Pmsi{6, kVni, addr_bytes("10.0.0.3")}, a), ctx4_geneve());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->kind, Kind::InclusiveMulticast);
  a.encaps = {kVxlanType};
  d = map_evpn_route(type3("10.0.0.3", Pmsi{6, kVni, addr_bytes("10.0.0.3")}, a), ctx4_geneve());
  ASSERT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherEncapsulation);
  // a withdrawal is filtered alike: what was never installed is not removed
  d = map_evpn_route(type2(m, kVni, with_encaps({kVxlanType}), true), ctx4_geneve());
  EXPECT_FALSE(d.action);
  // another VNI (label and route target) is still "other-vni" first
  Attrs other = with_encaps({kVxlanType});
  other.rt_local_admin = kVni + 1;
  d = map_evpn_route(type2(m, kVni + 1, other), ctx4_geneve());
  ASSERT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherVni);
}

// A VXLAN endpoint skips routes naming only other encapsulations (Geneve, MPLS) and keeps
// taking those naming VXLAN or none (a VXLAN-only VTEP that omits the community).
TEST(EvpnRouteEncap, GN15_VxlanEndpointSkipsGeneveRoutes_RFC8365_5_1_3) {
  const std::string m = "52:54:00:12:34:56";
  auto d = map_evpn_route(type2(m, kVni, with_encaps({kGeneveType})), ctx4());
  ASSERT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherEncapsulation);
  d = map_evpn_route(type2(m, kVni, with_encaps({kMplsType})), ctx4());
  ASSERT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherEncapsulation);
  d = map_evpn_route(type2(m, kVni, with_encaps({})), ctx4());
  EXPECT_TRUE(d.action) << to_string(d.reason);
  d = map_evpn_route(type2(m, kVni, with_encaps({kGeneveType, kVxlanType})), ctx4());
  EXPECT_TRUE(d.action) << to_string(d.reason);
  Attrs a = with_encaps({kGeneveType});
  a.next_hop = "10.0.0.3";
  d = map_evpn_route(type3("10.0.0.3", Pmsi{6, kVni, addr_bytes("10.0.0.3")}, a), ctx4());
  ASSERT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherEncapsulation);
}

// ---- type-2

TEST(EvpnRoute, Type2MacIpRouteIsAnFdbEntryAtItsNextHop_RFC7432_7_2_RFC8365_5_1_3) {
  const auto d = map_evpn_route(type2("52:54:00:12:34:56"), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->kind, Kind::MacIp);
  EXPECT_FALSE(d.action->withdraw);
  EXPECT_EQ(d.action->mac, kMac);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.2"));  // RFC 4760 §3: MP_REACH_NLRI next hop
  EXPECT_EQ(d.action->seq, 0u);               // RFC 7432 §7.7: no community = sequence 0
}

TEST(EvpnRoute, Type2NextHopFromNextHopAttributeToo_RFC4271_5_1_3) {
  Attrs a;
  a.mp_reach = false;
  a.next_hop = "10.0.0.7";
  const auto d = map_evpn_route(type2("52:54:00:12:34:56", kVni, a), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.7"));
}

TEST(EvpnRoute, Type2MacMobilitySequenceNumber_RFC7432_7_7) {
  Attrs a;
  a.mac_mobility_seq = 7;
  auto d = map_evpn_route(type2("52:54:00:12:34:56", kVni, a), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->seq, 7u);
  a.mac_mobility_seq = 0xFFFFFFFFu;  // the field is 4 octets (§7.7)
  d = map_evpn_route(type2("52:54:00:12:34:56", kVni, a), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->seq, 0xFFFFFFFFu);
}

TEST(EvpnRoute, Type2OfOurVniByLabelOrRouteTarget_RFC8365_5_1_2_1_and_5_1_3) {
  // label = VNI, no route target (§5.1.3)
  Attrs no_rt;
  no_rt.rt_local_admin.reset();
  EXPECT_TRUE(map_evpn_route(type2("52:54:00:12:34:56", kVni, no_rt), ctx4()).action);
  // route target AS:VNI with another label (§5.1.2.1 auto-derived RT)
  EXPECT_TRUE(map_evpn_route(type2("52:54:00:12:34:56", 7, Attrs{}), ctx4()).action);
  // the label is 24 bits (§5.1.3): VNI 0xABCDEF
  const EvpnRouteContext big{ip("10.0.0.1"), 0xABCDEF};
  Attrs other_rt;
  other_rt.rt_local_admin = 5;
  EXPECT_TRUE(map_evpn_route(type2("52:54:00:12:34:56", 0xABCDEF, other_rt), big).action);
}

TEST(EvpnRoute, Type2OfAnotherVniIgnored_RFC8365_5_1_3) {
  Attrs a;
  a.rt_local_admin = 200;
  const auto d = map_evpn_route(type2("52:54:00:12:34:56", 200, a), ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherVni);
}

TEST(EvpnRoute, Type2WithdrawalRemovesTheEntry_RFC4760_4) {
  Attrs a;
  a.mac_mobility_seq = 3;
  const auto d = map_evpn_route(type2("52:54:00:12:34:56", kVni, a, true), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->kind, Kind::MacIp);
  EXPECT_TRUE(d.action->withdraw);
  EXPECT_EQ(d.action->mac, kMac);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.2"));
}

TEST(EvpnRoute, Type2FromOurOwnVtepIgnored_RFC7432_7_2) {
  Attrs a;
  a.next_hop = "10.0.0.1";
  const auto d = map_evpn_route(type2("52:54:00:12:34:56", kVni, a), ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::Own);
}

// ---- type-3

TEST(EvpnRoute, Type3IngressReplicationTunnelIdIsTheFloodMember_RFC6514_5_RFC8365_5_1_3) {
  // next hop 10.0.0.3, PMSI tunnel identifier 10.0.0.30: for ingress replication the
  // identifier is the unicast tunnel endpoint (RFC 6514 §5, RFC 7432 §11.2).
  Attrs a;
  a.next_hop = "10.0.0.3";
  a.rt_local_admin.reset();  // the PMSI label (= VNI, RFC 8365 §5.1.3) names the VNI
  const auto d = map_evpn_route(type3("10.0.0.3", Pmsi{6, kVni, addr_bytes("10.0.0.30")}, a), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->kind, Kind::InclusiveMulticast);
  EXPECT_FALSE(d.action->withdraw);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.30"));
  EXPECT_EQ(d.action->seq, 0u);
}

TEST(EvpnRoute, Type3WithoutPmsiFloodsToTheOriginatingRouter_RFC7432_7_3) {
  Attrs a;
  a.next_hop = "10.0.0.3";
  const auto d = map_evpn_route(type3("10.0.0.4", std::nullopt, a), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->kind, Kind::InclusiveMulticast);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.4"));
}

TEST(EvpnRoute, Type3PmsiIdOfAnotherTunnelTypeIsNoAddress_RFC6514_5) {
  // Tunnel type 0 = "no tunnel information present": the identifier is not an ingress
  // replication endpoint, even when it is 4 bytes long; the originator is the member.
  Attrs a;
  a.next_hop = "10.0.0.3";
  auto d = map_evpn_route(type3("10.0.0.3", Pmsi{0, kVni, addr_bytes("10.9.9.9")}, a), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.3"));
  // 3 = PIM-SSM tree: the identifier is <sender, P-multicast group>, never a unicast VTEP
  d = map_evpn_route(type3("10.0.0.3", Pmsi{3, kVni, addr_bytes("232.1.1.1")}, a), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.3"));
}

TEST(EvpnRoute, Type3OfOurVniByEthernetTag_RFC8365_5_1_2) {
  Attrs a;
  a.next_hop = "10.0.0.3";
  a.rt_local_admin = 9;
  EXPECT_TRUE(map_evpn_route(type3("10.0.0.3", Pmsi{6, 9, addr_bytes("10.0.0.3")}, a, false, kVni), ctx4()).action);
}

TEST(EvpnRoute, Type3OfAnotherVniIgnored_RFC8365_5_1_3) {
  Attrs a;
  a.next_hop = "10.0.0.3";
  a.rt_local_admin = 200;
  const auto d = map_evpn_route(type3("10.0.0.3", Pmsi{6, 200, addr_bytes("10.0.0.3")}, a), ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherVni);
}

TEST(EvpnRoute, Type3WithdrawalLeavesTheFloodList_RFC4760_4) {
  Attrs a;
  a.next_hop = "10.0.0.3";
  const auto d = map_evpn_route(type3("10.0.0.3", Pmsi{6, kVni, addr_bytes("10.0.0.3")}, a, true), ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->kind, Kind::InclusiveMulticast);
  EXPECT_TRUE(d.action->withdraw);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.3"));
}

TEST(EvpnRoute, Type3OurOwnIgnored_RFC7432_7_3) {
  Attrs a;
  a.next_hop = "10.0.0.1";  // our next hop
  auto d = map_evpn_route(type3("10.0.0.1", Pmsi{6, kVni, addr_bytes("10.0.0.1")}, a), ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::Own);
  a.next_hop = "10.0.0.3";  // reflected with another next hop, but the tunnel endpoint is us
  d = map_evpn_route(type3("10.0.0.1", Pmsi{6, kVni, addr_bytes("10.0.0.1")}, a), ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::Own);
}

// ---- families, route types, malformed content

TEST(EvpnRoute, OtherFamilyAndOtherRouteTypesIgnored_RFC7432_7) {
  auto p = type2("52:54:00:12:34:56");
  p.mutable_family()->set_afi(apipb::Family::AFI_IP);
  p.mutable_family()->set_safi(apipb::Family::SAFI_UNICAST);
  EXPECT_EQ(map_evpn_route(p, ctx4()).reason, RouteIgnored::NotEvpn);
  EXPECT_FALSE(map_evpn_route(p, ctx4()).action);
  // type 5 IP Prefix route (RFC 9136): not ours to program
  apipb::Path t5 = type2("52:54:00:12:34:56");
  apipb::EVPNIPPrefixRoute r;
  r.set_ip_prefix("192.0.2.0");
  r.set_ip_prefix_len(24);
  r.set_label(kVni);
  t5.mutable_nlri()->PackFrom(r);
  const auto d = map_evpn_route(t5, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherRouteType);
}

TEST(EvpnRoute, AnyOfAnUnexpectedTypeIgnored) {
  // the NLRI Any holds an attribute message: no EVPN route
  apipb::Path p = type2("52:54:00:12:34:56");
  apipb::NextHopAttribute nh;
  nh.set_next_hop("10.0.0.2");
  p.mutable_nlri()->PackFrom(nh);
  auto d = map_evpn_route(p, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherRouteType);
  // no NLRI at all
  p.clear_nlri();
  d = map_evpn_route(p, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherRouteType);
}

TEST(EvpnRoute, AnyWhoseBytesDoNotParseIsMalformed) {
  // type URL of a type-2 route, value not a protobuf message (a field tag with a truncated
  // length-delimited value): the route is malformed, not an empty route
  apipb::Path p = type2("52:54:00:12:34:56");
  p.mutable_nlri()->set_value(std::string("\x22\x7f" "52:54", 7));
  auto d = map_evpn_route(p, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::NlriMalformed);
  // an extended-communities attribute whose bytes do not parse
  p = type2("52:54:00:12:34:56");
  for (auto& a : *p.mutable_pattrs())
    if (a.Is<apipb::ExtendedCommunitiesAttribute>()) a.set_value(std::string("\x0a\x40", 2));
  d = map_evpn_route(p, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::AttrMalformed);
  // a next-hop attribute whose bytes do not parse
  Attrs nh_attr;
  nh_attr.mp_reach = false;
  p = type2("52:54:00:12:34:56", kVni, nh_attr);
  for (auto& a : *p.mutable_pattrs())
    if (a.Is<apipb::NextHopAttribute>()) a.set_value(std::string("\x0a\x10" "10.0", 6));
  d = map_evpn_route(p, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::AttrMalformed);
}

TEST(EvpnRoute, MissingAttributesIgnored_RFC4760_3) {
  // no attributes at all: no next hop
  apipb::Path p = type2("52:54:00:12:34:56");
  p.clear_pattrs();
  auto d = map_evpn_route(p, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::NoNextHop);
  // MP_REACH_NLRI without a next hop
  p = type2("52:54:00:12:34:56");
  for (auto& a : *p.mutable_pattrs())
    if (a.Is<apipb::MpReachNLRIAttribute>()) {
      apipb::MpReachNLRIAttribute mp;
      ASSERT_TRUE(a.UnpackTo(&mp));
      mp.clear_next_hops();
      a.PackFrom(mp);
    }
  d = map_evpn_route(p, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::NoNextHop);
  // a type-3 route with a next hop only: nothing names our VNI (label 0 is not VNI 100)
  apipb::Path t3 = type3("10.0.0.3", std::nullopt);
  t3.clear_pattrs();
  apipb::NextHopAttribute nh;
  nh.set_next_hop("10.0.0.3");
  t3.add_pattrs()->PackFrom(nh);
  d = map_evpn_route(t3, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::OtherVni);
}

TEST(EvpnRoute, NextHopThatIsNoAddressIgnored_RFC4760_3) {
  for (const std::string& nh : {std::string("vtep-2"), std::string("10.0.0"), std::string("10.0.0.2 "),
                               std::string("10.0.0.2\0junk", 13), std::string("10.0.0.256")}) {
    Attrs a;
    a.next_hop = nh;
    const auto d = map_evpn_route(type2("52:54:00:12:34:56", kVni, a), ctx4());
    EXPECT_FALSE(d.action) << nh;
    EXPECT_EQ(d.reason, RouteIgnored::NextHopNotAddress) << nh;
  }
}

TEST(EvpnRoute, NextHopOfTheOtherFamilyIgnored_RFC8365_5_1_3) {
  // An IPv4 underlay cannot reach an IPv6 VTEP (and the reverse): the rule of `remote`.
  Attrs a;
  a.next_hop = "2001:db8::2";
  auto d = map_evpn_route(type2("52:54:00:12:34:56", kVni, a), ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::NextHopFamily);
  // a type-3 whose PMSI tunnel identifier is a 16-byte address on an IPv4 underlay
  Attrs b;
  b.next_hop = "10.0.0.3";
  d = map_evpn_route(type3("10.0.0.3", Pmsi{6, kVni, addr_bytes("2001:db8::3")}, b), ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::NextHopFamily);
  // on an IPv6 underlay the IPv6 next hop is the VTEP
  const EvpnRouteContext v6{ip("2001:db8::1"), kVni};
  d = map_evpn_route(type2("52:54:00:12:34:56", kVni, a), v6);
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->vtep, ip("2001:db8::2"));
  d = map_evpn_route(type3("2001:db8::3", Pmsi{6, kVni, addr_bytes("2001:db8::3")}, a), v6);
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->vtep, ip("2001:db8::3"));
}

TEST(EvpnRoute, NextHopOrVtepNotUnicastIgnored_RFC8365_5_1_3) {
  for (const char* nh : {"0.0.0.0", "224.0.0.5", "239.1.1.1", "255.255.255.255"}) {
    Attrs a;
    a.next_hop = nh;
    const auto d = map_evpn_route(type2("52:54:00:12:34:56", kVni, a), ctx4());
    EXPECT_FALSE(d.action) << nh;
    EXPECT_EQ(d.reason, RouteIgnored::NextHopNotUnicast) << nh;
  }
  Attrs a;
  a.next_hop = "10.0.0.3";
  const auto d = map_evpn_route(type3("10.0.0.3", Pmsi{6, kVni, addr_bytes("239.1.1.1")}, a), ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::NextHopNotUnicast);
  const EvpnRouteContext v6{ip("2001:db8::1"), kVni};
  for (const char* nh : {"::", "ff02::1"}) {
    Attrs b;
    b.next_hop = nh;
    const auto e = map_evpn_route(type2("52:54:00:12:34:56", kVni, b), v6);
    EXPECT_FALSE(e.action) << nh;
    EXPECT_EQ(e.reason, RouteIgnored::NextHopNotUnicast) << nh;
  }
}

TEST(EvpnRoute, Type3PmsiIngressReplicationIdOfWrongLengthIgnored_RFC6514_5) {
  // ingress replication: the identifier is an IPv4 (4) or IPv6 (16) address; 5 bytes is none
  Attrs a;
  a.next_hop = "10.0.0.3";
  const auto d = map_evpn_route(type3("10.0.0.3", Pmsi{6, kVni, std::string("\x0a\x00\x00\x03\x00", 5)}, a), ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::NextHopNotAddress);
}

TEST(EvpnRoute, MacOfWrongLengthOrFormIgnored_RFC7432_7_2) {
  // RFC 7432 §7.2: MAC Address Length 48, six octets; gobgpd writes them as Go's
  // net.HardwareAddr.String(), "xx:xx:xx:xx:xx:xx"
  for (const std::string& m :
       {std::string("52:54:00:12:34"), std::string("52:54:00:12:34:56:78"), std::string("52:54:00:12:34:56:78:9a"),
        std::string(""), std::string("52:54:00:12:34:5"), std::string("52:54:00:12:34:567"),
        std::string("+52:54:00:12:34:56"), std::string(" 52:54:00:12:34:56"), std::string("0x5:54:00:12:34:56"),
        std::string("52:54:00:12:34:56\0:78", 21), std::string("52:54:00:12:34:56 "), std::string("52-54-00-12-34-56"),
        std::string("5254.0012.3456"), std::string("52:54:00:12:34:g6")}) {
    const auto d = map_evpn_route(type2(m), ctx4());
    EXPECT_FALSE(d.action) << '"' << m << '"';
    EXPECT_EQ(d.reason, RouteIgnored::MacMalformed) << '"' << m << '"';
  }
  EXPECT_EQ(parse_evpn_mac("52:54:00:AB:cd:EF"), (Mac{0x52, 0x54, 0x00, 0xab, 0xcd, 0xef}));
}

TEST(EvpnRoute, GroupOrZeroMacIgnored_RFC7432_7_2) {
  // a MAC/IP route advertises a station's (unicast) MAC; the I/G bit set (broadcast,
  // multicast) or the all-zero MAC (the kernel's default/flood entry) is never an FDB entry
  for (const char* m : {"ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01", "33:33:00:00:00:01", "00:00:00:00:00:00"}) {
    const auto d = map_evpn_route(type2(m), ctx4());
    EXPECT_FALSE(d.action) << m;
    EXPECT_EQ(d.reason, RouteIgnored::MacNotUnicast) << m;
  }
}

TEST(EvpnRoute, WatchEventTableAsGobgpdStreamsIt) {
  // WatchEventResponse.table.paths, serialized and parsed back as the client reads it
  apipb::WatchEventResponse ev;
  *ev.mutable_table()->add_paths() = type2("52:54:00:12:34:56");
  Attrs a;
  a.next_hop = "10.0.0.3";
  *ev.mutable_table()->add_paths() = type3("10.0.0.3", Pmsi{6, kVni, addr_bytes("10.0.0.3")}, a);
  apipb::WatchEventResponse back;
  ASSERT_TRUE(back.ParseFromString(ev.SerializeAsString()));
  ASSERT_EQ(back.table().paths_size(), 2);
  const auto d2 = map_evpn_route(back.table().paths(0), ctx4());
  const auto d3 = map_evpn_route(back.table().paths(1), ctx4());
  ASSERT_TRUE(d2.action && d3.action);
  EXPECT_EQ(d2.action->kind, Kind::MacIp);
  EXPECT_EQ(d2.action->mac, kMac);
  EXPECT_EQ(d3.action->kind, Kind::InclusiveMulticast);
  EXPECT_EQ(d3.action->vtep, ip("10.0.0.3"));
}

// ---- route identity (the route set's key: RFC 7432 §7.2 / §7.3 NLRI key fields)

std::uint64_t id_of(const apipb::Path& p) {
  const auto d = map_evpn_route(p, ctx4());
  return d.action ? d.action->route_id : 0;
}

TEST(EvpnRouteIdentity, Rfc7432_7_2_WithdrawalAndNewBestPathHaveTheAdvertisementsIdentity) {
  Attrs a, b;
  a.mac_mobility_seq = 3;
  b.mac_mobility_seq = 4;  // another best path for the same NLRI: other attributes
  const auto adv = id_of(type2("52:54:00:12:34:56", kVni, a));
  ASSERT_NE(adv, 0u);
  EXPECT_EQ(id_of(type2("52:54:00:12:34:56", kVni, a, true)), adv);
  EXPECT_EQ(id_of(type2("52:54:00:12:34:56", kVni, b)), adv);
}

TEST(EvpnRouteIdentity, Rfc7432_7_2_RdMacAndIpAreKeyFields) {
  Attrs a, other_rd;
  other_rd.next_hop = "10.0.0.3";  // type2() takes the RD's admin from the next hop
  const auto base = id_of(type2("52:54:00:12:34:56", kVni, a));
  EXPECT_NE(id_of(type2("52:54:00:12:34:57", kVni, a)), base);
  EXPECT_NE(id_of(type2("52:54:00:12:34:56", kVni, other_rd)), base);
  apipb::Path with_ip = type2("52:54:00:12:34:56", kVni, a);
  apipb::EVPNMACIPAdvertisementRoute r;
  ASSERT_TRUE(with_ip.nlri().UnpackTo(&r));
  r.set_ip_address("192.168.1.5");  // the MAC+IP route beside the MAC-only one
  with_ip.mutable_nlri()->PackFrom(r);
  EXPECT_NE(id_of(with_ip), base);
}

TEST(EvpnRouteIdentity, Rfc7432_7_3_ImetIdentityIsRdTagAndOriginator) {
  const Pmsi pm{6, kVni, addr_bytes("10.0.0.2")};
  const auto base = id_of(type3("10.0.0.2", pm));
  ASSERT_NE(base, 0u);
  EXPECT_EQ(id_of(type3("10.0.0.2", pm, {}, true)), base);
  EXPECT_NE(id_of(type3("10.0.0.2", pm, {}, false, kVni)), base);  // another Ethernet tag
}


// ---- ListPath's binary form (enable_only_binary: nlri_binary, pattrs_binary), the octets
// written here from RFC 7432 §7.2 / §7.3 (NLRI), RFC 4271 §4.3 (attribute header), RFC 4760
// §3 (MP_REACH_NLRI), RFC 4360 / RFC 9012 §4.1 / RFC 7432 §7.7 (extended communities) and
// RFC 6514 §5 (PMSI tunnel), not from the mapping.

using Bytes = std::string;
Bytes octets(std::initializer_list<int> v) {
  Bytes b;
  for (int x : v) b.push_back(char(x));
  return b;
}
Bytes be_n(std::uint32_t v, int n) {
  Bytes b;
  for (int i = n - 1; i >= 0; --i) b.push_back(char(v >> (8 * i)));
  return b;
}
// RD type 1 (RFC 4364 §4.2): IPv4 administrator, 2-octet number
Bytes rd1(const char* admin, std::uint16_t n) { return be_n(1, 2) + addr_bytes(admin) + be_n(n, 2); }
Bytes mac_bytes(const Mac& m) { return Bytes(reinterpret_cast<const char*>(m.data()), 6); }

// type-2 NLRI: route type 2, length, RD, ESI (10, single-homed 0), Ethernet Tag, MAC length
// 48, MAC, IP length in bits and IP, label 1 (the VNI in 24 bits, RFC 8365 §5.1.3)
Bytes nlri2(const Bytes& rd, const Mac& m, std::uint32_t label = kVni, const Bytes& ip = {},
            std::uint32_t etag = 0) {
  Bytes r = rd + Bytes(10, '\0') + be_n(etag, 4) + octets({48}) + mac_bytes(m) +
            octets({int(ip.size() * 8)}) + ip + be_n(label, 3);
  return octets({2, int(r.size())}) + r;
}
// type-3 NLRI: RD, Ethernet Tag, IP length 32, originating router's IP
Bytes nlri3(const Bytes& rd, const char* originator, std::uint32_t etag = 0) {
  Bytes r = rd + be_n(etag, 4) + octets({32}) + addr_bytes(originator);
  return octets({3, int(r.size())}) + r;
}
// a path attribute as in an UPDATE: flags, type, length (Extended Length: two octets)
Bytes attr(int flags, int type, const Bytes& v) {
  if (v.size() > 255) flags |= 0x10;  // a value longer than one length octet says
  if (flags & 0x10) return octets({flags, type}) + be_n(std::uint32_t(v.size()), 2) + v;
  return octets({flags, type, int(v.size())}) + v;
}
Bytes mp_reach(const char* nh, const Bytes& nlris, int flags = 0x80) {
  const Bytes n = addr_bytes(nh);
  return attr(flags, 14, be_n(25, 2) + octets({70, int(n.size())}) + n + octets({0}) + nlris);
}
Bytes rt(std::uint16_t as, std::uint32_t la) { return octets({0x00, 0x02}) + be_n(as, 2) + be_n(la, 4); }
Bytes encap(std::uint16_t t) { return octets({0x03, 0x0C, 0, 0, 0, 0}) + be_n(t, 2); }
Bytes mobility(std::uint32_t seq) { return octets({0x06, 0x00, 0, 0}) + be_n(seq, 4); }

apipb::Path binary_path(const Bytes& nlri, std::vector<Bytes> pattrs, bool best = true) {
  apipb::Path p;
  *p.mutable_family() = evpn_family();
  p.set_nlri_binary(nlri);
  for (auto& a : pattrs) p.add_pattrs_binary(a);
  p.set_best(best);
  return p;
}

TEST(EvpnRouteBinary, Type2FromListPathBinaryIsTheRouteGobgpdSendsAsAny_RFC7432_7_2) {
  // as gobgpd keeps a route of a 100-NLRI UPDATE: its MP_REACH_NLRI carries all 100 NLRIs
  Bytes all;
  for (int i = 0; i < 100; ++i) all += nlri2(rd1("10.0.0.2", kVni), Mac{2, 0, 0, 0, 0, std::uint8_t(i)});
  const apipb::Path b = binary_path(nlri2(rd1("10.0.0.2", kVni), kMac),
                                    {attr(0x40, 1, octets({0})), mp_reach("10.0.0.2", all),
                                     attr(0xC0, 16, rt(kAsn, kVni) + encap(8) + mobility(7))});
  const auto d = map_evpn_route(b, ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->kind, Kind::MacIp);
  EXPECT_EQ(d.action->mac, kMac);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.2"));
  EXPECT_EQ(d.action->seq, 7u);
  EXPECT_FALSE(d.action->withdraw);
  // the same route as an Any (WatchEvent): one identity, so a withdrawal on the stream of a
  // route read by ListPath removes it
  Attrs a;
  a.mac_mobility_seq = 7;
  const auto any = map_evpn_route(type2("52:54:00:12:34:56", kVni, a), ctx4());
  ASSERT_TRUE(any.action);
  EXPECT_EQ(*any.action, *d.action);
  EXPECT_EQ(map_evpn_route(type2("52:54:00:12:34:56", kVni, a, true), ctx4()).action->route_id,
            d.action->route_id);
}

TEST(EvpnRouteBinary, Type2NextHopAttributeAndExtendedLength_RFC4271_4_3) {
  // NEXT_HOP (type 3) instead of MP_REACH's; communities with the Extended Length flag; a
  // four-octet-AS route target (type 0x02, RFC 5668) naming the VNI; another VNI's label
  const apipb::Path b = binary_path(
      nlri2(rd1("10.0.0.2", 7), kMac, 7),
      {attr(0x40, 3, addr_bytes("10.0.0.5")),
       attr(0xD0, 16, octets({0x02, 0x02}) + be_n(4200000000u, 4) + be_n(kVni, 2))});
  const auto d = map_evpn_route(b, ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.5"));
  EXPECT_EQ(d.action->seq, 0u);  // no MAC Mobility community (RFC 7432 §7.7)
  // without the route target the label (7) is no VNI of ours
  const apipb::Path other = binary_path(nlri2(rd1("10.0.0.2", 7), kMac, 7), {attr(0x40, 3, addr_bytes("10.0.0.5"))});
  EXPECT_EQ(map_evpn_route(other, ctx4()).reason, RouteIgnored::OtherVni);
}

TEST(EvpnRouteBinary, Type3IngressReplicationFromListPathBinary_RFC6514_5_RFC7432_7_3) {
  const Bytes pmsi = octets({0, 6}) + be_n(kVni, 3) + addr_bytes("10.0.0.9");  // flags, IR, label
  const apipb::Path b = binary_path(nlri3(rd1("10.0.0.3", kVni), "10.0.0.3"),
                                    {mp_reach("10.0.0.3", nlri3(rd1("10.0.0.3", kVni), "10.0.0.3")),
                                     attr(0xC0, 16, rt(kAsn, kVni) + encap(8)), attr(0xC0, 22, pmsi)});
  const auto d = map_evpn_route(b, ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->kind, Kind::InclusiveMulticast);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.9"));
  Attrs a;
  a.next_hop = "10.0.0.3";
  const auto any = map_evpn_route(type3("10.0.0.3", Pmsi{6, kVni, addr_bytes("10.0.0.9")}, a), ctx4());
  ASSERT_TRUE(any.action);
  EXPECT_EQ(*any.action, *d.action);
}

TEST(EvpnRouteBinary, RdOfEachTypeKeysAlikeInBothForms_RFC7432_7_9) {
  // RFC 4364 §4.2: type 0 AS2:number32, type 2 AS4:number16 — the Any and the octets agree
  apipb::RouteDistinguisherTwoOctetASN r0;
  r0.set_admin(65000);
  r0.set_assigned(100000);
  apipb::RouteDistinguisherFourOctetASN r2;
  r2.set_admin(4200000000u);
  r2.set_assigned(100);
  const Bytes w0 = be_n(0, 2) + be_n(65000, 2) + be_n(100000, 4);
  const Bytes w2 = be_n(2, 2) + be_n(4200000000u, 4) + be_n(100, 2);
  std::vector<std::uint64_t> ids;
  for (const auto& [any_rd, wire] : {std::pair<google::protobuf::Message*, Bytes>{&r0, w0}, {&r2, w2}}) {
    apipb::Path p = type2("52:54:00:12:34:56");
    apipb::EVPNMACIPAdvertisementRoute r;
    ASSERT_TRUE(p.nlri().UnpackTo(&r));
    r.mutable_rd()->PackFrom(*any_rd);
    p.mutable_nlri()->PackFrom(r);
    const apipb::Path b = binary_path(nlri2(wire, kMac), {mp_reach("10.0.0.2", {}), attr(0xC0, 16, rt(kAsn, kVni) + encap(8))});
    const auto da = map_evpn_route(p, ctx4()), db = map_evpn_route(b, ctx4());
    ASSERT_TRUE(da.action && db.action);
    EXPECT_EQ(da.action->route_id, db.action->route_id);
    ids.push_back(db.action->route_id);
  }
  EXPECT_NE(ids[0], ids[1]);
}

TEST(EvpnRouteBinary, MacIpRouteKeysByItsAddressInBothForms_RFC7432_7_2) {
  // gobgpd writes a MAC-only route's IP as "<nil>" (Go's nil net.IP): the same key as no IP
  // octets; a MAC+IP route keys apart, alike in both forms
  apipb::Path nil_ip = type2("52:54:00:12:34:56");
  apipb::EVPNMACIPAdvertisementRoute r;
  ASSERT_TRUE(nil_ip.nlri().UnpackTo(&r));
  r.set_ip_address("<nil>");
  nil_ip.mutable_nlri()->PackFrom(r);
  apipb::Path with_ip = nil_ip;
  r.set_ip_address("192.168.1.5");
  with_ip.mutable_nlri()->PackFrom(r);
  const std::vector<Bytes> at = {mp_reach("10.0.0.2", {}), attr(0xC0, 16, rt(kAsn, kVni) + encap(8))};
  const auto no_ip_b = map_evpn_route(binary_path(nlri2(rd1("10.0.0.2", kVni), kMac), at), ctx4());
  const auto ip_b = map_evpn_route(binary_path(nlri2(rd1("10.0.0.2", kVni), kMac, kVni, addr_bytes("192.168.1.5")), at), ctx4());
  ASSERT_TRUE(no_ip_b.action && ip_b.action);
  EXPECT_EQ(id_of(nil_ip), no_ip_b.action->route_id);
  EXPECT_EQ(id_of(type2("52:54:00:12:34:56")), no_ip_b.action->route_id);
  EXPECT_EQ(id_of(with_ip), ip_b.action->route_id);
  EXPECT_NE(ip_b.action->route_id, no_ip_b.action->route_id);
}

TEST(EvpnRouteBinary, MalformedOctetsAreCountedNotTaken_RFC7432_7_2_RFC4271_4_3) {
  const Bytes good = nlri2(rd1("10.0.0.2", kVni), kMac);
  const std::vector<Bytes> at = {mp_reach("10.0.0.2", {}), attr(0xC0, 16, rt(kAsn, kVni) + encap(8))};
  ASSERT_TRUE(map_evpn_route(binary_path(good, at), ctx4()).action);
  auto reason = [](const Bytes& n, const std::vector<Bytes>& a) {
    const auto d = map_evpn_route(binary_path(n, a), ctx4());
    return d.action ? std::string("taken") : std::string(to_string(d.reason));
  };
  // NLRI: cut short, length octet disagreeing, MAC length not 48, IP length not 0/32/128,
  // a third label, a route type without octets
  EXPECT_EQ(reason(good.substr(0, good.size() - 1), at), "nlri-malformed");
  Bytes b = good;
  b[1] = char(b[1] + 1);
  EXPECT_EQ(reason(b, at), "nlri-malformed");
  b = good;
  b[2 + 22] = 40;
  EXPECT_EQ(reason(b, at), "nlri-malformed");
  b = good;
  b[2 + 29] = 24;
  EXPECT_EQ(reason(b, at), "nlri-malformed");
  b = good + be_n(1, 3) + be_n(2, 3);
  b[1] = char(b.size() - 2);
  EXPECT_EQ(reason(b, at), "nlri-malformed");
  EXPECT_EQ(reason(octets({2}), at), "nlri-malformed");
  EXPECT_EQ(reason(octets({3, 0}), at), "nlri-malformed");
  EXPECT_EQ(reason(octets({5, 0}), at), "other-route-type");  // type-5 (RFC 9136): not ours
  // attributes: length octet disagreeing, a community cut short, MP_REACH next hop of 5
  // octets, NEXT_HOP of 16, a PMSI tunnel without its label
  Bytes a0 = at[0];
  a0[2] = char(a0[2] + 1);
  EXPECT_EQ(reason(good, {a0, at[1]}), "attr-malformed");
  EXPECT_EQ(reason(good, {at[0], attr(0xC0, 16, rt(kAsn, kVni).substr(0, 7))}), "attr-malformed");
  EXPECT_EQ(reason(good, {attr(0x80, 14, be_n(25, 2) + octets({70, 5, 10, 0, 0, 2, 1, 0})), at[1]}),
            "attr-malformed");
  EXPECT_EQ(reason(good, {attr(0x40, 3, Bytes(16, '\1')), at[1]}), "attr-malformed");
  EXPECT_EQ(reason(good, {at[0], at[1], attr(0xC0, 22, octets({0, 6}))}), "attr-malformed");
  EXPECT_EQ(reason(good, {octets({0x40}), at[0], at[1]}), "attr-malformed");
  // no next hop at all
  EXPECT_EQ(reason(good, {at[1]}), "no-next-hop");
}

TEST(EvpnRoute, MpReachWithManyNlrisGivesItsNextHopAndTruncatedBytesAreMalformed_RFC4760_3) {
  // gobgpd repeats the UPDATE's 100 NLRIs in each path's MpReachNLRIAttribute: the next hop
  // is read whatever the NLRIs hold; an attribute cut inside a field is malformed
  apipb::Path p = type2("52:54:00:12:34:56");
  apipb::MpReachNLRIAttribute mp;
  *mp.mutable_family() = evpn_family();
  for (int i = 0; i < 100; ++i) *mp.add_nlris() = p.nlri();
  mp.add_next_hops("10.0.0.7");
  for (auto& a : *p.mutable_pattrs())
    if (a.Is<apipb::MpReachNLRIAttribute>()) a.PackFrom(mp);
  auto d = map_evpn_route(p, ctx4());
  ASSERT_TRUE(d.action) << to_string(d.reason);
  EXPECT_EQ(d.action->vtep, ip("10.0.0.7"));
  for (auto& a : *p.mutable_pattrs())
    if (a.Is<apipb::MpReachNLRIAttribute>()) a.set_value(a.value().substr(0, a.value().size() - 3));
  d = map_evpn_route(p, ctx4());
  EXPECT_FALSE(d.action);
  EXPECT_EQ(d.reason, RouteIgnored::AttrMalformed);
}
}  // namespace

#endif  // OFLD_HAVE_EVPN

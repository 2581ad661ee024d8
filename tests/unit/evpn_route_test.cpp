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

#include <ostream>
#include <string>

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

}  // namespace

#endif  // OFLD_HAVE_EVPN

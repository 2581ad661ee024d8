// EVPN route → FDB action; see evpn_route.hpp.
#ifdef OFLD_HAVE_EVPN

#include "evpn_route.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "attribute.pb.h"

namespace ofld::daemon {

namespace {

using tunnel::IpAddr;
using tunnel::Mac;

/// The next hop text: the first NextHopAttribute, or MpReachNLRIAttribute with a next hop.
std::string next_hop(const apipb::Path& p) {
  for (const auto& a : p.pattrs()) {
    if (a.Is<apipb::NextHopAttribute>()) {
      apipb::NextHopAttribute nh;
      a.UnpackTo(&nh);
      return nh.next_hop();
    }
    if (a.Is<apipb::MpReachNLRIAttribute>()) {
      apipb::MpReachNLRIAttribute mp;
      a.UnpackTo(&mp);
      if (mp.next_hops_size() > 0) return mp.next_hops(0);
    }
  }
  return "";
}

/// MAC Mobility sequence number, route target local admins, PMSI label and identifier.
struct Attrs {
  std::uint32_t seq = 0;
  std::set<std::uint32_t> rts;
  std::optional<std::uint32_t> pmsi_label;
  std::string pmsi_id;
};

Attrs attrs(const apipb::Path& p) {
  Attrs r;
  for (const auto& a : p.pattrs()) {
    if (a.Is<apipb::ExtendedCommunitiesAttribute>()) {
      apipb::ExtendedCommunitiesAttribute ec;
      a.UnpackTo(&ec);
      for (const auto& c : ec.communities()) {
        if (c.Is<apipb::MacMobilityExtended>()) {
          apipb::MacMobilityExtended mm;
          c.UnpackTo(&mm);
          r.seq = mm.sequence_num();
        } else if (c.Is<apipb::TwoOctetAsSpecificExtended>()) {
          apipb::TwoOctetAsSpecificExtended t;
          c.UnpackTo(&t);
          if (t.sub_type() == 0x02) r.rts.insert(t.local_admin());
        } else if (c.Is<apipb::FourOctetAsSpecificExtended>()) {
          apipb::FourOctetAsSpecificExtended t;
          c.UnpackTo(&t);
          if (t.sub_type() == 0x02) r.rts.insert(t.local_admin());
        }
      }
    } else if (a.Is<apipb::PmsiTunnelAttribute>()) {
      apipb::PmsiTunnelAttribute pm;
      a.UnpackTo(&pm);
      r.pmsi_label = pm.label();
      r.pmsi_id = pm.id();
    }
  }
  return r;
}

EvpnRouteDecision ignored(RouteIgnored why) { return {std::nullopt, why}; }

}  // namespace

std::optional<Mac> parse_evpn_mac(std::string_view text) noexcept {
  const std::string s(text);
  unsigned v[6];
  char tail;
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
    return std::nullopt;
  Mac m{};
  for (int i = 0; i < 6; ++i) {
    if (v[i] > 255) return std::nullopt;
    m[std::size_t(i)] = std::uint8_t(v[i]);
  }
  return m;
}

std::string_view to_string(RouteIgnored r) noexcept {
  switch (r) {
    case RouteIgnored::NotEvpn: return "not-evpn";
    case RouteIgnored::OtherRouteType: return "other-route-type";
    case RouteIgnored::NlriMalformed: return "nlri-malformed";
    case RouteIgnored::AttrMalformed: return "attr-malformed";
    case RouteIgnored::NoNextHop: return "no-next-hop";
    case RouteIgnored::NextHopNotAddress: return "next-hop-not-address";
    case RouteIgnored::NextHopFamily: return "next-hop-family";
    case RouteIgnored::NextHopNotUnicast: return "next-hop-not-unicast";
    case RouteIgnored::Own: return "own";
    case RouteIgnored::OtherVni: return "other-vni";
    case RouteIgnored::MacMalformed: return "mac-malformed";
    case RouteIgnored::MacNotUnicast: return "mac-not-unicast";
  }
  return "unknown";
}

EvpnRouteDecision map_evpn_route(const apipb::Path& p, const EvpnRouteContext& ctx) {
  if (p.family().afi() != apipb::Family::AFI_L2VPN || p.family().safi() != apipb::Family::SAFI_EVPN)
    return ignored(RouteIgnored::NotEvpn);
  const std::string nh_text = next_hop(p);
  if (nh_text.empty()) return ignored(RouteIgnored::NoNextHop);
  auto nh = IpAddr::parse(nh_text);
  if (!nh) return ignored(RouteIgnored::NextHopNotAddress);
  if (*nh == ctx.vtep) return ignored(RouteIgnored::Own);
  const Attrs at = attrs(p);
  EvpnRouteAction act;
  act.withdraw = p.is_withdraw();
  if (p.nlri().Is<apipb::EVPNMACIPAdvertisementRoute>()) {
    apipb::EVPNMACIPAdvertisementRoute r;
    p.nlri().UnpackTo(&r);
    const bool ours = (r.labels_size() > 0 && r.labels(0) == ctx.vni) || r.ethernet_tag() == ctx.vni ||
                      at.rts.count(ctx.vni);
    if (!ours) return ignored(RouteIgnored::OtherVni);
    auto mac = parse_evpn_mac(r.mac_address());
    if (!mac) return ignored(RouteIgnored::MacMalformed);
    act.kind = EvpnRouteAction::Kind::MacIp;
    act.mac = *mac;
    act.vtep = *nh;
    act.seq = at.seq;
    return {act, {}};
  }
  if (p.nlri().Is<apipb::EVPNInclusiveMulticastEthernetTagRoute>()) {
    apipb::EVPNInclusiveMulticastEthernetTagRoute r;
    p.nlri().UnpackTo(&r);
    const bool ours = (at.pmsi_label && *at.pmsi_label == ctx.vni) || r.ethernet_tag() == ctx.vni ||
                      at.rts.count(ctx.vni);
    if (!ours) return ignored(RouteIgnored::OtherVni);
    // the replication target: the PMSI tunnel identifier, else the originator
    IpAddr vtep = *nh;
    if (at.pmsi_id.size() == 4 || at.pmsi_id.size() == 16) {
      vtep.family = at.pmsi_id.size() == 4 ? 4 : 6;
      vtep.bytes = {};
      std::copy(at.pmsi_id.begin(), at.pmsi_id.end(), vtep.bytes.begin());
    } else if (auto o = IpAddr::parse(r.ip_address())) {
      vtep = *o;
    }
    if (vtep == ctx.vtep) return ignored(RouteIgnored::Own);
    act.kind = EvpnRouteAction::Kind::InclusiveMulticast;
    act.vtep = vtep;
    return {act, {}};
  }
  return ignored(RouteIgnored::OtherRouteType);
}

}  // namespace ofld::daemon

#endif  // OFLD_HAVE_EVPN

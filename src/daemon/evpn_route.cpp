// EVPN route → FDB action; see evpn_route.hpp.
#ifdef OFLD_HAVE_EVPN

#include "evpn_route.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "attribute.pb.h"

namespace ofld::daemon {

namespace {

using tunnel::IpAddr;
using tunnel::Mac;

/// What the path attributes say: next hop text, MAC Mobility sequence number, route target
/// local admins, PMSI tunnel. `malformed` when an attribute (or extended community) of a type
/// we read has bytes that do not parse as that type.
struct Attrs {
  std::optional<std::string> next_hop;  ///< first NextHopAttribute or MP_REACH next hop
  std::uint32_t seq = 0;
  std::set<std::uint32_t> rts;
  std::optional<apipb::PmsiTunnelAttribute> pmsi;
  std::set<std::uint32_t> encaps;  ///< tunnel types of BGP Encapsulation communities
  bool malformed = false;
};

Attrs attrs(const apipb::Path& p) {
  Attrs r;
  for (const auto& a : p.pattrs()) {
    if (a.Is<apipb::NextHopAttribute>()) {
      apipb::NextHopAttribute nh;
      if (!a.UnpackTo(&nh)) r.malformed = true;
      else if (!r.next_hop) r.next_hop = nh.next_hop();
    } else if (a.Is<apipb::MpReachNLRIAttribute>()) {
      apipb::MpReachNLRIAttribute mp;
      if (!a.UnpackTo(&mp)) r.malformed = true;
      else if (!r.next_hop && mp.next_hops_size() > 0) r.next_hop = mp.next_hops(0);
    } else if (a.Is<apipb::ExtendedCommunitiesAttribute>()) {
      apipb::ExtendedCommunitiesAttribute ec;
      if (!a.UnpackTo(&ec)) {
        r.malformed = true;
        continue;
      }
      for (const auto& c : ec.communities()) {
        if (c.Is<apipb::MacMobilityExtended>()) {
          apipb::MacMobilityExtended mm;
          if (!c.UnpackTo(&mm)) r.malformed = true;
          r.seq = mm.sequence_num();
        } else if (c.Is<apipb::TwoOctetAsSpecificExtended>()) {
          apipb::TwoOctetAsSpecificExtended t;
          if (!c.UnpackTo(&t)) r.malformed = true;
          else if (t.sub_type() == 0x02) r.rts.insert(t.local_admin());
        } else if (c.Is<apipb::EncapExtended>()) {
          apipb::EncapExtended t;  // RFC 9012 §4.1 (RFC 8365 §5.1.3)
          if (!c.UnpackTo(&t)) r.malformed = true;
          else r.encaps.insert(t.tunnel_type());
        } else if (c.Is<apipb::FourOctetAsSpecificExtended>()) {
          apipb::FourOctetAsSpecificExtended t;
          if (!c.UnpackTo(&t)) r.malformed = true;
          else if (t.sub_type() == 0x02) r.rts.insert(t.local_admin());
        }
      }
    } else if (a.Is<apipb::PmsiTunnelAttribute>()) {
      apipb::PmsiTunnelAttribute pm;
      if (!a.UnpackTo(&pm)) r.malformed = true;
      else r.pmsi = std::move(pm);
    }
  }
  return r;
}

/// A textual address exactly (no NUL cut short by the C parser).
std::optional<IpAddr> parse_addr(const std::string& s) {
  if (s.find('\0') != std::string::npos) return std::nullopt;
  return IpAddr::parse(s);
}

/// The rule of a configured remote (config.cpp check_remote): unicast, not unspecified.
bool unicast(const IpAddr& a) {
  const auto& b = a.bytes;
  if (a.family == 4) return b[0] < 224 && (b[0] | b[1] | b[2] | b[3]) != 0;
  if (b[0] == 0xFF) return false;
  return std::any_of(b.begin(), b.end(), [](std::uint8_t x) { return x != 0; });
}

/// Why `v` cannot be a VTEP of ours (family, unicast, own), or nothing.
std::optional<RouteIgnored> vtep_unusable(const IpAddr& v, const EvpnRouteContext& ctx) {
  if (v.family != ctx.vtep.family) return RouteIgnored::NextHopFamily;
  if (!unicast(v)) return RouteIgnored::NextHopNotUnicast;
  if (v == ctx.vtep) return RouteIgnored::Own;
  return std::nullopt;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

EvpnRouteDecision ignored(RouteIgnored why) { return {std::nullopt, why}; }

/// GN-15: a route of our VNI is for us when one of its BGP Encapsulation communities names
/// our tunnel type; one without any is VXLAN's (RFC 8365 §5.1.3's "statically configured").
std::optional<RouteIgnored> other_encap(const Attrs& at, const EvpnRouteContext& ctx) {
  if (at.encaps.empty())
    return ctx.tunnel_type == kTunnelTypeVxlan ? std::nullopt : std::optional(RouteIgnored::NoEncapsulation);
  if (at.encaps.count(ctx.tunnel_type)) return std::nullopt;
  return RouteIgnored::OtherEncapsulation;
}

/// FNV-1a 64 over the key fields, each length-prefixed (no two field lists hash alike by
/// concatenation).
struct KeyHash {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void bytes(std::string_view s) {
    num(s.size());
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  }
  void num(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xFF)) * 0x100000001b3ull;
  }
};

void hash_rd(KeyHash& k, const google::protobuf::Any& rd) {
  k.bytes(rd.type_url());
  k.bytes(rd.value());
}

}  // namespace

std::optional<Mac> parse_evpn_mac(std::string_view s) noexcept {
  if (s.size() != 17) return std::nullopt;
  Mac m{};
  for (std::size_t i = 0; i < 6; ++i) {
    const int hi = hex(s[3 * i]), lo = hex(s[3 * i + 1]);
    if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':')) return std::nullopt;
    m[i] = std::uint8_t(hi << 4 | lo);
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
    case RouteIgnored::OtherEncapsulation: return "other-encapsulation";
    case RouteIgnored::NoEncapsulation: return "no-encapsulation";
  }
  return "unknown";
}

EvpnRouteDecision map_evpn_route(const apipb::Path& p, const EvpnRouteContext& ctx) {
  if (p.family().afi() != apipb::Family::AFI_L2VPN || p.family().safi() != apipb::Family::SAFI_EVPN)
    return ignored(RouteIgnored::NotEvpn);
  const Attrs at = attrs(p);
  if (at.malformed) return ignored(RouteIgnored::AttrMalformed);
  if (!at.next_hop || at.next_hop->empty()) return ignored(RouteIgnored::NoNextHop);
  const auto nh = parse_addr(*at.next_hop);
  if (!nh) return ignored(RouteIgnored::NextHopNotAddress);
  if (*nh == ctx.vtep) return ignored(RouteIgnored::Own);
  EvpnRouteAction act;
  act.withdraw = p.is_withdraw();
  if (p.nlri().Is<apipb::EVPNMACIPAdvertisementRoute>()) {
    apipb::EVPNMACIPAdvertisementRoute r;
    if (!p.nlri().UnpackTo(&r)) return ignored(RouteIgnored::NlriMalformed);
    // RFC 8365 §5.1.3: the VNI in the label; §5.1.2 Ethernet Tag; §5.1.2.1 route target AS:VNI
    const bool ours = (r.labels_size() > 0 && r.labels(0) == ctx.vni) || r.ethernet_tag() == ctx.vni ||
                      at.rts.count(ctx.vni);
    if (!ours) return ignored(RouteIgnored::OtherVni);
    if (auto why = other_encap(at, ctx)) return ignored(*why);
    const auto mac = parse_evpn_mac(r.mac_address());
    if (!mac) return ignored(RouteIgnored::MacMalformed);
    if (tunnel::Fdb::is_group(*mac) || *mac == Mac{}) return ignored(RouteIgnored::MacNotUnicast);
    if (auto why = vtep_unusable(*nh, ctx)) return ignored(*why);
    act.kind = EvpnRouteAction::Kind::MacIp;
    KeyHash k;
    k.num(2);
    hash_rd(k, r.rd());
    k.num(r.ethernet_tag());
    k.bytes(std::string_view(reinterpret_cast<const char*>(mac->data()), mac->size()));
    k.bytes(r.ip_address());
    act.route_id = k.h;
    act.mac = *mac;
    act.vtep = *nh;
    act.seq = at.seq;  // RFC 7432 §7.7 (0 without the community)
    return {act, {}};
  }
  if (p.nlri().Is<apipb::EVPNInclusiveMulticastEthernetTagRoute>()) {
    apipb::EVPNInclusiveMulticastEthernetTagRoute r;
    if (!p.nlri().UnpackTo(&r)) return ignored(RouteIgnored::NlriMalformed);
    const bool ours = (at.pmsi && at.pmsi->label() == ctx.vni) || r.ethernet_tag() == ctx.vni ||
                      at.rts.count(ctx.vni);
    if (!ours) return ignored(RouteIgnored::OtherVni);
    if (auto why = other_encap(at, ctx)) return ignored(*why);
    // The replication target (RFC 6514 §5, RFC 7432 §11.2): with ingress replication (tunnel
    // type 6) the PMSI tunnel identifier, the endpoint's address; otherwise (or without an
    // identifier) the originating router's IP address, else the next hop.
    constexpr std::uint32_t kIngressReplication = 6;
    IpAddr vtep = *nh;
    if (at.pmsi && at.pmsi->type() == kIngressReplication && !at.pmsi->id().empty()) {
      const std::string& id = at.pmsi->id();
      if (id.size() != 4 && id.size() != 16) return ignored(RouteIgnored::NextHopNotAddress);
      vtep.family = id.size() == 4 ? 4 : 6;
      vtep.bytes = {};
      std::copy(id.begin(), id.end(), vtep.bytes.begin());
    } else if (auto o = parse_addr(r.ip_address())) {
      vtep = *o;
    }
    if (auto why = vtep_unusable(vtep, ctx)) return ignored(*why);
    act.kind = EvpnRouteAction::Kind::InclusiveMulticast;
    KeyHash k;
    k.num(3);
    hash_rd(k, r.rd());
    k.num(r.ethernet_tag());
    k.bytes(r.ip_address());
    act.route_id = k.h;
    act.vtep = vtep;
    return {act, {}};
  }
  return ignored(RouteIgnored::OtherRouteType);
}

}  // namespace ofld::daemon

#endif  // OFLD_HAVE_EVPN

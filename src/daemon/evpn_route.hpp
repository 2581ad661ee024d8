// EVPN route → FDB action: what a route received from gobgpd's WatchEvent stream (an
// apipb::Path, built by gobgpd from an UPDATE of a remote BGP speaker, so untrusted) asks of
// the forwarding database. Pure: no I/O, no lock, no clock; GobgpClient::on_path applies the
// result (docs/evpn.md "The client"). Compiled only with the gRPC client (OFLD_HAVE_EVPN).
//
// Taken (RFC 7432, RFC 8365 VXLAN):
//  * type-2 MAC/IP Advertisement route (RFC 7432 §7.2) of our VNI → FDB entry MAC → next hop,
//    with the MAC Mobility sequence number (§7.7; 0 without the community);
//  * type-3 Inclusive Multicast Ethernet Tag route (§7.3) of our VNI → flood-list member: the
//    PMSI tunnel identifier when the tunnel type is ingress replication (RFC 6514 §5, type 6,
//    a 4- or 16-byte address), else the originating router's IP address;
//  * "of our VNI": the first label (RFC 8365 §5.1.3: the VNI in the 24-bit label field), for
//    type-3 the PMSI label, the Ethernet Tag (§5.1.2, VLAN-aware bundle) or a route target
//    ASN:VNI (§5.1.2.1) equals it;
//  * of our encapsulation (RFC 8365 §5.1.3, RFC 9012 §4.1 / IANA "BGP Tunnel Encapsulation
//    Attribute Tunnel Types": 8 VXLAN, 19 Geneve): a route carrying BGP Encapsulation extended
//    communities is taken when one of them names our tunnel type (a route may list several);
//    a route without one is taken by a VXLAN endpoint only — RFC 8365 leaves such a route to
//    "MPLS or a statically configured encapsulation", and in the fabrics ofld meets it comes
//    from a VXLAN-only VTEP (ofld before Geneve EVPN took every route as VXLAN) — never by a
//    Geneve endpoint (GN-15);
//  * withdrawals (Path.is_withdraw) give the same action with `withdraw` set.
// Everything else is ignored with a named reason (RouteIgnored): other families or route
// types, our own routes, other VNIs, and malformed content — an Any whose bytes do not parse,
// a next hop or VTEP that is not a textual IP address, is of the other address family than
// our VTEP, or is not unicast (the rule of a configured `remote`), a MAC that is not six
// octets "xx:xx:xx:xx:xx:xx" or is a group or all-zero MAC (never an FDB entry), and routes
// of another encapsulation (or, for Geneve, of none named).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ofld/tunnel/fdb.hpp"

#include "evpn.hpp"  // kTunnelTypeVxlan, kTunnelTypeGeneve

#include "gobgp.pb.h"

namespace ofld::daemon {

/// Our side of the mapping.
struct EvpnRouteContext {
  tunnel::IpAddr vtep;    ///< our VTEP (underlay address): routes from it are our own
  std::uint32_t vni = 0;  ///< our VNI (24 bits)
  /// Our encapsulation as a BGP tunnel type (kTunnelTypeVxlan or kTunnelTypeGeneve): what we
  /// advertise in the BGP Encapsulation extended community and what a route must name.
  std::uint16_t tunnel_type = 8;
};


/// What a taken route asks of the FDB.
struct EvpnRouteAction {
  enum class Kind : std::uint8_t {
    MacIp,               ///< type-2: FDB entry `mac` → `vtep` (SharedFdb::set_evpn / remove_evpn)
    InclusiveMulticast,  ///< type-3: flood member `vtep` (add_flood / remove_flood, source Evpn)
  };
  Kind kind = Kind::MacIp;
  bool withdraw = false;  ///< the route was withdrawn: remove what it added
  tunnel::Mac mac{};      ///< type-2 only
  tunnel::IpAddr vtep;    ///< type-2: the next hop; type-3: the replication target
  std::uint32_t seq = 0;  ///< type-2: MAC Mobility sequence number (RFC 7432 §7.7), else 0
  /// The route's identity (EvpnRib::RouteId): a 64-bit hash of the NLRI's key fields —
  /// type-2: RD, Ethernet tag, MAC, IP (RFC 7432 §7.2: not the ESI, not the labels);
  /// type-3: RD, Ethernet tag, originating router's IP (§7.3).
  std::uint64_t route_id = 0;
  friend bool operator==(const EvpnRouteAction&, const EvpnRouteAction&) = default;
};

/// Why a route was not taken.
enum class RouteIgnored : std::uint8_t {
  NotEvpn,            ///< family is not l2vpn-evpn (AFI 25, SAFI 70)
  OtherRouteType,     ///< NLRI is another EVPN route type (1, 4, 5, ...) or no EVPN route
  NlriMalformed,      ///< the NLRI Any's bytes do not parse as its type
  AttrMalformed,      ///< a path attribute (or extended community) Any does not parse
  NoNextHop,          ///< neither NextHopAttribute nor MpReachNLRIAttribute with a next hop
  NextHopNotAddress,  ///< next hop (or PMSI id / originator used as VTEP) not an IP address
  NextHopFamily,      ///< next hop / VTEP of the other address family than our VTEP
  NextHopNotUnicast,  ///< next hop / VTEP multicast, broadcast or unspecified
  Own,                ///< next hop (type-3: VTEP) is our VTEP: our own route
  OtherVni,           ///< no label, PMSI label, Ethernet Tag or route target names our VNI
  MacMalformed,       ///< MAC address not six hex octets separated by ':'
  MacNotUnicast,      ///< group (I/G bit) or all-zero MAC
  OtherEncapsulation, ///< BGP Encapsulation communities, none naming our tunnel type
  NoEncapsulation,    ///< no BGP Encapsulation community, and we are not VXLAN (GN-15)
};
/// "not-evpn", "other-route-type", "nlri-malformed", "attr-malformed", "no-next-hop",
/// "next-hop-not-address", "next-hop-family", "next-hop-not-unicast", "own", "other-vni",
/// "mac-malformed", "mac-not-unicast", "other-encapsulation", "no-encapsulation".
std::string_view to_string(RouteIgnored r) noexcept;

/// The decision for one route: an action, or the reason it is ignored.
struct EvpnRouteDecision {
  std::optional<EvpnRouteAction> action;
  RouteIgnored reason = RouteIgnored::NotEvpn;  ///< meaningful only without `action`
};

/// Map one received path (as in WatchEventResponse.table.paths: NLRI and attributes as Any
/// messages; or ListPath's with enable_only_binary: `nlri_binary` and `pattrs_binary` as in
/// the UPDATE, RFC 7432 §7 and RFC 4271 §4.3 — one route has one `route_id` in both forms) to
/// its FDB action. Never throws; reads only what the message holds.
EvpnRouteDecision map_evpn_route(const apipb::Path& p, const EvpnRouteContext& ctx);

/// Strict MAC text as gobgpd writes it (Go net.HardwareAddr.String(): six two-digit hex
/// octets separated by ':'; upper case accepted). nullopt for anything else.
std::optional<tunnel::Mac> parse_evpn_mac(std::string_view s) noexcept;

}  // namespace ofld::daemon

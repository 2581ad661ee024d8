// The BGP EVPN client of `ofld tunnel` (docs/evpn.md): talks to a running gobgpd through its
// gRPC API (GobgpApi: GetBgp, AddPath, DeletePath, WatchEvent). Wiring only — what an entry
// means is tunnel::SharedFdb's (set_evpn / remove_evpn / add_flood / remove_flood / locals).
//
// Advertises (RFC 7432, RFC 8365 VXLAN encapsulation): one type-3 inclusive multicast route
// for the VNI (RD vtep:vni, ethernet tag 0, originator = VTEP, PMSI tunnel attribute ingress
// replication with the VNI as label), and one type-2 MAC/IP route per local MAC (the FDB's
// locals(), learned from frames read from the TAP; label = VNI; MAC Mobility extended
// community with the local's sequence number when > 0), both with next hop = VTEP, route
// target ASN:VNI (the ASN from gobgpd) and the BGP Encapsulation extended community of our
// encapsulation (RFC 9012 tunnel type 8 VXLAN, 19 Geneve; GN-14). A local MAC that ages out, or moves away, is withdrawn within one
// sync period (kSyncMs); every route is withdrawn when the client stops.
//
// Receives (the table through ListPath, then the changes through WatchEvent; best paths): type-2 routes
// of our VNI and encapsulation (evpn_route.hpp) from another VTEP program FDB entries (withdrawn: removed); type-3 routes make
// the flood list. Our own routes (next hop = our VTEP) are ignored.
//
// gobgpd down (every call has a deadline of kRpcTimeoutMs; while connected, GetBgp is asked
// every kRetryMs, and 5 unanswered in a row mean a hung gobgpd): logged once, retried every
// kRetryMs; the FDB keeps what it has, so forwarding continues; on reconnection every route
// is advertised again and the table read again. A call refused, or a deadline missed on a
// connected channel (a busy gobgpd), is retried at the next sync without reconnecting.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "ofld/tunnel/fdb.hpp"

#include "evpn_rib.hpp"

namespace ofld::daemon {

/// Token bucket for new type-2 advertisements (a local MAC not yet advertised, or advertised
/// with another sequence number): `per_s` a second on average, `burst` at once. What it
/// postpones is advertised at a later sync (counted: "advertise_deferred" in state()).
/// Times are monotonic nanoseconds.
class AdvertiseLimiter {
 public:
  AdvertiseLimiter(std::uint32_t per_s, std::uint32_t burst) noexcept
      : per_s_(per_s), burst_(burst), tokens_(double(burst)) {}
  /// True (and one token spent) when one more advertisement may go out at `now_ns`.
  bool take(std::uint64_t now_ns) noexcept {
    if (now_ns > last_ns_) {
      tokens_ = std::min(double(burst_), tokens_ + double(now_ns - last_ns_) * per_s_ / 1e9);
      last_ns_ = now_ns;
    }
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }

 private:
  std::uint32_t per_s_, burst_;
  double tokens_;
  std::uint64_t last_ns_ = 0;
};

/// RFC 9012 / IANA "BGP Tunnel Encapsulation Attribute Tunnel Types" (RFC 8365 §5.1.3): the
/// tunnel type of the BGP Encapsulation extended community for VXLAN and for Geneve.
inline constexpr std::uint16_t kTunnelTypeVxlan = 8;
inline constexpr std::uint16_t kTunnelTypeGeneve = 19;

struct EvpnOptions {
  std::string server;  ///< gobgpd gRPC address, HOST:PORT
  tunnel::IpAddr vtep; ///< our underlay address (next hop, originator, RD admin)
  std::uint32_t vni = 0;
  /// Our encapsulation as a BGP tunnel type (evpn_route.hpp: 8 VXLAN, 19 Geneve): advertised
  /// in the BGP Encapsulation extended community, and the routes taken must name it.
  std::uint16_t tunnel_type = kTunnelTypeVxlan;
  std::shared_ptr<tunnel::SharedFdb> fdb;
  /// `router-id A.B.C.D`: the administrator field of our type-1 Route Distinguishers
  /// (RFC 7432 §7.9: router-id:VNI). Unset: default_router_id(vtep).
  tunnel::IpAddr router_id;
  DupAddrDetection dad;  ///< `dup-addr-detection ...` (evpn_rib.hpp)
};

/// FRR's default BGP router ID for a VTEP: an IPv4 VTEP itself; else the highest IPv4
/// address of a loopback interface, else of any interface (zebra's router-id choice); else
/// 0.0.0.0 (then every IPv6-only VTEP of a VNI would share one RD: configure `router-id`).
tunnel::IpAddr default_router_id(const tunnel::IpAddr& vtep);

class EvpnClient {
 public:
  static constexpr int kSyncMs = 100;        ///< local MACs → routes, at most this late
  static constexpr int kRpcTimeoutMs = 2000; ///< deadline of each unary call
  static constexpr int kRetryMs = 1000;      ///< reconnect period while gobgpd is down
  static constexpr int kListMs = 120000;     ///< deadline of the ListPath that reads the table
  /// gRPC receive limit (default 4 MiB): a WatchEvent message holds the paths of one UPDATE,
  /// each with the UPDATE's whole MP_REACH_NLRI (docs/evpn.md "Scale").
  static constexpr int kMaxMessage = 256 << 20;
  /// HTTP/2 stream window of the long-lived gobgpd connection (WatchEvent, unary calls).
  static constexpr int kWatchWindow = 1 << 20;
  /// After a reconnection, entries programmed before it that no route has confirmed within
  /// this time of the last confirmation are removed (gobgpd restarted without them) ...
  static constexpr int kStaleMs = 15000;
  /// ... and at the latest this long after the reconnection (FRR's default
  /// `bgp graceful-restart restart-time`).
  static constexpr int kStaleMaxMs = 120000;
  /// New type-2 advertisements: at most kAdvertisePerSec a second on average, kAdvertiseBurst
  /// at once (a guest sending from random source MACs fills local-maxaddress, and through
  /// BGP every VTEP's FDB, no faster than this).
  static constexpr std::uint32_t kAdvertisePerSec = 100;
  static constexpr std::uint32_t kAdvertiseBurst = 500;

  virtual ~EvpnClient() = default;
  /// {"server", "connected", "asn", "router_id", "advertised_macs", "remote_macs", "vteps",
  ///  "mac_routes", "imet_routes" (the route set, evpn_rib.hpp), "stale_routes" (not
  ///  received again since the last reconnection), "connects", "failures"
  ///  (lost connections), "refused" {call: count} (calls gobgpd answered with an error: not
  ///  a lost connection; retried), "slow" {call: count} (deadlines missed while connected),
  ///  "withdraw_pending" (our routes whose withdrawal is being
  ///  retried), "ignored": {reason: routes} (reasons: evpn_route.hpp), "advertise_deferred"
  ///  (new type-2 advertisements postponed by the rate limit: one per MAC per sync pass),
  ///  "moves", "duplicates_detected", "duplicate_macs": EvpnRib::duplicates_json}.
  virtual nlohmann::json state() const = 0;
};

/// Start the client (its threads connect in the background). nullptr with `error` set when
/// this build has no gRPC (OFLD_HAVE_EVPN off).
std::unique_ptr<EvpnClient> start_evpn(const EvpnOptions& o, std::string& error);

}  // namespace ofld::daemon

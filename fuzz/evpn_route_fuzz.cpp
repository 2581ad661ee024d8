// libFuzzer target (issue 18): bytes from gobgpd's WatchEvent stream → the EVPN route mapping
// (src/daemon/evpn_route.hpp) → the FDB. The input is parsed as an apipb::Path and as an
// apipb::WatchEventResponse (every table path); each message is mapped for an IPv4 and an
// IPv6 VTEP. Besides never crashing or over-reading: a taken route's VTEP is unicast, of our
// family and not ours, a type-2 MAC is unicast and non-zero, a type-3 carries no sequence
// number, and the decision survives a serialize/parse round trip unchanged. Actions are
// applied to a tunnel::Fdb as GobgpClient::on_path does. Seeds: fuzz/evpn_route_seeds.sh.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "../src/daemon/evpn_route.hpp"
#include "gobgp.pb.h"
#include "ofld/tunnel/fdb.hpp"

namespace {

using namespace ofld;

bool unicast(const tunnel::IpAddr& a) {
  const auto& b = a.bytes;
  if (a.family == 4) return b[0] < 224 && (b[0] | b[1] | b[2] | b[3]) != 0;
  if (b[0] == 0xFF) return false;
  for (auto x : b)
    if (x) return true;
  return false;
}

void check(const apipb::Path& p, const daemon::EvpnRouteContext& ctx, tunnel::Fdb& fdb, std::uint64_t& now) {
  const auto d = daemon::map_evpn_route(p, ctx);
  if (d.action) {
    const auto& a = *d.action;
    if (a.vtep.family != ctx.vtep.family || a.vtep == ctx.vtep || !unicast(a.vtep)) std::abort();
    if (a.kind == daemon::EvpnRouteAction::Kind::MacIp) {
      if (tunnel::Fdb::is_group(a.mac) || a.mac == tunnel::Mac{}) std::abort();
      if (a.withdraw) fdb.remove_evpn(a.mac, a.vtep);
      else fdb.set_evpn(a.mac, a.vtep, a.seq, now);
    } else {
      if (a.seq != 0) std::abort();
      if (a.withdraw) fdb.remove_flood(a.vtep, tunnel::FdbSource::Evpn);
      else fdb.add_flood(a.vtep, tunnel::FdbSource::Evpn);
    }
  } else if (daemon::to_string(d.reason).empty()) {
    std::abort();
  }
  // the same message, serialized and parsed again, gets the same decision
  apipb::Path q;
  if (!q.ParseFromString(p.SerializeAsString())) std::abort();
  const auto e = daemon::map_evpn_route(q, ctx);
  if (e.action != d.action || (!d.action && e.reason != d.reason)) std::abort();
  now += 1000;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const daemon::EvpnRouteContext v4{*tunnel::IpAddr::parse("10.0.0.1"), 100};
  static const daemon::EvpnRouteContext v6{*tunnel::IpAddr::parse("2001:db8::1"), 100};
  // Copy into an exactly sized buffer so ASan sees any over-read.
  std::vector<std::uint8_t> buf(data, data + size);
  tunnel::Fdb fdb4, fdb6;
  std::uint64_t now = 1;
  apipb::Path p;
  if (p.ParseFromArray(buf.data(), int(buf.size()))) {
    check(p, v4, fdb4, now);
    check(p, v6, fdb6, now);
  }
  apipb::WatchEventResponse ev;
  if (ev.ParseFromArray(buf.data(), int(buf.size())) && ev.has_table()) {
    for (const auto& path : ev.table().paths()) {
      check(path, v4, fdb4, now);
      check(path, v6, fdb6, now);
    }
  }
  fdb4.lookup(tunnel::Mac{0x52, 0x54, 0, 0x12, 0x34, 0x56}, now);
  fdb6.age(now);
  return 0;
}

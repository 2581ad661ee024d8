// libFuzzer target (issue 18): bytes from gobgpd's WatchEvent stream → the EVPN route mapping
// (src/daemon/evpn_route.hpp) → the FDB. The input is parsed as an apipb::Path and as an
// apipb::WatchEventResponse (every table path); each message is mapped for an IPv4 and an
// IPv6 VTEP. Besides never crashing or over-reading: a taken route's VTEP is unicast, of our
// family and not ours, a type-2 MAC is unicast and non-zero, a type-3 carries no sequence
// number, and the decision survives a serialize/parse round trip unchanged. Actions are
// applied to the route set (daemon::EvpnRib over a tunnel::SharedFdb) as GobgpClient::on_path
// does; a type-2 withdrawal of a route the set holds as its MAC's only route leaves no
// entry; `ofld fdb`'s document of the resulting table is the same however it is cut into
// pieces, and valid JSON. Seeds: fuzz/evpn_route_seeds.sh.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "../src/daemon/evpn_rib.hpp"
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

void check(const apipb::Path& p, const daemon::EvpnRouteContext& ctx, daemon::EvpnRib& rib,
           tunnel::SharedFdb& fdb, std::uint64_t& now) {
  const auto d = daemon::map_evpn_route(p, ctx);
  if (d.action) {
    const auto& a = *d.action;
    if (a.vtep.family != ctx.vtep.family || a.vtep == ctx.vtep || !unicast(a.vtep)) std::abort();
    if (a.kind == daemon::EvpnRouteAction::Kind::MacIp) {
      if (tunnel::Fdb::is_group(a.mac) || a.mac == tunnel::Mac{}) std::abort();
      if (a.withdraw) {
        const std::size_t before = rib.mac_routes(), macs = rib.remote_macs();
        rib.withdraw_mac(a.route_id, a.mac, now);
        // the MAC's last route gone: no EVPN entry may stay
        if (rib.mac_routes() + 1 == before && rib.remote_macs() + 1 == macs) {
          auto e = fdb.find(a.mac);
          if (e && e->source == tunnel::FdbSource::Evpn) std::abort();
        }
      } else {
        rib.update_mac(a.route_id, a.mac, a.vtep, a.seq, now);
      }
    } else {
      if (a.seq != 0) std::abort();
      if (a.withdraw) rib.withdraw_imet(a.route_id);
      else rib.update_imet(a.route_id, a.vtep);
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
  auto fdb4 = std::make_shared<tunnel::SharedFdb>(), fdb6 = std::make_shared<tunnel::SharedFdb>();
  daemon::DupAddrDetection dad;
  dad.max_moves = 2;
  dad.freeze_s = 30;  // duplicate detection and freeze reachable with few routes
  daemon::EvpnRib rib4(fdb4, dad), rib6(fdb6, dad);
  std::uint64_t now = 1;
  apipb::Path p;
  if (p.ParseFromArray(buf.data(), int(buf.size()))) {
    check(p, v4, rib4, *fdb4, now);
    check(p, v6, rib6, *fdb6, now);
  }
  apipb::WatchEventResponse ev;
  if (ev.ParseFromArray(buf.data(), int(buf.size())) && ev.has_table()) {
    for (const auto& path : ev.table().paths()) {
      check(path, v4, rib4, *fdb4, now);
      check(path, v6, rib6, *fdb6, now);
    }
  }
  // `ofld fdb`'s document (FdbJsonCursor) cut into pieces of 1..8 entries is the document
  // written whole, valid JSON with one member per entry of the table.
  for (auto* f : {fdb4.get(), fdb6.get()}) {
    tunnel::FdbJsonCursor c(*f, now + 5);
    std::string pieces, whole;
    for (std::size_t pos = 0; pos != tunnel::FdbJsonCursor::kEnd;) pos = c.write(pieces, pos, 1 + size % 8);
    f->write_json(whole, now + 5);
    if (pieces != whole) std::abort();
    const auto j = nlohmann::json::parse(whole, nullptr, false);
    if (j.is_discarded() || j["entries"].size() != f->size()) std::abort();
  }
  rib4.begin_resync();
  rib4.end_resync(now);  // nothing received again: everything withdrawn
  if (rib4.mac_routes() || rib4.imet_routes() || fdb4->size()) std::abort();
  rib6.tick(now + 3600000000000ull);
  std::vector<tunnel::IpAddr> out;
  fdb6->lookup(tunnel::Mac{0x52, 0x54, 0, 0x12, 0x34, 0x56}, now, out);
  return 0;
}

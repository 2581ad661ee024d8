// The BGP EVPN client over gobgpd's gRPC API (src/daemon/evpn.hpp, docs/evpn.md).
#include "evpn.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstring>

namespace ofld::daemon {

tunnel::IpAddr default_router_id(const tunnel::IpAddr& vtep) {
  if (vtep.family == 4) return vtep;
  tunnel::IpAddr best_lo, best_any;
  ifaddrs* ifs = nullptr;
  if (::getifaddrs(&ifs) == 0) {
    for (ifaddrs* i = ifs; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
      tunnel::IpAddr a;
      a.family = 4;
      const auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      std::memcpy(a.bytes.data(), &sin->sin_addr, 4);
      if (a.bytes[0] == 127) continue;  // zebra skips 127/8
      tunnel::IpAddr& best = (i->ifa_flags & IFF_LOOPBACK) ? best_lo : best_any;
      if (best.empty() || best < a) best = a;
    }
    ::freeifaddrs(ifs);
  }
  if (!best_lo.empty()) return best_lo;
  if (!best_any.empty()) return best_any;
  tunnel::IpAddr zero;
  zero.family = 4;
  return zero;
}

}  // namespace ofld::daemon

#ifndef OFLD_HAVE_EVPN

namespace ofld::daemon {
std::unique_ptr<EvpnClient> start_evpn(const EvpnOptions&, std::string& error) {
  error = "evpn: this ofld was built without the gRPC client (install the packages of "
          "scripts/deps.sh: libgrpc++-dev, protobuf-compiler-grpc, golang-github-osrg-gobgp-dev; "
          "then reconfigure)";
  return nullptr;
}
}  // namespace ofld::daemon

#else

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "attribute.pb.h"
#include "gobgp.grpc.pb.h"
#include "gobgp.pb.h"

#include "evpn_route.hpp"

namespace ofld::daemon {

namespace {

using tunnel::IpAddr;
using tunnel::LocalMac;
using tunnel::Mac;

std::uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

std::string mac_str(const Mac& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

apipb::Family evpn_family() {
  apipb::Family f;
  f.set_afi(apipb::Family::AFI_L2VPN);
  f.set_safi(apipb::Family::SAFI_EVPN);
  return f;
}

class GobgpClient final : public EvpnClient {
 public:
  explicit GobgpClient(EvpnOptions o) : o_(std::move(o)), rib_(o_.fdb, o_.dad) {
    if (o_.router_id.empty()) o_.router_id = default_router_id(o_.vtep);
    o_.fdb->set_own_vtep(o_.vtep);
    // gRPC's reconnect backoff grows to 2 minutes by default: keep it at our retry period, so
    // a gobgpd that comes (back) up is found within about kRetryMs.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kRetryMs / 2);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kRetryMs / 2);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kRetryMs);
    // One WatchEvent message carries the paths of one UPDATE, each with the UPDATE's whole
    // MP_REACH_NLRI (gobgpd): about 120 × 120 NLRIs in a 4,096-byte UPDATE, ~2 MB; with
    // extended messages (RFC 8654) more. The table itself is read with ListPath.
    args.SetMaxReceiveMessageSize(kMaxMessage);
    args_ = args;  // the table read's connection: gRPC's defaults (closed after the read)
    // The long-lived connection's HTTP/2 window is fixed (no BDP probing, which grows it to
    // megabytes under a burst): gRPC's TCP reader sizes its read-ahead by its largest read
    // and keeps the unused part between reads, so the window bounds what stays allocated
    // after a burst such as a withdrawal of all (docs/evpn.md "Scale").
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kWatchWindow);
    channel_ = grpc::CreateCustomChannel(o_.server, grpc::InsecureChannelCredentials(), args);
    stub_ = apipb::GobgpApi::NewStub(channel_);
    sync_ = std::thread([this] { sync_loop(); });
  }

  ~GobgpClient() override {
    {
      std::lock_guard g(mu_);
      stop_ = true;
      if (watch_ctx_) watch_ctx_->TryCancel();
      if (list_ctx_) list_ctx_->TryCancel();
    }
    cv_.notify_all();
    if (sync_.joinable()) sync_.join();
    if (watch_.joinable()) watch_.join();
  }

  nlohmann::json state() const override {
    std::lock_guard g(mu_);
    return {{"server", o_.server}, {"connected", connected_.load()}, {"asn", asn_.load()},
            {"router_id", o_.router_id.to_string()},
            {"advertised_macs", advertised_n_.load()}, {"remote_macs", rib_.remote_macs()},
            {"vteps", rib_.vteps()}, {"mac_routes", rib_.mac_routes()}, {"imet_routes", rib_.imet_routes()},
            {"stale_routes", rib_.stale_routes()},
            {"connects", connects_}, {"failures", failures_}, {"refused", refused_}, {"slow", slow_},
            {"withdraw_pending", withdraw_pending_n_.load()},
            {"ignored", ignored_}, {"advertise_deferred", deferred_.load()}, {"moves", rib_.moves()},
            {"duplicates_detected", rib_.duplicates_detected()}, {"heap_trims", trims_.load()},
            {"duplicate_macs", rib_.duplicates_json(mono_ns())}};
  }

 private:
  // ---- routes we advertise
  google::protobuf::Any rd() const {
    // RFC 7432 §7.9: type 1, the router ID (an IPv4 address) : a number of this EVI
    apipb::RouteDistinguisherIPAddress r;
    r.set_admin(o_.router_id.to_string());
    r.set_assigned(o_.vni & 0xFFFF);
    google::protobuf::Any a;
    a.PackFrom(r);
    return a;
  }

  void common_attrs(apipb::Path& p, std::uint32_t mac_seq, bool with_seq) const {
    apipb::OriginAttribute origin;
    origin.set_origin(0);  // IGP
    p.add_pattrs()->PackFrom(origin);
    apipb::NextHopAttribute nh;
    nh.set_next_hop(o_.vtep.to_string());
    p.add_pattrs()->PackFrom(nh);
    apipb::ExtendedCommunitiesAttribute ec;
    apipb::TwoOctetAsSpecificExtended rt;  // route target ASN:VNI (RFC 8365 §5.1.2.1)
    rt.set_is_transitive(true);
    rt.set_sub_type(0x02);
    rt.set_asn(asn_ & 0xFFFF);
    rt.set_local_admin(o_.vni);
    ec.add_communities()->PackFrom(rt);
    apipb::EncapExtended enc;  // ours: 8 VXLAN, 19 Geneve (RFC 9012, RFC 8365 §5.1.3; GN-14)
    enc.set_tunnel_type(o_.tunnel_type);
    ec.add_communities()->PackFrom(enc);
    if (with_seq) {
      apipb::MacMobilityExtended mm;  // RFC 7432 §7.7
      mm.set_sequence_num(mac_seq);
      ec.add_communities()->PackFrom(mm);
    }
    p.add_pattrs()->PackFrom(ec);
  }

  apipb::Path type3_path() const {
    apipb::Path p;
    apipb::EVPNInclusiveMulticastEthernetTagRoute r;
    *r.mutable_rd() = rd();
    r.set_ethernet_tag(0);
    r.set_ip_address(o_.vtep.to_string());
    p.mutable_nlri()->PackFrom(r);
    *p.mutable_family() = evpn_family();
    common_attrs(p, 0, false);
    apipb::PmsiTunnelAttribute pmsi;  // RFC 6514 §5, ingress replication (6), label = VNI
    pmsi.set_flags(0);
    pmsi.set_type(6);
    pmsi.set_label(o_.vni);
    pmsi.set_id(std::string(reinterpret_cast<const char*>(o_.vtep.bytes.data()), o_.vtep.is_v6() ? 16 : 4));
    p.add_pattrs()->PackFrom(pmsi);
    return p;
  }

  apipb::Path type2_path(const Mac& m, std::uint32_t seq) const {
    apipb::Path p;
    apipb::EVPNMACIPAdvertisementRoute r;
    *r.mutable_rd() = rd();
    r.mutable_esi()->set_type(0);
    r.mutable_esi()->set_value(std::string(9, '\0'));
    r.set_ethernet_tag(0);
    r.set_mac_address(mac_str(m));
    r.set_ip_address("");
    r.add_labels(o_.vni);
    p.mutable_nlri()->PackFrom(r);
    *p.mutable_family() = evpn_family();
    common_attrs(p, seq, seq > 0);
    return p;
  }

  /// The connection is lost: these codes, and a deadline missed while the channel is not
  /// connected. A deadline missed on a connected channel is a slow gobgpd (installing
  /// 100,000 routes takes it seconds): retried, not a reconnection — which would read the
  /// whole table again and keep it slow; alive() declares a hung gobgpd after kHungChecks
  /// unanswered checks in a row. Any other error is gobgpd refusing the call.
  bool connection_lost(const grpc::Status& s) const {
    switch (s.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
      case grpc::StatusCode::CANCELLED:
      case grpc::StatusCode::UNIMPLEMENTED:  // not gobgpd's API at that address
        return true;
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        // busy: connected and still sending events (installing routes); hung (stopped): silent
        return channel_->GetState(false) != GRPC_CHANNEL_READY ||
               mono_ns() - last_event_ns_.load(std::memory_order_relaxed) > kBusyEventNs;
      default:
        return false;
    }
  }

  enum class Call : std::uint8_t { Ok, Refused, Lost };

  Call call_result(const grpc::Status& s, const char* what) {
    if (s.ok()) return Call::Ok;
    const std::string why = std::string(what) + ": " + s.error_message() + " (" + std::to_string(int(s.error_code())) + ")";
    if (connection_lost(s)) {
      down(why);
      return Call::Lost;
    }
    std::uint64_t n;
    {
      std::lock_guard g(mu_);
      n = s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? ++slow_[what] : ++refused_[what];
    }
    // one line per power of two: a refusal repeated every sync does not flood the log
    if ((n & (n - 1)) == 0)
      spdlog::warn("evpn: gobgpd {} {} ({} such so far); retried",
                   s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? "did not answer in time:" : "refused", why, n);
    return Call::Refused;
  }

  bool call_ok(const grpc::Status& s, const char* what) { return call_result(s, what) == Call::Ok; }

  void deadline(grpc::ClientContext& c, int ms = kRpcTimeoutMs) {
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
  }

  Call add_r(const apipb::Path& p, const char* what) {
    apipb::AddPathRequest req;
    req.set_table_type(apipb::GLOBAL);
    *req.mutable_path() = p;
    apipb::AddPathResponse resp;
    grpc::ClientContext c;
    deadline(c);
    return call_result(stub_->AddPath(&c, req, &resp), what);
  }
  bool add(const apipb::Path& p, const char* what) { return add_r(p, what) == Call::Ok; }

  Call del_r(const apipb::Path& p, const char* what, int ms = kRpcTimeoutMs) {
    apipb::DeletePathRequest req;
    req.set_table_type(apipb::GLOBAL);
    *req.mutable_family() = evpn_family();
    *req.mutable_path() = p;
    google::protobuf::Empty resp;
    grpc::ClientContext c;
    deadline(c, ms);
    return call_result(stub_->DeletePath(&c, req, &resp), what);
  }
  bool del(const apipb::Path& p, const char* what, int ms = kRpcTimeoutMs) { return del_r(p, what, ms) == Call::Ok; }

  /// Withdraw our type-2 route for `m`. Sent without the MAC Mobility community: a
  /// withdrawal is matched by its NLRI (RFC 4271 §4.3), and gobgpd applies its mobility
  /// check to a DeletePath that carries one — refusing the withdrawal of a MAC that moved
  /// away (the remote route has the higher sequence number).
  Call withdraw_mac(const Mac& m, int ms = kRpcTimeoutMs) {
    return del_r(type2_path(m, 0), "DeletePath type-2", ms);
  }

  // ---- connection state: logged once per outage
  void down(const std::string& why) {
    // One decision under mu_: the sync thread's failed call and the watch stream it cancels
    // (or that ends by itself) report the same outage, often at the same moment.
    bool log;
    {
      std::lock_guard g(mu_);
      ++failures_;
      const bool was = connected_.exchange(false);
      if (watch_ctx_) watch_ctx_->TryCancel();
      if (list_ctx_) list_ctx_->TryCancel();
      log = was || !warned_;
      warned_ = true;
    }
    if (log) {
      spdlog::warn("evpn: gobgpd at {}: {}; retrying every {} ms, forwarding continues on the FDB as it is",
                   o_.server, why, kRetryMs);
    } else {
      spdlog::debug("evpn: gobgpd at {}: {}", o_.server, why);
    }
  }

  bool connect() {
    apipb::GetBgpRequest req;
    apipb::GetBgpResponse resp;
    grpc::ClientContext c;
    deadline(c);
    if (!call_ok(stub_->GetBgp(&c, req, &resp), "GetBgp")) return false;
    if (resp.global().asn() == 0) {
      down("BGP not started in gobgpd (no global AS)");
      return false;
    }
    asn_ = resp.global().asn();
    if (watch_.joinable()) watch_.join();  // the previous stream ended
    // Advertise everything again; what we advertised before for a MAC that is no longer
    // ours may still be in gobgpd's RIB (a lost connection is not a restarted gobgpd):
    // withdraw it until gobgpd agrees.
    {
      const auto locals = o_.fdb->locals();
      for (const auto& [mac, seq] : advertised_)
        if (!locals.count(mac)) withdraw_pending_.insert(mac);
      advertised_.clear();
      withdraw_pending_n_ = withdraw_pending_.size();
    }
    {
      // What the previous session programmed stays (forwarding continues) but is stale until
      // a route confirms it; what is still unconfirmed kStaleMs after the last confirmation
      // (kStaleMaxMs at most) is removed (a gobgpd that restarted may never withdraw routes it
      // no longer has).
      std::lock_guard g(mu_);
      rib_.begin_resync();
      stale_timer_.begin(mono_ns(), rib_.stale_routes());
    }
    if (!add(type3_path(), "AddPath type-3")) return false;
    {
      std::lock_guard g(mu_);
      watch_ctx_ = std::make_unique<grpc::ClientContext>();
      ++connects_;
      connected_ = true;
      warned_ = false;  // the next failure is a new outage
    }
    watch_ = std::thread([this] { watch_loop(); });
    spdlog::info("evpn: gobgpd at {}: connected (AS {}), VNI {} advertised from VTEP {}", o_.server,
                 asn_.load(), o_.vni, o_.vtep.to_string());
    return true;
  }

  // Local MACs → type-2 routes (new or re-sequenced: AddPath; gone: DeletePath).
  bool sync_locals() {
    const auto locals = o_.fdb->locals();
    const std::uint64_t now = mono_ns();
    // MACs that stopped being ours (aged out, moved away): the route set decides again
    for (const auto& [mac, seq] : known_locals_)
      if (!locals.count(mac)) {
        std::lock_guard g(mu_);
        rib_.local_gone(mac, now);
      }
    for (const auto& [mac, l] : locals)
      if (!known_locals_.count(mac)) {
        std::lock_guard g(mu_);
        rib_.local_appeared(mac, now);
      }
    known_locals_ = locals;
    for (auto it = advertised_.begin(); it != advertised_.end();) {
      auto l = locals.find(it->first);
      if (l != locals.end() && l->second.seq == it->second) {
        ++it;
        continue;
      }
      if (l == locals.end()) withdraw_pending_.insert(it->first);
      // a new sequence number: the AddPath below replaces the route (same NLRI)
      it = advertised_.erase(it);
    }
    // Withdrawals: retried every sync until gobgpd takes them (refused: kept; lost: reconnect)
    for (auto it = withdraw_pending_.begin(); it != withdraw_pending_.end();) {
      if (locals.count(*it)) {  // ours again before the withdrawal went through
        it = withdraw_pending_.erase(it);
        continue;
      }
      const Call c = withdraw_mac(*it);
      if (c == Call::Lost) return false;
      it = c == Call::Ok ? withdraw_pending_.erase(it) : std::next(it);
    }
    withdraw_pending_n_ = withdraw_pending_.size();
    for (const auto& [mac, l] : locals) {
      if (advertised_.count(mac)) continue;
      if (!limiter_.take(now)) {  // rate limit: advertised at a later sync
        deferred_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      Call c = add_r(type2_path(mac, l.seq), "AddPath type-2");
      if (c == Call::Refused && l.seq > 0) {
        // gobgpd's mobility check compares our sequence number with every best route for
        // the MAC and Ethernet tag, of any RD — another MAC-VRF's route for the same MAC
        // refuses ours. Without the community gobgpd numbers the route itself; advertised.
        c = add_r(type2_path(mac, 0), "AddPath type-2 (sequence numbered by gobgpd)");
      }
      if (c == Call::Lost) return false;
      if (c == Call::Ok) advertised_[mac] = l.seq;
    }
    advertised_n_ = advertised_.size();
    return true;
  }

  void withdraw_all() {
    if (!connected_) return;
    for (const auto& [mac, seq] : advertised_)
      if (withdraw_mac(mac, 500) == Call::Lost) return;
    for (const auto& mac : withdraw_pending_)
      if (withdraw_mac(mac, 500) == Call::Lost) return;
    advertised_.clear();
    advertised_n_ = 0;
    del(type3_path(), "DeletePath type-3", 500);
  }

  // A gobgpd that hangs (stopped, overloaded) answers nothing, and a quiet watch stream does
  // not tell: ask it something about every kRetryMs while connected.
  bool alive() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_check_ < std::chrono::milliseconds(kRetryMs)) return true;
    last_check_ = now;
    apipb::GetBgpRequest req;
    apipb::GetBgpResponse resp;
    grpc::ClientContext c;
    deadline(c);
    const Call r = call_result(stub_->GetBgp(&c, req, &resp), "GetBgp");
    if (r == Call::Ok) {
      unanswered_ = 0;
      return true;
    }
    if (r == Call::Lost) return false;
    if (++unanswered_ < kHungChecks) return true;
    unanswered_ = 0;
    down("GetBgp unanswered " + std::to_string(kHungChecks) + " times in a row (hung)");
    return false;
  }

  void sweep_stale() {
    std::size_t held, removed = 0;
    const std::uint64_t now = mono_ns();
    {
      std::lock_guard g(mu_);
      if (now - last_tick_ns_ >= 1000000000ull) {
        last_tick_ns_ = now;
        rib_.tick(now);
      }
      if (rib_.resyncing() && connected_ && stale_timer_.due(now, rib_.stale_routes()))
        removed = rib_.end_resync(now);
      held = rib_.mac_routes() + rib_.imet_routes() + rib_.mobility_records();
    }
    if (removed) spdlog::info("evpn: {} routes not received again since the reconnection removed", removed);
    // A mass withdrawal (or mobility records expiring after a churn) frees many small nodes
    // inside the heap: the route set's and the FDB's, the messages' on the threads that read
    // them. Once it is over, give the free pages of every arena back.
    if (trim_.due(now, held)) {
#if defined(__GLIBC__)
      malloc_trim(0);
#endif
      ++trims_;
    }
  }

  void sync_loop() {
    std::unique_lock lk(mu_);
    while (!stop_) {
      lk.unlock();
      sweep_stale();
      bool ok = connected_ ? alive() && sync_locals() : connect() && sync_locals();
      lk.lock();
      cv_.wait_for(lk, std::chrono::milliseconds(ok ? kSyncMs : kRetryMs), [this] { return stop_; });
    }
    lk.unlock();
    withdraw_all();
  }

  // ---- routes we receive: the mapping is evpn_route.cpp's; here only the FDB and our sets
  void on_path(const apipb::Path& p) {
    const EvpnRouteDecision d = map_evpn_route(p, {o_.vtep, o_.vni, o_.tunnel_type});
    const std::uint64_t now = mono_ns();
    std::lock_guard g(mu_);
    if (!d.action) {
      auto& n = ignored_[std::string(to_string(d.reason))];  // our own routes come back too: "own"
      // a route of another encapsulation: a mixed fabric; said once, then counted in "ignored"
      if (n++ == 0 && (d.reason == RouteIgnored::OtherEncapsulation || d.reason == RouteIgnored::NoEncapsulation))
        spdlog::info("evpn: a route of VNI {} with {} skipped (we take only tunnel type {}); counted in "
                     "ofld fdb's evpn.ignored", o_.vni,
                     d.reason == RouteIgnored::NoEncapsulation ? "no BGP Encapsulation community"
                                                               : "another BGP Encapsulation",
                     o_.tunnel_type);
      return;
    }
    const EvpnRouteAction& a = *d.action;
    if (a.kind == EvpnRouteAction::Kind::MacIp) {
      if (a.withdraw) rib_.withdraw_mac(a.route_id, a.mac, now);
      else rib_.update_mac(a.route_id, a.mac, a.vtep, a.seq, now);
    } else {
      if (a.withdraw) rib_.withdraw_imet(a.route_id);
      else rib_.update_imet(a.route_id, a.vtep);
    }
  }

  // The table is read with ListPath (one destination a message) between the start of the
  // WatchEvent stream and the first read of its table events: gobgpd queues the events of a
  // watcher, so those that happen while the table is read are applied after it, in order —
  // a route withdrawn meanwhile is withdrawn again, never resurrected. (WatchEvent's own
  // `init` sends the whole table as one message, and gobgpd gives every path of an UPDATE
  // the UPDATE's MP_REACH_NLRI with all its NLRIs: 10,000 routes packed 100 to an UPDATE
  // are a 182 MB message.) The peer-state watch makes gobgpd answer at once (its INIT /
  // END_OF_INIT events), so the watcher is known to be registered before ListPath starts.
  bool read_table() {
    apipb::ListPathRequest req;
    req.set_table_type(apipb::GLOBAL);
    *req.mutable_family() = evpn_family();
    // The NLRI and attributes as in the UPDATE, not as Any messages: gobgpd repeats the
    // UPDATE's whole MP_REACH_NLRI in each of its paths, and marshalling those NLRIs (100 an
    // UPDATE: ~18 kB a path) was most of a re-synchronisation (docs/evpn.md "bench/evpn").
    req.set_enable_only_binary(true);
    grpc::ClientContext c;
    deadline(c, kListMs);
    {
      std::lock_guard g(mu_);
      if (stop_) return false;
      list_ctx_ = &c;
    }
    // On a connection of its own, closed after the read: gRPC's TCP reader sizes its
    // read-ahead by the largest read round and keeps the unused part between reads, so the
    // table read, one burst, left megabytes held by the long-lived connection, which carries
    // only WatchEvent and small calls afterwards. (A local subchannel pool, or gRPC would
    // share the channel's connection.)
    grpc::ChannelArguments a = args_;
    a.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    const auto table_stub =
        apipb::GobgpApi::NewStub(grpc::CreateCustomChannel(o_.server, grpc::InsecureChannelCredentials(), a));
    auto reader = table_stub->ListPath(&c, req);
    apipb::ListPathResponse r;
    std::size_t n = 0;
    while (reader->Read(&r))
      for (const auto& p : r.destination().paths())
        if (p.best()) on_path(p), ++n, last_event_ns_.store(mono_ns(), std::memory_order_relaxed);
    auto st = reader->Finish();
    {
      std::lock_guard g(mu_);
      list_ctx_ = nullptr;
    }
    if (!st.ok()) {
      down("ListPath: " + st.error_message());
      return false;
    }
    spdlog::info("evpn: gobgpd at {}: table read, {} best paths", o_.server, n);
    return true;
  }

  void watch_loop() {
    apipb::WatchEventRequest req;
    req.mutable_peer();  // peer-state events: gobgpd answers as soon as the watcher exists
    auto* f = req.mutable_table()->add_filters();
    f->set_type(apipb::WatchEventRequest::Table::Filter::BEST);
    f->set_init(false);  // the table is read with ListPath (read_table)
    grpc::ClientContext* ctx;
    {
      std::lock_guard g(mu_);
      ctx = watch_ctx_.get();
      if (stop_) return;
    }
    auto reader = stub_->WatchEvent(ctx, req);
    apipb::WatchEventResponse ev;
    bool table_read = false;
    std::vector<apipb::WatchEventResponse> early;  // table events before the first peer event
    while (reader->Read(&ev)) {
      last_event_ns_.store(mono_ns(), std::memory_order_relaxed);
      if (!table_read) {
        if (ev.has_table()) {
          early.push_back(ev);
          continue;
        }
        if (!read_table()) break;
        table_read = true;
        for (const auto& e : early)
          for (const auto& p : e.table().paths()) on_path(p);
        std::vector<apipb::WatchEventResponse>().swap(early);
        ev = apipb::WatchEventResponse();
        continue;
      }
      if (!ev.has_table()) continue;
      for (const auto& p : ev.table().paths()) on_path(p);  // other families: ignored there
      // Parsing into `ev` clears it but keeps every path object it ever held for reuse: after
      // a table event of thousands of paths, megabytes scattered through this thread's heap
      // would stay live until the stream ends. A large event's message is dropped instead.
      if (ev.table().paths_size() > kReusePaths) ev = apipb::WatchEventResponse();
    }
    auto st = reader->Finish();
    bool stopping;
    {
      std::lock_guard g(mu_);
      stopping = stop_;
    }
    if (!stopping) down("WatchEvent ended: " + st.error_message());
  }

  EvpnOptions o_;
  grpc::ChannelArguments args_;  // the channel's, for the table read's own connection
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<apipb::GobgpApi::Stub> stub_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> connected_{false};
  bool warned_ = false;  // under mu_: this outage is logged
  std::atomic<std::uint32_t> asn_{0};
  std::atomic<std::size_t> advertised_n_{0};
  AdvertiseLimiter limiter_{kAdvertisePerSec, kAdvertiseBurst};  // sync thread
  std::atomic<std::uint64_t> deferred_{0};
  std::unique_ptr<grpc::ClientContext> watch_ctx_;  // under mu_
  grpc::ClientContext* list_ctx_ = nullptr;         // under mu_: the ListPath call running
  std::map<Mac, std::uint32_t> advertised_;         // sync thread: MAC → seq advertised
  std::set<Mac> withdraw_pending_;                  // sync thread: our routes to withdraw
  std::atomic<std::size_t> withdraw_pending_n_{0};
  std::map<Mac, LocalMac> known_locals_;            // sync thread: locals at the last sync
  EvpnRib rib_;                                     // under mu_: the routes received
  StaleTimer stale_timer_{kStaleMs, kStaleMaxMs};  // mu_
  std::uint64_t last_tick_ns_ = 0;                  // under mu_
  TrimTrigger trim_{10000, 1000};                   // sync thread: 10,000 gone (or half), 1 s quiet
  std::atomic<std::uint64_t> trims_{0};             // heap trims after mass withdrawals
  std::uint64_t connects_ = 0, failures_ = 0;
  std::map<std::string, std::uint64_t> refused_;    // under mu_: calls gobgpd refused
  std::map<std::string, std::uint64_t> slow_;       // under mu_: deadlines missed while connected
  int unanswered_ = 0;                              // sync thread: GetBgp checks in a row
  std::atomic<std::uint64_t> last_event_ns_{0};     // last watch event or ListPath path
  static constexpr std::uint64_t kBusyEventNs = 3000000000ull;
  static constexpr int kHungChecks = 5;
  static constexpr int kReusePaths = 128;  // a watch event's message is kept for the next up to this size
  std::map<std::string, std::uint64_t> ignored_;  // under mu_: routes not taken, by reason
  std::chrono::steady_clock::time_point last_check_{};  // sync thread
  std::thread sync_, watch_;
};

}  // namespace

std::unique_ptr<EvpnClient> start_evpn(const EvpnOptions& o, std::string& error) {
  if (!o.fdb || o.vtep.empty()) {
    error = "evpn: needs the FDB and the local VTEP address";
    return nullptr;
  }
  o.fdb->set_local_learning(true);
  return std::make_unique<GobgpClient>(o);
}

}  // namespace ofld::daemon

#endif

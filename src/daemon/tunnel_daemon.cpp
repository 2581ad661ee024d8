// `ofld tunnel` endpoint process, every mode: one loop per queue over a device queue
// (io::Tap for VXLAN, io::Tun for GUE/GRE/ip6gre), the underlay sockets and, in worker 0, the
// control socket and signals. Wiring only: the packets go through the one
// tunnel::Endpoint (its per-encapsulation strategy holds what differs between VXLAN, GUE and
// GRE/ip6gre); the fds are read and written by src/io.
#include "ofld/daemon/tunnel_daemon.hpp"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <variant>

#include <spdlog/spdlog.h>

#include "ofld/io/link.hpp"
#include "ofld/io/raw_ip_socket.hpp"
#include "ofld/io/tap.hpp"
#include "ofld/io/tun.hpp"
#include "ofld/io/udp_socket.hpp"
#include "ofld/io/vnet_writer.hpp"
#include "ofld/daemon/reload.hpp"
#include "ofld/daemon/service.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/peer.hpp"
#include "evpn.hpp"
#include "metrics_server.hpp"
#include "worker_set.hpp"

namespace ofld::daemon {

using json = nlohmann::json;

namespace {
std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
constexpr std::size_t kBatch = 64;            // device reads per wake-up (budget)
constexpr std::size_t kMaxFrame = 65536 + 64;
constexpr std::size_t kUdpSlots = 16;         // recvmmsg slots (each a 64 KiB UDP_GRO train)
constexpr std::size_t kRawSlots = 64;         // raw IP receives per batch (one packet each)
constexpr std::size_t kRxBudget = 8;          // receive batches per wake-up

/// The local side: a TAP (VXLAN, Ethernet) or a TUN (GUE, GRE: IP) queue.
struct Device {
  std::variant<io::Tap, io::Tun> d;
  template <class F>
  decltype(auto) with(F&& f) { return std::visit(std::forward<F>(f), d); }
  template <class F>
  decltype(auto) with(F&& f) const { return std::visit(std::forward<F>(f), d); }
  int fd() const { return with([](const auto& x) { return x.fd(); }); }
  const std::string& name() const { return with([](const auto& x) -> const std::string& { return x.name(); }); }
  bool vnet_hdr() const { return with([](const auto& x) { return x.has_vnet_hdr(); }); }
  bool is_tap() const { return d.index() == 0; }
};

/// One message the underlay received: bytes [off, off + len) of its slot.
struct NetRx {
  std::size_t off = 0, len = 0;
  std::uint16_t gso_size = 0;
  tunnel::IpAddr from;
  int tos = -1;
};

/// MTU and IFF_UP of a link (SIOCGIFMTU / SIOCGIFFLAGS: no privilege); mtu -1 when unknown.
struct LinkNow {
  int mtu = -1;
  bool up = false;
};
LinkNow current_link(const std::string& name) {
  LinkNow l;
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return l;
  ifreq q{};
  std::strncpy(q.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(s, SIOCGIFMTU, &q) == 0) l.mtu = q.ifr_mtu;
  if (::ioctl(s, SIOCGIFFLAGS, &q) == 0) l.up = (q.ifr_flags & IFF_UP) != 0;
  ::close(s);
  return l;
}
/// Whether `ip addr show dev NAME` lists `cidr` already (same address and prefix length).
bool has_address(const std::string& dev, const std::string& cidr) {
  auto r = io::run_command({"ip", "-j", "addr", "show", "dev", dev});
  if (!r.ok()) return false;
  auto j = json::parse(r.value().out, nullptr, false);
  if (j.is_discarded() || !j.is_array() || j.empty()) return false;
  const auto slash = cidr.find('/');
  const std::string addr = cidr.substr(0, slash);
  for (const auto& a : j[0].value("addr_info", json::array())) {
    if (a.value("local", "") != addr) continue;
    if (slash == std::string::npos || std::to_string(a.value("prefixlen", -1)) == cidr.substr(slash + 1)) return true;
  }
  return false;
}

/// The IPv4 DF a tunnel's UDP sockets start with (UdpSocketOptions::df): VXLAN and Geneve
/// `df unset` (the kernel device's default) and `df inherit` clear (each train sets its own),
/// `df set` set; -1 (the kernel's socket default, IP_PMTUDISC_WANT) for GUE and over IPv6,
/// where no `df` applies.
int socket_df(const tunnel::Encapsulation& e) {
  const auto& c = e.common();
  if (c.ipv6() || e.link() != wire::LinkType::Ethernet) return -1;
  return c.df == tunnel::OuterDf::Set ? 1 : 0;
}

}  // namespace

// One queue of the endpoint: its device queue, its underlay sockets (UDP: the receive socket
// in the SO_REUSEPORT group of the port when there are several queues, per-source-port
// transmit sockets for VXLAN; raw IP for GRE, where only worker 0 receives: every raw socket
// sees every packet), its tunnel::Endpoint (data path: GRO engine, buffers, counters; the FDB is
// shared) and epoll set. Worker 0 runs in the thread that calls run() and also serves the
// control socket and signals.
struct Worker : detail::WorkerBase, io::FrameSink {
  const DaemonConfig* cfg = nullptr;
  std::optional<Device> dev;
  std::optional<io::UdpSocket> udp;           // VXLAN, GUE: receives (and sends by default)
  std::map<std::uint16_t, io::UdpSocket> tx;  // VXLAN: per source port (udp_flow_src_port)
  bool tx_port_pool_full = false;
  bool reuse_port = false;                    // several workers: every socket in a SO_REUSEPORT group
  std::optional<io::RawIpSocket> raw;         // GRE, ip6gre
  std::optional<io::UdpSocket> grp;           // VXLAN `group`: worker 0 receives the group's datagrams
  std::uint16_t dport = 0;                    // UDP destination port (dstport / port)
  std::uint8_t ttl = 0, tos = 0;              // outer TTL / TOS of sockets opened later (a reload changes them)
  int udp_df = -1;                            // and their DF (UdpSocketOptions::df; socket_df)
  std::unique_ptr<tunnel::Endpoint> path;
  tunnel::OuterCsum outer_csum = tunnel::OuterCsum::Unknown;  // what the socket says of it
  bool write_warned = false;
  std::uint64_t last_tick = 0, tx_now = 0;
  std::vector<NetRx> rxs;
  std::vector<io::UdpRx> udprx;
  std::vector<core::BufferRef> rxbufs;  // one per receive slot (shared with packets)
  std::vector<std::span<std::uint8_t>> rxspans;
  std::vector<tunnel::TxTrain> trains;
  std::vector<tunnel::TxTrain> control;  // peer session messages (docs/peer-protocol.md)
  std::vector<tunnel::TapFrame> frames;

  int net_fd() const { return raw ? raw->fd() : udp->fd(); }
  void handle(int fd) {
    if (fd == dev->fd()) handle_dev();
    else if (fd == net_fd()) handle_net(raw ? nullptr : &*udp);
    else if (grp && fd == grp->fd()) handle_net(&*grp);
  }

  // Worker 0, every loop iteration: age the shared FDB about once a second; peer session
  // HELLOs that are due (docs/peer-protocol.md).
  void tick() {
    auto t = now_ns();
    if (t - last_tick > 1000000000ull) {
      path->tick(t);
      last_tick = t;
    }
    path->control_out(t, true, control);
    send_control();
  }

  // Peer session messages leave from the tunnel's own socket (local:port; raw IP for GRE),
  // one datagram each; a failure is only logged (the session retries).
  void send_control() {
    for (const auto& c : control) {
      if (auto ts = raw ? raw->set_tos(c.tos) : udp->set_tos(c.tos); !ts.ok()) spdlog::debug("{}", ts.message());
      if (!raw)
        if (auto ts = udp->set_ttl(c.ttl); !ts.ok()) spdlog::debug("{}", ts.message());
      auto r = raw ? raw->send_train(c.remote, c.buf, c.seg_size)
                   : udp->send_train(c.remote, dport, c.buf, c.seg_size);
      if (!r.ok()) spdlog::debug("peer session: {}", r.message());
    }
    control.clear();
  }

  // ---- device → underlay
  void frame(const wire::virtio_net::Hdr& h, std::span<const std::uint8_t> b) override {
    path->transmit(h, b, tx_now, trains);
  }
  void frame(const wire::virtio_net::Hdr& h, std::span<const std::uint8_t> b,
             const core::BufferRef& owner) override {
    path->transmit(h, b, tx_now, trains, &owner);
  }

  void handle_dev() {
    tx_now = now_ns();
    dev->with([&](auto& d) { d.read_batch(kBatch, *this); });
    send_trains();
  }

  io::UdpSocket& tx_socket(std::uint16_t sport) {
    // GUE: every flow leaves from the one port P (the socket bound to local:P).
    if (!path->encapsulation().flow_src_ports()) return *udp;
    auto it = tx.find(sport);
    if (it != tx.end()) return it->second;
    if (!tx_port_pool_full && tx.size() < 64) {
      const auto& v = *cfg->tunnel.udp();
      io::UdpSocketOptions o{v.local, sport, !v.tx_outer_csum(), false, ttl, tos,
                             udp->gso(), false, 4 << 20, true};
      o.mcast = !cfg->group.empty();  // floods to the group leave by `dev`
      o.mcast_dev = cfg->group_dev;
      o.gso_short_tail = udp->gso_short_tail();  // probed once on the primary socket
      o.reuse_port = reuse_port;                 // every worker has its own socket on sport
      o.df = udp_df;
      auto s = io::UdpSocket::open(o);
      if (s.ok()) return tx.emplace(sport, std::move(s.value())).first->second;
      spdlog::warn("udp: source port {} not available ({}); using port {} for such flows", sport,
                   s.message(), udp->local_port());
      tx_port_pool_full = true;
    }
    return *udp;
  }

  // `gso`: the socket had UDP_SEGMENT on; `fell_back`: this send turned it off (refused at
  // run time, resent datagram by datagram).
  io::Result<std::size_t> send(const tunnel::TxTrain& t, bool& gso, bool& fell_back) {
    fell_back = false;
    if (raw) {
      gso = false;
      // Outer TOS of this train (tos N or inherit, ECN from the inner packet, RFC 6040 §4.1).
      if (auto ts = raw->set_tos(t.tos); !ts.ok()) spdlog::debug("{}", ts.message());
      return raw->send_train(t.remote, t.buf, t.seg_size);
    }
    auto& s = tx_socket(t.src_port);
    gso = s.gso();
    // Outer TOS, TTL and DF of this train: a setsockopt only when one differs from the
    // socket's last (tos/ttl/df inherit; a reload).
    if (auto ts = s.set_tos(t.tos); !ts.ok()) spdlog::debug("{}", ts.message());
    if (auto ts = s.set_ttl(t.ttl); !ts.ok()) spdlog::debug("{}", ts.message());
    if (auto ts = s.set_df(t.df); !ts.ok()) spdlog::debug("{}", ts.message());
    auto r = s.send_train(t.remote, dport, t.buf, t.seg_size);
    fell_back = gso && !s.gso();
    return r;
  }

  void send_trains() {
    for (auto& t : trains) {
      bool gso = false, fell_back = false;
      auto r = send(t, gso, fell_back);
      if (!r.ok()) spdlog::debug("{}", r.message());
      path->sent(t, r.ok(), gso && !fell_back, fell_back);
    }
    path->recycle(trains);
  }

  // ---- underlay → device
  // One receive batch into the slots: recvmmsg (UDP) or raw receives until empty.
  io::Result<std::size_t> recv_batch(io::UdpSocket* sock) {
    // A slot whose bytes are still referenced by a packet gets a fresh buffer (normally every
    // reference is gone: the previous batch flushed GRO and wrote its frames).
    for (std::size_t i = 0; i < rxbufs.size(); ++i)
      if (!rxbufs[i] || rxbufs[i].use_count() > 1) {
        rxbufs[i] = core::Buffer::create(kMaxFrame);
        rxspans[i] = rxbufs[i]->bytes;
      }
    if (sock) {
      auto r = sock->recv_batch(rxspans, udprx);
      if (!r.ok()) return r;
      for (std::size_t i = 0; i < r.value(); ++i)
        rxs[i] = NetRx{0, udprx[i].len, udprx[i].gso_size, udprx[i].from, udprx[i].tos};
      return r;
    }
    std::size_t n = 0;
    for (; n < rxspans.size(); ++n) {
      auto r = raw->recv(rxspans[n]);
      if (!r.ok()) return n ? io::Result<std::size_t>(n) : io::Result<std::size_t>::error(r.message());
      if (!r.value()) break;
      const auto& m = *r.value();
      rxs[n] = NetRx{m.off, m.len, 0, m.from, m.tos};
    }
    return n;
  }

  // Drain the underlay (bounded): receive batches until empty or the budget, each followed by
  // a GRO flush and the device writes (NAPI: poll a batch, flush at the end of the poll).
  void handle_net(io::UdpSocket* sock) {
    const auto t = now_ns();
    for (std::size_t call = 0; call < kRxBudget; ++call) {
      auto r = recv_batch(sock);
      if (!r.ok()) {
        spdlog::warn("{}", r.message());
        break;
      }
      const std::size_t n = r.value();
      for (std::size_t i = 0; i < n; ++i)
        path->receive_train(rxbufs[i], rxs[i].off, rxs[i].len, rxs[i].gso_size, rxs[i].from,
                            outer_csum, t, rxs[i].tos);
      // GRO flush and device writes per batch: the packets reference the slots' bytes, which
      // the next batch reuses (aggregates are bounded at 64 KiB anyway).
      path->rx_flush(t, frames);
      const auto w = dev->with([&](auto& d) { return d.write_batch(frames); });
      path->written(w.frames, w.bytes, w.failed);
      if (w.failed && !write_warned) {
        spdlog::warn("{} write: {}", dev->is_tap() ? "tap" : "tun", std::strerror(w.error));
        write_warned = true;
      }
      frames.clear();  // releases the packets, hence the receive buffers they referenced
      path->control_out(t, false, control);  // HELLO-ACKs to the HELLOs of this batch
      send_control();
      if (n < rxs.size()) break;  // drained
    }
  }

  // A reload changed ttl/tos/df: the data path's outer header, and the TTL of every open
  // socket (-1: back to the kernel's default, as ttl 0 at start). UDP sockets take each
  // train's TTL and DF when it is sent (send()); the raw GRE socket's TTL is set here.
  void set_outer(const tunnel::TunnelCommon& o) {
    ttl = o.ttl, tos = o.tos;
    path->set_outer(o);
    udp_df = socket_df(path->encapsulation());
    auto set = [&](io::UdpSocket& s) {
      if (auto r = s.set_ttl(o.ttl); !r.ok()) spdlog::warn("reload: ttl {} on socket: {}", int(o.ttl), r.message());
    };
    if (udp) set(*udp);
    for (auto& [p, s] : tx) set(s);
    if (raw) {
      const int t = o.ttl ? int(o.ttl) : -1;
      const int r = o.ipv6() ? ::setsockopt(raw->fd(), IPPROTO_IPV6, IPV6_UNICAST_HOPS, &t, sizeof t)
                             : ::setsockopt(raw->fd(), IPPROTO_IP, IP_TTL, &t, sizeof t);
      if (r < 0) spdlog::warn("reload: ttl {} on socket: {}", int(o.ttl), std::strerror(errno));
    }
  }

  // After the loop (stop): forward what the device queue and the sockets still hold, one
  // bounded round each (drain on stop; the fds are non-blocking).
  void drain() {
    handle_dev();
    if (idx == 0 || !raw) handle_net(raw ? nullptr : &*udp);
    if (grp) handle_net(&*grp);
  }

  // This worker's counters (from the worker's own thread while run() runs: its snapshot).
  json stats() const {
    json j = path->stats();
    const io::VnetWriter* w = dev->with([](const auto& d) { return d.writer(); });
    if (w) j[dev->is_tap() ? "tap_write" : "tun_write"] = detail::writer_stats(*w);
    if (raw) {
      j["socket"] = {{"kind", "raw_ip"}, {"sendmmsg_calls", raw->stats().sendmmsg_calls},
                     {"datagrams_sent", raw->stats().datagrams_sent},
                     {"send_errors", raw->stats().send_errors},
                     {"rx_queue_drops", raw->rx_queue_drops()}};
      return j;
    }
    std::uint64_t gso_sends = udp->stats().gso_sends, plain = udp->stats().plain_sends,
                  gso_off = udp->stats().gso_disabled;
    for (const auto& [p, s] : tx) {
      gso_sends += s.stats().gso_sends;
      plain += s.stats().plain_sends;
      gso_off += s.stats().gso_disabled;
    }
    j["socket"] = {{"kind", "udp"}, {"udp_segment", udp->gso()}, {"udp_gro", udp->gro()},
                   {"udp_segment_sends", gso_sends}, {"plain_sends", plain},
                   {"udp_segment_disabled", gso_off}, {"gro_buffers", udp->stats().gro_buffers},
                   {"recv_batches", udp->stats().recv_batches},
                   {"recv_buffers", udp->stats().recv_buffers},
                   {"rx_queue_drops", udp->rx_queue_drops() + (grp ? grp->rx_queue_drops() : 0)},
                   {"tx_ports", std::uint64_t(tx.size())}};
    return j;
  }
};

struct TunnelDaemon::Impl {
  DaemonConfig cfg;  // before ws: the workers point at it
  std::shared_ptr<tunnel::SharedFdb> fdb;  // VXLAN
  std::shared_ptr<tunnel::PeerTable> peers;  // peer sessions, shared by the workers
  unsigned dev_offload = 0;
  bool multi_queue = false;  // the device was attached with IFF_MULTI_QUEUE (QueuePlan)
  detail::WorkerSet<Worker> ws;
  std::unique_ptr<EvpnClient> evpn;  // after ws: destroyed first (withdraws its routes)
  DropReporter drop_log;             // rate-limited drop lines (the control thread)
  std::unique_ptr<MetricsServer> metrics;  // `metrics ADDR:PORT`; before ws goes (its threads wait on ws)
  // Live reload (ofld/daemon/reload.hpp), control thread only: the configuration as now
  // running (cfg stays as started: the workers read it) and where to read the next one.
  DaemonConfig running;
  std::function<Parsed<DaemonConfig>()> reload_source;

  json reload(const std::string& by) {
    if (!reload_source)
      return json{{"error", "reload: this endpoint was started without --config; there is no file to read again"}};
    notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(now_ns() / 1000) + "\nSTATUS=reloading");
    json out = apply_reload(by);
    notify("READY=1\nSTATUS=forwarding on " + dev().name());
    return out;
  }
  json apply_reload(const std::string& by) {
    auto p = reload_source();
    if (auto* e = std::get_if<std::string>(&p)) {
      spdlog::warn("reload refused by={} error=\"{}\"", by, *e);
      return json{{"error", "reload: " + *e + " (running configuration kept)"}};
    }
    const DaemonConfig& next = std::get<DaemonConfig>(p);
    const ReloadPlan plan = plan_reload(running, next);
    if (!plan.refused.empty()) {
      spdlog::warn("reload refused by={} error=\"{}\"", by, plan.refused);
      return json{{"error", "reload: " + plan.refused + " (running configuration kept)"}};
    }
    // The peer key is read again on every reload (a key rotated in the same file); an
    // unreadable one refuses the reload before anything changed.
    std::vector<std::uint8_t> next_key;
    if (!next.peer_key.empty()) {
      std::string e;
      next_key = tunnel::read_peer_key(next.peer_key, e);
      if (next_key.empty()) {
        spdlog::warn("reload refused by={} error=\"{}\"", by, e);
        return json{{"error", "reload: " + e + " (running configuration kept)"}};
      }
    }
    const bool key_changed = peers && next_key != peers->options().key;
    std::vector<std::string> changes = plan.changes;
    if (key_changed && running.peer_key == next.peer_key) changes.push_back("peer-key (new key in " + next.peer_key + ")");
    // EVPN first: the one step that can fail (the new server's address); nothing changed yet
    if (plan.evpn_server) {
      evpn.reset();  // withdraws our routes from the old server
      std::string e;
      evpn = start_evpn(evpn_options(cfg, next.evpn_server), e);
      if (!evpn) {
        std::string e2;
        evpn = start_evpn(evpn_options(cfg, running.evpn_server), e2);
        spdlog::warn("reload refused by={} error=\"evpn-server {}: {}\"", by, next.evpn_server, e);
        return json{{"error", "reload: evpn-server " + next.evpn_server + ": " + e + " (running configuration kept)"}};
      }
    }
    if (plan.log_level)
      spdlog::set_level(next.log_level.empty() ? spdlog::level::info : spdlog::level::from_str(next.log_level));
    if (plan.cpus) ws.repin(next.cpus);
    if (fdb) {
      for (const auto& [m, r] : plan.fdb_added) fdb->add_static(m, r);
      for (const auto& m : plan.fdb_removed) fdb->remove_static(m);
      for (const auto& r : plan.remotes_added) fdb->add_default_remote(r);
      for (const auto& r : plan.remotes_removed) fdb->remove_flood(r, tunnel::FdbSource::Static);
    }
    if (peers) {
      for (const auto& r : plan.remotes_added) peers->add(r);
      for (const auto& r : plan.remotes_removed) peers->remove(r);
    }
    if (peers && (key_changed || running.integrity != next.integrity)) {
      peers->reconfigure(next.integrity, next_key);
      spdlog::info("peer sessions: integrity {}, {}", next.integrity ? "on" : "off",
                   next_key.empty() ? "unauthenticated" : "authenticated (peer-key)");
    }
    if (plan.outer) {
      tunnel::TunnelCommon o = next.tunnel.common();
      ws.post_all([o](Worker& w) { w.set_outer(o); });
    }
    if (const auto& k = tunnel::kind_of(running.tunnel); k.flood_remotes)
      *k.flood_remotes(running.tunnel) = *k.remotes_of(next.tunnel);
    running.static_fdb = next.static_fdb;
    {
      auto& o = running.tunnel.common();
      const auto& z = next.tunnel.common();
      o.set_outer(z);
    }
    running.evpn_server = next.evpn_server;
    running.log_level = next.log_level;
    running.cpus = next.cpus;
    running.integrity = next.integrity;
    running.peer_key = next.peer_key;
    json ch = json::array();
    std::string line;
    for (const auto& c : changes) ch.push_back(c), line += (line.empty() ? "" : ", ") + c;
    spdlog::info("reload by={} changes=\"{}\"", by, line);
    return json{{"reloaded", true}, {"changes", ch}};
  }

  const Device& dev() const { return *ws.workers[0]->dev; }
  std::string mode() const { return std::string(cfg.tunnel.name()); }
  /// The VNI of a VNI encapsulation (VXLAN, Geneve: reported with the FDB and in the stats
  /// head); none for the others.
  std::optional<std::uint32_t> vni() const { return vni_of(cfg); }
  static std::optional<std::uint32_t> vni_of(const DaemonConfig& c) {
    if (const auto& k = tunnel::kind_of(c.tunnel); k.vni) return k.vni(c.tunnel);
    return std::nullopt;
  }

  json fdb_json() const {
    if (!fdb) return json{{"error", "fdb: not a VXLAN or Geneve endpoint (mode " + mode() + ")"}};
    json j = fdb->to_json(now_ns());
    if (const auto n = vni()) j["vni"] = *n;
    if (evpn) j["evpn"] = evpn->state();
    return j;
  }

  json stats_head() const {
    json head = {{"dev", dev().name()}, {"mode", mode()}, {"queues", ws.workers.size()}};
    if (const auto n = vni()) head["vni"] = *n;
    if (!running.cpus.empty()) head["cpus"] = running.cpus;  // worker i on cpus[i % n]
    return head;
  }
  // The stats document from the workers' documents; the daemon's own fields (FDB size, peer
  // sessions, device, control server) are read here, on the caller's thread.
  json stats_from(const std::vector<detail::WorkerDoc>& docs) const {
    return detail::workers_stats(docs, stats_head(), [&](json& out) {
      if (fdb) out["fdb"]["entries"] = fdb->size();
      if (peers) out["peer_sessions"] = peers->to_json(now_ns());
      out[dev().is_tap() ? "tap" : "tun"] = {{"vnet_hdr", dev().vnet_hdr()},
                                             {"offload_bits", dev_offload},
                                             {"multi_queue", multi_queue}};
      if (ws.ctl) {
        out["control"] = ws.ctl->counters().to_json();
        out["control"]["clients"] = ws.ctl->clients();
      }
      if (metrics) out["metrics"] = metrics->counters().to_json();
    });
  }
  // Read directly (not while run() runs: the workers' state is theirs then; the control
  // socket answers from their snapshots).
  json stats() const {
    std::vector<detail::WorkerDoc> docs;
    for (const auto& w : ws.workers)
      docs.push_back({w->idx, std::make_shared<const json>(w->stats()), false});
    return stats_from(docs);
  }

  // The EVPN client's options for configuration `c` (its VXLAN or Geneve settings; router-id
  // and duplicate address detection are fixed at start, reload.cpp) with the server `server`.
  EvpnOptions evpn_options(const DaemonConfig& c, const std::string& server) const {
    const std::uint16_t tt = tunnel::kind_of(c.tunnel).caps.evpn_tunnel_type;
    return EvpnOptions{server, c.tunnel.common().local, vni_of(c).value_or(0), tt, fdb, c.evpn_router_id,
                       DupAddrDetection{c.dup_addr_detection, c.dad_max_moves, c.dad_time_s, c.dad_freeze_s,
                                        c.dad_freeze_permanent}};
  }

  // `ofld fdb [mac M] [vtep A]`: the table as one JSON document — SharedFdb::to_json's
  // layout with "vni" and "evpn" added — written by an FdbJsonCursor kFdbEntries entries per
  // piece, so that the control thread answers other clients between pieces (written whole,
  // 100,000 entries held it for seconds in the ASan build, and `ofld stats` waited behind
  // every dump).
  static constexpr std::size_t kFdbEntries = 2048;
  std::function<bool(std::string&)> fdb_stream(const tunnel::FdbFilter& filter) const {
    std::string members;
    if (const auto n = vni()) members = ",\"vni\":" + std::to_string(*n);
    if (evpn) members += ",\"evpn\":" + evpn->state().dump();
    struct St {
      tunnel::FdbJsonCursor cur;
      std::size_t pos = 0;
    };
    auto st = std::make_shared<St>(St{tunnel::FdbJsonCursor(*fdb, now_ns(), filter, std::move(members))});
    return [st](std::string& out) {
      st->pos = st->cur.write(out, st->pos, kFdbEntries);
      if (st->pos != tunnel::FdbJsonCursor::kEnd) return true;
      out += '\n';
      return false;
    };
  }

  // The arguments of the `fdb` request: "mac MAC" and / or "vtep ADDR" (`ofld fdb --mac /
  // --vtep`). An error text, or nothing.
  static std::optional<std::string> fdb_filter(const std::string& args, tunnel::FdbFilter& f) {
    std::istringstream in(args);
    std::string k, v;
    while (in >> k) {
      if (!(in >> v)) return "fdb: '" + k + "' needs a value";
      if (k == "mac") {
        auto m = parse_mac(v);
        if (!m) return "fdb: '" + v + "' is not a MAC address";
        f.mac = *m;
      } else if (k == "vtep") {
        auto a = tunnel::IpAddr::parse(v);
        if (!a) return "fdb: '" + v + "' is not an IP address";
        f.remote = *a;
      } else {
        return "fdb: unknown argument '" + k + "' (mac MAC, vtep ADDR)";
      }
    }
    return std::nullopt;
  }

  // The requests of the control socket (README "Control socket"). Read: stats, fdb, who.
  // Owner (changes state): log-level.
  void serve_control() {
    auto& c = *ws.ctl;
    c.handle("stats", ControlAccess::Read, [this](const std::string&, ControlServer::Reply r) {
      ws.snapshot([this, r](const std::vector<detail::WorkerDoc>& docs) mutable {
        r.send(stats_from(docs).dump() + "\n");
      });
    });
    c.handle("fdb", ControlAccess::Read, [this](const std::string& args, ControlServer::Reply r) {
      tunnel::FdbFilter f;
      if (!fdb) r.send(fdb_json().dump() + "\n");  // the error: not a VXLAN endpoint
      else if (auto e = fdb_filter(args, f)) r.send(json{{"error", *e}}.dump() + "\n");
      else r.stream(fdb_stream(f));
    });
    c.handle("reload", ControlAccess::Owner, [this](const std::string&, ControlServer::Reply r) {
      r.send(reload("control:" + std::to_string(long(r.peer().uid))).dump() + "\n");
    });
    c.handle("log-level", ControlAccess::Owner, [](const std::string& a, ControlServer::Reply r) {
      const auto lv = spdlog::level::from_str(a);
      if (a.empty() || (lv == spdlog::level::off && a != "off")) {
        r.send(json{{"error", "log-level: expected trace, debug, info, warning, error, critical or off"}}.dump() + "\n");
        return;
      }
      spdlog::set_level(lv);
      spdlog::info("control: log level {} (uid {})", a, long(r.peer().uid));
      r.send(json{{"log_level", a}}.dump() + "\n");
    });
  }
};

TunnelDaemon::TunnelDaemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TunnelDaemon::~TunnelDaemon() = default;
const std::string& TunnelDaemon::tap_name() const noexcept { return impl_->dev().name(); }
void TunnelDaemon::request_stop() noexcept { impl_->ws.stop_all(); }
json TunnelDaemon::stats_json() const { return impl_->stats(); }
void TunnelDaemon::set_reload_source(std::function<Parsed<DaemonConfig>()> source) {
  impl_->reload_source = std::move(source);
}

io::Result<std::unique_ptr<TunnelDaemon>> TunnelDaemon::create(const DaemonConfig& cfg,
                                                             TunnelDaemonOptions opts) {
  using R = io::Result<std::unique_ptr<TunnelDaemon>>;
  // The encapsulation says which device and socket, the MTU, the remotes and the log line;
  // nothing below branches on which encapsulation it is.
  const auto enc = tunnel::make_encapsulation(cfg.tunnel);
  const auto& common = cfg.tunnel.common();
  const tunnel::UdpTunnelSettings* udp_cfg = cfg.tunnel.udp();
  const bool tap = enc->link() == wire::LinkType::Ethernet;  // else TUN (raw IP)
  // A multicast group or EVPN supplies the remotes; else the configuration must name one.
  if (auto e = tunnel::kind_of(cfg.tunnel).validate(cfg.tunnel, cfg.group.empty() && !cfg.evpn))
    return R::error(*e);
  if (cfg.queues != kQueuesAuto && cfg.queues > kMaxQueues)
    return R::error("queues: " + std::to_string(cfg.queues) + " is not auto or in 1.." +
                    std::to_string(kMaxQueues));
  // An existing device: what it is decides how to attach (plan_queues) and whether we may.
  std::optional<bool> existing_mq;
  if (auto l = io::tun_link_info(cfg.dev); !l.ok()) {
    spdlog::warn("dev {}: {} (attaching as planned; the kernel decides)", cfg.dev, l.message());
  } else if (const io::TunLinkInfo& li = l.value(); li.exists) {
    const char* want = tap ? "TAP" : "TUN";
    if (!li.is_tun())
      return R::error("dev " + cfg.dev + ": exists and is " +
                      (li.kind.empty() ? std::string("not a TUN/TAP device") : "a " + li.kind + " device") +
                      "; " + std::string(cfg.tunnel.name()) + " needs a " + want +
                      " (give another name, or remove it)");
    if (li.tap != tap)
      return R::error("dev " + cfg.dev + ": exists as a " + (li.tap ? "TAP" : "TUN") + "; " +
                      std::string(cfg.tunnel.name()) + " needs a " + want);
    // A multi-queue device with queues attached is another process's: attaching more queues
    // would succeed and share its frames with us (a single-queue one refuses with EBUSY).
    if (li.multi_queue && li.queues > 0)
      return R::error("dev " + cfg.dev + ": in use (" + std::to_string(li.queues) +
                      " queue(s) attached by another process, another endpoint?)");
    existing_mq = li.multi_queue;
  }
  // auto gives a worker no less than a CPU's worth of time: a cgroup CPU limit (a container's
  // --cpus, systemd's CPUQuota=) lowers the count as the affinity mask does.
  unsigned auto_cpus = auto_queue_cpus(cfg.cpus, allowed_cpus().size());
  double cpu_limit = 0;  // the cgroup's limit in CPUs where it lowered the count, else 0
  if (cfg.queues == kQueuesAuto) {
    if (const auto l = cgroup_cpu_limit(); l && cpus_of_limit(*l) < auto_cpus) {
      auto_cpus = cpus_of_limit(*l);
      cpu_limit = *l;
    }
  }
  const auto planned = plan_queues(cfg.queues, auto_cpus, enc->flow_src_ports(), existing_mq);
  if (auto* e = std::get_if<std::string>(&planned)) return R::error(*e);
  QueuePlan plan = std::get<QueuePlan>(planned);
  if (cpu_limit > 0) plan.why += fmt::format(" (the cgroup allows {:.2f} CPUs)", cpu_limit);
  auto im = std::make_unique<Impl>();
  im->cfg = cfg;
  im->running = cfg;
  const unsigned nq = plan.count;
  const bool mq = plan.multi_queue;
  im->multi_queue = mq;
  const char* kind = tap ? "tap" : "tun";
  // Device: the first queue creates it (IFF_MULTI_QUEUE when more than one queue), the others
  // attach to it by name. Offloads, MTU and link state are device-wide.
  for (unsigned q = 0; q < nq; ++q) {
    const std::string name = q ? im->ws.workers[0]->dev->name() : cfg.dev;
    std::optional<Device> d;
    std::string e;
    bool skipped = false;
    if (tap) {
      auto t = io::Tap::open(io::TapOptions{name, cfg.offload, mq, 10, true});
      if (t.ok()) d.emplace(Device{std::move(t.value())});
      else e = t.message(), skipped = t.is_skipped();
    } else {
      auto t = io::Tun::open(name, cfg.offload, mq);
      if (t.ok()) d.emplace(Device{std::move(t.value())});
      else e = t.message(), skipped = t.is_skipped();
    }
    if (!d) {
      if (q) e = "queues: " + std::string(tap ? "TAP" : "TUN") + " queue " + std::to_string(q) + ": " + e;
      return skipped ? R::skipped(e) : R::error(e);
    }
    auto w = std::make_unique<Worker>();
    w->cfg = &im->cfg;
    w->idx = q;
    w->reuse_port = nq > 1;
    w->dev = std::move(d);
    im->ws.workers.push_back(std::move(w));
  }
  auto& dev = *im->ws.workers[0]->dev;
  if (cfg.offload) {
    using namespace io::tun_offload;
    // USO (TUN_F_USO4|USO6, Linux 6.2+) is asked for on the TAP too: the kernel then hands us
    // UDP GSO super-packets (gso_type UDP_L4) that the data path segments like TSO ones.
    // Older kernels refuse the bits (EINVAL) and set_offload_best retries without them.
    const unsigned want = kCsum | kTso4 | kTso6 | kTsoEcn | (tap ? kUso4 | kUso6 : 0u);
    auto r = dev.with([&](auto& x) { return x.set_offload_best(want); });
    im->dev_offload = r.ok() ? r.value() : 0;
    const unsigned b = im->dev_offload;
    spdlog::info("{} {}: TUNSETOFFLOAD accepted 0x{:x} (CSUM{} TSO4{} TSO6{} TSO_ECN{}{})", kind,
                 dev.name(), b, (b & kCsum) ? "+" : "-", (b & kTso4) ? "+" : "-",
                 (b & kTso6) ? "+" : "-", (b & kTsoEcn) ? "+" : "-",
                 !tap ? "" : (b & kUso4) ? " USO+" : " USO- (kernel refused TUN_F_USO4|USO6)");
  } else {
    // B4: a device left with offloads by an earlier owner would hand us super-frames we cannot
    // read without a vnet header; clear the device-wide mask.
    if (auto s = dev.with([](auto& x) { return x.set_offload(0); }); !s.ok())
      spdlog::warn("{} {}: TUNSETOFFLOAD(0) refused: {}", kind, dev.name(), s.message());
    spdlog::info("{} {}: offloads off (no vnet header; one frame per read/write)", kind, dev.name());
  }
  const int mtu = cfg.tunnel.device_mtu();
  // A persistent device made for an unprivileged user (`ip tuntap add ... user U`) may come
  // with its MTU, link state and address already set: what is already so is not set again
  // (each needs CAP_NET_ADMIN).
  const auto have = current_link(dev.name());
  if (have.mtu != mtu)
    if (auto s = dev.with([&](auto& x) { return x.set_mtu(mtu); }); !s.ok())
      return R::error("mtu " + std::to_string(mtu) + ": " + s.message() +
                      (have.mtu > 0 ? " (the device has mtu " + std::to_string(have.mtu) + ")" : ""));
  if (!have.up)
    if (auto s = dev.with([](auto& x) { return x.set_up(); }); !s.ok()) return R::from(s);
  if (!cfg.address.empty() && !has_address(dev.name(), cfg.address)) {
    auto r = io::check_command({"ip", "addr", "add", cfg.address, "dev", dev.name()});
    if (!r.ok()) return R::error("address " + cfg.address + ": " + r.message());
  }
  tunnel::EndpointOptions po;
  po.gro = cfg.gro && cfg.offload;
  po.vnet_hdr = cfg.offload;
  po.mtu = mtu;
  if (tap)
    if (auto s = std::get<io::Tap>(dev.d).get_mac(po.own_mac.data()); !s.ok())
      spdlog::warn("{}", s.message());
  if ((im->fdb = enc->make_shared_fdb())) {  // one FDB for every worker
    for (const auto& [mac, a] : cfg.static_fdb) im->fdb->add_static(mac, a);
    if (!cfg.group.empty()) im->fdb->add_flood(cfg.group, tunnel::FdbSource::Group);
    po.fdb = im->fdb;
  }
  po.any_source = cfg.evpn;  // Geneve: EVPN VTEPs come and go with the routes (GN-13)
  {  // peer sessions (docs/peer-protocol.md): every configured remote gets one
    tunnel::PeerOptions pso;
    pso.encap = enc->peer_encap();
    pso.integrity = cfg.integrity;
    pso.gre = enc->peer_gre();
    pso.rco_rx = udp_cfg && udp_cfg->remcsum_rx;
    pso.mtu = std::uint16_t(std::min(mtu, 65535));
    pso.gso_size = 65535;  // a TSO/GRO super-packet of up to 64 KiB of inner L3 is taken
    if (!cfg.peer_key.empty()) {
      std::string err;
      pso.key = tunnel::read_peer_key(cfg.peer_key, err);
      if (pso.key.empty()) return R::error(err);
    }
    im->peers = std::make_shared<tunnel::PeerTable>(pso);
    for (const auto& r : enc->configured_remotes()) im->peers->add(r);
    po.peer_sessions = im->peers;
    spdlog::info("peer sessions: epoch {:08x}, integrity {}, {}", im->peers->epoch(),
                 cfg.integrity ? "on (elided toward peers that have it)" : "off",
                 cfg.peer_key.empty() ? "unauthenticated" : "authenticated (peer-key)");
  }
  // Underlay: UDP (VXLAN, GUE) — one receive socket per worker; with several, all in the
  // SO_REUSEPORT group of local:port, so the kernel picks the worker by the flow's 4-tuple hash
  // (a VXLAN sender's source port is the inner flow's hash, udp_flow_src_port) — or raw IP
  // protocol 47 (GRE, ip6gre).
  auto gate = std::make_shared<io::GsoWriteGate>();  // one device: its queues share the verdict
  const bool use_udp = enc->socket() == tunnel::SocketKind::Udp;
  // Several workers share the port with SO_REUSEPORT, which would also admit another
  // endpoint's sockets on it (same user) and split the flows between the two: the port must
  // be free first. One worker binds without SO_REUSEPORT, and the kernel refuses a second.
  if (use_udp && nq > 1)
    if (auto s = io::check_udp_port_free(common.local, enc->dst_port()); !s.ok())
      return R::error("local " + common.local.to_string() + (enc->flow_src_ports() ? " dstport " : " port ") +
                      std::to_string(enc->dst_port()) + ": " + s.message());
  for (auto& wp : im->ws.workers) {
    auto& w = *wp;
    if (use_udp) {
      const tunnel::IpAddr local = common.local;
      const std::uint16_t port = enc->dst_port();
      io::UdpSocketOptions uo{local,
                              port,
                              !udp_cfg->tx_outer_csum(),
                              udp_cfg->udp6_zero_csum_rx,
                              common.ttl,
                              common.tos,
                              cfg.offload,
                              cfg.offload,
                              4 << 20,
                              w.idx != 0};
      uo.reuse_port = nq > 1;
      // 8 MiB receive queue (the kernel accounts twice that with its overhead): with 4 MiB a
      // 4-stream demo on 2 busy cores lost 0.03-0.1 % of the datagrams to overflow in 4 runs
      // of 5 (TCP retransmits 578-4440); with 8 MiB none in 8 of 8 (bench/tunnel-profile.md,
      // "Datagrams lost in the receive queue"). Drops that still happen are in stats (socket.rx_queue_drops).
      uo.rcvbuf_bytes = 8 << 20;
      uo.recv_tos = true;  // outer ECN for RFC 6040 decapsulation
      uo.df = socket_df(*enc);
      uo.mcast = !cfg.group.empty();
      uo.mcast_dev = cfg.group_dev;
      if (w.idx != 0) uo.gso_short_tail = im->ws.workers[0]->udp->gso_short_tail();
      auto u = io::UdpSocket::open(uo);
      if (!u.ok())
        return R::error("local " + local.to_string() + (enc->flow_src_ports() ? " dstport " : " port ") +
                        std::to_string(port) + ": " + u.message());
      w.udp.emplace(std::move(u.value()));
      w.dport = port;
      w.ttl = common.ttl;
      w.tos = common.tos;
      w.udp_df = uo.df;
      if (!cfg.group.empty() && w.idx == 0) {  // the group's datagrams: worker 0
        io::UdpSocketOptions go = uo;
        go.local = cfg.group;
        go.join_group = true;
        go.reuse_port = false;
        go.quiet = true;
        auto gs = io::UdpSocket::open(go);
        if (!gs.ok()) return R::error("group " + cfg.group.to_string() + ": " + gs.message());
        w.grp.emplace(std::move(gs.value()));
      }
    } else {
      // the same 8 MiB receive queue as the UDP socket's (socket.rx_queue_drops counts overflow)
      auto r = io::RawIpSocket::open(io::RawIpSocketOptions{common.local, 47, common.ttl, common.tos, 4 << 20, 8 << 20});
      if (!r.ok()) return R::from(r);
      w.raw.emplace(std::move(r.value()));
      if (w.idx != 0)  // send-only: a raw socket receives a copy of every GRE packet; worker 0 takes them
        if (auto s = w.raw->receive_none(); !s.ok()) return R::error("queues: raw socket: " + s.message());
    }
    w.path = std::make_unique<tunnel::Endpoint>(cfg.tunnel, po);
    // What the socket tells of the outer checksum (VXLAN on IPv6 without udp6zerocsumrx: the
    // kernel drops zero UDP checksums, so every datagram that arrives had one; otherwise no
    // socket interface reports it, README "Tunnel").
    w.outer_csum = enc->socket_outer_csum();
    w.dev->with([&](auto& d) {
      d.attach_writer(io::VnetWriterOptions{dev.name(), enc->link(),
                                            cfg.offload, mtu, 1000, opts.device_writev, gate});
    });
    const std::size_t slots = w.raw ? kRawSlots : kUdpSlots;
    w.rxs.resize(slots);
    w.udprx.resize(slots);
    w.rxbufs.resize(slots);
    w.rxspans.resize(slots);
    std::vector<int> fds = {w.dev->fd()};
    if (w.idx == 0 || !w.raw) fds.push_back(w.net_fd());
    if (w.grp) fds.push_back(w.grp->fd());
    if (auto e = w.open_events(fds); !e.empty()) return R::error(e);
  }
  // One TSO frame, one send: the device's gso_max_segs keeps the kernel's TSO frames to what
  // one UDP_SEGMENT train carries once each segment has its tunnel headers (without it a 64 KB
  // frame of 47 segments leaves as two trains). The device is ours; a refusal costs speed only.
  if (cfg.offload && use_udp) {
    if (const std::uint32_t segs = im->ws.workers[0]->path->segs_per_train(mtu)) {
      if (auto s = io::set_link_gso_max_segs(dev.name(), segs); !s.ok())
        spdlog::warn("{} {}: {} (TSO frames may leave in two sends)", kind, dev.name(), s.message());
      else
        spdlog::info("{} {}: gso_max_segs {} (one TSO frame fits one UDP_SEGMENT train)", kind,
                     dev.name(), segs);
    }
  }
  // control socket and signals (blocked before the worker threads exist: they inherit it)
  {
    ControlSocketOptions co;
    co.path = cfg.control.empty() ? default_control_path(dev.name()) : cfg.control;
    co.group = cfg.control_group;
    co.identity = {{"ofld", "tunnel"}, {"dev", dev.name()}, {"mode", im->mode()}};
    if (auto e = im->ws.open_control(std::move(co)); !e.empty()) return R::error(e);
    im->serve_control();
  }
  // Metrics (`metrics ADDR:PORT`): bound now (a port below 1024 needs the privilege), served
  // once privileges are dropped; each scrape asks the control thread for a snapshot round.
  if (!cfg.metrics.empty()) {
    auto l = parse_metrics_listen(cfg.metrics);
    if (auto* e = std::get_if<std::string>(&l)) return R::error(*e);
    auto m = MetricsServer::bind(std::get<MetricsListen>(l));
    if (!m.ok()) return R::error(m.message());
    im->metrics = std::move(m.value());
    im->ws.ctl->watch(im->metrics->ask_fd(), [p = im.get()] {
      if (!p->metrics->take_asks()) return;
      p->ws.snapshot([p](const std::vector<detail::WorkerDoc>& docs) {
        p->metrics->publish(std::make_shared<const json>(p->stats_from(docs)));
      });
    });
  }
  // Least privilege: from here on the endpoint only uses what it opened; become `user` (or, not
  // root, e.g. systemd's DynamicUser with AmbientCapabilities) keeping only the capabilities
  // still needed. Before the EVPN client: its threads inherit the reduced set.
  if (!cfg.user.empty() || ::geteuid() != 0) {
    const std::uint64_t keep = caps_after_start(cfg);
    if (auto s = drop_privileges(cfg.user, keep); !s.ok()) return R::error(s.message());
    spdlog::info("privileges dropped uid={} gid={} cap_eff=0x{:x}", ::getuid(), ::getgid(), effective_caps());
  }
  if (im->metrics) {
    im->metrics->start();
    const auto l = std::get<MetricsListen>(parse_metrics_listen(cfg.metrics));
    spdlog::info("metrics http://{}:{}/metrics", l.host.find(':') != std::string::npos ? "[" + l.host + "]" : l.host,
                 im->metrics->port());
  }
  if (cfg.evpn) {  // a VXLAN and Geneve setting (config.cpp)
    std::string e;
    im->evpn = start_evpn(im->evpn_options(cfg, cfg.evpn_server), e);
    if (!im->evpn) return R::error(e);
  }
  // systemd (Type=notify): ready once the workers run and the control socket is served;
  // STOPPING=1 when a stop begins (then each worker drains, see Worker::drain).
  im->ws.on_ready = [p = im.get()] {
    notify("READY=1\nSTATUS=forwarding on " + p->dev().name());
    spdlog::info("ready dev={}", p->dev().name());
  };
  im->ws.on_stopping = [] { notify("STOPPING=1\nSTATUS=draining"); };
  im->ws.on_reload = [p = im.get()] { p->reload("SIGHUP"); };
  im->ws.cpus = cfg.cpus;
  // Once a second on the control thread: the drop lines, from a snapshot round (never a read
  // of another thread's counters).
  im->ws.each_second = [p = im.get()] {
    p->ws.snapshot([p](const std::vector<detail::WorkerDoc>& docs) { p->drop_log.report(p->stats_from(docs)); });
  };
  if (!plan.why.empty()) spdlog::info("queues {}", plan.why);
  std::string extra = enc->describe();
  if (!cfg.group.empty())
    extra += " group " + cfg.group.to_string() + (cfg.group_dev.empty() ? "" : " dev " + cfg.group_dev);
  if (cfg.evpn) extra += " evpn " + cfg.evpn_server;
  spdlog::info("tunnel {}: {}{} mtu {}{}{}", dev.name(), im->mode(), extra, mtu,
               mq ? " queues " + std::to_string(nq) + " (IFF_MULTI_QUEUE" + (nq > 1 ? ", SO_REUSEPORT)" : ")") : "",
               cfg.cpus.empty() ? "" : " cpus " + cpus_text(cfg.cpus));
  return std::unique_ptr<TunnelDaemon>(new TunnelDaemon(std::move(im)));
}

int TunnelDaemon::run() { return impl_->ws.run(); }

io::Result<json> query_stats(const std::string& path) { return query_control(path, ""); }

io::Result<std::string> query_control_text(const std::string& path, const std::string& request) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path) {
    ::close(s);
    return io::Result<std::string>::error("control: path too long");
  }
  std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  if (::connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    auto e = "connect " + path + " (is `ofld tunnel` running?): " + std::strerror(errno);
    ::close(s);
    return io::Result<std::string>::error(e);
  }
  // A daemon that accepts but never answers must not hang the client (the daemon itself
  // closes a client after its bounds: docs/ofld.8 "CONTROL SOCKET").
  timeval tv{30, 0};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string line = request.empty() ? request : request + "\n";
  if (!line.empty() && ::send(s, line.data(), line.size(), MSG_NOSIGNAL) != ssize_t(line.size())) {
    ::close(s);
    return io::Result<std::string>::error("control: write to " + path + ": " + std::strerror(errno));
  }
  ::shutdown(s, SHUT_WR);  // the request is complete (none: the stats)
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(s, buf, sizeof buf)) > 0) out.append(buf, std::size_t(n));
  ::close(s);
  return out;
}

io::Result<json> query_control(const std::string& path, const std::string& request) {
  auto t = query_control_text(path, request);
  if (!t.ok()) return io::Result<json>::error(t.message());
  auto j = json::parse(t.value(), nullptr, false);
  if (j.is_discarded()) return io::Result<json>::error("control: malformed reply from " + path);
  return j;
}

}  // namespace ofld::daemon

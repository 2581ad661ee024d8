// `ofld tunnel` endpoint process: epoll over TAP, UDP and control sockets (wiring only).
#include "ofld/daemon/tunnel_daemon.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <net/if.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "ofld/gro/engine.hpp"
#include "ofld/io/tap.hpp"
#include "ofld/io/udp_socket.hpp"
#include "ofld/io/vnet_writer.hpp"
#include "ofld/offload/gro_context.hpp"
#include "ofld/offload/gso_context.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "worker_set.hpp"

namespace ofld::daemon {

using json = nlohmann::json;
namespace wv = wire::virtio_net;

namespace {
std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}
std::string err(const std::string& what) { return what + ": " + std::strerror(errno); }
constexpr std::size_t kBatch = 64;          // TAP reads per wake-up (budget)
constexpr std::size_t kMaxFrame = 65536 + 64;
constexpr std::size_t kRxSlots = 16;         // recvmmsg slots (each a 64 KiB UDP_GRO train)
constexpr std::size_t kRxBudget = 8;         // recvmmsg calls per wake-up before a GRO flush

}  // namespace

// One queue of the endpoint: a TAP queue fd, its own UDP sockets (the receive socket in the
// SO_REUSEPORT group of local:dstport when there are several queues), its own Endpoint (GRO
// engine, buffers, counters; the FDB is shared) and epoll set. Worker 0 runs in the thread
// that calls run() and also serves the control socket and signals.
struct Worker : detail::WorkerBase {
  const DaemonConfig* cfg = nullptr;
  std::optional<io::Tap> tap;
  std::optional<io::VnetWriter> writer;  // TAP writes (fallbacks: io/vnet_writer.hpp)
  std::optional<io::UdpSocket> rx;
  std::map<std::uint16_t, io::UdpSocket> tx;  // per source port (udp_flow_src_port)
  bool tx_port_pool_full = false;
  std::unique_ptr<tunnel::Endpoint> dp;
  bool tap_write_warned = false;
  std::uint64_t last_tick = 0;
  std::vector<std::uint8_t> tapbuf;
  std::vector<io::UdpRx> rxs;
  std::vector<core::BufferRef> rxbufs;            // one per recvmmsg slot (shared with packets)
  std::vector<std::span<std::uint8_t>> rxspans;
  std::vector<tunnel::TxTrain> trains;
  std::vector<tunnel::TapFrame> frames;

  void handle(int fd) {
    if (fd == tap->fd()) handle_tap();
    else if (fd == rx->fd()) handle_udp();
  }

  // Worker 0, every loop iteration: age the shared FDB about once a second.
  void tick() {
    auto t = now_ns();
    if (t - last_tick > 1000000000ull) {
      std::lock_guard g(mu);
      dp->tick(t);
      last_tick = t;
    }
  }

  io::UdpSocket& tx_socket(std::uint16_t sport) {
    auto it = tx.find(sport);
    if (it != tx.end()) return it->second;
    if (!tx_port_pool_full && tx.size() < 64) {
      const auto& v = cfg->vxlan;
      io::UdpSocketOptions o{v.local, sport, !v.tx_outer_csum(), false, v.ttl, v.tos,
                             rx->gso(), false, 4 << 20, true};
      o.gso_short_tail = rx->gso_short_tail();  // probed once on the primary socket
      o.reuse_port = cfg->queues > 1;           // every worker has its own socket on sport
      auto s = io::UdpSocket::open(o);
      if (s.ok()) return tx.emplace(sport, std::move(s.value())).first->second;
      spdlog::warn("udp: source port {} not available ({}); using port {} for such flows", sport,
                   s.message(), rx->local_port());
      tx_port_pool_full = true;
    }
    return *rx;
  }

  void send_trains() {
    for (auto& t : trains) {
      auto& s = tx_socket(t.src_port);
      // Outer TOS of this train (configured tos or tos inherit, ECN from the inner packet,
      // RFC 6040 §4.1 as the kernel's vxlan_xmit_one); a setsockopt only when it changes.
      if (auto ts = s.set_tos(t.tos); !ts.ok()) spdlog::debug("{}", ts.message());
      auto r = s.send_train(t.remote, cfg->vxlan.dstport, t.buf, t.seg_size);
      if (!r.ok()) spdlog::debug("{}", r.message());
      dp->sent(t, r.ok(), s.gso());
    }
    dp->recycle(trains);
  }

  void handle_tap() {
    std::lock_guard g(mu);
    bool vnet = tap->has_vnet_hdr();
    for (std::size_t i = 0; i < kBatch; ++i) {
      ssize_t n = ::read(tap->fd(), tapbuf.data(), tapbuf.size());
      if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) spdlog::warn("{}", err("tap read"));
        break;
      }
      std::span<const std::uint8_t> b(tapbuf.data(), std::size_t(n));
      wv::Hdr h{};
      if (vnet) {
        auto p = wv::parse(b, wv::kHdrLen, wv::ByteOrder::Little);
        if (!p.ok()) continue;
        h = p.value();
        b = b.subspan(wv::kHdrLen);
      }
      dp->transmit(h, b, now_ns(), trains);
    }
    send_trains();
  }

  void write_frames() {
    for (auto& f : frames) {
      auto r = writer->write(f);
      if (r.failed) {
        if (!tap_write_warned) spdlog::warn("tap write: {}", std::strerror(r.error));
        tap_write_warned = true;
      }
      dp->written(r.frames, r.bytes, r.failed);
    }
    frames.clear();  // releases the packets, hence the receive buffers they referenced
  }

  // Drain the socket (bounded): recvmmsg batches until EAGAIN or the budget, each followed
  // by a GRO flush and the TAP writes (NAPI: poll a batch, flush at the end of the poll).
  void handle_udp() {
    std::lock_guard g(mu);
    auto t = now_ns();
    // What the socket tells about each datagram's outer UDP checksum: on IPv6 without
    // udp6zerocsumrx the kernel drops a zero checksum (UDP_NO_CHECK6_RX off), so every
    // datagram had one; otherwise no socket interface reports it. Unknown trusts a seed-valued
    // inner checksum like Present (decap(); README "Tunnel": the receive form of
    // CHECKSUM_PARTIAL).
    const auto& vc = cfg->vxlan;
    const auto outer_csum = vc.ipv6() && !vc.udp6_zero_csum_rx ? tunnel::OuterCsum::Present
                                                               : tunnel::OuterCsum::Unknown;
    for (std::size_t call = 0; call < kRxBudget; ++call) {
      // A slot whose bytes are still referenced by a packet gets a fresh buffer (normally
      // every reference is gone: the previous wake-up flushed GRO and wrote its frames).
      for (std::size_t i = 0; i < rxbufs.size(); ++i)
        if (!rxbufs[i] || rxbufs[i].use_count() > 1) {
          rxbufs[i] = core::Buffer::create(kMaxFrame);
          rxspans[i] = rxbufs[i]->bytes;
        }
      auto r = rx->recv_batch(rxspans, rxs);
      if (!r.ok()) {
        spdlog::warn("{}", r.message());
        break;
      }
      std::size_t n = r.value();
      for (std::size_t i = 0; i < n; ++i) {
        const auto& m = rxs[i];
        dp->receive_train(rxbufs[i], 0, m.len, m.gso_size, m.from, outer_csum, t, m.tos);
      }
      // GRO flush and TAP writes per batch: the packets reference the slots' bytes, which
      // the next recvmmsg reuses (aggregates are bounded at 64 KiB anyway).
      dp->rx_flush(t, frames);
      write_frames();
      if (n < rxs.size()) break;  // drained
    }
  }

  // This worker's counters (call with `mu` held).
  json stats() const {
    json j = dp->stats();  // the endpoint's document; the daemon adds its I/O
    j["tap_write"] = detail::writer_stats(*writer);
    std::uint64_t gso_sends = rx->stats().gso_sends, plain = rx->stats().plain_sends,
                  gso_off = rx->stats().gso_disabled, gro_bufs = rx->stats().gro_buffers;
    for (const auto& [p, s] : tx) {
      gso_sends += s.stats().gso_sends;
      plain += s.stats().plain_sends;
      gso_off += s.stats().gso_disabled;
    }
    j["socket"] = {{"udp_segment", rx->gso()}, {"udp_gro", rx->gro()},
                   {"udp_segment_sends", gso_sends}, {"plain_sends", plain},
                   {"udp_segment_disabled", gso_off}, {"gro_buffers", gro_bufs},
                   {"recv_batches", rx->stats().recv_batches},
                   {"recv_buffers", rx->stats().recv_buffers},
                   {"tx_ports", std::uint64_t(tx.size())}};
    return j;
  }
};

struct TunnelDaemon::Impl {
  DaemonConfig cfg;  // before ws: the workers point at it
  std::shared_ptr<tunnel::SharedFdb> fdb;
  unsigned tap_offload = 0;
  detail::WorkerSet<Worker> ws;

  const io::Tap& tap() const { return *ws.workers[0]->tap; }

  json stats() const {
    return detail::workers_stats(
        ws.workers, {{"dev", tap().name()}, {"vni", cfg.vxlan.vni}, {"queues", ws.workers.size()}},
        [&](json& out) {
          out["fdb"]["entries"] = fdb->size();
          out["tap"] = {{"vnet_hdr", tap().has_vnet_hdr()}, {"offload_bits", tap_offload},
                        {"multi_queue", ws.workers.size() > 1}};
        });
  }

};

TunnelDaemon::TunnelDaemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TunnelDaemon::~TunnelDaemon() = default;
const std::string& TunnelDaemon::tap_name() const noexcept { return impl_->tap().name(); }
void TunnelDaemon::request_stop() noexcept { impl_->ws.stop_all(); }
json TunnelDaemon::stats_json() const { return impl_->stats(); }

io::Result<std::unique_ptr<TunnelDaemon>> TunnelDaemon::create(const DaemonConfig& cfg) {
  using R = io::Result<std::unique_ptr<TunnelDaemon>>;
  if (auto e = tunnel::validate(cfg.vxlan)) return R::error(*e);
  if (cfg.queues < 1 || cfg.queues > kMaxQueues)
    return R::error("queues: " + std::to_string(cfg.queues) + " is not in 1.." +
                    std::to_string(kMaxQueues));
  // The data path frees and reallocates 64 KiB buffers all the time: keep them in the heap
  // (no mmap/munmap per buffer) and do not give the heap top back on every free (brk churn
  // and page faults were ~5% of an endpoint's profile).
  ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 64 << 20);
  auto im = std::make_unique<Impl>();
  im->cfg = cfg;
  const auto& v = cfg.vxlan;
  const unsigned nq = cfg.queues;
  const bool mq = nq > 1;
  // TAP: the first queue creates the device (IFF_MULTI_QUEUE when more than one queue), the
  // others attach to it by name. Offloads, MTU and link state are device-wide.
  for (unsigned q = 0; q < nq; ++q) {
    auto t = io::Tap::open(io::TapOptions{q ? im->ws.workers[0]->tap->name() : cfg.dev, cfg.offload,
                                          mq, 10, true});
    if (!t.ok()) {
      if (q == 0) return R::from(t);
      return R::error("queues: TAP queue " + std::to_string(q) + ": " + t.message());
    }
    auto w = std::make_unique<Worker>();
    w->cfg = &im->cfg;
    w->idx = q;
    w->tap.emplace(std::move(t.value()));
    im->ws.workers.push_back(std::move(w));
  }
  auto& tap = *im->ws.workers[0]->tap;
  if (cfg.offload) {
    using namespace io::tun_offload;
    // USO (TUN_F_USO4|USO6, Linux 6.2+) is asked for too: the kernel then hands us UDP GSO
    // super-packets (gso_type UDP_L4) that the data path segments like TSO ones. Older
    // kernels refuse the bits (EINVAL) and set_offload_best retries without them.
    auto r = tap.set_offload_best(kCsum | kTso4 | kTso6 | kTsoEcn | kUso4 | kUso6);
    im->tap_offload = r.ok() ? r.value() : 0;
    spdlog::info("tap {}: TUNSETOFFLOAD accepted 0x{:x} (CSUM{} TSO4{} TSO6{} TSO_ECN{} USO{})",
                 tap.name(), im->tap_offload, (im->tap_offload & kCsum) ? "+" : "-",
                 (im->tap_offload & kTso4) ? "+" : "-", (im->tap_offload & kTso6) ? "+" : "-",
                 (im->tap_offload & kTsoEcn) ? "+" : "-",
                 (im->tap_offload & kUso4) ? "+" : "- (kernel refused TUN_F_USO4|USO6)");
  } else {
    // B4: a TAP left with offloads by an earlier owner would hand us super-frames we cannot
    // read without a vnet header; clear the device-wide mask.
    if (auto s = tap.set_offload(0); !s.ok())
      spdlog::warn("tap {}: TUNSETOFFLOAD(0) refused: {}", tap.name(), s.message());
    spdlog::info("tap {}: offloads off (no vnet header; one frame per read/write)", tap.name());
  }
  int mtu = v.mtu ? v.mtu : 1500 - v.overhead();
  if (auto s = tap.set_mtu(mtu); !s.ok()) return R::error("mtu " + std::to_string(mtu) + ": " + s.message());
  if (auto s = tap.set_up(); !s.ok()) return R::from(s);
  tunnel::EndpointOptions dopt;
  dopt.gro = cfg.gro && cfg.offload;
  dopt.vnet_hdr = cfg.offload;
  dopt.mtu = mtu;
  dopt.frame_packets = true;  // writev the packet's pieces, no flattening copy
  {
    int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifreq ifr{};
    std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", tap.name().c_str());
    if (s >= 0 && ::ioctl(s, SIOCGIFHWADDR, &ifr) == 0)
      std::memcpy(dopt.own_mac.data(), ifr.ifr_hwaddr.sa_data, 6);
    if (s >= 0) ::close(s);
  }
  if (!cfg.address.empty()) {
    auto r = io::check_command({"ip", "addr", "add", cfg.address, "dev", tap.name()});
    if (!r.ok()) return R::error("address " + cfg.address + ": " + r.message());
  }
  im->fdb = std::make_shared<tunnel::SharedFdb>(std::uint64_t(v.ageing_s) * 1000000000ull);
  for (const auto& [mac, ip] : cfg.static_fdb) im->fdb->add_static(mac, ip);
  dopt.fdb = im->fdb;
  // UDP: one receive socket per worker; with several, all in the SO_REUSEPORT group of
  // local:dstport, so the kernel picks the worker by the flow's 4-tuple hash (the sender's
  // source port is the inner flow's hash, udp_flow_src_port).
  auto gate = std::make_shared<io::GsoWriteGate>();  // one device: its queues share the verdict
  for (auto& wp : im->ws.workers) {
    auto& w = *wp;
    io::UdpSocketOptions uo{v.local, v.dstport, !v.tx_outer_csum(), v.udp6_zero_csum_rx,
                            v.ttl, v.tos, cfg.offload, cfg.offload, 4 << 20, w.idx != 0};
    uo.reuse_port = mq;
    uo.recv_tos = true;  // outer ECN for RFC 6040 decapsulation
    if (w.idx != 0) uo.gso_short_tail = im->ws.workers[0]->rx->gso_short_tail();
    auto u = io::UdpSocket::open(uo);
    if (!u.ok()) return R::error("local " + v.local.to_string() + " dstport " +
                                 std::to_string(v.dstport) + ": " + u.message());
    w.rx.emplace(std::move(u.value()));
    w.dp = std::make_unique<tunnel::Endpoint>(v, dopt);
    w.writer.emplace(w.tap->fd(), io::VnetWriterOptions{tap.name(), wire::LinkType::Ethernet,
                                                        cfg.offload, mtu, 1000, nullptr, gate});
    w.tapbuf.resize(kMaxFrame);
    w.rxs.resize(kRxSlots);
    w.rxbufs.resize(kRxSlots);
    w.rxspans.resize(kRxSlots);
    int fl = ::fcntl(w.tap->fd(), F_GETFL);
    ::fcntl(w.tap->fd(), F_SETFL, fl | O_NONBLOCK);
    if (auto e = w.open_events({w.tap->fd(), w.rx->fd()}); !e.empty()) return R::error(e);
  }
  // control socket and signals (blocked before the worker threads exist: they inherit it)
  if (auto e = im->ws.open_control(cfg.control.empty() ? default_control_path(tap.name()) : cfg.control);
      !e.empty())
    return R::error(e);
  im->ws.stats_text = [p = im.get()] { return p->stats().dump() + "\n"; };
  spdlog::info("tunnel {}: vxlan id {} local {} dstport {} remotes {} mtu {}{}{}{}", tap.name(), v.vni,
               v.local.to_string(), v.dstport, v.remotes.size(), mtu,
               v.remcsum_tx ? " remcsumtx" : "", v.remcsum_rx ? " remcsumrx" : "",
               mq ? " queues " + std::to_string(nq) + " (IFF_MULTI_QUEUE, SO_REUSEPORT)" : "");
  return std::unique_ptr<TunnelDaemon>(new TunnelDaemon(std::move(im)));
}

int TunnelDaemon::run() { return impl_->ws.run(); }

io::Result<json> query_stats(const std::string& path) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path) return io::Result<json>::error("control: path too long");
  std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  if (::connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    auto e = err("connect " + path + " (is `ofld tunnel` running?)");
    ::close(s);
    return io::Result<json>::error(e);
  }
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(s, buf, sizeof buf)) > 0) out.append(buf, std::size_t(n));
  ::close(s);
  auto j = json::parse(out, nullptr, false);
  if (j.is_discarded()) return io::Result<json>::error("control: malformed reply from " + path);
  return j;
}

}  // namespace ofld::daemon

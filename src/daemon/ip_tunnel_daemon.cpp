// `ofld tunnel gue|gre|ip6gre` endpoint process: epoll over TUN, UDP or raw IP, control
// socket and signals (wiring only; packet logic in tunnel::Endpoint).
#include "ofld/daemon/ip_tunnel_daemon.hpp"

#include <signal.h>
#include <linux/filter.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>
#include <vector>
#include <cstring>

#include <spdlog/spdlog.h>

#include "ofld/gro/engine.hpp"
#include "ofld/io/raw_ip_socket.hpp"
#include "ofld/io/tap.hpp"
#include "ofld/io/tun.hpp"
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
constexpr std::size_t kBatch = 64;
constexpr std::size_t kMaxFrame = 65536 + 64;

}  // namespace

// One queue of the endpoint (see tunnel_daemon.cpp): a TUN queue fd, its own UDP socket
// (GUE; SO_REUSEPORT group on the port when there are several) or raw IP socket (GRE: every
// raw socket sees every packet, so only worker 0 receives; the others' sockets carry a
// drop-all filter and only send), its own Endpoint and epoll set.
struct IpWorker : detail::WorkerBase {
  const DaemonConfig* cfg_p = nullptr;
  std::optional<io::Tun> tun;
  std::optional<io::VnetWriter> writer;  // TUN writes (fallbacks: io/vnet_writer.hpp)
  std::optional<io::UdpSocket> udp;    // GUE
  std::optional<io::RawIpSocket> raw;  // GRE
  std::unique_ptr<tunnel::Endpoint> dp;
  bool write_warned = false;
  std::vector<std::uint8_t> tunbuf, netbuf;
  std::vector<tunnel::TxTrain> trains;
  std::vector<tunnel::TapFrame> frames;

  const DaemonConfig& cfg() const { return *cfg_p; }
  void handle(int fd) {
    if (fd == tun->fd()) handle_tun();
    else if (fd == net_fd()) handle_net();
  }
  void tick() {}

  int net_fd() const { return udp ? udp->fd() : raw->fd(); }

  void send_trains() {
    for (auto& t : trains) {
      // Outer TOS of this train (tos N or tos inherit, ECN from the inner packet, RFC 6040 §4.1).
      if (auto ts = udp ? udp->set_tos(t.tos) : raw->set_tos(t.tos); !ts.ok())
        spdlog::debug("{}", ts.message());
      auto r = udp ? udp->send_train(t.remote, cfg().ip.port, t.buf, t.seg_size)
                   : raw->send_train(t.remote, t.buf, t.seg_size);
      if (!r.ok()) spdlog::debug("{}", r.message());
      dp->sent(t, r.ok(), udp && udp->gso());
    }
    dp->recycle(trains);
  }

  void handle_tun() {
    std::lock_guard g(mu);
    const bool vnet = tun->has_vnet_hdr();
    for (std::size_t i = 0; i < kBatch; ++i) {
      ssize_t n = ::read(tun->fd(), tunbuf.data(), tunbuf.size());
      if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) spdlog::warn("{}", err("tun read"));
        break;
      }
      std::span<const std::uint8_t> b(tunbuf.data(), std::size_t(n));
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
        if (!write_warned) spdlog::warn("tun write: {}", std::strerror(r.error));
        write_warned = true;
      }
      dp->written(r.frames, r.bytes, r.failed);
    }
    frames.clear();
  }

  void handle_net() {
    std::lock_guard g(mu);
    const auto t = now_ns();
    for (std::size_t i = 0; i < kBatch; ++i) {
      if (udp) {
        auto r = udp->recv(netbuf);
        if (!r.ok()) {
          spdlog::warn("{}", r.message());
          break;
        }
        if (!r.value()) break;
        const auto& m = *r.value();
        dp->receive_train(std::span<const std::uint8_t>(netbuf.data(), m.len), m.gso_size, m.from,
                          tunnel::OuterCsum::Unknown, t, m.tos);
      } else {
        auto r = raw->recv(netbuf);
        if (!r.ok()) {
          spdlog::warn("{}", r.message());
          break;
        }
        if (!r.value()) break;
        const auto& m = *r.value();
        dp->receive(std::span<const std::uint8_t>(netbuf.data() + m.off, m.len), m.from,
                    tunnel::OuterCsum::Unknown, t, m.tos);
      }
    }
    dp->rx_flush(t, frames);
    write_frames();
  }

  json stats() const {
    json j = dp->stats();  // the endpoint's document; the daemon adds its I/O
    j["tun_write"] = detail::writer_stats(*writer);
    if (udp) {
      j["socket"] = {{"kind", "udp"}, {"udp_segment", udp->gso()}, {"udp_gro", udp->gro()},
                     {"udp_segment_sends", udp->stats().gso_sends},
                     {"plain_sends", udp->stats().plain_sends},
                     {"udp_segment_disabled", udp->stats().gso_disabled},
                     {"gro_buffers", udp->stats().gro_buffers}};
    } else {
      j["socket"] = {{"kind", "raw_ip"}, {"sendmmsg_calls", raw->stats().sendmmsg_calls},
                     {"datagrams_sent", raw->stats().datagrams_sent},
                     {"send_errors", raw->stats().send_errors}};
    }
    return j;
  }
};


struct IpTunnelDaemon::Impl {
  DaemonConfig cfg;  // before ws: the workers point at it
  unsigned tun_offload = 0;
  detail::WorkerSet<IpWorker> ws;

  const io::Tun& tun() const { return *ws.workers[0]->tun; }

  json stats() const {
    return detail::workers_stats(
        ws.workers,
        {{"dev", tun().name()}, {"mode", std::string(cfg.ip.name())}, {"queues", ws.workers.size()}},
        [&](json& out) {
          out["tun"] = {{"vnet_hdr", tun().has_vnet_hdr()}, {"offload_bits", tun_offload},
                        {"multi_queue", ws.workers.size() > 1}};
        });
  }

};

IpTunnelDaemon::IpTunnelDaemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IpTunnelDaemon::~IpTunnelDaemon() = default;
void IpTunnelDaemon::request_stop() noexcept { impl_->ws.stop_all(); }
json IpTunnelDaemon::stats_json() const { return impl_->stats(); }

io::Result<std::unique_ptr<IpTunnelDaemon>> IpTunnelDaemon::create(const DaemonConfig& cfg) {
  using R = io::Result<std::unique_ptr<IpTunnelDaemon>>;
  if (cfg.mode == TunnelMode::Vxlan) return R::error("IpTunnelDaemon: not an L3 tunnel mode");
  const auto& v = cfg.ip;
  if (auto e = tunnel::validate(v)) return R::error(*e);
  if (cfg.queues < 1 || cfg.queues > kMaxQueues)
    return R::error("queues: " + std::to_string(cfg.queues) + " is not in 1.." +
                    std::to_string(kMaxQueues));
  auto im = std::make_unique<Impl>();
  im->cfg = cfg;
  const unsigned nq = cfg.queues;
  const bool mq = nq > 1;
  for (unsigned q = 0; q < nq; ++q) {
    auto t = io::Tun::open(q ? im->ws.workers[0]->tun->name() : cfg.dev, cfg.offload, mq);
    if (!t.ok()) {
      if (q == 0) return R::from(t);
      return R::error("queues: TUN queue " + std::to_string(q) + ": " + t.message());
    }
    auto w = std::make_unique<IpWorker>();
    w->cfg_p = &im->cfg;
    w->idx = q;
    w->tun.emplace(std::move(t.value()));
    im->ws.workers.push_back(std::move(w));
  }
  auto& tun = *im->ws.workers[0]->tun;
  if (cfg.offload) {
    using namespace io::tun_offload;
    auto r = tun.set_offload_best(kCsum | kTso4 | kTso6 | kTsoEcn);
    im->tun_offload = r.ok() ? r.value() : 0;
    spdlog::info("tun {}: TUNSETOFFLOAD accepted 0x{:x} (CSUM{} TSO4{} TSO6{} TSO_ECN{})",
                 tun.name(), im->tun_offload, (im->tun_offload & kCsum) ? "+" : "-",
                 (im->tun_offload & kTso4) ? "+" : "-", (im->tun_offload & kTso6) ? "+" : "-",
                 (im->tun_offload & kTsoEcn) ? "+" : "-");
  } else {
    spdlog::info("tun {}: offloads off (no vnet header; one packet per read/write)", tun.name());
  }
  const int mtu = v.mtu ? v.mtu : 1500 - v.overhead();
  if (auto s = tun.set_mtu(mtu); !s.ok()) return R::error("mtu " + std::to_string(mtu) + ": " + s.message());
  if (auto s = tun.set_up(); !s.ok()) return R::from(s);
  if (!cfg.address.empty()) {
    auto r = io::check_command({"ip", "addr", "add", cfg.address, "dev", tun.name()});
    if (!r.ok()) return R::error("address " + cfg.address + ": " + r.message());
  }
  tunnel::EndpointOptions dopt;
  dopt.gro = cfg.gro && cfg.offload;
  dopt.vnet_hdr = cfg.offload;
  dopt.frame_packets = true;  // writev the packet's pieces, no flattening copy (as VXLAN)
  auto gate = std::make_shared<io::GsoWriteGate>();  // one device: its queues share the verdict
  for (auto& wp : im->ws.workers) {
    auto& w = *wp;
    if (v.gue()) {
      io::UdpSocketOptions uo{v.local, v.port, !v.tx_outer_csum(), v.udp6_zero_csum_rx,
                              v.ttl, v.tos, cfg.offload, cfg.offload, 4 << 20, w.idx != 0};
      uo.reuse_port = mq;
      uo.recv_tos = true;  // outer ECN for RFC 6040 decapsulation
      if (w.idx != 0) uo.gso_short_tail = im->ws.workers[0]->udp->gso_short_tail();
      auto u = io::UdpSocket::open(uo);
      if (!u.ok())
        return R::error("local " + v.local.to_string() + " port " + std::to_string(v.port) + ": " +
                        u.message());
      w.udp.emplace(std::move(u.value()));
    } else {
      auto r = io::RawIpSocket::open(io::RawIpSocketOptions{v.local, 47, v.ttl, v.tos, 4 << 20});
      if (!r.ok()) return R::from(r);
      w.raw.emplace(std::move(r.value()));
      if (w.idx != 0) {
        // Send-only: a raw socket receives a copy of every GRE packet; worker 0 takes them.
        sock_filter drop_all{BPF_RET | BPF_K, 0, 0, 0};
        sock_fprog prog{1, &drop_all};
        if (::setsockopt(w.raw->fd(), SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) < 0)
          return R::error(err("queues: raw socket filter"));
      }
    }
    w.dp = std::make_unique<tunnel::Endpoint>(v, dopt);
    w.writer.emplace(w.tun->fd(), io::VnetWriterOptions{tun.name(), wire::LinkType::RawIp,
                                                        cfg.offload, mtu, 1000, nullptr, gate});
    w.tunbuf.resize(kMaxFrame);
    w.netbuf.resize(kMaxFrame);
    std::vector<int> fds = {w.tun->fd()};
    if (w.idx == 0 || v.gue()) fds.push_back(w.net_fd());
    if (auto e = w.open_events(fds); !e.empty()) return R::error(e);
  }
  // control socket and signals (blocked before the worker threads exist: they inherit it)
  if (auto e = im->ws.open_control(cfg.control.empty() ? default_control_path(tun.name()) : cfg.control);
      !e.empty())
    return R::error(e);
  im->ws.stats_text = [p = im.get()] { return p->stats().dump() + "\n"; };
  std::string extra;
  if (v.gue()) {
    extra = " port " + std::to_string(v.port) + (v.remcsum_tx ? " remcsumtx" : "") +
            (v.remcsum_rx ? " remcsumrx" : "") + (v.tx_outer_csum() ? "" : " (no outer UDP checksum)");
  } else {
    if (v.ikey) extra += " ikey " + std::to_string(*v.ikey);
    if (v.okey) extra += " okey " + std::to_string(*v.okey);
    if (v.icsum) extra += " icsum";
    if (v.ocsum) extra += " ocsum";
  }
  if (mq) extra += " queues " + std::to_string(nq);
  spdlog::info("tunnel {}: {} local {} remote {}{} mtu {}", tun.name(), v.name(),
               v.local.to_string(), v.remote.to_string(), extra, mtu);
  return std::unique_ptr<IpTunnelDaemon>(new IpTunnelDaemon(std::move(im)));
}

int IpTunnelDaemon::run() { return impl_->ws.run(); }

}  // namespace ofld::daemon

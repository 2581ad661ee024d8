// `ofld tunnel` endpoint process: epoll over TAP, UDP and control sockets (wiring only).
#include "ofld/daemon/tunnel_daemon.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <net/if.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include <spdlog/spdlog.h>

#include "ofld/gro/engine.hpp"
#include "ofld/io/tap.hpp"
#include "ofld/io/udp_socket.hpp"
#include "ofld/offload/gro_context.hpp"
#include "ofld/offload/gso_context.hpp"
#include "ofld/tunnel/datapath.hpp"

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
constexpr std::size_t kIovMax = 256;
}  // namespace

struct TunnelDaemon::Impl {
  DaemonConfig cfg;
  std::optional<io::Tap> tap;
  std::optional<io::UdpSocket> rx;
  std::map<std::uint16_t, io::UdpSocket> tx;  // per source port (udp_flow_src_port)
  bool tx_port_pool_full = false;
  std::unique_ptr<tunnel::Datapath> dp;
  unsigned tap_offload = 0;
  int ep = -1, sig = -1, ctl = -1;
  std::string ctl_path;
  bool stop = false;
  bool tap_write_warned = false;
  std::vector<std::uint8_t> tapbuf;
  std::vector<io::UdpRx> rxs;
  std::vector<core::BufferRef> rxbufs;            // one per recvmmsg slot (shared with packets)
  std::vector<std::span<std::uint8_t>> rxspans;
  std::vector<tunnel::TxTrain> trains;
  std::vector<tunnel::TapFrame> frames;
  std::vector<std::span<const std::uint8_t>> pieces;
  std::vector<iovec> iov;
  std::uint64_t last_tick = 0;

  ~Impl() {
    if (ctl >= 0) {
      ::close(ctl);
      ::unlink(ctl_path.c_str());
    }
    if (sig >= 0) ::close(sig);
    if (ep >= 0) ::close(ep);
  }

  io::UdpSocket& tx_socket(std::uint16_t sport) {
    auto it = tx.find(sport);
    if (it != tx.end()) return it->second;
    if (!tx_port_pool_full && tx.size() < 64) {
      const auto& v = cfg.vxlan;
      io::UdpSocketOptions o{v.local, sport, !v.tx_outer_csum(), false, v.ttl, v.tos,
                             rx->gso(), false, 4 << 20, true};
      o.gso_short_tail = rx->gso_short_tail();  // probed once on the primary socket
      auto s = io::UdpSocket::open(o);
      if (s.ok()) return tx.emplace(sport, std::move(s.value())).first->second;
      spdlog::warn("udp: source port {} not available ({}); using port {} for such flows", sport,
                   s.message(), rx->local_port());
      tx_port_pool_full = true;
    }
    return *rx;
  }

  void send_trains() {
    auto& c = dp->counters();
    for (auto& t : trains) {
      auto& s = tx_socket(t.src_port);
      auto r = s.send_train(t.remote, cfg.vxlan.dstport, t.buf, t.seg_size);
      if (!r.ok()) {
        c.drops[std::size_t(tunnel::Drop::TxSendFailed)] += t.count;
        spdlog::debug("{}", r.message());
      } else if (s.gso() && t.count > 1) {
        ++c.tx_trains;
      }
    }
    dp->recycle(trains);
  }

  void handle_tap() {
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
    bool vnet = tap->has_vnet_hdr();
    for (auto& f : frames) {
      std::uint8_t hb[wv::kHdrLen] = {};
      wv::emit(f.vnet, hb, wv::kHdrLen, wv::ByteOrder::Little);
      pieces.clear();
      tunnel::tap_pieces(f, pieces);
      iov.clear();
      if (vnet) iov.push_back({hb, sizeof hb});
      for (auto p : pieces) iov.push_back({const_cast<std::uint8_t*>(p.data()), p.size()});
      if (iov.size() > kIovMax) {  // pathological piece count: flatten
        f.data = f.pkt->to_bytes();
        iov.resize(vnet ? 1 : 0);
        iov.push_back({f.data.data(), f.data.size()});
      }
      ssize_t r = ::writev(tap->fd(), iov.data(), int(iov.size()));
      if (r < 0) {
        dp->counters().drop(tunnel::Drop::RxTapWriteFailed);
        if (!tap_write_warned) spdlog::warn("{}", err("tap write"));
        tap_write_warned = true;
        continue;
      }
      ++dp->counters().rx_frames;
      dp->counters().rx_bytes += f.size();
    }
    frames.clear();  // releases the packets, hence the receive buffers they referenced
  }

  // Drain the socket (bounded): recvmmsg batches until EAGAIN or the budget, each followed
  // by a GRO flush and the TAP writes (NAPI: poll a batch, flush at the end of the poll).
  void handle_udp() {
    auto t = now_ns();
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
        dp->receive_train(rxbufs[i], 0, m.len, m.gso_size, m.from, tunnel::OuterCsum::Unknown, t);
      }
      // GRO flush and TAP writes per batch: the packets reference the slots' bytes, which
      // the next recvmmsg reuses (aggregates are bounded at 64 KiB anyway).
      dp->rx_flush(t, frames);
      write_frames();
      if (n < rxs.size()) break;  // drained
    }
  }

  void handle_control() {
    int c = ::accept4(ctl, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    std::string s = stats().dump() + "\n";
    std::size_t off = 0;
    while (off < s.size()) {
      ssize_t w = ::write(c, s.data() + off, s.size() - off);
      if (w <= 0) break;
      off += std::size_t(w);
    }
    ::close(c);
  }

  json stats() const {
    const auto& c = dp->counters();
    json drops = json::object();
    for (std::size_t i = 0; i < tunnel::kDropCount; ++i)
      if (c.drops[i]) drops[std::string(tunnel::to_string(tunnel::Drop(i)))] = c.drops[i];
    json j = {
        {"dev", tap->name()},
        {"vni", cfg.vxlan.vni},
        {"tx", {{"frames", c.tx_frames}, {"bytes", c.tx_bytes}, {"datagrams", c.tx_datagrams},
                {"datagram_bytes", c.tx_dgram_bytes}, {"udp_segment_trains", c.tx_trains},
                {"gso_super_packets", c.tx_gso_super}, {"rco", c.tx_rco},
                {"csum_sw", c.tx_csum_sw}, {"csum_skipped", c.tx_csum_skipped},
                {"flooded", c.tx_flooded}}},
        {"rx", {{"datagrams", c.rx_datagrams}, {"datagram_bytes", c.rx_dgram_bytes},
                {"udp_gro_trains", c.rx_gro_trains}, {"rco", c.rx_rco},
                {"rco_no_outer_csum", c.rx_rco_nocsum}, {"csum_validated", c.rx_csum_validated},
                {"csum_skipped", c.rx_csum_skipped}, {"frames", c.rx_frames},
                {"bytes", c.rx_bytes}, {"gro_merged", c.rx_gro_merged},
                {"gro_aggregates", c.rx_gro_aggregates}}},
        {"fdb", {{"entries", dp->fdb().size()}, {"learned", c.fdb_learned}, {"aged", c.fdb_aged}}},
        {"drops", drops},
        {"drops_total", c.drops_total()},
    };
    const auto& g = dp->gso_counters();
    j["gso"] = {{"packets_in", g.packets_in}, {"segmented", g.packets_segmented},
                {"segments_out", g.segments_out}, {"payload_bytes_copied", g.payload_bytes_copied},
                {"errors", g.errors_total()}};
    if (const auto* e = dp->gro()) {
      const auto& gc = e->counters();
      json nm = json::object();
      for (std::size_t i = 0; i < gro::kGroReasonCount; ++i)
        if (gc.not_merged[i])
          nm[std::string(offload::to_string(offload::GroReason(i)))] = gc.not_merged[i];
      j["gro"] = {{"packets_in", gc.packets_in}, {"merged", gc.merged},
                  {"aggregates", gc.aggregates}, {"singles", gc.singles},
                  {"not_merged_by_reason", nm}};
    }
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
                   {"tx_ports", tx.size()}};
    j["tap"] = {{"vnet_hdr", tap->has_vnet_hdr()}, {"offload_bits", tap_offload}};
    return j;
  }
};

TunnelDaemon::TunnelDaemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TunnelDaemon::~TunnelDaemon() = default;
const std::string& TunnelDaemon::tap_name() const noexcept { return impl_->tap->name(); }
void TunnelDaemon::request_stop() noexcept { impl_->stop = true; }
json TunnelDaemon::stats_json() const { return impl_->stats(); }

io::Result<std::unique_ptr<TunnelDaemon>> TunnelDaemon::create(const DaemonConfig& cfg) {
  using R = io::Result<std::unique_ptr<TunnelDaemon>>;
  if (auto e = tunnel::validate(cfg.vxlan)) return R::error(*e);
  // The data path frees and reallocates 64 KiB buffers all the time: keep them in the heap
  // (no mmap/munmap per buffer) and do not give the heap top back on every free (brk churn
  // and page faults were ~5% of an endpoint's profile).
  ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 64 << 20);
  auto im = std::make_unique<Impl>();
  im->cfg = cfg;
  const auto& v = cfg.vxlan;
  // TAP
  auto t = io::Tap::open(io::TapOptions{cfg.dev, cfg.offload, false, 10, true});
  if (!t.ok()) return R::from(t);
  im->tap.emplace(std::move(t.value()));
  auto& tap = *im->tap;
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
  int fl = ::fcntl(tap.fd(), F_GETFL);
  ::fcntl(tap.fd(), F_SETFL, fl | O_NONBLOCK);
  tunnel::DatapathOptions dopt;
  dopt.gro = cfg.gro && cfg.offload;
  dopt.tap_vnet_hdr = cfg.offload;
  dopt.tap_mtu = mtu;
  dopt.tap_frame_packets = true;  // writev the packet's pieces, no flattening copy
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
  // UDP
  io::UdpSocketOptions uo{v.local, v.dstport, !v.tx_outer_csum(), v.udp6_zero_csum_rx,
                          v.ttl, v.tos, cfg.offload, cfg.offload, 4 << 20, false};
  auto u = io::UdpSocket::open(uo);
  if (!u.ok()) return R::error("local " + v.local.to_string() + " dstport " +
                               std::to_string(v.dstport) + ": " + u.message());
  im->rx.emplace(std::move(u.value()));
  im->dp = std::make_unique<tunnel::Datapath>(v, dopt);
  for (const auto& [mac, ip] : cfg.static_fdb) im->dp->fdb().add_static(mac, ip);
  im->tapbuf.resize(kMaxFrame);
  im->rxs.resize(kRxSlots);
  im->rxbufs.resize(kRxSlots);
  im->rxspans.resize(kRxSlots);
  // control socket
  im->ctl_path = cfg.control.empty() ? default_control_path(tap.name()) : cfg.control;
  ::mkdir("/run/ofld", 0755);
  im->ctl = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (im->ctl_path.size() >= sizeof sa.sun_path) return R::error("control: path too long");
  std::memcpy(sa.sun_path, im->ctl_path.c_str(), im->ctl_path.size() + 1);
  ::unlink(im->ctl_path.c_str());
  if (::bind(im->ctl, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0 || ::listen(im->ctl, 8) < 0)
    return R::error(err("control socket " + im->ctl_path));
  // signals
  sigset_t ss;
  sigemptyset(&ss);
  sigaddset(&ss, SIGINT);
  sigaddset(&ss, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &ss, nullptr);
  im->sig = ::signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
  im->ep = ::epoll_create1(EPOLL_CLOEXEC);
  for (int fd : {tap.fd(), im->rx->fd(), im->ctl, im->sig}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(im->ep, EPOLL_CTL_ADD, fd, &ev) < 0) return R::error(err("epoll_ctl"));
  }
  spdlog::info("tunnel {}: vxlan id {} local {} dstport {} remotes {} mtu {}{}{}", tap.name(), v.vni,
               v.local.to_string(), v.dstport, v.remotes.size(), mtu,
               v.remcsum_tx ? " remcsumtx" : "", v.remcsum_rx ? " remcsumrx" : "");
  return std::unique_ptr<TunnelDaemon>(new TunnelDaemon(std::move(im)));
}

int TunnelDaemon::run() {
  auto& im = *impl_;
  epoll_event evs[8];
  while (!im.stop) {
    int n = ::epoll_wait(im.ep, evs, 8, 500);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("{}", err("epoll_wait"));
      return 1;
    }
    for (int i = 0; i < n; ++i) {
      int fd = evs[i].data.fd;
      if (fd == im.sig) {
        signalfd_siginfo si;
        if (::read(im.sig, &si, sizeof si) > 0)
          spdlog::info("signal {}: shutting down", int(si.ssi_signo));
        im.stop = true;
      } else if (fd == im.tap->fd()) {
        im.handle_tap();
      } else if (fd == im.rx->fd()) {
        im.handle_udp();
      } else if (fd == im.ctl) {
        im.handle_control();
      }
    }
    auto t = now_ns();
    if (t - im.last_tick > 1000000000ull) {
      im.dp->tick(t);
      im.last_tick = t;
    }
  }
  return 0;
}

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

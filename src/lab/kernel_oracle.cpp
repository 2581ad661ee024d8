// Kernel oracle: shared set-up helpers and KernelGso (spec K-3b). See kernel_oracle.hpp.
#include "ofld/lab/kernel_oracle.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace ofld::lab {

namespace oracle_detail {

Status disable_ipv6(const io::Netns& ns) {
  // Without IPv6 in the kernel there is nothing to disable.
  auto probe = ns.exec({"test", "-e", "/proc/sys/net/ipv6/conf/default/disable_ipv6"});
  if (!probe) return io::ok_status();
  if (auto s = ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1"); !s) return s;
  return ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1");
}

Status wait_bridge_forwarding(const io::Netns& ns, const std::string& port, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last;
  do {
    auto st = ns.read_file("/sys/class/net/" + port + "/brport/state");
    if (st && *st == "3") return io::ok_status();  // BR_STATE_FORWARDING
    last = st ? *st : st.message();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
  return Status::error("bridge port " + port + " not forwarding (state " + last + ")");
}

void features_off(const io::Netns& ns, const std::string& dev, const std::vector<std::string>& f) {
  for (const auto& feat : f) (void)ns.exec({"ethtool", "-K", dev, feat, "off"});
}

std::string mac_str(const Mac& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

std::string ipv4_str(const std::array<std::uint8_t, 4>& a) {
  return std::to_string(a[0]) + "." + std::to_string(a[1]) + "." + std::to_string(a[2]) + "." +
         std::to_string(a[3]);
}

Status require_ethtool() {
  auto r = io::run_command({"ethtool", "--version"}, std::chrono::seconds(5));
  if (!r || r->exit_code != 0) return Status::skipped("ethtool not available");
  return io::ok_status();
}

Status add_veth_pair(const io::Netns& ns, const std::string& dev0, const Mac& mac0,
                     const std::string& dev1, const Mac& mac1, int mtu) {
  const std::string m = std::to_string(mtu);
  if (auto s = ns.ip({"link", "add", dev0, "address", mac_str(mac0), "mtu", m, "type", "veth",
                      "peer", "name", dev1, "address", mac_str(mac1), "mtu", m});
      !s)
    return Status::skipped("cannot create veth: " + s.message());
  return io::ok_status();
}

Result<io::PacketSocket> open_packet_socket(const io::Netns& ns, const std::string& dev,
                                            bool vnet_hdr) {
  return ns.run([&]() -> Result<io::PacketSocket> {
    auto idx = ns.read_file("/sys/class/net/" + dev + "/ifindex");
    if (!idx) return Result<io::PacketSocket>::from(idx);
    return io::PacketSocket::open({.ifindex = std::stoi(*idx), .vnet_hdr = vnet_hdr});
  });
}

Result<std::vector<Frame>> collect(const ReadFn& read, const KeepFn& keep, const OracleTiming& t) {
  using Clock = std::chrono::steady_clock;
  using ms = std::chrono::milliseconds;
  const auto hard = Clock::now() + ms(t.total_ms);
  auto until = std::min(hard, Clock::now() + ms(t.first_frame_ms));
  std::vector<Frame> out;
  for (;;) {
    auto left = std::chrono::duration_cast<ms>(until - Clock::now()).count();
    if (left <= 0) break;
    auto r = read(int(left));
    if (!r) return Result<std::vector<Frame>>::from(r);
    if (!*r) break;  // timed out: quiet
    if (keep(**r)) {
      out.push_back(std::move(**r));
      until = std::min(hard, Clock::now() + ms(t.quiet_ms));
    }
  }
  return out;
}

}  // namespace oracle_detail

using namespace oracle_detail;

namespace {
const std::vector<std::string> kAllTxOffloads = {
    "tx", "sg", "tso", "gso", "ufo", "tx-udp-segmentation", "tx-udp_tnl-segmentation",
    "tx-udp_tnl-csum-segmentation", "tx-gre-segmentation", "tx-gso-partial", "tx-gso-list"};

Status check_tools(const io::Netns& ns, bool need_ethtool) {
  if (need_ethtool) return require_ethtool();
  (void)ns;
  return io::ok_status();
}
}  // namespace

Result<KernelGso> KernelGso::create(const Options& opts) {
  using R = Result<KernelGso>;
  auto ns = io::Netns::create("ofld-gso");
  if (!ns) return R::from(ns);
  KernelGso g(std::move(*ns));
  g.timing_ = opts.timing;
  const io::Netns& n = g.ns_;
  if (auto s = check_tools(n, opts.sink == Sink::Veth); !s) return R::from(s);
  if (auto s = disable_ipv6(n); !s) return R::from(s);

  struct Taps {
    io::Tap t0;
    std::optional<io::Tap> t1;
    unsigned off;
  };
  const bool want_tap1 = opts.sink == Sink::Tap;
  const int tap_mtu = std::min(opts.mtu, io::Tap::kMaxMtu);
  auto taps = n.run([&]() -> Result<Taps> {
    auto t0 = io::Tap::open({.name = "otap0", .vnet_hdr = true});
    if (!t0) return Result<Taps>::from(t0);
    auto off = t0->set_offload_best(opts.tap_offload);
    if (!off) return Result<Taps>::from(off);
    if (auto s = t0->set_mtu(tap_mtu); !s) return Result<Taps>::from(s);
    std::optional<io::Tap> t1;
    if (want_tap1) {
      auto t = io::Tap::open({.name = "otap1"});
      if (!t) return Result<Taps>::from(t);
      if (auto s = t->set_mtu(tap_mtu); !s) return Result<Taps>::from(s);
      t1.emplace(std::move(*t));
    }
    return Taps{std::move(*t0), std::move(t1), *off};
  });
  if (!taps) return R::from(taps);
  g.tap0_.emplace(std::move(taps->t0));
  if (taps->t1) g.tap1_.emplace(std::move(*taps->t1));
  g.offloads_ = taps->off;

  std::string sink_port = "otap1";
  if (opts.sink == Sink::Veth) {
    sink_port = "oveth0";
    if (auto s = n.ip({"link", "add", "oveth0", "mtu", std::to_string(opts.mtu), "type", "veth",
                       "peer", "name", "oveth1", "mtu", std::to_string(opts.mtu)});
        !s)
      return R::skipped("cannot create veth: " + s.message());
    features_off(n, "oveth0", kAllTxOffloads);
    // The sink must not re-aggregate what it receives.
    features_off(n, "oveth1", {"gro", "lro", "rx-gro-list", "rx-udp-gro-forwarding"});
    if (auto s = n.ip({"link", "set", "oveth1", "up"}); !s) return R::from(s);
  }
  if (auto s = n.ip({"link", "add", "obr0", "type", "bridge", "stp_state", "0", "forward_delay",
                     "0", "mcast_snooping", "0"});
      !s)
    return R::skipped("cannot create bridge: " + s.message());
  for (const std::string& port : {std::string("otap0"), sink_port}) {
    if (auto s = n.ip({"link", "set", port, "master", "obr0"}); !s) return R::from(s);
    // Always flood: never learn the super-packet's source on a port.
    (void)n.exec({"bridge", "link", "set", "dev", port, "learning", "off"});
    if (auto s = n.ip({"link", "set", port, "up"}); !s) return R::from(s);
  }
  if (auto s = n.ip({"link", "set", "obr0", "up"}); !s) return R::from(s);
  for (const std::string& port : {std::string("otap0"), sink_port})
    if (auto s = wait_bridge_forwarding(n, port, 3000); !s) return R::from(s);

  if (opts.sink == Sink::Veth) {
    auto sock = open_packet_socket(n, "oveth1");
    if (!sock) return R::from(sock);
    g.sink_.emplace(std::move(*sock));
  }
  return g;
}

Result<std::vector<Frame>> KernelGso::segment(const VnetHdr& vnet, std::span<const std::uint8_t> frame) {
  using R = Result<std::vector<Frame>>;
  if (frame.size() < 14) return R::error("frame shorter than an Ethernet header");
  Mac src;
  std::copy(frame.begin() + 6, frame.begin() + 12, src.begin());
  if (tap1_) tap1_->drain();
  if (sink_) sink_->drain();
  if (auto s = tap0_->write(frame, &vnet); !s) return R::from(s);
  auto keep = [&](const Frame& f) {
    return f.data.size() >= 14 && std::equal(src.begin(), src.end(), f.data.begin() + 6);
  };
  if (tap1_) return collect([&](int t) { return tap1_->read(t); }, keep, timing_);
  return collect(
      [&](int t) -> Result<std::optional<Frame>> {
        auto r = sink_->recv(t);
        if (!r) return Result<std::optional<Frame>>::from(r);
        if (!*r) return std::optional<Frame>{};
        return std::optional<Frame>(std::move((*r)->frame));
      },
      keep, timing_);
}

}  // namespace ofld::lab

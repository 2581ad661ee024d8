// Kernel oracle: VXLAN transmit through the kernel's vxlan device (spec K-3b). See
// kernel_oracle.hpp.
#include <algorithm>
#include <cstring>

#include "ofld/lab/kernel_oracle.hpp"

namespace ofld::lab {

using namespace oracle_detail;

Result<KernelVxlan> KernelVxlan::create(const Options& opts) {
  using R = Result<KernelVxlan>;
  if (auto s = require_ethtool(); !s) return R::from(s);
  auto ns = io::Netns::create("ofld-vxlan");
  if (!ns) return R::from(ns);
  KernelVxlan v(std::move(*ns));
  v.opts_ = opts;
  const io::Netns& n = v.ns_;
  if (auto s = disable_ipv6(n); !s) return R::from(s);

  // Underlay: oveth0 (10.200.0.1, every offload off) → oveth1 (no address, capture only).
  if (auto s = add_veth_pair(n, "oveth0", kUnderlayMac, "oveth1", kPeerMac, opts.underlay_mtu); !s)
    return R::from(s);
  features_off(n, "oveth0",
               {"tx", "sg", "tso", "gso", "ufo", "tx-udp-segmentation", "tx-udp_tnl-segmentation",
                "tx-udp_tnl-csum-segmentation", "tx-gso-partial", "tx-gso-list"});
  features_off(n, "oveth1", {"gro", "lro", "rx-gro-list", "rx-udp-gro-forwarding"});
  if (auto s = n.ip({"addr", "add", ipv4_str(kLocalIp) + "/24", "dev", "oveth0"}); !s) return R::from(s);
  if (auto s = n.ip({"link", "set", "oveth0", "up"}); !s) return R::from(s);
  if (auto s = n.ip({"link", "set", "oveth1", "up"}); !s) return R::from(s);
  if (auto s = n.ip({"neigh", "replace", ipv4_str(kRemoteIp), "lladdr", mac_str(kPeerMac), "dev",
                     "oveth0", "nud", "permanent"});
      !s)
    return R::from(s);

  std::vector<std::string> vx{"link", "add", "ovx0", "mtu", std::to_string(opts.underlay_mtu - 50),
                              "type", "vxlan", "id", std::to_string(opts.vni), "dstport",
                              std::to_string(opts.dstport), "local", ipv4_str(kLocalIp), "remote",
                              ipv4_str(kRemoteIp), "dev", "oveth0", "nolearning",
                              opts.udpcsum ? "udpcsum" : "noudpcsum"};
  if (opts.remcsumtx) vx.push_back("remcsumtx");
  if (opts.src_port != 0) {
    vx.push_back("srcport");
    vx.push_back(std::to_string(opts.src_port));
    vx.push_back(std::to_string(unsigned(opts.src_port) + 1));
  }
  if (auto s = n.ip(vx); !s) return R::skipped("cannot create kernel vxlan device: " + s.message());

  struct TapOut {
    io::Tap tap;
    unsigned off;
  };
  auto tap = n.run([&]() -> Result<TapOut> {
    auto t = io::Tap::open({.name = "otap0", .vnet_hdr = true});
    if (!t) return Result<TapOut>::from(t);
    auto off = t->set_offload_best(opts.tap_offload);
    if (!off) return Result<TapOut>::from(off);
    if (auto s = t->set_mtu(io::Tap::kMaxMtu); !s) return Result<TapOut>::from(s);
    return TapOut{std::move(*t), *off};
  });
  if (!tap) return R::from(tap);
  v.tap_.emplace(std::move(tap->tap));
  v.offloads_ = tap->off;

  if (auto s = n.ip({"link", "add", "obr0", "type", "bridge", "stp_state", "0", "forward_delay",
                     "0", "mcast_snooping", "0"});
      !s)
    return R::skipped("cannot create bridge: " + s.message());
  for (const char* port : {"otap0", "ovx0"}) {
    if (auto s = n.ip({"link", "set", port, "master", "obr0"}); !s) return R::from(s);
    (void)n.exec({"bridge", "link", "set", "dev", port, "learning", "off"});
    if (auto s = n.ip({"link", "set", port, "up"}); !s) return R::from(s);
  }
  if (auto s = n.ip({"link", "set", "obr0", "up"}); !s) return R::from(s);
  for (const char* port : {"otap0", "ovx0"})
    if (auto s = wait_bridge_forwarding(n, port, 3000); !s) return R::from(s);

  auto sock = open_packet_socket(n, "oveth1");
  if (!sock) return R::from(sock);
  v.cap_.emplace(std::move(*sock));
  return v;
}

Result<std::vector<Frame>> KernelVxlan::transmit(const VnetHdr& vnet, std::span<const std::uint8_t> frame) {
  using R = Result<std::vector<Frame>>;
  if (frame.size() < 14) return R::error("frame shorter than an Ethernet header");
  cap_->drain();
  tap_->drain();
  if (auto s = tap_->write(frame, &vnet); !s) return R::from(s);
  const std::uint16_t dport = opts_.dstport;
  auto keep = [dport](const Frame& f) {
    const auto& d = f.data;
    // Ethernet / IPv4 (no options needed to match) / UDP to kRemoteIp:dport.
    if (d.size() < 14 + 20 + 8 || d[12] != 0x08 || d[13] != 0x00) return false;
    std::size_t ihl = std::size_t(d[14] & 0x0f) * 4;
    if (d[14 + 9] != 17 || d.size() < 14 + ihl + 8) return false;
    if (!std::equal(kRemoteIp.begin(), kRemoteIp.end(), d.begin() + 14 + 16)) return false;
    std::size_t u = 14 + ihl;
    return ((d[u + 2] << 8) | d[u + 3]) == dport;
  };
  return collect(
      [&](int t) -> Result<std::optional<Frame>> {
        auto r = cap_->recv(t);
        if (!r) return Result<std::optional<Frame>>::from(r);
        if (!*r) return std::optional<Frame>{};
        return std::optional<Frame>(std::move((*r)->frame));
      },
      keep, opts_.timing);
}

}  // namespace ofld::lab

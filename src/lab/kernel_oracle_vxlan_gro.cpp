// Kernel oracle: VXLAN receive with GRO (spec K-3, W-12, W-15..W-19). See
// kernel_oracle_vxlan_gro.hpp.
#include "ofld/lab/kernel_oracle_vxlan_gro.hpp"

namespace ofld::lab {

using namespace oracle_detail;

Result<KernelVxlanGro> KernelVxlanGro::create(const Options& opts) {
  using R = Result<KernelVxlanGro>;
  if (auto s = require_ethtool(); !s) return R::from(s);
  auto ns = io::Netns::create("ofld-vxgro");
  if (!ns) return R::from(ns);
  KernelVxlanGro k(std::move(*ns));
  k.opts_ = opts;
  const io::Netns& n = k.ns_;
  if (auto s = disable_ipv6(n); !s) return R::from(s);
  if (auto s = add_veth_pair(n, "oveth0", kSenderMac, "oveth1", kReceiverMac, opts.mtu); !s)
    return R::from(s);
  // veth hands a frame to the peer's NAPI (and so to GRO) only when the sender has no TSO.
  if (auto s = n.exec({"ethtool", "-K", "oveth0", "tso", "off"}); !s) return R::from(s);
  if (auto s = n.exec({"ethtool", "-K", "oveth1", "gro", "on"}); !s)
    return R::skipped("cannot enable GRO on veth: " + s.message());
  if (auto s = n.ip({"addr", "add", ipv4_str(kReceiverIp) + "/24", "dev", "oveth1"}); !s) return R::from(s);
  if (auto s = n.ip({"link", "set", "oveth0", "up"}); !s) return R::from(s);
  if (auto s = n.ip({"link", "set", "oveth1", "up"}); !s) return R::from(s);
  if (auto s = n.write_file("/sys/class/net/oveth1/threaded", "1"); !s)
    return R::skipped("threaded NAPI not available: " + s.message());

  if (auto s = n.ip({"link", "add", "ovx0", "address", mac_str(kVxlanMac), "mtu",
                     std::to_string(opts.mtu - 50), "type", "vxlan", "id", std::to_string(opts.vni),
                     "dstport", std::to_string(opts.dstport), "local", ipv4_str(kReceiverIp),
                     "remote", ipv4_str(kSenderIp), "dev", "oveth1", "nolearning", "udpcsum"});
      !s)
    return R::skipped("cannot create kernel vxlan device: " + s.message());
  (void)n.exec({"ethtool", "-K", "ovx0", "gro", "on"});
  if (auto s = n.ip({"link", "set", "ovx0", "up"}); !s) return R::from(s);

  auto tx = open_packet_socket(n, "oveth0", false);
  if (!tx) return R::from(tx);
  auto rx = open_packet_socket(n, "ovx0", true);
  if (!rx) return R::from(rx);
  k.tx_.emplace(std::move(*tx));
  k.rx_.emplace(std::move(*rx));
  return k;
}

Result<std::vector<Frame>> KernelVxlanGro::receive(const std::vector<std::vector<std::uint8_t>>& burst) {
  using R = Result<std::vector<Frame>>;
  rx_->drain();
  std::vector<Frame> frames;
  frames.reserve(burst.size());
  for (const auto& b : burst) frames.push_back(Frame{VnetHdr{}, b});
  if (auto s = send_burst_threaded(*tx_, frames, "oveth1"); !s) return R::from(s);
  return collect(
      [&](int t) -> Result<std::optional<Frame>> {
        auto r = rx_->recv(t);
        if (!r) return Result<std::optional<Frame>>::from(r);
        if (!*r) return std::optional<Frame>{};
        if ((*r)->truncated) return Result<std::optional<Frame>>::error("GRO output longer than 256 KiB");
        return std::optional<Frame>(std::move((*r)->frame));
      },
      [](const Frame& f) {
        if (f.data.size() < 14) return false;
        const unsigned type = unsigned(f.data[12]) << 8 | f.data[13];
        return type == 0x0800 || type == 0x86DD;
      },
      opts_.timing);
}

}  // namespace ofld::lab

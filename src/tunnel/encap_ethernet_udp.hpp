// What the Ethernet-over-UDP encapsulations (VXLAN, Geneve) share: a TAP device and a UDP
// socket on dstport, a source port per inner flow (udp_flow_src_port), the outer TOS
// (vxlan_xmit_one / geneve_xmit_skb: ip_tunnel_ecn_encap), the FDB for the remotes of a frame
// (flooding to the default remotes when the destination is unknown), and after
// decapsulation the loop check (vxlan_rcv / geneve_rx: "ignore packet loops") and learning
// (vxlan_snoop). Internal to src/tunnel: each encapsulation derives its class from
// EthernetUdpEncap<Config> and adds its header, decapsulation and description.
//
// Config needs the members of VxlanConfig and GeneveConfig used here: the UdpTunnelSettings
// base, dstport, overhead(), src_min(), src_max(), remotes, ageing_s, learning, fdb_limits.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ofld/tunnel/encapsulation.hpp"
#include "ofld/wire/ethernet.hpp"

namespace ofld::tunnel::detail {

inline Mac mac_at(std::span<const std::uint8_t> f, std::size_t off) {
  Mac m{};
  std::copy_n(f.begin() + long(off), wire::eth::kAddrLen, m.begin());
  return m;
}

/// a == b for the per-datagram receive checks, as fixed-size loads (the defaulted
/// operator== of std::array calls memcmp).
inline bool same_mac(const Mac& a, const Mac& b) noexcept {
  std::uint32_t a0, b0;
  std::uint16_t a1, b1;
  std::memcpy(&a0, a.data(), 4), std::memcpy(&b0, b.data(), 4);
  std::memcpy(&a1, a.data() + 4, 2), std::memcpy(&b1, b.data() + 4, 2);
  return a0 == b0 && a1 == b1;
}
inline bool same_ip(const IpAddr& a, const IpAddr& b) noexcept {
  std::uint64_t a0, a1, b0, b1;
  std::memcpy(&a0, a.bytes.data(), 8), std::memcpy(&b0, b.bytes.data(), 8);
  std::memcpy(&a1, a.bytes.data() + 8, 8), std::memcpy(&b1, b.bytes.data() + 8, 8);
  return a.family == b.family && a0 == b0 && a1 == b1;
}

/// How long a sighting of one source MAC from one remote stands for the next ones (ns):
/// well under a jiffy and under any ageing time.
inline constexpr std::uint64_t kSnoopRefreshNs = 1'000'000;

template <class Config>
class EthernetUdpEncap : public Encapsulation {
 public:
  explicit EthernetUdpEncap(const Config& c) : c_(c) {}
  const TunnelCommon& common() const noexcept override { return c_; }
  const UdpTunnelSettings* udp() const noexcept override { return &c_; }

  wire::LinkType link() const noexcept override { return wire::LinkType::Ethernet; }
  SocketKind socket() const noexcept override { return SocketKind::Udp; }
  std::uint16_t dst_port() const noexcept override { return c_.dstport; }
  int overhead() const noexcept override { return c_.overhead(); }
  bool flow_src_ports() const noexcept override { return true; }
  OuterCsum socket_outer_csum() const noexcept override {
    return c_.ipv6() && !c_.udp6_zero_csum_rx ? OuterCsum::Present : OuterCsum::Unknown;
  }
  // The zero-copy receive leaves the payload in the receive slot: netdev_max_backlog.
  std::size_t default_gro_backlog() const noexcept override { return 1000; }

  std::optional<Drop> tx_check(std::span<const std::uint8_t> f) const noexcept override {
    if (f.size() < wire::eth::kHdrLen) return Drop::TxNotEthernet;
    return std::nullopt;
  }
  std::uint8_t outer_tos(std::span<const std::uint8_t> f) const noexcept override {
    return tunnel::outer_tos(c_, f);  // vxlan_xmit_one, geneve_get_dsfield + ip_tunnel_ecn_encap
  }
  std::uint16_t src_port(std::span<const std::uint8_t> f) const noexcept override {
    return flow_src_port(inner_flow_hash(f), c_.src_min(), c_.src_max());
  }
  bool remotes(std::span<const std::uint8_t> frame, std::uint64_t now_ns, std::vector<IpAddr>& out,
               Counters& c) override {
    // with local learning (EVPN) the source MAC is kept as ours (bounded)
    LocalResult local = LocalResult::Ignored;
    const bool flooded = fdb_->lookup_tx(mac_at(frame, wire::eth::kSrcOffset),
                                         mac_at(frame, wire::eth::kDstOffset), now_ns, out, &local);
    if (local == LocalResult::RefusedFull) ++c.fdb_local_refused;
    return flooded;
  }

  bool after_decap(const core::Packet& inner, const IpAddr& from, Peer* peer, std::uint64_t now_ns,
                   Counters& c) override {
    const Mac src = mac_at(inner.head(), wire::eth::kSrcOffset);
    if (same_mac(src, own_mac_) && !same_mac(own_mac_, Mac{})) {
      c.drop(Drop::RxLoop);
      return false;
    }
    // vxlan_snoop, at most once per kSnoopRefreshNs for one (source MAC, remote) pair: the
    // kernel refreshes an entry's `updated` at most once per jiffy, and a station that moves
    // shows up from another remote, which is looked up at once.
    if (!c_.learning || (snoop_valid_ && same_mac(src, snoop_mac_) && same_ip(from, snoop_from_) &&
                         now_ns - snoop_ns_ < kSnoopRefreshNs))
      return true;
    LearnResult r;
    if (peer) {  // the peer caches its interned id: no lookup by address per datagram
      const std::uint32_t gen = fdb_->known_generation();
      if (peer->fdb_remote >= kRemotesFull && peer->fdb_gen != gen) {
        peer->fdb_remote = fdb_->remote_id(from);
        peer->fdb_gen = gen;
      }
      r = fdb_->learn_ex(src, peer->fdb_remote, now_ns);
    } else {
      r = fdb_->learn_ex(src, from, now_ns);
    }
    switch (r) {
      case LearnResult::Created:
      case LearnResult::Moved:
        ++c.fdb_learned;
        if (peer) ++peer->ctr.fdb_learned;
        break;
      case LearnResult::RefusedFull: ++c.fdb_refused_maxaddress; break;
      case LearnResult::RefusedPerRemote: ++c.fdb_refused_per_remote; break;
      case LearnResult::RefusedUnknownSource: ++c.fdb_refused_unknown_source; break;
      case LearnResult::RefusedRemoteTable: ++c.fdb_refused_remote_table; break;
      case LearnResult::Refreshed:
      case LearnResult::Ignored: break;
    }
    snoop_mac_ = src, snoop_from_ = from, snoop_ns_ = now_ns, snoop_valid_ = true;
    return true;
  }

  void bind(const EncapBinding& b) override {
    fdb_ = b.fdb ? b.fdb : make_shared_fdb();
    fdb_->set_limits(c_.fdb_limits);  // every worker sets the same limits
    for (const auto& r : c_.remotes) fdb_->add_default_remote(r);
    own_mac_ = b.own_mac;
  }
  void tick(std::uint64_t now_ns, Counters& c) override {
    if (const std::size_t n = fdb_->age(now_ns)) {
      c.fdb_aged += n;
      snoop_valid_ = false;  // the last sighting's entry may be gone
    }
  }
  SharedFdb* fdb() const noexcept override { return fdb_.get(); }
  std::shared_ptr<SharedFdb> make_shared_fdb() const override {
    return std::make_shared<SharedFdb>(std::uint64_t(c_.ageing_s) * 1000000000ull);
  }
  std::vector<IpAddr> configured_remotes() const override { return c_.remotes; }
  std::optional<std::string> integrity_error() const override {
    // With the inner checksum elided, the outer UDP checksum is what protects the inner frame
    // (the link CRC of IPoIB connected mode, spec I-5) — in both directions.
    if (c_.tx_outer_csum() && !c_.udp6_zero_csum_rx) return std::nullopt;
    return std::string("integrity: needs the outer UDP checksum in both directions (it is "
                       "what protects the inner frame once the inner checksum is elided); "
                       "remove ") +
           (!c_.tx_outer_csum() ? (c_.ipv6() ? "udp6zerocsumtx" : "noudpcsum") : "udp6zerocsumrx");
  }

 protected:
  Config c_;
  std::shared_ptr<SharedFdb> fdb_;
  Mac own_mac_{};

 private:
  // vxlan_snoop's last sighting: the same source MAC from the same remote within
  // kSnoopRefreshNs is not looked up again (a train's datagrams carry one inner source).
  Mac snoop_mac_{};
  IpAddr snoop_from_{};
  std::uint64_t snoop_ns_ = 0;
  bool snoop_valid_ = false;
};

}  // namespace ofld::tunnel::detail

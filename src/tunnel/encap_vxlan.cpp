// The VXLAN encapsulation: Ethernet over UDP (RFC 7348; vxlan_xmit_one / vxlan_rcv): a TAP
// device and a UDP socket on dstport, the FDB for the remotes of a frame (flooding when the
// destination is unknown), and after decapsulation the loop check and vxlan_snoop.
#include <algorithm>
#include <cstring>

#include "ofld/tunnel/encapsulation.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::tunnel {

namespace {

Mac mac_at(std::span<const std::uint8_t> f, std::size_t off) {
  Mac m{};
  std::copy_n(f.begin() + long(off), wire::eth::kAddrLen, m.begin());
  return m;
}

/// a == b for the per-datagram receive checks, as fixed-size loads (the defaulted
/// operator== of std::array calls memcmp).
bool same_mac(const Mac& a, const Mac& b) noexcept {
  std::uint32_t a0, b0;
  std::uint16_t a1, b1;
  std::memcpy(&a0, a.data(), 4), std::memcpy(&b0, b.data(), 4);
  std::memcpy(&a1, a.data() + 4, 2), std::memcpy(&b1, b.data() + 4, 2);
  return a0 == b0 && a1 == b1;
}
bool same_ip(const IpAddr& a, const IpAddr& b) noexcept {
  std::uint64_t a0, a1, b0, b1;
  std::memcpy(&a0, a.bytes.data(), 8), std::memcpy(&b0, b.bytes.data(), 8);
  std::memcpy(&a1, a.bytes.data() + 8, 8), std::memcpy(&b1, b.bytes.data() + 8, 8);
  return a.family == b.family && a0 == b0 && a1 == b1;
}

/// How long a sighting of one source MAC from one remote stands for the next ones (ns):
/// well under a jiffy and under any ageing time.
constexpr std::uint64_t kSnoopRefreshNs = 1'000'000;

class VxlanEncap final : public Encapsulation {
 public:
  explicit VxlanEncap(const VxlanConfig& c) : c_(c) {}
  Encap kind() const noexcept override { return Encap::Vxlan; }
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
    return tunnel::outer_tos(c_, f);
  }
  std::uint16_t src_port(std::span<const std::uint8_t> f) const noexcept override {
    return flow_src_port(inner_flow_hash(f), c_.src_min(), c_.src_max());
  }
  bool rco_tx() const noexcept override { return c_.remcsum_tx && c_.tx_outer_csum(); }
  bool remotes(std::span<const std::uint8_t> frame, std::uint64_t now_ns, std::vector<IpAddr>& out,
               Counters& c) override {
    // with local learning (EVPN) the source MAC is kept as ours (bounded)
    LocalResult local = LocalResult::Ignored;
    const bool flooded = fdb_->lookup_tx(mac_at(frame, wire::eth::kSrcOffset),
                                         mac_at(frame, wire::eth::kDstOffset), now_ns, out, &local);
    if (local == LocalResult::RefusedFull) ++c.fdb_local_refused;
    return flooded;
  }
  bool rco_encodable(const core::Packet& seg) const noexcept override {
    const int start = seg.csum_start_offset();
    return start >= 0 && wire::vxlan::rco_encode(std::uint32_t(start),
                                                 std::get<core::CsumPartial>(seg.csum).csum_offset);
  }
  EncapInfo encap(const core::Packet& seg, bool rco,
                  std::span<std::uint8_t, kMaxTunnelHdr> hdr) const override {
    EncapInfo i;
    if (seg.len() < wire::eth::kHdrLen) {
      i.reason = Drop::TxNotEthernet;
      return i;
    }
    wire::VxlanRepr h{c_.vni, std::nullopt};
    if (rco) {  // W-26: the inner field keeps its pseudo-header seed
      const auto enc = wire::vxlan::rco_encode(std::uint32_t(seg.csum_start_offset()),
                                               std::get<core::CsumPartial>(seg.csum).csum_offset);
      h.rco = wire::vxlan::rco_decode(*enc);
      i.rco = true;
    }
    h.emit(std::span<std::uint8_t>(hdr.data(), wire::vxlan::kLen));
    i.hdr_len = wire::vxlan::kLen;
    i.ok = true;
    return i;
  }

  bool learns_peers() const noexcept override { return true; }
  DecapResult decap(std::span<const std::uint8_t> payload, OuterCsum outer, Counters& c,
                    const core::BufferRef* owner, int outer_tos) const override {
    return tunnel::decap(payload, c_, outer, c, owner, outer_tos);
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
  wire::peer::Encap peer_encap() const noexcept override { return wire::peer::Encap::Vxlan; }
  std::string describe() const override {
    return " id " + std::to_string(c_.vni) + " local " + c_.local.to_string() + " dstport " +
           std::to_string(c_.dstport) + " remotes " + std::to_string(c_.remotes.size()) +
           (c_.remcsum_tx ? " remcsumtx" : "") + (c_.remcsum_rx ? " remcsumrx" : "");
  }
  std::optional<std::string> integrity_error() const override {
    // With the inner checksum elided, the outer UDP checksum is what protects the inner frame
    // (the link CRC of IPoIB connected mode, spec I-5) — in both directions.
    if (c_.tx_outer_csum() && !c_.udp6_zero_csum_rx) return std::nullopt;
    return std::string("integrity: needs the outer UDP checksum in both directions (it is "
                       "what protects the inner frame once the inner checksum is elided); "
                       "remove ") +
           (!c_.tx_outer_csum() ? (c_.ipv6() ? "udp6zerocsumtx" : "noudpcsum") : "udp6zerocsumrx");
  }

 private:
  VxlanConfig c_;
  std::shared_ptr<SharedFdb> fdb_;
  Mac own_mac_{};
  // vxlan_snoop's last sighting: the same source MAC from the same remote within
  // kSnoopRefreshNs is not looked up again (a train's datagrams carry one inner source).
  Mac snoop_mac_{};
  IpAddr snoop_from_{};
  std::uint64_t snoop_ns_ = 0;
  bool snoop_valid_ = false;
};

}  // namespace

std::unique_ptr<Encapsulation> make_encapsulation(const VxlanConfig& cfg) {
  return std::make_unique<VxlanEncap>(cfg);
}

}  // namespace ofld::tunnel

// The VXLAN endpoint's packet path (see datapath.hpp).
#include "ofld/tunnel/datapath.hpp"

#include <algorithm>

#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/offload/virtio_net.hpp"

namespace ofld::tunnel {

Datapath::Datapath(VxlanConfig cfg, DatapathOptions opts)
    : cfg_(std::move(cfg)),
      opts_(opts),
      fdb_(std::uint64_t(cfg_.ageing_s) * 1000000000ull),
      gso_ctr_(std::make_unique<offload::GsoCounters>()) {
  for (const auto& r : cfg_.remotes) fdb_.add_default_remote(r);
  if (opts_.gro) gro_ = std::make_unique<gro::Engine>(gro::EngineOptions{});
}

Datapath::~Datapath() = default;

namespace {
Mac mac_at(std::span<const std::uint8_t> f, std::size_t off) {
  Mac m{};
  std::copy_n(f.begin() + off, 6, m.begin());
  return m;
}

/// Cut the datagrams (sizes[i] bytes each, end to end in `bytes`) into UDP_SEGMENT trains.
void build_trains(std::span<const std::uint8_t> bytes, std::span<const std::uint32_t> sizes,
                  const IpAddr& remote, std::uint16_t sport, std::vector<TxTrain>& out) {
  std::size_t off = 0;
  TxTrain* cur = nullptr;
  bool closed = true;
  for (std::uint32_t sz : sizes) {
    bool fits = cur && !closed && sz <= cur->seg_size && cur->count < kMaxTrainSegs &&
                cur->buf.size() + sz <= kMaxTrainBytes;
    if (!fits) {
      out.push_back(TxTrain{remote, sport, std::uint16_t(sz), 0, {}});
      cur = &out.back();
      closed = false;
    }
    cur->buf.insert(cur->buf.end(), bytes.begin() + off, bytes.begin() + off + sz);
    ++cur->count;
    if (sz < cur->seg_size) closed = true;  // a short datagram ends its train
    off += sz;
  }
}
}  // namespace

void Datapath::transmit(const wire::virtio_net::Hdr& vnet, std::span<const std::uint8_t> frame,
                        std::uint64_t now_ns, std::vector<TxTrain>& out) {
  ++ctr_.tx_frames;
  ctr_.tx_bytes += frame.size();
  if (frame.size() < 14) {
    ctr_.drop(Drop::TxNotEthernet);
    return;
  }
  if (!opts_.tap_vnet_hdr && opts_.tap_mtu > 0 && frame.size() > std::size_t(opts_.tap_mtu) + 14) {
    ctr_.drop(Drop::TxTooBig);  // B4
    return;
  }
  auto tp = offload::virtio::to_packet(vnet, frame, wire::LinkType::Ethernet);
  if (!tp.ok()) {
    ctr_.drop(Drop::TxVnetRejected);
    return;
  }
  auto look = fdb_.lookup(mac_at(frame, 0), now_ns);
  if (look.remotes.empty()) {
    ctr_.drop(Drop::TxNoRemote);
    return;
  }
  if (look.flooded && look.remotes.size() > 1) ++ctr_.tx_flooded;
  std::uint16_t sport = flow_src_port(inner_flow_hash(frame), cfg_.src_min(), cfg_.src_max());

  std::vector<core::Packet> segs;
  if (tp.pkt.is_gso()) {
    // With RCO the device "has" checksum offload: segments keep their pseudo-header seeds
    // (W-28/X-31); otherwise no checksum feature → summed while copying (X-8 CopySum).
    core::Features f{};
    if (cfg_.remcsum_tx && cfg_.tx_outer_csum()) f = core::netif_f::SG | core::netif_f::HW_CSUM;
    core::Device dev;
    dev.features = f;
    auto r = gso::gso_segment(std::move(tp.pkt), f, dev, gso_ctr_.get());
    if (!r.ok()) {
      ctr_.drop(Drop::TxGsoFailed);
      return;
    }
    ++ctr_.tx_gso_super;
    segs = std::move(r.segs);
  } else {
    segs.push_back(std::move(tp.pkt));
  }

  scratch_.clear();
  std::vector<std::uint32_t> sizes;
  sizes.reserve(segs.size());
  for (auto& s : segs) {
    bool was_partial = s.ip_summed() == core::IpSummed::Partial;
    bool was_none_gso = !was_partial && segs.size() > 1;
    std::size_t before = scratch_.size();
    EncapInfo e = encap_frame(s, cfg_, scratch_);
    if (!e.ok) {
      ctr_.drop(e.reason);
      continue;
    }
    sizes.push_back(std::uint32_t(scratch_.size() - before));
    if (e.rco) ++ctr_.tx_rco, ++ctr_.tx_csum_skipped;
    if (e.csum_sw || was_none_gso) ++ctr_.tx_csum_sw;
  }
  if (sizes.empty()) return;
  for (const auto& r : look.remotes) {
    std::size_t first = out.size();
    build_trains(scratch_, sizes, r, sport, out);
    for (std::size_t i = first; i < out.size(); ++i) {
      ctr_.tx_datagrams += out[i].count;
      ctr_.tx_dgram_bytes += out[i].buf.size();
    }
  }
}

void Datapath::receive(std::span<const std::uint8_t> payload, const IpAddr& from,
                       OuterCsum outer, std::uint64_t now_ns) {
  ++ctr_.rx_datagrams;
  ctr_.rx_dgram_bytes += payload.size();
  auto d = decap(payload, cfg_, outer, ctr_);
  if (!d.ok) return;
  auto inner = d.pkt.head();
  Mac src = mac_at(inner, 6);
  if (src == opts_.own_mac && opts_.own_mac != Mac{}) {
    ctr_.drop(Drop::RxLoop);
    return;
  }
  if (cfg_.learning && fdb_.learn(src, from, now_ns)) ++ctr_.fdb_learned;
  if (gro_) gro_->receive(std::move(d.pkt), now_ns);
  else rx_nogro_.push_back(std::move(d.pkt));
}

void Datapath::receive_train(std::span<const std::uint8_t> buf, std::uint16_t gso_size,
                             const IpAddr& from, OuterCsum outer, std::uint64_t now_ns) {
  if (gso_size == 0 || gso_size >= buf.size()) {
    receive(buf, from, outer, now_ns);
    return;
  }
  ++ctr_.rx_gro_trains;
  for (std::size_t off = 0; off < buf.size(); off += gso_size)
    receive(buf.subspan(off, std::min<std::size_t>(gso_size, buf.size() - off)), from, outer, now_ns);
}

void Datapath::to_tap(core::Packet&& p, std::vector<TapFrame>& out) {
  if (p.ip_summed() == core::IpSummed::None && p.csum_valid)
    p.csum = core::CsumUnnecessary{};  // verified by GRO: tell the stack (DATA_VALID)
  if (p.ip_summed() == core::IpSummed::Unnecessary || p.is_gso()) ++ctr_.rx_csum_validated;
  if (!opts_.tap_vnet_hdr && p.ip_summed() == core::IpSummed::Partial) {
    if (p.is_gso() || core::checksum_help(p) != core::PacketError::Ok) {
      ctr_.drop(Drop::RxTapWriteFailed);
      return;
    }
    ++ctr_.rx_csum_validated;
  }
  auto h = offload::virtio::from_packet(p, true);
  if (!h) {
    ctr_.drop(Drop::RxTapWriteFailed);
    return;
  }
  if (p.is_gso()) ++ctr_.rx_gro_aggregates;
  TapFrame f{*h, p.to_bytes()};
  out.push_back(std::move(f));
}

void Datapath::rx_flush(std::uint64_t now_ns, std::vector<TapFrame>& out) {
  if (gro_) {
    gro_->poll_end(now_ns);
    ctr_.rx_gro_merged = gro_->counters().merged;
    for (auto& p : gro_->take_output()) to_tap(std::move(p), out);
  }
  for (auto& p : rx_nogro_) to_tap(std::move(p), out);
  rx_nogro_.clear();
}

void Datapath::tick(std::uint64_t now_ns) { ctr_.fdb_aged += fdb_.age(now_ns); }

}  // namespace ofld::tunnel

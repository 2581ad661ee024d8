// The VXLAN endpoint's packet path (see datapath.hpp).
#include "ofld/tunnel/datapath.hpp"

#include <algorithm>

#include "ofld/wire/tunnel.hpp"

#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/offload/virtio_net.hpp"

namespace ofld::tunnel {

Datapath::Datapath(VxlanConfig cfg, DatapathOptions opts)
    : cfg_(std::move(cfg)),
      opts_(opts),
      fdb_(opts_.fdb ? opts_.fdb
                     : std::make_shared<SharedFdb>(std::uint64_t(cfg_.ageing_s) * 1000000000ull)),
      gso_ctr_(std::make_unique<offload::GsoCounters>()) {
  for (const auto& r : cfg_.remotes) fdb_->add_default_remote(r);
  if (opts_.gro) {
    // The caller's rx_flush() is the NAPI poll end; no intermediate flush inside a batch
    // (aggregates are still bounded by the 64 KiB GRO size rule).
    gro::EngineOptions eo{};
    eo.batch = std::size_t(1) << 30;
    // Only what the TAP's virtio_net_hdr can describe (a guest's own GRE/IPIP/UDP tunnel
    // inside the overlay passes unmerged).
    eo.gso_types = offload::virtio::kGsoTypes;
    gro_ = std::make_unique<gro::Engine>(eo);
  }
}

Datapath::~Datapath() = default;

namespace {
std::size_t piece_count(const core::Packet& p) {
  std::size_t n = p.headlen() ? 1 : 0;
  for (const auto& f : p.frags()) n += f.len ? 1 : 0;
  for (const auto& m : p.frag_list()) n += piece_count(m);
  return n;
}

Mac mac_at(std::span<const std::uint8_t> f, std::size_t off) {
  Mac m{};
  std::copy_n(f.begin() + off, 6, m.begin());
  return m;
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
  const bool flooded = fdb_->lookup(mac_at(frame, 0), now_ns, remotes_);
  if (remotes_.empty()) {
    ctr_.drop(Drop::TxNoRemote);
    return;
  }
  if (flooded && remotes_.size() > 1) ++ctr_.tx_flooded;
  std::uint16_t sport = flow_src_port(inner_flow_hash(frame), cfg_.src_min(), cfg_.src_max());
  const std::uint8_t tos = outer_tos(cfg_, frame);  // every segment has the frame's dsfield

  segs_.clear();
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
    segs_ = std::move(r.segs);
  } else {
    segs_.push_back(std::move(tp.pkt));
  }

  // Encapsulate each segment straight into the first remote's trains: equal-size datagrams,
  // a shorter one closes its train, at most kMaxTrainSegs / kMaxTrainBytes per train.
  const std::size_t first = out.size();
  TxTrain* cur = nullptr;
  bool closed = true;
  const bool multi = segs_.size() > 1;
  const bool scatter = opts_.tx_pieces;
  for (auto& s : segs_) {
    bool was_partial = s.ip_summed() == core::IpSummed::Partial;
    std::size_t sz = wire::vxlan::kLen + s.len();
    std::size_t np = scatter ? 1 + piece_count(s) : 0;
    bool fits = cur && !closed && sz <= cur->seg_size && cur->count < kMaxTrainSegs &&
                cur->size() + sz <= kMaxTrainBytes && cur->npieces + np <= kMaxTrainIov;
    if (!fits) {
      out.push_back(TxTrain{remotes_[0], sport, std::uint16_t(sz), 0,
                            scatter ? std::vector<std::uint8_t>{} : take_buf(), {}, {}, 0, 0, tos});
      cur = &out.back();
      if (scatter) take_scatter(*cur);
      closed = false;
    }
    std::size_t before = cur->buf.size();
    EncapInfo e;
    if (scatter) {
      std::array<std::uint8_t, 8> h{};
      e = encap_header(s, cfg_, h);
      if (e.ok) {
        cur->hdrs.push_back(h);
        cur->pieces_bytes += sz;
        cur->npieces += 1 + piece_count(s);
        cur->segs.push_back(std::move(s));
      }
    } else {
      e = encap_frame(s, cfg_, cur->buf);
    }
    if (!e.ok) {
      cur->buf.resize(before);
      ctr_.drop(e.reason);
      if (cur->count == 0) {  // nothing in the train just opened
        recycle_one(out.back().buf);
        out.pop_back();
        cur = out.size() > first ? &out.back() : nullptr;
      }
      continue;
    }
    ++cur->count;
    if (sz < cur->seg_size) closed = true;  // a short datagram ends its train
    if (e.rco) ++ctr_.tx_rco, ++ctr_.tx_csum_skipped;
    if (e.csum_sw || (!was_partial && multi)) ++ctr_.tx_csum_sw;
  }
  const std::size_t last = out.size();
  // Flooding: the same trains to every other remote.
  for (std::size_t r = 1; r < remotes_.size(); ++r)
    for (std::size_t i = first; i < last; ++i) {
      auto b = take_buf();
      if (out[i].scattered()) b = flatten(out[i]);
      else b.assign(out[i].buf.begin(), out[i].buf.end());
      out.push_back(TxTrain{remotes_[r], sport, out[i].seg_size, out[i].count, std::move(b), {}, {}, 0, 0, out[i].tos});
    }
  for (std::size_t i = first; i < out.size(); ++i) {
    ctr_.tx_datagrams += out[i].count;
    ctr_.tx_dgram_bytes += out[i].size();
  }
}

std::vector<std::uint8_t> Datapath::take_buf() {
  if (buf_pool_.empty()) {
    std::vector<std::uint8_t> b;
    b.reserve(kMaxTrainBytes);
    return b;
  }
  auto b = std::move(buf_pool_.back());
  buf_pool_.pop_back();
  b.clear();
  return b;
}

void Datapath::recycle_one(std::vector<std::uint8_t>& b) {
  if (buf_pool_.size() < kBufPoolMax && b.capacity() >= kMaxTrainBytes) buf_pool_.push_back(std::move(b));
}

void Datapath::take_scatter(TxTrain& t) {
  if (!hdr_pool_.empty()) {
    t.hdrs = std::move(hdr_pool_.back());
    hdr_pool_.pop_back();
    t.segs = std::move(seg_pool_.back());
    seg_pool_.pop_back();
  } else {
    t.hdrs.reserve(kMaxTrainSegs);
    t.segs.reserve(kMaxTrainSegs);
  }
}

void Datapath::recycle(std::vector<TxTrain>& sent) {
  for (auto& t : sent) {
    recycle_one(t.buf);
    if (t.segs.capacity() && hdr_pool_.size() < kBufPoolMax) {  // keep the vectors' storage
      t.segs.clear();  // releases the segments
      t.hdrs.clear();
      seg_pool_.push_back(std::move(t.segs));
      hdr_pool_.push_back(std::move(t.hdrs));
    }
  }
  sent.clear();
}

void Datapath::receive(std::span<const std::uint8_t> payload, const IpAddr& from,
                       OuterCsum outer, std::uint64_t now_ns, int outer_tos) {
  receive_one(payload, from, outer, now_ns, nullptr, outer_tos);
}

void Datapath::receive_one(std::span<const std::uint8_t> payload, const IpAddr& from,
                           OuterCsum outer, std::uint64_t now_ns, const core::BufferRef* owner,
                           int outer_tos) {
  ++ctr_.rx_datagrams;
  ctr_.rx_dgram_bytes += payload.size();
  auto d = decap(payload, cfg_, outer, ctr_, owner, outer_tos);
  if (!d.ok) return;
  auto inner = d.pkt.head();
  Mac src = mac_at(inner, 6);
  if (src == opts_.own_mac && opts_.own_mac != Mac{}) {
    ctr_.drop(Drop::RxLoop);
    return;
  }
  if (cfg_.learning && fdb_->learn(src, from, now_ns)) ++ctr_.fdb_learned;
  if (gro_) gro_->receive(std::move(d.pkt), now_ns);
  else rx_nogro_.push_back(std::move(d.pkt));
}

void Datapath::receive_train(std::span<const std::uint8_t> buf, std::uint16_t gso_size,
                             const IpAddr& from, OuterCsum outer, std::uint64_t now_ns,
                             int outer_tos) {
  if (gso_size == 0 || gso_size >= buf.size()) {
    receive(buf, from, outer, now_ns, outer_tos);
    return;
  }
  ++ctr_.rx_gro_trains;
  for (std::size_t off = 0; off < buf.size(); off += gso_size)
    receive(buf.subspan(off, std::min<std::size_t>(gso_size, buf.size() - off)), from, outer,
            now_ns, outer_tos);
}

void Datapath::receive_train(const core::BufferRef& owner, std::size_t off, std::size_t len,
                             std::uint16_t gso_size, const IpAddr& from, OuterCsum outer,
                             std::uint64_t now_ns, int outer_tos) {
  if (!owner || off > owner->bytes.size() || len > owner->bytes.size() - off) {
    ctr_.drop(Drop::RxTruncated);
    return;
  }
  std::span<const std::uint8_t> buf(owner->bytes.data() + off, len);
  if (gso_size == 0 || gso_size >= buf.size()) {
    receive_one(buf, from, outer, now_ns, &owner, outer_tos);
    return;
  }
  ++ctr_.rx_gro_trains;
  for (std::size_t o = 0; o < buf.size(); o += gso_size)
    receive_one(buf.subspan(o, std::min<std::size_t>(gso_size, buf.size() - o)), from, outer,
                now_ns, &owner, outer_tos);
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
  if (opts_.tap_frame_packets) {
    out.push_back(TapFrame{*h, std::move(p)});
  } else {
    out.push_back(TapFrame{*h, p.to_bytes()});
  }
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

namespace {
void packet_pieces(const core::Packet& p, std::vector<std::span<const std::uint8_t>>& out) {
  if (p.headlen()) out.push_back(p.head());
  for (const auto& f : p.frags())
    if (f.len) out.push_back(f.bytes());
  for (const auto& m : p.frag_list()) packet_pieces(m, out);
}
}  // namespace

void train_pieces(const TxTrain& t, std::vector<std::span<const std::uint8_t>>& pieces,
                  std::vector<std::size_t>& first) {
  if (t.scattered()) {
    for (std::size_t i = 0; i < t.segs.size(); ++i) {
      first.push_back(pieces.size());
      pieces.push_back(std::span<const std::uint8_t>(t.hdrs[i].data(), t.hdrs[i].size()));
      packet_pieces(t.segs[i], pieces);
    }
  } else if (!t.buf.empty()) {
    const std::size_t seg = t.seg_size ? t.seg_size : t.buf.size();
    for (std::size_t off = 0; off < t.buf.size(); off += seg) {
      first.push_back(pieces.size());
      pieces.push_back(std::span<const std::uint8_t>(t.buf).subspan(off, std::min(seg, t.buf.size() - off)));
    }
  }
  first.push_back(pieces.size());
}

std::vector<std::uint8_t> flatten(const TxTrain& t) {
  if (!t.scattered()) return t.buf;
  std::vector<std::span<const std::uint8_t>> pieces;
  std::vector<std::size_t> first;
  train_pieces(t, pieces, first);
  std::vector<std::uint8_t> out;
  out.reserve(t.pieces_bytes);
  for (auto p : pieces) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::size_t tap_pieces(const TapFrame& f, std::vector<std::span<const std::uint8_t>>& out) {
  std::size_t n = out.size();
  if (f.pkt) packet_pieces(*f.pkt, out);
  else if (!f.data.empty()) out.push_back(f.data);
  return out.size() - n;
}

void Datapath::tick(std::uint64_t now_ns) { ctr_.fdb_aged += fdb_->age(now_ns); }

}  // namespace ofld::tunnel

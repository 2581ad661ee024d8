// The tunnel endpoint: one packet path for VXLAN, GUE, GRE and ip6gre (see endpoint.hpp).
#include "ofld/tunnel/endpoint.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "ofld/core/skb_copy_csum.hpp"
#include "ofld/tunnel/inner_csum.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/offload/gro_context.hpp"
#include "ofld/offload/gso_context.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::tunnel {

Endpoint::Endpoint(TunnelConfig cfg, EndpointOptions opts)
    : cfg_(std::move(cfg)), enc_(make_encapsulation(cfg_)), opts_(std::move(opts)) {
  enc_->bind(EncapBinding{opts_.fdb, opts_.own_mac, opts_.any_source});
  for (const auto& r : enc_->configured_remotes()) peers_[r] = Peer{r, true, {}};
  init();
}

void Endpoint::init() {
  gso_ctr_ = std::make_unique<core::GsoCounters>();
  gro::GroCellsOptions co;
  co.engine.link = enc_->link() == wire::LinkType::Ethernet ? gro::LinkLayer::Ethernet
                                                            : gro::LinkLayer::RawIp;
  // Only what the device's virtio_net_hdr can describe is merged (a guest's own tunnel
  // inside the overlay passes unmerged).
  co.engine.gso_types = offload::virtio::kGsoTypes;
  co.engine.config.gro = opts_.gro;  // off: gro_cells hands every frame on alone (netif_rx)
  if (opts_.gro_backlog == 0) opts_.gro_backlog = enc_->default_gro_backlog();
  co.max_backlog = opts_.gro_backlog;
  cells_ = std::make_unique<gro::GroCells>(co);
}

Endpoint::~Endpoint() = default;

const Peer* Endpoint::peer(const IpAddr& a) const noexcept {
  auto it = peers_.find(a);
  return it == peers_.end() ? nullptr : &it->second;
}

std::uint32_t Endpoint::segs_per_train(int mtu) const noexcept {
  if (enc_->socket() != SocketKind::Udp || mtu <= 0) return 0;
  const bool v6 = enc_->common().ipv6();
  // overhead() = outer IP + UDP + tunnel header (+ inner Ethernet): a datagram's UDP payload
  // is the inner L3 packet plus what the overhead holds beyond the outer IP and UDP headers.
  const int outer = int((v6 ? wire::ipv6::kHdrLen : wire::ipv4::kMinLen) + wire::udp::kHdrLen);
  const std::size_t dgram = std::size_t(mtu + enc_->overhead() - outer);
  return std::uint32_t(std::min(kMaxTrainBytes / dgram, kMaxTrainSegs));
}

Peer* Endpoint::find_peer(const IpAddr& a, bool create) {
  if (last_peer_ && last_peer_->addr == a) return last_peer_;
  auto it = peers_.find(a);
  if (it == peers_.end()) {
    if (!create || peers_.size() >= kMaxPeers) return nullptr;
    it = peers_.emplace(a, Peer{a, false, {}}).first;
  }
  last_peer_ = &it->second;
  return last_peer_;
}

std::size_t Endpoint::fdb_entries(const Peer& p) const {
  const SharedFdb* f = enc_->fdb();
  return f ? f->count_remote(p.addr) : 0;
}

// ---- transmit ---------------------------------------------------------------------------------

void Endpoint::transmit(const wire::virtio_net::Hdr& vnet, std::span<const std::uint8_t> frame,
                        std::uint64_t now_ns, std::vector<TxTrain>& out, const core::BufferRef* owner) {
  ++ctr_.tx_frames;
  ctr_.tx_bytes += frame.size();
  if (auto d = enc_->tx_check(frame)) {
    ctr_.drop(*d);
    return;
  }
  const std::size_t link_hdr = enc_->link() == wire::LinkType::Ethernet ? wire::eth::kHdrLen : 0;
  if (!opts_.vnet_hdr && opts_.mtu > 0 && frame.size() > std::size_t(opts_.mtu) + link_hdr) {
    ctr_.drop(Drop::TxTooBig);  // B4
    return;
  }
  auto tp = offload::virtio::to_packet(vnet, frame, enc_->link(), nullptr, owner);
  if (!tp.ok()) {
    ctr_.drop(Drop::TxVnetRejected);
    return;
  }
  const bool flooded = enc_->remotes(frame, now_ns, remotes_, ctr_);
  if (remotes_.empty()) {
    ctr_.drop(Drop::TxNoRemote);
    return;
  }
  if (flooded && remotes_.size() > 1) ++ctr_.tx_flooded;
  const std::uint16_t sport = enc_->src_port(frame);
  const std::uint8_t tos = enc_->outer_tos(frame);  // every segment has the frame's dsfield
  const OuterTtlDf ttl_df = enc_->outer_ttl_df(frame);  // and its TTL and DF
  const bool elide = opts_.peer_sessions && tx_elide(now_ns);  // integrity mode
  const bool gso = tp.pkt.is_gso();
  // A sum that folds to 0 is written as the kernel's software path writes it: TCP segments
  // keep 0 (tcp_gso_segment), UDP segments and a lone frame's checksum_help write 0xFFFF.
  const bool zero_as_ffff =
      !(gso && (tp.pkt.gso.type & (core::skb_gso::TCPV4 | core::skb_gso::TCPV6)) != 0);
  if (!segment(std::move(tp.pkt))) return;
  const Packed pk = pack(TxBinding{sport, tos, ttl_df}, elide, gso, zero_as_ffff, out);
  flood(pk.first, out);
  count(pk, elide, out);
  segs_.clear();  // segments may reference the device's read buffer (`owner`): let it go
}

bool Endpoint::segment(core::Packet&& pkt) {
  segs_.clear();
  if (!pkt.is_gso()) {
    segs_.push_back(std::move(pkt));
    return true;
  }
  // GSO of the inner super-packet; the tunnel header goes on each segment in pack(). The
  // "device" has NETIF_F_SG | NETIF_F_HW_CSUM: GSO neither copies nor sums and
  // every segment stays CHECKSUM_PARTIAL with its seed; what becomes of that checksum is the
  // one decision in pack() (inner_csum_plan: RCO, elided, summed in the train or before).
  const core::Features f(core::netif_f::SG | core::netif_f::HW_CSUM);
  core::Device dev;
  dev.features = f;
  auto r = gso::gso_segment(std::move(pkt), f, dev, gso_ctr_.get());
  if (!r.ok()) {
    ctr_.drop(Drop::TxGsoFailed);
    return false;
  }
  ++ctr_.tx_gso_super;
  segs_ = std::move(r.segs);
  return true;
}

Endpoint::Packed Endpoint::pack(const TxBinding& bind, bool elide, bool gso, bool zero_as_ffff,
                                std::vector<TxTrain>& out) {
  // Each datagram (tunnel header + segment) straight into the first remote's trains: equal
  // sizes, a shorter one closes its train, at most kMaxTrainSegs / kMaxTrainBytes per train.
  // The previous frame's last train, when still open and bound the same way, is continued
  // (one send for a batch of same-size frames such as one flow's pure ACKs).
  const bool join = tx_open_ && remotes_.size() == 1 && !out.empty() && out.size() == tx_open_n_ &&
                    out.back().buf.data() == tx_open_buf_ && out.back().remote == remotes_[0] &&
                    out.back().src_port == bind.sport && out.back().tos == bind.tos &&
                    out.back().ttl == bind.ttl_df.ttl && out.back().df == bind.ttl_df.df;
  tx_open_ = false;
  Packed pk;
  pk.first = join ? out.size() - 1 : out.size();
  TxTrain* cur = join ? &out.back() : nullptr;
  pk.joined_count = join ? cur->count : 0;
  pk.joined_bytes = join ? cur->buf.size() : 0;
  // Bytes of cur->buf written so far. A pooled buffer keeps its previous length (take_buf), so
  // resize zero-fills only what no earlier train used; each train is trimmed to `used` when
  // the next one opens and after the loop.
  std::size_t used = pk.joined_bytes;
  bool closed = !join;
  std::array<std::uint8_t, kMaxTunnelHdr> hdr{};
  const bool rco_tx = enc_->rco_tx();
  for (auto& s : segs_) {
    const bool was_partial = s.ip_summed() == core::IpSummed::Partial;
    // The one decision on the inner checksum of this segment, then what it says.
    InnerCsumFacts f;  // inner_csum_facts, with the frame's part read once above
    f.partial = was_partial, f.elide = elide, f.rco_tx = rco_tx;
    if (was_partial) {
      f.inet = !std::get<core::CsumPartial>(s.csum).not_inet;
      f.start_known = s.csum_start_offset() >= 0;
      f.rco_encodable = rco_tx && f.start_known && enc_->rco_encodable(s);
    }
    const InnerCsum how = inner_csum_plan(f);
    int sum_start = -1;
    std::uint16_t sum_offset = 0;
    bool summed = false;
    switch (how) {
      case InnerCsum::Done:
      case InnerCsum::Rco: break;
      case InnerCsum::Elided: s.csum = core::CsumNone{}; break;  // the field keeps the seed
      case InnerCsum::SumInTrain:
        sum_start = s.csum_start_offset();
        sum_offset = std::get<core::CsumPartial>(s.csum).csum_offset;
        s.csum = core::CsumNone{};
        break;
      case InnerCsum::SumInEncap:  // skb_checksum_help before the header
        if (core::checksum_help(s) != core::PacketError::Ok) {
          ctr_.drop(Drop::TxCsumFailed);
          continue;
        }
        summed = true;
        break;
    }
    EncapInfo e = enc_->encap(s, how == InnerCsum::Rco, hdr);
    if (!e.ok) {
      ctr_.drop(e.reason);
      continue;
    }
    const std::size_t sz = e.hdr_len + s.len();
    if (sz > kMaxTrainBytes) {
      ctr_.drop(Drop::TxTooBig);
      continue;
    }
    const bool fits = cur && !closed && sz <= cur->seg_size && cur->count < kMaxTrainSegs &&
                      used + sz <= kMaxTrainBytes;
    if (!fits) {
      if (cur) cur->buf.resize(used);  // before push_back moves the trains
      out.push_back(TxTrain{remotes_[0], bind.sport, std::uint16_t(sz), 0, take_buf(), bind.tos,
                            bind.ttl_df.ttl, bind.ttl_df.df});
      cur = &out.back();
      used = 0;
      closed = false;
    }
    const std::size_t at = used;
    if (cur->buf.size() < at + sz) cur->buf.resize(at + sz);
    std::uint8_t* const d = cur->buf.data() + at;
    std::memcpy(d, hdr.data(), e.hdr_len);
    const std::span<std::uint8_t> seg_bytes(d + e.hdr_len, s.len());
    if (sum_start >= 0) {
      // Copy the segment into the train and sum its L4 bytes in the same pass, as a device
      // without checksum offload does (skb_copy_and_csum_dev): the same bytes as a copy
      // followed by checksum_help_bytes over it.
      if (core::copy_and_checksum_help(s, seg_bytes, std::size_t(sum_start), sum_offset,
                                       zero_as_ffff) != core::PacketError::Ok) {
        if (cur->count == 0) {  // take the empty train back out
          cur->buf.clear();
          buf_pool_.push_back(std::move(cur->buf));
          out.pop_back();
          cur = nullptr;
        }
        ctr_.drop(Drop::TxCsumFailed);
        continue;
      }
      summed = true;
    } else {
      s.copy_bits(0, seg_bytes);  // head, frags, frag_list: exactly len() bytes
    }
    if (enc_->finish(std::span<std::uint8_t>(d, sz))) ++ctr_.tx_gre_csum;
    used += sz;
    ++cur->count;
    if (sz < cur->seg_size) closed = true;  // a short datagram ends its train
    if (how == InnerCsum::Elided) ++ctr_.tx_csum_skipped;
    else if (how == InnerCsum::Rco) ++ctr_.tx_rco, ++ctr_.tx_csum_skipped;
    else if (summed || (gso && !was_partial)) ++ctr_.tx_csum_sw;  // summed here or by GSO
  }
  if (cur) cur->buf.resize(used);
  if (cur && !closed && remotes_.size() == 1) {  // cur is out.back(): the next frame may continue it
    tx_open_ = true;
    tx_open_n_ = out.size();
    tx_open_buf_ = cur->buf.data();
  }
  pk.last = out.size();
  return pk;
}

void Endpoint::flood(std::size_t first, std::vector<TxTrain>& out) {
  // Flooding (VXLAN): the same trains to every other remote.
  const std::size_t last = out.size();
  for (std::size_t r = 1; r < remotes_.size(); ++r)
    for (std::size_t i = first; i < last; ++i) {
      auto b = take_buf();
      b.assign(out[i].buf.begin(), out[i].buf.end());
      out.push_back(TxTrain{remotes_[r], out[i].src_port, out[i].seg_size, out[i].count, std::move(b), out[i].tos,
                            out[i].ttl, out[i].df});
    }
}

void Endpoint::count(const Packed& pk, bool elide, const std::vector<TxTrain>& out) {
  for (std::size_t i = pk.first; i < out.size(); ++i) {
    // this frame's datagrams only (a continued train already counted the earlier ones)
    const std::uint32_t n = out[i].count - (i == pk.first ? pk.joined_count : 0);
    const std::size_t bytes = out[i].size() - (i == pk.first ? pk.joined_bytes : 0);
    if (n == 0) continue;
    ctr_.tx_datagrams += n;
    ctr_.tx_dgram_bytes += bytes;
    if (Peer* p = find_peer(out[i].remote, true)) {
      p->ctr.tx_datagrams += n;
      p->ctr.tx_bytes += bytes;
      (elide ? p->ctr.tx_csum_elided : p->ctr.tx_csum_full) += n;
    }
  }
}

void Endpoint::sent(const TxTrain& t, bool ok, bool udp_segment, bool gso_fallback) noexcept {
  ctr_.gso_fallbacks += gso_fallback;
  if (!ok) ctr_.drops[std::size_t(Drop::TxSendFailed)] += t.count;
  else if (udp_segment && t.count > 1) ++ctr_.tx_trains;
}

std::vector<std::uint8_t> Endpoint::take_buf() {
  if (buf_pool_.empty()) {
    std::vector<std::uint8_t> b;
    b.reserve(kMaxTrainBytes);
    return b;
  }
  // Not cleared: its old length stays, so refilling it zero-fills nothing (transmit writes
  // from the front and trims; the flooding copy assigns).
  auto b = std::move(buf_pool_.back());
  buf_pool_.pop_back();
  return b;
}

void Endpoint::recycle_one(std::vector<std::uint8_t>& b) {
  if (buf_pool_.size() < kBufPoolMax && b.capacity() >= kMaxTrainBytes) buf_pool_.push_back(std::move(b));
}

void Endpoint::recycle(std::vector<TxTrain>& sent) {
  // In reverse: the pool is taken from the back, so the next transmit gets the buffers in the
  // order they were filled, each already as long as the train it held (take_buf keeps the
  // length), and a steady stream refills them without zero-filling (resize) first.
  for (auto it = sent.rbegin(); it != sent.rend(); ++it) recycle_one(it->buf);
  sent.clear();
  tx_open_ = false;
}

// ---- receive ----------------------------------------------------------------------------------

void Endpoint::receive(std::span<const std::uint8_t> payload, const IpAddr& from, OuterCsum outer,
                       std::uint64_t now_ns, int outer_tos) {
  receive_one(payload, from, find_peer(from, enc_->learns_peers()), outer, now_ns, nullptr, outer_tos);
}

void Endpoint::receive_one(std::span<const std::uint8_t> payload, const IpAddr& from, Peer* peer,
                           OuterCsum outer, std::uint64_t now_ns, const core::BufferRef* owner,
                           int outer_tos) {
  // Peer session messages are not data: consumed and counted by the session table.
  if (opts_.peer_sessions && rx_control(payload, from, now_ns)) return;
  ++ctr_.rx_datagrams;
  ctr_.rx_dgram_bytes += payload.size();
  if (peer) ++peer->ctr.rx_datagrams, peer->ctr.rx_bytes += payload.size();
  if (!enc_->accepts(from)) {  // ip_tunnel_lookup: no tunnel for this source
    ctr_.drop(Drop::RxWrongSource);
    return;
  }
  auto d = enc_->decap(payload, outer, ctr_, owner, outer_tos);
  if (!d.ok) {
    if (peer) ++peer->ctr.rx_dropped;
    return;
  }
  // The inner checksum field held its seed: delivered NEEDS_CSUM, never summed (integrity mode).
  if (peer && !d.rco && d.pkt.ip_summed() == core::IpSummed::Partial) ++peer->ctr.rx_csum_seed;
  // After decapsulation (VXLAN: loop check and vxlan_snoop).
  if (!enc_->after_decap(d.pkt, from, peer, now_ns, ctr_)) {
    if (peer) ++peer->ctr.rx_dropped;
    return;
  }
  // gro_cells_receive, from inside the cell's NAPI context: this thread polls the cell in
  // rx_flush before it writes to the device, so the frame goes through GRO now, while the
  // headers decap just read are in cache (same aggregates as queueing them: GRO flushes at
  // poll end only). After netdev_max_backlog frames the poll ends early (a GRO flush), so a
  // long batch costs an early flush, never a lost frame.
  if (queued_ >= opts_.gro_backlog) {
    cells_->poll(SIZE_MAX, now_ns);
    queued_ = 0;
  }
  if (!cells_->receive_polled(std::move(d.pkt), now_ns)) {
    ctr_.drop(Drop::RxGroCellsDropped);
    if (peer) ++peer->ctr.rx_dropped;
    return;
  }
  ++queued_;
}

void Endpoint::receive_train(std::span<const std::uint8_t> buf, std::uint16_t gso_size,
                             const IpAddr& from, OuterCsum outer, std::uint64_t now_ns,
                             int outer_tos) {
  Peer* peer = find_peer(from, enc_->learns_peers());
  if (gso_size == 0 || gso_size >= buf.size()) {
    receive_one(buf, from, peer, outer, now_ns, nullptr, outer_tos);
    return;
  }
  ++ctr_.rx_gro_trains;
  for (std::size_t off = 0; off < buf.size(); off += gso_size)
    receive_one(buf.subspan(off, std::min<std::size_t>(gso_size, buf.size() - off)), from, peer,
                outer, now_ns, nullptr, outer_tos);
}

void Endpoint::receive_train(const core::BufferRef& owner, std::size_t off, std::size_t len,
                             std::uint16_t gso_size, const IpAddr& from, OuterCsum outer,
                             std::uint64_t now_ns, int outer_tos) {
  if (!owner || off > owner->bytes.size() || len > owner->bytes.size() - off) {
    ctr_.drop(Drop::RxTruncated);
    return;
  }
  Peer* peer = find_peer(from, enc_->learns_peers());
  std::span<const std::uint8_t> buf(owner->bytes.data() + off, len);
  if (gso_size == 0 || gso_size >= buf.size()) {
    receive_one(buf, from, peer, outer, now_ns, &owner, outer_tos);
    return;
  }
  ++ctr_.rx_gro_trains;
  for (std::size_t o = 0; o < buf.size(); o += gso_size)
    receive_one(buf.subspan(o, std::min<std::size_t>(gso_size, buf.size() - o)), from, peer, outer,
                now_ns, &owner, outer_tos);
}

void Endpoint::to_dev(core::Packet&& p, std::vector<TapFrame>& out) {
  if (p.ip_summed() == core::IpSummed::None && p.csum_valid)
    p.csum = core::CsumUnnecessary{};  // verified by GRO: tell the stack (DATA_VALID)
  if (p.ip_summed() == core::IpSummed::Unnecessary || p.is_gso()) ++ctr_.rx_csum_validated;
  if (!opts_.vnet_hdr && p.ip_summed() == core::IpSummed::Partial) {
    if (p.is_gso() || core::checksum_help(p) != core::PacketError::Ok) {
      ctr_.drop(Drop::RxDevWriteFailed);
      return;
    }
    ++ctr_.rx_csum_validated;
  }
  auto h = offload::virtio::from_packet(p, true);
  if (!h) {
    ctr_.drop(Drop::RxDevWriteFailed);
    return;
  }
  if (p.is_gso()) ++ctr_.rx_gro_aggregates;
  out.push_back(TapFrame{*h, std::move(p)});
}

void Endpoint::rx_flush(std::uint64_t now_ns, std::vector<TapFrame>& out) {
  cells_->poll(SIZE_MAX, now_ns);  // the cell's NAPI poll: every queued frame, then poll end
  queued_ = 0;
  ctr_.rx_gro_merged = cells_->engine().counters().merged;
  auto& done = cells_->output();
  for (auto& p : done) to_dev(std::move(p), out);
  done.clear();  // keeps its capacity for the next batch
}

void Endpoint::written(std::uint64_t frames, std::uint64_t bytes, std::uint64_t failed) noexcept {
  ctr_.rx_frames += frames;
  ctr_.rx_bytes += bytes;
  ctr_.drops[std::size_t(Drop::RxDevWriteFailed)] += failed;
}

void Endpoint::tick(std::uint64_t now_ns) { enc_->tick(now_ns, ctr_); }

void Endpoint::set_outer(const TunnelCommon& outer) noexcept {
  cfg_.common().set_outer(outer);
  enc_->set_outer(outer);  // the encapsulation reads its own copy
}

// ---- stats ------------------------------------------------------------------------------------

nlohmann::json Endpoint::stats() const {
  using json = nlohmann::json;
  const auto& c = ctr_;
  json drops = json::object();
  for (std::size_t i = 0; i < kDropCount; ++i)
    if (c.drops[i]) drops[std::string(to_string(Drop(i)))] = c.drops[i];
  json j = {
      {"encap", std::string(to_string(encap()))},
      {"drops", drops},
      {"drops_total", c.drops_total()},
  };
  const bool fdb = enc_->fdb() != nullptr;
  for (const auto& f : kCounterFields) {
    if (!fdb && f.group.starts_with("/fdb")) continue;  // no FDB, no fdb object
    j[json::json_pointer(std::string(f.group) + "/" + std::string(f.name))] = c.*f.member;
  }
  const auto& gs = *gso_ctr_;
  j["gso"] = {{"packets_in", gs.packets_in}, {"segmented", gs.packets_segmented},
              {"segments_out", gs.segments_out}, {"payload_bytes_copied", gs.payload_bytes_copied},
              {"errors", gs.errors_total()}};
  if (opts_.gro) {
    const auto& gc = cells_->engine().counters();
    json nm = json::object();
    for (std::size_t i = 0; i < gro::kGroReasonCount; ++i)
      if (gc.not_merged[i])
        nm[std::string(offload::to_string(offload::GroReason(i)))] = gc.not_merged[i];
    j["gro"] = {{"packets_in", gc.packets_in}, {"merged", gc.merged},
                {"aggregates", gc.aggregates}, {"singles", gc.singles},
                {"not_merged_by_reason", nm}};
  }
  const auto& cc = cells_->counters();
  j["gro_cells"] = {{"queued", cc.queued}, {"bypassed", cc.bypassed},
                    {"dropped_down", cc.dropped_down}, {"dropped_backlog", cc.dropped_backlog}};
  json peers = json::object();
  for (const auto& [a, p] : peers_)
    peers[a.to_string()] = {{"tx_datagrams", p.ctr.tx_datagrams}, {"tx_bytes", p.ctr.tx_bytes},
                            {"rx_datagrams", p.ctr.rx_datagrams}, {"rx_bytes", p.ctr.rx_bytes},
                            {"rx_dropped", p.ctr.rx_dropped}, {"fdb_learned", p.ctr.fdb_learned},
                            {"tx_csum_elided", p.ctr.tx_csum_elided},
                            {"tx_csum_full", p.ctr.tx_csum_full},
                            {"rx_csum_seed", p.ctr.rx_csum_seed}};
  j["peers"] = peers;
  return j;
}

}  // namespace ofld::tunnel

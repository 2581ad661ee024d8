// The packet path of the GUE / GRE / ip6gre modes (see ip_datapath.hpp).
#include "ofld/tunnel/ip_datapath.hpp"

#include <algorithm>
#include <cstring>

#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::tunnel {

namespace sg = core::skb_gso;

IpDatapath::IpDatapath(IpTunnelConfig cfg, IpDatapathOptions opts)
    : cfg_(std::move(cfg)), opts_(opts), gso_ctr_(std::make_unique<offload::GsoCounters>()) {
  if (opts_.gro) {
    gro::EngineOptions eo{};
    eo.link = gro::LinkLayer::RawIp;
    eo.gso_types = offload::virtio::kGsoTypes;  // what the TUN's virtio_net_hdr can describe
    gro_ = std::make_unique<gro::Engine>(eo);
  }
}

IpDatapath::~IpDatapath() = default;

namespace {

/// Cut datagrams (sizes[i] bytes, end to end in `bytes`) into trains of equal-size
/// datagrams (the last of a train may be shorter), ≤ kMaxTrainSegs / kMaxTrainBytes each.
void build_trains(std::span<const std::uint8_t> bytes, std::span<const std::uint32_t> sizes,
                  const IpAddr& remote, std::uint16_t port, std::vector<TxTrain>& out) {
  std::size_t off = 0;
  TxTrain* cur = nullptr;
  bool closed = true;
  for (std::uint32_t sz : sizes) {
    const bool fits = cur && !closed && sz <= cur->seg_size && cur->count < kMaxTrainSegs &&
                      cur->buf.size() + sz <= kMaxTrainBytes;
    if (!fits) {
      out.push_back(TxTrain{remote, port, std::uint16_t(sz), 0, {}, {}, {}, 0, 0, 0});
      cur = &out.back();
      closed = false;
    }
    cur->buf.insert(cur->buf.end(), bytes.begin() + off, bytes.begin() + off + sz);
    ++cur->count;
    if (sz < cur->seg_size) closed = true;
    off += sz;
  }
}

}  // namespace

/// Build the encapsulated super-packet the kernel's tunnel driver hands to GSO and segment
/// it; appends the segments (from the GUE/GRE header on) to scratch_ and their sizes.
bool IpDatapath::encap_gso(core::Packet& p, std::span<const std::uint8_t> hdr, bool rco,
                           std::vector<std::uint32_t>& sizes) {
  const bool v6 = cfg_.ipv6(), gue = cfg_.gue();
  const std::size_t iplen = v6 ? 40 : 20, l4len = gue ? 8 : 0;
  const std::size_t outer = iplen + l4len + hdr.size();
  const core::pos_t inner_nh = p.data_pos();
  const core::pos_t inner_th = p.transport_header;
  const bool inner_v4 = (p.data()[0] >> 4) == 4;
  std::uint8_t* o = p.push(outer);
  if (!o) return false;
  const std::size_t total = p.len();
  std::memset(o, 0, iplen + l4len);
  const std::uint8_t proto = gue ? wire::ipproto::kUdp : wire::ipproto::kGre;
  if (v6) {
    wire::store_be32(o, (6u << 28) | (std::uint32_t(cfg_.tos) << 20));
    wire::store_be16(o + 4, std::uint16_t(std::min<std::size_t>(total - 40, 0xFFFF)));
    o[6] = proto;
    o[7] = cfg_.ttl ? cfg_.ttl : 64;
    std::memcpy(o + 8, cfg_.local.bytes.data(), 16);
    std::memcpy(o + 24, cfg_.remote.bytes.data(), 16);
  } else {
    o[0] = 0x45;
    o[1] = cfg_.tos;
    wire::store_be16(o + 2, std::uint16_t(std::min<std::size_t>(total, 0xFFFF)));
    wire::store_be16(o + 6, 0x4000);  // DF
    o[8] = cfg_.ttl ? cfg_.ttl : 64;
    o[9] = proto;
    std::memcpy(o + 12, cfg_.local.bytes.data(), 4);
    std::memcpy(o + 16, cfg_.remote.bytes.data(), 4);
  }
  std::memcpy(o + iplen + l4len, hdr.data(), hdr.size());
  const core::pos_t nh = p.data_pos();
  p.mac_header = nh;  // raw IP frame: no link header
  p.network_header = nh;
  p.transport_header = nh + core::pos_t(iplen);
  p.protocol = v6 ? wire::ethertype::kIpv6 : wire::ethertype::kIpv4;
  p.encapsulation = true;
  p.inner_mac_header = inner_nh;
  p.inner_network_header = inner_nh;
  p.inner_transport_header = inner_th;
  p.inner_protocol = inner_v4 ? wire::ethertype::kIpv4 : wire::ethertype::kIpv6;
  core::Device dev;
  if (gue) {
    std::uint8_t* uh = o + iplen;
    wire::store_be16(uh, cfg_.port);
    wire::store_be16(uh + 2, cfg_.port);
    wire::store_be16(uh + 4, std::uint16_t(std::min<std::size_t>(total - iplen, 0xFFFF)));
    const bool csum = cfg_.tx_outer_csum();
    // udp_set_csum, GSO case (C-30): the outer field holds the pseudo-header seed.
    if (csum)
      wire::store_be16(uh + 6, core::pseudo_seed(p, nh, std::uint32_t(total - iplen), wire::ipproto::kUdp));
    p.inner_protocol_type = core::InnerProtoType::IpProto;
    p.inner_ipproto = inner_v4 ? wire::ipproto::kIpip : wire::ipproto::kIpv6;
    // The IP-in-IP bit of the OUTER family, as iptunnel_handle_offloads() adds it for an
    // ipip/sit/ip6tnl device with FOU/GUE encapsulation.
    p.gso.type |= (csum ? sg::UDP_TUNNEL_CSUM : sg::UDP_TUNNEL) | (rco ? sg::TUNNEL_REMCSUM : 0u) |
                  (v6 ? sg::IPXIP6 : sg::IPXIP4);
    // The UDP socket's kernel finishes the outer checksum (our "device" has HW_CSUM); the
    // inner TCP checksum is summed while copying (hw_enc_features has none), or left as the
    // seed with RCO (X-31: remcsum restores HW_CSUM for the inner level).
    dev.features = core::netif_f::HW_CSUM;
  } else {
    p.inner_protocol_type = core::InnerProtoType::Ether;
    p.gso.type |= cfg_.ocsum ? (sg::GRE | sg::GRE_CSUM) : sg::GRE;
    // Raw IP sockets offload nothing: inner and GRE checksums in software.
  }
  auto r = gso::gso_segment(std::move(p), dev.features, dev, gso_ctr_.get());
  if (!r.ok()) {
    ctr_.drop(IpDrop::TxGsoFailed);
    return false;
  }
  ++ctr_.tx_gso_super;
  const std::size_t strip = iplen + l4len;
  for (auto& s : r.segs) {
    if (s.len() <= strip) continue;
    const std::size_t n = s.len() - strip;
    const std::size_t at = scratch_.size();
    scratch_.resize(at + n);
    if (s.copy_bits(strip, std::span<std::uint8_t>(scratch_.data() + at, n)) != core::PacketError::Ok) {
      scratch_.resize(at);
      ctr_.drop(IpDrop::TxGsoFailed);
      continue;
    }
    sizes.push_back(std::uint32_t(n));
    if (rco) ++ctr_.tx_rco, ++ctr_.tx_csum_skipped;
    else ++ctr_.tx_csum_sw;
    if (!gue && cfg_.ocsum) ++ctr_.tx_gre_csum;
  }
  return true;
}

void IpDatapath::transmit(const wire::virtio_net::Hdr& vnet, std::span<const std::uint8_t> packet,
                          std::vector<TxTrain>& out) {
  ++ctr_.tx_packets;
  ctr_.tx_bytes += packet.size();
  if (packet.size() < 20 || ((packet[0] >> 4) != 4 && (packet[0] >> 4) != 6)) {
    ctr_.drop(IpDrop::TxNotIp);
    return;
  }
  auto tp = offload::virtio::to_packet(vnet, packet, wire::LinkType::RawIp);
  if (!tp.ok()) {
    ctr_.drop(IpDrop::TxVnetRejected);
    return;
  }
  core::Packet& p = tp.pkt;
  const std::uint8_t tos = ip_outer_tos(cfg_, packet);  // RFC 6040 §4.1
  std::uint8_t hdr[16];
  std::size_t hlen = 0;
  bool rco = false;
  const bool v4 = (packet[0] >> 4) == 4;
  if (cfg_.gue()) hlen = gue_build_header(p, cfg_, hdr, rco);
  else hlen = gre_build_header(v4 ? wire::ethertype::kIpv4 : wire::ethertype::kIpv6, cfg_, hdr);
  if (hlen == 0) {
    ctr_.drop(IpDrop::TxNotIp);
    return;
  }
  scratch_.clear();
  std::vector<std::uint32_t> sizes;
  if (p.is_gso()) {
    if (!encap_gso(p, std::span<const std::uint8_t>(hdr, hlen), rco, sizes)) return;
  } else {
    if (p.ip_summed() == core::IpSummed::Partial) {
      if (rco) {
        ++ctr_.tx_rco, ++ctr_.tx_csum_skipped;  // W-27: the field keeps its seed
      } else if (core::checksum_help(p) != core::PacketError::Ok) {
        ctr_.drop(IpDrop::TxCsumFailed);
        return;
      } else {
        ++ctr_.tx_csum_sw;
      }
    }
    scratch_.resize(hlen + p.len());
    std::memcpy(scratch_.data(), hdr, hlen);
    p.copy_bits(0, std::span<std::uint8_t>(scratch_.data() + hlen, p.len()));
    if (!cfg_.gue() && cfg_.ocsum) {
      gre_fill_checksum(scratch_);
      ++ctr_.tx_gre_csum;
    }
    sizes.push_back(std::uint32_t(scratch_.size()));
  }
  if (sizes.empty()) return;
  const std::size_t first = out.size();
  build_trains(scratch_, sizes, cfg_.remote, cfg_.port, out);
  for (std::size_t i = first; i < out.size(); ++i) {
    out[i].tos = tos;
    ctr_.tx_datagrams += out[i].count;
    ctr_.tx_dgram_bytes += out[i].buf.size();
  }
}

void IpDatapath::receive(std::span<const std::uint8_t> payload, const IpAddr& from,
                         OuterCsum outer, std::uint64_t now_ns, int outer_tos) {
  ++ctr_.rx_datagrams;
  ctr_.rx_dgram_bytes += payload.size();
  if (from != cfg_.remote) {
    ctr_.drop(IpDrop::RxWrongSource);
    return;
  }
  IpDecapResult d = cfg_.gue() ? gue_decap(payload, cfg_, outer, ctr_, outer_tos)
                                 : gre_decap(payload, cfg_, ctr_, outer_tos);
  if (!d.ok) return;
  if (gro_) gro_->receive(std::move(d.pkt), now_ns);
  else rx_nogro_.push_back(std::move(d.pkt));
}

void IpDatapath::receive_train(std::span<const std::uint8_t> buf, std::uint16_t gso_size,
                               const IpAddr& from, OuterCsum outer, std::uint64_t now_ns,
                               int outer_tos) {
  if (gso_size == 0 || gso_size >= buf.size()) {
    receive(buf, from, outer, now_ns, outer_tos);
    return;
  }
  ++ctr_.rx_gro_trains;
  for (std::size_t off = 0; off < buf.size(); off += gso_size)
    receive(buf.subspan(off, std::min<std::size_t>(gso_size, buf.size() - off)), from, outer, now_ns,
            outer_tos);
}

void IpDatapath::to_tun(core::Packet&& p, std::vector<TapFrame>& out) {
  if (p.ip_summed() == core::IpSummed::None && p.csum_valid) p.csum = core::CsumUnnecessary{};
  if (p.ip_summed() == core::IpSummed::Unnecessary || p.is_gso()) ++ctr_.rx_csum_validated;
  if (!opts_.tun_vnet_hdr && p.ip_summed() == core::IpSummed::Partial) {
    if (p.is_gso() || core::checksum_help(p) != core::PacketError::Ok) {
      ctr_.drop(IpDrop::RxTunWriteFailed);
      return;
    }
    ++ctr_.rx_csum_validated;
  }
  auto h = offload::virtio::from_packet(p, true);
  if (!h) {
    ctr_.drop(IpDrop::RxTunWriteFailed);
    return;
  }
  if (p.is_gso()) ++ctr_.rx_gro_aggregates;
  out.push_back(TapFrame{*h, p.to_bytes()});
}

void IpDatapath::rx_flush(std::uint64_t now_ns, std::vector<TapFrame>& out) {
  if (gro_) {
    gro_->poll_end(now_ns);
    ctr_.rx_gro_merged = gro_->counters().merged;
    for (auto& p : gro_->take_output()) to_tun(std::move(p), out);
  }
  for (auto& p : rx_nogro_) to_tun(std::move(p), out);
  rx_nogro_.clear();
}

}  // namespace ofld::tunnel

// Adapters from the daemon's loop to the data path of each mode; see encap_path.hpp.
#include "encap_path.hpp"

#include "ofld/gro/engine.hpp"
#include "ofld/offload/gro_context.hpp"
#include "ofld/offload/gso_context.hpp"
#include "ofld/tunnel/ip_datapath.hpp"

namespace ofld::daemon::detail {

using json = nlohmann::json;

namespace {

template <class DP>
json engine_stats(const DP& dp, json j) {
  const auto& gs = dp.gso_counters();
  j["gso"] = {{"packets_in", gs.packets_in}, {"segmented", gs.packets_segmented},
              {"segments_out", gs.segments_out}, {"payload_bytes_copied", gs.payload_bytes_copied},
              {"errors", gs.errors_total()}};
  if (const auto* e = dp.gro()) {
    const auto& gc = e->counters();
    json nm = json::object();
    for (std::size_t i = 0; i < gro::kGroReasonCount; ++i)
      if (gc.not_merged[i]) nm[std::string(offload::to_string(offload::GroReason(i)))] = gc.not_merged[i];
    j["gro"] = {{"packets_in", gc.packets_in}, {"merged", gc.merged}, {"aggregates", gc.aggregates},
                {"singles", gc.singles}, {"not_merged_by_reason", nm}};
  }
  return j;
}

template <class D, std::size_t N, class C>
json drop_stats(const C& c) {
  json drops = json::object();
  for (std::size_t i = 0; i < N; ++i)
    if (c.drops[i]) drops[std::string(tunnel::to_string(D(i)))] = c.drops[i];
  return drops;
}

class VxlanPath final : public EncapPath {
 public:
  VxlanPath(const DaemonConfig& cfg, const EncapPathOptions& o)
      : dp_(cfg.vxlan, [&] {
          tunnel::DatapathOptions d;
          d.gro = o.gro;
          d.tap_vnet_hdr = o.dev_vnet_hdr;
          d.tap_mtu = o.dev_mtu;
          d.tap_frame_packets = true;  // the device writes the packet's pieces, no flattening
          d.own_mac = o.own_mac;
          d.fdb = o.fdb;
          d.tx_pieces = o.tx_pieces;
          return d;
        }()),
        // On IPv6 without udp6zerocsumrx the kernel drops zero UDP checksums, so every datagram
        // had one; otherwise no socket interface reports it (README "Tunnel").
        outer_(cfg.vxlan.ipv6() && !cfg.vxlan.udp6_zero_csum_rx ? tunnel::OuterCsum::Present
                                                                : tunnel::OuterCsum::Unknown) {}
  void transmit(const wire::virtio_net::Hdr& h, std::span<const std::uint8_t> f, std::uint64_t now,
                std::vector<tunnel::TxTrain>& out) override {
    dp_.transmit(h, f, now, out);
  }
  void receive(const core::BufferRef& owner, std::size_t off, std::size_t len, std::uint16_t gso,
               const tunnel::IpAddr& from, int tos, std::uint64_t now) override {
    dp_.receive_train(owner, off, len, gso, from, outer_, now, tos);
  }
  void rx_flush(std::uint64_t now, std::vector<tunnel::TapFrame>& out) override { dp_.rx_flush(now, out); }
  void recycle(std::vector<tunnel::TxTrain>& sent) override { dp_.recycle(sent); }
  void tick(std::uint64_t now) override { dp_.tick(now); }
  void count_send(std::uint32_t failed, bool train) override {
    auto& c = dp_.counters();
    c.drops[std::size_t(tunnel::Drop::TxSendFailed)] += failed;
    if (train) ++c.tx_trains;
  }
  void count_written(std::uint64_t frames, std::uint64_t bytes, std::uint64_t failed) override {
    auto& c = dp_.counters();
    c.rx_frames += frames;
    c.rx_bytes += bytes;
    c.drops[std::size_t(tunnel::Drop::RxTapWriteFailed)] += failed;
  }
  json stats() const override {
    const auto& c = dp_.counters();
    return engine_stats(dp_, json{
        {"tx", {{"frames", c.tx_frames}, {"bytes", c.tx_bytes}, {"datagrams", c.tx_datagrams},
                {"datagram_bytes", c.tx_dgram_bytes}, {"udp_segment_trains", c.tx_trains},
                {"gso_super_packets", c.tx_gso_super}, {"rco", c.tx_rco},
                {"csum_sw", c.tx_csum_sw}, {"csum_skipped", c.tx_csum_skipped},
                {"flooded", c.tx_flooded}}},
        {"rx", {{"datagrams", c.rx_datagrams}, {"datagram_bytes", c.rx_dgram_bytes},
                {"udp_gro_trains", c.rx_gro_trains}, {"rco", c.rx_rco},
                {"rco_no_outer_csum", c.rx_rco_nocsum}, {"csum_validated", c.rx_csum_validated},
                {"csum_skipped", c.rx_csum_skipped}, {"csum_partial_seed", c.rx_csum_partial_seed},
                {"csum_seed_no_outer_csum", c.rx_csum_seed_nocsum}, {"ecn_ce", c.rx_ecn_ce},
                {"ecn_bogus", c.rx_ecn_bogus}, {"frames", c.rx_frames}, {"bytes", c.rx_bytes},
                {"gro_merged", c.rx_gro_merged}, {"gro_aggregates", c.rx_gro_aggregates}}},
        {"fdb", {{"learned", c.fdb_learned}, {"aged", c.fdb_aged}}},
        {"drops", drop_stats<tunnel::Drop, tunnel::kDropCount>(c)},
        {"drops_total", c.drops_total()}});
  }

 private:
  tunnel::Datapath dp_;
  tunnel::OuterCsum outer_;
};

class IpPath final : public EncapPath {
 public:
  IpPath(const DaemonConfig& cfg, const EncapPathOptions& o)
      : dp_(cfg.ip, tunnel::IpDatapathOptions{o.gro, o.dev_vnet_hdr}) {}
  void transmit(const wire::virtio_net::Hdr& h, std::span<const std::uint8_t> f, std::uint64_t,
                std::vector<tunnel::TxTrain>& out) override {
    dp_.transmit(h, f, out);
  }
  void receive(const core::BufferRef& owner, std::size_t off, std::size_t len, std::uint16_t gso,
               const tunnel::IpAddr& from, int tos, std::uint64_t now) override {
    dp_.receive_train(std::span<const std::uint8_t>(owner->bytes).subspan(off, len), gso, from,
                      tunnel::OuterCsum::Unknown, now, tos);
  }
  void rx_flush(std::uint64_t now, std::vector<tunnel::TapFrame>& out) override { dp_.rx_flush(now, out); }
  void recycle(std::vector<tunnel::TxTrain>& sent) override { sent.clear(); }
  void tick(std::uint64_t) override {}
  void count_send(std::uint32_t failed, bool train) override {
    auto& c = dp_.counters();
    c.drops[std::size_t(tunnel::IpDrop::TxSendFailed)] += failed;
    if (train) ++c.tx_trains;
  }
  void count_written(std::uint64_t frames, std::uint64_t bytes, std::uint64_t failed) override {
    auto& c = dp_.counters();
    c.rx_packets += frames;
    c.rx_bytes += bytes;
    c.drops[std::size_t(tunnel::IpDrop::RxTunWriteFailed)] += failed;
  }
  json stats() const override {
    const auto& c = dp_.counters();
    // Same layout as VXLAN's where the meaning is the same.
    return engine_stats(dp_, json{
        {"tx", {{"frames", c.tx_packets}, {"bytes", c.tx_bytes}, {"datagrams", c.tx_datagrams},
                {"datagram_bytes", c.tx_dgram_bytes}, {"udp_segment_trains", c.tx_trains},
                {"gso_super_packets", c.tx_gso_super}, {"rco", c.tx_rco},
                {"csum_sw", c.tx_csum_sw}, {"csum_skipped", c.tx_csum_skipped},
                {"gre_csum", c.tx_gre_csum}}},
        {"rx", {{"datagrams", c.rx_datagrams}, {"datagram_bytes", c.rx_dgram_bytes},
                {"udp_gro_trains", c.rx_gro_trains}, {"rco", c.rx_rco},
                {"rco_no_outer_csum", c.rx_rco_nocsum}, {"gre_csum_ok", c.rx_gre_csum_ok},
                {"csum_validated", c.rx_csum_validated}, {"csum_skipped", c.rx_csum_skipped},
                {"ecn_ce", c.rx_ecn_ce}, {"ecn_bogus", c.rx_ecn_bogus}, {"frames", c.rx_packets},
                {"bytes", c.rx_bytes}, {"gro_merged", c.rx_gro_merged},
                {"gro_aggregates", c.rx_gro_aggregates}}},
        {"drops", drop_stats<tunnel::IpDrop, tunnel::kIpDropCount>(c)},
        {"drops_total", c.drops_total()}});
  }

 private:
  tunnel::IpDatapath dp_;
};

}  // namespace

std::unique_ptr<EncapPath> make_encap_path(const DaemonConfig& cfg, const EncapPathOptions& o) {
  if (cfg.mode == TunnelMode::Vxlan) return std::make_unique<VxlanPath>(cfg, o);
  return std::make_unique<IpPath>(cfg, o);
}

}  // namespace ofld::daemon::detail

// `ofld gro` (GRO over a capture). `ofld conformance gro` is lab code (src/lab/gro_conformance.cpp).
#include "ofld/tools/gro_tool.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <span>

#include <stdexcept>

#include "ofld/io/pcap.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/tools/gso_tool.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"

namespace ofld::tools {

using offload::GroReason;

nlohmann::json to_json(const gro::Counters& c) {
  nlohmann::json j;
  j["packets_in"] = c.packets_in;
  j["merged"] = c.merged;
  j["held"] = c.held;
  j["delivered_now"] = c.delivered_now;
  j["aggregates"] = c.aggregates;
  j["singles"] = c.singles;
  j["segments_out"] = c.segments_out;
  nlohmann::json nm = nlohmann::json::object(), cp = nlohmann::json::object();
  for (std::size_t i = 1; i < offload::kGroReasonCount; ++i) {
    const auto name = std::string(offload::to_string(GroReason(i)));
    if (c.not_merged[i]) nm[name] = c.not_merged[i];
    if (c.completed[i]) cp[name] = c.completed[i];
  }
  j["not_merged"] = nm;
  j["completed"] = cp;
  return j;
}

namespace {

// GRO runs on Ethernet frames (the engine is the kernel's dev_gro_receive after eth_type_trans).
// Frames of the other link types the reader accepts (Linux cooked SLL/SLL2, raw IP) are given
// a stand-in Ethernet header for the engine and get their own link header back on output:
// every distinct link header gets a number, carried in the stand-in's destination MAC, so
// frames merge only when their link headers are identical (as GRO compares MAC headers, G-2)
// and every aggregate is written with the link header of its frames.
class LinkAdapter {
 public:
  explicit LinkAdapter(io::CaptureLink link) : link_(link) {}

  /// The Ethernet frame for the engine, or nullopt when the frame has no ethertype (passed
  /// through as it is).
  std::optional<std::vector<std::uint8_t>> to_ethernet(std::span<const std::uint8_t> f) {
    std::size_t hl = 0;
    std::uint16_t proto = 0;
    switch (link_) {
      case io::CaptureLink::Ethernet: return std::vector<std::uint8_t>(f.begin(), f.end());
      case io::CaptureLink::LinuxSll:  // pkttype, hatype, halen, addr[8], protocol
        hl = wire::sll::kHdrLen;
        if (f.size() < hl) return std::nullopt;
        proto = wire::load_be16(f.data() + wire::sll::kProtocolOffset);
        break;
      case io::CaptureLink::LinuxSll2:  // protocol, reserved, ifindex, hatype, pkttype, halen, addr[8]
        hl = wire::sll2::kHdrLen;
        if (f.size() < hl) return std::nullopt;
        proto = wire::load_be16(f.data() + wire::sll2::kProtocolOffset);
        break;
      case io::CaptureLink::RawIp:
      case io::CaptureLink::Ipv4:
      case io::CaptureLink::Ipv6:
        if (f.empty()) return std::nullopt;
        proto = wire::ip_version(f) == 4   ? wire::ethertype::kIpv4
                : wire::ip_version(f) == 6 ? wire::ethertype::kIpv6
                                           : 0;
        break;
    }
    if (proto < wire::ethertype::kMin) return std::nullopt;  // SLL: not an ethertype (802.2, CAN, ...)
    const std::string key(f.begin(), f.begin() + long(hl));
    auto it = index_.find(key);
    if (it == index_.end()) {
      if (headers_.size() >= (1u << 24)) return std::nullopt;
      it = index_.emplace(key, std::uint32_t(headers_.size())).first;
      headers_.push_back(key);
    }
    const std::uint32_t i = it->second;
    std::vector<std::uint8_t> e = {0x02, 0x00, 0x00, std::uint8_t(i >> 16), std::uint8_t(i >> 8),
                                   std::uint8_t(i), 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
                                   std::uint8_t(proto >> 8), std::uint8_t(proto)};
    e.insert(e.end(), f.begin() + long(hl), f.end());
    return e;
  }

  /// The engine's output frame with the capture's own link header in place of the stand-in.
  std::vector<std::uint8_t> from_ethernet(std::vector<std::uint8_t> e) const {
    if (link_ == io::CaptureLink::Ethernet || e.size() < wire::eth::kHdrLen) return e;
    const std::uint32_t i = std::uint32_t(e[3]) << 16 | std::uint32_t(e[4]) << 8 | e[5];
    const std::string& h = headers_.at(i);
    std::vector<std::uint8_t> f(h.begin(), h.end());
    f.insert(f.end(), e.begin() + long(wire::eth::kHdrLen), e.end());
    return f;
  }

 private:
  io::CaptureLink link_;
  std::map<std::string, std::uint32_t> index_;
  std::vector<std::string> headers_;
};

}  // namespace

GroPcapResult run_gro_pcap(const std::string& in, const std::string& out, const GroPcapOptions& o) {
  io::refuse_same_file(in, out);
  io::PcapReader rd(in);
  // BIG TCP aggregates may be larger than the default snap length (GRO_MAX_SIZE 524280)
  const std::uint32_t biggest = std::max(o.config.gro_max_size, o.config.gro_ipv4_max_size);
  io::PcapWriter wr(out, rd.link(), std::max(io::PcapWriter::kDefaultSnaplen, biggest + 256));
  GroPcapResult res;
  LinkAdapter adapt(rd.link());
  gro::EngineOptions eo;
  eo.config = o.config;
  if (!eo.config.flow_hash_key) eo.config.flow_hash_key = kGroPcapFlowHashKey;  // reproducible
  eo.batch = o.batch ? o.batch : 64;
  eo.flush_timeout_ns = o.flush_timeout_ns;
  gro::Engine engine(eo);
  // Every output frame carries the capture time of its first frame (skb->tstamp: GRO keeps the
  // held packet's, Packet::tstamp); frames passed through keep their own record.
  std::uint64_t now = 0;
  io::PcapRecord rec;
  auto drain = [&] {
    for (auto& p : engine.output()) {
      if (p.is_gso()) {
        if (o.keep_partial)
          res.partial_kept++;
        else
          gro::finish_checksums(p);
      }
      io::PcapRecord r;
      r.ts_sec = std::int64_t(p.tstamp / 1000000000ull);
      r.ts_nsec = std::uint32_t(p.tstamp % 1000000000ull);
      r.data = adapt.from_ethernet(p.to_bytes());
      r.caplen = r.len = std::uint32_t(r.data.size());
      wr.write(r);
      res.frames_out++;
    }
    engine.output().clear();
  };
  while (rd.next(rec)) {
    res.frames_in++;
    now = std::uint64_t(rec.ts_sec) * 1000000000ull + rec.ts_nsec;
    auto frame = rec.truncated() ? std::nullopt : adapt.to_ethernet(rec.bytes());
    if (!frame) {
      // Truncated frames / frames without an ethertype: passed through in order (after held
      // flows of the same batch would reorder them, so flush first).
      engine.poll_end(now);
      engine.flush_all();
      drain();
      res.non_ethernet += rec.truncated() ? 0 : 1;
      wr.write(rec);
      res.frames_out++;
      continue;
    }
    engine.tick(now);
    core::Packet pkt = core::Packet::from_bytes(*frame);
    pkt.tstamp = now;
    engine.receive(std::move(pkt), now);
    drain();
  }
  engine.flush_all();
  drain();
  res.counters = engine.counters();
  res.cut_short = rd.cut_short();
  return res;
}

void apply_gro_features(const std::string& list, offload::GroConfig& c) {
  auto fp = core::parse_features(expand_ethtool_aliases(list));
  if (!fp.ok()) throw std::invalid_argument("--features: " + fp.error);
  c.gro = fp.features.has(core::netif_f::GRO);
  c.udp_gro_fwd = fp.features.has(core::netif_f::GRO_UDP_FWD);
  c.gro_fraglist = fp.features.has(core::netif_f::GRO_FRAGLIST);
}

std::vector<std::string> gro_feature_names(const offload::GroConfig& c) {
  std::vector<std::string> v;
  auto add = [&](bool on, core::Features f) {
    for (unsigned b = 0; b < 64; ++b)
      if (on && (f.bits >> b & 1)) v.emplace_back(core::feature_name(b));
  };
  add(c.gro, core::netif_f::GRO);
  add(c.gro_fraglist, core::netif_f::GRO_FRAGLIST);
  add(c.udp_gro_fwd, core::netif_f::GRO_UDP_FWD);
  return v;
}

}  // namespace ofld::tools

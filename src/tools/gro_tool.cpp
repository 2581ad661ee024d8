// `ofld gro` (GRO over a capture) and `ofld conformance gro` (ofld vs the running kernel).
#include "ofld/tools/gro_tool.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <span>

#include "ofld/io/pcap.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/tools/kernel_oracle.hpp"
#include "ofld/tools/kernel_oracle_vxlan_gro.hpp"

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
        hl = 16;
        if (f.size() < hl) return std::nullopt;
        proto = std::uint16_t(f[14] << 8 | f[15]);
        break;
      case io::CaptureLink::LinuxSll2:  // protocol, reserved, ifindex, hatype, pkttype, halen, addr[8]
        hl = 20;
        if (f.size() < hl) return std::nullopt;
        proto = std::uint16_t(f[0] << 8 | f[1]);
        break;
      case io::CaptureLink::RawIp:
      case io::CaptureLink::Ipv4:
      case io::CaptureLink::Ipv6:
        if (f.empty()) return std::nullopt;
        proto = (f[0] >> 4) == 4 ? 0x0800 : (f[0] >> 4) == 6 ? 0x86DD : 0;
        break;
    }
    if (proto < 0x0600) return std::nullopt;  // SLL: not an ethertype (802.2, CAN, ...)
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
    if (link_ == io::CaptureLink::Ethernet || e.size() < 14) return e;
    const std::uint32_t i = std::uint32_t(e[3]) << 16 | std::uint32_t(e[4]) << 8 | e[5];
    const std::string& h = headers_.at(i);
    std::vector<std::uint8_t> f(h.begin(), h.end());
    f.insert(f.end(), e.begin() + 14, e.end());
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
  io::PcapWriter wr(out, rd.link());
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

// ---- conformance ------------------------------------------------------------------------------

std::vector<GroCase> gro_cases_from_pcaps(const std::vector<std::string>& files) {
  std::vector<GroCase> v;
  for (const auto& f : files) {
    auto pf = io::read_pcap(f);
    GroCase c;
    c.name = f;
    if (pf.link == io::CaptureLink::Ethernet)
      for (auto& r : pf.records) c.frames.push_back(std::move(r.data));
    v.push_back(std::move(c));
  }
  return v;
}

namespace {

struct OutFrame {
  std::vector<std::uint8_t> data;
  io::VnetHdr vnet;
};

// Flow key for per-flow comparison: bytes 12..(l4+4) minus mutable fields is overkill; the
// addresses + ports at fixed offsets of the (outer) IP header suffice for our cases.
std::string flow_key(const std::vector<std::uint8_t>& f) {
  if (f.size() < 14) return {};
  const std::uint16_t type = std::uint16_t(f[12] << 8 | f[13]);
  if (type == 0x0800 && f.size() >= 34 + 4) {
    const std::size_t l4 = 14 + std::size_t(f[14] & 0x0F) * 4;
    std::string k(f.begin() + 26, f.begin() + 34);
    if (f.size() >= l4 + 4) k.append(f.begin() + long(l4), f.begin() + long(l4) + 4);
    return k;
  }
  if (type == 0x86DD && f.size() >= 54 + 4) return std::string(f.begin() + 22, f.begin() + 58);
  return std::string(f.begin(), f.begin() + 14);
}

GroFrameCheck compare(const OutFrame& ours, const OutFrame& k) {
  GroFrameCheck c;
  std::string d;
  if (ours.data.size() != k.data.size()) {
    d += "length " + std::to_string(ours.data.size()) + " vs kernel " + std::to_string(k.data.size()) + "; ";
  } else {
    for (std::size_t i = 0; i < ours.data.size(); ++i)
      if (ours.data[i] != k.data[i]) {
        d += "byte " + std::to_string(i) + " differs; ";
        break;
      }
  }
  if (ours.vnet.gso_type != k.vnet.gso_type)
    d += "gso_type " + std::to_string(ours.vnet.gso_type) + " vs " + std::to_string(k.vnet.gso_type) + "; ";
  if (ours.vnet.gso_size != k.vnet.gso_size)
    d += "gso_size " + std::to_string(ours.vnet.gso_size) + " vs " + std::to_string(k.vnet.gso_size) + "; ";
  if ((ours.vnet.flags & 1) != (k.vnet.flags & 1))
    d += "NEEDS_CSUM " + std::to_string(ours.vnet.flags & 1) + " vs " + std::to_string(k.vnet.flags & 1) + "; ";
  if ((ours.vnet.flags & 1) && (ours.vnet.csum_start != k.vnet.csum_start ||
                                 ours.vnet.csum_offset != k.vnet.csum_offset))
    d += "csum_start/offset differ; ";
  c.agree = d.empty();
  c.detail = d;
  return c;
}

std::vector<OutFrame> ours_for(const GroCase& gc) {
  std::vector<core::Packet> pkts;
  if (gc.path == GroPath::VxlanRx) {
    pkts = vxlan_rx_gro(gc.frames);
  } else {
    gro::EngineOptions eo;
    eo.batch = 64;  // K-3: the kernel cuts bursts every 64 frames
    eo.config.flow_hash_key = kGroPcapFlowHashKey;
    gro::Engine e(eo);
    for (const auto& f : gc.frames) e.receive(core::Packet::from_bytes(f));
    e.flush_all();
    pkts = e.take_output();
  }
  std::vector<OutFrame> v;
  for (auto& p : pkts) {
    OutFrame o;
    o.data = p.to_bytes();
    if (auto h = offload::virtio::from_packet(p, true)) {
      o.vnet.flags = h->flags;
      o.vnet.gso_type = h->gso_type;
      o.vnet.hdr_len = h->hdr_len;
      o.vnet.gso_size = h->gso_size;
      o.vnet.csum_start = h->csum_start;
      o.vnet.csum_offset = h->csum_offset;
    }
    v.push_back(std::move(o));
  }
  return v;
}

}  // namespace

GroConformanceReport run_gro_conformance(const std::vector<GroCase>& cases) {
  GroConformanceReport rep;
  // One kernel set-up per path, created when the first case needs it.
  std::optional<Result<KernelGro>> kg;
  std::optional<Result<KernelVxlanGro>> kv;
  for (const auto& gc : cases) {
    GroCaseReport cr;
    cr.name = gc.name;
    auto skip = [&](std::string why) {
      cr.skipped = true;
      cr.message = std::move(why);
      rep.cases.push_back(cr);
      rep.skipped++;
    };
    if (gc.path == GroPath::VxlanRx ? (kv ? !*kv : false) : (kg ? !*kg : false)) {
      skip(gc.path == GroPath::VxlanRx ? kv->describe() : kg->describe());
      continue;
    }
    if (gc.frames.empty()) {
      skip("no Ethernet frames");
      continue;
    }
    if (gc.path == GroPath::VxlanRx && !kv) kv.emplace(KernelVxlanGro::create());
    if (gc.path == GroPath::Veth && !kg) kg.emplace(KernelGro::create());
    if (gc.path == GroPath::VxlanRx ? !*kv : !*kg) {
      skip(gc.path == GroPath::VxlanRx ? kv->describe() : kg->describe());
      continue;
    }
    auto kr = gc.path == GroPath::VxlanRx ? kv->value().receive(gc.frames) : kg->value().receive(gc.frames);
    if (!kr) {
      cr.skipped = kr.is_skipped();
      cr.message = kr.describe();
      rep.cases.push_back(cr);
      (cr.skipped ? rep.skipped : rep.failed)++;
      continue;
    }
    std::vector<OutFrame> kout;
    for (auto& f : kr.value()) kout.push_back({f.data, f.vnet});
    auto ours = ours_for(gc);
    cr.ours = ours.size();
    cr.kernel = kout.size();
    const std::size_t n = std::max(ours.size(), kout.size());
    bool all = ours.size() == kout.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (i < ours.size() && i < kout.size()) {
        cr.frames.push_back(compare(ours[i], kout[i]));
        all = all && cr.frames.back().agree;
      } else {
        cr.frames.push_back({false, i < ours.size() ? "only in ofld" : "only in kernel"});
      }
    }
    if (!all && ours.size() == kout.size()) {
      // Same frames per flow, different interleaving (flush order across buckets, G-9)?
      std::map<std::string, std::vector<const OutFrame*>> a, b;
      for (auto& f : ours) a[flow_key(f.data)].push_back(&f);
      for (auto& f : kout) b[flow_key(f.data)].push_back(&f);
      bool same = a.size() == b.size();
      for (auto& [k, va] : a) {
        auto it = b.find(k);
        if (!same || it == b.end() || it->second.size() != va.size()) { same = false; break; }
        for (std::size_t i = 0; i < va.size() && same; ++i) same = compare(*va[i], *it->second[i]).agree;
      }
      if (same) {
        cr.order_differs = true;
        all = true;
      }
    }
    cr.pass = all;
    (all ? rep.passed : rep.failed)++;
    rep.cases.push_back(std::move(cr));
  }
  return rep;
}

nlohmann::json to_json(const GroConformanceReport& r) {
  nlohmann::json j;
  j["passed"] = r.passed;
  j["failed"] = r.failed;
  j["skipped"] = r.skipped;
  for (const auto& c : r.cases) {
    nlohmann::json jc{{"name", c.name}, {"pass", c.pass}, {"skipped", c.skipped},
                      {"ours", c.ours}, {"kernel", c.kernel}, {"order_differs", c.order_differs}};
    if (!c.message.empty()) jc["message"] = c.message;
    for (std::size_t i = 0; i < c.frames.size(); ++i)
      if (!c.frames[i].agree) jc["differences"].push_back({{"frame", i}, {"detail", c.frames[i].detail}});
    j["cases"].push_back(jc);
  }
  return j;
}

}  // namespace ofld::tools

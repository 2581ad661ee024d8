// `ofld conformance gro`: ofld vs the running kernel (KernelGro, KernelVxlanGro), frame by frame.
#include "ofld/lab/gro_conformance.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "ofld/gro/engine.hpp"
#include "ofld/io/pcap.hpp"
#include "ofld/lab/kernel_oracle.hpp"
#include "ofld/tools/gro_tool.hpp"
#include "ofld/lab/kernel_oracle_vxlan_gro.hpp"
#include "ofld/offload/virtio_net.hpp"

namespace ofld::lab {

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
    eo.config.flow_hash_key = tools::kGroPcapFlowHashKey;
    if (gc.gro_max_size) eo.config.gro_max_size = gc.gro_max_size;
    if (gc.gro_ipv4_max_size) eo.config.gro_ipv4_max_size = gc.gro_ipv4_max_size;
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
  // One veth per pair of GRO size limits (BIG TCP cases raise them).
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::optional<Result<KernelGro>>> kgs;
  std::optional<Result<KernelVxlanGro>> kv;
  for (const auto& gc : cases) {
    auto& kg = kgs[{gc.gro_max_size, gc.gro_ipv4_max_size}];
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
    if (gc.path == GroPath::Veth && !kg) {
      KernelGro::Options ko;
      ko.sizes.gro_max_size = gc.gro_max_size;
      ko.sizes.gro_ipv4_max_size = gc.gro_ipv4_max_size;
      kg.emplace(KernelGro::create(ko));
    }
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

}  // namespace ofld::lab

// `ofld conformance gso`: built-in GSO cases and cases from captures, replayed through the
// running kernel (KernelGso, spec K-3b) and through ofld's tx_prepare, frame by frame.
#include "ofld/lab/gso_conformance.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ofld/core/csum.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/io/pcap.hpp"
#include "ofld/lab/kernel_oracle.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::lab {

using Bytes = std::vector<std::uint8_t>;

namespace {

void put16(Bytes& b, std::size_t o, std::uint16_t v) { wire::store_be16(&b[o], v); }

// Ethernet + IP + TCP/UDP super-packet with the pseudo-header seed in the L4 field (as a
// sender with NEEDS_CSUM writes it, C-12).
Bytes super_frame(bool v6, bool tcp, std::size_t payload, std::uint8_t flags,
                  const Bytes& tcp_opts = {}, const Bytes& hbh = {}) {
  const std::size_t iphl = (v6 ? 40 : 20) + hbh.size();
  const std::size_t l4hl = tcp ? 20 + tcp_opts.size() : 8;
  Bytes f(14 + iphl + l4hl + payload);
  const std::uint8_t dst[6] = {0x02, 0x6f, 0x66, 0x6c, 0x09, 0x02};
  const std::uint8_t src[6] = {0x02, 0x6f, 0x66, 0x6c, 0x09, 0x01};
  std::copy(dst, dst + 6, f.begin());
  std::copy(src, src + 6, f.begin() + 6);
  put16(f, 12, v6 ? 0x86DD : 0x0800);
  const std::size_t ip = 14, l4 = 14 + iphl;
  const std::uint8_t proto = tcp ? 6 : 17;
  if (v6) {
    f[ip] = 0x60;
    put16(f, ip + 4, std::uint16_t(hbh.size() + l4hl + payload));
    f[ip + 6] = hbh.empty() ? proto : 0;
    f[ip + 7] = 64;
    f[ip + 8] = 0xfd, f[ip + 23] = 1, f[ip + 24] = 0xfd, f[ip + 39] = 2;
    std::copy(hbh.begin(), hbh.end(), f.begin() + 54);
  } else {
    f[ip] = 0x45;
    put16(f, ip + 2, std::uint16_t(20 + l4hl + payload));
    put16(f, ip + 4, 0x1234);
    f[ip + 6] = 0x40;
    f[ip + 8] = 64;
    f[ip + 9] = proto;
    f[ip + 12] = 10, f[ip + 15] = 1, f[ip + 16] = 10, f[ip + 19] = 2;
    put16(f, ip + 10, csum::ip_compute_csum(&f[ip], 20));
  }
  put16(f, l4, 40000);
  put16(f, l4 + 2, 5201);
  if (tcp) {
    wire::store_be32(&f[l4 + 4], 0xfffff000u);  // sequence wraps inside the train
    wire::store_be32(&f[l4 + 8], 0x01020304u);
    f[l4 + 12] = std::uint8_t((l4hl / 4) << 4);
    f[l4 + 13] = flags;
    put16(f, l4 + 14, 1024);
    std::copy(tcp_opts.begin(), tcp_opts.end(), f.begin() + l4 + 20);
  } else {
    put16(f, l4 + 4, std::uint16_t(8 + payload));
  }
  for (std::size_t i = 0; i < payload; ++i) f[l4 + l4hl + i] = std::uint8_t(i * 13 + (i >> 7));
  const std::uint32_t l4len = std::uint32_t(l4hl + payload);
  const std::uint16_t seed =
      v6 ? csum::csum_fold16(csum::csum_ipv6_nofold(&f[ip + 8], &f[ip + 24], l4len, proto))
         : csum::csum_fold16(csum::csum_tcpudp_nofold(&f[ip + 12], &f[ip + 16], l4len, proto));
  put16(f, l4 + (tcp ? 16 : 6), seed);
  return f;
}

io::VnetHdr vnet_for(bool v6, bool tcp, std::size_t l4off, std::uint16_t mss, bool ecn,
                     bool needs_csum = true) {
  io::VnetHdr h;
  h.flags = needs_csum ? io::VnetHdr::kNeedsCsum : 0;
  h.gso_type = tcp ? (v6 ? io::VnetHdr::kGsoTcpv6 : io::VnetHdr::kGsoTcpv4) : io::VnetHdr::kGsoUdpL4;
  if (ecn) h.gso_type |= io::VnetHdr::kGsoEcn;
  h.gso_size = mss;
  h.csum_start = std::uint16_t(l4off);
  h.csum_offset = tcp ? 16 : 6;
  h.hdr_len = std::uint16_t(l4off + (tcp ? 20 : 8));
  return h;
}

}  // namespace

std::vector<GsoCase> builtin_gso_cases() {
  std::vector<GsoCase> v;
  const std::uint8_t ack = 0x10, psh = 0x08, fin = 0x01, cwr = 0x80;
  v.push_back({"tcp4", vnet_for(false, true, 34, 1448, false), super_frame(false, true, 5000, ack | psh)});
  v.push_back({"tcp6", vnet_for(true, true, 54, 1428, false), super_frame(true, true, 5000, ack | psh)});
  v.push_back({"tcp4-cwr-psh-fin", vnet_for(false, true, 34, 1000, true),
               super_frame(false, true, 3500, ack | psh | fin | cwr)});
  v.push_back({"tcp6-cwr-psh-fin", vnet_for(true, true, 54, 1000, true),
               super_frame(true, true, 3500, ack | psh | fin | cwr)});
  const Bytes ts = {1, 1, 8, 10, 0, 0, 0x12, 0x34, 0, 0, 0x56, 0x78};
  v.push_back({"tcp4-options", vnet_for(false, true, 34, 1436, false),
               super_frame(false, true, 6000, ack, ts)});
  v.push_back({"tcp4-no-needs-csum", vnet_for(false, true, 34, 1448, false, false),
               super_frame(false, true, 4000, ack)});
  v.push_back({"tcp4-exact-multiple", vnet_for(false, true, 34, 1000, false),
               super_frame(false, true, 4000, ack | psh)});
  v.push_back({"tcp4-1byte-tail", vnet_for(false, true, 34, 1000, false),
               super_frame(false, true, 4001, ack | psh)});
  v.push_back({"uso4-exact-multiple", vnet_for(false, false, 34, 1000, false),
               super_frame(false, false, 4000, 0)});
  v.push_back({"uso4-1byte-tail", vnet_for(false, false, 34, 1000, false),
               super_frame(false, false, 4001, 0)});
  v.push_back({"uso6-exact-multiple", vnet_for(true, false, 54, 1000, false),
               super_frame(true, false, 3000, 0)});
  v.push_back({"uso6-1byte-tail", vnet_for(true, false, 54, 1000, false),
               super_frame(true, false, 3001, 0)});
  const Bytes hbh = {6, 0, 1, 4, 0, 0, 0, 0};
  v.push_back({"tcp6-hop-by-hop", vnet_for(true, true, 62, 1400, false),
               super_frame(true, true, 4000, ack, {}, hbh)});
  return v;
}

std::vector<GsoCase> gso_cases_from_pcap(const std::string& path, std::uint16_t mss,
                                         bool csum_partial) {
  std::vector<GsoCase> v;
  io::PcapReader rd(path);
  if (rd.link() != io::CaptureLink::Ethernet) return v;  // TAP takes Ethernet frames
  io::PcapRecord rec;
  gso::PrepareOptions po;
  po.gso_size = mss;
  po.input = csum_partial ? gso::InputCsum::Seeds : gso::InputCsum::Complete;
  std::size_t n = 0;
  while (rd.next(rec)) {
    ++n;
    if (rec.truncated()) continue;
    auto l = wire::parse_frame(rec.bytes(), wire::LinkType::Ethernet, {});
    if (!l || l.value().encapsulation) continue;
    auto pr = gso::prepare_frame(rec.bytes(), l.value(), po);
    if (pr.status != gso::PrepareStatus::Gso) continue;
    auto h = offload::virtio::from_packet(pr.pkt, false);
    if (!h) continue;
    io::VnetHdr vh;
    vh.flags = h->flags;
    vh.gso_type = h->gso_type;
    vh.hdr_len = std::uint16_t(l.value().payload_offset());
    vh.gso_size = h->gso_size;
    vh.csum_start = h->csum_start;
    vh.csum_offset = h->csum_offset;
    v.push_back({fmt::format("{}#{}", path.substr(path.find_last_of('/') + 1), n), vh,
                 pr.pkt.to_bytes()});
  }
  if (!rd.cut_short().empty()) throw io::PcapError("capture '" + path + "': " + rd.cut_short());
  return v;
}

OursResult gso_ours(const GsoCase& c, core::Features sink) {
  OursResult r;
  auto tp = offload::virtio::to_packet(c.vnet, c.frame);
  if (!tp.ok()) {
    r.error = std::string("virtio: ") + std::string(offload::virtio::to_string(tp.reason));
    return r;
  }
  auto dev = core::Device::with_features(sink);
  gso::TxResult tx = gso::tx_prepare(std::move(tp.pkt), dev);
  if (tx.dropped()) {
    r.error = std::string("gso: ") + std::string(offload::to_string(tx.gso_reason));
    return r;
  }
  for (auto& p : tx.out) r.frames.push_back(p.to_bytes());
  return r;
}

bool GsoConformance::all_agree() const noexcept {
  if (skipped || cases.empty()) return false;
  for (auto& c : cases)
    if (!c.agree) return false;
  return true;
}

GsoConformance run_gso_conformance(const std::vector<GsoCase>& cases) {
  GsoConformance out;
  auto k = KernelGso::create();
  if (!k.ok()) {
    out.skipped = k.is_skipped();
    out.message = k.describe();
    return out;
  }
  // The sink TAP has no TUNSETOFFLOAD: tun's default SG|FRAGLIST, no checksum offload.
  const core::Features sink = core::netif_f::SG | core::netif_f::FRAGLIST;
  for (const auto& c : cases) {
    GsoCaseResult cr;
    cr.name = c.name;
    auto kr = k->segment(c.vnet, c.frame);
    OursResult ours = gso_ours(c, sink);
    cr.our_frames = ours.frames.size();
    if (!kr.ok()) {
      cr.agree = !ours.error.empty();  // both refuse
      cr.detail = "kernel " + kr.describe() + "; ofld " + (ours.error.empty() ? "accepted" : ours.error);
      out.cases.push_back(cr);
      continue;
    }
    cr.kernel_frames = kr->size();
    if (!ours.error.empty()) {
      cr.detail = "ofld refused: " + ours.error;
      out.cases.push_back(cr);
      continue;
    }
    cr.agree = kr->size() == ours.frames.size();
    if (!cr.agree) cr.detail = fmt::format("frame count kernel {} ofld {}", kr->size(), ours.frames.size());
    for (std::size_t i = 0; cr.agree && i < kr->size(); ++i) {
      const Bytes& a = (*kr)[i].data;
      const Bytes& b = ours.frames[i];
      if (a == b) continue;
      cr.agree = false;
      std::size_t j = 0;
      while (j < a.size() && j < b.size() && a[j] == b[j]) ++j;
      cr.detail = fmt::format("frame {}: first difference at byte {} (kernel len {}, ofld len {}, "
                              "kernel {:#04x} ofld {:#04x})",
                              i, j, a.size(), b.size(), j < a.size() ? a[j] : 0,
                              j < b.size() ? b[j] : 0);
    }
    if (cr.agree) cr.detail = fmt::format("{} frames identical", cr.kernel_frames);
    out.cases.push_back(cr);
  }
  return out;
}

std::string gso_conformance_text(const GsoConformance& r) {
  if (r.skipped || (r.cases.empty() && !r.message.empty())) return r.message + "\n";
  std::string t;
  std::size_t ok = 0;
  for (auto& c : r.cases) {
    t += fmt::format("{:<28} {:<8} kernel {:>3} ofld {:>3}  {}\n", c.name,
                     c.agree ? "AGREE" : "DIFFER", c.kernel_frames, c.our_frames, c.detail);
    ok += c.agree;
  }
  t += fmt::format("{}/{} cases agree\n", ok, r.cases.size());
  return t;
}

std::string gso_conformance_json(const GsoConformance& r) {
  nlohmann::json j;
  j["skipped"] = r.skipped;
  j["message"] = r.message;
  j["all_agree"] = r.all_agree();
  j["cases"] = nlohmann::json::array();
  for (auto& c : r.cases)
    j["cases"].push_back({{"name", c.name}, {"agree", c.agree}, {"kernel_frames", c.kernel_frames},
                          {"ofld_frames", c.our_frames}, {"detail", c.detail}});
  return j.dump(2);
}

}  // namespace ofld::lab

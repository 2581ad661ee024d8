// `ofld gso` (pcap → pcap) and `ofld conformance gso` (kernel replay, spec K-3b).
#include "ofld/tools/gso_tool.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ofld/io/pcap.hpp"
#include "ofld/tools/kernel_oracle.hpp"
#include "ofld/wire/bytes.hpp"

namespace ofld::tools {

using Bytes = std::vector<std::uint8_t>;

// ethtool -K's short aliases (ethtool.c off_flag_def / the legacy names) → the group names
// core::parse_features takes. Other tokens pass unchanged.
std::string expand_ethtool_aliases(const std::string& list) {
  static const std::pair<const char*, const char*> kAlias[] = {
      {"sg", "scatter-gather"},          {"tx", "tx-checksumming"},
      {"rx", "rx-checksumming"},         {"tso", "tcp-segmentation-offload"},
      {"gso", "generic-segmentation-offload"}, {"gro", "generic-receive-offload"},
      {"lro", "large-receive-offload"},  {"rxvlan", "rx-vlan-offload"},
      {"txvlan", "tx-vlan-offload"},     {"ntuple", "ntuple-filters"},
      {"rxhash", "receive-hashing"}};
  std::string out, tok;
  auto flush = [&] {
    if (tok.empty()) return;
    for (auto& [a, full] : kAlias)
      if (tok == a) tok = full;
    if (!out.empty()) out += ',';
    out += tok;
    tok.clear();
  };
  for (char c : list) {
    if (c == ',' || c == ' ') flush();
    else tok += c;
  }
  flush();
  return out;
}

namespace {

core::Device device_with(core::Features f) {
  core::Device d;
  d.features = f;
  d.hw_enc_features = f;
  return d;
}

/// A segment of `mss` payload bytes would not fit a 16-bit length field of its headers (IPv4
/// total length, IPv6 payload length, UDP length: segments carry no jumbo option): the reason
/// to pass the frame through, or nullptr. Only for frames that would be segmented. (The
/// engine wrote such lengths modulo 65536, e.g. IPv4 total length 11 for --mss 65495.)
const char* length_overflow(const wire::Layout& l, std::uint32_t mss) {
  const wire::HeaderRef* l4 = l.inner_l4();
  if (!l4 || (l4->kind != wire::HeaderKind::Tcp && l4->kind != wire::HeaderKind::Udp)) return nullptr;
  if (l4->end <= l4->header_end() || l4->end - l4->header_end() <= mss) return nullptr;
  const std::uint64_t seg_end = std::uint64_t(l4->header_end()) + mss;  // end of a full segment
  for (const auto& h : l.headers()) {
    if (h.offset >= l4->header_end()) break;
    std::uint64_t field = 0;
    if (h.kind == wire::HeaderKind::Ipv4 || h.kind == wire::HeaderKind::Udp) field = seg_end - h.offset;
    else if (h.kind == wire::HeaderKind::Ipv6) field = seg_end - h.offset - 40;
    if (field > 0xFFFF)
      return h.kind == wire::HeaderKind::Udp
                 ? "segment at --mss exceeds the 65535-byte UDP length"
                 : "segment at --mss exceeds the 65535-byte IP length";
  }
  return nullptr;
}

}  // namespace

GsoToolSummary run_gso_pcap(const GsoToolOptions& o) {
  if (o.mss == 0) throw std::runtime_error("--mss must be > 0");
  // gso_size 0xFFFF is GSO_BY_FRAGS (segment at frag_list boundaries), not a size: a capture
  // has no frag_list, so every frame used to be dropped as "nothing-to-segment".
  if (o.mss == 0xFFFF)
    throw std::runtime_error("--mss 65535 is GSO_BY_FRAGS (segment along frag_list), not a "
                             "segment size; use 1..65534");
  GsoToolSummary s;
  if (o.have_features) {
    auto fp = core::parse_features(expand_ethtool_aliases(o.features));
    if (!fp.ok()) throw std::runtime_error(fp.error);
    s.features = fp.features;
  }
  const core::Device dev = device_with(s.features);
  io::refuse_same_file(o.in, o.out);
  io::PcapReader rd(o.in);
  io::PcapWriter wr(o.out, rd.link());
  wire::ParseOptions po;
  po.gue_port = o.gue_port;
  gso::PrepareOptions popt;
  popt.gso_size = o.mss;
  popt.input = o.csum_partial ? gso::InputCsum::Seeds : gso::InputCsum::Complete;
  // A device with SG is handed socket-built packets: headers linear, payload in page
  // fragments, so SG segments reference the payload instead of copying it.
  if (s.features.has(core::netif_f::SG)) popt.frag_size = 4096;
  io::PcapRecord rec;
  auto write = [&](const io::PcapRecord& base, Bytes data) {
    io::PcapRecord out = base;
    out.caplen = out.len = std::uint32_t(data.size());
    out.data = std::move(data);
    wr.write(out);
    ++s.frames_out;
  };
  while (rd.next(rec)) {
    ++s.frames_in;
    auto pass = [&](const std::string& why, bool oversize = false) {
      ++s.passed;
      ++(oversize ? s.unsegmented_reasons : s.pass_reasons)[why];
      wr.write(rec);
      ++s.frames_out;
    };
    if (rec.truncated()) { pass("truncated capture"); continue; }
    auto l = wire::parse_frame(rec.bytes(), io::to_wire_link(rd.link()), po);
    if (!l) { pass("unparsed"); continue; }
    if (const char* why = length_overflow(l.value(), o.mss)) { pass(why, true); continue; }
    gso::Prepared pr = gso::prepare_frame(rec.bytes(), l.value(), popt);
    if (pr.status == gso::PrepareStatus::PassThrough) { pass(pr.why, pr.oversize); continue; }
    const bool was_gso = pr.pkt.is_gso();
    gso::TxResult tx = gso::tx_prepare(std::move(pr.pkt), dev, &s.counters);
    if (tx.dropped()) {
      ++s.dropped;
      ++s.drop_reasons[tx.gso_reason != gso::GsoReason::Ok
                           ? std::string(offload::to_string(tx.gso_reason))
                           : std::string(core::to_string(tx.csum_error))];
      continue;
    }
    if (!was_gso) ++s.finished;
    else if (tx.action.software_gso && !(tx.out.size() == 1 && tx.out[0].is_gso())) {
      ++s.gso_frames;
      s.segments += tx.out.size();
    } else {
      ++s.hw_frames;
    }
    for (auto& p : tx.out) write(rec, p.to_bytes());
  }
  wr.close();
  s.cut_short = rd.cut_short();
  return s;
}

std::string gso_summary_text(const GsoToolSummary& s) {
  std::string t = fmt::format(
      "frames in {}, out {}; segmented {} → {} segments; device-segmented {}; checksum "
      "finished {}; passed through {}; dropped {}\n",
      s.frames_in, s.frames_out, s.gso_frames, s.segments, s.hw_frames, s.finished, s.passed,
      s.dropped);
  t += fmt::format("construction: sg-ref {}, copy {}, copy-sum {} (sg then summed {})\n",
                   s.counters.seg_mode[0], s.counters.seg_mode[1], s.counters.seg_mode[2],
                   s.counters.sg_sum);
  t += fmt::format("bytes: headers copied {}; payload copied {}, payload referenced {}\n",
                   s.counters.header_bytes_copied, s.counters.payload_bytes_copied,
                   s.counters.payload_bytes_referenced);
  for (auto& [k, v] : s.drop_reasons) t += fmt::format("dropped {}: {}\n", k, v);
  for (auto& [k, v] : s.unsegmented_reasons)
    t += fmt::format("passed through unsegmented: {}: {}\n", k, v);
  for (auto& [k, v] : s.pass_reasons) t += fmt::format("passed through: {}: {}\n", k, v);
  if (!s.cut_short.empty()) t += "input " + s.cut_short + "\n";
  return t;
}

std::string gso_summary_json(const GsoToolSummary& s) {
  nlohmann::json j;
  j["frames_in"] = s.frames_in;
  j["frames_out"] = s.frames_out;
  j["segmented_frames"] = s.gso_frames;
  j["segments"] = s.segments;
  j["device_segmented"] = s.hw_frames;
  j["checksum_finished"] = s.finished;
  j["passed"] = s.passed;
  j["dropped"] = s.dropped;
  j["construction"] = {{"sg_ref", s.counters.seg_mode[0]},
                       {"copy", s.counters.seg_mode[1]},
                       {"copy_sum", s.counters.seg_mode[2]},
                       {"sg_then_sum", s.counters.sg_sum}};
  j["payload_bytes"] = {{"copied", s.counters.payload_bytes_copied},
                        {"referenced", s.counters.payload_bytes_referenced}};
  j["header_bytes"] = {{"copied", s.counters.header_bytes_copied}};
  j["drop_reasons"] = s.drop_reasons;
  j["pass_reasons"] = s.pass_reasons;
  j["unsegmented_reasons"] = s.unsegmented_reasons;
  if (!s.cut_short.empty()) j["input_cut_short"] = s.cut_short;
  j["features"] = core::format_features(s.features).empty() ? "" : fmt::format("{:#x}", s.features.bits);
  return j.dump(2);
}

// ---- conformance ------------------------------------------------------------------------------

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

offload::virtio::VnetHdr to_wire(const io::VnetHdr& v) {
  offload::virtio::VnetHdr h;
  h.flags = v.flags;
  h.gso_type = v.gso_type;
  h.hdr_len = v.hdr_len;
  h.gso_size = v.gso_size;
  h.csum_start = v.csum_start;
  h.csum_offset = v.csum_offset;
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
  auto tp = offload::virtio::to_packet(to_wire(c.vnet), c.frame);
  if (!tp.ok()) {
    r.error = std::string("virtio: ") + std::string(offload::virtio::to_string(tp.reason));
    return r;
  }
  auto dev = device_with(sink);
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

}  // namespace ofld::tools

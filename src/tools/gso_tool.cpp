// `ofld gso` (pcap → pcap). `ofld conformance gso` is lab code (src/lab/gso_conformance.cpp).
#include "ofld/tools/gso_tool.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ofld/io/pcap.hpp"
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
  core::Device dev = core::Device::with_features(s.features);
  dev.gso_max_size = o.gso_max_size;
  dev.gso_ipv4_max_size = o.gso_ipv4_max_size;
  io::refuse_same_file(o.in, o.out);
  io::PcapReader rd(o.in);
  io::PcapWriter wr(o.out, rd.link());
  wire::ParseOptions po;
  po.gue_port = o.gue_port;
  po.geneve_port = o.geneve_port;
  gso::PrepareOptions popt;
  popt.gso_size = o.mss;
  popt.input = o.csum_partial ? gso::InputCsum::Seeds : gso::InputCsum::Complete;
  // A device with SG is handed socket-built packets: headers linear, payload in page
  // fragments, so SG segments reference the payload instead of copying it.
  if (s.features.has(core::netif_f::SG)) popt.frag_size = 4096;
  io::PcapRecord rec;
  core::SegmentBatch outs;  // each frame's outputs (a slab for plain TCP with SG and csum)
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
    gso::TxBatchResult tx = gso::tx_prepare_batch(std::move(pr.pkt), dev, outs, &s.counters);
    if (tx.dropped()) {
      ++s.dropped;
      ++s.drop_reasons[tx.gso_reason != gso::GsoReason::Ok
                           ? std::string(offload::to_string(tx.gso_reason))
                           : std::string(core::to_string(tx.csum_error))];
      continue;
    }
    if (!was_gso) ++s.finished;
    else if (tx.action.software_gso && !(outs.size() == 1 && outs.meta(0).gso.size != 0)) {
      ++s.gso_frames;
      s.segments += outs.size();
    } else {
      ++s.hw_frames;
    }
    for (std::size_t i = 0; i < outs.size(); ++i) write(rec, outs.to_bytes(i));
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

}  // namespace ofld::tools

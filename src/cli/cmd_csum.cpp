// `ofld csum verify FILE [--json]` and `ofld csum fix IN -o OUT [--json]`: wiring of
// io::PcapReader/PcapWriter and tools::verify_frame/fix_frame (no packet logic here).
//
// Exit codes:
//   verify: 0 no bad checksum found (partial, none, skipped and unparsable frames are not
//           failures), 1 at least one bad checksum, 2 error (file, link type, options).
//   fix:    0 written and no bad checksum left, 1 written but bad checksums remain (in frames
//           that could not be verified, which fix never touches), 2 error.
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "ofld/io/pcap.hpp"
#include "ofld/tools/csum_check.hpp"
#include "registry.hpp"

namespace {

using ofld::tools::CsumField;
using ofld::tools::FrameReport;
using ofld::tools::Summary;
using ofld::tools::Verdict;
using json = nlohmann::json;

struct CsumArgs {
  std::string in, out;
  bool json = false;
  bool problems_only = false;
  bool keep_partial = false;
  bool fill_udp4_zero = false;
  std::uint16_t gue_port = 0, fou_port = 0;
  std::uint16_t vxlan_port = 4789, geneve_port = 6081;
  bool no_tunnels = false;
  bool no_reassembly = false;
};

std::string hex16(std::uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04x", v);
  return b;
}

json field_json(const CsumField& f) {
  json j = {{"kind", std::string(to_string(f.kind))},
            {"level", f.level},
            {"verdict", std::string(to_string(f.verdict))},
            {"offset", f.field_offset},
            {"value", hex16(f.found)}};
  if (f.verdict == Verdict::Skipped) {
    j["reason"] = std::string(to_string(f.reason));
  } else {
    j["expected"] = hex16(f.expected);
  }
  if (f.verdict == Verdict::Partial) j["seed"] = hex16(f.seed);
  if (f.lco) j["lco"] = true;  // good once the inner partial checksum is filled
  return j;
}

json datagram_json(const ofld::tools::DatagramReport& d) {
  json j = {{"family", d.ipv6 ? "ipv6" : "ipv4"},
            {"id", d.id},
            {"level", d.level},
            {"result", std::string(to_string(d.fault))},
            {"frames", d.frames}};
  if (d.fault == ofld::tools::FragFault::None) {
    j["length"] = d.length;
    if (!d.duplicates.empty()) j["duplicates"] = d.duplicates;
    j["fields"] = json::array();
    for (const auto& f : d.fields) j["fields"].push_back(field_json(f));
    if (d.inner_error) j["inner_error"] = d.inner_error->to_string();
    if (!d.limit.empty()) j["limit"] = d.limit;
  }
  return j;
}

json report_json(const FrameReport& r) {
  json j;
  j["fields"] = json::array();
  for (const auto& f : r.fields) {
    json x = field_json(f);
    if (f.in_fragment) x["in_fragment"] = true;
    j["fields"].push_back(std::move(x));
  }
  if (r.parse_error) j["parse_error"] = r.parse_error->to_string();
  if (r.inner_unparsed && r.inner_error) j["inner_error"] = r.inner_error->to_string();
  if (!r.limit.empty()) j["limit"] = r.limit;
  if (r.truncated) j["truncated"] = true;
  if (!r.datagrams.empty()) {
    j["datagrams"] = json::array();
    for (const auto& d : r.datagrams) j["datagrams"].push_back(datagram_json(d));
  }
  return j;
}

std::string report_text(const FrameReport& r) {
  std::string s;
  if (r.parse_error) return "parse error: " + r.parse_error->to_string();
  for (const auto& f : r.fields) {
    if (!s.empty()) s += ", ";
    s += describe(f);
  }
  if (r.fields.empty()) s = "no checksums";
  if (r.inner_unparsed && r.inner_error)
    s += " [inner layers not parsed: " + r.inner_error->to_string() + "]";
  if (!r.limit.empty()) s += " [stopped: " + r.limit + "]";
  for (const auto& d : r.datagrams) s += "; " + ofld::tools::describe(d);
  return s;
}

bool has_problem(const FrameReport& r) {
  bool dg = false;
  for (const auto& d : r.datagrams) dg = dg || d.fault != ofld::tools::FragFault::None;
  return r.parse_error || r.inner_unparsed || !r.limit.empty() || dg ||
         r.count_all(Verdict::Bad) || r.count_all(Verdict::Partial) || r.any(Verdict::Skipped);
}

json summary_json(const Summary& s) {
  json j = {{"frames", s.frames},
            {"frames_with_bad", s.frames_with_bad},
            {"frames_with_partial", s.frames_with_partial},
            {"frames_with_skipped", s.frames_skipped},
            {"parse_errors", s.parse_errors},
            {"inner_unparsed", s.inner_unparsed},
            {"limited", s.limited},
            {"datagrams", s.datagrams}};
  json fr = json::object();
  for (std::size_t i = 1; i < ofld::tools::kNumFragFaults; ++i)
    if (s.frag[i]) fr[std::string(to_string(ofld::tools::FragFault(i)))] = s.frag[i];
  j["fragment_events"] = fr;
  json per = json::object();
  for (std::size_t k = 0; k < ofld::tools::kNumCsumKinds; ++k) {
    json v = json::object();
    std::uint64_t any = 0;
    for (std::size_t i = 0; i < ofld::tools::kNumVerdicts; ++i) {
      v[std::string(to_string(Verdict(i)))] = s.fields[k][i];
      any += s.fields[k][i];
    }
    if (any) per[std::string(to_string(ofld::tools::CsumKind(k)))] = v;
  }
  j["fields"] = per;
  return j;
}

std::string summary_text(const Summary& s) {
  std::string t = "summary: " + std::to_string(s.frames) + " frames, " +
                  std::to_string(s.frames_with_bad) + " with bad checksums, " +
                  std::to_string(s.frames_with_partial) + " with partial, " +
                  std::to_string(s.frames_skipped) + " with unverifiable fields, " +
                  std::to_string(s.parse_errors) + " unparsable";
  if (s.inner_unparsed)
    t += ", " + std::to_string(s.inner_unparsed) + " with inner layers unparsed";
  if (s.limited) t += ", " + std::to_string(s.limited) + " stopped by a limit";
  t += "\n";
  std::string ev;
  for (std::size_t i = 1; i < ofld::tools::kNumFragFaults; ++i)
    if (s.frag[i])
      ev += ", " + std::string(to_string(ofld::tools::FragFault(i))) + " " + std::to_string(s.frag[i]);
  if (s.datagrams || !ev.empty())
    t += "  reassembly: " + std::to_string(s.datagrams) + " datagrams reassembled" + ev + "\n";
  for (std::size_t k = 0; k < ofld::tools::kNumCsumKinds; ++k) {
    std::string line;
    for (std::size_t i = 0; i < ofld::tools::kNumVerdicts; ++i) {
      if (!s.fields[k][i]) continue;
      line += " " + std::string(to_string(Verdict(i))) + "=" + std::to_string(s.fields[k][i]);
    }
    if (!line.empty()) t += "  " + std::string(to_string(ofld::tools::CsumKind(k))) + ":" + line + "\n";
  }
  return t;
}

ofld::tools::CheckOptions check_options(const CsumArgs& a) {
  ofld::tools::CheckOptions o;
  o.parse.gue_port = a.gue_port;
  o.parse.fou_port = a.fou_port;
  o.parse.vxlan_port = a.vxlan_port;
  o.parse.geneve_port = a.geneve_port;
  o.parse.follow_tunnels = !a.no_tunnels;
  return o;
}

int run_verify(const CsumArgs& a) {
  ofld::io::PcapReader reader(a.in);  // throws with a message (exit 2)
  const auto link = ofld::io::to_wire_link(reader.link());
  const auto opt = check_options(a);
  Summary sum;
  json frames = json::array();
  ofld::io::PcapRecord rec;
  std::uint64_t n = 0;
  ofld::tools::CaptureVerifier cv(link, opt);
  while (reader.next(rec)) {
    ++n;
    const std::uint64_t ts = std::uint64_t(rec.ts_sec) * 1000000000ull + rec.ts_nsec;
    FrameReport r = a.no_reassembly ? ofld::tools::verify_frame(rec.bytes(), link, rec.len, opt)
                                    : cv.verify(rec.bytes(), rec.len, n, ts);
    sum.add(r);
    if (a.problems_only && !has_problem(r)) continue;
    if (a.json) {
      json j = report_json(r);
      j["frame"] = n;
      frames.push_back(std::move(j));
    } else {
      std::cout << n << ": " << report_text(r) << "\n";
    }
  }
  const auto incomplete = cv.finish();  // end of capture: datagrams never completed
  for (const auto& d : incomplete) sum.add(d);
  if (a.json) {
    json inc = json::array();
    for (const auto& d : incomplete) inc.push_back(datagram_json(d));
    json doc = {{"file", a.in},
                {"link", ofld::io::capture_link_name(reader.link())},
                {"frames", std::move(frames)},
                {"incomplete_datagrams", std::move(inc)},
                {"summary", summary_json(sum)}};
    if (!reader.cut_short().empty()) doc["input_cut_short"] = reader.cut_short();  // as gso/gro
    std::cout << doc.dump(2) << "\n";
  } else {
    for (const auto& d : incomplete) std::cout << "end: " << ofld::tools::describe(d) << "\n";
    std::cout << summary_text(sum);
  }
  if (!reader.cut_short().empty()) {  // every complete record was checked; say so, exit 1
    std::cerr << "ofld csum: warning: input " << reader.cut_short() << "\n";
    return 1;
  }
  return sum.frames_with_bad ? 1 : 0;
}

int run_fix(const CsumArgs& a) {
  ofld::io::refuse_same_file(a.in, a.out);
  ofld::io::PcapReader reader(a.in);
  const auto link = ofld::io::to_wire_link(reader.link());
  ofld::tools::FixOptions opt;
  opt.check = check_options(a);
  opt.fix_partial = !a.keep_partial;
  opt.fill_udp4_zero = a.fill_udp4_zero;
  ofld::io::PcapWriter writer(a.out, reader.link());
  // With `-o -` the capture is standard output: the report goes to stderr.
  std::ostream& rep = ofld::cli::capture_to_stdout(a.out) ? std::cerr : std::cout;
  Summary before, after;
  json frames = json::array();
  ofld::io::PcapRecord rec;
  std::uint64_t n = 0, untouched = 0;
  while (reader.next(rec)) {
    ++n;
    auto res = ofld::tools::fix_frame(std::span<std::uint8_t>(rec.data.data(), rec.data.size()),
                                      link, rec.len, opt);
    before.add(res.before);
    after.add(res.after);
    const bool unverifiable = res.before.parse_error || res.before.any(Verdict::Skipped);
    if (unverifiable && (res.before.any(Verdict::Bad) || res.before.any(Verdict::Partial)))
      ++untouched;
    writer.write(rec);
    if (a.problems_only && res.after.rewritten == 0 && !has_problem(res.after)) continue;
    if (a.json) {
      json j = report_json(res.after);
      j["frame"] = n;
      j["rewritten"] = res.after.rewritten;
      j["before"] = report_json(res.before)["fields"];
      frames.push_back(std::move(j));
    } else if (res.after.rewritten || a.problems_only) {
      rep << n << ": rewrote " << res.after.rewritten << " field(s); before: "
                << report_text(res.before) << "; after: " << report_text(res.after) << "\n";
    }
  }
  writer.close();
  if (a.json) {
    json doc = {{"file", a.in},
                {"output", a.out},
                {"link", ofld::io::capture_link_name(reader.link())},
                {"frames", std::move(frames)},
                {"fields_rewritten", after.rewritten},
                {"frames_modified", after.frames_modified},
                {"frames_unverifiable_left_unchanged", untouched},
                {"before", summary_json(before)},
                {"after", summary_json(after)}};
    if (!reader.cut_short().empty()) doc["input_cut_short"] = reader.cut_short();  // as gso/gro
    rep << doc.dump(2) << "\n";
  } else {
    rep << "fix: " << after.rewritten << " field(s) rewritten in " << after.frames_modified
              << " of " << after.frames << " frames; " << untouched
              << " frames with bad/partial checksums left unchanged (unverifiable)\n"
              << "after " << summary_text(after);
  }
  if (!reader.cut_short().empty()) {  // every complete record was written; say so, exit 1
    std::cerr << "ofld csum: warning: input " << reader.cut_short() << "\n";
    return 1;
  }
  return after.frames_with_bad ? 1 : 0;
}

void add_common(CLI::App& sc, CsumArgs& a) {
  sc.add_flag("--json", a.json, "JSON output (same content as the text)");
  sc.add_flag("--problems-only", a.problems_only,
              "list only frames with bad/partial/unverifiable checksums or parse errors");
  sc.add_option("--vxlan-port", a.vxlan_port,
                 "UDP port carrying VXLAN (default 4789; 8472, Linux's legacy port, is also "
                 "recognised; 0: only 8472). Every tunnel port is recognised as the source or "
                 "the destination port, the lower one first, as tshark does");
  sc.add_option("--geneve-port", a.geneve_port, "UDP port carrying Geneve (default 6081; 0: none)");
  sc.add_option("--gue-port", a.gue_port, "UDP port carrying GUE (default: none)");
  sc.add_option("--fou-port", a.fou_port, "UDP port carrying FOU/IPIP (default: none)");
  sc.add_flag("--no-tunnels", a.no_tunnels, "do not look inside tunnels");
}

const ofld::cli::Registrar reg([](CLI::App& root) {
  auto& grp = ofld::cli::group(root, "csum", "Verify or repair the checksums of a capture");
  auto args = std::make_shared<CsumArgs>();

  auto* v = grp.add_subcommand(
      "verify",
      "Check every checksum (IPv4 header, TCP, UDP, GRE, ICMP/ICMPv6; every encapsulation level) "
      "of each frame, and of each IP datagram reassembled from fragments. Exit 0: no bad "
      "checksum; 1: bad checksums found; 2: error");
  v->add_option("file", args->in, "pcap or pcapng file")->required();
  v->add_flag("--no-reassembly", args->no_reassembly,
              "judge each IP fragment on its own (default: reassemble IPv4/IPv6 datagrams and "
              "verify their L4 checksum whole)");
  add_common(*v, *args);
  v->callback([args] { ofld::cli::exit_code() = run_verify(*args); });

  auto* f = grp.add_subcommand(
      "fix",
      "Rewrite bad and partial checksums (innermost first) and write a pcap. Frames that cannot "
      "be verified (truncated, fragments, unparsable) are copied unchanged. Exit 0: ok; 1: bad "
      "checksums remain in such frames; 2: error");
  f->add_option("input", args->in, "pcap or pcapng file")->required();
  f->add_option("-o,--output", args->out, "output pcap file")->required();
  f->add_flag("--keep-partial", args->keep_partial,
              "leave CHECKSUM_PARTIAL seeds as they are");
  f->add_flag("--fill-udp4-zero", args->fill_udp4_zero,
              "also compute UDP/IPv4 checksums that are 0 (\"none\")");
  add_common(*f, *args);
  f->callback([args] { ofld::cli::exit_code() = run_fix(*args); });
});

}  // namespace

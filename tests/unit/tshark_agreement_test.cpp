// Agreement of tools::verify_frame with tshark (Wireshark's dissectors, an independent
// implementation) on every public capture in OFLD_PCAP_DIR (tests/data/pcaps) and on tests/data.
//
// tshark runs with checksum validation on for IPv4, TCP and UDP (GRE and ICMP/ICMPv6 are always
// validated) and with IP reassembly off, so that both sides judge each frame on its own bytes.
// For nested layers tshark prints one status per occurrence, comma-separated, outer first; we
// compare, per frame and per checksum kind, our list of verdicts (outer first) with tshark's.
//
// Equivalences (same meaning, different names):
//   good ⇔ 1 good;  bad ⇔ 0 bad or 4 illegal;  none ⇔ 3 not present (UDP/IPv4 zero);
//   skipped ⇔ 2 unverified (neither side can verify: truncated capture / fragment).
// Allowed differences, each narrow and explained (anything else fails the test):
//   seed      — ours partial ⇔ tshark bad: the field holds a CHECKSUM_PARTIAL pseudo-header
//               seed (spec C-12, captures from hosts with offloads); tshark has no such notion.
//   fragment  — ours skipped(fragment) ⇔ tshark bad: with reassembly off tshark still dissects
//               the first fragment and sums the part of the datagram that is present.
//   vxlan8472 — we report layers inside VXLAN on UDP 8472 (Linux's legacy port); tshark does
//               not decode VXLAN on that port, so it has no status for them.
//   len0      — we report layers inside an IP header whose length field is 0 (BIG TCP / TSO
//               capture: length from the frame, spec N-5/N-11); tshark does not dissect them.
//   cisco-md  — tshark decodes Cisco MetaData (GRE protocol 0x8909) and reports the inner
//               layers; ofld's wire parser stops there (StopReason::UnknownGreProto).
//   pptp      — tshark decodes PPP inside GRE version 1 (PPTP); ofld stops (GreVersion).
//   icmp-quote— tshark decodes the IP datagram quoted inside an ICMP error (RFC 792) and
//               reports its checksums; ofld does not parse ICMP payloads.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ofld/io/pcap.hpp"
#include "ofld/tools/csum_check.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace fs = std::filesystem;
using namespace ofld;
using tools::CsumKind;
using tools::SkipReason;
using tools::Verdict;

namespace {

// tshark's proto_checksum_enum_e values.
enum TStat : int { kTBad = 0, kTGood = 1, kTUnverified = 2, kTNotPresent = 3, kTIllegal = 4 };

struct TFrame {
  std::string protocols;
  std::array<std::vector<int>, tools::kNumCsumKinds> st;  // indexed by CsumKind
  std::vector<std::uint64_t> fragments;  // defrag: frames of the datagram reassembled here
};

bool have_tshark() { return std::system("tshark -v >/dev/null 2>&1") == 0; }

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      v.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  v.push_back(cur);
  return v;
}

std::map<std::uint64_t, TFrame> tshark_statuses(const std::string& path, bool defrag = false) {
  // Field order = CsumKind order: Ipv4Header, Tcp, Udp, Gre, Icmp, Icmpv6; with defrag, then
  // the frames of the datagram this frame reassembled (ip.fragment, ipv6.fragment).
  const std::string d = defrag ? "TRUE" : "FALSE";
  const std::string cmd =
      "tshark -r '" + path +
      "' -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE -o udp.check_checksum:TRUE"
      " -o ip.defragment:" + d + " -o ipv6.defragment:" + d +
      " -T fields -E occurrence=a -E aggregator=, -e frame.number -e frame.protocols"
      " -e ip.checksum.status -e tcp.checksum.status -e udp.checksum.status"
      " -e gre.checksum.status -e icmp.checksum.status -e icmpv6.checksum.status"
      " -e ip.fragment -e ipv6.fragment 2>/dev/null";
  std::map<std::uint64_t, TFrame> m;
  std::istringstream in(run(cmd));
  std::string line;
  while (std::getline(in, line)) {
    auto cols = split(line, '\t');
    if (cols.size() < 2 + tools::kNumCsumKinds) continue;
    TFrame f;
    f.protocols = cols[1];
    for (std::size_t k = 0; k < tools::kNumCsumKinds; ++k) {
      if (cols[2 + k].empty()) continue;
      for (const auto& v : split(cols[2 + k], ',')) f.st[k].push_back(std::stoi(v));
    }
    for (std::size_t c = 2 + tools::kNumCsumKinds; c < cols.size(); ++c)
      if (!cols[c].empty())
        for (const auto& v : split(cols[c], ',')) f.fragments.push_back(std::stoull(v));
    m[std::stoull(cols[0])] = std::move(f);
  }
  return m;
}

/// Frame context for the allowances, from the same parse the tool does.
struct Context {
  std::uint32_t vxlan8472_level = 0xff;  ///< level of a UDP/8472 carrying VXLAN, else 0xff
  std::uint32_t len0_ip_offset = wire::kNoOffset;  ///< first IP header with length 0
  bool cisco_md = false, pptp = false, icmp_error_last = false;
};

Context context_of(std::span<const std::uint8_t> frame, wire::LinkType link) {
  Context c;
  wire::ParseOptions po;
  po.allow_clipped = true;
  auto r = wire::parse_frame(frame, link, po);
  if (!r.ok()) return c;
  const wire::Layout& l = r.value();
  auto hs = l.headers();
  for (std::size_t i = 0; i < hs.size(); ++i) {
    const auto& h = hs[i];
    if (h.kind == wire::HeaderKind::Udp && i + 1 < hs.size() &&
        hs[i + 1].kind == wire::HeaderKind::Vxlan &&
        wire::load_be16(&frame[h.offset + 2]) == wire::udpport::kVxlanLinux)
      c.vxlan8472_level = std::min<std::uint32_t>(c.vxlan8472_level, h.level);
    if ((h.kind == wire::HeaderKind::Ipv4 || h.kind == wire::HeaderKind::Ipv6) &&
        (h.flags & wire::layer_flag::kLenFromFrame) && c.len0_ip_offset == wire::kNoOffset)
      c.len0_ip_offset = h.offset;
  }
  c.cisco_md = l.stop == wire::StopReason::UnknownGreProto && l.stop_value == 0x8909;
  c.pptp = l.stop == wire::StopReason::GreVersion;
  if (!hs.empty()) {
    const auto& last = hs.back();
    if (last.kind == wire::HeaderKind::Icmp) {
      const std::uint8_t t = frame[last.offset];
      c.icmp_error_last = t == 3 || t == 4 || t == 5 || t == 11 || t == 12;
    } else if (last.kind == wire::HeaderKind::Icmpv6) {
      const std::uint8_t t = frame[last.offset];
      c.icmp_error_last = t >= 1 && t <= 4;
    }
  }
  return c;
}

bool equivalent(Verdict v, int t) {
  switch (v) {
    case Verdict::Good: return t == kTGood;
    case Verdict::Bad: return t == kTBad || t == kTIllegal;
    case Verdict::None: return t == kTNotPresent;
    case Verdict::Skipped: return t == kTUnverified;
    case Verdict::Partial: return false;
  }
  return false;
}

struct FileStats {
  std::uint64_t frames = 0, compared = 0, equal = 0, failures = 0;
  std::uint64_t datagrams = 0, tshark_datagrams = 0;  // defrag: reassembled by ofld / tshark
  std::map<std::string, std::uint64_t> allowed;
};

void compare_file(const std::string& path, FileStats& st, bool defrag = false) {
  io::PcapFile pf = io::read_pcap(path);
  auto ts = tshark_statuses(path, defrag);
  ASSERT_EQ(ts.size(), pf.records.size()) << path << ": tshark frame count differs";
  const auto link = io::to_wire_link(pf.link);
  tools::CaptureVerifier cv(link);
  const std::string name = fs::path(path).filename().string();
  for (std::size_t n = 0; n < pf.records.size(); ++n) {
    const auto& rec = pf.records[n];
    const std::uint64_t fno = n + 1;
    ++st.frames;
    tools::FrameReport rep = defrag ? cv.verify(rec.bytes(), rec.len, fno,
                                                std::uint64_t(rec.ts_sec) * 1000000000ull +
                                                    rec.ts_nsec)
                                    : tools::verify_frame(rec.bytes(), link, rec.len);
    const TFrame& tf = ts[fno];
    const Context ctx = context_of(rec.bytes(), link);
    if (defrag) {
      // tshark lists the frames of a datagram reassembled in this frame; ofld names the same.
      std::vector<std::uint64_t> theirs = tf.fragments, ours_frames;
      for (const auto& d : rep.datagrams)
        if (d.fault == tools::FragFault::None) {
          ++st.datagrams;
          ours_frames.insert(ours_frames.end(), d.frames.begin(), d.frames.end());
          // tshark lists identical duplicates among the fragments; ofld names them apart
          ours_frames.insert(ours_frames.end(), d.duplicates.begin(), d.duplicates.end());
        }
      std::sort(theirs.begin(), theirs.end());
      std::sort(ours_frames.begin(), ours_frames.end());
      if (theirs != ours_frames) {
        ++st.failures;
        ADD_FAILURE() << name << " frame " << fno << ": tshark reassembled "
                      << ::testing::PrintToString(theirs) << ", ofld "
                      << ::testing::PrintToString(ours_frames);
      }
      if (!theirs.empty()) ++st.tshark_datagrams;
    }
    for (std::size_t k = 0; k < tools::kNumCsumKinds; ++k) {
      std::vector<const tools::CsumField*> ours;
      // With reassembly, tshark judges what lies inside a fragment only in the datagram (in
      // the frame that completes it), after the frame's own outer fields.
      for (const auto& f : rep.fields)
        if (std::size_t(f.kind) == k && !(defrag && f.in_fragment)) ours.push_back(&f);
      for (const auto& d : rep.datagrams)
        for (const auto& f : d.fields)
          if (std::size_t(f.kind) == k) ours.push_back(&f);
      const auto& theirs = tf.st[k];
      const std::string where = name + " frame " + std::to_string(fno) + " " +
                                std::string(to_string(CsumKind(k))) + " [" + tf.protocols + "]";
      const std::size_t common = std::min(ours.size(), theirs.size());
      for (std::size_t i = 0; i < common; ++i) {
        const auto& f = *ours[i];
        const int t = theirs[i];
        ++st.compared;
        if (equivalent(f.verdict, t)) {
          ++st.equal;
        } else if (f.verdict == Verdict::Partial && t == kTBad) {
          ++st.allowed["seed"];
        } else if (f.verdict == Verdict::Skipped && f.reason == SkipReason::Fragment &&
                   t == kTBad) {
          ++st.allowed["fragment"];
        } else {
          ++st.failures;
          ADD_FAILURE() << where << " #" << i << ": ofld says " << tools::describe(f)
                        << ", tshark status " << t;
        }
      }
      for (std::size_t i = common; i < ours.size(); ++i) {  // we report more layers
        const auto& f = *ours[i];
        if (ctx.vxlan8472_level != 0xff && f.level > ctx.vxlan8472_level) {
          ++st.allowed["vxlan8472"];
        } else if (ctx.len0_ip_offset != wire::kNoOffset &&
                   f.header_offset > ctx.len0_ip_offset) {
          ++st.allowed["len0"];
        } else {
          ++st.failures;
          ADD_FAILURE() << where << " #" << i << ": ofld says " << tools::describe(f)
                        << ", tshark has no status";
        }
      }
      for (std::size_t i = common; i < theirs.size(); ++i) {  // tshark reports more layers
        if (ctx.cisco_md) {
          ++st.allowed["cisco-md"];
        } else if (ctx.pptp) {
          ++st.allowed["pptp"];
        } else if (ctx.icmp_error_last) {
          ++st.allowed["icmp-quote"];
        } else {
          ++st.failures;
          ADD_FAILURE() << where << " #" << i << ": tshark status " << theirs[i]
                        << ", ofld has no such field"
                        << (rep.parse_error ? " (parse error: " + rep.parse_error->to_string() + ")"
                                            : "");
        }
      }
    }
  }
}

std::vector<std::string> capture_files() {
  std::vector<std::string> v;
  for (const std::string& dir : {std::string(OFLD_PCAP_DIR),
                                std::string(OFLD_SOURCE_DIR) + "/tests/data"}) {
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      const auto ext = e.path().extension();
      if (ext != ".pcap" && ext != ".pcapng") continue;
      // Unsupported link type on purpose (pcap_test's error-path file).
      if (e.path().filename() == "dlt105_ieee802_11.pcap") continue;
      v.push_back(e.path().string());
    }
  }
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST(TsharkAgreement, EveryCaptureFrameByFrameLayerByLayer) {
  if (!have_tshark()) GTEST_SKIP() << "tshark not installed; agreement test skipped";
  const auto files = capture_files();
  ASSERT_FALSE(files.empty()) << "no captures found under " << OFLD_PCAP_DIR;
  FileStats total;
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    FileStats st;
    compare_file(path, st);
    std::string allowed;
    for (const auto& [reason, n] : st.allowed) {
      allowed += " " + reason + "=" + std::to_string(n);
      total.allowed[reason] += n;
    }
    std::cout << "[tshark] " << fs::path(path).filename().string() << ": " << st.frames
              << " frames, " << st.compared << " fields compared, " << st.equal << " agree"
              << (allowed.empty() ? "" : ", allowed:" + allowed) << ", failures " << st.failures
              << "\n";
    total.frames += st.frames;
    total.compared += st.compared;
    total.equal += st.equal;
    total.failures += st.failures;
  }
  std::cout << "[tshark] total: " << files.size() << " files, " << total.frames << " frames, "
            << total.compared << " fields compared, " << total.equal << " agree, failures "
            << total.failures << "\n";
  EXPECT_EQ(total.failures, 0u);
  // The comparison must have compared something real.
  EXPECT_GT(total.equal, 1000u);
}

TEST(TsharkAgreement, KnownBadCapturesAreBadForBoth) {
  // zeek chksums traces: MANIFEST says each has exactly one bad checksum of the named kind.
  if (!have_tshark()) GTEST_SKIP() << "tshark not installed; agreement test skipped";
  const std::string dir = std::string(OFLD_PCAP_DIR) + "/";
  const std::vector<std::pair<std::string, CsumKind>> cases = {
      {"zeek_chksums_ip4-bad-chksum.pcap", CsumKind::Ipv4Header},
      {"zeek_chksums_ip4-tcp-bad-chksum.pcap", CsumKind::Tcp},
      {"zeek_chksums_ip6-tcp-bad-chksum.pcap", CsumKind::Tcp},
      {"zeek_chksums_ip6-udp-bad-chksum.pcap", CsumKind::Udp}};
  for (const auto& [file, kind] : cases) {
    SCOPED_TRACE(file);
    auto pf = io::read_pcap(dir + file);
    ASSERT_EQ(pf.records.size(), 1u);
    auto rep = tools::verify_frame(pf.records[0].bytes(), io::to_wire_link(pf.link),
                                   pf.records[0].len);
    ASSERT_EQ(rep.count(Verdict::Bad), 1u);
    auto ts = tshark_statuses(dir + file);
    ASSERT_EQ(ts[1].st[std::size_t(kind)].size(), 1u);
    EXPECT_EQ(ts[1].st[std::size_t(kind)][0], kTBad);
    for (const auto& f : rep.fields) {
      if (f.verdict == Verdict::Bad) {
        EXPECT_EQ(f.kind, kind);
      }
    }
  }
}

// With reassembly on both sides (tshark's ip.defragment / ipv6.defragment),
// every capture agrees frame by frame and layer by layer, the L4 of each reassembled datagram
// (and every tunnel layer inside it) included, and both name the same frames for each
// datagram. The captures with fragments must really reassemble (ip4/ip6 fragments, and the
// GRE-in-fragmented-IPv4 of zeek_erspan.pcap); the nested ones (VXLAN ×3, ERSPAN, GRE in UDP)
// are compared layer by layer as in the test above.
TEST(TsharkAgreement, ReassemblyAndNestingAsTshark) {
  if (!have_tshark()) GTEST_SKIP() << "tshark not installed; agreement test skipped";
  const auto files = capture_files();
  ASSERT_FALSE(files.empty());
  const std::vector<std::string> must = {"pcapplusplus_ip4_fragments.pcap",
                                        "pcapplusplus_ip6_fragments.pcap", "zeek_erspan.pcap"};
  FileStats total;
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    FileStats st;
    compare_file(path, st, /*defrag=*/true);
    const std::string name = fs::path(path).filename().string();
    std::string allowed;
    for (const auto& [reason, n] : st.allowed) allowed += " " + reason + "=" + std::to_string(n);
    std::cout << "[tshark defrag] " << name << ": " << st.frames << " frames, " << st.compared
              << " fields compared, " << st.equal << " agree, datagrams ofld " << st.datagrams
              << " tshark " << st.tshark_datagrams
              << (allowed.empty() ? "" : ", allowed:" + allowed) << ", failures "
              << st.failures << "\n";
    EXPECT_EQ(st.datagrams, st.tshark_datagrams) << name;
    if (std::find(must.begin(), must.end(), name) != must.end()) {
      EXPECT_GT(st.tshark_datagrams, 0u) << name;
    }
    total.frames += st.frames;
    total.compared += st.compared;
    total.equal += st.equal;
    total.failures += st.failures;
    total.datagrams += st.datagrams;
    total.tshark_datagrams += st.tshark_datagrams;
  }
  EXPECT_EQ(total.failures, 0u);
  EXPECT_GT(total.equal, 1000u);
  EXPECT_EQ(total.datagrams, total.tshark_datagrams);
  // tshark 4.0 reassembles 6 (ip4_fragments), 4 (ip6_fragments) and 16 (zeek_erspan)
  EXPECT_GE(total.datagrams, 26u);
}

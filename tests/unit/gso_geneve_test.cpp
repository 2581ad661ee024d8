// Geneve GSO (docs/geneve.md GN-6; X-31, C-30) and GRO→GSO over Geneve, plus
// `ofld gso` / `ofld gro` over the public Geneve captures with tshark as the independent
// witness of every checksum (GN-6, GN-8). Expected values: lengths and checksums from the
// RFCs (RFC 768, RFC 793, RFC 8200, RFC 8926), segment counts from the payload and mss.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "gro_test_util.hpp"
#include "gso_test_util.hpp"
#include "ofld/io/pcap.hpp"
#include "ofld/tools/gro_tool.hpp"
#include "ofld/tools/gso_tool.hpp"
#include "ofld/wire/bytes.hpp"

using namespace ofld;
using gso_test::Bytes;
using wire::load_be16;
namespace nf = core::netif_f;

namespace {

constexpr std::uint16_t kTeb = 0x6558, kIpv4 = 0x0800, kIpv6 = 0x86DD;

/// Geneve header (RFC 8926 §3.4): version 0, Opt Len = options/4, flags byte, protocol type,
/// VNI 0x123456, reserved 0; then `opts`.
Bytes geneve_header(std::uint16_t proto, const Bytes& opts, std::uint8_t flags = 0) {
  Bytes h(8, 0);
  h[0] = std::uint8_t((opts.size() / 4) & 0x3f);
  h[1] = flags;
  wire::store_be16(h.data() + 2, proto);
  wire::store_be32(h.data() + 4, 0x123456u << 8);
  h.insert(h.end(), opts.begin(), opts.end());
  return h;
}

/// `words` 4-byte words of option TLVs (RFC 8926 §3.5; ≤ 32 words per option), the first of
/// them critical (type 0x80) when `critical`.
Bytes options_of(unsigned words, bool critical = false) {
  Bytes o;
  bool first = true;
  while (words > 0) {
    const unsigned n = words > 32 ? 32 : words;
    o.push_back(0x01), o.push_back(0x02);
    o.push_back(first && critical ? 0x80 : 0x01);
    o.push_back(std::uint8_t(n - 1));
    for (unsigned i = 0; i < (n - 1) * 4; ++i) o.push_back(std::uint8_t(0x30 + i));
    words -= n;
    first = false;
  }
  return o;
}

/// A Geneve super-packet as the gso preset builds tunnels (outer Ethernet, IPv4 ID 0x4000 DF
/// clear or IPv6, UDP 33333 → `dport`, checksum or zero), payload `inner_eth` (an Ethernet
/// frame for TEB, its IP packet otherwise).
Bytes geneve_encap(const Bytes& inner_eth, bool ov6, bool ucsum, std::uint16_t proto,
                   const Bytes& opts, std::uint16_t dport = wire::udpport::kGeneve) {
  namespace fbs = ofld::fb::gso;
  ofld::fb::Frame f;
  fbs::eth(f);
  if (ov6) fbs::ipv6(f, 11, 12);
  else fbs::ipv4(f, 0x4000, false, 11, 12);
  f.udp({33333, dport, 0, 0}, ucsum ? ofld::fb::L4Csum::Full : ofld::fb::L4Csum::Zero);
  f.raw(geneve_header(proto, opts), 0);
  if (proto == kTeb) f.raw(inner_eth, 0);
  else f.raw(Bytes(inner_eth.begin() + 14, inner_eth.end()), 0);
  return f.build();
}

core::Packet prepared(const Bytes& f, std::uint16_t mss, std::uint16_t geneve_port = wire::udpport::kGeneve) {
  wire::ParseOptions po;
  po.geneve_port = geneve_port;
  auto l = wire::parse_frame(f, wire::LinkType::Ethernet, po);
  EXPECT_TRUE(l);
  gso::PrepareOptions o;
  o.gso_size = mss;
  auto pr = gso::prepare_frame(f, l.value(), o);
  EXPECT_EQ(pr.status, gso::PrepareStatus::Gso) << pr.why;
  return std::move(pr.pkt);
}

// Every segment: outer IP lengths (+ IPv4 header checksum, ID advancing), outer UDP length and
// checksum (valid, or zero when the tunnel sends none), the Geneve header byte-identical to the
// super-packet's, inner IP lengths, inner TCP checksum valid, payload continuous.
void check_train(const Bytes& f, const std::vector<core::Packet>& segs, bool ov6, bool iv6,
                 bool inner_eth, std::size_t gh_len, bool ucsum, std::size_t mss,
                 std::size_t payload) {
  const std::size_t oip = 14, ol4 = oip + (ov6 ? 40 : 20), gh = ol4 + 8;
  const std::size_t iip = gh + gh_len + (inner_eth ? 14 : 0), il4 = iip + (iv6 ? 40 : 20);
  const std::size_t pay = il4 + 20;
  ASSERT_EQ(segs.size(), (payload + mss - 1) / mss);
  std::size_t off = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const Bytes b = segs[i].to_bytes();
    const std::size_t pl = std::min(mss, payload - off);
    ASSERT_EQ(b.size(), pay + pl) << i;
    if (!ov6) {
      EXPECT_EQ(load_be16(&b[oip + 2]), b.size() - oip);
      EXPECT_EQ(load_be16(&b[oip + 4]), 0x4000 + i);
      EXPECT_EQ(csum::ip_compute_csum(&b[oip], 20), 0);
    } else {
      EXPECT_EQ(load_be16(&b[oip + 4]), b.size() - oip - 40);
    }
    EXPECT_EQ(load_be16(&b[ol4 + 4]), b.size() - ol4) << "outer UDP length " << i;
    if (ucsum)
      EXPECT_TRUE(gso_test::l4_valid(&b[oip], ov6, &b[ol4], b.size() - ol4, 17)) << "outer UDP " << i;
    else
      EXPECT_EQ(load_be16(&b[ol4 + 6]), 0) << "no outer checksum " << i;
    EXPECT_TRUE(std::equal(b.begin() + long(gh), b.begin() + long(gh + gh_len), f.begin() + long(gh)))
        << "Geneve header and options copied unchanged " << i;
    if (!iv6) {
      EXPECT_EQ(load_be16(&b[iip + 2]), b.size() - iip);
      EXPECT_EQ(csum::ip_compute_csum(&b[iip], 20), 0);
    } else {
      EXPECT_EQ(load_be16(&b[iip + 4]), b.size() - iip - 40);
    }
    EXPECT_TRUE(gso_test::l4_valid(&b[iip], iv6, &b[il4], b.size() - il4, 6)) << "inner TCP " << i;
    EXPECT_TRUE(std::equal(b.begin() + long(pay), b.end(), f.begin() + long(pay + off)))
        << "payload " << i;
    off += pl;
  }
}

std::vector<core::Packet> seg(core::Packet p, core::Features feat, gso::GsoReason* why = nullptr) {
  auto dev = gso_test::device(feat);
  auto r = gso::gso_segment(std::move(p), feat, dev);
  if (why) *why = r.reason;
  return std::move(r.segs);
}

}  // namespace

// GN-6, X-31: an Ethernet-in-Geneve TSO super-packet over IPv4 and IPv6, inner IPv4 and IPv6,
// outer checksum on and off, with no options, a critical option, and the longest options
// (63 words), is segmented by a device without features into complete segments.
TEST(GsoGeneve, GN6_X31_EthernetInnerAllFamiliesAndOptionLengths) {
  for (bool ov6 : {false, true})
    for (bool iv6 : {false, true})
      for (bool ucsum : {true, false})
        for (unsigned words : {0u, 3u, 63u}) {
          gso_test::TcpSpec s;
          s.v6 = iv6;
          const Bytes opts = options_of(words, words == 3);
          const Bytes f = geneve_encap(gso_test::tcp_frame(s), ov6, ucsum, kTeb, opts);
          SCOPED_TRACE(::testing::Message() << ov6 << iv6 << ucsum << " words " << words);
          gso::GsoReason why{};
          auto segs = seg(prepared(f, 1000), {}, &why);
          ASSERT_EQ(why, gso::GsoReason::Ok) << offload::to_string(why);
          check_train(f, segs, ov6, iv6, true, 8 + words * 4, ucsum, 1000, s.payload);
        }
}

// GN-6: protocol type 0x0800 / 0x86DD — the IP packet right after the Geneve header (no
// Ethernet) — is segmented through that ethertype's hook.
TEST(GsoGeneve, GN6_BareIpInner) {
  for (bool ov6 : {false, true})
    for (bool iv6 : {false, true}) {
      gso_test::TcpSpec s;
      s.v6 = iv6;
      const Bytes f = geneve_encap(gso_test::tcp_frame(s), ov6, true, iv6 ? kIpv6 : kIpv4,
                                   options_of(10));
      SCOPED_TRACE(::testing::Message() << ov6 << iv6);
      gso::GsoReason why{};
      auto segs = seg(prepared(f, 1200), {}, &why);
      ASSERT_EQ(why, gso::GsoReason::Ok) << offload::to_string(why);
      check_train(f, segs, ov6, iv6, false, 8 + 40, true, 1200, s.payload);
    }
}

// GN-6 on another port: the generic UDP tunnel path (no Geneve hook) still finds the inner
// packet from inner_protocol, an Ethernet frame or a bare IP packet.
TEST(GsoGeneve, GN6_OtherPortTakesTheGenericUdpTunnelPath) {
  for (std::uint16_t proto : {kTeb, kIpv4}) {
    gso_test::TcpSpec s;
    const Bytes f = geneve_encap(gso_test::tcp_frame(s), false, true, proto, options_of(2), 7081);
    gso::GsoReason why{};
    auto segs = seg(prepared(f, 1000, 7081), {}, &why);
    ASSERT_EQ(why, gso::GsoReason::Ok) << offload::to_string(why);
    check_train(f, segs, false, false, proto == kTeb, 16, true, 1000, s.payload);
  }
}

// GN-6, C-30 (as VXLAN): a device with SG and HW checksum but no tunnel TSO gets the inner
// TCP checksum left PARTIAL (the one checksum it completes) and the outer UDP checksum computed
// by local checksum offload over the inner seed: once the inner field is finished, both are
// valid on the wire bytes.
TEST(GsoGeneve, GN6_C30_InnerPartialOuterLco) {
  gso_test::TcpSpec s;
  const Bytes f = geneve_encap(gso_test::tcp_frame(s), false, true, kTeb, options_of(4));
  gso::GsoReason why{};
  auto segs = seg(prepared(f, 1000), nf::SG | nf::HW_CSUM, &why);
  ASSERT_EQ(why, gso::GsoReason::Ok) << offload::to_string(why);
  ASSERT_EQ(segs.size(), 3u);
  const std::size_t ol4 = 14 + 20, iip = ol4 + 8 + 8 + 16 + 14, il4 = iip + 20;
  for (auto& p : segs) {
    ASSERT_EQ(p.ip_summed(), core::IpSummed::Partial);
    EXPECT_TRUE(p.encapsulation);
    EXPECT_EQ(p.csum_start_offset(), int(il4));
    p.linearize();
    ASSERT_EQ(core::checksum_help(p), core::PacketError::Ok);
    const Bytes b = p.to_bytes();
    EXPECT_TRUE(gso_test::l4_valid(&b[14], false, &b[ol4], b.size() - ol4, 17)) << "outer UDP (LCO)";
    EXPECT_TRUE(gso_test::l4_valid(&b[iip], false, &b[il4], b.size() - il4, 6));
  }
}

// GN-6: a header the hook cannot follow is refused with a reason, not segmented as garbage:
// version 1, and a protocol type that is neither TEB nor IP.
TEST(GsoGeneve, GN6_UnknownVersionOrProtocolRefused) {
  gso_test::TcpSpec s;
  Bytes f = geneve_encap(gso_test::tcp_frame(s), false, true, kTeb, {});
  core::Packet p = prepared(f, 1000);
  // Rewrite the Geneve header in the prepared packet: version 1.
  p.data()[14 + 20 + 8] = 0x40;
  gso::GsoReason why{};
  seg(std::move(p), {}, &why);
  EXPECT_EQ(why, gso::GsoReason::BadTunnel);
  core::Packet q = prepared(f, 1000);
  wire::store_be16(q.data() + 14 + 20 + 8 + 2, 0x88B5);
  seg(std::move(q), {}, &why);
  EXPECT_EQ(why, gso::GsoReason::BadTunnel);
}

// X-36 over Geneve (GN-3, GN-5, GN-6): a stream GRO aggregates (count 3) and GSO segments again
// at the same mss reproduces the three input frames byte for byte.
TEST(GsoGeneve, X36_GroThenGsoReproducesTheFrames) {
  for (bool ov6 : {false, true})
    for (unsigned words : {0u, 5u}) {
      std::vector<Bytes> in;
      for (int i = 0; i < 3; ++i) {
        gso_test::TcpSpec s;
        s.payload = 700;
        s.seq = 0x1000u + 700u * unsigned(i);
        s.ip_id = std::uint16_t(1000 + i);
        s.fill_seed = std::uint8_t(i + 1);
        ofld::fb::Frame f;
        ofld::fb::gso::eth(f);
        if (ov6) ofld::fb::gso::ipv6(f, 11, 12);
        else ofld::fb::gso::ipv4(f, std::uint16_t(0x4000 + i), false, 11, 12);
        f.udp({33333, wire::udpport::kGeneve, 0, 0}, ofld::fb::L4Csum::Full);
        f.raw(geneve_header(kTeb, options_of(words)), 0);
        f.raw(gso_test::tcp_frame(s), 0);
        in.push_back(f.build());
      }
      gro::EngineOptions o;
      o.config.udp_tunnels.push_back({wire::udpport::kGeneve, wire::udpport::kGeneve, false, false});
      auto agg = ofld::grotest::run(in, o);
      ASSERT_EQ(agg.size(), 1u);
      ASSERT_EQ(agg[0].gso.segs, 3);
      gso::GsoReason why{};
      auto segs = seg(std::move(agg[0]), {}, &why);
      ASSERT_EQ(why, gso::GsoReason::Ok) << offload::to_string(why);
      ASSERT_EQ(segs.size(), 3u);
      for (std::size_t i = 0; i < 3; ++i)
        EXPECT_EQ(segs[i].to_bytes(), in[i]) << "ov6 " << ov6 << " words " << words << " seg " << i;
    }
}

// ---- the capture tools, tshark as the witness -------------------------------------------------

namespace {

bool have_tshark() { return std::system("tshark -v >/dev/null 2>&1") == 0; }

std::string sh(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

struct TsharkCount {
  std::size_t frames = 0, good = 0, other = 0, not_present = 0;
  std::string bad_lines;
};

// tshark with IPv4/TCP/UDP checksum validation, Geneve decoded on udp.port 6081 (and
// `extra_port`): every checksum status of every frame (1 good, 3 not present; anything else
// is counted in `other` with the frame's line kept).
TsharkCount tshark_checksums(const std::string& path, std::uint16_t extra_port = 0) {
  std::string cmd = "tshark -r '" + path +
                    "' -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE"
                    " -o udp.check_checksum:TRUE -d udp.port==6081,geneve";
  if (extra_port) cmd += " -d udp.port==" + std::to_string(extra_port) + ",geneve";
  cmd += " -T fields -E occurrence=a -E aggregator=, -e frame.number -e frame.protocols"
         " -e ip.checksum.status -e tcp.checksum.status -e udp.checksum.status 2>/dev/null";
  TsharkCount c;
  std::istringstream in(sh(cmd));
  std::string line;
  while (std::getline(in, line)) {
    ++c.frames;
    std::size_t tab = line.find('\t');
    tab = line.find('\t', tab + 1);  // past frame.protocols
    bool bad = false;
    for (std::size_t i = tab + 1; i < line.size(); ++i) {
      const char ch = line[i];
      if (ch == '1') ++c.good;
      else if (ch == '3') ++c.not_present;
      else if (ch >= '0' && ch <= '9') { ++c.other; bad = true; }
    }
    if (bad) c.bad_lines += line + "\n";
  }
  return c;
}

std::string pcap_path(const char* f) { return std::string(OFLD_PCAP_DIR) + "/" + f; }

}  // namespace

// `ofld gso` over the public Geneve TSO captures (GN-6): tcpdump's gso-ipv6-geneve-ipv6 (one
// IPv6 / UDP 6081 / Geneve / Ethernet / IPv6 / TCP super-packet of 6790 payload bytes with
// partial checksums, MANIFEST.tsv: at mss 1428, 4 × 1428 + 1078 → 5 segments) and zeek's
// geneve-47101 (Geneve on loopback: its four inner super-segments, 2816, 1806, 14080 and 4358
// TCP payload bytes with partial inner checksums — the capture's other frames carry complete
// checksums, so the super-segments are taken out with tshark first: 2+2+10+4 = 18 segments).
// tshark, decoding Geneve on 6081, finds every IPv4, TCP and UDP checksum of the output good
// (zero outer UDP checksums are "not present").
TEST(GsoGeneve, GN6_PublicCapturesSegmentAndTsharkVerifies) {
  if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
  const std::string tmp = "/tmp/ofld_gso_geneve_test_" + std::to_string(::getpid());
  const std::string zeek_tso = tmp + "_zeek_tso.pcap";
  sh("tshark -r '" + pcap_path("zeek_geneve-47101.pcap") +
     "' -d udp.port==6081,geneve -Y 'tcp.len > 1428' -F pcap -w '" + zeek_tso + "' 2>/dev/null");
  ASSERT_EQ(io::read_pcap(zeek_tso).records.size(), 4u) << "the four super-segments";
  struct C {
    std::string file;
    std::size_t segments;
  } cases[] = {{pcap_path("tcpdump_gso-ipv6-geneve-ipv6.pcap"), 5}, {zeek_tso, 18}};
  for (const auto& c : cases) {
    tools::GsoToolOptions o;
    o.in = c.file;
    o.out = tmp + "_out.pcap";
    o.mss = 1428;
    o.csum_partial = true;
    auto s = tools::run_gso_pcap(o);
    EXPECT_EQ(s.dropped, 0u) << c.file << tools::gso_summary_text(s);
    EXPECT_EQ(s.gso_frames, s.frames_in) << c.file << tools::gso_summary_text(s);
    EXPECT_EQ(s.segments, c.segments) << c.file;
    EXPECT_EQ(s.passed, 0u) << c.file << tools::gso_summary_text(s);
    const TsharkCount t = tshark_checksums(o.out);
    EXPECT_EQ(t.frames, s.frames_out) << c.file;
    EXPECT_EQ(t.other, 0u) << c.file << ":\n" << t.bad_lines;
    EXPECT_GE(t.good, 2 * s.frames_out) << c.file << ": at least the inner TCP and one more";
    std::remove(o.out.c_str());
  }
  std::remove(zeek_tso.c_str());
}

// `ofld gro --geneve-port 6081` over the segments of a synthetic Geneve TSO capture (GN-8,
// GN-3): they aggregate back into one frame whose checksums tshark finds good; without the
// Geneve socket the same segments are not merged.
TEST(GroGeneveTool, GN8_GroOfSegmentedCaptureAndTsharkVerifies) {
  const std::string in = "/tmp/ofld_gro_geneve_in_" + std::to_string(::getpid()) + ".pcap";
  const std::string seg_out = in + ".seg.pcap", gro_out = in + ".gro.pcap";
  gso_test::TcpSpec s;
  s.payload = 5000;
  const Bytes f = geneve_encap(gso_test::tcp_frame(s), false, true, kTeb, options_of(6, true));
  {
    io::PcapWriter w(in, io::CaptureLink::Ethernet);
    io::PcapRecord r;
    r.data = f;
    r.caplen = r.len = std::uint32_t(f.size());
    w.write(r);
    w.close();
  }
  tools::GsoToolOptions go;
  go.in = in;
  go.out = seg_out;
  go.mss = 1000;
  auto gs = tools::run_gso_pcap(go);
  ASSERT_EQ(gs.segments, 5u) << tools::gso_summary_text(gs);
  tools::GroPcapOptions o;
  auto plain = tools::run_gro_pcap(seg_out, gro_out, o);
  EXPECT_EQ(plain.frames_out, 5u) << "no Geneve socket: plain UDP, not merged";
  o.config.udp_tunnels.push_back({wire::udpport::kGeneve, wire::udpport::kGeneve, false, false});
  auto r = tools::run_gro_pcap(seg_out, gro_out, o);
  EXPECT_EQ(r.frames_in, 5u);
  EXPECT_EQ(r.frames_out, 1u);
  auto back = io::read_pcap(gro_out);
  ASSERT_EQ(back.records.size(), 1u);
  // GRO undoes GSO: the aggregate, its checksums completed, is the super-packet again.
  EXPECT_EQ(back.records[0].data, f);
  if (have_tshark()) {
    const TsharkCount t = tshark_checksums(gro_out);
    EXPECT_EQ(t.frames, 1u);
    EXPECT_EQ(t.other, 0u) << t.bad_lines;
    EXPECT_EQ(t.good, 4u) << "outer IPv4, outer UDP, inner IPv4, inner TCP";
  }
  for (const auto& p : {in, seg_out, gro_out}) std::remove(p.c_str());
}

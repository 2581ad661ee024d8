// Differential test of the GSO engine's fast paths (GsoOptions::fast_path: skb_segment's SG loop and
// the tight TCP / IPv4 / IPv6 rewrite loops) against the general path, which is the
// reference: every input runs through the engine twice, fast paths on and off, and every
// output segment must agree byte for byte, in its byte layout (head vs. fragment references)
// and in all metadata (checksum state, header positions, gso fields), and the counters must
// agree too. Nothing here asserts ofld's own output as an expected value: the expected value
// is what the general path produces for the same input (and the general path itself is held
// to the spec and the kernel by the other GSO tests).
//
// Rules exercised: X-5 (sg/csum per feature set and L3 protocol), X-7 (headers copied, head
// payload copied, page frags referenced), X-8/X-9 (copy / copy-and-sum / SG-then-sum: the
// fast path must step aside), X-10 (GSO_PARTIAL outputs), X-13 (too many frags per segment),
// X-14/X-15 (checksum CB), X-16/X-17 (PARTIAL or reseeded input), X-20 (device TSO),
// X-21 (seq, FIN/PSH/CWR, per-length seeds), X-24/X-25 (IDs, fixed-ID, tot_len, header
// checksum), X-27 (IPv6 payload_len, extension headers copied), X-28/X-29 (USO segments
// built by the same fast path), X-31/X-33/X-34 (tunnel outers over fast inner segments).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "gso_test_util.hpp"
#include "packet_compare.hpp"

namespace {

using namespace gso_test;
namespace core = ofld::core;
namespace gso = ofld::gso;
namespace nf = ofld::core::netif_f;

enum class Layout { Head, Frags, Mixed, SplitHeaders };

// Re-lay `p` (a linear packet from prepare(), data() at the frame start) out as `lay`
// says: the head holds `headlen` bytes, the rest sits in fragments of random sizes, each in
// its own buffer with random slack around it (non-zero offsets), sometimes two slices of one
// buffer. Metadata carried over as is (positions are relative to the same origin).
core::Packet relayout(const core::Packet& p, Layout lay, std::size_t payload_off, std::mt19937& rng) {
  const Bytes b = p.to_bytes();
  std::size_t headlen = b.size();
  if (lay == Layout::Frags) headlen = payload_off;
  if (lay == Layout::Mixed)
    headlen = payload_off + std::uniform_int_distribution<std::size_t>(1, b.size() - payload_off - 1)(rng);
  if (lay == Layout::SplitHeaders)  // headers partly in frags: the hooks pull them
    headlen = std::uniform_int_distribution<std::size_t>(14, payload_off - 1)(rng);
  core::Packet q = core::Packet::from_bytes({b.data(), headlen});
  q.meta() = p.meta();
  const int style = std::uniform_int_distribution<int>(0, 3)(rng);
  std::size_t off = headlen;
  while (off < b.size()) {
    std::size_t n;
    switch (style) {
      case 0: n = 4096; break;                                                   // socket pages
      case 1: n = std::uniform_int_distribution<std::size_t>(1, 6000)(rng); break;
      case 2: n = std::uniform_int_distribution<std::size_t>(1, 300)(rng); break;  // tiny
      default: n = std::uniform_int_distribution<std::size_t>(500, 20000)(rng); break;
    }
    n = std::min(n, b.size() - off);
    const std::size_t pre = std::uniform_int_distribution<std::size_t>(0, 9)(rng);
    const bool two = n > 1 && std::uniform_int_distribution<int>(0, 3)(rng) == 0;
    auto buf = core::Buffer::create(pre + n + 5);
    std::copy(b.begin() + std::ptrdiff_t(off), b.begin() + std::ptrdiff_t(off + n), buf->bytes.begin() + std::ptrdiff_t(pre));
    if (two) {  // two adjacent slices of one buffer
      const std::size_t h = n / 2;
      EXPECT_EQ(q.add_frag(buf, pre, h), core::PacketError::Ok);
      EXPECT_EQ(q.add_frag(buf, pre + h, n - h), core::PacketError::Ok);
    } else {
      EXPECT_EQ(q.add_frag(buf, pre, n), core::PacketError::Ok);
    }
    off += n;
  }
  EXPECT_EQ(q.to_bytes(), b);
  return q;
}

using ofld::testutil::expect_same_meta;

using ofld::testutil::expect_same_counters;

// One batch for every differential run, so its storage is reused across sizes and forms (as
// a caller keeps one).
core::SegmentBatch& shared_batch() {
  static core::SegmentBatch b;
  return b;
}
// Runs whose batch came out in the slab form, and their segments; the last run's form.
std::size_t g_slab_runs = 0, g_slab_segs = 0;
bool g_last_slab = false;

// gso_segment_batch() on `in` against gso_segment()'s packets `ref` (reason, counters `cref`):
// the same segments, byte for byte, piece by piece (the slab's headers are the packet's head,
// its slices the packet's fragments: same buffers and slices), with the same metadata.
void expect_batch_matches(const core::Packet& in, core::Features f, const core::Device& dev,
                          const gso::GsoResult& ref, const gso::GsoCounters& cref,
                          const std::string& where) {
  core::SegmentBatch& b = shared_batch();
  gso::GsoCounters cb;
  const gso::GsoBatchResult r = gso::gso_segment_batch(in.clone(), f, dev, b, &cb);
  EXPECT_EQ(r.reason, ref.reason) << where << " (batch)";
  EXPECT_EQ(r.hw, ref.hw) << where << " (batch)";
  expect_same_counters(cb, cref, where + " (batch)");
  ASSERT_EQ(b.size(), ref.segs.size()) << where << " (batch)";
  if (!r.ok()) {
    EXPECT_TRUE(b.empty()) << where << " (batch)";
  }
  g_last_slab = b.is_slab();
  if (b.is_slab()) {
    ++g_slab_runs;
    g_slab_segs += b.size();
  }
  ofld::testutil::expect_batch_equals(b, ref.segs, where + " (batch)");
}

// Run `in` through the engine with the fast paths on and off and compare everything; and
// into a SegmentBatch (expect_batch_matches). Returns the number of segments produced.
std::size_t differential(const core::Packet& in, core::Features f, const core::Device& dev,
                         const std::string& where) {
  gso::GsoCounters cf, cg;
  gso::GsoResult rf = gso::gso_segment(in.clone(), f, dev, &cf, gso::GsoOptions{.fast_path = true});
  gso::GsoResult rg = gso::gso_segment(in.clone(), f, dev, &cg, gso::GsoOptions{.fast_path = false});
  EXPECT_EQ(rf.reason, rg.reason) << where;
  EXPECT_EQ(rf.hw, rg.hw) << where;
  expect_same_counters(cf, cg, where);
  expect_batch_matches(in, f, dev, rf, cf, where);
  EXPECT_EQ(rf.segs.size(), rg.segs.size()) << where;
  if (rf.segs.size() != rg.segs.size()) return 0;
  for (std::size_t i = 0; i < rf.segs.size(); ++i) {
    const core::Packet& a = rf.segs[i];
    const core::Packet& b = rg.segs[i];
    const std::string w = where + " seg " + std::to_string(i);
    EXPECT_EQ(a.to_bytes(), b.to_bytes()) << w;
    EXPECT_EQ(a.data_pos(), b.data_pos()) << w;
    EXPECT_EQ(a.headroom(), b.headroom()) << w;
    EXPECT_EQ(a.headlen(), b.headlen()) << w;
    EXPECT_EQ(a.len(), b.len()) << w;
    EXPECT_EQ(a.frag_list().size(), b.frag_list().size()) << w;
    EXPECT_EQ(a.nr_frags(), b.nr_frags()) << w;
    if (a.nr_frags() == b.nr_frags())
      for (std::size_t k = 0; k < a.nr_frags(); ++k) {  // same buffers, same slices
        EXPECT_EQ(a.frags()[k].buf.get(), b.frags()[k].buf.get()) << w << " frag " << k;
        EXPECT_EQ(a.frags()[k].off, b.frags()[k].off) << w << " frag " << k;
        EXPECT_EQ(a.frags()[k].len, b.frags()[k].len) << w << " frag " << k;
      }
    expect_same_meta(a.meta(), b.meta(), w);
  }
  return rf.segs.size();
}

const core::Features kFeatureSets[] = {
    nf::SG | nf::HW_CSUM,
    nf::SG | nf::IP_CSUM,
    nf::SG | nf::IPV6_CSUM,
    nf::SG | nf::IP_CSUM | nf::IPV6_CSUM,
    nf::SG,
    nf::HW_CSUM,
    nf::IP_CSUM,
    core::Features{},
    nf::SG | nf::HW_CSUM | nf::GSO_PARTIAL,
    nf::SG | nf::HW_CSUM | nf::TSO | nf::TSO6,
    nf::SG | nf::HW_CSUM | nf::GSO_UDP_TUNNEL | nf::GSO_UDP_TUNNEL_CSUM | nf::GSO_GRE,
    nf::SG | nf::HW_CSUM | nf::TSO_MANGLEID,
};

struct Case {
  Bytes frame;
  std::uint16_t mss;
  std::uint16_t gue_port = 0;
  bool v6 = false;
  std::string what;
};

Case random_tcp(std::mt19937& rng, bool allow_tunnel) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  TcpSpec s;
  s.v6 = pick(0, 1) == 1;
  s.tcp_options.assign(std::size_t(pick(0, 10)) * 4, 0x01);  // NOPs, 0..40 bytes of options
  if (!s.tcp_options.empty()) s.tcp_options[0] = std::uint8_t(pick(0, 255));
  if (s.v6 && pick(0, 3) == 0) {  // hop-by-hop options header, 8 bytes (X-27, K-8)
    s.v6_ext = {6, 0, 1, 4, 0, 0, 0, 0};
    s.v6_ext_type = 0;
  }
  std::uint8_t flags = 0x10;  // ACK
  if (pick(0, 1)) flags |= 0x08;  // PSH
  if (pick(0, 3) == 0) flags |= 0x01;  // FIN
  if (pick(0, 2) == 0) flags |= 0x80;  // CWR
  if (pick(0, 4) == 0) flags |= 0x40;  // ECE
  if (pick(0, 6) == 0) flags |= 0x20;  // URG
  s.flags = flags;
  s.seq = std::uint32_t(rng());
  s.ip_id = pick(0, 3) == 0 ? std::uint16_t(65535 - pick(0, 20)) : std::uint16_t(rng());
  s.df = pick(0, 4) != 0;
  s.fill_seed = std::uint8_t(rng());
  const int mss = pick(0, 3) == 0 ? pick(1, 200) : pick(200, 9000);
  const int max_pay = 60000 - 200;
  int segs_wanted = pick(2, 80);
  s.payload = std::size_t(std::min(max_pay, mss * segs_wanted - pick(0, mss - 1)));
  if (s.payload <= std::size_t(mss)) s.payload = std::size_t(mss) + 1;
  Case c;
  c.mss = std::uint16_t(mss);
  c.v6 = s.v6;
  if (pick(0, 5) == 0) {  // USO goes through skb_segment's fast path too
    c.frame = udp_frame(s.v6, s.payload, s.fill_seed);
    c.what = std::string(s.v6 ? "udp6" : "udp4") + " mss " + std::to_string(mss) + " payload " +
             std::to_string(s.payload);
  } else {
    c.frame = tcp_frame(s);
    c.what = std::string(s.v6 ? "tcp6" : "tcp4") + " mss " + std::to_string(mss) + " payload " +
             std::to_string(s.payload) + " opts " + std::to_string(s.tcp_options.size()) +
             " flags " + std::to_string(flags);
  }
  if (allow_tunnel && pick(0, 2) == 0) {
    const int k = pick(0, 3);
    const bool ov6 = pick(0, 1) == 1;
    if (k == 3) {
      c.frame = ipip_encap(c.frame, ov6);
      c.what += " ipip";
    } else {
      const Outer kind = k == 0 ? Outer::Vxlan : k == 1 ? Outer::Gue : Outer::Gre;
      const bool udp_csum = pick(0, 1) == 1;
      c.frame = encap(c.frame, kind, ov6, udp_csum, /*gre_csum=*/pick(0, 1) == 1,
                      /*gre_teb=*/pick(0, 1) == 1, /*rco=*/kind == Outer::Vxlan && pick(0, 3) == 0);
      if (kind == Outer::Gue) c.gue_port = 6080;
      c.what += k == 0 ? " vxlan" : k == 1 ? " gue" : " gre";
      c.what += udp_csum ? " csum" : "";
    }
    c.what += ov6 ? " outer6" : " outer4";
  }
  return c;
}


void run_random(std::uint32_t seed, int cases, bool tunnels) {
  std::mt19937 rng(seed);
  std::size_t total_segs = 0, fast_eligible = 0, tunnel_slabs = 0;
  const std::size_t slab_before = g_slab_runs;
  for (int n = 0; n < cases; ++n) {
    Case c = random_tcp(rng, tunnels);
    core::Packet p = prepare(c.frame, c.mss, c.gue_port);
    ASSERT_TRUE(p.is_gso()) << c.what;
    ASSERT_EQ(p.data_pos(), 0) << c.what;
    const std::size_t poff = payload_offset(p);
    ASSERT_GT(poff, 0u) << c.what;
    const Layout lay = static_cast<Layout>(std::uniform_int_distribution<int>(0, 3)(rng));
    core::Packet q = relayout(p, lay, poff, rng);
    // sometimes the input is not PARTIAL (the TCP hook reseeds it).
    const bool not_partial = std::uniform_int_distribution<int>(0, 5)(rng) == 0 &&
                             !(q.gso.type & (core::skb_gso::UDP_TUNNEL | core::skb_gso::GRE |
                                             core::skb_gso::IPXIP4 | core::skb_gso::IPXIP6));
    if (not_partial) q.csum = core::CsumNone{};
    // fixed-ID variants (plain packets: the 6.12 bit; tunnels: inner/outer bits).
    const int fid = std::uniform_int_distribution<int>(0, 5)(rng);
    if (fid == 1) q.gso.type |= core::skb_gso::TCP_FIXEDID;
    if (fid == 2) q.gso.type |= core::skb_gso::TCP_FIXEDID_INNER;
    if (fid == 3) q.gso.type |= core::skb_gso::TCP_FIXEDID_OUTER;
    if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) q.gso.type |= core::skb_gso::TCP_ECN;
    const core::Features f =
        kFeatureSets[std::uniform_int_distribution<std::size_t>(0, std::size(kFeatureSets) - 1)(rng)];
    const core::Device dev = f.has(nf::GSO_PARTIAL) ? partial_device(f, nf::GSO_UDP_TUNNEL | nf::GSO_UDP_TUNNEL_CSUM)
                                                    : device(f);
    if (f.has(nf::SG) && !f.has(nf::TSO)) ++fast_eligible;
    const std::string where = "case " + std::to_string(n) + " (" + c.what + " layout " +
                              std::to_string(int(lay)) + " features 0x" + [&] {
                                char h[20];
                                std::snprintf(h, sizeof h, "%llx", (unsigned long long)f.bits);
                                return std::string(h);
                              }() + ")";
    total_segs += differential(q, f, dev, where);
    if (::testing::Test::HasFailure()) return;  // one failing case is enough to read
    if (g_last_slab && (c.what.find(" vxlan") != std::string::npos || c.what.find(" gue") != std::string::npos))
      ++tunnel_slabs;
  }
  EXPECT_GT(total_segs, std::size_t(cases));  // the cases really segment
  EXPECT_GT(fast_eligible, std::size_t(cases) / 4);
  // Slabs compared: plain TCP, and TCP in a UDP tunnel (VXLAN, GUE) with the inner checksum
  // left to the device.
  EXPECT_GT(g_slab_runs - slab_before, std::size_t(cases) / 20);
  if (tunnels) {
    EXPECT_GT(tunnel_slabs, std::size_t(cases) / 100);
  }
}

TEST(GsoFastPath, X7_X21_X25_X27_RandomTcpPlainDifferential) { run_random(0x5eed0001u, 700, false); }

TEST(GsoFastPath, X31_X33_X34_RandomTcpInTunnelsDifferential) { run_random(0x5eed0002u, 500, true); }

// TCP in a UDP tunnel (X-31, C-30) into a batch: VXLAN and GUE, every outer × inner family,
// outer checksum on and off, fixed-ID variants, several mss with equal and short last
// segments, payload in fragments, for devices that leave the inner checksum to the hardware.
// Every run takes the slab form and equals the packet path (differential: the fast and
// general paths, and the batch against them, byte for byte with metadata and counters).
TEST(GsoFastPath, X31_C30_TunnelSlabsDifferential) {
  std::mt19937 rng(31);
  std::size_t runs = 0, slabs = 0;
  for (const Outer kind : {Outer::Vxlan, Outer::Gue})
    for (bool ov6 : {false, true})
      for (bool iv6 : {false, true})
        for (bool ucs : {false, true})
          for (std::size_t mss : {88, 536, 1400, 1448})
            for (int fid : {0, 1, 2}) {
              TcpSpec s;
              s.v6 = iv6;
              s.payload = mss * 7 + (fid == 1 ? 0 : mss / 3);  // equal or short last segment
              s.flags = 0x18 | 0x80;
              Bytes f = encap(tcp_frame(s), kind, ov6, ucs);
              core::Packet p = prepare(f, std::uint16_t(mss), kind == Outer::Gue ? 6080 : 0);
              ASSERT_TRUE(p.is_gso());
              if (fid == 1) p.gso.type |= core::skb_gso::TCP_FIXEDID_INNER;
              if (fid == 2) p.gso.type |= core::skb_gso::TCP_FIXEDID_OUTER;
              core::Packet q = relayout(p, Layout::Frags, payload_offset(p), rng);
              for (const core::Features feat : {nf::SG | nf::HW_CSUM, nf::SG | nf::IP_CSUM | nf::IPV6_CSUM}) {
                const std::string where = std::string(kind == Outer::Vxlan ? "vxlan" : "gue") +
                                          (ov6 ? " outer6" : " outer4") + (iv6 ? " inner6" : " inner4") +
                                          (ucs ? " csum" : "") + " mss " + std::to_string(mss) +
                                          " fid " + std::to_string(fid) + " feat 0x" + std::to_string(feat.bits);
                const std::size_t n = differential(q, feat, device(feat), where);
                ASSERT_FALSE(::testing::Test::HasFailure()) << where;
                ++runs;
                // Taken wherever the run succeeds (random fragments may exceed MAX_SKB_FRAGS
                // per segment: X-13 fails both paths alike) and the inner checksum stays
                // PARTIAL (HW_CSUM, or the inner family's own csum feature).
                if (n > 0) {
                  EXPECT_GE(n, 7u) << where;
                  EXPECT_EQ(g_last_slab, feat.has(nf::HW_CSUM) || !iv6 || feat.has(nf::IPV6_CSUM)) << where;
                }
                slabs += g_last_slab;
              }
            }
  EXPECT_EQ(runs, 2u * 2 * 2 * 2 * 4 * 3 * 2);
  EXPECT_GE(slabs, runs / 2);
}

// The bench's shape (64 KB TCPv4, payload in 4 KiB pages, SG+HW_CSUM) for every mss that
// gives 2..64 segments, IPv4 and IPv6, with and without head payload.
// The batch's slab form is taken exactly where the payload lies all in fragments (Frags)
// and the run succeeds (tiny fragments may exceed MAX_SKB_FRAGS per segment, X-13).
TEST(GsoFastPath, X7_X21_SocketShapedSuperPacketsDifferential) {
  std::mt19937 rng(7);
  std::size_t slabs = 0;
  for (bool v6 : {false, true})
    for (std::size_t mss : {536, 1000, 1220, 1440, 1448, 4096, 8948})
      for (Layout lay : {Layout::Frags, Layout::Mixed}) {
        TcpSpec s;
        s.v6 = v6;
        s.payload = std::min<std::size_t>(mss * 44, 60000);
        s.flags = 0x18 | 0x80;  // ACK PSH CWR
        core::Packet p = prepare(tcp_frame(s), std::uint16_t(mss));
        core::Packet q = relayout(p, lay, payload_offset(p), rng);
        const std::size_t n = differential(q, nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM),
                                           std::string(v6 ? "v6" : "v4") + " mss " + std::to_string(mss));
        EXPECT_EQ(g_last_slab, lay == Layout::Frags && n > 0) << (v6 ? "v6" : "v4") << " mss " << mss;
        slabs += g_last_slab;
      }
  EXPECT_GE(slabs, 7u);
}

// The same shapes through every construction mode of skb_segment's fast loop: X-8's plain
// copy (HW_CSUM, no SG) and copy-and-sum (no features), X-9's reference-then-sum (SG, no
// checksum offload): same bytes, checksums, checksum state and mode counters as the general
// loop.
TEST(GsoFastPath, X8_X9_SocketShapedSuperPacketsEveryModeDifferential) {
  std::mt19937 rng(8);
  for (core::Features f : {core::Features{nf::HW_CSUM}, core::Features{}, core::Features{nf::SG},
                           core::Features{nf::SG | nf::IP_CSUM}, core::Features{nf::IP_CSUM}})
    for (bool v6 : {false, true})
      for (std::size_t mss : {536, 1001, 1448, 4096})
        for (Layout lay : {Layout::Frags, Layout::Mixed, Layout::Head}) {
          TcpSpec s;
          s.v6 = v6;
          s.payload = std::min<std::size_t>(mss * 44 + 7, 60000);
          s.flags = 0x18 | 0x80;  // ACK PSH CWR
          core::Packet p = prepare(tcp_frame(s), std::uint16_t(mss));
          core::Packet q = relayout(p, lay, payload_offset(p), rng);
          differential(q, f, device(f),
                       std::string(v6 ? "v6" : "v4") + " mss " + std::to_string(mss) +
                           " layout " + std::to_string(int(lay)) + " features 0x" +
                           std::to_string(f.bits));
          if (::testing::Test::HasFailure()) return;
        }
}

// more than MAX_SKB_FRAGS fragments in one segment fails the same way on both paths
// (reason and counters), however many segments were built before.
TEST(GsoFastPath, X13_TooManyFragsSameFailure) {
  TcpSpec s;
  s.payload = 20000;
  core::Packet p = prepare(tcp_frame(s), 4000);
  const Bytes b = p.to_bytes();
  const std::size_t poff = payload_offset(p);
  core::Packet q = core::Packet::from_bytes({b.data(), poff});
  q.meta() = p.meta();
  for (std::size_t off = poff; off < b.size(); off += 100)
    ASSERT_EQ(q.add_frag(core::Buffer::make({b.data() + off, std::min<std::size_t>(100, b.size() - off)}), 0,
                         std::min<std::size_t>(100, b.size() - off)),
              core::PacketError::Ok);
  differential(q, nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM), "x13");
  gso::GsoCounters c;
  auto r = gso::gso_segment(q.clone(), nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM), &c);
  EXPECT_EQ(r.reason, gso::GsoReason::TooManyFrags);  // 40 frags per 4000-byte segment
}

}  // namespace

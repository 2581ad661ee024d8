// gso_segment_batch against gso_segment, adversarially:
// random TCP frames (IPv4 options, IPv6 extension headers and the BIG TCP jumbo hop-by-hop
// header, 0-2 VLAN tags, TCP options, payload 1..65535, mss from 1 to 65535), random fragment
// layouts (shared buffers with gaps, tiny fragments past MAX_SKB_FRAGS, payload in the head),
// stray gso_type bits, NONE or RCO checksum states, feature sets with and without TSO or
// GSO_PARTIAL, the fast path on and off, an explicit registry. Every run's result, counters,
// bytes, pieces, slices and metadata must be gso_segment's (whose outputs the kernel tests
// hold to the kernel), and every buffer's reference count must be ours + the input's + the
// batch's after each run; the one batch is reused, moved, cleared twice and destroyed while
// holding slices between runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>

#include "gso_test_util.hpp"
#include "packet_compare.hpp"
#include "ofld/core/segment_batch.hpp"
#include "ofld/offload/virtio_net.hpp"

namespace {

using namespace gso_test;
namespace core = ofld::core;
namespace gso = ofld::gso;
namespace nf = ofld::core::netif_f;
namespace sg = ofld::core::skb_gso;
using ofld::testutil::expect_same_meta;

std::vector<std::span<const std::uint8_t>> pieces_of(const core::Packet& p) {
  std::vector<std::span<const std::uint8_t>> v;
  struct W {
    static void run(const core::Packet& p, std::vector<std::span<const std::uint8_t>>& v) {
      if (p.headlen()) v.push_back(p.head());
      for (const auto& f : p.frags())
        if (f.len) v.push_back(f.bytes());
      for (const auto& m : p.frag_list()) run(m, v);
    }
  };
  W::run(p, v);
  return v;
}

// Insert `n` option bytes (NOPs, then EOL) into an IPv4 header of an Ethernet frame at `l3`.
void add_ipv4_options(Bytes& f, std::size_t l3, std::size_t n) {
  Bytes opt(n, 1);
  opt.back() = 0;
  const std::size_t ihl = (f[l3] & 15) * 4;
  f.insert(f.begin() + long(l3 + ihl), opt.begin(), opt.end());
  f[l3] = std::uint8_t(0x40 | ((ihl + n) / 4));
  const std::uint16_t tot = std::uint16_t(ofld::wire::load_be16(&f[l3 + 2]) + n);
  ofld::wire::store_be16(&f[l3 + 2], tot);
  ofld::wire::store_be16(&f[l3 + 10], 0);
  ofld::wire::store_be16(&f[l3 + 10], ofld::csum::ip_compute_csum(&f[l3], ihl + n));
}

// Insert VLAN tags after the MACs.
void add_vlans(Bytes& f, int tags, std::mt19937& rng) {
  for (int t = 0; t < tags; ++t) {
    const std::uint16_t tpid = (t == 0 && tags == 2) ? 0x88a8 : 0x8100;
    Bytes tag{std::uint8_t(tpid >> 8), std::uint8_t(tpid), std::uint8_t(rng() & 0x0f),
              std::uint8_t(rng())};
    // tag goes before the current ethertype at 12: [tpid][tci] then the old type follows
    f.insert(f.begin() + 12, tag.begin(), tag.end());
  }
}

struct Built {
  core::Packet pkt;
  std::vector<core::BufferRef> bufs;
};

// Relayout `p` (linear, `hdr` header bytes) with the payload in random fragments.
Built relayout(const core::Packet& p, std::size_t hdr, std::size_t headpay, std::mt19937& rng,
               int style) {
  Built b;
  const Bytes all = p.to_bytes();
  const std::size_t h = std::min(all.size(), hdr + headpay);
  b.pkt = core::Packet::from_bytes({all.data(), h});
  b.pkt.meta() = p.meta();
  // a pool of buffers; every fragment placed at a cursor + random gap in one of them
  const int npool = 1 + int(rng() % 3);
  std::vector<std::size_t> cursor(std::size_t(npool), 0);
  for (int i = 0; i < npool; ++i) b.bufs.push_back(core::Buffer::create(all.size() * 2 + 70000));
  std::size_t off = h;
  while (off < all.size()) {
    std::size_t n;
    switch (style) {
      case 0: n = 4096; break;
      case 1: n = 1 + rng() % 200; break;        // tiny: X-13 likely
      case 2: n = 1 + rng() % 6000; break;
      default: n = (rng() % 4 == 0) ? 1 + rng() % 50 : 1 + rng() % 20000; break;
    }
    n = std::min(n, all.size() - off);
    const std::size_t k = rng() % std::size_t(npool);
    const std::size_t gap = (rng() % 3 == 0) ? rng() % 17 : 0;
    std::size_t at = cursor[k] + gap;
    if (at + n > b.bufs[k]->bytes.size()) at = 0;  // reuse the start (two slices overlap)
    std::memcpy(b.bufs[k]->bytes.data() + at, all.data() + off, n);
    // overlapping reuse would change bytes earlier frags reference: only allow at end
    if (at == 0 && cursor[k] != 0) {
      // make a fresh buffer instead
      b.bufs.push_back(core::Buffer::create(n));
      std::memcpy(b.bufs.back()->bytes.data(), all.data() + off, n);
      EXPECT_EQ(b.pkt.add_frag(b.bufs.back(), 0, n), core::PacketError::Ok);
    } else {
      cursor[k] = at + n;
      EXPECT_EQ(b.pkt.add_frag(b.bufs[k], at, n), core::PacketError::Ok);
    }
    off += n;
  }
  return b;
}

struct Case {
  Bytes frame;
  std::size_t payload;
  std::uint16_t mss;
  std::string desc;
};

Case random_case(std::mt19937& rng) {
  Case c;
  TcpSpec s;
  s.v6 = rng() % 2;
  const int pl = int(rng() % 10);
  s.payload = pl < 3 ? 1 + rng() % 3000 : pl < 8 ? 1 + rng() % 64000 : 60000 + rng() % 5535;
  s.flags = std::uint8_t(0x10 | (rng() % 2 ? 0x08 : 0) | (rng() % 4 == 0 ? 0x80 : 0) |
                         (rng() % 8 == 0 ? 0x01 : 0) | (rng() % 8 == 0 ? 0x40 : 0));
  s.df = rng() % 3 != 0;
  s.ip_id = std::uint16_t(rng());
  s.seq = std::uint32_t(rng());
  if (rng() % 3 == 0) s.tcp_options = Bytes(4 * (1 + rng() % 10), 1);
  if (s.v6 && rng() % 3 == 0) {
    // destination options (8 bytes, PadN) or routing header type 0 with segleft 0
    const int k = int(rng() % 3);
    s.v6_ext_type = k == 0 ? 60 : 0;
    s.v6_ext = {6, 0, 1, 4, 0, 0, 0, 0};
    if (k == 2) s.v6_ext = {6, 0, 0xC2, 4, 0, 0, 0, 0};  // BIG TCP jumbo HBH: removed by GSO
  }
  c.frame = tcp_frame(s);
  const std::size_t l3 = 14;
  if (!s.v6 && rng() % 3 == 0) add_ipv4_options(c.frame, l3, 4 * (1 + rng() % 10));
  const int tags = rng() % 4 == 0 ? 1 + int(rng() % 2) : 0;
  if (tags) add_vlans(c.frame, tags, rng);
  c.payload = s.payload;
  const int m = int(rng() % 12);
  switch (m) {
    case 0: c.mss = 1 + rng() % 3; break;
    case 1: c.mss = std::uint16_t(std::max<std::size_t>(1, s.payload / (2 + rng() % 5))); break;
    case 2: c.mss = 65535; break;
    case 3: c.mss = std::uint16_t(std::max<std::size_t>(1, s.payload - 1)); break;
    case 4: c.mss = std::uint16_t(std::min<std::size_t>(65535, s.payload)); break;
    default: c.mss = std::uint16_t(std::vector<int>{536, 1000, 1220, 1448, 1460, 4096, 8948, 9000}[rng() % 8]);
  }
  if (c.mss == 0) c.mss = 1;
  if (s.payload > 40000 && c.mss < 8) c.mss = std::uint16_t(8 + rng() % 100);  // keep it quick
  c.desc = std::string(s.v6 ? "v6" : "v4") + " pl " + std::to_string(s.payload) + " mss " +
           std::to_string(c.mss) + " tags " + std::to_string(tags) + " ext " +
           std::to_string(s.v6_ext.size()) + " topt " + std::to_string(s.tcp_options.size());
  return c;
}

core::SegmentBatch& shared() {
  static core::SegmentBatch b;
  return b;
}

bool g_no_shuffle = false;
std::size_t g_slab = 0, g_cases = 0, g_ok = 0;

using ofld::testutil::expect_same_counters;

// One input: compare and check references.
void check_one(const core::Packet& in, const std::vector<core::BufferRef>& bufs, core::Features f,
               const core::Device& dev, bool fast, bool reg, const std::string& where,
               std::mt19937& rng) {
  ++g_cases;
  gso::GsoCounters cg, cf, cb;
  gso::GsoOptions o;
  o.fast_path = fast;
  if (reg) o.registry = &ofld::offload::builtin_registry();
  auto rg = gso::gso_segment(in.clone(), f, dev, &cg, gso::GsoOptions{.fast_path = false});
  auto rf = gso::gso_segment(in.clone(), f, dev, &cf, o);
  core::SegmentBatch& b = shared();
  const auto r = gso::gso_segment_batch(in.clone(), f, dev, b, &cb, o);
  ASSERT_EQ(rg.reason, rf.reason) << where;
  ASSERT_EQ(r.reason, rf.reason) << where;
  EXPECT_EQ(r.hw, rf.hw) << where;
  expect_same_counters(cb, cf, where + " batch vs fast");
  ASSERT_EQ(b.size(), rf.segs.size()) << where;
  if (!r.ok()) {
    EXPECT_TRUE(b.empty()) << where;
    EXPECT_FALSE(b.is_slab()) << where;
  } else {
    ++g_ok;
  }
  if (b.is_slab()) ++g_slab;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const core::Packet& a = rf.segs[i];
    const core::Packet& g = rg.segs[i];
    const std::string w = where + " seg " + std::to_string(i);
    ASSERT_EQ(b.len(i), a.len()) << w;
    ASSERT_EQ(b.to_bytes(i), a.to_bytes()) << w;
    ASSERT_EQ(b.to_bytes(i), g.to_bytes()) << w;
    expect_same_meta(b.meta(i), a.meta(), w);
    expect_same_meta(b.meta(i), g.meta(), w + " general");
    // pieces
    std::vector<std::span<const std::uint8_t>> pcs;
    b.for_each_piece(i, [&](std::span<const std::uint8_t> x) {
      EXPECT_FALSE(x.empty()) << w;
      pcs.push_back(x);
    });
    EXPECT_EQ(pcs.size(), b.piece_count(i)) << w;
    const auto want = pieces_of(a);
    ASSERT_EQ(pcs.size(), want.size()) << w;
    for (std::size_t k = 0; k < pcs.size(); ++k) {
      EXPECT_EQ(pcs[k].size(), want[k].size()) << w << " piece " << k;
      if (k > 0 && b.is_slab()) {  // payload slices point at the same bytes
        EXPECT_EQ(pcs[k].data(), want[k].data()) << w << " piece " << k;
      }
    }
    if (b.is_slab()) {
      ASSERT_EQ(b.slices(i).size(), a.nr_frags()) << w;
      EXPECT_EQ(a.headlen(), b.header_len()) << w;
      for (std::size_t k = 0; k < a.nr_frags(); ++k) {
        EXPECT_EQ(b.slices(i)[k].buf, a.frags()[k].buf.get()) << w;
        EXPECT_EQ(b.slices(i)[k].off, a.frags()[k].off) << w;
        EXPECT_EQ(b.slices(i)[k].len, a.frags()[k].len) << w;
      }
    } else {
      EXPECT_TRUE(b.slices(i).empty());
      EXPECT_TRUE(b.header(i).empty());
      EXPECT_EQ(b.header_len(), 0u);
    }
    if (rng() % 4 == 0) {
      const core::Packet q = b.to_packet(i);
      EXPECT_EQ(q.to_bytes(), a.to_bytes()) << w;
      expect_same_meta(q.meta(), a.meta(), w + " to_packet");
      EXPECT_EQ(q.data_pos(), a.data_pos()) << w;
      EXPECT_EQ(q.headlen(), a.headlen()) << w;
      EXPECT_EQ(q.nr_frags(), a.nr_frags()) << w;
    }
  }
  // references: drop everything but the batch; each buffer: ours + the batch's
  rg = {};
  rf = {};
  for (const auto& buf : bufs) {
    long n = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
      if (b.is_slab()) {
        for (const auto& s : b.slices(i)) n += s.buf == buf.get();
      } else {
        struct W {
          static long run(const core::Packet& p, const core::Buffer* x) {
            long c = 0;
            for (const auto& fr : p.frags()) c += fr.buf.get() == x;
            for (const auto& m : p.frag_list()) c += run(m, x);
            return c;
          }
        };
        n += W::run(b.packets()[i], buf.get());
      }
    }
    // `in` holds its own fragments too
    long own = 0;
    for (const auto& fr : in.frags()) own += fr.buf.get() == buf.get();
    EXPECT_EQ(buf.use_count(), 1 + own + n) << where;
  }
  // sometimes move the batch around, clear it twice
  switch (g_no_shuffle ? 5 : rng() % 6) {
    case 0: {
      core::SegmentBatch t(std::move(b));
      EXPECT_TRUE(b.empty());
      b = std::move(t);
      break;
    }
    case 1:
      b.clear();
      b.clear();
      break;
    case 2: {
      core::SegmentBatch t;
      t = std::move(b);
      break;  // destroyed holding the slices
    }
    default: break;  // kept into the next run (reused)
  }
}

void run_random(std::uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  for (int n = 0; n < cases; ++n) {
    Case c = random_case(rng);
    core::Packet p = prepare(c.frame, c.mss);
    if (!p.is_gso()) continue;
    const std::size_t hdr = p.len() - c.payload;
    const int style = int(rng() % 4);
    const std::size_t headpay = rng() % 8 == 0 ? rng() % 100 : 0;
    Built bt = relayout(p, hdr, headpay, rng, style);
    core::Packet& in = bt.pkt;
    std::string where = c.desc + " style " + std::to_string(style) + " headpay " +
                        std::to_string(headpay) + " case " + std::to_string(n);
    // gso_type bits
    const std::uint32_t extra[] = {sg::TCP_ECN, sg::TCP_FIXEDID, sg::TCP_FIXEDID_INNER,
                                   sg::TCP_FIXEDID_OUTER, sg::DODGY, sg::PARTIAL, sg::UDP_TUNNEL,
                                   sg::GRE, sg::IPXIP4, sg::TCP_ACCECN, sg::FRAGLIST, sg::UDP_L4,
                                   sg::TCPV4 | sg::TCPV6};
    if (rng() % 3 == 0) {
      const std::uint32_t e = extra[rng() % std::size(extra)];
      in.gso.type |= e;
      where += " +type " + std::to_string(e);
    }
    if (rng() % 6 == 0) {
      in.csum = core::CsumNone{};
      where += " csum none";
    }
    if (rng() % 12 == 0) {
      in.remcsum_offload = true;
      where += " rco";
    }
    if (rng() % 12 == 0) {
      in.tstamp = rng();
      in.vlan_present = true;
      in.vlan_tci = 7;
      in.vlan_proto = 0x8100;
    }
    core::Features f = nf::SG | nf::HW_CSUM;
    const int fs = int(rng() % 10);
    if (fs == 1) f = nf::SG | nf::IP_CSUM;
    if (fs == 2) f = nf::SG | nf::IPV6_CSUM;
    if (fs == 3) f = nf::SG;
    if (fs == 4) f = nf::HW_CSUM;
    if (fs == 5) f = nf::SG | nf::HW_CSUM | nf::TSO;
    if (fs == 6) f = nf::SG | nf::HW_CSUM | nf::TSO6;
    if (fs == 7) f = nf::SG | nf::IP_CSUM | nf::IPV6_CSUM | nf::TSO_ECN;
    core::Device dev = device(f);
    if (fs == 8) {
      dev = partial_device(nf::SG | nf::HW_CSUM, nf::TSO | nf::TSO6);
      f = dev.features;
    }
    where += " fs " + std::to_string(fs);
    const bool fast = rng() % 5 != 0;
    const bool reg = rng() % 4 == 0;
    check_one(in, bt.bufs, f, dev, fast, reg, where + (fast ? "" : " slow") + (reg ? " reg" : ""),
              rng);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(GsoBatch, X7_X13_X21_X25_X27_RandomFramesMatchGsoSegmentWithReferencesBalanced) {
  run_random(0xabc001u, 1500);
  shared().clear();
  EXPECT_GT(g_ok, 500u);    // the cases really segment
  EXPECT_GT(g_slab, 200u);  // and many of them into a slab
}

// BIG TCP's jumbo hop-by-hop header is removed from the segments (the frame start
// moves by 8 bytes); the slab form takes it, with and without two VLAN tags.
TEST(GsoBatch, X27_JumboHopByHopRemovedInTheSlab) {
  for (bool vlan : {false, true}) {
    TcpSpec s;
    s.v6 = true;
    s.payload = 20000;
    s.v6_ext_type = 0;
    s.v6_ext = {6, 0, 0xC2, 4, 0, 0, 0, 0};
    Bytes fr = tcp_frame(s);
    std::mt19937 rng(1);
    if (vlan) add_vlans(fr, 2, rng);
    core::Packet p = prepare(fr, 1448);
    ASSERT_TRUE(p.is_gso());
    Built bt = relayout(p, p.len() - s.payload, 0, rng, 0);
    const core::Features f = nf::SG | nf::HW_CSUM;
    g_no_shuffle = true;
    check_one(bt.pkt, bt.bufs, f, device(f), true, false, "jumbo", rng);
    g_no_shuffle = false;
    EXPECT_TRUE(shared().is_slab()) << "size " << shared().size() << " headlen " << bt.pkt.headlen() << " csum " << bt.pkt.csum.index() << " type " << bt.pkt.gso.type;
    if (shared().is_slab()) {
      EXPECT_EQ(shared().header_len(), (vlan ? 8u : 0u) + 14 + 40 + 20);
    }
    shared().clear();
  }
}

}  // namespace

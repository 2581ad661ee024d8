// The tunnel slab form of gso_segment_batch (TCP in a UDP tunnel / IP-in-IP, X-31, X-34)
// and the per-length LCO region sum (C-30): gso_segment_batch against gso_segment (the
// reference), byte for byte, piece by piece, metadata, counters and buffer reference counts,
// over many tunnel shapes (VXLAN with inner VLAN tags, Geneve with options and IP payloads,
// GUE, IP-in-IP), inner IPv4 options, IPv6 extension headers, fixed-ID variants, ECN, DODGY,
// and feature sets where hw_enc_features differ from features.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>

#include "gso_test_util.hpp"
#include "packet_compare.hpp"

namespace {

using namespace gso_test;
namespace core = ofld::core;
namespace gso = ofld::gso;
namespace nf = ofld::core::netif_f;
namespace wire = ofld::wire;
namespace fb = ofld::fb;
using ofld::testutil::expect_same_counters;
using ofld::testutil::expect_same_meta;

std::size_t g_slabs = 0, g_runs = 0, g_ok = 0;

// Put the bytes from payload_off on into page fragments of `frag` bytes (random when 0).
core::Packet to_frags(const core::Packet& p, std::size_t payload_off, std::mt19937& rng,
                      std::size_t frag = 0) {
  const Bytes b = p.to_bytes();
  core::Packet q = core::Packet::from_bytes({b.data(), payload_off});
  q.meta() = p.meta();
  for (std::size_t off = payload_off; off < b.size();) {
    std::size_t n = frag ? frag : std::uniform_int_distribution<std::size_t>(700, 9000)(rng);
    n = std::min(n, b.size() - off);
    const std::size_t pre = std::uniform_int_distribution<std::size_t>(0, 9)(rng);
    auto buf = core::Buffer::create(pre + n + 3);
    std::copy(b.begin() + std::ptrdiff_t(off), b.begin() + std::ptrdiff_t(off + n),
              buf->bytes.begin() + std::ptrdiff_t(pre));
    EXPECT_EQ(q.add_frag(buf, pre, n), core::PacketError::Ok);
    off += n;
  }
  EXPECT_EQ(q.to_bytes(), b);
  return q;
}

// gso_segment_batch(in) against gso_segment(in): everything. Returns whether it was a slab.
bool compare(const core::Packet& in, core::Features f, const core::Device& dev,
             const std::string& where) {
  gso::GsoCounters cr, cb;
  gso::GsoResult ref = gso::gso_segment(in.clone(), f, dev, &cr);
  std::map<const core::Buffer*, long> refs_ref;
  for (const auto& s : ref.segs)
    for (std::size_t k = 0; k < s.nr_frags(); ++k) refs_ref[s.frags()[k].buf.get()] = s.frags()[k].buf.use_count();
  core::SegmentBatch b;
  const gso::GsoBatchResult r = gso::gso_segment_batch(in.clone(), f, dev, b, &cb);
  ++g_runs;
  EXPECT_EQ(r.reason, ref.reason) << where;
  EXPECT_EQ(r.hw, ref.hw) << where;
  expect_same_counters(cb, cr, where);
  EXPECT_EQ(b.size(), ref.segs.size()) << where;
  if (b.size() != ref.segs.size()) return false;
  if (r.ok()) ++g_ok;
  ofld::testutil::expect_batch_equals(b, ref.segs, where);
  // Reference counts: the batch holds as many references on each buffer as the packets did
  // (both results alive: counts add; compare the batch's own with the packets' own).
  if (b.is_slab()) {
    std::map<const core::Buffer*, long> refs_batch;
    for (const auto& [buf, n] : refs_ref) (void)n, refs_batch[buf] = 0;
    std::map<const core::Buffer*, long> in_packets;
    for (const auto& s : ref.segs)
      for (std::size_t k = 0; k < s.nr_frags(); ++k) ++in_packets[s.frags()[k].buf.get()];
    std::map<const core::Buffer*, long> in_slab;
    for (std::size_t i = 0; i < b.size(); ++i)
      for (const auto& sl : b.slices(i)) ++in_slab[sl.buf];
    EXPECT_EQ(in_slab, in_packets) << where << " slice references";
    // The actual counts: the references the packets hold plus the ones the slab holds plus
    // the input's (in, alive in the caller).
    for (const auto& s : ref.segs)
      for (std::size_t k = 0; k < s.nr_frags(); ++k) {
        const core::Buffer* bb = s.frags()[k].buf.get();
        EXPECT_EQ(s.frags()[k].buf.use_count(), refs_ref[bb] + in_slab[bb]) << where << " use_count";
      }
  }
  const bool slab = b.is_slab();
  g_slabs += slab;
  b.clear();
  return slab;
}

// ---- frames ------------------------------------------------------------------------------

struct Shape {
  int tunnel = 0;          // 0 VXLAN, 1 Geneve TEB, 2 Geneve IP (ethertype), 3 GUE, 4 IP-in-IP
  bool outer_v6 = false;
  bool outer_vlan = false;
  int inner_vlans = 0;     // VXLAN / Geneve TEB: 0..2 tags in the inner Ethernet header
  bool inner_v6 = false;
  std::size_t ip4_opts = 0;   // inner IPv4 option bytes (multiple of 4)
  std::size_t ip6_ext = 0;    // inner IPv6 destination options header length (multiple of 8)
  std::size_t geneve_opt = 0; // Geneve option bytes (multiple of 4)
  std::size_t tcp_opts = 0;
  bool udp_csum = false;
  std::uint16_t ip_id = 1000;
  bool df = true;
  std::size_t payload = 3000;
  std::uint8_t flags = 0x18;
  std::string what() const {
    static const char* kT[] = {"vxlan", "geneve-teb", "geneve-ip", "gue", "ipip"};
    char b[256];
    std::snprintf(b, sizeof b, "%s o%s%s iv%d i%s ip4opt%zu ip6ext%zu gopt%zu tcpopt%zu csum%d id%u df%d pay%zu fl%02x",
                  kT[tunnel], outer_v6 ? "6" : "4", outer_vlan ? "+vlan" : "", inner_vlans,
                  inner_v6 ? "6" : "4", ip4_opts, ip6_ext, geneve_opt, tcp_opts, int(udp_csum),
                  unsigned(ip_id), int(df), payload, unsigned(flags));
    return b;
  }
};

Bytes inner_l3_tcp(fb::Frame& f, const Shape& s) {
  if (s.inner_v6) {
    wire::Ipv6Repr r;
    r.hop_limit = 64;
    r.saddr = fb::ip6(0xfd, 0, 1);
    r.daddr = fb::ip6(0xfd, 0, 2);
    f.ipv6(r);
    if (s.ip6_ext) {
      Bytes e(s.ip6_ext, 0);
      e[1] = std::uint8_t(s.ip6_ext / 8 - 1);
      e[2] = 1;  // PadN
      e[3] = std::uint8_t(s.ip6_ext - 4);
      f.raw(e, wire::ipproto::kDstOpts, /*next_at0=*/true);
    }
  } else {
    wire::Ipv4Repr r;
    r.id = s.ip_id;
    r.frag_off = s.df ? wire::ipv4::kDF : 0;
    r.ttl = 64;
    r.saddr = fb::ip4(192, 168, 1, 1);
    r.daddr = fb::ip4(192, 168, 1, 2);
    Bytes o(s.ip4_opts, 1);  // NOPs
    if (!o.empty()) o.back() = 0;  // EOL
    f.ipv4(r, fb::fill::kAll, o);
  }
  wire::TcpRepr t;
  t.source = 40000;
  t.dest = 5201;
  t.seq = 0xfffff000u;
  t.ack_seq = 1;
  t.flags = s.flags;
  t.window = 502;
  Bytes topt(s.tcp_opts, 1);
  f.tcp(t, fb::L4Csum::Full, 0, topt);
  f.payload(fb::pattern(s.payload, 5));
  return {};
}

Bytes build(const Shape& s) {
  fb::Frame f;
  f.eth(fb::mac(2), fb::mac(1));
  if (s.outer_vlan) f.vlan(7);
  if (s.outer_v6) {
    wire::Ipv6Repr r;
    r.hop_limit = 64;
    r.saddr = fb::ip6(0xfd, 0, 11);
    r.daddr = fb::ip6(0xfd, 0, 12);
    f.ipv6(r);
  } else {
    wire::Ipv4Repr r;
    r.id = 0x4000;
    r.ttl = 64;
    r.saddr = fb::ip4(10, 0, 0, 11);
    r.daddr = fb::ip4(10, 0, 0, 12);
    f.ipv4(r);
  }
  const auto l4c = s.udp_csum ? fb::L4Csum::Full : fb::L4Csum::Zero;
  switch (s.tunnel) {
    case 0:
    case 1: {
      if (s.tunnel == 0) {
        f.udp({33333, wire::udpport::kVxlan, 0, 0}, l4c);
        f.vxlan(wire::VxlanRepr{42, std::nullopt});
      } else {
        f.udp({33333, 6081, 0, 0}, l4c);
        Bytes g(8 + s.geneve_opt, 0);
        g[0] = std::uint8_t(s.geneve_opt / 4);
        g[2] = 0x65, g[3] = 0x58;
        g[6] = 42;
        for (std::size_t o = 0; o < s.geneve_opt; o += 4) {  // one option per word: class, type, len 0
          g[8 + o] = 0x01, g[8 + o + 1] = 0x02, g[8 + o + 2] = 0x80 | std::uint8_t(o), g[8 + o + 3] = 0;
        }
        f.raw(g, 0);
      }
      f.eth(fb::mac(4), fb::mac(3));
      for (int v = 0; v < s.inner_vlans; ++v)
        f.vlan(std::uint16_t(100 + v), v == 0 ? wire::ethertype::kQinQ : wire::ethertype::kVlan);
      inner_l3_tcp(f, s);
      break;
    }
    case 2: {
      f.udp({33333, 6081, 0, 0}, l4c);
      Bytes g(8 + s.geneve_opt, 0);
      g[0] = std::uint8_t(s.geneve_opt / 4);
      const std::uint16_t et = s.inner_v6 ? wire::ethertype::kIpv6 : wire::ethertype::kIpv4;
      g[2] = std::uint8_t(et >> 8), g[3] = std::uint8_t(et);
      g[6] = 42;
      for (std::size_t o = 0; o < s.geneve_opt; o += 4) {
        g[8 + o] = 0x01, g[8 + o + 1] = 0x02, g[8 + o + 2] = 0x80 | std::uint8_t(o), g[8 + o + 3] = 0;
      }
      f.raw(g, 0);
      inner_l3_tcp(f, s);
      break;
    }
    case 3:
      f.udp({33333, wire::udpport::kGue, 0, 0}, l4c);
      f.gue({});
      inner_l3_tcp(f, s);
      break;
    default:
      inner_l3_tcp(f, s);
      break;
  }
  return f.build();
}


core::Features rand_features(std::mt19937& rng) {
  static const core::Features kSets[] = {
      nf::SG | nf::HW_CSUM,
      nf::SG | nf::IP_CSUM,
      nf::SG | nf::IPV6_CSUM,
      nf::SG | nf::IP_CSUM | nf::IPV6_CSUM,
      nf::SG,
      nf::HW_CSUM,
      nf::SG | nf::HW_CSUM | nf::TSO_MANGLEID,
      nf::SG | nf::HW_CSUM | nf::GSO_PARTIAL,
      nf::SG | nf::HW_CSUM | nf::TSO | nf::TSO6,
  };
  return kSets[std::uniform_int_distribution<std::size_t>(0, std::size(kSets) - 1)(rng)];
}

core::Device rand_device(core::Features f, std::mt19937& rng) {
  core::Device d = device(f);
  switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
    case 0: d.hw_enc_features = nf::SG | nf::HW_CSUM; break;
    case 1: d.hw_enc_features = nf::SG | nf::IP_CSUM; break;
    case 2: d.hw_enc_features = nf::SG; break;
    case 3: d.hw_enc_features = core::Features{}; break;
    case 4: d = partial_device(f, nf::GSO_UDP_TUNNEL | nf::GSO_UDP_TUNNEL_CSUM); break;
    default: break;
  }
  return d;
}

// ---- randomized differential ---------------------------------------------------------------

TEST(GsoTunnelSlab, X31_C30_RandomTunnelShapesBatchEqualsPackets) {
  std::mt19937 rng(0xbadc0de);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::size_t tunnel_slabs = 0;
  for (int n = 0; n < 3000; ++n) {
    Shape s;
    s.tunnel = pick(0, 4);
    s.outer_v6 = pick(0, 1);
    s.outer_vlan = pick(0, 3) == 0;
    s.inner_vlans = (s.tunnel <= 1) ? pick(0, 2) : 0;
    s.inner_v6 = pick(0, 1);
    s.ip4_opts = pick(0, 2) == 0 ? std::size_t(pick(1, 10)) * 4 : 0;
    s.ip6_ext = pick(0, 2) == 0 ? std::size_t(pick(1, 4)) * 8 : 0;
    s.geneve_opt = (s.tunnel == 1 || s.tunnel == 2) ? std::size_t(pick(0, 8)) * 4 : 0;
    s.tcp_opts = std::size_t(pick(0, 10)) * 4;
    s.udp_csum = pick(0, 1);
    s.ip_id = pick(0, 2) == 0 ? std::uint16_t(65535 - pick(0, 5)) : std::uint16_t(rng());
    s.df = pick(0, 3) != 0;
    const int mss = pick(0, 3) == 0 ? pick(1, 200) : pick(200, 4000);
    const int segs = pick(1, 40);
    s.payload = std::size_t(std::min(60000 - 400, mss * segs + (pick(0, 1) ? 0 : pick(1, mss))));
    if (s.payload <= std::size_t(mss)) s.payload = std::size_t(mss) + 1;
    s.flags = std::uint8_t(0x10 | (pick(0, 1) ? 0x08 : 0) | (pick(0, 3) == 0 ? 0x01 : 0) |
                           (pick(0, 2) == 0 ? 0x80 : 0));
    const Bytes fr = build(s);
    core::Packet p = prepare(fr, std::uint16_t(mss), s.tunnel == 3 ? wire::udpport::kGue : 0);
    std::string where = "case " + std::to_string(n) + " " + s.what() + " mss " + std::to_string(mss);
    if (!p.is_gso()) {
      ADD_FAILURE() << "not prepared: " << where;
      continue;
    }
    const std::size_t poff = payload_offset(p);
    if (poff == 0) continue;
    core::Packet q = to_frags(p, poff, rng, pick(0, 2) == 0 ? 4096 : 0);
    const int fid = pick(0, 5);
    if (fid == 1) q.gso.type |= core::skb_gso::TCP_FIXEDID;
    if (fid == 2) q.gso.type |= core::skb_gso::TCP_FIXEDID_INNER;
    if (fid == 3) q.gso.type |= core::skb_gso::TCP_FIXEDID_OUTER;
    if (fid == 4) q.gso.type |= core::skb_gso::TCP_FIXEDID_INNER | core::skb_gso::TCP_FIXEDID_OUTER;
    if (pick(0, 7) == 0) q.gso.type |= core::skb_gso::TCP_ECN;
    if (pick(0, 7) == 0) q.gso.type |= core::skb_gso::DODGY;
    const core::Features f = rand_features(rng);
    const core::Device dev = rand_device(f, rng);
    char h[64];
    std::snprintf(h, sizeof h, " feat 0x%llx enc 0x%llx type 0x%x", (unsigned long long)f.bits,
                  (unsigned long long)dev.hw_enc_features.bits, unsigned(q.gso.type));
    where += h;
    if (compare(q, f, dev, where)) ++tunnel_slabs;
    if (::testing::Test::HasFailure()) return;  // one failing case is enough to read
  }
  EXPECT_GT(tunnel_slabs, 300u);
}

// ---- targeted cases ------------------------------------------------------------------------

// A GRE packet whose gso_type names a UDP tunnel (or IP-in-IP) instead of GRE. The GRE hook
// does not look at the gso_type (nor does the kernel's gre_gso_segment), so gso_segment
// segments it as GRE; gso_segment_batch offers a slab, and the GRE hook does not handle one.
TEST(GsoTunnelSlab, X33_GreLabelledUdpTunnelOrIpipTakesNoSlab) {
  std::mt19937 rng(1);
  for (const std::uint32_t bit : {core::skb_gso::UDP_TUNNEL, core::skb_gso::IPXIP4}) {
    for (bool teb : {true, false}) {
      TcpSpec s;
      s.payload = 4000;
      const Bytes fr = encap(tcp_frame(s), Outer::Gre, false, false, /*gre_csum=*/false, teb);
      core::Packet p = prepare(fr, 1000);
      ASSERT_TRUE(p.is_gso());
      ASSERT_TRUE(p.gso.type & core::skb_gso::GRE) << std::hex << p.gso.type;
      p.gso.type = (p.gso.type & ~(core::skb_gso::GRE | core::skb_gso::GRE_CSUM)) | bit;
      core::Packet q = to_frags(p, payload_offset(p), rng, 4096);
      compare(q, nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM),
              std::string("gre teb ") + std::to_string(teb) + " type bit 0x" + std::to_string(bit));
    }
  }
}

// TCP in VXLAN with csum_offset other than the TCP check's (16): the kernel's TCP GSO checks
// csum_start only; the packet path's LCO uses ~th->check (gso_reset_checksum), the slab reads
// the 2 bytes at csum_start + csum_offset.
TEST(GsoTunnelSlab, X14_C30_CsumOffsetOtherThanTheTcpCheck) {
  std::mt19937 rng(2);
  for (std::uint16_t off : {0, 4, 6, 10, 12, 14, 18}) {
    TcpSpec s;
    s.payload = 5000;
    const Bytes fr = encap(tcp_frame(s), Outer::Vxlan, false, /*udp_csum=*/true);
    core::Packet p = prepare(fr, 1000);
    ASSERT_TRUE(p.is_gso());
    auto* cp = std::get_if<core::CsumPartial>(&p.csum);
    ASSERT_NE(cp, nullptr);
    cp->csum_offset = off;
    core::Packet q = to_frags(p, payload_offset(p), rng, 4096);
    compare(q, nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM), "csum_offset " + std::to_string(off));
  }
}

}  // namespace

namespace {

// A UDP tunnel inside IP-in-IP (IPv4/IPv6 → IPv4/IPv6 → UDP → VXLAN/GUE → ... → TCP): the
// ipip hook sets no tunnel_inner, so the UDP tunnel level runs under it.
TEST(GsoTunnelSlab, X31_X34_UdpTunnelInsideIpip) {
  std::mt19937 rng(3);
  std::size_t slabs = 0;
  for (bool ov6 : {false, true})
    for (bool mv6 : {false, true})
      for (bool iv6 : {false, true})
        for (bool ucs : {false, true})
          for (Outer kind : {Outer::Vxlan, Outer::Gue}) {
            TcpSpec s;
            s.v6 = iv6;
            s.payload = 7 * 1000 + 333;
            const Bytes mid = encap(tcp_frame(s), kind, mv6, ucs);
            const Bytes fr = ipip_encap(mid, ov6);
            // The parser does not follow two tunnel levels: prepare the UDP tunnel frame and
            // shift its metadata past the added outer IP header.
            core::Packet pm = prepare(mid, 1000, kind == Outer::Gue ? 6080 : 0);
            ASSERT_TRUE(pm.is_gso());
            const core::pos_t d = core::pos_t(fr.size() - mid.size());
            core::Packet p = core::Packet::from_bytes(fr);
            p.meta() = pm.meta();
            auto sh = [&](core::pos_t& x) { if (x != core::kNoHeader) x += d; };
            sh(p.meta().transport_header);
            sh(p.meta().inner_mac_header);
            sh(p.meta().inner_network_header);
            sh(p.meta().inner_transport_header);
            std::get<core::CsumPartial>(p.meta().csum).csum_start += d;
            p.meta().protocol = ov6 ? wire::ethertype::kIpv6 : wire::ethertype::kIpv4;
            p.gso.type |= ov6 ? core::skb_gso::IPXIP6 : core::skb_gso::IPXIP4;
            const std::string where = std::string("ipip(") + (ov6 ? "6" : "4") + ") " +
                                      (kind == Outer::Vxlan ? "vxlan" : "gue") + "(" + (mv6 ? "6" : "4") +
                                      ") inner " + (iv6 ? "6" : "4") + " csum " + std::to_string(ucs);
            ASSERT_TRUE(p.is_gso()) << where;
            if (!(p.gso.type & (core::skb_gso::UDP_TUNNEL | core::skb_gso::UDP_TUNNEL_CSUM)))
              p.gso.type |= ucs ? core::skb_gso::UDP_TUNNEL_CSUM : core::skb_gso::UDP_TUNNEL;
            const std::size_t poff = payload_offset(p);
            if (poff == 0) continue;
            core::Packet q = to_frags(p, poff, rng, 4096);
            slabs += compare(q, nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM), where);
          }
  EXPECT_GT(slabs, 0u);
}

// The inner IPv4 header of the super-packet with a wrong or zero header checksum (the IPv4
// hook recomputes it for every segment, so the region sum claim holds anyway).
TEST(GsoTunnelSlab, X25_C30_InnerIpv4BadChecksum) {
  std::mt19937 rng(4);
  for (std::uint16_t bad : {0x0000, 0xffff, 0x1234}) {
    TcpSpec s;
    s.payload = 9000;
    s.ip_id = 0xfffe;
    const Bytes fr = encap(tcp_frame(s), Outer::Vxlan, false, true);
    core::Packet p = prepare(fr, 1400);
    ASSERT_TRUE(p.is_gso());
    core::Packet q = to_frags(p, payload_offset(p), rng, 4096);
    std::uint8_t* iph = q.data() + 14 + 20 + 8 + 8 + 14;
    ofld::wire::store_be16(iph + 10, bad);
    compare(q, nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM), "bad inner ip check " + std::to_string(bad));
  }
}

}  // namespace

namespace {

// Tunnel gso_type bits on packets that are not that tunnel: a plain TCP packet marked
// encapsulated with UDP_TUNNEL / IPXIP4 (no tunnel hook runs), GUE carrying IP-in-IP (two
// IPv4 headers in the outer checksum's region).
TEST(GsoTunnelSlab, X31_MislabelledTunnelTypes) {
  std::mt19937 rng(5);
  for (const std::uint32_t bit : {core::skb_gso::UDP_TUNNEL, core::skb_gso::UDP_TUNNEL_CSUM,
                                  core::skb_gso::IPXIP4, core::skb_gso::IPXIP6})
    for (bool v6 : {false, true}) {
      TcpSpec s;
      s.v6 = v6;
      s.payload = 5000;
      core::Packet p = prepare(tcp_frame(s), 1000);
      ASSERT_TRUE(p.is_gso());
      p.gso.type |= bit;
      p.encapsulation = true;
      p.inner_mac_header = 14;
      p.inner_network_header = 14;
      p.inner_transport_header = p.transport_header;
      core::Packet q = to_frags(p, payload_offset(p), rng, 4096);
      compare(q, nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM),
              std::string("plain tcp") + (v6 ? "6" : "4") + " + type bit " + std::to_string(bit));
    }
}

}  // namespace

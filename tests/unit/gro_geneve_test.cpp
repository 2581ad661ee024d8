// Geneve GRO (docs/geneve.md GN-2..GN-5, GN-8; U-4, U-12). The Geneve headers are written
// byte by byte from RFC 8926 §3.4 / §3.5 (Ver, Opt Len, O, C, Protocol Type, VNI, options as
// Class/Type/R/Length TLVs); expected gso types, offsets and counts come from the rules, never
// from ofld output.
#include <gtest/gtest.h>

#include "gro_test_util.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/numbers.hpp"

namespace {

using namespace ofld::grotest;
using ofld::core::Packet;
using Bytes = std::vector<std::uint8_t>;
using Frames = std::vector<Bytes>;
namespace sg = ofld::core::skb_gso;
namespace fbg = ofld::fb::gro;
using ofld::offload::GroReason;

constexpr std::uint16_t kTeb = 0x6558, kIpv4 = 0x0800, kIpv6 = 0x86DD;

/// One Geneve option TLV (RFC 8926 §3.5): class, type, then R(3)=0 and Length(5) in 4-byte
/// words of data, then the data (`words` × 4 bytes of `fill`).
Bytes option(std::uint16_t cls, std::uint8_t type, unsigned words, std::uint8_t fill = 0xa5) {
  Bytes o{std::uint8_t(cls >> 8), std::uint8_t(cls), type, std::uint8_t(words & 0x1f)};
  o.insert(o.end(), std::size_t(words) * 4, fill);
  return o;
}

/// Options of exactly `words` 4-byte words (0..63), as TLVs of at most 32 words each.
Bytes options_of(unsigned words, std::uint8_t fill = 0x5a) {
  Bytes o;
  while (words > 0) {
    const unsigned n = words > 32 ? 32 : words;
    const Bytes one = option(0x0102, 0x01, n - 1, fill);
    o.insert(o.end(), one.begin(), one.end());
    words -= n;
  }
  return o;
}

struct Gnv {
  std::uint32_t vni = 42;
  std::uint16_t proto = kTeb;
  Bytes opts;
  std::uint8_t flags = 0;      ///< byte 1: O 0x80, C 0x40, reserved 0x3f
  std::uint8_t version = 0;
  std::uint8_t reserved = 0;   ///< the byte after the VNI
};

/// The Geneve header of RFC 8926 §3.4 for `g`.
Bytes header(const Gnv& g) {
  Bytes h(8);
  h[0] = std::uint8_t(g.version << 6 | ((g.opts.size() / 4) & 0x3f));
  h[1] = g.flags;
  ofld::wire::store_be16(h.data() + 2, g.proto);
  ofld::wire::store_be32(h.data() + 4, g.vni << 8 | g.reserved);
  h.insert(h.end(), g.opts.begin(), g.opts.end());
  return h;
}

/// Outer Ethernet / IPv4 or IPv6 / UDP (sport 40000 → 6081, checksum or zero) / Geneve /
/// `inner`.
Bytes geneve(bool ov6, const Bytes& inner, const Gnv& g, bool csum = true, std::uint16_t id = 0) {
  ofld::fb::Frame f = fbg::l3(fbg::outer_flow(ov6, id));
  f.udp({40000, ofld::wire::udpport::kGeneve, 0, 0},
        csum ? ofld::fb::L4Csum::Full : ofld::fb::L4Csum::Zero);
  f.raw(header(g), 0);
  f.payload(inner);
  return f.build();
}

/// Inner TCP segment i of one stream (100 bytes of payload each): an Ethernet frame for TEB,
/// the bare IP packet for 0x0800 / 0x86DD.
Bytes inner(int i, bool iv6, bool with_eth = true) {
  Tcp t;
  t.v6 = iv6;
  t.seq_off = 100u * unsigned(i);
  return with_eth ? tcp_frame(t) : ip_only(t);
}

Frames stream(bool ov6, bool iv6, int n, const Gnv& g, bool csum = true) {
  Frames f;
  for (int i = 0; i < n; ++i)
    f.push_back(geneve(ov6, inner(i, iv6, g.proto == kTeb), g, csum, std::uint16_t(i)));
  return f;
}

ofld::gro::EngineOptions gnv_socket(std::uint16_t port = ofld::wire::udpport::kGeneve) {
  ofld::gro::EngineOptions o;
  o.config.udp_tunnels.push_back({port, ofld::wire::udpport::kGeneve, false, false});
  o.batch = 100000;
  o.config.flow_hash_key = 0;
  return o;
}

constexpr std::uint32_t kFixedId = sg::TCP_FIXEDID | sg::TCP_FIXEDID_OUTER | sg::TCP_FIXEDID_INNER;

// GN-3, GN-5, U-12: a Geneve TCP stream aggregates; the aggregate records UDP_TUNNEL or
// UDP_TUNNEL_CSUM (by the outer checksum) plus the inner TCP type, encapsulation, and the inner
// headers right after the Geneve header and its options; the inner TCP checksum is PARTIAL.
TEST(GroGeneve, GN3_GN5_U12_StreamAggregatesWithTunnelType) {
  for (bool ov6 : {false, true})
    for (bool iv6 : {false, true})
      for (bool csum : {true, false})
        for (unsigned words : {0u, 2u, 10u}) {
          Gnv g;
          g.opts = options_of(words);
          auto out = run(stream(ov6, iv6, 3, g, csum), gnv_socket());
          const std::string at = (::testing::Message() << ov6 << iv6 << csum << " words " << words).GetString();
          ASSERT_EQ(out.size(), 1u) << at;
          const Packet& p = out[0];
          EXPECT_EQ(p.gso.type & ~kFixedId,
                    (csum ? sg::UDP_TUNNEL_CSUM : sg::UDP_TUNNEL) | (iv6 ? sg::TCPV6 : sg::TCPV4))
              << at;
          EXPECT_EQ(p.gso.segs, 3) << at;
          EXPECT_EQ(p.gso.size, 100) << at;
          EXPECT_TRUE(p.encapsulation) << at;
          const int inner_mac = 14 + (ov6 ? 40 : 20) + 8 + 8 + int(words) * 4;
          EXPECT_EQ(p.transport_header - p.data_pos(), 14 + (ov6 ? 40 : 20)) << at;
          EXPECT_EQ(p.inner_mac_header - p.data_pos(), inner_mac) << at;
          EXPECT_EQ(p.inner_network_header - p.data_pos(), inner_mac + 14) << at;
          EXPECT_EQ(p.inner_transport_header - p.data_pos(), inner_mac + 14 + (iv6 ? 40 : 20)) << at;
          const auto* part = std::get_if<ofld::core::CsumPartial>(&p.csum);
          ASSERT_NE(part, nullptr) << at;
          EXPECT_EQ(part->csum_start, p.inner_transport_header) << at;
          EXPECT_EQ(part->csum_offset, 16) << at;
          // The Geneve header (options included) is the first frame's, unchanged.
          const Bytes b = p.to_bytes();
          const Bytes h = header(g);
          EXPECT_TRUE(std::equal(h.begin(), h.end(), b.begin() + (14 + (ov6 ? 40 : 20) + 8))) << at;
        }
}

// GN-3: the flow key is the whole Geneve header. A packet that differs from a held flow in the
// VNI, the C bit, a reserved bit, the reserved byte, the protocol-independent option bytes or
// the option length starts another flow; it does not flush the held one, so the third packet
// (same header as the first, next sequence number) still merges into the first flow.
TEST(GroGeneve, GN3_EveryHeaderByteIsFlowKey) {
  Gnv base;
  base.opts = option(0x0102, 0x01, 1, 0x11);  // 8 bytes of options
  struct V {
    const char* what;
    Gnv g;
  };
  std::vector<V> variants;
  {
    Gnv g = base; g.vni = 43; variants.push_back({"vni", g});
  }
  {
    Gnv g = base; g.flags = 0x40; variants.push_back({"critical bit", g});
  }
  {
    Gnv g = base; g.flags = 0x01; variants.push_back({"reserved flag bit", g});
  }
  {
    Gnv g = base; g.reserved = 0x01; variants.push_back({"reserved byte", g});
  }
  {
    Gnv g = base; g.opts = option(0x0102, 0x01, 1, 0x12); variants.push_back({"option data", g});
  }
  {
    Gnv g = base; g.opts = option(0x0102, 0x02, 1, 0x11); variants.push_back({"option type", g});
  }
  {
    Gnv g = base; g.opts = option(0x0103, 0x01, 1, 0x11); variants.push_back({"option class", g});
  }
  {
    Gnv g = base; g.opts = option(0x0102, 0x01, 2, 0x11); variants.push_back({"option length", g});
  }
  {
    Gnv g = base; g.opts = {}; variants.push_back({"no options", g});
  }
  for (const auto& v : variants) {
    const Frames f{geneve(false, inner(0, false), base, true, 0),
                   geneve(false, inner(1, false), v.g, true, 7),
                   geneve(false, inner(1, false), base, true, 1)};
    auto out = run(f, gnv_socket());
    ASSERT_EQ(out.size(), 2u) << v.what;
    std::vector<int> segs{out[0].gso.segs, out[1].gso.segs};
    std::sort(segs.begin(), segs.end());
    EXPECT_EQ(segs, (std::vector<int>{0, 2})) << v.what << ": the variant is its own flow";
  }
  // Control: the same header throughout is one flow.
  EXPECT_EQ(run(stream(false, false, 3, base), gnv_socket()).size(), 1u);
}

// GN-3: the protocol type is part of the key: an IPv4-in-Geneve stream and an
// Ethernet-in-Geneve stream between the same outer endpoints stay two flows, each aggregated.
TEST(GroGeneve, GN3_GN4_ProtocolTypeIsFlowKey) {
  Gnv teb, ip4;
  ip4.proto = kIpv4;
  const Frames f{geneve(false, inner(0, false, true), teb, true, 0),
                 geneve(false, inner(0, false, false), ip4, true, 0),
                 geneve(false, inner(1, false, true), teb, true, 1),
                 geneve(false, inner(1, false, false), ip4, true, 1)};
  auto out = run(f, gnv_socket());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].gso.segs, 2);
  EXPECT_EQ(out[1].gso.segs, 2);
}

// GN-2: a packet with the O (OAM) bit, or of a version other than 0, is not aggregated: each
// is delivered at once, byte-identical, counted under geneve_ver_oam. The C bit alone is no
// GRO criterion (geneve_gro_receive does not look at it): a critical-option stream merges.
TEST(GroGeneve, GN2_OamAndOtherVersionsAreNotAggregatedCriticalIs) {
  Gnv oam;
  oam.flags = 0x80;
  Gnv v1;
  v1.version = 1;
  Gnv crit;
  crit.flags = 0x40;
  crit.opts = option(0x0000, 0x80, 1);  // class 0, type 0x80: a critical option (§3.5.1)
  for (const Gnv& g : {oam, v1}) {
    const Frames f = stream(false, false, 3, g);
    ofld::gro::Engine e(gnv_socket());
    for (const auto& b : f) e.receive(Packet::from_bytes(b));
    e.flush_all();
    ASSERT_EQ(e.output().size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(e.output()[i].to_bytes(), f[i]);
    EXPECT_EQ(e.counters().not_merged[std::size_t(GroReason::GeneveVerOam)], 3u);
    EXPECT_EQ(e.counters().merged, 0u);
  }
  auto out = run(stream(false, false, 3, crit), gnv_socket());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.segs, 3);
}

// GN-4, GN-5: protocol type 0x0800 / 0x86DD (a bare IP packet after the header, as Google
// Cloud's Geneve with two 20-byte options of class 0x0132 carries it, tcpdump's
// geneve-gcp.pcap): dispatched to IPv4 / IPv6 GRO directly; the inner MAC header is recorded at
// the end of the Geneve header, where the inner network header also starts.
TEST(GroGeneve, GN4_GN5_BareIpInnerAggregates) {
  for (bool iv6 : {false, true}) {
    Gnv g;
    g.proto = iv6 ? kIpv6 : kIpv4;
    g.opts = option(0x0132, 0x01, 4);
    const Bytes o2 = option(0x0132, 0x02, 4);
    g.opts.insert(g.opts.end(), o2.begin(), o2.end());  // 40 bytes of options, as GCP's
    auto out = run(stream(false, iv6, 4, g), gnv_socket());
    ASSERT_EQ(out.size(), 1u) << iv6;
    const Packet& p = out[0];
    EXPECT_EQ(p.gso.type & ~kFixedId, sg::UDP_TUNNEL_CSUM | (iv6 ? sg::TCPV6 : sg::TCPV4));
    EXPECT_EQ(p.gso.segs, 4);
    const int inner = 14 + 20 + 8 + 8 + 40;
    EXPECT_EQ(p.inner_mac_header - p.data_pos(), inner);
    EXPECT_EQ(p.inner_network_header - p.data_pos(), inner);
    EXPECT_EQ(p.inner_transport_header - p.data_pos(), inner + (iv6 ? 40 : 20));
  }
}

// GN-4: a protocol type without a GRO handler (0x88B5, IEEE local experimental) is not
// aggregated and the packets pass unchanged.
TEST(GroGeneve, GN4_UnknownProtocolTypeIsNotAggregated) {
  Gnv g;
  g.proto = 0x88B5;
  Frames f;
  for (int i = 0; i < 3; ++i) f.push_back(geneve(false, inner(i, false), g, true, std::uint16_t(i)));
  ofld::gro::Engine e(gnv_socket());
  for (const auto& b : f) e.receive(Packet::from_bytes(b));
  e.flush_all();
  ASSERT_EQ(e.output().size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(e.output()[i].to_bytes(), f[i]);
  EXPECT_EQ(e.counters().not_merged[std::size_t(GroReason::NoHandler)], 3u);
}

// GN-3 with options of every length RFC 8926 allows (Opt Len 0..63, header up to 260 bytes):
// each stream aggregates and its inner headers start after the options.
TEST(GroGeneve, GN3_OptionsOfEveryLengthAggregate) {
  for (unsigned words = 0; words <= 63; ++words) {
    Gnv g;
    g.opts = options_of(words);
    ASSERT_EQ(g.opts.size(), words * 4);
    auto out = run(stream(words & 1, false, 3, g), gnv_socket());
    ASSERT_EQ(out.size(), 1u) << words;
    EXPECT_EQ(out[0].gso.segs, 3) << words;
    EXPECT_EQ(out[0].inner_mac_header - out[0].data_pos(),
              14 + ((words & 1) ? 40 : 20) + 8 + 8 + int(words) * 4) << words;
  }
}

// A header whose Opt Len runs past the end of the datagram is not aggregated (a truncated
// header: geneve_gro_receive's skb_gro_header fails), and the packet is passed unchanged.
TEST(GroGeneve, GN3_OptionLengthPastTheEndIsNotAggregated) {
  ofld::fb::Frame f = fbg::l3(fbg::outer_flow(false, 0));
  f.udp({40000, ofld::wire::udpport::kGeneve, 0, 0}, ofld::fb::L4Csum::Full);
  Bytes h(8 + 16, 0);
  h[0] = 63;  // claims 252 bytes of options; 16 present
  ofld::wire::store_be16(h.data() + 2, kTeb);
  f.raw(h, 0);
  const Bytes b = f.build();
  ofld::gro::Engine e(gnv_socket());
  e.receive(Packet::from_bytes(b));
  e.receive(Packet::from_bytes(b));
  e.flush_all();
  ASSERT_EQ(e.output().size(), 2u);
  EXPECT_EQ(e.output()[0].to_bytes(), b);
  EXPECT_EQ(e.counters().not_merged[std::size_t(GroReason::Truncated)], 2u);
}

// GN-8 (U-3, U-4): GRO reaches the Geneve layer only for a port with a Geneve socket: without
// one the datagrams are plain UDP (no UDP_GRO socket: not merged); the socket may listen on
// any port (the registry's Geneve hooks are found through it).
TEST(GroGeneve, GN8_GeneveGroNeedsAGeneveSocket) {
  EXPECT_EQ(run(stream(false, false, 3, Gnv{})).size(), 3u);
  Frames f;
  for (int i = 0; i < 3; ++i) {
    ofld::fb::Frame fr = fbg::l3(fbg::outer_flow(false, std::uint16_t(i)));
    fr.udp({40000, 7081, 0, 0}, ofld::fb::L4Csum::Full);
    fr.raw(header(Gnv{}), 0);
    fr.payload(inner(i, false));
    f.push_back(fr.build());
  }
  EXPECT_EQ(run(f, gnv_socket()).size(), 3u);
  auto out = run(f, gnv_socket(7081));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.segs, 3);
}

}  // namespace

// Tests for core/Features (spec §3: F-1..F-22) and public bug G1.
// Expected values come from the spec rules (written out as tables here), from the 6.12
// netdev_features.h enum, and from `ethtool -k` on a veth (names/groups).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../common/frame_builder.hpp"
#include "ofld/core/features.hpp"

using namespace ofld::core;
namespace nf = ofld::core::netif_f;
using Bytes = std::vector<std::uint8_t>;

namespace {

// ---- packets (Ethernet on the wire, data() at the MAC header as on TX) -----------------------
// Frames from tests/common/frame_builder.hpp; checksum fields are left 0 (these tests look at
// offsets and features, not at checksums).

enum class L3 { V4, V6, V6Ext, Encap };

Bytes frame_of(L3 kind) {
  namespace fb = ofld::fb;
  namespace w = ofld::wire;
  constexpr std::size_t kPay = 1000;
  const w::MacAddr dst{0x02, 0, 0, 0, 0, 0}, src{0x02, 0, 0, 0, 0, 1};
  w::Ipv4Repr v4;
  v4.frag_off = w::ipv4::kDF;
  v4.saddr = fb::ip4(10, 0, 0, 1);
  v4.daddr = fb::ip4(10, 0, 0, 2);
  v4.check = 0;
  w::Ipv6Repr v6;
  v6.saddr = fb::ip6(0, 0, 1);
  v6.daddr = fb::ip6(0, 0, 2);
  const unsigned no_csum = fb::fill::kType | fb::fill::kLen;
  auto tcp = [&](fb::Frame& f) {
    w::TcpRepr t;
    f.tcp(t, fb::L4Csum::Given).payload(Bytes(kPay, 0x5a));
  };
  fb::Frame f;
  f.eth(dst, src);
  if (kind == L3::V4) {
    f.ipv4(v4, no_csum);
  } else if (kind == L3::V6) {
    f.ipv6(v6);
  } else if (kind == L3::V6Ext) {
    f.ipv6(v6).raw({0, 0, 1, 4, 0, 0, 0, 0}, w::ipproto::kDstOpts, true);  // nh=TCP, PadN
  } else {  // IPv4/UDP/VXLAN/Eth/IPv4/TCP
    f.ipv4(v4, no_csum).udp({0, w::udpport::kVxlan, 0, 0}, fb::L4Csum::Zero).vxlan({0, std::nullopt});
    f.eth(dst, src).ipv4(v4, no_csum);
  }
  tcp(f);
  return f.build();
}


// Build a TCP packet of the given kind with offsets/protocol metadata filled in.
Packet make(L3 kind, bool partial, bool gso) {
  Bytes b = frame_of(kind);
  Packet p;
  if (kind == L3::V4) {
    p = Packet::from_bytes(b);
    p.protocol = 0x0800;
    p.set_mac_header(0); p.set_network_header(14); p.set_transport_header(34);
  } else if (kind == L3::V6) {
    p = Packet::from_bytes(b);
    p.protocol = 0x86DD;
    p.set_mac_header(0); p.set_network_header(14); p.set_transport_header(54);
  } else if (kind == L3::V6Ext) {
    p = Packet::from_bytes(b);
    p.protocol = 0x86DD;
    p.set_mac_header(0); p.set_network_header(14); p.set_transport_header(62);
  } else {  // IPv4/UDP/VXLAN/Eth/IPv4/TCP
    p = Packet::from_bytes(b);
    p.protocol = 0x0800;
    p.set_mac_header(0); p.set_network_header(14); p.set_transport_header(34);
    p.encapsulation = true;
    p.inner_protocol = 0x6558;
    p.set_inner_mac_header(50); p.set_inner_network_header(64); p.set_inner_transport_header(84);
  }
  if (partial) {
    int th = p.encapsulation ? p.inner_transport_offset() : p.transport_offset();
    p.set_partial(th, 16);
  }
  if (gso) {
    p.gso.size = 500;
    p.gso.segs = 2;
    bool v6 = kind == L3::V6 || kind == L3::V6Ext;
    p.gso.type = v6 ? skb_gso::TCPV6 : skb_gso::TCPV4;
    if (kind == L3::Encap) p.gso.type |= skb_gso::UDP_TUNNEL;
  }
  return p;
}

enum class Act { Hand, Help, SwGso };
Act act_of(const TxAction& a) {
  if (a.software_gso) return Act::SwGso;
  if (a.checksum_help) return Act::Help;
  return Act::Hand;
}
const char* act_name(Act a) {
  return a == Act::Hand ? "HandOver" : a == Act::Help ? "ChecksumHelp" : "SoftwareGso";
}

}  // namespace

// ---- bit numbers and names ----------------------------------------------------------------

TEST(Features, BitNumbersMatch612Enum) {
  // include/linux/netdev_features.h (6.12) enum order; spec §1.2
  EXPECT_EQ(nf::SG.bits, 1ull << 0);
  EXPECT_EQ(nf::HW_CSUM.bits, 1ull << 3);
  EXPECT_EQ(nf::GSO.bits, 1ull << 11);
  EXPECT_EQ(nf::LRO.bits, 1ull << 15);
  EXPECT_EQ(nf::TSO.bits, 1ull << 16);
  EXPECT_EQ(nf::GSO_FRAGLIST.bits, 1ull << 34);
  EXPECT_EQ(nf::FCOE_CRC.bits, 1ull << 35);
  EXPECT_EQ(nf::SCTP_CRC.bits, 1ull << 36);
  EXPECT_EQ(nf::RXCSUM.bits, 1ull << 40);
  EXPECT_EQ(nf::GRO_HW.bits, 1ull << 55);
  EXPECT_EQ(nf::HW_HSR_DUP.bits, 1ull << 63);
}

TEST(Features, GsoTypeToFeatureMapping) {
  // net_gso_ok: SKB_GSO bit k ↔ feature 16+k
  for (unsigned k = 0; k <= 18; ++k) {
    auto f = gso_type_features(1u << k);
    ASSERT_TRUE(f.has_value()) << k;
    EXPECT_EQ(f->bits, 1ull << (16 + k)) << k;
  }
  // [newer] FIXEDID_OUTER/INNER map onto TSO_MANGLEID; ACCECN has no 6.12 twin
  EXPECT_EQ(*gso_type_features(skb_gso::TCP_FIXEDID_INNER), nf::TSO_MANGLEID);
  EXPECT_EQ(*gso_type_features(skb_gso::TCPV4 | skb_gso::TCP_FIXEDID_OUTER),
            nf::TSO | nf::TSO_MANGLEID);
  EXPECT_FALSE(gso_type_features(skb_gso::TCP_ACCECN).has_value());
  // a bit with no feature behind it fails the whole type, beside a known one too
  EXPECT_FALSE(gso_type_features(skb_gso::TCPV4 | skb_gso::TCP_ACCECN).has_value());
  for (unsigned k = 20; k <= 29; ++k)
    EXPECT_FALSE(gso_type_features(skb_gso::TCPV4 | (1u << k)).has_value()) << k;
  EXPECT_EQ(*gso_type_features(0), Features{});
}

TEST(Features, EthtoolNames) {
  // net/ethtool/common.c strings, as printed by `ethtool -k` on a veth
  EXPECT_EQ(feature_name(0), "tx-scatter-gather");
  EXPECT_EQ(feature_name(3), "tx-checksum-ip-generic");
  EXPECT_EQ(feature_name(26), "tx-udp_tnl-segmentation");
  EXPECT_EQ(feature_name(34), "tx-gso-list");
  EXPECT_EQ(feature_name(40), "rx-checksum");
  EXPECT_EQ(feature_name(32), "");  // GSO_UDP has no string
  EXPECT_EQ(feature_bit("tx-tcp6-segmentation"), 20u);
  EXPECT_FALSE(feature_bit("tx-bogus").has_value());
}

TEST(Features, ParseGroupsAndErrors) {
  auto r = parse_features("tx-checksumming, scatter-gather tcp-segmentation-offload,rx-gro");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.features, nf::IP_CSUM | nf::HW_CSUM | nf::IPV6_CSUM | nf::FCOE_CRC | nf::SCTP_CRC |
                            nf::SG | nf::FRAGLIST | nf::TSO | nf::TSO_ECN | nf::TSO_MANGLEID |
                            nf::TSO6 | nf::GRO);
  auto e = parse_features("tx-scatter-gather, tx-frobnicate");
  EXPECT_FALSE(e.ok());
  EXPECT_NE(e.error.find("tx-frobnicate"), std::string::npos);
  EXPECT_TRUE(parse_features("").ok());
}

TEST(Features, FormatLikeEthtool) {
  std::string s = format_features(nf::HW_CSUM | nf::SG | nf::GSO);
  EXPECT_NE(s.find("tx-checksumming: on\n\ttx-checksum-ipv4: off\n\ttx-checksum-ip-generic: on\n"),
            std::string::npos);
  EXPECT_NE(s.find("generic-segmentation-offload: on\n"), std::string::npos);
  EXPECT_NE(s.find("tcp-segmentation-offload: off\n"), std::string::npos);
  EXPECT_NE(s.find("highdma: off\n"), std::string::npos);
  EXPECT_EQ(s.find("tx-generic-segmentation"), std::string::npos);  // single-member group
}

// ---- F-1..F-9 ----------------------------------------------------------------------------

TEST(Features, F1_HwCsumDropsIpCsums) {
  Device d;
  EXPECT_EQ(fix_features(nf::HW_CSUM | nf::IP_CSUM | nf::IPV6_CSUM, d), nf::HW_CSUM);
}
TEST(Features, F2_TsoNeedsSg) {
  Device d;
  EXPECT_EQ(fix_features(nf::HW_CSUM | nf::TSO | nf::TSO6, d), nf::HW_CSUM);
}
TEST(Features, F3_TsoNeedsMatchingCsum) {
  Device d;
  EXPECT_EQ(fix_features(nf::SG | nf::IPV6_CSUM | nf::TSO | nf::TSO_ECN | nf::TSO6, d),
            nf::SG | nf::IPV6_CSUM | nf::TSO6);
  EXPECT_EQ(fix_features(nf::SG | nf::IP_CSUM | nf::TSO | nf::TSO6, d),
            nf::SG | nf::IP_CSUM | nf::TSO);
}
TEST(Features, F4_MangleidNeedsTsoEcnNotAlone) {
  Device d;
  EXPECT_EQ(fix_features(nf::SG | nf::HW_CSUM | nf::TSO6 | nf::TSO_MANGLEID, d),
            nf::SG | nf::HW_CSUM | nf::TSO6);
  EXPECT_EQ(fix_features(nf::SG | nf::HW_CSUM | nf::TSO_ECN, d), nf::SG | nf::HW_CSUM);
}
TEST(Features, F5_GsoNeedsSg) {
  Device d;
  EXPECT_EQ(fix_features(nf::GSO | nf::HW_CSUM, d), nf::HW_CSUM);
  EXPECT_EQ(fix_features(nf::GSO | nf::SG, d), nf::GSO | nf::SG);
}
TEST(Features, F6_GsoPartialFeatures) {
  Device d;
  d.gso_partial_features = nf::GSO_GRE_CSUM | nf::GSO_UDP_TUNNEL_CSUM;
  EXPECT_EQ(fix_features(nf::SG | nf::GSO_GRE_CSUM | nf::GSO_UDP_TUNNEL_CSUM, d), nf::SG);
  EXPECT_EQ(fix_features(nf::SG | nf::GSO_PARTIAL | nf::GSO_GRE_CSUM, d),
            nf::SG | nf::GSO_PARTIAL | nf::GSO_GRE_CSUM);
}
TEST(Features, F7_GroHwRxcsumRxfcsLro) {
  Device d;
  EXPECT_EQ(fix_features(nf::GRO_HW, d), Features{});
  EXPECT_EQ(fix_features(nf::RXCSUM | nf::GRO_HW | nf::LRO, d), nf::RXCSUM | nf::GRO_HW);
  EXPECT_EQ(fix_features(nf::RXCSUM | nf::RXFCS | nf::GRO_HW | nf::LRO, d),
            nf::RXCSUM | nf::RXFCS);
}
TEST(Features, F8_UdpL4AndTlsNeedCsum) {
  Device d;
  EXPECT_EQ(fix_features(nf::GSO_UDP_L4 | nf::HW_TLS_TX | nf::HW_TLS_RX, d), Features{});
  EXPECT_EQ(fix_features(nf::GSO_UDP_L4 | nf::HW_CSUM, d), nf::GSO_UDP_L4 | nf::HW_CSUM);
  // 6.12 netdev_has_ip_or_hw_csum: IP-specific csums count only when BOTH are present
  // (the spec's shorter "any of" wording is refined by the kernel source).
  EXPECT_EQ(fix_features(nf::GSO_UDP_L4 | nf::IP_CSUM, d), nf::IP_CSUM);
  EXPECT_EQ(fix_features(nf::GSO_UDP_L4 | nf::IP_CSUM | nf::IPV6_CSUM, d),
            nf::GSO_UDP_L4 | nf::IP_CSUM | nf::IPV6_CSUM);
  EXPECT_EQ(fix_features(nf::RXCSUM | nf::HW_TLS_RX, d), nf::RXCSUM | nf::HW_TLS_RX);
}
TEST(Features, F9_RegisterDevice) {
  Device d;
  d.hw_features = nf::SG | nf::HW_CSUM | nf::TSO;
  d.features = d.hw_features;
  d.hw_enc_features = nf::HW_CSUM | nf::TSO;
  Device r = register_device(d);
  EXPECT_TRUE(r.features.has(nf::GSO | nf::GRO));                   // soft features on
  EXPECT_TRUE(r.hw_features.has(nf::TSO_MANGLEID));                 // user-changeable
  EXPECT_FALSE(r.features.any(nf::TSO_MANGLEID));                   // but not enabled
  EXPECT_TRUE(r.hw_enc_features.has(nf::SG | nf::GSO_PARTIAL | nf::TSO_MANGLEID));
  EXPECT_TRUE(r.vlan_features.has(nf::HIGHDMA));
  EXPECT_TRUE(r.mangleid_features.has(nf::TSO_MANGLEID));
  EXPECT_TRUE(r.hw_features.has(nf::GRO_FRAGLIST | nf::GRO_UDP_FWD));
  EXPECT_FALSE(r.features.any(nf::GRO_FRAGLIST));
}

// ---- F-10..F-20: the table ------------------------------------------------------------------

// Device: SG | GSO | TSO | TSO6 plus one checksum capability; hw_enc_features the same (no
// tunnel GSO bits). Expected actions derived by hand from the rules:
//  not GSO, NONE      → nothing to finish                                   → HandOver
//  not GSO, PARTIAL   → F-15 drops CSUM_MASK unless can_checksum_protocol(outer type);
//                       F-20 HW_CSUM ok; IP/IPV6_CSUM ok for offset 16 unless IPv6 ext hdrs
//  GSO,     NONE      → F-17 ip_summed not PARTIAL/UNNECESSARY               → SoftwareGso
//  GSO,     PARTIAL   → F-15 drops GSO_MASK when the protocol cannot be checksummed;
//                       F-11 drops TSO6 with IPV6_CSUM + ext hdrs; F-18 UDP_TUNNEL bit absent
struct Row {
  const char* dev;
  Features csumf;
  L3 l3;
  bool partial;
  bool gso;
  Act expect;
};

TEST(Features, F10_F20_ResolutionTable) {
  const Features HW = nf::HW_CSUM, IP = nf::IP_CSUM, V6 = nf::IPV6_CSUM, NO{};
  const Act H = Act::Hand, C = Act::Help, S = Act::SwGso;
  const std::vector<Row> rows = {
      // dev     csum  l3          partial gso    expected
      {"HW", HW, L3::V4, true, false, H},     {"HW", HW, L3::V6, true, false, H},
      {"HW", HW, L3::V6Ext, true, false, H},  {"HW", HW, L3::Encap, true, false, H},
      {"HW", HW, L3::V4, true, true, H},      {"HW", HW, L3::V6, true, true, H},
      {"HW", HW, L3::V6Ext, true, true, H},   {"HW", HW, L3::Encap, true, true, S},
      {"IP", IP, L3::V4, true, false, H},     {"IP", IP, L3::V6, true, false, C},
      {"IP", IP, L3::V6Ext, true, false, C},  {"IP", IP, L3::Encap, true, false, H},
      {"IP", IP, L3::V4, true, true, H},      {"IP", IP, L3::V6, true, true, S},
      {"IP", IP, L3::V6Ext, true, true, S},   {"IP", IP, L3::Encap, true, true, S},
      {"V6", V6, L3::V4, true, false, C},     {"V6", V6, L3::V6, true, false, H},
      {"V6", V6, L3::V6Ext, true, false, C},  {"V6", V6, L3::Encap, true, false, C},
      {"V6", V6, L3::V4, true, true, S},      {"V6", V6, L3::V6, true, true, H},
      {"V6", V6, L3::V6Ext, true, true, S},   {"V6", V6, L3::Encap, true, true, S},
      {"none", NO, L3::V4, true, false, C},   {"none", NO, L3::V6, true, false, C},
      {"none", NO, L3::V6Ext, true, false, C}, {"none", NO, L3::Encap, true, false, C},
      {"none", NO, L3::V4, true, true, S},    {"none", NO, L3::V6, true, true, S},
      {"none", NO, L3::V6Ext, true, true, S}, {"none", NO, L3::Encap, true, true, S},
  };
  std::vector<Row> all = rows;
  // NONE rows (C-7: nothing left to do on transmit): identical for every device and packet kind.
  for (auto [name, f] : {std::pair{"HW", HW}, {"IP", IP}, {"V6", V6}, {"none", NO}})
    for (L3 l3 : {L3::V4, L3::V6, L3::V6Ext, L3::Encap}) {
      all.push_back({name, f, l3, false, false, H});
      all.push_back({name, f, l3, false, true, S});
    }
  ASSERT_EQ(all.size(), 64u);
  for (const auto& r : all) {
    Device d;
    d.features = r.csumf | nf::SG | nf::GSO | nf::TSO | nf::TSO6;
    d.hw_enc_features = d.features;
    Packet p = make(r.l3, r.partial, r.gso);
    TxAction a = resolve_tx(p, d);
    EXPECT_EQ(act_of(a), r.expect)
        << "dev=" << r.dev << " l3=" << int(r.l3) << " partial=" << r.partial
        << " gso=" << r.gso << " got " << act_name(act_of(a)) << " want " << act_name(r.expect);
    EXPECT_FALSE(a.linearize);  // linear packets
  }
}

TEST(Features, F11_GsoLimitsAndMangleid) {
  Device d;
  d.features = nf::SG | nf::HW_CSUM | nf::TSO | nf::TSO_MANGLEID | nf::GSO;
  d.mangleid_features = nf::TSO_MANGLEID;
  Packet p = make(L3::V4, true, true);
  EXPECT_TRUE(netif_skb_features(p, d).has(nf::TSO | nf::TSO_MANGLEID));  // DF set
  p.data()[14 + 6] = 0;  // clear DF → MANGLEID removed
  EXPECT_FALSE(netif_skb_features(p, d).any(nf::TSO_MANGLEID));
  d.gso_max_segs = 1;  // gso_segs 2 > 1 → all GSO bits removed
  EXPECT_FALSE(netif_skb_features(p, d).any(nf::GSO_MASK));
  EXPECT_TRUE(resolve_tx(p, d).software_gso);
  d.gso_max_segs = kGsoMaxSegs;
  d.gso_ipv4_max_size = std::uint32_t(p.len());  // len >= limit
  EXPECT_FALSE(netif_skb_features(p, d).any(nf::GSO_MASK));
  d.gso_ipv4_max_size = kGsoLegacyMaxSize;
  p.gso.type = 0;  // bad offload
  EXPECT_FALSE(netif_skb_features(p, d).any(nf::GSO_MASK));
}

TEST(Features, F11_Ipv6ExtHeadersDropIpv6CsumTso6UdpL4) {
  Device d;
  d.features = nf::SG | nf::IPV6_CSUM | nf::TSO6 | nf::GSO_UDP_L4;
  Packet p = make(L3::V6Ext, true, true);
  EXPECT_TRUE(has_ipv6_ext_headers(p));
  EXPECT_EQ(netif_skb_features(p, d), nf::SG);
  EXPECT_EQ(netif_skb_features(p, d, /*jumbo_hbh=*/true), d.features);  // BIG TCP exemption
  Packet q = make(L3::V6, true, true);
  EXPECT_FALSE(has_ipv6_ext_headers(q));
  EXPECT_EQ(netif_skb_features(q, d), d.features);
}

TEST(Features, F12_EncapsulationUsesHwEncFeatures) {
  Device d;
  d.features = nf::SG | nf::HW_CSUM | nf::TSO | nf::GSO_UDP_TUNNEL;
  d.hw_enc_features = nf::SG | nf::HW_CSUM;
  Packet p = make(L3::Encap, true, true);
  EXPECT_EQ(netif_skb_features(p, d), nf::SG | nf::HW_CSUM);
  EXPECT_TRUE(resolve_tx(p, d).software_gso);
  d.hw_enc_features = d.features;  // device can do VXLAN TSO
  EXPECT_TRUE(resolve_tx(p, d).hand_over());
}

TEST(Features, F13_F14_VlanFeatures) {
  Device d;
  d.features = nf::SG | nf::IP_CSUM | nf::TSO | nf::HW_VLAN_CTAG_TX;
  d.vlan_features = nf::SG | nf::HW_CSUM;  // intersect: HW_CSUM stands for IP/IPV6 csums
  Packet p = make(L3::V4, true, false);
  p.vlan_present = true;
  p.vlan_proto = 0x8100;
  EXPECT_EQ(netif_skb_features(p, d), nf::SG | nf::IP_CSUM | nf::HW_VLAN_CTAG_TX);
  // QinQ in-band + accelerated tag → multi-tagged → mask to SG|HIGHDMA|HW_CSUM|FRAGLIST|VLAN
  Packet q = make(L3::V4, true, false);
  q.vlan_present = true;
  q.protocol = 0x8100;
  EXPECT_EQ(netif_skb_features(q, d), nf::SG | nf::HW_VLAN_CTAG_TX);
}

TEST(Features, F15_F16_CanChecksumProtocol) {
  EXPECT_TRUE(can_checksum_protocol(nf::HW_CSUM, 0x86DD));
  EXPECT_TRUE(can_checksum_protocol(nf::IP_CSUM, 0x0800));
  EXPECT_FALSE(can_checksum_protocol(nf::IP_CSUM, 0x86DD));
  EXPECT_TRUE(can_checksum_protocol(nf::IPV6_CSUM, 0x86DD));
  EXPECT_FALSE(can_checksum_protocol(nf::HW_CSUM, 0x8906));  // FCoE needs FCOE_CRC
  EXPECT_TRUE(can_checksum_protocol(nf::FCOE_CRC, 0x8906));
  EXPECT_FALSE(can_checksum_protocol(nf::IP_CSUM | nf::IPV6_CSUM, 0x0806));
  Device d;
  d.features = nf::SG | nf::HW_CSUM;
  d.highdma_ok = false;
  EXPECT_EQ(netif_skb_features(make(L3::V4, true, false), d), nf::HW_CSUM);
}

TEST(Features, F17_F18_GsoOkAndNeedsGso) {
  Packet p = make(L3::V4, true, true);
  p.gso.type |= skb_gso::DODGY;
  EXPECT_FALSE(gso_ok(p, nf::TSO));
  EXPECT_TRUE(gso_ok(p, nf::TSO | nf::GSO_ROBUST));
  p.add_to_frag_list(Packet::from_bytes(Bytes(100, 1)));
  EXPECT_FALSE(gso_ok(p, nf::TSO | nf::GSO_ROBUST));
  EXPECT_TRUE(gso_ok(p, nf::TSO | nf::GSO_ROBUST | nf::FRAGLIST));
  p.csum = CsumUnnecessary{};
  EXPECT_FALSE(needs_gso(p, nf::TSO | nf::GSO_ROBUST | nf::FRAGLIST));
  p.csum = CsumComplete{};
  EXPECT_TRUE(needs_gso(p, nf::TSO | nf::GSO_ROBUST | nf::FRAGLIST));
}

TEST(Features, F20_LinearizeAndCsumOffsets) {
  Device d;
  d.features = nf::IP_CSUM;  // no SG, no FRAGLIST
  Bytes b = make(L3::V4, false, false).to_bytes();
  Packet p = Packet::from_bytes_frags(b, 60, 200);
  p.protocol = 0x0800;
  p.set_network_header(14);
  p.set_transport_header(34);
  p.set_partial(34, 16);
  TxAction a = resolve_tx(p, d);
  EXPECT_TRUE(a.linearize);
  EXPECT_FALSE(a.checksum_help);
  p.set_partial(34, 6);  // UDP offset also fine
  EXPECT_FALSE(resolve_tx(p, d).checksum_help);
  p.set_partial(34, 10);  // other offset: IP_CSUM can't → software
  EXPECT_TRUE(resolve_tx(p, d).checksum_help);
  d.features = nf::HW_CSUM;  // generic: any offset
  EXPECT_FALSE(resolve_tx(p, d).checksum_help);
  // SCTP CRC (csum_not_inet, C-8): CRC32c in software unless the device has SCTP_CRC
  p.set_partial(34, 8, /*not_inet=*/true);
  EXPECT_TRUE(resolve_tx(p, d).crc32c_help);
  d.features = nf::HW_CSUM | nf::SCTP_CRC;
  EXPECT_FALSE(resolve_tx(p, d).crc32c_help);
}

TEST(Features, BugG1_Ipv6NeverGetsIpv4ChecksumOffload) {
  // public-bugs G1 (VPP-1857): an IPv6/TCP packet must not be handed to an IPv4-only checksum
  // engine. With a device that only has IP_CSUM, the resolved features of an IPv6 packet
  // carry no checksum capability, and the checksum is finished in software.
  Device d;
  d.features = nf::SG | nf::IP_CSUM | nf::TSO;
  for (bool gso : {false, true}) {
    Packet p = make(L3::V6, true, gso);
    TxAction a = resolve_tx(p, d);
    EXPECT_FALSE(a.features.any(nf::IP_CSUM)) << gso;
    EXPECT_FALSE(a.hand_over()) << gso;
  }
  // and an IPv4 packet on an IPV6_CSUM-only device likewise
  d.features = nf::SG | nf::IPV6_CSUM;
  TxAction b = resolve_tx(make(L3::V4, true, false), d);
  EXPECT_FALSE(b.features.any(nf::IPV6_CSUM));
  EXPECT_TRUE(b.checksum_help);
}

// ---- F-22 --------------------------------------------------------------------------------

TEST(Features, F22_TunSetOffload) {
  using namespace tun_f;
  EXPECT_EQ(*tun_offload_features(0), Features{});
  EXPECT_EQ(*tun_offload_features(CSUM), nf::HW_CSUM);
  EXPECT_EQ(*tun_offload_features(CSUM | TSO4 | TSO6 | TSO_ECN),
            nf::HW_CSUM | nf::TSO | nf::TSO6 | nf::TSO_ECN);
  EXPECT_EQ(*tun_offload_features(CSUM | UFO), nf::HW_CSUM);  // accepted, ignored
  EXPECT_EQ(*tun_offload_features(CSUM | USO4 | USO6), nf::HW_CSUM | nf::GSO_UDP_L4);
  EXPECT_FALSE(tun_offload_features(TSO4).has_value());               // no CSUM → -EINVAL
  EXPECT_FALSE(tun_offload_features(CSUM | TSO_ECN).has_value());     // ECN w/o TSO
  EXPECT_FALSE(tun_offload_features(CSUM | USO4).has_value());        // USO4 alone
  EXPECT_FALSE(tun_offload_features(CSUM | 0x80).has_value());        // unknown bit
  // then through fix_features (F-22 → F-1..F-8): TSO needs SG (F-2)
  Device d;
  EXPECT_EQ(fix_features(*tun_offload_features(CSUM | TSO4), d), nf::HW_CSUM);
  EXPECT_EQ(fix_features(*tun_offload_features(CSUM | TSO4) | nf::SG, d),
            nf::HW_CSUM | nf::TSO | nf::SG);
}

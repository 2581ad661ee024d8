// The C API (include/ofld/ofld.h): each entry point against the spec / RFC values, and — since
// the API must be glue only — byte for byte against the C++ engine it wraps.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/ofld.h"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"
#include "../common/frame_builder.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;
namespace fb = ofld::fb;

std::uint16_t be16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

// RFC 793/768 definition: pseudo-header + L4 bytes (field included) sum to 0xFFFF.
bool l4_valid(const std::uint8_t* f, std::size_t len, std::size_t ip_off = 14) {
  const bool v6 = (f[ip_off] >> 4) == 6;
  const std::size_t l4 = ip_off + (v6 ? 40 : std::size_t(f[ip_off] & 15) * 4);
  const std::uint8_t proto = v6 ? f[ip_off + 6] : f[ip_off + 9];
  const std::uint32_t l4len = std::uint32_t(len - l4);
  std::uint32_t ps = v6 ? ofld_csum_ipv6_nofold(f + ip_off + 8, f + ip_off + 24, l4len, proto, 0)
                        : ofld_csum_tcpudp_nofold(f + ip_off + 12, f + ip_off + 16, l4len, proto, 0);
  return ofld_csum_fold16(ofld_csum_partial(f + l4, l4len, ps)) == 0xffff;
}

Bytes tcp_super(bool v6, std::size_t payload) {
  fb::gso::TcpSpec s;
  s.v6 = v6;
  s.payload = payload;
  return fb::gso::tcp_frame(s);
}

// ---- version, errors ------------------------------------------------------------------------

TEST(CApiVersion, HeaderAndLibraryAgree) {
  EXPECT_EQ(ofld_api_version(), OFLD_API_VERSION);
  EXPECT_STRNE(ofld_version(), "");
  EXPECT_STREQ(ofld_strerror(OFLD_OK), "ok");
  EXPECT_STREQ(ofld_strerror(OFLD_E_VNET), "virtio_net_hdr refused");
  EXPECT_STREQ(ofld_strerror(12345), "unknown error");
}

// ---- checksums (RFC 1071 §3, RFC 1624 §4) -----------------------------------------------------

TEST(CApiCsum, Rfc1071ExampleSum) {
  // RFC 1071 §3 numerical example: 00 01 f2 03 f4 f5 f6 f7 sums (folded) to 0xddf2.
  const std::uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(ofld_csum_fold16(ofld_csum_partial(b, sizeof b, 0)), 0xddf2);
  EXPECT_EQ(ofld_csum_fold(ofld_csum_partial(b, sizeof b, 0)), std::uint16_t(~0xddf2));
  EXPECT_EQ(ofld_ip_compute_csum(b, sizeof b), std::uint16_t(~0xddf2));
  // Any split point: odd blocks are placed with csum_block_add.
  std::uint32_t a = ofld_csum_partial(b, 3, 0);
  a = ofld_csum_block_add(a, ofld_csum_partial(b + 3, 5, 0), 3);
  EXPECT_EQ(ofld_csum_fold16(a), 0xddf2);
  std::uint8_t dst[8] = {};
  EXPECT_EQ(ofld_csum_fold16(ofld_csum_partial_copy(dst, b, sizeof b, 0)), 0xddf2);
  EXPECT_EQ(std::memcmp(dst, b, sizeof b), 0);
  EXPECT_EQ(ofld_csum_partial(nullptr, 0, 7u), 7u);
  EXPECT_EQ(ofld_csum_partial(nullptr, 100, 7u), 7u);  // no read through a null pointer
}

TEST(CApiCsum, Rfc1624IncrementalUpdate) {
  // RFC 1624 §4: HC = 0xDD2F, m = 0x5555 -> m' = 0x3285 gives HC' = 0x0000 by eqn. 3.
  EXPECT_EQ(ofld_csum_replace2(0xdd2f, 0x5555, 0x3285), 0x0000);
  // And agrees with recomputing a header whose word changed (IPv4 TTL/protocol word).
  Bytes f = tcp_super(false, 10);
  std::uint8_t* ip = f.data() + 14;
  const std::uint16_t old_check = be16(ip + 10);
  const std::uint16_t old_word = be16(ip + 8);
  ip[8] = 17;  // TTL 64 -> 17
  ip[10] = ip[11] = 0;
  const std::uint16_t want = ofld_ip_compute_csum(ip, 20);
  EXPECT_EQ(ofld_csum_replace2(old_check, old_word, be16(ip + 8)), want);
  // replace4 on the source address.
  const std::uint32_t old_saddr = ofld::wire::load_be32(ip + 12);
  ofld::wire::store_be16(ip + 10, want);
  ofld::wire::store_be32(ip + 12, 0xc0a80101);
  ip[10] = ip[11] = 0;
  EXPECT_EQ(ofld_csum_replace4(want, old_saddr, 0xc0a80101), ofld_ip_compute_csum(ip, 20));
}

TEST(CApiCsum, PseudoHeaderSeedsC12) {
  // C-12: the CHECKSUM_PARTIAL seed is fold16(pseudo-header); a field holding it plus the L4
  // sum completes the checksum. Compare with the C++ functions on the frame's addresses.
  for (bool v6 : {false, true}) {
    Bytes f = tcp_super(v6, 100);
    const std::uint8_t* ip = f.data() + 14;
    const std::uint32_t l4len = std::uint32_t(f.size() - 14 - (v6 ? 40 : 20));
    const std::uint32_t c = v6 ? ofld_csum_ipv6_nofold(ip + 8, ip + 24, l4len, 6, 0)
                               : ofld_csum_tcpudp_nofold(ip + 12, ip + 16, l4len, 6, 0);
    const std::uint32_t cpp = v6 ? ofld::csum::csum_ipv6_nofold(ip + 8, ip + 24, l4len, 6)
                                 : ofld::csum::csum_tcpudp_nofold(ip + 12, ip + 16, l4len, 6);
    EXPECT_EQ(ofld_csum_fold16(c), ofld::csum::csum_fold16(cpp));
    EXPECT_TRUE(l4_valid(f.data(), f.size()));
  }
}

// ---- features ---------------------------------------------------------------------------------

TEST(CApiFeatures, EthtoolNamesToNetifBits) {
  std::uint64_t bits = 0;
  ASSERT_EQ(ofld_features_parse("tx-scatter-gather,tx-checksum-ip-generic", &bits), OFLD_OK);
  EXPECT_EQ(bits, OFLD_NETIF_F_SG | OFLD_NETIF_F_HW_CSUM);
  ASSERT_EQ(ofld_features_parse("tx-tcp-segmentation", &bits), OFLD_OK);
  EXPECT_EQ(bits, OFLD_NETIF_F_TSO);
  ASSERT_EQ(ofld_features_parse("none", &bits), OFLD_OK);
  EXPECT_EQ(bits, 0u);
  EXPECT_EQ(ofld_features_parse("tx-warp-drive", &bits), OFLD_E_FEATURE);
  EXPECT_NE(std::string(ofld_last_reason()).find("tx-warp-drive"), std::string::npos);
  EXPECT_EQ(ofld_features_parse(nullptr, &bits), OFLD_E_INVAL);
}

// ---- virtio_net_hdr (S-1..S-8, V-18) ----------------------------------------------------------

TEST(CApiVnet, HeaderCodecV18) {
  // V-18: flags, gso_type, then hdr_len, gso_size, csum_start, csum_offset little-endian.
  const std::uint8_t le[10] = {1, 1, 0x36, 0, 0xa8, 0x05, 0x22, 0, 0x10, 0};
  ofld_vnet_hdr h{};
  ASSERT_EQ(ofld_vnet_hdr_load(le, 10, 1, &h), OFLD_OK);
  EXPECT_EQ(h.flags, OFLD_VNET_F_NEEDS_CSUM);
  EXPECT_EQ(h.gso_type, OFLD_VNET_GSO_TCPV4);
  EXPECT_EQ(h.hdr_len, 54);
  EXPECT_EQ(h.gso_size, 1448);
  EXPECT_EQ(h.csum_start, 34);
  EXPECT_EQ(h.csum_offset, 16);
  std::uint8_t out[10];
  ASSERT_EQ(ofld_vnet_hdr_store(&h, 1, out, sizeof out), OFLD_OK);
  EXPECT_EQ(std::memcmp(out, le, 10), 0);
  EXPECT_EQ(ofld_vnet_hdr_load(le, 9, 1, &h), OFLD_E_INVAL);
  EXPECT_EQ(ofld_vnet_hdr_store(&h, 1, out, 9), OFLD_E_NOSPC);
}

TEST(CApiVnet, ValidateRejectsAsTapS1S2S4) {
  Bytes f = tcp_super(false, 3000);
  ofld_vnet_hdr h{OFLD_VNET_F_NEEDS_CSUM, OFLD_VNET_GSO_TCPV4, 54, 1448, 34, 16};
  int rej = -1;
  EXPECT_EQ(ofld_vnet_validate(&h, f.data(), f.size(), OFLD_LINK_ETHERNET, &rej), OFLD_OK);
  EXPECT_EQ(rej, 0);
  // S-1: unknown gso_type.
  ofld_vnet_hdr bad = h;
  bad.gso_type = 2;
  EXPECT_EQ(ofld_vnet_validate(&bad, f.data(), f.size(), OFLD_LINK_ETHERNET, &rej), OFLD_E_VNET);
  EXPECT_STREQ(ofld_vnet_reject_name(rej), ofld_last_reason());
  EXPECT_EQ(rej, int(ofld::offload::virtio::VnetReject::UnknownGsoType));
  // S-1: GSO with gso_size 0.
  bad = h;
  bad.gso_size = 0;
  EXPECT_EQ(ofld_vnet_validate(&bad, f.data(), f.size(), OFLD_LINK_ETHERNET, &rej), OFLD_E_VNET);
  EXPECT_EQ(rej, int(ofld::offload::virtio::VnetReject::GsoSizeZero));
  // S-2: the checksum field outside the frame.
  bad = h;
  bad.csum_start = std::uint16_t(f.size() - 4);
  EXPECT_EQ(ofld_vnet_validate(&bad, f.data(), f.size(), OFLD_LINK_ETHERNET, &rej), OFLD_E_VNET);
  EXPECT_EQ(rej, int(ofld::offload::virtio::VnetReject::CsumOutsideFrame));
  // S-4 (B2a): TCP GSO with csum_offset != 16.
  bad = h;
  bad.csum_offset = 6;
  EXPECT_EQ(ofld_vnet_validate(&bad, f.data(), f.size(), OFLD_LINK_ETHERNET, &rej), OFLD_E_VNET);
  EXPECT_EQ(rej, int(ofld::offload::virtio::VnetReject::TcpBadCsumOffset));
  EXPECT_EQ(ofld_vnet_validate(nullptr, f.data(), f.size(), OFLD_LINK_ETHERNET, &rej), OFLD_E_INVAL);
  EXPECT_EQ(ofld_vnet_validate(&h, f.data(), f.size(), 7, &rej), OFLD_E_INVAL);
}

TEST(CApiVnet, BuildForFrameS7) {
  // S-7: a TCPv4 super-frame gives NEEDS_CSUM at the TCP header (34 = 14 + 20), offset 16,
  // gso_type TCPV4, gso_size = mss; its TCP field now holds the pseudo-header seed (C-12).
  Bytes f = tcp_super(false, 3000);
  std::size_t len = f.size();
  ofld_vnet_hdr h{};
  ASSERT_EQ(ofld_vnet_build(f.data(), &len, OFLD_LINK_ETHERNET, 1000, 0, &h), OFLD_OK);
  EXPECT_EQ(len, f.size());
  EXPECT_EQ(h.flags, OFLD_VNET_F_NEEDS_CSUM);
  EXPECT_EQ(h.gso_type, OFLD_VNET_GSO_TCPV4);
  EXPECT_EQ(h.gso_size, 1000);
  EXPECT_EQ(h.csum_start, 34);
  EXPECT_EQ(h.csum_offset, 16);
  const std::uint8_t* ip = f.data() + 14;
  const std::uint16_t seed = ofld_csum_fold16(
      ofld_csum_tcpudp_nofold(ip + 12, ip + 16, std::uint32_t(f.size() - 34), 6, 0));
  EXPECT_EQ(be16(f.data() + 34 + 16), seed);
  // IPv6: csum_start 54, TCPV6.
  Bytes g = tcp_super(true, 3000);
  len = g.size();
  ASSERT_EQ(ofld_vnet_build(g.data(), &len, OFLD_LINK_ETHERNET, 1000, 0, &h), OFLD_OK);
  EXPECT_EQ(h.gso_type, OFLD_VNET_GSO_TCPV6);
  EXPECT_EQ(h.csum_start, 54);
}

// ---- GSO (X-rules) ------------------------------------------------------------------------------

// The C++ engine's segments for the same request (what the C API must reproduce exactly).
std::vector<Bytes> cpp_gso(const Bytes& frame, const ofld_vnet_hdr& h, std::uint64_t features) {
  ofld::offload::virtio::VnetHdr v;
  v.flags = h.flags, v.gso_type = h.gso_type, v.hdr_len = h.hdr_len, v.gso_size = h.gso_size;
  v.csum_start = h.csum_start, v.csum_offset = h.csum_offset;
  auto tp = ofld::offload::virtio::to_packet(v, frame);
  EXPECT_TRUE(tp.ok());
  ofld::core::Device dev;
  dev.features = ofld::core::Features{features};
  auto tx = ofld::gso::tx_prepare(std::move(tp.pkt), dev);
  std::vector<Bytes> out;
  for (auto& s : tx.out) out.push_back(s.to_bytes());
  return out;
}

TEST(CApiGso, TsoReadSplitsIntoValidSegmentsX21) {
  // A TAP read: 10-byte header + TCPv4 frame of 64000 payload bytes, mss 1448; no device
  // features, so every segment leaves with a complete checksum.
  for (bool v6 : {false, true}) {
    Bytes f = tcp_super(v6, 64000);
    std::size_t len = f.size();
    ofld_vnet_hdr h{};
    ASSERT_EQ(ofld_vnet_build(f.data(), &len, OFLD_LINK_ETHERNET, 1448, 0, &h), OFLD_OK);
    std::vector<std::uint8_t> out(128 * 1024);
    std::vector<ofld_seg_info> segs(64);
    std::size_t used = 0, n = 0;
    ASSERT_EQ(ofld_gso_segment(f.data(), len, &h, 0, 0, OFLD_LINK_ETHERNET, out.data(), out.size(),
                               &used, segs.data(), segs.size(), &n),
              OFLD_OK)
        << ofld_last_reason();
    ASSERT_EQ(n, (64000 + 1447) / 1448u);
    const std::size_t hdrs = v6 ? 74 : 54;
    auto want = cpp_gso(f, h, 0);
    ASSERT_EQ(want.size(), n);
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t* s = out.data() + segs[i].offset;
      EXPECT_EQ(segs[i].len, i + 1 < n ? hdrs + 1448 : hdrs + 64000 - 1448 * (n - 1));
      EXPECT_EQ(segs[i].ip_summed, OFLD_CSUM_NONE);
      EXPECT_TRUE(l4_valid(s, segs[i].len)) << "segment " << i;
      // sequence numbers advance by mss.
      EXPECT_EQ(ofld::wire::load_be32(s + hdrs - 20 + 4), 0x11223344u + 1448u * i);
      EXPECT_EQ(Bytes(s, s + segs[i].len), want[i]) << "segment " << i;
      total += segs[i].len;
    }
    EXPECT_EQ(used, total);
  }
}

TEST(CApiGso, ArenaInputReferencesPayloadAndKeepsNeedsCsumX7) {
  // The wireguard-go shape: read into the engine's buffer, split with SG|HW_CSUM (segments
  // keep NEEDS_CSUM for a TUN/TAP write), take each segment as iovec pieces: the payload is
  // referenced, never copied.
  Bytes f = tcp_super(false, 64000);
  std::size_t len = f.size();
  ofld_vnet_hdr h{};
  ASSERT_EQ(ofld_vnet_build(f.data(), &len, OFLD_LINK_ETHERNET, 1448, 0, &h), OFLD_OK);
  ofld_gso* g = ofld_gso_new(OFLD_NETIF_F_SG | OFLD_NETIF_F_HW_CSUM, OFLD_LINK_ETHERNET);
  ASSERT_NE(g, nullptr);
  std::uint8_t* in = ofld_gso_input(g, 65536 + 100);
  ASSERT_NE(in, nullptr);
  std::memcpy(in, f.data(), len);
  ASSERT_EQ(ofld_gso_run(g, in, len, &h, 0, 0), OFLD_OK) << ofld_last_reason();
  const std::size_t n = ofld_gso_count(g);
  ASSERT_EQ(n, 45u);
  auto want = cpp_gso(f, h, OFLD_NETIF_F_SG | OFLD_NETIF_F_HW_CSUM);
  ASSERT_EQ(want.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    ofld_seg_info info{};
    ofld_iovec iov[8];
    std::size_t niov = 0;
    ASSERT_EQ(ofld_gso_output(g, i, &info, iov, 8, &niov), OFLD_OK);
    EXPECT_EQ(info.ip_summed, OFLD_CSUM_PARTIAL);
    EXPECT_EQ(info.csum_start, 34);
    EXPECT_EQ(info.csum_offset, 16);
    EXPECT_EQ(info.vnet.flags, OFLD_VNET_F_NEEDS_CSUM);
    EXPECT_EQ(info.vnet.gso_type, OFLD_VNET_GSO_NONE);
    Bytes joined;
    bool points_into_input = false;
    for (std::size_t k = 0; k < niov; ++k) {
      joined.insert(joined.end(), iov[k].base, iov[k].base + iov[k].len);
      points_into_input |= iov[k].base >= in && iov[k].base < in + len;
    }
    EXPECT_TRUE(points_into_input) << "segment " << i << " payload was copied";
    EXPECT_EQ(joined, want[i]);
  }
  // The same outputs copied end to end, with their infos.
  Bytes all(70000);
  std::vector<ofld_seg_info> infos(n);
  std::size_t used = 0, nsegs = 0;
  ASSERT_EQ(ofld_gso_copy_all(g, all.data(), all.size(), &used, infos.data(), n, &nsegs), OFLD_OK);
  ASSERT_EQ(nsegs, n);
  std::size_t off = 0;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(infos[i].offset, off);
    EXPECT_EQ(infos[i].len, want[i].size());
    EXPECT_EQ(infos[i].csum_start, 34);
    EXPECT_EQ(Bytes(all.begin() + std::ptrdiff_t(off), all.begin() + std::ptrdiff_t(off + want[i].size())),
              want[i]) << "segment " << i;
    off += want[i].size();
  }
  EXPECT_EQ(used, off);
  ofld_gso_counters c{};
  ASSERT_EQ(ofld_gso_get_counters(g, &c), OFLD_OK);
  EXPECT_EQ(c.packets_segmented, 1u);
  EXPECT_EQ(c.segments_out, 45u);
  EXPECT_EQ(c.payload_bytes_referenced, 64000u);
  EXPECT_EQ(c.payload_bytes_copied, 0u);
  ofld_gso_free(g);
}

TEST(CApiGso, FromFrameHeadersAndHwTsoX20) {
  // Without a vnet header the frame's own headers say what to do (gso_size given). A device
  // with TSO takes the super-frame whole: one output, gso_size kept.
  Bytes f = tcp_super(false, 5000);
  ofld_gso* g = ofld_gso_new(OFLD_NETIF_F_SG | OFLD_NETIF_F_HW_CSUM | OFLD_NETIF_F_TSO,
                             OFLD_LINK_ETHERNET);
  ASSERT_EQ(ofld_gso_run(g, f.data(), f.size(), nullptr, 1000, 0), OFLD_OK) << ofld_last_reason();
  ASSERT_EQ(ofld_gso_count(g), 1u);
  ofld_seg_info info{};
  ASSERT_EQ(ofld_gso_output(g, 0, &info, nullptr, 0, nullptr), OFLD_OK);
  EXPECT_EQ(info.len, f.size());
  EXPECT_EQ(info.vnet.gso_type, OFLD_VNET_GSO_TCPV4);
  EXPECT_EQ(info.vnet.gso_size, 1000);
  ofld_gso_free(g);
  // Without TSO: five segments.
  g = ofld_gso_new(0, OFLD_LINK_ETHERNET);
  ASSERT_EQ(ofld_gso_run(g, f.data(), f.size(), nullptr, 1000, 0), OFLD_OK);
  EXPECT_EQ(ofld_gso_count(g), 5u);
  ofld_gso_free(g);
}

TEST(CApiGso, BadInputGivesCodesNotCrashes) {
  Bytes f = tcp_super(false, 3000);
  std::uint8_t small[100];
  std::size_t used = 0, n = 0;
  ofld_seg_info segs[4];
  ofld_vnet_hdr h{OFLD_VNET_F_NEEDS_CSUM, OFLD_VNET_GSO_TCPV4, 0, 1000, 34, 16};
  // Output too small: NOSPC with the sizes needed.
  EXPECT_EQ(ofld_gso_segment(f.data(), f.size(), &h, 0, 0, OFLD_LINK_ETHERNET, small,
                             sizeof small, &used, segs, 4, &n),
            OFLD_E_NOSPC);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(used, f.size() + 2 * 54);
  // A refused header (S-2).
  h.csum_start = 5000;
  EXPECT_EQ(ofld_gso_segment(f.data(), f.size(), &h, 0, 0, OFLD_LINK_ETHERNET, small,
                             sizeof small, &used, segs, 4, &n),
            OFLD_E_VNET);
  EXPECT_STREQ(ofld_last_reason(), "csum-outside-frame");
  // Frames cut inside their headers (S-2/S-3; from 54 bytes on the payload fits gso_size and
  // the frame is accepted as not GSO, S-5): never a crash, always a code.
  h.csum_start = 34;
  for (std::size_t cut = 0; cut < 54; ++cut) {
    const int r = ofld_gso_segment(f.data(), cut, &h, 0, 0, OFLD_LINK_ETHERNET, small,
                                   sizeof small, &used, segs, 4, &n);
    EXPECT_NE(r, OFLD_OK) << cut;
  }
  EXPECT_EQ(ofld_gso_new(0, 9), nullptr);
  EXPECT_EQ(ofld_gso_run(nullptr, f.data(), f.size(), &h, 0, 0), OFLD_E_INVAL);
  EXPECT_EQ(ofld_gso_count(nullptr), 0u);
}

// ---- GRO (G-rules, T-rules) ---------------------------------------------------------------------

std::vector<Bytes> tcp_train(bool v6, std::size_t count, std::size_t mss) {
  std::vector<Bytes> v;
  for (std::size_t i = 0; i < count; ++i) {
    fb::gro::Tcp t;
    t.v6 = v6;
    t.payload = mss;
    t.seq_off = std::uint32_t(i * mss);
    v.push_back(fb::gro::tcp_frame(t));
  }
  return v;
}

TEST(CApiGro, BatchCoalescesIntoOneAggregateWithVnetHdrT11K4) {
  // 64 in-order 1000-byte segments of one flow: merged while the aggregate fits 64 KiB (G-16),
  // each aggregate NEEDS_CSUM at the TCP header with gso_size 1000 (K-4, S-7).
  const auto train = tcp_train(false, 64, 1000);
  ofld_gro_config cfg = OFLD_GRO_CONFIG_INIT;
  cfg.fixed_flow_hash_key = 1;
  ofld_gro* g = ofld_gro_new(&cfg);
  ASSERT_NE(g, nullptr);
  std::vector<ofld_frame> fr;
  for (const auto& b : train) fr.push_back({b.data(), b.size()});
  ASSERT_EQ(ofld_gro_receive(g, fr.data(), fr.size(), OFLD_CSUM_NONE, 0, 0), OFLD_OK);
  ASSERT_EQ(ofld_gro_flush(g, 0, 1), OFLD_OK);
  // The C++ engine, same input and key.
  ofld::gro::EngineOptions eo;
  eo.config.flow_hash_key = 0;
  ofld::gro::Engine e(eo);
  for (const auto& b : train) e.receive(ofld::core::Packet::from_bytes(b));
  e.poll_end();
  e.flush_all();
  auto want = e.take_output();
  ASSERT_EQ(ofld_gro_pending(g), want.size());
  std::vector<std::uint8_t> out(256 * 1024);
  std::size_t total_payload = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    ofld_seg_info info{};
    std::size_t len = 0;
    ASSERT_EQ(ofld_gro_next(g, out.data(), out.size(), &len, 0, &info), OFLD_OK);
    EXPECT_EQ(Bytes(out.data(), out.data() + len), want[i].to_bytes());
    EXPECT_EQ(info.vnet.flags, OFLD_VNET_F_NEEDS_CSUM);
    EXPECT_EQ(info.vnet.gso_type, OFLD_VNET_GSO_TCPV4);
    EXPECT_EQ(info.vnet.gso_size, 1000);
    EXPECT_EQ(info.vnet.csum_start, 34);
    EXPECT_EQ(info.vnet.csum_offset, 16);
    total_payload += len - 54;
  }
  EXPECT_EQ(total_payload, 64000u);
  EXPECT_EQ(ofld_gro_pending(g), 0u);
  EXPECT_EQ(ofld_gro_next(g, out.data(), out.size(), nullptr, 0, nullptr), OFLD_E_STATE);
  ofld_gro_counters c{};
  ASSERT_EQ(ofld_gro_get_counters(g, &c), OFLD_OK);
  EXPECT_EQ(c.packets_in, 64u);
  EXPECT_EQ(c.merged, 64u - want.size());
  EXPECT_EQ(c.aggregates, want.size());
  EXPECT_EQ(c.merged, e.counters().merged);
  ofld_gro_free(g);
}

TEST(CApiGro, FinishGivesValidFrameAndBadChecksumIsCountedT1) {
  auto train = tcp_train(false, 4, 500);
  train[2][14 + 20 + 16] ^= 0x01;  // T-1: a bad TCP checksum is not merged
  ofld_gro* g = ofld_gro_new(nullptr);
  std::vector<ofld_frame> fr;
  for (const auto& b : train) fr.push_back({b.data(), b.size()});
  ASSERT_EQ(ofld_gro_receive(g, fr.data(), fr.size(), OFLD_CSUM_NONE, 0, 0), OFLD_OK);
  ASSERT_EQ(ofld_gro_flush(g, 0, 1), OFLD_OK);
  std::vector<std::uint8_t> out(64 * 1024);
  std::vector<ofld_seg_info> segs(8);
  std::size_t used = 0, n = 0;
  ASSERT_EQ(ofld_gro_next_all(g, out.data(), out.size(), &used, 1, segs.data(), segs.size(), &n),
            OFLD_OK);
  // The bad packet is delivered at once, untouched (T-1); the first two merged; the fourth,
  // after the gap, completes alone.
  ASSERT_EQ(n, 3u);
  int merged = 0, bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* f = out.data() + segs[i].offset;
    if (segs[i].len == 54u + 1000u) {
      ++merged;
      EXPECT_EQ(segs[i].ip_summed, OFLD_CSUM_UNNECESSARY);  // finished: valid as it stands
      EXPECT_EQ(segs[i].vnet.flags, OFLD_VNET_F_DATA_VALID);
      EXPECT_EQ(segs[i].vnet.gso_size, 500);
      EXPECT_TRUE(l4_valid(f, segs[i].len));
    } else if (!l4_valid(f, segs[i].len)) {
      ++bad;
      EXPECT_EQ(Bytes(f, f + segs[i].len), train[2]);
    }
  }
  EXPECT_EQ(merged, 1);
  EXPECT_EQ(bad, 1);
  ofld_gro_counters c{};
  ofld_gro_get_counters(g, &c);
  int checksum_reason = -1;
  for (int i = 0; i < OFLD_GRO_REASONS; ++i)
    if (std::string(ofld_gro_reason_name(i)) == "checksum") checksum_reason = i;
  ASSERT_GE(checksum_reason, 0);
  EXPECT_EQ(c.not_merged[checksum_reason], 1u);
  ofld_gro_free(g);
}

TEST(CApiGro, BadInputGivesCodes) {
  ofld_gro_config cfg = OFLD_GRO_CONFIG_INIT;
  cfg.struct_size = 3;
  EXPECT_EQ(ofld_gro_new(&cfg), nullptr);
  cfg = OFLD_GRO_CONFIG_INIT;
  cfg.link = 5;
  EXPECT_EQ(ofld_gro_new(&cfg), nullptr);
  ofld_gro* g = ofld_gro_new(nullptr);
  ofld_frame f{nullptr, 10};
  EXPECT_EQ(ofld_gro_receive(g, &f, 1, OFLD_CSUM_NONE, 0, 0), OFLD_E_INVAL);
  EXPECT_EQ(ofld_gro_receive(g, nullptr, 0, OFLD_CSUM_PARTIAL, 0, 0), OFLD_E_INVAL);
  // Garbage frames of every length are received and passed through, never a crash.
  const auto t = tcp_train(false, 1, 100)[0];
  for (std::size_t cut = 0; cut <= t.size(); ++cut) {
    ofld_frame x{t.data(), cut};
    EXPECT_EQ(ofld_gro_receive(g, &x, 1, OFLD_CSUM_COMPLETE, 0, 0), OFLD_OK);
  }
  ofld_gro_flush(g, 0, 1);
  std::uint8_t small[10];
  std::size_t len = 0;
  ofld_seg_info info{};
  while (ofld_gro_peek(g, &info, nullptr, 0, nullptr) == OFLD_OK && info.len <= sizeof small)
    ASSERT_EQ(ofld_gro_next(g, small, sizeof small, &len, 0, nullptr), OFLD_OK);
  ASSERT_GT(ofld_gro_pending(g), 0u);
  EXPECT_EQ(ofld_gro_next(g, small, sizeof small, &len, 0, nullptr), OFLD_E_NOSPC);
  EXPECT_EQ(len, info.len);
  ofld_gro_free(g);
}

// ---- tunnels (RFC 7348 §5, V-4, V-12/V-13, W-26/W-27, C-33) -------------------------------------

ofld_tunnel_config tunnel_cfg(int kind) {
  ofld_tunnel_config c{};
  c.struct_size = sizeof c;
  c.kind = kind;
  c.vni = 0x123456;
  c.port = 5555;
  c.udp_csum = 1;
  return c;
}

TEST(CApiTunnel, VxlanEncapHeaderRfc7348AndDecapRoundTrip) {
  auto cfg = tunnel_cfg(OFLD_TUNNEL_VXLAN);
  ofld_tunnel* t = ofld_tunnel_new(&cfg);
  ASSERT_NE(t, nullptr) << ofld_last_reason();
  const Bytes inner = fb::tunnel::tcp_frame(500);
  std::vector<std::uint8_t> out(2048), back(2048);
  std::size_t used = 0, n = 0;
  ofld_tunnel_info info{};
  ASSERT_EQ(ofld_tunnel_encap(t, inner.data(), inner.size(), nullptr, out.data(), out.size(), &used,
                              &info),
            OFLD_OK)
      << ofld_last_reason();
  // RFC 7348 §5: flags 0x08 (I), 24 reserved bits, VNI, 8 reserved bits; then the frame.
  ASSERT_EQ(used, 8 + inner.size());
  EXPECT_EQ(info.hdr_len, 8u);
  const std::uint8_t want_hdr[8] = {0x08, 0, 0, 0, 0x12, 0x34, 0x56, 0};
  EXPECT_EQ(std::memcmp(out.data(), want_hdr, 8), 0);
  EXPECT_EQ(Bytes(out.begin() + 8, out.begin() + std::ptrdiff_t(used)), inner);
  ofld_seg_info seg{};
  ASSERT_EQ(ofld_tunnel_decap(t, out.data(), used, OFLD_OUTER_CSUM_PRESENT, -1, back.data(),
                              back.size(), &n, &seg, &info),
            OFLD_OK)
      << ofld_last_reason();
  EXPECT_EQ(Bytes(back.begin(), back.begin() + std::ptrdiff_t(n)), inner);
  // A datagram of another VNI is dropped with its reason.
  out[6] ^= 1;
  EXPECT_EQ(ofld_tunnel_decap(t, out.data(), used, OFLD_OUTER_CSUM_PRESENT, -1, back.data(),
                              back.size(), &n, &seg, &info),
            OFLD_E_DROP);
  EXPECT_STREQ(ofld_tunnel_drop_name(info.drop), ofld_last_reason());
  EXPECT_STREQ(ofld_last_reason(), "rx_wrong_vni");
  // V-4: the I flag clear.
  out[6] ^= 1;
  out[0] = 0;
  EXPECT_EQ(ofld_tunnel_decap(t, out.data(), used, OFLD_OUTER_CSUM_PRESENT, -1, back.data(),
                              back.size(), &n, &seg, &info),
            OFLD_E_DROP);
  ofld_tunnel_free(t);
}

TEST(CApiTunnel, VxlanRcoCarriesPartialAcrossW26C33) {
  auto cfg = tunnel_cfg(OFLD_TUNNEL_VXLAN);
  cfg.remcsum_tx = cfg.remcsum_rx = 1;
  ofld_tunnel* t = ofld_tunnel_new(&cfg);
  ASSERT_NE(t, nullptr) << ofld_last_reason();
  const Bytes inner = fb::tunnel::tcp_frame(500, false, /*seed=*/true);
  const ofld_vnet_hdr h{OFLD_VNET_F_NEEDS_CSUM, 0, 0, 0, 34, 16};
  std::vector<std::uint8_t> out(2048), back(2048);
  std::size_t used = 0, n = 0;
  ofld_tunnel_info info{};
  ASSERT_EQ(ofld_tunnel_encap(t, inner.data(), inner.size(), &h, out.data(), out.size(), &used,
                              &info),
            OFLD_OK)
      << ofld_last_reason();
  EXPECT_TRUE(info.rco);
  EXPECT_FALSE(info.csum_sw);
  EXPECT_NE(out[1] & 0x20, 0);  // VXLAN_HF_RCO
  ofld_seg_info seg{};
  ASSERT_EQ(ofld_tunnel_decap(t, out.data(), used, OFLD_OUTER_CSUM_PRESENT, -1, back.data(),
                              back.size(), &n, &seg, &info),
            OFLD_OK)
      << ofld_last_reason();
  EXPECT_TRUE(info.rco);
  EXPECT_EQ(seg.ip_summed, OFLD_CSUM_PARTIAL);  // C-33 partial mode
  EXPECT_EQ(seg.csum_start, 34);
  EXPECT_EQ(seg.csum_offset, 16);
  EXPECT_EQ(seg.vnet.flags, OFLD_VNET_F_NEEDS_CSUM);
  // K-2: an RCO datagram whose outer checksum was zero is dropped.
  EXPECT_EQ(ofld_tunnel_decap(t, out.data(), used, OFLD_OUTER_CSUM_ZERO, -1, back.data(),
                              back.size(), &n, &seg, &info),
            OFLD_E_DROP);
  EXPECT_STREQ(ofld_last_reason(), "rx_rco_no_outer_csum");
  ofld_tunnel_free(t);
}

TEST(CApiTunnel, GreKeyAndChecksumV12V13) {
  auto cfg = tunnel_cfg(OFLD_TUNNEL_GRE);
  cfg.has_ikey = cfg.has_okey = 1;
  cfg.ikey = cfg.okey = 77;
  cfg.icsum = cfg.ocsum = 1;
  ofld_tunnel* t = ofld_tunnel_new(&cfg);
  ASSERT_NE(t, nullptr) << ofld_last_reason();
  Bytes eth = fb::tunnel::tcp_frame(300);
  const Bytes ip(eth.begin() + 14, eth.end());
  std::vector<std::uint8_t> out(2048), back(2048);
  std::size_t used = 0, n = 0;
  ofld_tunnel_info info{};
  ASSERT_EQ(ofld_tunnel_encap(t, ip.data(), ip.size(), nullptr, out.data(), out.size(), &used,
                              &info),
            OFLD_OK)
      << ofld_last_reason();
  // RFC 2784/2890: C and K bits, protocol 0x0800, checksum over GRE header + payload, key.
  ASSERT_EQ(info.hdr_len, 12u);
  EXPECT_EQ(out[0], 0xa0);
  EXPECT_EQ(be16(out.data() + 2), 0x0800);
  EXPECT_EQ(ofld_ip_compute_csum(out.data(), used), 0);  // V-13: the sum verifies
  EXPECT_EQ(ofld::wire::load_be32(out.data() + 8), 77u);
  ofld_seg_info seg{};
  ASSERT_EQ(ofld_tunnel_decap(t, out.data(), used, OFLD_OUTER_CSUM_UNKNOWN, -1, back.data(),
                              back.size(), &n, &seg, &info),
            OFLD_OK)
      << ofld_last_reason();
  EXPECT_EQ(Bytes(back.begin(), back.begin() + std::ptrdiff_t(n)), ip);
  out[used - 1] ^= 0xff;  // V-13: a bad GRE checksum drops
  EXPECT_EQ(ofld_tunnel_decap(t, out.data(), used, OFLD_OUTER_CSUM_UNKNOWN, -1, back.data(),
                              back.size(), &n, &seg, &info),
            OFLD_E_DROP);
  EXPECT_STREQ(ofld_last_reason(), "rx_gre_csum_bad");
  ofld_tunnel_free(t);
}

TEST(CApiTunnel, GueEncapDecapAndBadConfig) {
  auto cfg = tunnel_cfg(OFLD_TUNNEL_GUE);
  ofld_tunnel* t = ofld_tunnel_new(&cfg);
  ASSERT_NE(t, nullptr) << ofld_last_reason();
  Bytes eth = fb::tunnel::tcp_frame(300, true);
  const Bytes ip(eth.begin() + 14, eth.end());
  std::vector<std::uint8_t> out(2048), back(2048);
  std::size_t used = 0, n = 0;
  ofld_tunnel_info info{};
  ASSERT_EQ(ofld_tunnel_encap(t, ip.data(), ip.size(), nullptr, out.data(), out.size(), &used,
                              &info),
            OFLD_OK);
  // draft-ietf-intarea-gue §3.1: version 0, hlen 0, proto 41 (IPv6).
  EXPECT_EQ(info.hdr_len, 4u);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 41);
  ASSERT_EQ(ofld_tunnel_decap(t, out.data(), used, OFLD_OUTER_CSUM_PRESENT, -1, back.data(),
                              back.size(), &n, nullptr, &info),
            OFLD_OK);
  EXPECT_EQ(Bytes(back.begin(), back.begin() + std::ptrdiff_t(n)), ip);
  // Not IP: refused with its reason.
  const std::uint8_t junk[4] = {0x10, 0, 0, 0};
  EXPECT_EQ(ofld_tunnel_encap(t, junk, 4, nullptr, out.data(), out.size(), &used, &info), OFLD_E_DROP);
  EXPECT_STREQ(ofld_last_reason(), "tx_not_ip");
  ofld_tunnel_free(t);
  cfg.port = 0;  // GUE needs a port
  EXPECT_EQ(ofld_tunnel_new(&cfg), nullptr);
  cfg.kind = 9;
  EXPECT_EQ(ofld_tunnel_new(&cfg), nullptr);
  cfg.struct_size = 4;
  EXPECT_EQ(ofld_tunnel_new(&cfg), nullptr);
}

// ---- captures (ofld csum verify) ---------------------------------------------------------------

TEST(CApiVerify, FrameVerdicts) {
  Bytes f = tcp_super(false, 200);
  ofld_csum_record r[8];
  std::size_t n = 0;
  ASSERT_EQ(ofld_verify_frame(f.data(), f.size(), OFLD_LINK_ETHERNET, 0, r, 8, &n), OFLD_OK);
  ASSERT_EQ(n, 2u);
  EXPECT_STREQ(ofld_csum_kind_name(r[0].kind), "ipv4");
  EXPECT_STREQ(ofld_csum_kind_name(r[1].kind), "tcp");
  EXPECT_EQ(r[0].verdict, OFLD_VERDICT_GOOD);
  EXPECT_EQ(r[1].verdict, OFLD_VERDICT_GOOD);
  EXPECT_EQ(r[1].field_offset, 50u);
  f[60] ^= 1;
  ASSERT_EQ(ofld_verify_frame(f.data(), f.size(), OFLD_LINK_ETHERNET, 0, r, 8, &n), OFLD_OK);
  EXPECT_EQ(r[1].verdict, OFLD_VERDICT_BAD);
  EXPECT_STREQ(ofld_verdict_name(r[1].verdict), "bad");
  EXPECT_NE(r[1].found, r[1].expected);
  EXPECT_EQ(ofld_verify_frame(f.data(), f.size(), OFLD_LINK_ETHERNET, 0, r, 1, &n), OFLD_E_NOSPC);
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(ofld_verify_frame(f.data(), 5, OFLD_LINK_ETHERNET, 0, r, 8, &n), OFLD_E_PARSE);
}

TEST(CApiVerify, FileMatchesCommandSummary) {
  const std::string path = std::string(OFLD_SOURCE_DIR) + "/data/tcpdump_gso-ipv4-vxlan-ipv4.pcap";
  ofld_verify_summary s{};
  std::size_t records = 0;
  auto cb = [](const ofld_csum_record*, void* u) -> int {
    ++*static_cast<std::size_t*>(u);
    return 0;
  };
  ASSERT_EQ(ofld_verify_file(path.c_str(), 0, cb, &records, &s), OFLD_OK) << ofld_last_reason();
  EXPECT_GT(s.frames, 0u);
  std::uint64_t fields = 0;
  for (auto& k : s.fields)
    for (auto v : k) fields += v;
  EXPECT_EQ(fields, records);
  // The command's JSON summary over the same file.
  const std::string cmd = std::string(OFLD_CLI_PATH) + " csum verify --json " + path;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string js;
  char buf[4096];
  while (std::size_t k = fread(buf, 1, sizeof buf, p)) js.append(buf, k);
  pclose(p);
  EXPECT_NE(js.find("\"frames\": " + std::to_string(s.frames)), std::string::npos);
  EXPECT_EQ(ofld_verify_file("/nonexistent.pcap", 0, nullptr, nullptr, nullptr), OFLD_E_IO);
  EXPECT_EQ(ofld_verify_file(nullptr, 0, nullptr, nullptr, nullptr), OFLD_E_INVAL);
}

}  // namespace

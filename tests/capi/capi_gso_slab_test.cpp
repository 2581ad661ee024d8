// The C API's GSO engine against the C++ engine's tx_prepare on random TSO reads (its outputs
// come from gso::tx_prepare_batch: a header slab plus payload slices for plain TCP).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "ofld/gso/gso.hpp"
#include "ofld/ofld.h"
#include "ofld/offload/virtio_net.hpp"
#include "../common/frame_builder.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;
namespace core = ofld::core;
namespace gso = ofld::gso;
namespace nf = ofld::core::netif_f;
using ofld::fb::gso::TcpSpec;
using ofld::fb::gso::tcp_frame;

// X-7 through the C API: random TSO reads (IPv4/IPv6, TCP options, payload 1..60000, mss
// 1..9000) placed at random offsets of the engine's input buffer (ofld_gso_input: a slab
// where the frame is plain TCP) give exactly what tx_prepare gives for the same frame copied
// linear: the bytes (ofld_gso_copy_all and each output's iovec pieces), each output's info and
// virtio_net_hdr; an error exactly where tx_prepare drops. The input buffer is asked for
// again while the previous outputs reference it.
TEST(CApiGso, X7_SlabOutputsMatchTxPrepareAndInputReuse) {
  const core::Features f = nf::SG | nf::HW_CSUM;
  ofld_gso* g = ofld_gso_new(f.bits, OFLD_LINK_ETHERNET);
  ASSERT_NE(g, nullptr);
  std::mt19937 rng(99);
  std::size_t slab_like = 0;
  for (int n = 0; n < 400; ++n) {
    TcpSpec s;
    s.v6 = rng() % 2;
    s.payload = 1 + rng() % 60000;
    if (rng() % 3 == 0) s.tcp_options = Bytes(12, 1);
    Bytes fr = tcp_frame(s);
    const std::uint16_t mss = std::uint16_t(1 + rng() % 9000);
    std::size_t len = fr.size();
    ofld_vnet_hdr h{};
    if (ofld_vnet_build(fr.data(), &len, OFLD_LINK_ETHERNET, mss, 0, &h) != 0) continue;
    fr.resize(len);
    // reference: the frame copied (linear), tx_prepare
    ofld::offload::virtio::VnetHdr vh0;
    vh0.flags = h.flags;
    vh0.gso_type = h.gso_type;
    vh0.hdr_len = h.hdr_len;
    vh0.gso_size = h.gso_size;
    vh0.csum_start = h.csum_start;
    vh0.csum_offset = h.csum_offset;
    auto tp = ofld::offload::virtio::to_packet(vh0, fr, ofld::wire::LinkType::Ethernet);
    std::uint8_t* buf = ofld_gso_input(g, fr.size() + 64);
    ASSERT_NE(buf, nullptr);
    const std::size_t at = rng() % 64;
    std::memcpy(buf + at, fr.data(), fr.size());
    const int rc = ofld_gso_run(g, buf + at, fr.size(), &h, 0, 0);
    if (!tp.ok()) {
      EXPECT_NE(rc, 0);
      continue;
    }
    auto tx = gso::tx_prepare(std::move(tp.pkt), core::Device::with_features(f));
    if (tx.dropped()) {
      EXPECT_NE(rc, 0) << n;
      EXPECT_EQ(ofld_gso_count(g), 0u);
      continue;
    }
    ASSERT_EQ(rc, 0) << n << " " << ofld_last_reason();
    ASSERT_EQ(ofld_gso_count(g), tx.out.size()) << n;
    std::size_t used = 0, ns = 0;
    ofld_gso_copy_all(g, nullptr, 0, &used, nullptr, 0, &ns);
    Bytes all(used);
    std::vector<ofld_seg_info> info(ns);
    ASSERT_EQ(ofld_gso_copy_all(g, all.data(), all.size(), &used, info.data(), info.size(), &ns), 0);
    std::size_t off = 0;
    for (std::size_t i = 0; i < tx.out.size(); ++i) {
      const Bytes want = tx.out[i].to_bytes();
      ASSERT_EQ(info[i].len, want.size());
      EXPECT_EQ(info[i].offset, off);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), all.begin() + long(off))) << n << " " << i;
      const auto vh = ofld::offload::virtio::from_packet(tx.out[i], true);
      ASSERT_TRUE(vh.has_value());
      EXPECT_EQ(info[i].vnet.flags, vh->flags) << n << " " << i;
      EXPECT_EQ(info[i].vnet.csum_start, vh->csum_start) << n << " " << i;
      EXPECT_EQ(info[i].vnet.csum_offset, vh->csum_offset) << n << " " << i;
      EXPECT_EQ(info[i].vnet.gso_type, vh->gso_type) << n << " " << i;
      EXPECT_EQ(info[i].vnet.hdr_len, vh->hdr_len) << n << " " << i;
      EXPECT_EQ(info[i].csum_start, tx.out[i].csum_start_offset()) << n << " " << i;
      EXPECT_EQ(info[i].ip_summed, std::uint8_t(tx.out[i].ip_summed())) << n << " " << i;
      ofld_seg_info one{};
      ofld_iovec iov[64];
      std::size_t niov = 0;
      ASSERT_EQ(ofld_gso_output(g, i, &one, iov, 64, &niov), 0);
      EXPECT_EQ(one.len, info[i].len);
      EXPECT_EQ(one.csum_start, info[i].csum_start);
      slab_like += niov == 2;
      Bytes cat;
      for (std::size_t k = 0; k < niov; ++k) cat.insert(cat.end(), iov[k].base, iov[k].base + iov[k].len);
      EXPECT_EQ(cat, want) << n << " " << i;
      off += want.size();
    }
  }
  EXPECT_GT(slab_like, 100u);
  ofld_gso_free(g);
}

}  // namespace

// GRO engine rules checked at the GroContext helpers (offload/gro_context.hpp) and through the
// engine: dispatch (G-3, G-6, G-10), the carried checksum (G-14, G-15, N-9), merge accounting
// (G-20), the GRE receive checks (W-6, W-7, W-8, W-10) and UDP fraglist mode (U-8). Expected
// values come from the spec rules and the kernel functions they mirror (net/core/gro.c
// dev_gro_receive, include/net/gro.h, net/ipv4/gre_offload.c gre_gro_receive,
// net/ipv4/udp_offload.c udp_gro_receive_segment), never from ofld's output.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "gro_test_util.hpp"
#include "ofld/core/csum.hpp"
#include "ofld/offload/gro_context.hpp"
#include "ofld/offload/registry.hpp"

namespace {

using namespace ofld::grotest;
using ofld::core::Packet;
using ofld::offload::GroContext;
using ofld::offload::GroHeld;
using ofld::offload::GroReason;
using ofld::offload::Key;
using Frames = std::vector<std::vector<std::uint8_t>>;
namespace cs = ofld::csum;

constexpr std::uint16_t kLocalExperimental = 0x88B5;  // IEEE 802 local experimental ethertype

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::uint8_t(seed + 7 * i);
  return v;
}

ofld::gro::EngineOptions opts() {
  ofld::gro::EngineOptions o;
  o.batch = 100000;
  o.config.flow_hash_key = 0;
  return o;
}

struct Outcome {
  std::vector<Packet> out;
  ofld::gro::Counters c;
};

Outcome run_counted(const Frames& frames, ofld::gro::EngineOptions o = opts()) {
  ofld::gro::Engine e(o);
  for (const auto& f : frames) e.receive(Packet::from_bytes(f));
  e.flush_all();
  Outcome r;
  r.c = e.counters();
  r.out = e.take_output();
  return r;
}

std::uint64_t not_merged(const Outcome& r, GroReason why) {
  return r.c.not_merged[std::size_t(why)];
}

Frames tcp_stream(int n) {
  Frames f;
  for (int i = 0; i < n; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    f.push_back(tcp_frame(t));
  }
  return f;
}

// GRE over IPv4 (outer Ethernet 14 + IPv4 20): the GRE header starts at 34.
constexpr std::size_t kGreOff = 34;

Frames gre_stream(std::uint16_t flags, std::uint16_t proto, int n) {
  Frames f;
  for (int i = 0; i < n; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    f.push_back(gre(false, flags, proto, ip_only(t), 7, std::uint16_t(i)));
  }
  return f;
}

// ---- dispatch ---------------------------------------------------------------------------------

// G-3: an ethertype without a GRO handler passes up unchanged — never held, never merged.
TEST(GroContextRules, G3_EthertypeWithoutHandlerPassesUpUnchanged) {
  Frames f;
  for (int i = 0; i < 3; ++i) {
    auto b = pattern(114, std::uint8_t(i));
    const auto eth = tcp_frame(Tcp{});  // the selftest's MAC addresses
    std::copy(eth.begin(), eth.begin() + 12, b.begin());
    put16(b, 12, kLocalExperimental);
    f.push_back(b);
  }
  const Outcome r = run_counted(f);
  ASSERT_EQ(r.out.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r.out[i].to_bytes(), f[i]) << i;
  EXPECT_EQ(not_merged(r, GroReason::NoHandler), 3u);
  EXPECT_EQ(r.c.held, 0u);
}

// G-6 (with T-11): the L3/L4 receive hands back the held flow that must be completed now. A
// segment after a sequence gap completes the held 100-byte flow at once — before any flush —
// and is held itself.
TEST(GroContextRules, G6_HeldFlowCompletedWhenTheNextPacketEndsIt) {
  ofld::gro::Engine e(opts());
  Tcp a, gap;
  gap.seq_off = 200;  // expected 100
  e.receive(Packet::from_bytes(tcp_frame(a)));
  EXPECT_TRUE(e.output().empty());
  e.receive(Packet::from_bytes(tcp_frame(gap)));
  ASSERT_EQ(e.output().size(), 1u) << "the held flow is completed when the gap arrives";
  EXPECT_EQ(e.output()[0].to_bytes(), tcp_frame(a)) << "count 1: delivered as it came (G-8)";
  e.flush_all();
  auto out = e.take_output();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].to_bytes(), tcp_frame(gap));
}

int g_depth = 0;
void recurse(GroContext& ctx) {
  ++g_depth;
  ofld::offload::gro_call_receive(ctx, Key::Ethertype, kLocalExperimental);
}

// G-10: each nested receive call counts; the call that would reach GRO_RECURSION_LIMIT (15)
// is refused and the packet flushed (gro_recursion_inc_test: ++counter == 15), so a handler
// that calls itself runs 14 times.
TEST(GroContextRules, G10_RecursionLimitFlushes) {
  ofld::offload::Registry reg;
  ASSERT_TRUE(reg.add(Key::Ethertype, kLocalExperimental, {"loop", nullptr, recurse, nullptr}));
  ofld::offload::GroConfig cfg;
  Packet p = Packet::from_bytes(pattern(64, 1));
  GroContext ctx;
  ctx.cfg = &cfg;
  ctx.reg = &reg;
  ctx.skb = &p;
  g_depth = 0;
  ofld::offload::gro_call_receive(ctx, Key::Ethertype, kLocalExperimental);
  EXPECT_EQ(g_depth, int(ofld::offload::kGroRecursionLimit) - 1);
  EXPECT_TRUE(ctx.flush);
  EXPECT_EQ(ctx.skb_reason, GroReason::Recursion);
  // No entry at all: flushed as having no handler (G-3).
  GroContext none;
  none.cfg = &cfg;
  none.reg = &reg;
  none.skb = &p;
  ofld::offload::gro_call_receive(none, Key::Ethertype, 0x0800);
  EXPECT_EQ(none.skb_reason, GroReason::NoHandler);
}

// ---- the carried checksum ---------------------------------------------------------------------

// G-14 skb_gro_checksum_try_convert: only when no verified level is left and no sum is
// carried does the context take ~pseudo as its COMPLETE-style sum.
TEST(GroContextRules, G14_TryConvertOnlyWithoutLevelOrSum) {
  Packet p = Packet::from_bytes(pattern(64, 3));
  const cs::wsum psum = 0x12345678;
  GroContext a;
  a.skb = &p;
  ofld::offload::gro_checksum_try_convert(a, psum);
  EXPECT_TRUE(a.csum_valid);
  EXPECT_EQ(a.csum, cs::wsum(~psum));

  GroContext level;  // a device-verified level is left: nothing converted
  level.skb = &p;
  level.csum_cnt = 1;
  ofld::offload::gro_checksum_try_convert(level, psum);
  EXPECT_FALSE(level.csum_valid);

  GroContext carried;  // a sum is already carried: kept
  carried.skb = &p;
  carried.csum_valid = true;
  carried.csum = 0xABCD;
  ofld::offload::gro_checksum_try_convert(carried, psum);
  EXPECT_EQ(carried.csum, cs::wsum(0xABCD));
}

// G-15 skb_gro_postpull_rcsum: pulling a header takes its bytes out of the carried sum, so
// the sum then covers exactly what follows (compared folded: ones-complement values);
// without a carried sum nothing changes.
TEST(GroContextRules, G15_PostpullTakesHeaderOutOfCarriedSum) {
  for (std::size_t hdr : {std::size_t(14), std::size_t(20), std::size_t(40), std::size_t(8)}) {
    const auto b = pattern(150, std::uint8_t(hdr));
    Packet p = Packet::from_bytes(b);
    GroContext ctx;
    ctx.skb = &p;
    ctx.csum_valid = true;
    ctx.csum = cs::csum_partial(b.data(), b.size(), 0);
    ofld::offload::gro_postpull_rcsum(ctx, 0, hdr);
    const cs::wsum rest = cs::csum_partial(b.data() + hdr, b.size() - hdr, 0);
    EXPECT_EQ(cs::csum_fold(ctx.csum), cs::csum_fold(rest)) << hdr;
  }
  Packet p = Packet::from_bytes(pattern(60, 9));
  GroContext none;
  none.skb = &p;
  none.csum = 0x1111;
  ofld::offload::gro_postpull_rcsum(none, 0, 20);
  EXPECT_EQ(none.csum, cs::wsum(0x1111));
}

// ---- merge accounting -------------------------------------------------------------------------

// G-20: a merge adds the arriving packet's segment count (a GSO packet brings gso_segs) and
// its payload to the aggregate, and marks the packet merged (same_flow).
TEST(GroContextRules, G20_MergeAddsCountAndPayload) {
  const auto pb = pattern(140, 1), sb = pattern(340, 2);
  ofld::offload::GroConfig cfg;
  GroHeld held;
  held.pkt = Packet::from_bytes(pb);
  held.count = 2;
  held.network_offsets[0] = 14;
  Packet skb = Packet::from_bytes(sb);
  GroContext ctx;
  ctx.cfg = &cfg;
  ctx.skb = &skb;
  ctx.data_offset = 40;
  ctx.count = 3;
  ctx.proto = 6;
  ASSERT_TRUE(ofld::offload::gro_merge(ctx, held));
  EXPECT_EQ(held.count, 5);
  EXPECT_TRUE(ctx.same_flow);
  EXPECT_EQ(held.pkt.len(), pb.size() + sb.size() - 40);
  // Through the engine: three 100-byte segments make one aggregate of count 3.
  const Outcome r = run_counted(tcp_stream(3));
  ASSERT_EQ(r.out.size(), 1u);
  EXPECT_EQ(r.c.aggregates, 1u);
  EXPECT_EQ(r.c.segments_out, 3u);
  EXPECT_EQ(r.out[0].gso.segs, 3);
}

// ---- GRE --------------------------------------------------------------------------------------

// W-10: GRE pulls 4, 8 or 12 bytes (base, + key, + checksum) and hands the rest to the inner
// protocol: the aggregate is the first packet's headers and the three payloads, 300 bytes of
// 'a', behind a GRE header of that length.
TEST(GroContextRules, W10_GrePullsItsHeaderLength) {
  for (auto [flags, len] : {std::pair<std::uint16_t, std::size_t>{0x0000, 4}, {0x2000, 8},
                            {0x8000, 8}, {0xA000, 12}}) {
    const Outcome r = run_counted(gre_stream(flags, 0x0800, 3));
    ASSERT_EQ(r.out.size(), 1u) << flags;
    const auto b = r.out[0].to_bytes();
    const std::size_t inner = kGreOff + len;
    ASSERT_EQ(b.size(), inner + 20 + 20 + 300) << flags;
    EXPECT_EQ(get16(b.data() + inner + 2), 20 + 20 + 300) << "inner tot_len " << flags;
    for (std::size_t i = inner + 40; i < b.size(); ++i)
      ASSERT_EQ(b[i], 'a') << flags << " at " << i;
  }
}

// W-7: the GRE protocol type must have a GRO handler; otherwise nothing is aggregated.
TEST(GroContextRules, W7_GreInnerWithoutHandlerNotMerged) {
  const Frames f = gre_stream(0x0000, kLocalExperimental, 3);
  const Outcome r = run_counted(f);
  ASSERT_EQ(r.out.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r.out[i].to_bytes(), f[i]) << i;
  EXPECT_EQ(not_merged(r, GroReason::NoHandler), 3u);
}

// W-8: with C set the GRE checksum (RFC 2784 §2.1: over GRE header and payload, no pseudo
// header) is validated; a wrong one is not aggregated and the packet is delivered as it came.
TEST(GroContextRules, W8_GreChecksumValidated) {
  Frames f = gre_stream(0x8000, 0x0800, 3);
  for (auto& b : f) b[kGreOff + 4] ^= 0x01;  // the checksum field
  const Outcome r = run_counted(f);
  ASSERT_EQ(r.out.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r.out[i].to_bytes(), f[i]) << i;
  EXPECT_EQ(not_merged(r, GroReason::Checksum), 3u);
  EXPECT_EQ(run_counted(gre_stream(0x8000, 0x0800, 3)).out.size(), 1u) << "intact: merged";
}

// W-6: GRE carried by GUE (FOU/GUE, IP protocol 47 in the GUE header) is aggregated without
// a GRE checksum, but one with C set is not (gre_gro_receive refuses C when is_fou).
TEST(GroContextRules, W6_GreChecksumOverGueNotMerged) {
  ofld::gro::EngineOptions o = opts();
  o.config.udp_tunnels.push_back({6080, 6080, true, false});
  for (std::uint16_t flags : {std::uint16_t(0x0000), std::uint16_t(0x8000)}) {
    Frames f;
    const Frames g = gre_stream(flags, 0x0800, 3);
    for (std::size_t i = 0; i < g.size(); ++i) {
      std::vector<std::uint8_t> gue(4, 0);
      gue[1] = 47;  // GRE
      gue.insert(gue.end(), g[i].begin() + kGreOff, g[i].end());
      f.push_back(outer(false, 17, udp_l4(false, 40000, 6080, gue, true), std::uint16_t(i)));
    }
    const Outcome r = run_counted(f, o);
    if (flags == 0) {
      EXPECT_EQ(r.out.size(), 1u) << "GRE without C over GUE merges";
    } else {
      EXPECT_EQ(r.out.size(), 3u);
      EXPECT_EQ(not_merged(r, GroReason::GreCsumFou), 3u);
    }
  }
}

}  // namespace

namespace {

// One UDP datagram of the flow 192.168.1.200:1500 → .100:8000 at the UDP header, with a held
// packet of the same flow as its only candidate (what dev_gro_receive and inet_gro_receive
// have set up when udp4_gro_receive runs).
struct UdpRound {
  std::vector<std::uint8_t> held_bytes = udp_frame(false, 100, false, 1500, 8000, 'u', 0);
  std::vector<std::uint8_t> skb_bytes = udp_frame(false, 100, false, 1500, 8000, 'u', 1);
  ofld::offload::GroConfig cfg;
  GroHeld held;
  GroHeld* cand[1] = {&held};
  Packet skb = Packet::from_bytes(skb_bytes);
  GroContext ctx;

  void run(bool held_flist) {
    held.pkt = Packet::from_bytes(held_bytes);
    held.network_offsets[0] = 14;
    held.transport_offset = 34;
    held.proto = 17;
    held.data_offset = 42;
    held.same_flow = true;
    held.is_flist = held_flist;
    ctx.cfg = &cfg;
    ctx.reg = &ofld::offload::builtin_registry();
    ctx.skb = &skb;
    ctx.data_offset = 34;
    ctx.proto = 17;
    ctx.network_offsets[0] = 14;
    ctx.transport_offset = 34;
    ctx.candidates = std::span<GroHeld*>(cand, 1);
    const auto* udp = ctx.reg->find(Key::IpProto, 17);
    ASSERT_NE(udp, nullptr);
    udp->gro_receive(ctx);
  }
};

}  // namespace

// U-8: a datagram whose fraglist mode differs from its flow's is not merged, and the held flow
// is completed. Here the device has GRO_FRAGLIST and no socket wants UDP_GRO, so the datagram is
// in fraglist mode (U-3); a flow held in segment mode refuses it. With the modes equal (both
// segment mode: GRO_UDP_FWD without GRO_FRAGLIST) the same datagram merges.
TEST(GroContextRules, U8_FraglistModeMismatchCompletesTheFlow) {
  UdpRound mismatch;
  mismatch.cfg.gro_fraglist = true;
  mismatch.run(/*held_flist=*/false);
  EXPECT_TRUE(mismatch.ctx.is_flist);
  EXPECT_TRUE(mismatch.ctx.flush);
  EXPECT_EQ(mismatch.ctx.skb_reason, GroReason::FraglistMode);
  EXPECT_EQ(mismatch.ctx.pp, &mismatch.held);
  EXPECT_EQ(mismatch.ctx.pp_reason, GroReason::FraglistMode);

  UdpRound other_way;  // segment-mode datagram, fraglist flow
  other_way.cfg.udp_gro_fwd = true;
  other_way.run(/*held_flist=*/true);
  EXPECT_FALSE(other_way.ctx.is_flist);
  EXPECT_EQ(other_way.ctx.skb_reason, GroReason::FraglistMode);
  EXPECT_EQ(other_way.ctx.pp, &other_way.held);

  UdpRound same;  // both segment mode: merged
  same.cfg.udp_gro_fwd = true;
  same.run(/*held_flist=*/false);
  EXPECT_FALSE(same.ctx.flush);
  EXPECT_TRUE(same.ctx.same_flow);
  EXPECT_EQ(same.held.count, 2);
}

namespace {

ofld::core::wsum g_seen_csum = 0;
std::uint32_t g_seen_offset = 0;
bool g_seen_valid = false;
void record_l4(GroContext& ctx) {
  g_seen_csum = ctx.csum;
  g_seen_offset = ctx.data_offset;
  g_seen_valid = ctx.csum_valid;
}

}  // namespace

// N-9: IPv6 GRO takes the IPv6 header (and the extension headers it walks, N-7) out of the
// carried CHECKSUM_COMPLETE sum before the L4 handler runs, so that handler sees the sum of
// exactly its own bytes. The IPv6 hook of the built-in table runs; the TCP slot is a recorder.
TEST(GroContextRules, N9_Ipv6HeaderTakenOutOfTheCarriedSum) {
  const auto* v6 = ofld::offload::builtin_registry().find(Key::Ethertype, 0x86DD);
  ASSERT_NE(v6, nullptr);
  ofld::offload::Registry reg;
  ASSERT_TRUE(reg.add(Key::Ethertype, 0x86DD, *v6));
  ASSERT_TRUE(reg.add(Key::IpProto, 6, {"recorder", nullptr, record_l4, nullptr}));
  for (bool ext : {false, true}) {
    Tcp t;
    t.v6 = true;
    if (ext) t.v6_ext = std::vector<std::uint8_t>(8, 0);  // an 8-byte destination-options header
    const auto b = tcp_frame(t);
    const std::size_t l4 = 14 + 40 + (ext ? 8 : 0);
    ofld::offload::GroConfig cfg;
    Packet p = Packet::from_bytes(b);
    GroContext ctx;
    ctx.cfg = &cfg;
    ctx.reg = &reg;
    ctx.skb = &p;
    ctx.data_offset = 14;
    ctx.protocol = 0x86DD;
    ctx.csum_valid = true;  // G-5: a device COMPLETE sum from the network header on
    ctx.csum = cs::csum_partial(b.data() + 14, b.size() - 14, 0);
    g_seen_valid = false;
    ofld::offload::gro_call_receive(ctx, Key::Ethertype, 0x86DD);
    ASSERT_TRUE(g_seen_valid) << ext;
    EXPECT_EQ(g_seen_offset, l4) << ext;
    const cs::wsum l4_sum = cs::csum_partial(b.data() + l4, b.size() - l4, 0);
    EXPECT_EQ(cs::csum_fold(g_seen_csum), cs::csum_fold(l4_sum)) << ext;
  }
}

// The GRO engine's receive API (Engine::receive(Packet&&), receive_batch) and the packet
// operations its merge uses (Packet::discard, Packet::append_frags_from), plus G-2's flow
// hash being a property of the packet's bytes rather than of its head/fragment geometry.
//
// Expected values come from the API contracts in engine.hpp / packet.hpp and from the rule
// text (G-2: packets of one flow, same hash, same MAC header, meet in one bucket; T-10/T-11:
// contiguous full-size segments merge), never from a run of the code under test.
#include <gtest/gtest.h>

#include <random>

#include "gro_test_util.hpp"

namespace {

using namespace ofld;
using namespace ofld::grotest;
using Bytes = std::vector<std::uint8_t>;

Tcp seg(bool v6, std::uint32_t seq_off, std::size_t payload = 1000) {
  return tcp_seg(v6, seq_off, payload);
}

// ---- Packet::discard, Packet::append_frags_from ------------------------------------------

TEST(PacketDiscard, ReleasesHeadFragmentsAndFragList) {
  core::Packet p = core::Packet::from_bytes_frags(Bytes(300, 7), 100, 50);  // 100 + 4 frags
  core::BufferRef keep = p.frags()[0].buf;                                    // watch one
  ASSERT_EQ(keep.use_count(), 2);
  p.add_to_frag_list(core::Packet::from_bytes(Bytes(40, 1)));
  ASSERT_EQ(p.len(), 340u);
  p.discard();
  EXPECT_EQ(p.len(), 0u);
  EXPECT_EQ(p.headlen(), 0u);
  EXPECT_EQ(p.nr_frags(), 0u);
  EXPECT_TRUE(p.frag_list().empty());
  EXPECT_EQ(keep.use_count(), 1) << "the fragment reference must be dropped";
  p = core::Packet::from_bytes(Bytes(10, 3));  // assignable afterwards
  EXPECT_EQ(p.len(), 10u);
}

TEST(PacketAppendFrags, MovesInOrderAndDropsEmptySlices) {
  core::Packet a = core::Packet::from_bytes_frags(Bytes{1, 2, 3, 4, 5, 6}, 2, 2);  // frags 34 56
  core::Packet b = core::Packet::from_bytes_frags(Bytes{9, 8, 7, 6, 5}, 1, 2);     // frags 87 65
  b.add_frag(core::Buffer::make(Bytes{0xAA}), 0, 0);  // empty slice: add_frag keeps nothing
  core::BufferRef b0 = b.frags()[0].buf;
  const long before = b0.use_count();
  a.append_frags_from(b);
  EXPECT_EQ(a.to_bytes(), (Bytes{1, 2, 3, 4, 5, 6, 8, 7, 6, 5}));
  EXPECT_EQ(a.nr_frags(), 4u);
  EXPECT_EQ(a.len(), 10u);
  EXPECT_EQ(b.nr_frags(), 0u);
  EXPECT_EQ(b.len(), 1u) << "the source keeps its head";
  EXPECT_EQ(b0.use_count(), before) << "fragments are moved, not shared";
}

TEST(PacketAppendFrags, SpillsPastTheInlineFragments) {
  core::Packet a = core::Packet::from_bytes_frags(Bytes(10, 1), 2, 2);  // 4 inline frags
  core::Packet b = core::Packet::from_bytes_frags(Bytes(13, 2), 1, 2);  // 6 frags
  a.append_frags_from(b);
  Bytes want(10, 1);
  want.insert(want.end(), 12, 2);
  EXPECT_EQ(a.to_bytes(), want);
  EXPECT_EQ(a.nr_frags(), 10u);
}

// ---- Engine::receive(Packet&&) consumes -------------------------------------------------

TEST(GroReceiveApi, EveryOutcomeLeavesThePacketWithoutStorage) {
  gro::EngineOptions o;
  o.batch = 1000;
  gro::Engine e(o);
  // held (new flow), merged (fast path), delivered at once (SYN is a flush flag, T-6/T-16)
  core::Packet held = core::Packet::from_bytes_frags(tcp_frame(seg(false, 0)), 54);
  core::Packet merged = core::Packet::from_bytes_frags(tcp_frame(seg(false, 1000)), 54);
  Tcp syn = seg(false, 0);
  syn.flags = 0x02;
  syn.sport = 999;
  core::Packet delivered = core::Packet::from_bytes(tcp_frame(syn));
  core::BufferRef payload = merged.frags()[0].buf;
  e.receive(std::move(held));
  e.receive(std::move(merged));
  e.receive(std::move(delivered));
  for (const core::Packet* p : {&held, &merged, &delivered}) {
    EXPECT_EQ(p->len(), 0u);
    EXPECT_EQ(p->nr_frags(), 0u);
  }
  EXPECT_EQ(payload.use_count(), 2) << "the aggregate and this test hold the payload, nobody else";
  EXPECT_EQ(e.counters().merged, 1u);
  EXPECT_EQ(e.counters().held, 1u);
  EXPECT_EQ(e.counters().delivered_now, 1u);
}

// The general path's merge discards the shell too (fast path off).
TEST(GroReceiveApi, GeneralPathMergeDiscardsTheShell) {
  gro::EngineOptions o;
  o.fast_path = false;
  gro::Engine e(o);
  e.receive(core::Packet::from_bytes(tcp_frame(seg(true, 0))));
  core::Packet m = core::Packet::from_bytes(tcp_frame(seg(true, 1000)));
  e.receive(std::move(m));
  EXPECT_EQ(e.counters().merged, 1u);
  EXPECT_EQ(m.len(), 0u);
}

// receive_batch(span) is receive() of each packet in order: same outputs, same counters,
// over a random mix (flows, reordering, flags, sizes) and random batch cuts.
TEST(GroReceiveApi, BatchEqualsOneByOne) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<Bytes> frames;
    std::uint32_t seq[4] = {0, 0, 0, 0};
    for (int i = 0; i < 200; ++i) {
      const int f = int(rng() % 4);
      Tcp t = seg(f & 1, seq[f], rng() % 8 ? 1000 : 1 + rng() % 999);
      t.sport = std::uint16_t(1000 + f);
      if (rng() % 20 == 0) t.flags |= 0x08;  // PSH
      if (rng() % 25 == 0) t.seq_off += 1;   // a gap
      seq[f] = t.seq_off + std::uint32_t(t.payload);
      frames.push_back(tcp_frame(t));
    }
    gro::EngineOptions o;
    o.config.flow_hash_key = 1;  // the same key in both engines: the same flush order
    gro::Engine one(o), batch(o);
    for (const auto& f : frames) one.receive(core::Packet::from_bytes_frags(f, f.size() >= 1054 ? 54 : 0));
    std::size_t at = 0;
    while (at < frames.size()) {
      const std::size_t n = std::min<std::size_t>(frames.size() - at, 1 + rng() % 40);
      std::vector<core::Packet> v;
      for (std::size_t i = 0; i < n; ++i)
        v.push_back(core::Packet::from_bytes_frags(frames[at + i], frames[at + i].size() >= 1054 ? 54 : 0));
      batch.receive_batch(v);
      for (const auto& p : v) ASSERT_EQ(p.len(), 0u);
      at += n;
    }
    one.flush_all();
    batch.flush_all();
    auto a = one.take_output(), b = batch.take_output();
    ASSERT_EQ(a.size(), b.size()) << "round " << round;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].to_bytes(), b[i].to_bytes()) << "round " << round << " output " << i;
      EXPECT_EQ(a[i].gso.size, b[i].gso.size);
      EXPECT_EQ(a[i].gso.segs, b[i].gso.segs);
    }
    EXPECT_EQ(one.counters().merged, batch.counters().merged);
    EXPECT_EQ(one.counters().aggregates, batch.counters().aggregates);
    EXPECT_EQ(one.counters().not_merged, batch.counters().not_merged);
    EXPECT_EQ(one.counters().completed, batch.counters().completed);
  }
}

// ---- G-2: the flow hash does not depend on geometry -------------------------------------

// Two contiguous full-size segments of one flow, the first with its headers split between
// the head and a fragment (as a driver with a small copybreak may deliver it), the second
// linear: one flow, one hash (the device's RSS hash is over the bytes), so they merge into
// one aggregate of 2 (T-10/T-11), with the fast path on and off.
TEST(GroReceiveApi, G2_HashIgnoresHeadFragmentSplit) {
  for (bool v6 : {false, true})
    for (bool fast : {true, false}) {
      gro::EngineOptions o;
      o.fast_path = fast;
      gro::Engine e(o);
      e.receive(core::Packet::from_bytes_frags(tcp_frame(seg(v6, 0)), 20));
      e.receive(core::Packet::from_bytes(tcp_frame(seg(v6, 1000))));
      e.receive(core::Packet::from_bytes(tcp_frame(seg(v6, 2000))));
      e.flush_all();
      EXPECT_EQ(e.counters().merged, 2u) << "v6 " << v6 << " fast " << fast;
      EXPECT_EQ(e.counters().aggregates, 1u);
      ASSERT_EQ(e.output().size(), 1u);
      EXPECT_EQ(e.output()[0].gso.segs, 3u);
    }
}

}  // namespace

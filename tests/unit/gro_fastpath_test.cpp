// The GRO engine's TCP fast path (Engine::fast_receive) against the general chain, which is
// the reference here (it is the path checked against the running kernel by the GroKernel
// and KernelOracle.K*_Gro_ tests). Randomised streams (seeded RNG) are fed to two engines
// that differ only in EngineOptions::fast_path, and after every packet the two outputs are
// compared packet by packet: bytes, head/fragment geometry, checksum state, GSO info, header
// positions and the other metadata; at the end every counter, per reason.
//
// Rules exercised (spec §5–§7): G-2 (flow identity: hash, MAC header, VLAN tag), G-4 (GSO
// input, fragments), G-5 and G-11..G-13 (CHECKSUM_NONE with good and bad TCP checksums,
// UNNECESSARY levels 0..3, COMPLETE right and wrong, PARTIAL at and before the TCP header),
// G-7 (new flows, 8 flows per bucket), G-9 (poll end, flush timeout), G-16 (the 64 KB
// aggregate limit, with 8000-byte segments), N-1 (IP options, fragments, bad IPv4 header
// checksum), N-2/N-6 (Ethernet padding, the reserved bit), N-3/N-8 (addresses, flow
// label), N-7 (IPv6 extension headers), N-10/N-12 (TTL/hop limit, TOS/traffic class/ECN,
// DF), N-14/N-15 (IPv4 ID incrementing, wrapping, fixed, random, DF on/off), T-2, T-3
// (ports), T-5/T-6 (CWR, ECE, URG, RST, SYN, FIN, PSH, window), T-7 (ack), T-8 (option
// changes), T-10 (sizes, zero-length, longer than mss), T-11 (reordering, gaps,
// retransmissions), T-15..T-18 (short tails, PSH/FIN merged then completed), T-4 (fraglist
// GRO on some runs); Ethernet and raw-IP link layers, linear and non-linear packets (headers
// split across the head and fragments), several interleaved flows.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "gro_test_util.hpp"
#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/gro/engine.hpp"

using namespace ofld;

namespace {

using Bytes = std::vector<std::uint8_t>;
namespace cs = ofld::csum;

struct Flow {
  grotest::Tcp t;
  std::uint32_t next_seq = 0;
  int id_mode = 0;  // 0 incrementing, 1 fixed, 2 random
  std::uint8_t mac_last = 1;
};

// One packet to feed: bytes plus the metadata the driver would have set.
using Input = grotest::PacketSpec;
using grotest::make_packet;

using grotest::expect_same;

void expect_same(const gro::Counters& a, const gro::Counters& b, const std::string& where) {
  EXPECT_EQ(a.packets_in, b.packets_in) << where;
  EXPECT_EQ(a.merged, b.merged) << where;
  EXPECT_EQ(a.held, b.held) << where;
  EXPECT_EQ(a.delivered_now, b.delivered_now) << where;
  EXPECT_EQ(a.aggregates, b.aggregates) << where;
  EXPECT_EQ(a.singles, b.singles) << where;
  EXPECT_EQ(a.segments_out, b.segments_out) << where;
  for (std::size_t i = 0; i < gro::kGroReasonCount; ++i) {
    EXPECT_EQ(a.not_merged[i], b.not_merged[i])
        << where << " not_merged " << offload::to_string(gro::GroReason(i));
    EXPECT_EQ(a.completed[i], b.completed[i])
        << where << " completed " << offload::to_string(gro::GroReason(i));
  }
}

class Gen {
 public:
  explicit Gen(std::uint32_t seed) : rng_(seed) {}
  std::uint32_t u(std::uint32_t n) { return std::uniform_int_distribution<std::uint32_t>(0, n - 1)(rng_); }
  bool chance(std::uint32_t percent) { return u(100) < percent; }

  Flow flow(std::size_t i, bool allow_v6) {
    Flow f;
    f.t.v6 = allow_v6 && chance(40);
    f.t.sport = std::uint16_t(1000 + i);
    f.t.dport = std::uint16_t(chance(80) ? 8000 : 9000 + u(3));
    f.t.src_last = std::uint8_t(chance(70) ? 200 : 10 + u(4));
    f.t.dst_last = 100;
    if (chance(20)) f.t.sport = 1500;  // same ports as another flow, maybe other addresses
    static const std::size_t kMss[] = {100, 536, 1448, 1448, 1448, 4000, 8000};
    f.t.payload = kMss[u(7)];
    f.t.ack = 100 + u(1000);
    f.t.window = chance(80) ? 65535 : std::uint16_t(1000 + u(60000));
    if (chance(50)) f.t.options = timestamps(u(1000));
    f.t.ttl = std::uint8_t(chance(80) ? 64 : 1 + u(255));
    f.t.tos = std::uint8_t(chance(80) ? 0 : u(256));
    f.t.df = chance(75);
    f.t.flow_label = chance(70) ? 0 : u(0x100000);
    f.id_mode = chance(60) ? 0 : (chance(85) ? 1 : 2);
    f.t.ip_id = std::uint16_t(chance(30) ? 65530 + u(6) : u(65536));
    f.next_seq = u(1u << 20);
    f.mac_last = std::uint8_t(chance(90) ? 1 : 2 + u(2));
    return f;
  }

  Bytes timestamps(std::uint32_t tsval) {
    Bytes o = {1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < 4; ++k) o[4 + k] = std::uint8_t(tsval >> (24 - 8 * k));
    o[11] = 7;
    return o;
  }

  // The next packet of flow f (and the flow's state advanced).
  Input packet(Flow& f, bool raw_ip) {
    grotest::Tcp t = f.t;
    const std::size_t mss = f.t.payload;
    // Size: mostly the flow's mss; short tails, zero-length, longer than mss.
    const std::uint32_t r = u(100);
    if (r < 8) t.payload = 1 + u(std::uint32_t(mss));
    else if (r < 10) t.payload = 0;
    else if (r < 12) t.payload = mss + 1 + u(100);
    // Sequence: continuing, with gaps and retransmissions.
    std::uint32_t seq = f.next_seq;
    if (chance(3)) seq += 1 + u(3000);
    else if (chance(3)) seq -= std::uint32_t(mss);
    t.seq_off = seq - 100;
    f.next_seq = seq + std::uint32_t(t.payload);
    // Flags.
    t.flags = 0x10;
    if (chance(4)) t.flags |= 0x08;  // PSH
    if (chance(2)) t.flags |= 0x01;  // FIN
    if (chance(1)) t.flags |= 0x04;  // RST
    if (chance(1)) t.flags |= 0x20;  // URG
    if (chance(2)) t.flags |= 0x80;  // CWR
    if (chance(2)) t.flags |= 0x40;  // ECE
    if (chance(1)) t.flags |= 0x02;  // SYN
    if (chance(1)) t.flags &= std::uint8_t(~0x10);
    if (chance(2)) t.window = std::uint16_t(t.window + 1);
    if (chance(2)) t.ack += 1;
    // Options: changed timestamp, other lengths.
    if (!t.options.empty() && chance(5)) t.options = timestamps(u(1000));
    else if (chance(2)) t.options = t.options.empty() ? timestamps(7) : Bytes{};
    if (chance(2)) t.options.insert(t.options.end(), {1, 1, 1, 1});
    // Network header changes.
    if (chance(2)) t.ttl = std::uint8_t(t.ttl + 1);
    if (chance(2)) t.tos = std::uint8_t(t.tos ^ (chance(50) ? 0x01 : 0x10));  // ECN / DSCP
    if (chance(2)) t.df = !t.df;
    if (chance(2)) t.flow_label ^= 1;
    // IPv4 ID.
    if (f.id_mode == 0) f.t.ip_id = std::uint16_t(f.t.ip_id + 1);
    else if (f.id_mode == 2) f.t.ip_id = std::uint16_t(u(65536));
    if (chance(2)) f.t.ip_id = std::uint16_t(f.t.ip_id + 1 + u(3));
    t.ip_id = f.t.ip_id;
    if (chance(1)) t.mf = true;
    if (!t.v6 && chance(1)) t.ip_options = {1, 1, 1, 0};
    if (t.v6 && chance(2)) {
      t.v6_ext = {0, 0, 1, 4, 0, 0, 0, 0};  // PadN, one 8-byte header
      t.v6_ext_type = chance(70) ? 60 : (chance(50) ? 0 : 44);
    }
    if (chance(1)) t.sport = std::uint16_t(t.sport + 1);
    const bool bad_tcp = chance(3);
    t.bad_csum = bad_tcp;
    if (chance(2)) t.eth_pad_to = 60 + u(40);

    Input in;
    in.bytes = raw_ip ? grotest::tcp_l3(t) : grotest::tcp_frame(t);
    if (raw_ip && t.eth_pad_to && in.bytes.size() < t.eth_pad_to) in.bytes.resize(t.eth_pad_to, 0);
    const std::size_t l2 = raw_ip ? 0 : 14;
    if (!raw_ip) in.bytes[5] = f.mac_last;
    if (!t.v6 && chance(1)) in.bytes[l2 + 10] ^= 0x01;            // bad IPv4 header checksum
    if (!t.v6 && chance(1)) in.bytes[l2 + 6] |= 0x80;             // reserved bit (N-2)
    const std::size_t ihl = t.v6 ? 40 + t.v6_ext.size() : 20 + t.ip_options.size();
    const std::size_t thoff = l2 + ihl;
    const std::size_t hdrs = thoff + 20 + t.options.size();

    // Geometry: linear, headers exactly in the head, headers + some payload, or a head that
    // ends inside the headers (the general path pulls).
    const std::uint32_t g = u(10);
    if (g < 3) in.headlen = 0;
    else if (g < 7) in.headlen = hdrs;
    else if (g < 9) in.headlen = hdrs + u(50);
    else in.headlen = 1 + u(std::uint32_t(hdrs));
    if (in.headlen >= in.bytes.size()) in.headlen = 0;
    in.frag_size = chance(70) ? 0 : 200 + u(1000);

    // Checksum state.
    const std::uint32_t c = u(100);
    if (c < 45) {
      in.csum = core::CsumNone{};
    } else if (c < 75) {
      in.csum = core::CsumUnnecessary{core::CsumLevel(chance(70) ? 0 : u(4))};
    } else if (c < 88) {
      cs::wsum w = cs::csum_partial(in.bytes.data(), in.bytes.size(), 0);
      if (chance(10)) w = cs::csum_add(w, 1);
      in.csum = core::CsumComplete{w};
    } else {
      in.csum = core::CsumPartial{core::pos_t(chance(80) ? thoff : l2), 16, false};
    }
    if (chance(2)) {
      in.vlan = true;
      in.tci = std::uint16_t(chance(50) ? 5 : 6);
    }
    if (chance(1)) {
      in.gso.size = std::uint16_t(mss);
      in.gso.segs = 1;
      in.gso.type = (t.v6 ? core::skb_gso::TCPV6 : core::skb_gso::TCPV4) |
                    (chance(30) ? core::skb_gso::DODGY : 0);
    }
    return in;
  }

 private:
  std::mt19937 rng_;
};

std::uint64_t g_fast_merged = 0, g_merged = 0, g_fast_held = 0, g_held = 0;

// A random stream: engine options (both engines alike but for fast_path) and its packets.
struct Stream {
  gro::EngineOptions o;
  std::vector<Input> pending;
};

Stream make_stream(Gen& g, std::uint32_t seed) {
  Stream s;
  const bool raw_ip = g.chance(20);
  gro::EngineOptions& o = s.o;
  o.link = raw_ip ? gro::LinkLayer::RawIp : gro::LinkLayer::Ethernet;
  o.batch = g.chance(50) ? 64 : 1 + g.u(200);
  if (g.chance(20)) o.flush_timeout_ns = 1000 + g.u(100000);
  if (g.chance(15)) {
    o.config.gro_fraglist = true;
    if (g.chance(50)) o.config.tcp_established_ports = {8000};
  }
  if (g.chance(10)) o.config.gro_ipv4_max_size = o.config.gro_max_size = 20000 + g.u(40000);
  if (g.chance(10)) o.flow_hash_mask = 0;  // every flow in one bucket, one hash (K-7's veth case)
  o.config.flow_hash_key = seed;  // both engines hash alike (a random key each would reorder)

  const std::size_t nflows = 1 + g.u(g.chance(20) ? 12 : 4);
  std::vector<Flow> flows;
  for (std::size_t i = 0; i < nflows; ++i) flows.push_back(g.flow(i, true));
  const std::size_t npk = 100 + g.u(400);
  for (std::size_t n = 0; n < npk; ++n) {
    Flow& f = flows[g.chance(70) ? n % flows.size() : g.u(std::uint32_t(flows.size()))];
    s.pending.push_back(g.packet(f, raw_ip));
    if (s.pending.size() >= 2 && g.chance(4))
      std::swap(s.pending[s.pending.size() - 1], s.pending[s.pending.size() - 2]);
  }
  return s;
}

// What the two engines have put out since the last call is the same, packet by packet, and
// they hold the same number of flows.
void same_outputs(gro::Engine& fast, gro::Engine& general, const std::string& where) {
  auto a = fast.take_output();
  auto b = general.take_output();
  ASSERT_EQ(a.size(), b.size()) << where;
  for (std::size_t i = 0; i < a.size(); ++i) {
    expect_same(a[i], b[i], where + " output " + std::to_string(i));
    if (::testing::Test::HasFatalFailure()) return;
  }
  ASSERT_EQ(fast.held_flows(), general.held_flows()) << where;
}

void run_stream(std::uint32_t seed) {
  Gen g(seed);
  const Stream st = make_stream(g, seed);
  gro::EngineOptions of = st.o, og = st.o;
  of.fast_path = true;
  og.fast_path = false;
  gro::Engine fast(of), general(og);

  std::uint64_t now = 0;
  std::size_t k = 0;
  for (const Input& in : st.pending) {
    now += 1 + g.u(3000);
    fast.receive(make_packet(in), now);
    general.receive(make_packet(in), now);
    if (g.chance(3)) {
      fast.tick(now);
      general.tick(now);
    }
    const std::string where = "seed " + std::to_string(seed) + " packet " + std::to_string(k++);
    same_outputs(fast, general, where);
    if (::testing::Test::HasFatalFailure()) return;
  }
  fast.flush_all();
  general.flush_all();
  auto a = fast.take_output();
  auto b = general.take_output();
  const std::string where = "seed " + std::to_string(seed) + " final flush";
  ASSERT_EQ(a.size(), b.size()) << where;
  for (std::size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i], where);
  expect_same(fast.counters(), general.counters(), "seed " + std::to_string(seed) + " counters");
  g_fast_merged += fast.counters().fast_merged;
  g_merged += fast.counters().merged;
  g_fast_held += fast.counters().fast_held;
  g_held += fast.counters().held;
}

std::uint64_t g_batch_fast_merged = 0, g_batch_merged = 0;

// The same streams given to the fast engine in bursts through receive_batch (the fast path
// a run of packets at a time, GroFastHook::receive_run) and to the general engine one packet
// at a time, every packet of a burst at the burst's time.
void run_stream_batched(std::uint32_t seed) {
  Gen g(seed);
  const Stream st = make_stream(g, seed);
  gro::EngineOptions of = st.o, og = st.o;
  of.fast_path = true;
  og.fast_path = false;
  gro::Engine fast(of), general(og);

  std::uint64_t now = 0;
  std::size_t at = 0;
  while (at < st.pending.size()) {
    const std::size_t n =
        std::min<std::size_t>(st.pending.size() - at, 1 + g.u(g.chance(50) ? 8 : 120));
    now += 1 + g.u(3000);
    std::vector<core::Packet> burst;
    for (std::size_t i = 0; i < n; ++i) burst.push_back(make_packet(st.pending[at + i]));
    fast.receive_batch(burst, now);
    for (std::size_t i = 0; i < n; ++i) general.receive(make_packet(st.pending[at + i]), now);
    const std::string where = "seed " + std::to_string(seed) + " burst at " + std::to_string(at);
    for (const core::Packet& p : burst) ASSERT_EQ(p.len(), 0u) << where;
    if (g.chance(10)) {
      fast.tick(now);
      general.tick(now);
    }
    same_outputs(fast, general, where);
    if (::testing::Test::HasFatalFailure()) return;
    at += n;
  }
  fast.flush_all();
  general.flush_all();
  auto a = fast.take_output();
  auto b = general.take_output();
  const std::string where = "seed " + std::to_string(seed) + " final flush (batched)";
  ASSERT_EQ(a.size(), b.size()) << where;
  for (std::size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i], where);
  expect_same(fast.counters(), general.counters(),
              "seed " + std::to_string(seed) + " counters (batched)");
  g_batch_fast_merged += fast.counters().fast_merged;
  g_batch_merged += fast.counters().merged;
}

TEST(GroFastPath, RandomTcpStreamsMatchGeneralPath) {
  for (std::uint32_t seed = 1; seed <= 400; ++seed) {
    run_stream(seed);
    if (::testing::Test::HasFailure()) return;
  }
  // The streams must exercise the fast path, not only its fall-back: its merges and its
  // holds of new flows.
  EXPECT_GT(g_fast_merged, g_merged / 4) << g_fast_merged << " of " << g_merged;
  EXPECT_GT(g_fast_held, g_held / 10) << g_fast_held << " of " << g_held;
}

TEST(GroFastPath, RandomTcpStreamsInBurstsMatchGeneralPath) {
  for (std::uint32_t seed = 1; seed <= 400; ++seed) {
    run_stream_batched(seed);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(g_batch_fast_merged, g_batch_merged / 4) << g_batch_fast_merged << " of " << g_batch_merged;
}

// One long clean flow per family: almost every packet takes the fast path, aggregates hit
// the 64 KB limit (G-16), IDs wrap (N-15), the last segment is short (T-16).
// With `batched`, the fast engine takes the packets in bursts of several sizes through
// receive_batch (runs of fast merges across the 64 KB limit and the poll ends).
TEST(GroFastPath, LongCleanFlowsMatchGeneralPath) {
  for (bool batched : {false, true}) {
  for (bool v6 : {false, true}) {
   for (bool ts : {false, true}) {
    for (int cmode = 0; cmode < 4; ++cmode) {
      gro::EngineOptions of, og;
      of.fast_path = true;
      og.fast_path = false;
      of.config.flow_hash_key = og.config.flow_hash_key = 1;
      gro::Engine fast(of), general(og);
      grotest::Tcp t;
      t.v6 = v6;
      t.payload = 1448;
      t.ip_id = 65500;
      if (ts) t.options = {1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2};
      std::uint32_t seq = 0;
      static const std::size_t kCuts[] = {64, 7, 100, 1, 33, 200};
      std::size_t cut = 0;
      std::vector<core::Packet> burst;
      for (int i = 0; i < 300; ++i) {
        t.seq_off = seq;
        if (i == 299) t.payload = 700;
        Input in;
        in.bytes = grotest::tcp_frame(t);
        in.headlen = 14 + (v6 ? 40 : 20) + (ts ? 32 : 20);
        if (cmode == 1) in.csum = core::CsumUnnecessary{};
        if (cmode == 2) in.csum = core::CsumComplete{cs::csum_partial(in.bytes.data(), in.bytes.size(), 0)};
        if (cmode == 3) in.csum = core::CsumPartial{core::pos_t(14 + (v6 ? 40 : 20)), 16, false};
        if (batched) {
          burst.push_back(make_packet(in));
          if (burst.size() == kCuts[cut % 6] || i == 299) {
            fast.receive_batch(burst, std::uint64_t(i));
            for (const core::Packet& p : burst) ASSERT_EQ(p.len(), 0u);
            burst.clear();
            ++cut;
          }
        } else {
          fast.receive(make_packet(in), std::uint64_t(i));
        }
        general.receive(make_packet(in), std::uint64_t(i));
        seq += std::uint32_t(t.payload);
        t.ip_id = std::uint16_t(t.ip_id + 1);
      }
      fast.flush_all();
      general.flush_all();
      auto a = fast.take_output();
      auto b = general.take_output();
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i], "clean flow output " + std::to_string(i));
      expect_same(fast.counters(), general.counters(), "clean flow counters");
      // Every mode, with and without options, takes the fast path (a checksum the fast path
      // got wrong for good packets would only fall back, so count the fast merges).
      EXPECT_GT(fast.counters().fast_merged, 280u)
          << "batched " << batched << " v6 " << v6 << " ts " << ts << " csum " << cmode;
      EXPECT_EQ(general.counters().fast_merged, 0u);
      // Each aggregate but the last ends at the size limit inside a burst of 7 or more: the
      // fast path holds the flow's next aggregate itself (G-16, GroFastResult::restart).
      if (batched) {
        EXPECT_GT(fast.counters().fast_held_next, 0u);
      }
      // and the flow's first packet after each poll end is held by the fast path as a new flow
      EXPECT_GT(fast.counters().fast_held, fast.counters().fast_held_next);
      EXPECT_EQ(general.counters().fast_held, 0u);
    }
   }
  }
  }
}

// G-16 inside a run: the packet the size limit refuses. tcp_gro_receive completes the held
// flow (SizeLimit) and the chain holds the packet as the flow's next aggregate, unless T-1
// fails (delivered now: Checksum), it carries a T-17 flag (delivered now: FinalFlags) or CWR
// (T-5), or another rule refuses it first (T-11). The fast engine takes the whole stream in
// one receive_batch; the general engine, one packet at a time, is the reference. With a poll
// of exactly the refused packet's position, the packet held last is completed alone at the
// poll end (G-8) with the checksum state T-1 left it (C-26: NONE becomes UNNECESSARY).
TEST(GroFastPath, G16_SizeLimitRefusalInsideARunMatchesGeneralPath) {
  enum Variant { kPlain, kPsh, kBadCsum, kCwr, kSeqGap, kPollAtRefused, kVariants };
  for (bool v6 : {false, true}) {
    for (int cmode = 0; cmode < 4; ++cmode) {
      for (int var = 0; var < kVariants; ++var) {
        grotest::Tcp t;
        t.v6 = v6;
        t.payload = 1448;
        t.ip_id = 7;
        // G-16 (IPv4 gro_ipv4_max_size, IPv6 gro_max_size: 65536 by default): a flow of k
        // segments takes the next one while l3 headers + (k + 1) × payload < 65536.
        const std::size_t l3hdrs = (v6 ? 40 : 20) + 20;
        const std::size_t refused = (65535 - l3hdrs) / t.payload;  // 0-based index
        gro::EngineOptions of, og;
        of.fast_path = true;
        og.fast_path = false;
        of.config.flow_hash_key = og.config.flow_hash_key = 3;
        if (var == kPollAtRefused) of.batch = og.batch = refused + 1;
        gro::Engine fast(of), general(og);
        std::vector<core::Packet> burst;
        std::uint32_t seq = 0;
        for (std::size_t i = 0; i < 3 * refused + 5; ++i) {
          grotest::Tcp u = t;
          u.seq_off = seq;
          if (i == refused) {
            if (var == kPsh) u.flags |= 0x08;
            if (var == kBadCsum) u.bad_csum = true;
            if (var == kCwr) u.flags |= 0x80;
            if (var == kSeqGap) u.seq_off += 1;
          }
          Input in;
          in.bytes = grotest::tcp_frame(u);
          in.headlen = 14 + l3hdrs;
          if (cmode == 1) in.csum = core::CsumUnnecessary{};
          if (cmode == 2) in.csum = core::CsumComplete{cs::csum_partial(in.bytes.data(), in.bytes.size(), 0)};
          if (cmode == 3) in.csum = core::CsumPartial{core::pos_t(14 + (v6 ? 40 : 20)), 16, false};
          burst.push_back(make_packet(in));
          general.receive(make_packet(in), 1);
          seq = u.seq_off + std::uint32_t(t.payload);
          t.ip_id = std::uint16_t(t.ip_id + 1);
        }
        fast.receive_batch(burst, 1);
        const std::string where = std::string(v6 ? "v6" : "v4") + " csum " + std::to_string(cmode) +
                                  " variant " + std::to_string(var);
        for (const core::Packet& p : burst) ASSERT_EQ(p.len(), 0u) << where;
        fast.flush_all();
        general.flush_all();
        auto a = fast.take_output();
        auto b = general.take_output();
        ASSERT_EQ(a.size(), b.size()) << where;
        for (std::size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i], where + " output " + std::to_string(i));
        expect_same(fast.counters(), general.counters(), where + " counters");
        EXPECT_GE(general.counters().not_merged[std::size_t(gro::GroReason::SizeLimit)], 1u) << where;
        // The fast path held the next aggregate itself where the chain's only reason was G-16.
        if (var == kPlain || var == kPollAtRefused || (var == kBadCsum && (cmode == 1 || cmode == 3))) {
          EXPECT_GE(fast.counters().fast_held_next, 1u) << where;
        }
        if (var == kPollAtRefused && cmode == 0) {
          // the refused packet, alone at the poll end, validated by T-1
          bool single_unnecessary = false;
          for (const core::Packet& p : b)
            single_unnecessary |= p.gso.size == 0 && std::holds_alternative<core::CsumUnnecessary>(p.csum);
          EXPECT_TRUE(single_unnecessary) << where;
        }
      }
    }
  }
}

}  // namespace

// Targeted scenarios for the GRO TCP fast path's state (GroFastState::last, the TCP
// module's template in GroHeld::flow_area, the GroHeld pool) and its hand-over of fragments,
// each fed to two engines that differ only in EngineOptions::fast_path. The general chain is the reference (it is the path checked
// against the kernel): after every packet both outputs must be equal in bytes, geometry and
// metadata, and at the end every counter. Each scenario also requires the fast path to have
// merged something, so that it is exercised rather than skipped.
//
// Rules: G-2 (flow identity: hash, MAC header, VLAN tag), G-4 (GSO input, frag_list), G-7
// (8 flows per bucket, the oldest completed: TableFull), G-9 (flush timeout), G-11..G-13
// (checksum states), N-12 (TTL, TOS, DF), N-15 (IPv4 ID fixed / incrementing / wrapping),
// T-6/T-8 (flags, options), T-10/T-11, T-16/T-17.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "gro_test_util.hpp"
#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/gro/engine.hpp"

using namespace ofld;
using namespace ofld::grotest;

namespace {

using Bytes = std::vector<std::uint8_t>;
namespace cs = ofld::csum;

struct In : grotest::PacketSpec {
  std::uint64_t now = 0;
  bool tick = false;         // tick(now) after the receive
  bool poll = false;         // poll_end(now) after the receive
};
using grotest::make_packet;


// Runs `ins` through a fast-path engine and a general-only engine; returns fast_merged.
std::uint64_t differential(const std::vector<In>& ins, gro::EngineOptions o, const std::string& name) {
  o.batch = 1u << 30;
  // The key same_bucket_ports() hashes with (flow_hash's default), for both engines.
  if (!o.config.flow_hash_key) o.config.flow_hash_key = 0;
  gro::EngineOptions of = o, og = o;
  of.fast_path = true;
  og.fast_path = false;
  gro::Engine f(of), g(og);
  for (std::size_t k = 0; k < ins.size(); ++k) {
    const In& in = ins[k];
    f.receive(make_packet(in), in.now);
    g.receive(make_packet(in), in.now);
    if (in.tick) f.tick(in.now), g.tick(in.now);
    if (in.poll) f.poll_end(in.now), g.poll_end(in.now);
    auto a = f.take_output();
    auto b = g.take_output();
    const std::string w = name + " packet " + std::to_string(k);
    EXPECT_EQ(a.size(), b.size()) << w;
    if (a.size() != b.size()) return 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      expect_same(a[i], b[i], w + " output " + std::to_string(i));
      if (::testing::Test::HasFatalFailure()) return 0;
    }
    EXPECT_EQ(f.held_flows(), g.held_flows()) << w;
  }
  f.flush_all();
  g.flush_all();
  auto a = f.take_output();
  auto b = g.take_output();
  EXPECT_EQ(a.size(), b.size()) << name << " final";
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) expect_same(a[i], b[i], name + " final");
  const auto& c = f.counters();
  const auto& d = g.counters();
  EXPECT_EQ(c.packets_in, d.packets_in) << name;
  EXPECT_EQ(c.merged, d.merged) << name;
  EXPECT_EQ(c.held, d.held) << name;
  EXPECT_EQ(c.delivered_now, d.delivered_now) << name;
  EXPECT_EQ(c.aggregates, d.aggregates) << name;
  EXPECT_EQ(c.singles, d.singles) << name;
  EXPECT_EQ(c.segments_out, d.segments_out) << name;
  for (std::size_t i = 0; i < gro::kGroReasonCount; ++i) {
    EXPECT_EQ(c.not_merged[i], d.not_merged[i]) << name << " not_merged " << offload::to_string(gro::GroReason(i));
    EXPECT_EQ(c.completed[i], d.completed[i]) << name << " completed " << offload::to_string(gro::GroReason(i));
  }
  return c.fast_merged;
}

// A segment of a flow: sport identifies the flow, `n` is the segment number (mss 1000).
Tcp tseg(bool v6, std::uint16_t sport, std::uint32_t n, std::size_t mss = 1000) {
  Tcp t = tcp_seg(v6, n * std::uint32_t(mss), mss);
  t.sport = sport;
  t.ip_id = std::uint16_t(100 + n);
  return t;
}
In of(Bytes b) {
  In in;
  in.bytes = std::move(b);
  return in;
}
In eth(const Tcp& t) { return of(tcp_frame(t)); }
In raw(const Tcp& t) { return of(tcp_l3(t)); }

// Source ports whose flows (Ethernet, family v6) fall into one GRO bucket.
std::vector<std::uint16_t> same_bucket_ports(bool v6, std::size_t n) {
  std::vector<std::uint16_t> v;
  std::uint32_t want = ~0u;
  for (std::uint16_t sp = 2000; v.size() < n; ++sp) {
    const Bytes f = tcp_frame(tseg(v6, sp, 0));
    const std::uint32_t b = gro::flow_hash(f, gro::LinkLayer::Ethernet) & (offload::kGroHashBuckets - 1);
    if (want == ~0u) want = b;
    if (b == want) v.push_back(sp);
  }
  return v;
}

}  // namespace

// A flow is completed by a fast merge (PSH) while GroFastState::last points to it; its
// GroHeld goes back to the pool and the next new flow gets the same one. The old flow's next segment must then
// be a new flow, not a merge into the reused GroHeld.
TEST(GroFastPathScenarios, G7_CompletedFlowsGroHeldReusedByAnotherFlow) {
  for (bool v6 : {false, true}) {
    std::vector<In> s;
    s.push_back(eth(tseg(v6, 1000, 0)));
    s.push_back(eth(tseg(v6, 1000, 1)));
    Tcp psh = tseg(v6, 1000, 2);
    psh.flags |= 0x08;
    s.push_back(eth(psh));                  // fast merge, then T-17 completion
    s.push_back(eth(tseg(v6, 2000, 0)));    // new flow in the released GroHeld
    s.push_back(eth(tseg(v6, 1000, 3)));    // the old flow again: a new flow
    s.push_back(eth(tseg(v6, 2000, 1)));
    s.push_back(eth(tseg(v6, 1000, 4)));
    s.push_back(eth(tseg(v6, 2000, 2)));
    EXPECT_GT(differential(s, {}, v6 ? "v6" : "v4"), 0u);
  }
}

// G-7: nine flows in one bucket; the oldest is completed (TableFull) and its GroHeld is the one
// the ninth flow gets. Then every flow continues, newest and oldest first, and the evicted
// flow comes back (held again, in another GroHeld).
TEST(GroFastPathScenarios, G7_EvictedFromFullBucketThenReheld) {
  for (bool v6 : {false, true}) {
    const auto ports = same_bucket_ports(v6, 10);
    std::vector<In> s;
    for (std::size_t i = 0; i < 9; ++i) s.push_back(eth(tseg(v6, ports[i], 0)));
    for (std::uint32_t n = 1; n < 4; ++n) {
      s.push_back(eth(tseg(v6, ports[8], n)));  // the newest (the hint, GroFastState::last)
      for (std::size_t i = 0; i < 9; ++i) s.push_back(eth(tseg(v6, ports[i], n)));
      s.push_back(eth(tseg(v6, ports[9], n)));  // a tenth flow evicts again
      for (std::size_t i = 9; i-- > 0;) s.push_back(eth(tseg(v6, ports[i], n + 10)));  // gaps
    }
    EXPECT_GT(differential(s, {}, v6 ? "v6" : "v4"), 0u);
  }
}

// G-2: two flows with the same addresses and ports but other MAC headers share a bucket;
// segments alternate, each must go to its own flow (and the newest-first order matters).
TEST(GroFastPathScenarios, G2_SameFiveTupleOtherMacSameBucket) {
  for (bool v6 : {false, true}) {
    std::vector<In> s;
    for (std::uint32_t n = 0; n < 12; ++n) {
      for (int m = 0; m < 2; ++m) {
        In in = eth(tseg(v6, 1500, n));
        in.bytes[5] = std::uint8_t(1 + m);  // destination MAC
        s.push_back(in);
        if (n % 5 == 4 && m == 0) {
          In again = in;  // a retransmission of the first flow
          s.push_back(again);
        }
      }
    }
    EXPECT_GT(differential(s, {}, v6 ? "v6" : "v4"), 0u);
  }
}

// G-2 VLAN tag (metadata, as after hardware VLAN stripping): present/absent and TCI changes
// mid-flow, on Ethernet and raw-IP links.
TEST(GroFastPathScenarios, G2_VlanTagChangesEthernetAndRawIp) {
  for (bool rawip : {false, true}) {
    for (bool v6 : {false, true}) {
      std::vector<In> s;
      const bool vl[] = {true, true, true, false, false, true, true, true, true, true, true};
      const std::uint16_t tci[] = {5, 5, 5, 0, 0, 5, 6, 6, 5, 5, 5};
      for (std::uint32_t n = 0; n < 11; ++n) {
        In in = rawip ? raw(tseg(v6, 1500, n)) : eth(tseg(v6, 1500, n));
        in.vlan = vl[n];
        in.tci = tci[n];
        s.push_back(in);
      }
      gro::EngineOptions o;
      o.link = rawip ? gro::LinkLayer::RawIp : gro::LinkLayer::Ethernet;
      EXPECT_GT(differential(s, o, std::string(rawip ? "raw " : "eth ") + (v6 ? "v6" : "v4")), 0u);
    }
  }
}

// N-15 (as on 6.18): IPv4 ID fixed with and without DF, incrementing across the 65535 → 0
// wrap, incrementing then fixed, fixed then incrementing, a jump; N-12 DF / TTL / TOS changes
// (T-9: TCP GRO applies the network flush).
TEST(GroFastPathScenarios, N15_N12_IdModesAndDfTtlTosChanges) {
  struct Mode {
    const char* name;
    std::vector<std::uint16_t> ids;
    std::vector<int> df;  // 1/0 per packet (empty: all DF)
  };
  const std::vector<Mode> modes = {
      {"fixed_df", {7, 7, 7, 7, 7, 7}, {}},
      {"fixed_nodf", {7, 7, 7, 7, 7, 7}, {0, 0, 0, 0, 0, 0}},
      {"wrap", {65533, 65534, 65535, 0, 1, 2}, {}},
      {"wrap_nodf", {65534, 65535, 0, 1, 2, 3}, {0, 0, 0, 0, 0, 0}},
      {"inc_then_fixed", {10, 11, 12, 12, 12, 13}, {}},
      {"fixed_then_inc", {10, 10, 10, 11, 12, 13}, {}},
      {"jump", {10, 11, 20, 21, 22, 23}, {}},
      {"df_change", {10, 11, 12, 13, 14, 15}, {1, 1, 0, 0, 1, 1}},
      {"zero_fixed", {0, 0, 0, 0, 0, 0}, {1, 0, 1, 0, 1, 0}},
  };
  for (bool rawip : {false, true}) {
    for (const Mode& m : modes) {
      std::vector<In> s;
      for (std::uint32_t n = 0; n < m.ids.size(); ++n) {
        Tcp t = tseg(false, 1500, n);
        t.ip_id = m.ids[n];
        if (!m.df.empty()) t.df = m.df[n] != 0;
        s.push_back(rawip ? raw(t) : eth(t));
      }
      // TTL and TOS changes on a second flow
      for (std::uint32_t n = 0; n < 6; ++n) {
        Tcp t = tseg(false, 1600, n);
        if (n == 3) t.ttl = 9;
        if (n == 5) t.tos = 1;
        s.push_back(rawip ? raw(t) : eth(t));
      }
      gro::EngineOptions o;
      o.link = rawip ? gro::LinkLayer::RawIp : gro::LinkLayer::Ethernet;
      differential(s, o, std::string(m.name) + (rawip ? " raw" : " eth"));
    }
  }
}

// T-8 / T-6: timestamp option value changes, option length changes (another header length:
// another fast signature), window and ack changes, ECE, urgent pointer set.
TEST(GroFastPathScenarios, T8_T6_OptionsAndFlagWordChanges) {
  auto ts = [](std::uint32_t v) {
    Bytes o = {1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0, 7};
    for (int k = 0; k < 4; ++k) o[4 + k] = std::uint8_t(v >> (24 - 8 * k));
    return o;
  };
  for (bool v6 : {false, true}) {
    std::vector<In> s;
    for (std::uint32_t n = 0; n < 16; ++n) {
      Tcp t = tseg(v6, 1500, n);
      t.options = ts(n < 4 ? 1 : n < 8 ? 2 : 3);
      if (n == 9) t.options.insert(t.options.end(), {1, 1, 1, 1});
      if (n == 10) t.options.clear();
      if (n == 12) t.window = 100;
      if (n == 13) t.flags |= 0x40;  // ECE
      Bytes f = tcp_frame(t);
      if (n == 14) {  // a non-zero urgent pointer without URG (not compared, T-6)
        const std::size_t ip = 14, th = ip + (v6 ? 40 : 20);
        f[th + 19] = 1;
        f[th + 16] = f[th + 17] = 0;
        const std::uint32_t l4 = std::uint32_t(f.size() - th);
        const cs::wsum ps = v6 ? cs::csum_ipv6_nofold(&f[ip + 8], &f[ip + 24], l4, 6, 0)
                               : cs::csum_tcpudp_nofold(&f[ip + 12], &f[ip + 16], l4, 6, 0);
        const std::uint16_t c = cs::csum_fold(cs::csum_partial(&f[th], l4, ps));
        f[th + 16] = std::uint8_t(c >> 8);
        f[th + 17] = std::uint8_t(c);
      }
      s.push_back(of(f));
    }
    EXPECT_GT(differential(s, {}, v6 ? "v6" : "v4"), 0u);
  }
}

// G-9: flush timeout; a held flow is completed by tick() between its segments and re-held;
// poll_end with a timeout keeps young flows.
TEST(GroFastPathScenarios, G9_TimeoutCompletesThenReheld) {
  for (bool v6 : {false, true}) {
    std::vector<In> s;
    std::uint64_t now = 0;
    for (std::uint32_t n = 0; n < 20; ++n) {
      In a = eth(tseg(v6, 1500, n));
      now += (n % 4 == 3) ? 50000 : 100;
      a.now = now;
      a.tick = n % 3 == 2;
      a.poll = n % 7 == 6;
      s.push_back(a);
      In b = eth(tseg(v6, 1501, n));
      b.now = now + 10;
      s.push_back(b);
    }
    gro::EngineOptions o;
    o.flush_timeout_ns = 20000;
    EXPECT_GT(differential(s, o, v6 ? "v6" : "v4"), 0u);
  }
}

// Headers split across head and fragments (the first packet, middle ones), payload in the
// head, several fragments, zero-payload ACKs, frag_list and GSO input for a held fast flow.
TEST(GroFastPathScenarios, G4_GeometriesFragListAndGsoInput) {
  for (bool rawip : {false, true}) {
    for (bool v6 : {false, true}) {
      const std::size_t l2 = rawip ? 0 : 14, hdrs = l2 + (v6 ? 40 : 20) + 20;
      std::vector<In> s;
      auto pk = [&](std::uint32_t n) { return rawip ? raw(tseg(v6, 1500, n)) : eth(tseg(v6, 1500, n)); };
      In a = pk(0);
      a.headlen = 20;  // headers split at hold time
      s.push_back(a);
      s.push_back(pk(1));
      In c = pk(2);
      c.headlen = hdrs;
      c.frag_size = 300;
      s.push_back(c);
      In d = pk(3);
      d.headlen = hdrs + 7;
      d.frag_size = 100;
      s.push_back(d);
      In e = pk(4);
      e.headlen = hdrs - 3;  // split inside the TCP header
      s.push_back(e);
      Tcp ack = tseg(v6, 1500, 5);
      ack.payload = 0;
      s.push_back(rawip ? raw(ack) : eth(ack));
      s.push_back(pk(5));
      In fl = pk(6);
      fl.headlen = hdrs;
      fl.frag_list = Bytes(10, 0x61);  // bytes in a frag_list member (G-4 flush)
      s.push_back(fl);
      s.push_back(pk(7));
      In g = pk(8);
      g.gso.size = 1000;
      g.gso.segs = 1;
      g.gso.type = v6 ? core::skb_gso::TCPV6 : core::skb_gso::TCPV4;
      s.push_back(g);
      s.push_back(pk(9));
      s.push_back(pk(10));
      gro::EngineOptions o;
      o.link = rawip ? gro::LinkLayer::RawIp : gro::LinkLayer::Ethernet;
      differential(s, o, std::string(rawip ? "raw " : "eth ") + (v6 ? "v6" : "v4"));
    }
  }
}

// G-5, G-11..G-13: every checksum state on merges into a fast flow (COMPLETE right and
// wrong, PARTIAL at and before the TCP header, UNNECESSARY levels, NONE with a bad sum).
TEST(GroFastPathScenarios, G11_G13_ChecksumStatesOnFastMerges) {
  for (bool rawip : {false, true}) {
    for (bool v6 : {false, true}) {
      const std::size_t l2 = rawip ? 0 : 14, thoff = l2 + (v6 ? 40 : 20);
      std::vector<In> s;
      for (std::uint32_t n = 0; n < 24; ++n) {
        Tcp t = tseg(v6, 1500, n);
        if (n == 7) t.bad_csum = true;
        In in = rawip ? raw(t) : eth(t);
        switch (n % 6) {
          case 1: in.csum = core::CsumComplete{cs::csum_partial(in.bytes.data(), in.bytes.size(), 0)}; break;
          case 2: in.csum = core::CsumComplete{cs::csum_add(cs::csum_partial(in.bytes.data(), in.bytes.size(), 0), 1)}; break;
          case 3: in.csum = core::CsumPartial{core::pos_t(n % 12 == 3 ? thoff : l2), 16, false}; break;
          case 4: in.csum = core::CsumUnnecessary{core::CsumLevel(n % 4)}; break;
          default: break;
        }
        if (n % 5 == 0) {
          in.headlen = thoff + 20;
          in.frag_size = 400;
        }
        s.push_back(in);
      }
      gro::EngineOptions o;
      o.link = rawip ? gro::LinkLayer::RawIp : gro::LinkLayer::Ethernet;
      differential(s, o, std::string(rawip ? "raw " : "eth ") + (v6 ? "v6" : "v4"));
    }
  }
}

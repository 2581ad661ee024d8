// The GRO flow hash is keyed per engine.
//
// The kernel groups GRO flows by skb->hash (G-2: gro_list_prepare compares it first; the
// bucket is hash & (GRO_HASH_BUCKETS - 1)), and that hash is keyed — the NIC's Toeplitz RSS
// key, or the flow dissector's siphash with a random boot-time key — so nobody outside can
// compute which flows share a bucket or a hash. ofld's hash was a fixed function: collisions
// could be computed offline. Now: GroConfig::flow_hash_key, random per engine by default, fixed
// where output must be reproducible (`ofld gro`). Checked here: a fixed key reproduces the
// output order, default engines draw different keys (and order their flushes differently),
// and flows that collide under one key do not under another.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <unordered_map>

#include "gro_test_util.hpp"
#include "ofld/io/pcap.hpp"
#include "ofld/tools/gro_tool.hpp"

namespace {

using namespace ofld;

// 32 TCPv4 flows (source port 1000 + i), one segment each.
std::vector<std::vector<std::uint8_t>> flows32() {
  std::vector<std::vector<std::uint8_t>> v;
  for (std::uint16_t i = 0; i < 32; ++i) {
    grotest::Tcp t;
    t.sport = std::uint16_t(1000 + i);
    v.push_back(grotest::tcp_frame(t));
  }
  return v;
}

// Source ports of the outputs, in delivery order (the flush goes bucket by bucket, G-9).
std::vector<std::uint16_t> order(gro::EngineOptions o) {
  o.batch = 1000;
  gro::Engine e(o);
  for (const auto& f : flows32()) e.receive(core::Packet::from_bytes(f));
  e.flush_all();
  std::vector<std::uint16_t> v;
  for (const auto& p : e.output()) v.push_back(grotest::get16(p.to_bytes().data() + 34));
  return v;
}

}  // namespace

TEST(GroFlowHashKey, G2_FixedKeyReproducesOutputOrder) {
  gro::EngineOptions o;
  o.config.flow_hash_key = 0x1234567890abcdefULL;
  gro::Engine e(o);
  EXPECT_EQ(e.flow_hash_key(), 0x1234567890abcdefULL);
  const auto a = order(o), b = order(o);
  ASSERT_EQ(a.size(), 32u);
  EXPECT_EQ(a, b);
  // The engine's buckets are the hash under its key: the order is bucket by bucket.
  for (std::size_t i = 1; i < a.size(); ++i) {
    grotest::Tcp t1, t2;
    t1.sport = a[i - 1];
    t2.sport = a[i];
    const auto b1 = gro::flow_hash(grotest::tcp_frame(t1), gro::LinkLayer::Ethernet, *o.config.flow_hash_key) & 7;
    const auto b2 = gro::flow_hash(grotest::tcp_frame(t2), gro::LinkLayer::Ethernet, *o.config.flow_hash_key) & 7;
    EXPECT_LE(b1, b2) << "completion in bucket order (G-9)";
  }
}

TEST(GroFlowHashKey, G2_DefaultKeyIsRandomPerEngine) {
  std::set<std::uint64_t> keys;
  std::set<std::vector<std::uint16_t>> orders;
  for (int i = 0; i < 8; ++i) {
    gro::Engine e;
    keys.insert(e.flow_hash_key());
    orders.insert(order({}));
  }
  EXPECT_EQ(keys.size(), 8u) << "every engine draws its own key";
  // 32 flows over 8 buckets: under two independent keys the orders agree with probability
  // far below 1e-10, so 8 engines giving one order would mean the key is not used.
  EXPECT_GT(orders.size(), 1u);
}

TEST(GroFlowHashKey, G2_CollisionsDependOnTheKey) {
  // Birthday search for two TCPv4 flows (source address and ports varied) whose full 32-bit
  // hashes are equal under key k1 — what an attacker could do offline with a known function.
  const std::uint64_t k1 = 1, k2 = 0x9e3779b97f4a7c15ULL;
  grotest::Tcp t;
  auto f = grotest::tcp_frame(t);
  const auto set = [](std::vector<std::uint8_t>& fr, std::uint32_t i) {
    grotest::put32(fr, 26, 0x0a000000u | (i >> 9));   // IPv4 source address
    grotest::put32(fr, 34, (i & 511) * 0x9E3779B1u);  // source and destination port, spread
  };
  std::unordered_map<std::uint32_t, std::uint32_t> seen;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> coll;
  for (std::uint32_t i = 0; i < (1u << 18) && coll.size() < 4; ++i) {
    set(f, i);
    const std::uint32_t h = gro::flow_hash(f, gro::LinkLayer::Ethernet, k1);
    auto [it, fresh] = seen.emplace(h, i);
    if (!fresh) coll.emplace_back(it->second, i);
  }
  ASSERT_FALSE(coll.empty()) << "2^18 flows give about 8 collisions of a 32-bit hash";
  for (auto [a, b] : coll) {
    auto fa = f, fb = f;
    set(fa, a);
    set(fb, b);
    EXPECT_EQ(gro::flow_hash(fa, gro::LinkLayer::Ethernet, k1), gro::flow_hash(fb, gro::LinkLayer::Ethernet, k1));
    EXPECT_NE(gro::flow_hash(fa, gro::LinkLayer::Ethernet, k2), gro::flow_hash(fb, gro::LinkLayer::Ethernet, k2))
        << "a collision built for one key is no collision under another";
  }
}

TEST(GroFlowHashKey, G2_FamilyAndProtocolAreHashed) {
  // The family and the L4 protocol enter the hash (not only the comparisons): IPv4 TCP and
  // UDP with equal addresses and ports, under a fixed key, hash apart; on a raw-IP link the
  // version nibble stands for the ethertype.
  const std::uint64_t k = 7;
  grotest::Tcp t;
  const auto tcp = grotest::tcp_frame(t);
  const auto udp = grotest::udp_frame(false, 100);
  EXPECT_NE(gro::flow_hash(tcp, gro::LinkLayer::Ethernet, k), gro::flow_hash(udp, gro::LinkLayer::Ethernet, k));
  const std::vector<std::uint8_t> raw_tcp(tcp.begin() + 14, tcp.end()), raw_udp(udp.begin() + 14, udp.end());
  EXPECT_EQ(gro::flow_hash(tcp, gro::LinkLayer::Ethernet, k), gro::flow_hash(raw_tcp, gro::LinkLayer::RawIp, k));
  EXPECT_NE(gro::flow_hash(raw_tcp, gro::LinkLayer::RawIp, k), gro::flow_hash(raw_udp, gro::LinkLayer::RawIp, k));
}

TEST(GroFlowHashKey, G2_OfldGroOutputIsReproducible) {
  // `ofld gro` (tools::run_gro_pcap) fixes the key when its GroConfig sets none
  // (tools::kGroPcapFlowHashKey), so the same capture gives the same output file, order of
  // the flows' frames included. 32 flows of two segments each: 32 aggregates over 8 buckets.
  const std::string in = "/tmp/ofld_gro_key_" + std::to_string(::getpid()) + ".pcap";
  {
    io::PcapWriter w(in, io::CaptureLink::Ethernet);
    for (std::uint32_t seg = 0; seg < 2; ++seg)
      for (std::uint16_t i = 0; i < 32; ++i) {
        grotest::Tcp t;
        t.sport = std::uint16_t(1000 + i);
        t.seq_off = seg * 100;
        io::PcapRecord r;
        r.data = grotest::tcp_frame(t);
        r.caplen = r.len = std::uint32_t(r.data.size());
        w.write(r);
      }
    w.close();
  }
  std::vector<io::PcapFile> outs;
  for (int run = 0; run < 2; ++run) {
    const std::string out = in + ".out" + std::to_string(run);
    tools::GroPcapOptions o;
    o.batch = 1000;
    auto res = tools::run_gro_pcap(in, out, o);
    EXPECT_EQ(res.frames_out, 32u);
    outs.push_back(io::read_pcap(out));
    std::remove(out.c_str());
  }
  std::remove(in.c_str());
  ASSERT_EQ(outs[0].records.size(), 32u);
  EXPECT_TRUE(outs[0].records == outs[1].records) << "same capture, same output";
  // And the order is the one of the fixed key's buckets (G-9).
  gro::EngineOptions o;
  o.config.flow_hash_key = tools::kGroPcapFlowHashKey;
  const auto want = order(o);
  for (std::size_t i = 0; i < 32; ++i)
    EXPECT_EQ(grotest::get16(outs[0].records[i].data.data() + 34), want[i]) << i;
}

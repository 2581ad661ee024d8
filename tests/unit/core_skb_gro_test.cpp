// GRO's merge helpers live in core (skb_gro_receive and
// skb_gro_receive_list on two packets, ofld/core/skb_gro.hpp), and the TCP fast path is the
// TCP module's own hook (offload::gro_fast_hook). Expected values from the spec: G-16 (merged
// length from the network header must stay below gro_max_size), G-17 (≥ 65536 only for plain
// TCP), G-19 (payload appended, headers not), G-21 (fraglist cap 65536, headers pulled).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ofld/core/skb_gro.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/offload/gro_context.hpp"
#include "ofld/offload/registry.hpp"

namespace ofld {
namespace {

std::vector<std::uint8_t> bytes(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::uint8_t(seed + i);
  return v;
}

// G-19: p gains the skb's bytes after data_offset (from the head and from fragments), in
// order; the skb's headers are not appended.
TEST(CoreSkbGro, G19_AppendsPayloadOnly) {
  for (std::size_t headlen : {std::size_t(60), std::size_t(40), std::size_t(20)}) {
    const auto pb = bytes(140, 1), sb = bytes(140, 101);
    core::Packet p = core::Packet::from_bytes(pb);
    core::Packet skb = core::Packet::from_bytes_frags(sb, headlen, 32);
    core::BufferRef agg;
    ASSERT_TRUE(core::skb_gro_receive(p, agg, skb, 40, p.len() - 14, 65536, false));
    std::vector<std::uint8_t> want = pb;
    want.insert(want.end(), sb.begin() + 40, sb.end());
    EXPECT_EQ(p.to_bytes(), want) << "headlen " << headlen;
  }
}

// G-16: p_len + payload must stay below max; G-17: at or above 65536 only when allowed.
TEST(CoreSkbGro, G16_G17_Limits) {
  const auto sb = bytes(140, 7);
  auto try_merge = [&](std::size_t p_len, std::uint32_t max, bool beyond) {
    core::Packet p = core::Packet::from_bytes(bytes(100, 0));
    core::Packet skb = core::Packet::from_bytes(sb);
    core::BufferRef agg;
    const std::size_t before = p.len();
    const bool ok = core::skb_gro_receive(p, agg, skb, 40, p_len, max, beyond);
    EXPECT_EQ(p.len(), ok ? before + 100 : before);  // refused: p unchanged
    return ok;
  };
  EXPECT_TRUE(try_merge(65535 - 101, 65536, false));   // 65534 < 65536
  EXPECT_TRUE(try_merge(65535 - 100, 65536, false));   // 65535: the largest IP datagram
  EXPECT_FALSE(try_merge(65536 - 100, 65536, false));  // 65536 >= gro_max_size
  EXPECT_FALSE(try_merge(65536 - 100, 70000, false));  // G-17: not plain TCP
  EXPECT_TRUE(try_merge(65536 - 100, 70000, true));    // G-17: plain TCP, BIG TCP size
  EXPECT_FALSE(try_merge(70000 - 100, 70000, true));   // G-16 at the raised limit
}

// G-21: the skb is chained with its headers pulled and its header offsets recorded; the
// total length from the network headers is capped at 65536.
TEST(CoreSkbGro, G21_ReceiveList) {
  core::Packet p = core::Packet::from_bytes(bytes(100, 0));
  core::Packet skb = core::Packet::from_bytes(bytes(140, 50));
  EXPECT_FALSE(core::skb_gro_receive_list(p, skb, 54, 14, 34, 65536 - 126, 126));
  EXPECT_TRUE(p.frag_list().empty());
  ASSERT_TRUE(core::skb_gro_receive_list(p, skb, 54, 14, 34, 65536 - 127, 126));
  ASSERT_EQ(p.frag_list().size(), 1u);
  EXPECT_EQ(p.frag_list()[0].len(), 140u - 54u);
  EXPECT_EQ(p.len(), 100u + 86u);
}

// The fast receive hook belongs to the TCP module and is found for a table whose
// IPv4/IPv6/TCP hooks are the IP and TCP modules'; a table without TCP GRO has none, and an
// engine over it runs the general chain only.
TEST(CoreSkbGro, FastHookIsTcpModules) {
  const offload::Registry& reg = offload::builtin_registry();
  const offload::GroFastHook* h = offload::gro_fast_hook(reg);
  ASSERT_NE(h, nullptr);
  EXPECT_TRUE(h->init && h->receive && h->hold);
  offload::Registry no_tcp;
  for (std::uint16_t type : {0x0800, 0x86DD})
    if (const auto* e = reg.find(offload::Key::Ethertype, type)) no_tcp.add(offload::Key::Ethertype, type, *e);
  EXPECT_EQ(offload::gro_fast_hook(no_tcp), nullptr);
  gro::EngineOptions o;
  o.gso_types = core::skb_gso::UDP_L4;  // an output that cannot carry TCP aggregates
  gro::Engine e(o);
  EXPECT_FALSE(e.options().fast_path);
  gro::Engine full{gro::EngineOptions{}};
  EXPECT_TRUE(full.options().fast_path);
}

}  // namespace
}  // namespace ofld

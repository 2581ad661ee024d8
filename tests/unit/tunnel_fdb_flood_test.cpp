// A flood of new source MACs through a VXLAN Endpoint with bounded learning (the kernel's
// IFLA_VXLAN_LIMIT: vxlan_fdb_create refuses a new entry past `maxaddress`), RSS against the
// bound's arithmetic, the settings' words and TOML keys, and the EVPN advertisement limit.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

#include "../../src/daemon/evpn.hpp"
#include "ofld/daemon/config.hpp"
#include "../common/tunnel_config_of.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/fdb.hpp"

namespace {

using namespace ofld::tunnel;
constexpr std::uint64_t kSec = 1000000000ull;

IpAddr ip(const char* s) { return *IpAddr::parse(s); }
Mac mac(std::uint32_t i) {
  return Mac{0x02, 0x10, std::uint8_t(i >> 24), std::uint8_t(i >> 16), std::uint8_t(i >> 8), std::uint8_t(i)};
}
FdbLimits limits(std::uint32_t max, LearnFrom from) {
  FdbLimits l;
  l.maxaddress = max, l.from = from;
  return l;
}

/// A VXLAN datagram (RFC 7348 §5: I flag, VNI) carrying a broadcast ARP-sized frame from `src`.
std::vector<std::uint8_t> dgram(std::uint32_t vni, const Mac& src, const Mac& dst) {
  std::vector<std::uint8_t> d = {0x08, 0, 0, 0, std::uint8_t(vni >> 16), std::uint8_t(vni >> 8), std::uint8_t(vni), 0};
  d.insert(d.end(), dst.begin(), dst.end());
  d.insert(d.end(), src.begin(), src.end());
  d.push_back(0x08), d.push_back(0x06);  // ARP
  d.resize(d.size() + 46, 0);
  return d;
}

std::size_t rss_bytes() {
  std::ifstream s("/proc/self/statm");
  std::size_t size = 0, rss = 0;
  s >> size >> rss;
  return rss * std::size_t(sysconf(_SC_PAGESIZE));
}

// A flood of new source MACs from a configured remote and from an unknown source: learning
// stops at maxaddress (counted: maxaddress, unknown_source), every frame is still delivered,
// and the stations learned before the flood keep their entries (unicast, not flooded).
TEST(TunnelFdbFlood, NewSourceMacsStopAtTheBoundAndKnownHostsKeepTheirEntries) {
  VxlanConfig c;
  c.vni = 42;
  c.local = ip("10.0.0.1");
  c.remotes = {ip("10.0.0.2"), ip("10.0.0.3")};
  c.fdb_limits = limits(1000, LearnFrom::Remotes);
  Endpoint ep(c);
  const Mac host_a{0x02, 0, 0, 0, 0, 0xaa}, host_b{0x02, 0, 0, 0, 0, 0xbb};
  const Mac bcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  std::vector<TapFrame> frames;
  std::uint64_t now = 1;
  ep.receive(dgram(42, host_a, bcast), ip("10.0.0.3"), OuterCsum::Present, now++);
  std::mt19937 rng(1);
  auto flood = [&](const char* from, int n) {
    for (int i = 0; i < n; ++i) {
      Mac m{std::uint8_t((rng() & 0xfc) | 0x02), std::uint8_t(rng()), std::uint8_t(rng()),
            std::uint8_t(rng()), std::uint8_t(rng()), std::uint8_t(rng())};
      ep.receive(dgram(42, m, bcast), ip(from), OuterCsum::Present, now++);
      if (i % 64 == 63) ep.rx_flush(now, frames);
    }
    ep.rx_flush(now, frames);
  };
  flood("10.0.0.2", 5000);
  flood("10.0.0.99", 3000);
  const auto& k = ep.counters();
  EXPECT_EQ(ep.fdb()->learned_count(), 1000u);
  EXPECT_EQ(k.fdb_learned, 1000u);                  // host_a + 999 of the flood
  EXPECT_EQ(k.fdb_refused_maxaddress, 4001u);       // the rest of the configured remote's flood
  EXPECT_EQ(k.fdb_refused_unknown_source, 3000u);   // the unknown source: never learned from
  EXPECT_EQ(ep.fdb()->refusals().maxaddress, 4001u);
  EXPECT_EQ(ep.stats()["fdb"]["learn_refused"]["unknown_source"], 3000u);
  EXPECT_EQ(k.rx_frames + frames.size(), 8001u);    // learning refused, frames delivered
  EXPECT_EQ(k.drops_total(), 0u);
  // host_b → host_a: unicast to host_a's remote, as before the flood
  std::vector<TxTrain> out;
  std::vector<std::uint8_t> f = dgram(42, host_b, host_a);
  f.erase(f.begin(), f.begin() + 8);
  ep.transmit(ofld::wire::virtio_net::Hdr{}, f, now, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].remote, ip("10.0.0.3"));
  EXPECT_EQ(k.tx_flooded, 0u);
}

// RSS while the endpoint learns a flood of 200,000 new source MACs with the default bound:
// the growth stays within the bound's arithmetic (65,536 entries × 64 bytes, plus 1 MiB for
// the remote table and allocator slack), where an unbounded table grew ~100 bytes an entry.
TEST(TunnelFdbFlood, RssStaysWithinTheDefaultBound) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "RSS is the sanitizer allocator's (redzones, quarantine) under ASan; measured in the release build";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "RSS is the sanitizer allocator's (redzones, quarantine) under ASan; measured in the release build";
#endif
#endif
  VxlanConfig c;
  c.vni = 42;
  c.local = ip("10.0.0.1");
  c.remotes = {ip("10.0.0.2")};
  Endpoint ep(c);
  const Mac bcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  std::vector<TapFrame> frames;
  std::uint64_t now = 1;
  auto feed = [&](std::uint32_t from, std::uint32_t n) {
    for (std::uint32_t i = from; i < from + n; ++i) {
      ep.receive(dgram(42, mac(i * 2654435761u), bcast), ip("10.0.0.2"), OuterCsum::Present, now++);
      if (i % 64 == 63) {
        ep.rx_flush(now, frames);
        frames.clear();
      }
    }
    ep.rx_flush(now, frames);
    frames.clear();
  };
  feed(0, 1000);  // warm the receive path's buffers
  const std::size_t before = rss_bytes();
  feed(1000, 200000);
  const std::size_t grown = rss_bytes() - std::min(rss_bytes(), before);
  EXPECT_EQ(ep.fdb()->learned_count(), FdbLimits::kDefaultMaxAddress);
  EXPECT_EQ(ep.counters().fdb_refused_maxaddress, 201000u - FdbLimits::kDefaultMaxAddress);
  EXPECT_LE(grown, std::size_t(FdbLimits::kDefaultMaxAddress) * 64 + (1u << 20));
  RecordProperty("rss_growth_bytes", std::to_string(grown));
}

// ---- configuration ----------------------------------------------------------------------------

TEST(TunnelFdbConfig, WordsAndTomlSetTheBounds) {
  using ofld::daemon::DaemonConfig;
  DaemonConfig w;
  auto e = ofld::daemon::parse_tunnel_words({"vxlan", "id", "42", "local", "10.0.0.1", "remote", "10.0.0.2",
                                             "maxaddress", "500", "maxaddress-per-remote", "50",
                                             "learning-from", "any", "local-maxaddress", "7"},
                                            w);
  ASSERT_FALSE(e) << *e;
  EXPECT_EQ(tunnel_test::vxlan_of(w).fdb_limits.maxaddress, 500u);
  EXPECT_EQ(tunnel_test::vxlan_of(w).fdb_limits.per_remote, 50u);
  EXPECT_EQ(tunnel_test::vxlan_of(w).fdb_limits.from, LearnFrom::Any);
  EXPECT_EQ(tunnel_test::vxlan_of(w).fdb_limits.local_max, 7u);
  auto t = ofld::daemon::parse_toml(
      "[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nmaxaddress = 500\n"
      "maxaddress-per-remote = 50\nlearning-from = \"any\"\nlocal-maxaddress = 7\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(t)) << std::get<std::string>(t);
  const auto& tc = tunnel_test::vxlan_of(std::get<DaemonConfig>(t)).fdb_limits;
  EXPECT_EQ(tc.maxaddress, 500u);
  EXPECT_EQ(tc.per_remote, 50u);
  EXPECT_EQ(tc.from, LearnFrom::Any);
  EXPECT_EQ(tc.local_max, 7u);
  DaemonConfig d;  // defaults: bounded
  ASSERT_FALSE(ofld::daemon::parse_tunnel_words({"vxlan", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2"}, d));
  EXPECT_EQ(tunnel_test::vxlan_of(d).fdb_limits.maxaddress, FdbLimits::kDefaultMaxAddress);
  EXPECT_EQ(tunnel_test::vxlan_of(d).fdb_limits.from, LearnFrom::Auto);
  DaemonConfig bad;
  auto err = ofld::daemon::parse_tunnel_words({"vxlan", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2",
                                               "learning-from", "everyone"},
                                              bad);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("learning-from"), std::string::npos) << *err;
  DaemonConfig bad2;
  err = ofld::daemon::parse_tunnel_words({"vxlan", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2",
                                          "maxaddress", "-1"},
                                         bad2);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("maxaddress"), std::string::npos) << *err;
}

// The type-2 advertisement rate limit is a token bucket: `burst` at once, then `per_s` a
// second (what is refused waits for a later sync).
TEST(EvpnAdvertiseLimit, BurstThenRate) {
  ofld::daemon::AdvertiseLimiter l(2, 3);
  const std::uint64_t t = 5 * kSec;
  EXPECT_TRUE(l.take(t));
  EXPECT_TRUE(l.take(t));
  EXPECT_TRUE(l.take(t));
  EXPECT_FALSE(l.take(t));               // burst spent
  EXPECT_FALSE(l.take(t + kSec / 4));    // half a token
  EXPECT_TRUE(l.take(t + kSec / 2));     // one token after 0.5 s at 2/s
  EXPECT_FALSE(l.take(t + kSec / 2));
  EXPECT_TRUE(l.take(t + 100 * kSec));   // refilled, but only up to the burst
  EXPECT_TRUE(l.take(t + 100 * kSec));
  EXPECT_TRUE(l.take(t + 100 * kSec));
  EXPECT_FALSE(l.take(t + 100 * kSec));
}

}  // namespace

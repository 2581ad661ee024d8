// io::UdpSocket against the running kernel (root; in an own namespace on its loopback):
// UDP_SEGMENT trains arrive as UDP_GRO trains (gso_size cmsg), a refused GSO send falls back
// without losing data (public bug B8), zero-checksum sockets never try UDP_SEGMENT.
#include <gtest/gtest.h>

#include <poll.h>

#include "ofld/io/netns.hpp"
#include "ofld/io/udp_socket.hpp"

namespace {

using namespace ofld;

std::vector<std::uint8_t> pattern(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::uint8_t(i * 13 + 1);
  return v;
}

/// Receive up to `want` bytes (waiting ≤ 2 s); returns the buffers with their gso_size.
std::vector<std::pair<std::vector<std::uint8_t>, std::uint16_t>> drain(io::UdpSocket& s,
                                                                         std::size_t want) {
  std::vector<std::pair<std::vector<std::uint8_t>, std::uint16_t>> out;
  std::vector<std::uint8_t> buf(70000);
  std::size_t got = 0;
  for (int i = 0; i < 40 && got < want; ++i) {
    pollfd p{s.fd(), POLLIN, 0};
    ::poll(&p, 1, 50);
    for (;;) {
      auto r = s.recv(buf);
      if (!r.ok() || !r.value()) break;
      const auto& m = *r.value();
      out.emplace_back(std::vector<std::uint8_t>(buf.begin(), buf.begin() + m.len), m.gso_size);
      got += m.len;
    }
  }
  return out;
}

template <class F>
void in_netns(F&& body) {
  auto ns = io::Netns::create("ofld-tu");
  if (ns.is_skipped()) GTEST_SKIP() << ns.message();
  ASSERT_TRUE(ns.ok()) << ns.message();
  ASSERT_TRUE(ns.value().ip({"link", "set", "lo", "up"}).ok());
  ns.value().ip({"link", "set", "lo", "mtu", "1500"});
  auto r = ns.value().run([&] { body(); });
  ASSERT_TRUE(r.ok()) << r.message();
}

TEST(TunnelUdpSocket, UdpSegmentTrainArrivesAsUdpGroTrain) {
  in_netns([] {
    auto lo = *tunnel::IpAddr::parse("127.0.0.1");
    auto rx = io::UdpSocket::open({lo, 47890, false, false, 0, 0, true, true, 4 << 20, true});
    auto tx = io::UdpSocket::open({lo, 0, false, false, 0, 0, true, false, 4 << 20, true});
    ASSERT_TRUE(rx.ok() && tx.ok());
    if (!tx.value().gso() || !rx.value().gro()) GTEST_SKIP() << "kernel lacks UDP_SEGMENT/UDP_GRO";
    auto data = pattern(2500);  // 1000 + 1000 + 500 (short tail)
    auto n = tx.value().send_train(lo, 47890, data, 1000);
    ASSERT_TRUE(n.ok()) << n.message();
    EXPECT_EQ(n.value(), 3u);
    EXPECT_EQ(tx.value().stats().gso_sends, 1u);
    auto got = drain(rx.value(), data.size());
    std::vector<std::uint8_t> all;
    for (auto& [b, g] : got) all.insert(all.end(), b.begin(), b.end());
    EXPECT_EQ(all, data);
    // Loopback hands the GSO packet to a UDP_GRO socket whole: one buffer, gso_size 1000.
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].second, 1000);
  });
}

TEST(TunnelUdpSocket, B8_RefusedGsoSendFallsBackWithoutLoss) {
  in_netns([] {
    auto lo = *tunnel::IpAddr::parse("127.0.0.1");
    auto rx = io::UdpSocket::open({lo, 47891, false, false, 0, 0, false, false, 4 << 20, true});
    auto tx = io::UdpSocket::open({lo, 0, false, false, 0, 0, true, false, 4 << 20, true});
    ASSERT_TRUE(rx.ok() && tx.ok());
    if (!tx.value().gso()) GTEST_SKIP() << "kernel lacks UDP_SEGMENT";
    // 130 segments > UDP_MAX_SEGMENTS (128 in 6.12, 64 before): udp_send_skb says EINVAL.
    auto data = pattern(130 * 100);
    auto n = tx.value().send_train(lo, 47891, data, 100);
    ASSERT_TRUE(n.ok()) << n.message();
    EXPECT_EQ(n.value(), 130u);
    EXPECT_FALSE(tx.value().gso());  // the path is remembered as refused
    EXPECT_EQ(tx.value().stats().gso_disabled, 1u);
    auto got = drain(rx.value(), data.size());
    ASSERT_EQ(got.size(), 130u);
    std::vector<std::uint8_t> all;
    for (auto& [b, g] : got) all.insert(all.end(), b.begin(), b.end());
    EXPECT_EQ(all, data);
  });
}

TEST(TunnelUdpSocket, B8_SegmentAboveMtuIsResentPlainly) {
  in_netns([] {
    auto lo = *tunnel::IpAddr::parse("127.0.0.1");
    auto rx = io::UdpSocket::open({lo, 47892, false, false, 0, 0, false, false, 4 << 20, true});
    auto tx = io::UdpSocket::open({lo, 0, false, false, 0, 0, true, false, 4 << 20, true});
    ASSERT_TRUE(rx.ok() && tx.ok());
    if (!tx.value().gso()) GTEST_SKIP() << "kernel lacks UDP_SEGMENT";
    auto data = pattern(5000);  // lo MTU 1500 < 2000-byte segments
    auto n = tx.value().send_train(lo, 47892, data, 2000);
    ASSERT_TRUE(n.ok()) << n.message();
    EXPECT_EQ(n.value(), 3u);
    auto got = drain(rx.value(), data.size());
    ASSERT_EQ(got.size(), 3u);  // IP-fragmented and reassembled datagrams
    std::vector<std::uint8_t> all;
    for (auto& [b, g] : got) all.insert(all.end(), b.begin(), b.end());
    EXPECT_EQ(all, data);
  });
}

TEST(TunnelUdpSocket, ZeroChecksumSocketDoesNotUseUdpSegment) {
  in_netns([] {
    auto lo = *tunnel::IpAddr::parse("127.0.0.1");
    auto tx = io::UdpSocket::open({lo, 0, true, false, 0, 0, true, false, 4 << 20, true});
    ASSERT_TRUE(tx.ok()) << tx.message();
    EXPECT_FALSE(tx.value().gso());
  });
}

}  // namespace

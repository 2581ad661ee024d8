// io::UdpSocket against the running kernel (root; in an own namespace on its loopback):
// UDP_SEGMENT trains arrive as UDP_GRO trains (gso_size cmsg), a refused GSO send falls back
// without losing data (public bug B8), zero-checksum sockets never try UDP_SEGMENT.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>

#include "ofld/io/netns.hpp"
#include "ofld/io/raw_ip_socket.hpp"
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

/// Make the kernel refuse UDP_SEGMENT sends on `s` from now on (SO_NO_CHECK: udp_send_skb
/// answers EINVAL to a GSO send on a socket without TX checksums).
void refuse_gso(io::UdpSocket& s) {
  int one = 1;
  ASSERT_EQ(::setsockopt(s.fd(), SOL_SOCKET, SO_NO_CHECK, &one, sizeof one), 0);
}

TEST(TunnelUdpSocket, UdpSegmentTrainArrivesAsUdpGroTrain) {
  in_netns([] {
    auto lo = *wire::IpAddr::parse("127.0.0.1");
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
    auto lo = *wire::IpAddr::parse("127.0.0.1");
    auto rx = io::UdpSocket::open({lo, 47891, false, false, 0, 0, false, false, 4 << 20, true});
    auto tx = io::UdpSocket::open({lo, 0, false, false, 0, 0, true, false, 4 << 20, true});
    ASSERT_TRUE(rx.ok() && tx.ok());
    if (!tx.value().gso()) GTEST_SKIP() << "kernel lacks UDP_SEGMENT";
    // A socket that sends without UDP checksums: udp_send_skb refuses every UDP_SEGMENT send
    // with EINVAL (sk_no_check_tx), plain datagrams still go. Set behind the socket's back,
    // so the refusal comes at run time.
    refuse_gso(tx.value());
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
    auto lo = *wire::IpAddr::parse("127.0.0.1");
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

// The outer DF and TTL a train asks for (ip(7) IP_MTU_DISCOVER, IP_TTL): df 0 is
// IP_PMTUDISC_DONT, the datagram above the loopback MTU goes out in fragments and arrives
// whole; df 1 is IP_PMTUDISC_DO, the kernel refuses it (EMSGSIZE), a counted send error. TTL
// 0 is the default again (the setsockopt value -1 gives back sysctl ip_default_ttl, 64 in a
// new namespace).
TEST(TunnelUdpSocket, DfAndTtlPerTrainAsSocketOptions) {
  in_netns([] {
    auto lo = *wire::IpAddr::parse("127.0.0.1");
    auto rx = io::UdpSocket::open({lo, 47893, false, false, 0, 0, false, false, 4 << 20, true});
    io::UdpSocketOptions o{lo, 0, false, false, 0, 0, false, false, 4 << 20, true};
    o.df = 0;
    auto tx = io::UdpSocket::open(o);
    ASSERT_TRUE(rx.ok() && tx.ok());
    auto opt = [&](int name) {
      int v = -2;
      socklen_t l = sizeof v;
      EXPECT_EQ(::getsockopt(tx.value().fd(), IPPROTO_IP, name, &v, &l), 0);
      return v;
    };
    EXPECT_EQ(opt(IP_MTU_DISCOVER), IP_PMTUDISC_DONT);
    auto data = pattern(2000);  // above lo's MTU 1500
    auto n = tx.value().send_train(lo, 47893, data, 0);
    ASSERT_TRUE(n.ok()) << n.message();
    auto got = drain(rx.value(), data.size());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].first, data);
    ASSERT_TRUE(tx.value().set_df(1).ok());
    EXPECT_EQ(opt(IP_MTU_DISCOVER), IP_PMTUDISC_DO);
    EXPECT_FALSE(tx.value().send_train(lo, 47893, data, 0).ok());
    EXPECT_EQ(tx.value().stats().send_errors, 1u);
    ASSERT_TRUE(tx.value().set_df(-1).ok());  // -1: left as it is
    EXPECT_EQ(opt(IP_MTU_DISCOVER), IP_PMTUDISC_DO);
    ASSERT_TRUE(tx.value().set_ttl(33).ok());
    EXPECT_EQ(opt(IP_TTL), 33);
    ASSERT_TRUE(tx.value().set_ttl(0).ok());
    EXPECT_EQ(opt(IP_TTL), 64);
  });
}

TEST(TunnelUdpSocket, ZeroChecksumSocketDoesNotUseUdpSegment) {
  in_netns([] {
    auto lo = *wire::IpAddr::parse("127.0.0.1");
    auto tx = io::UdpSocket::open({lo, 0, true, false, 0, 0, true, false, 4 << 20, true});
    ASSERT_TRUE(tx.ok()) << tx.message();
    EXPECT_FALSE(tx.value().gso());
  });
}

// recvmmsg fallback (UDP_GRO off): 20 datagrams come back one per slot, in order, with no
// gso_size, from batch calls (expected bytes: the sent pattern; sizes: 300 each).
TEST(TunnelUdpSocket, RecvmmsgBatchWithoutUdpGroOneDatagramPerSlot) {
  in_netns([] {
    auto lo = *wire::IpAddr::parse("127.0.0.1");
    auto rx = io::UdpSocket::open({lo, 47893, false, false, 0, 0, false, false, 4 << 20, true});
    auto tx = io::UdpSocket::open({lo, 0, false, false, 0, 0, false, false, 4 << 20, true});
    ASSERT_TRUE(rx.ok() && tx.ok());
    EXPECT_FALSE(rx.value().gro());
    auto data = pattern(20 * 300);
    auto n = tx.value().send_train(lo, 47893, data, 300);  // sendmmsg: 20 datagrams
    ASSERT_TRUE(n.ok()) << n.message();
    ASSERT_EQ(n.value(), 20u);
    std::vector<std::uint8_t> arena(8 * 2048), all;
    std::vector<io::UdpRx> rxs(8);
    std::size_t datagrams = 0, calls = 0;
    for (int i = 0; i < 40 && datagrams < 20; ++i) {
      pollfd p{rx.value().fd(), POLLIN, 0};
      ::poll(&p, 1, 50);
      auto r = rx.value().recv_batch(arena, 2048, rxs);
      ASSERT_TRUE(r.ok()) << r.message();
      if (r.value()) ++calls;
      for (std::size_t k = 0; k < r.value(); ++k) {
        EXPECT_EQ(rxs[k].len, 300u);
        EXPECT_EQ(rxs[k].gso_size, 0);
        EXPECT_EQ(rxs[k].from.to_string(), "127.0.0.1");
        all.insert(all.end(), arena.begin() + k * 2048, arena.begin() + k * 2048 + rxs[k].len);
      }
      datagrams += r.value();
    }
    EXPECT_EQ(datagrams, 20u);
    EXPECT_EQ(all, data);
    EXPECT_LT(calls, 20u);  // batched: fewer calls than datagrams
    EXPECT_EQ(rx.value().stats().recv_buffers, 20u);
  });
}

// With UDP_GRO a UDP_SEGMENT train fills one slot of a batch receive, gso_size set (U-*).
TEST(TunnelUdpSocket, RecvmmsgBatchWithUdpGroTrainInOneSlot) {
  in_netns([] {
    auto lo = *wire::IpAddr::parse("127.0.0.1");
    auto rx = io::UdpSocket::open({lo, 47894, false, false, 0, 0, true, true, 4 << 20, true});
    auto tx = io::UdpSocket::open({lo, 0, false, false, 0, 0, true, false, 4 << 20, true});
    ASSERT_TRUE(rx.ok() && tx.ok());
    if (!tx.value().gso() || !rx.value().gro()) GTEST_SKIP() << "kernel lacks UDP_SEGMENT/UDP_GRO";
    auto data = pattern(2500);
    ASSERT_TRUE(tx.value().send_train(lo, 47894, data, 1000).ok());
    std::vector<std::uint8_t> a(65536), b(65536);
    std::vector<std::span<std::uint8_t>> bufs = {a, b};
    std::vector<io::UdpRx> rxs(2);
    std::size_t n = 0;
    for (int i = 0; i < 40 && n == 0; ++i) {
      pollfd p{rx.value().fd(), POLLIN, 0};
      ::poll(&p, 1, 50);
      auto r = rx.value().recv_batch(bufs, rxs);
      ASSERT_TRUE(r.ok()) << r.message();
      n = r.value();
    }
    ASSERT_EQ(n, 1u);
    EXPECT_EQ(rxs[0].len, 2500u);
    EXPECT_EQ(rxs[0].gso_size, 1000);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), a.begin()));
  });
}

// A train of more than UDP_MAX_SEGMENTS (128 in 6.12, include/linux/udp.h)
// datagrams makes udp_send_skb answer EINVAL (datalen > gso_size * UDP_MAX_SEGMENTS). That is
// not a refusal of UDP_SEGMENT: the socket splits the train into sends of at most 128 (here
// 300 + a short tail = 128 + 128 + 45), UDP_SEGMENT stays on, every datagram arrives in order.
TEST(TunnelUdpSocket, TrainAboveUdpMaxSegmentsIsSplitAndGsoStaysOn) {
  in_netns([] {
    auto lo = *wire::IpAddr::parse("127.0.0.1");
    auto rx = io::UdpSocket::open({lo, 47895, false, false, 0, 0, false, false, 8 << 20, true});
    auto tx = io::UdpSocket::open({lo, 0, false, false, 0, 0, true, false, 4 << 20, true});
    ASSERT_TRUE(rx.ok() && tx.ok());
    if (!tx.value().gso()) GTEST_SKIP() << "kernel lacks UDP_SEGMENT";
    auto data = pattern(300 * 100 + 40);
    auto n = tx.value().send_train(lo, 47895, data, 100);
    ASSERT_TRUE(n.ok()) << n.message();
    EXPECT_EQ(n.value(), 301u);
    EXPECT_TRUE(tx.value().gso());
    EXPECT_EQ(tx.value().stats().gso_disabled, 0u);
    EXPECT_EQ(tx.value().stats().gso_sends, 3u);
    auto got = drain(rx.value(), data.size());
    ASSERT_EQ(got.size(), 301u);
    std::vector<std::uint8_t> all;
    for (auto& [b, g] : got) all.insert(all.end(), b.begin(), b.end());
    EXPECT_EQ(all, data);
  });
}

// No silent loss: what the kernel drops on a receive socket is counted. socket(7):
// SO_RCVBUF is doubled by the kernel (bookkeeping overhead); SO_MEMINFO's SK_MEMINFO_DROPS is
// the socket's sk_drops, which udp_queue_rcv_skb raises for every datagram that does not fit.
// 300 datagrams of 1000 bytes into a socket nobody reads, with the smallest receive buffer:
// every datagram is either received afterwards or counted as dropped, and some were dropped.
// The tunnel's receive socket asks for 8 MiB (rcvbuf_bytes) and gets twice that.
TEST(TunnelUdpSocket, ReceiveQueueDropsAreCounted) {
  in_netns([] {
    auto lo = *wire::IpAddr::parse("127.0.0.1");
    io::UdpSocketOptions ro{lo, 47897, false, false, 0, 0, false, false, 4 << 20, true};
    ro.rcvbuf_bytes = 1;  // the kernel's minimum (SOCK_MIN_RCVBUF)
    auto rx = io::UdpSocket::open(ro);
    auto tx = io::UdpSocket::open({lo, 0, false, false, 0, 0, false, false, 4 << 20, true});
    ASSERT_TRUE(rx.ok() && tx.ok());
    EXPECT_EQ(rx.value().rx_queue_drops(), 0u);
    const std::size_t n = 300;
    auto data = pattern(1000 * n);
    auto s = tx.value().send_train(lo, 47897, data, 1000);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(s.value(), n);
    auto got = drain(rx.value(), data.size());
    const std::uint64_t dropped = rx.value().rx_queue_drops();
    EXPECT_GT(dropped, 0u);
    EXPECT_EQ(got.size() + dropped, n);

    io::UdpSocketOptions big{lo, 47898, false, false, 0, 0, false, false, 4 << 20, true};
    big.rcvbuf_bytes = 8 << 20;
    auto b = io::UdpSocket::open(big);
    ASSERT_TRUE(b.ok());
    int v = 0;
    socklen_t len = sizeof v;
    ASSERT_EQ(::getsockopt(b.value().fd(), SOL_SOCKET, SO_RCVBUF, &v, &len), 0);
    EXPECT_EQ(v, 2 * (8 << 20));
    ASSERT_EQ(::getsockopt(b.value().fd(), SOL_SOCKET, SO_SNDBUF, &v, &len), 0);
    EXPECT_EQ(v, 2 * (4 << 20));
  });
}

// The same for the raw IP socket of GRE/ip6gre (IPPROTO_GRE, 47): raw_rcv_skb drops what does
// not fit its receive buffer and counts it in sk_drops. 300 packets to a raw socket nobody
// reads: every one is received afterwards or counted as dropped, and some were dropped. The
// tunnel's raw socket asks for 8 MiB (SO_RCVBUFFORCE; it was a capped SO_RCVBUF before).
TEST(TunnelRawSocket, ReceiveQueueDropsAreCounted) {
  in_netns([] {
    auto lo = *wire::IpAddr::parse("127.0.0.1");
    auto rx = io::RawIpSocket::open({lo, 47, 0, 0, 4 << 20, 1});
    if (rx.is_skipped()) GTEST_SKIP() << rx.message();
    auto tx = io::RawIpSocket::open({lo, 47, 0, 0, 4 << 20, 0});
    ASSERT_TRUE(rx.ok() && tx.ok()) << rx.message() << tx.message();
    ASSERT_TRUE(tx.value().receive_none().ok());
    EXPECT_EQ(rx.value().rx_queue_drops(), 0u);
    const std::size_t n = 300;
    std::vector<std::uint8_t> data(1000 * n, 0);  // GRE headers of zeros: the kernel does not look
    auto s = tx.value().send_train(lo, data, 1000);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(s.value(), n);
    std::vector<std::uint8_t> buf(4096);
    std::size_t got = 0;
    for (int i = 0; i < 20; ++i) {
      pollfd p{rx.value().fd(), POLLIN, 0};
      ::poll(&p, 1, 50);
      for (;;) {
        auto r = rx.value().recv(buf);
        if (!r.ok() || !r.value()) break;
        ++got;
      }
    }
    const std::uint64_t dropped = rx.value().rx_queue_drops();
    EXPECT_GT(dropped, 0u);
    EXPECT_EQ(got + dropped, n);
    auto b = io::RawIpSocket::open({lo, 47, 0, 0, 4 << 20, 8 << 20});
    ASSERT_TRUE(b.ok());
    int v = 0;
    socklen_t len = sizeof v;
    ASSERT_EQ(::getsockopt(b.value().fd(), SOL_SOCKET, SO_RCVBUF, &v, &len), 0);
    EXPECT_EQ(v, 2 * (8 << 20));
  });
}

}  // namespace

// io::Tap / io::Tun read_batch and write_batch (the endpoint loop no longer reads or
// writes the device fd itself) against the running kernel, in a namespace of the test's own
// (root; skipped otherwise). The witness is the kernel: datagrams a socket sends out through
// the device must come out of read_batch byte for byte (the UDP payload the test chose, the
// vnet header the kernel wrote: no GSO for a small datagram), and a packet handed to
// write_batch must reach a socket bound inside the namespace.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "ofld/io/netns.hpp"
#include "ofld/io/tap.hpp"
#include "ofld/io/tun.hpp"
#include "ofld/io/vnet_writer.hpp"
#include "ofld/tunnel/endpoint.hpp"

namespace {

using namespace ofld;

struct Collect : io::FrameSink {
  std::vector<std::pair<wire::virtio_net::Hdr, std::vector<std::uint8_t>>> got;
  void frame(const wire::virtio_net::Hdr& h, std::span<const std::uint8_t> f) override {
    got.emplace_back(h, std::vector<std::uint8_t>(f.begin(), f.end()));
  }
};

// An IPv4/UDP packet (UDP checksum 0: none, RFC 768), IPv4 header checksum computed (RFC 791).
std::vector<std::uint8_t> udp4(const char* src, const char* dst, std::uint16_t dport, const std::string& payload) {
  std::vector<std::uint8_t> p(28 + payload.size());
  p[0] = 0x45;
  p[2] = std::uint8_t(p.size() >> 8);
  p[3] = std::uint8_t(p.size());
  p[8] = 64;
  p[9] = 17;
  inet_pton(AF_INET, src, &p[12]);
  inet_pton(AF_INET, dst, &p[16]);
  std::uint32_t s = 0;
  for (int i = 0; i < 20; i += 2) s += std::uint32_t(p[std::size_t(i)] << 8 | p[std::size_t(i) + 1]);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  p[10] = std::uint8_t(~s >> 8);
  p[11] = std::uint8_t(~s);
  p[20] = 0x30, p[21] = 0x39;  // source port 12345
  p[22] = std::uint8_t(dport >> 8);
  p[23] = std::uint8_t(dport);
  p[24] = std::uint8_t((8 + payload.size()) >> 8);
  p[25] = std::uint8_t(8 + payload.size());
  std::memcpy(&p[28], payload.data(), payload.size());
  return p;
}

int udp_socket(const char* addr, std::uint16_t port) {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, addr, &a.sin_addr);
  if (port) ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  return s;
}

void send_to(int s, const char* addr, std::uint16_t port, const std::string& m) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, addr, &a.sin_addr);
  ::sendto(s, m.data(), m.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a);
}

std::string recv_within(int s, int ms) {
  pollfd p{s, POLLIN, 0};
  if (::poll(&p, 1, ms) != 1) return "";
  char b[2048];
  ssize_t n = ::recv(s, b, sizeof b, MSG_DONTWAIT);
  return n > 0 ? std::string(b, std::size_t(n)) : "";
}

/// The UDP payloads (port 9) among read frames; `l3` = offset of the IP header in a frame.
std::vector<std::string> payloads(const Collect& c, std::size_t l3) {
  std::vector<std::string> out;
  for (const auto& [h, f] : c.got) {
    if (f.size() < l3 + 28 || f[l3] != 0x45 || f[l3 + 9] != 17 || f[l3 + 22] != 0 || f[l3 + 23] != 9) continue;
    EXPECT_EQ(h.gso_type, 0) << "a small datagram is no GSO frame";
    out.emplace_back(f.begin() + std::ptrdiff_t(l3 + 28), f.end());
  }
  return out;
}

TEST(DeviceBatchKernel, TapReadBatchAndWriteBatch) {
  auto ns = io::Netns::create("ofld-devb");
  if (!ns.ok()) GTEST_SKIP() << ns.message();
  auto r = ns.value().run([&]() -> std::string {
    auto t = io::Tap::open(io::TapOptions{"dbt0", true, false, 10, true});
    if (!t.ok()) return "SKIP " + t.message();
    auto& tap = t.value();
    if (auto s = tap.set_up(); !s.ok()) return s.message();
    for (auto args : std::vector<std::vector<std::string>>{
             {"ip", "addr", "add", "10.9.0.1/24", "dev", "dbt0"},
             {"ip", "neigh", "add", "10.9.0.2", "lladdr", "02:00:00:00:00:02", "dev", "dbt0"}})
      if (auto c = io::check_command(args); !c.ok()) return c.message();
    // kernel → read_batch
    int tx = udp_socket("10.9.0.1", 0);
    for (int i = 0; i < 3; ++i) send_to(tx, "10.9.0.2", 9, "ofld-batch-" + std::to_string(i));
    ::close(tx);
    Collect c;
    tap.read_batch(64, c);
    auto got = payloads(c, 14);
    const std::vector<std::string> want = {"ofld-batch-0", "ofld-batch-1", "ofld-batch-2"};
    if (got != want) return "read_batch: got " + std::to_string(got.size()) + " datagrams";
    if (tap.read_stats().frames != c.got.size()) return "read_stats.frames";
    if (tap.read_batch(64, c) != 0) return "read_batch after draining returned frames";
    // write_batch → kernel
    int rx = udp_socket("10.9.0.1", 5001);
    std::uint8_t mac[6];
    if (auto s = tap.get_mac(mac); !s.ok()) return s.message();
    std::vector<std::uint8_t> frame(mac, mac + 6);
    for (std::uint8_t b : {0x02, 0, 0, 0, 0, 0x02, 0x08, 0x00}) frame.push_back(b);
    auto ip = udp4("10.9.0.2", "10.9.0.1", 5001, "written-by-batch");
    frame.insert(frame.end(), ip.begin(), ip.end());
    std::vector<tunnel::TapFrame> frames;
    frames.emplace_back(wire::virtio_net::Hdr{}, core::Packet::from_bytes(frame));
    auto w = tap.write_batch(frames);
    if (w.frames != 1 || w.failed != 0 || w.bytes != frame.size()) return "write_batch result";
    const std::string m = recv_within(rx, 2000);
    ::close(rx);
    if (m != "written-by-batch") return "socket received '" + m + "'";
    if (!tap.writer() || tap.writer()->stats().frames != 1) return "writer stats";
    return "";
  });
  ASSERT_TRUE(r.ok()) << r.message();
  if (r.value().rfind("SKIP ", 0) == 0) GTEST_SKIP() << r.value();
  EXPECT_EQ(r.value(), "");
}

TEST(DeviceBatchKernel, TunReadBatchAndWriteBatch) {
  auto ns = io::Netns::create("ofld-devb");
  if (!ns.ok()) GTEST_SKIP() << ns.message();
  auto r = ns.value().run([&]() -> std::string {
    auto t = io::Tun::open("dbn0", true);
    if (!t.ok()) return "SKIP " + t.message();
    auto& tun = t.value();
    if (auto s = tun.set_up(); !s.ok()) return s.message();
    if (auto c = io::check_command({"ip", "addr", "add", "10.9.1.1/24", "dev", "dbn0"}); !c.ok())
      return c.message();
    int tx = udp_socket("10.9.1.1", 0);
    for (int i = 0; i < 3; ++i) send_to(tx, "10.9.1.2", 9, "ofld-batch-" + std::to_string(i));
    ::close(tx);
    Collect c;
    tun.read_batch(64, c);
    auto got = payloads(c, 0);
    const std::vector<std::string> want = {"ofld-batch-0", "ofld-batch-1", "ofld-batch-2"};
    if (got != want) return "read_batch: got " + std::to_string(got.size()) + " datagrams";
    int rx = udp_socket("10.9.1.1", 5001);
    std::vector<tunnel::TapFrame> frames;
    frames.emplace_back(wire::virtio_net::Hdr{},
                        core::Packet::from_bytes(udp4("10.9.1.2", "10.9.1.1", 5001, "written-by-batch")));
    auto w = tun.write_batch(frames);
    if (w.frames != 1 || w.failed != 0) return "write_batch result";
    const std::string m = recv_within(rx, 2000);
    ::close(rx);
    if (m != "written-by-batch") return "socket received '" + m + "'";
    return "";
  });
  ASSERT_TRUE(r.ok()) << r.message();
  if (r.value().rfind("SKIP ", 0) == 0) GTEST_SKIP() << r.value();
  EXPECT_EQ(r.value(), "");
}

}  // namespace

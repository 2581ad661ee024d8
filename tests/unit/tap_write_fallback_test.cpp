// A TAP/TUN write that the kernel refuses for a GSO frame must not lose
// data. Linux 6.6.44+ stable answered EINVAL to a GSO frame with a short last segment written
// to a TAP (tailscale #13041); a device that is down answers EIO. io::VnetWriter resends the
// frame as individual segments and turns GSO writes of that kind off; EAGAIN and short writes
// are written again. The "kernel" here is the writer's seam (VnetWriterOptions::writev): it
// refuses on purpose and records what it accepted; the expected segments follow from the
// virtio_net_hdr rules (spec S-5, S-7, S-8: gso_type NONE, NEEDS_CSUM with csum_start at
// the L4 header and the pseudo-header seed in the field, C-12), TCP sequence arithmetic
// (RFC 9293 §3.4), the IPv4/IPv6 length fields (RFC 791, RFC 8200), UDP datagram lengths
// (RFC 768) and the checksum definition (RFC 1071) — never from ofld's own output.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>

#include "gso_test_util.hpp"
#include "ofld/io/vnet_writer.hpp"
#include "ofld/wire/bytes.hpp"

namespace {

using namespace ofld;
using gso_test::Bytes;
namespace wv = wire::virtio_net;

struct Written {
  wv::Hdr h;
  Bytes frame;
};

// The seam: `policy(hdr, attempt)` returns 0 (accept), an errno (refuse), or -1 (a short
// write: report one byte less, take nothing). Accepted writes are recorded.
struct FakeKernel {
  bool vnet = true;
  std::vector<Written> out;
  std::vector<wv::Hdr> attempts;  // every write attempt's header
  std::function<int(const wv::Hdr&, std::size_t)> policy = [](const wv::Hdr&, std::size_t) { return 0; };

  io::WritevFn fn() {
    return [this](int, const iovec* iov, int n) -> ssize_t {
      Bytes all;
      for (int i = 0; i < n; ++i) {
        auto* p = static_cast<const std::uint8_t*>(iov[i].iov_base);
        all.insert(all.end(), p, p + iov[i].iov_len);
      }
      wv::Hdr h{};
      std::size_t off = 0;
      if (vnet) {
        h = wv::parse(all, wv::kHdrLen, wv::ByteOrder::Little).value();
        off = wv::kHdrLen;
      }
      attempts.push_back(h);
      int r = policy(h, attempts.size());
      if (r > 0) {
        errno = r;
        return -1;
      }
      if (r < 0) return ssize_t(all.size() - 1);
      out.push_back({h, Bytes(all.begin() + std::ptrdiff_t(off), all.end())});
      return ssize_t(all.size());
    };
  }
};

// Refuses every GSO frame with `err`; takes everything else.
std::function<int(const wv::Hdr&, std::size_t)> refuse_gso(int err) {
  return [err](const wv::Hdr& h, std::size_t) { return h.gso_type != wv::kGsoNone ? err : 0; };
}

// A pipe's write end: always writable, so poll(POLLOUT) returns at once.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe2(fd, O_NONBLOCK | O_CLOEXEC), 0); }
  ~Pipe() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
};

io::VnetWriter make_writer(FakeKernel& k, int fd, int mtu = 1500,
                           wire::LinkType link = wire::LinkType::Ethernet) {
  io::VnetWriterOptions o;
  o.dev = "test0";
  o.link = link;
  o.vnet_hdr = k.vnet;
  o.mtu = mtu;
  o.eagain_wait_ms = 200;
  o.writev = k.fn();
  return io::VnetWriter(fd, std::move(o));
}

// The bytes of a device frame.
Bytes flat(const offload::virtio::TapFrame& f) { return f.pkt->to_bytes(); }

// A TCP super-frame as GRO hands it to the TAP: the L4 field holds the pseudo-header seed
// (NEEDS_CSUM), gso_size `mss`, `payload` bytes. link_off: 14 (Ethernet) or 0 (raw IP).
offload::virtio::TapFrame tcp_super(bool v6, std::size_t payload, std::uint16_t mss, bool raw_ip = false,
                           std::uint32_t seq = 0x11223344) {
  gso_test::TcpSpec s;
  s.v6 = v6;
  s.payload = payload;
  s.seq = seq;
  s.flags = 0x18;  // ACK|PSH
  Bytes f = gso_test::tcp_frame(s);
  const std::size_t ip = 14, l4 = ip + (v6 ? 40 : 20);
  gso_test::put16(f, l4 + 16, gso_test::pseudo_only(&f[ip], v6, f.size() - l4, 6));
  if (raw_ip) f.erase(f.begin(), f.begin() + 14);
  const std::size_t lo = raw_ip ? 0 : 14;
  wv::Hdr h{};
  h.flags = wv::kFlagNeedsCsum;
  h.gso_type = v6 ? wv::kGsoTcpv6 : wv::kGsoTcpv4;
  h.gso_size = mss;
  h.hdr_len = std::uint16_t(l4 - 14 + lo + 20);
  h.csum_start = std::uint16_t(l4 - 14 + lo);
  h.csum_offset = 16;
  return offload::virtio::TapFrame{h, core::Packet::from_bytes(f)};
}

// A USO super-frame: UDP payload `payload` cut into datagrams of `mss` (NEEDS_CSUM, seed).
offload::virtio::TapFrame udp_super(bool v6, std::size_t payload, std::uint16_t mss) {
  Bytes f = gso_test::udp_frame(v6, payload);
  const std::size_t ip = 14, l4 = ip + (v6 ? 40 : 20);
  gso_test::put16(f, l4 + 6, gso_test::pseudo_only(&f[ip], v6, f.size() - l4, 17));
  wv::Hdr h{};
  h.flags = wv::kFlagNeedsCsum;
  h.gso_type = wv::kGsoUdpL4;
  h.gso_size = mss;
  h.hdr_len = std::uint16_t(l4 + 8);
  h.csum_start = std::uint16_t(l4);
  h.csum_offset = 6;
  return offload::virtio::TapFrame{h, core::Packet::from_bytes(f)};
}

std::uint16_t be16(const Bytes& b, std::size_t o) { return wire::load_be16(&b[o]); }
std::uint32_t be32(const Bytes& b, std::size_t o) { return wire::load_be32(&b[o]); }

// Checks `segs` are the TCP segmentation of `super` at `mss`: non-GSO frames, the original
// payload in order, sequence numbers advancing by the bytes sent, IP lengths matching, PSH
// only on the last (RFC 9293: the flag goes with the end of the data), and each checksum
// either NEEDS_CSUM with the seed of its own length, or complete and valid.
void check_tcp_segments(const offload::virtio::TapFrame& super, const std::vector<Written>& segs,
                        std::size_t mss, bool expect_needs_csum, std::size_t lo = 14) {
  const Bytes f = flat(super);
  const bool v6 = (f[lo] >> 4) == 6;
  const std::size_t iphl = v6 ? 40 : 20, l4 = lo + iphl, hdrs = l4 + 20;
  const std::size_t total = f.size() - hdrs;
  ASSERT_EQ(segs.size(), (total + mss - 1) / mss);
  Bytes payload;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    SCOPED_TRACE("segment " + std::to_string(i));
    const auto& s = segs[i];
    const std::size_t want = std::min(mss, total - i * mss);
    ASSERT_EQ(s.frame.size(), hdrs + want);
    EXPECT_EQ(s.h.gso_type, wv::kGsoNone);
    EXPECT_EQ(s.h.gso_size, 0);
    EXPECT_TRUE(std::equal(f.begin(), f.begin() + std::ptrdiff_t(lo), s.frame.begin()));  // link header
    if (v6) EXPECT_EQ(be16(s.frame, lo + 4), 20 + want);
    else {
      EXPECT_EQ(be16(s.frame, lo + 2), 20 + 20 + want);
      EXPECT_EQ(csum::ip_compute_csum(&s.frame[lo], 20), 0) << "IPv4 header checksum (RFC 791)";
    }
    EXPECT_EQ(be32(s.frame, l4 + 4), be32(f, l4 + 4) + std::uint32_t(i * mss)) << "seq";
    EXPECT_EQ(be32(s.frame, l4 + 8), be32(f, l4 + 8)) << "ack";
    const bool last = i + 1 == segs.size();
    EXPECT_EQ(s.frame[l4 + 13] & 0x08, last ? 0x08 : 0) << "PSH on the last segment only";
    const std::size_t l4len = 20 + want;
    if (expect_needs_csum) {
      EXPECT_EQ(s.h.flags & wv::kFlagNeedsCsum, wv::kFlagNeedsCsum);
      EXPECT_EQ(s.h.csum_start, l4);
      EXPECT_EQ(s.h.csum_offset, 16);
      EXPECT_EQ(be16(s.frame, l4 + 16), gso_test::pseudo_only(&s.frame[lo], v6, l4len, 6));
    } else {
      EXPECT_EQ(s.h.flags & wv::kFlagNeedsCsum, 0);
      EXPECT_TRUE(gso_test::l4_valid(&s.frame[lo], v6, &s.frame[l4], l4len, 6)) << "RFC 1071";
    }
    payload.insert(payload.end(), s.frame.begin() + std::ptrdiff_t(hdrs), s.frame.end());
  }
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), f.begin() + std::ptrdiff_t(hdrs), f.end()))
      << "the segments carry the aggregate's payload, in order";
}

TEST(TapWriteFallback, GsoRefusedEinvalResentAsSegmentsAndKindTurnedOff) {
  Pipe p;
  FakeKernel k;
  k.policy = refuse_gso(EINVAL);
  auto w = make_writer(k, p.fd[1]);
  // 4 × 1448 + a short last segment of 1000 (the shape 6.6.44 refused)
  auto super = tcp_super(false, 4 * 1448 + 1000, 1448);
  auto r = w.write(super);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.frames, 5u);
  ASSERT_EQ(k.attempts.size(), 6u);  // the aggregate, then 5 segments
  EXPECT_EQ(k.attempts[0].gso_type, wv::kGsoTcpv4);
  check_tcp_segments(super, k.out, 1448, true);
  const auto& st = w.stats();
  EXPECT_EQ(st.gso_refused[std::size_t(io::GsoWriteKind::Tcpv4)], 1u);
  EXPECT_EQ(st.sw_gso_frames, 1u);
  EXPECT_EQ(st.sw_gso_segments, 5u);
  EXPECT_EQ(st.failed, 0u);
  EXPECT_FALSE(w.gso_on(io::GsoWriteKind::Tcpv4));
  EXPECT_TRUE(w.gso_on(io::GsoWriteKind::Tcpv6)) << "kinds are turned off separately";
  EXPECT_TRUE(w.gso_on(io::GsoWriteKind::Uso));

  // Later TCPv4 aggregates go out unaggregated without a GSO attempt.
  k.out.clear();
  k.attempts.clear();
  auto super2 = tcp_super(false, 3 * 1448, 1448, false, 0x9000);
  r = w.write(super2);
  EXPECT_EQ(r.frames, 3u);
  EXPECT_EQ(r.failed, 0u);
  ASSERT_EQ(k.attempts.size(), 3u);
  for (const auto& a : k.attempts) EXPECT_EQ(a.gso_type, wv::kGsoNone);
  check_tcp_segments(super2, k.out, 1448, true);
  EXPECT_EQ(w.stats().gso_refused[std::size_t(io::GsoWriteKind::Tcpv4)], 1u) << "one refusal, one log line";
  EXPECT_EQ(w.stats().sw_gso_frames, 2u);

  // A TCPv6 aggregate is still tried as GSO first; refused, it is segmented and TCPv6 goes off.
  k.out.clear();
  k.attempts.clear();
  auto super6 = tcp_super(true, 2 * 1428 + 7, 1428);
  r = w.write(super6);
  EXPECT_EQ(r.frames, 3u);
  ASSERT_FALSE(k.attempts.empty());
  EXPECT_EQ(k.attempts[0].gso_type, wv::kGsoTcpv6);
  check_tcp_segments(super6, k.out, 1428, true);
  EXPECT_FALSE(w.gso_on(io::GsoWriteKind::Tcpv6));
  EXPECT_EQ(w.stats().gso_refused[std::size_t(io::GsoWriteKind::Tcpv6)], 1u);
  EXPECT_TRUE(w.gso_on(io::GsoWriteKind::Uso));

  // A frame that is not GSO is written as it is.
  k.out.clear();
  auto single = tcp_super(false, 500, 1448);
  single.vnet.gso_type = wv::kGsoNone;
  single.vnet.gso_size = 0;
  r = w.write(single);
  EXPECT_EQ(r.frames, 1u);
  ASSERT_EQ(k.out.size(), 1u);
  EXPECT_EQ(k.out[0].frame, flat(single));
  EXPECT_EQ(k.out[0].h, single.vnet);
}

TEST(TapWriteFallback, GsoRefusedEioIsTheSame) {
  Pipe p;
  FakeKernel k;
  k.policy = refuse_gso(EIO);
  auto w = make_writer(k, p.fd[1]);
  auto super = tcp_super(false, 10 * 1448, 1448);
  auto r = w.write(super);
  EXPECT_EQ(r.failed, 0u);
  check_tcp_segments(super, k.out, 1448, true);
  EXPECT_FALSE(w.gso_on(io::GsoWriteKind::Tcpv4));
}

// A packet-form frame (GRO output: head + fragments, as the VXLAN data path hands it over)
// is segmented from its pieces.
TEST(TapWriteFallback, PacketFormFrameSegmented) {
  Pipe p;
  FakeKernel k;
  k.policy = refuse_gso(EINVAL);
  auto w = make_writer(k, p.fd[1]);
  auto super = tcp_super(false, 3 * 1448 + 100, 1448);
  const std::size_t hdrs = 14 + 20 + 20;
  const Bytes sb = flat(super);
  auto pkt = core::Packet::from_bytes(std::span<const std::uint8_t>(sb).first(hdrs));
  auto buf = core::Buffer::make(std::span<const std::uint8_t>(sb).subspan(hdrs));
  ASSERT_EQ(pkt.add_frag(buf, 0, sb.size() - hdrs), core::PacketError::Ok);
  ASSERT_EQ(pkt.to_bytes(), sb);
  offload::virtio::TapFrame pf{super.vnet, std::move(pkt)};
  auto r = w.write(pf);
  EXPECT_EQ(r.failed, 0u);
  check_tcp_segments(super, k.out, 1448, true);
}

// "segments sized to the TAP's MTU": a TCP aggregate whose gso_size does not fit the device
// MTU is cut at MTU − IP header − TCP header.
TEST(TapWriteFallback, TcpSegmentsFitTheMtu) {
  Pipe p;
  FakeKernel k;
  k.policy = refuse_gso(EINVAL);
  auto w = make_writer(k, p.fd[1], /*mtu=*/1000);
  auto super = tcp_super(false, 4000, 1448);
  auto r = w.write(super);
  EXPECT_EQ(r.failed, 0u);
  check_tcp_segments(super, k.out, 1000 - 40, true);
  for (const auto& s : k.out) EXPECT_LE(s.frame.size() - 14, 1000u);
}

// USO: the datagram boundaries are the data — gso_size is kept (RFC 768 lengths per datagram).
TEST(TapWriteFallback, UsoRefusedResentAsDatagrams) {
  for (bool v6 : {false, true}) {
    SCOPED_TRACE(v6 ? "IPv6" : "IPv4");
    Pipe p;
    FakeKernel k;
    k.policy = refuse_gso(EINVAL);
    auto w = make_writer(k, p.fd[1], /*mtu=*/900);  // below gso_size: still whole datagrams
    auto super = udp_super(v6, 2 * 1000 + 500, 1000);
    auto r = w.write(super);
    EXPECT_EQ(r.failed, 0u);
    ASSERT_EQ(k.out.size(), 3u);
    const std::size_t l4 = 14 + (v6 ? 40 : 20);
    Bytes payload;
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& s = k.out[i];
      const std::size_t want = i < 2 ? 1000 : 500;
      ASSERT_EQ(s.frame.size(), l4 + 8 + want);
      EXPECT_EQ(s.h.gso_type, wv::kGsoNone);
      EXPECT_EQ(be16(s.frame, l4 + 4), 8 + want) << "UDP length (RFC 768)";
      EXPECT_EQ(s.h.flags & wv::kFlagNeedsCsum, wv::kFlagNeedsCsum);
      EXPECT_EQ(s.h.csum_start, l4);
      EXPECT_EQ(s.h.csum_offset, 6);
      EXPECT_EQ(be16(s.frame, l4 + 6), gso_test::pseudo_only(&s.frame[14], v6, 8 + want, 17));
      payload.insert(payload.end(), s.frame.begin() + std::ptrdiff_t(l4 + 8), s.frame.end());
    }
    const Bytes sb = flat(super);
    EXPECT_TRUE(std::equal(payload.begin(), payload.end(), sb.begin() + std::ptrdiff_t(l4 + 8), sb.end()));
    EXPECT_FALSE(w.gso_on(io::GsoWriteKind::Uso));
    EXPECT_TRUE(w.gso_on(io::GsoWriteKind::Tcpv4));
    EXPECT_EQ(w.stats().gso_refused[std::size_t(io::GsoWriteKind::Uso)], 1u);
  }
}

// TUN (raw IP, GUE/GRE endpoints): the same without an Ethernet header.
TEST(TapWriteFallback, TunRawIpSegmented) {
  for (bool v6 : {false, true}) {
    SCOPED_TRACE(v6 ? "IPv6" : "IPv4");
    Pipe p;
    FakeKernel k;
    k.policy = refuse_gso(EINVAL);
    auto w = make_writer(k, p.fd[1], 1400, wire::LinkType::RawIp);
    auto super = tcp_super(v6, 5 * 1300 + 11, 1300, /*raw_ip=*/true);
    auto r = w.write(super);
    EXPECT_EQ(r.failed, 0u);
    check_tcp_segments(super, k.out, 1300, true, /*lo=*/0);
    EXPECT_FALSE(w.gso_on(v6 ? io::GsoWriteKind::Tcpv6 : io::GsoWriteKind::Tcpv4));
  }
}

// When the kernel refuses the NEEDS_CSUM segments too, their checksums are completed in
// software and they are written without NEEDS_CSUM.
TEST(TapWriteFallback, NeedsCsumRefusedChecksumsCompleted) {
  Pipe p;
  FakeKernel k;
  k.policy = [](const wv::Hdr& h, std::size_t) {
    return h.gso_type != wv::kGsoNone || (h.flags & wv::kFlagNeedsCsum) ? EINVAL : 0;
  };
  auto w = make_writer(k, p.fd[1]);
  auto super = tcp_super(false, 3 * 1448 + 5, 1448);
  auto r = w.write(super);
  EXPECT_EQ(r.failed, 0u);
  check_tcp_segments(super, k.out, 1448, false);
  EXPECT_EQ(w.stats().csum_sw, 4u);
}

// Without a vnet header (offloads off) a segment can only carry a complete checksum.
TEST(TapWriteFallback, NoVnetHeaderFramesWrittenAsIs) {
  Pipe p;
  FakeKernel k;
  k.vnet = false;
  auto w = make_writer(k, p.fd[1]);
  auto f = tcp_super(false, 700, 1448);
  f.vnet = {};
  auto r = w.write(f);
  EXPECT_EQ(r.frames, 1u);
  ASSERT_EQ(k.out.size(), 1u);
  EXPECT_EQ(k.out[0].frame, flat(f));
}

// A refusal that is not about GSO (everything refused, e.g. EIO from a device that is down):
// the frame is a counted loss and GSO writes stay on.
TEST(TapWriteFallback, EverythingRefusedIsCountedAndGsoStaysOn) {
  Pipe p;
  FakeKernel k;
  k.policy = [](const wv::Hdr&, std::size_t) { return EIO; };
  auto w = make_writer(k, p.fd[1]);
  auto r = w.write(tcp_super(false, 3 * 1448, 1448));
  EXPECT_GE(r.failed, 1u);
  EXPECT_EQ(r.frames, 0u);
  EXPECT_EQ(r.error, EIO);
  EXPECT_TRUE(k.out.empty());
  EXPECT_TRUE(w.gso_on(io::GsoWriteKind::Tcpv4));
  EXPECT_EQ(w.stats().gso_refused[std::size_t(io::GsoWriteKind::Tcpv4)], 0u);
  EXPECT_GE(w.stats().failed, 1u);
}

// The class: EAGAIN (tun's send buffer full) must not lose the frame: wait for POLLOUT, write
// again; the frame arrives once.
TEST(TapWriteFallback, EagainWrittenAgain) {
  Pipe p;
  FakeKernel k;
  k.policy = [](const wv::Hdr&, std::size_t attempt) { return attempt <= 2 ? EAGAIN : 0; };
  auto w = make_writer(k, p.fd[1]);
  auto f = tcp_super(false, 3 * 1448, 1448);
  auto r = w.write(f);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.frames, 1u);
  ASSERT_EQ(k.out.size(), 1u);
  EXPECT_EQ(k.out[0].frame, flat(f));
  EXPECT_EQ(k.out[0].h.gso_type, wv::kGsoTcpv4) << "EAGAIN says nothing about GSO";
  EXPECT_TRUE(w.gso_on(io::GsoWriteKind::Tcpv4));
  EXPECT_EQ(w.stats().eagain_waits, 2u);
}

// EAGAIN that never ends: bounded (eagain_wait_ms), then a counted loss — no hang.
TEST(TapWriteFallback, EagainForeverIsBoundedAndCounted) {
  Pipe p;
  FakeKernel k;
  k.policy = [](const wv::Hdr&, std::size_t) { return EAGAIN; };
  auto w = make_writer(k, p.fd[1]);  // eagain_wait_ms 200
  auto f = tcp_super(false, 500, 1448);
  f.vnet.gso_type = wv::kGsoNone;
  f.vnet.gso_size = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = w.write(f);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.failed, 1u);
  EXPECT_EQ(r.error, EAGAIN);
  EXPECT_EQ(w.stats().failed, 1u);
  EXPECT_LT(ms, 2000);
}

// A short write (the kernel took less than the frame; tun never does, but the writer must
// not count it as sent): the whole frame is written again.
TEST(TapWriteFallback, ShortWriteWrittenAgainWhole) {
  Pipe p;
  FakeKernel k;
  k.policy = [](const wv::Hdr&, std::size_t attempt) { return attempt == 1 ? -1 : 0; };
  auto w = make_writer(k, p.fd[1]);
  auto f = tcp_super(false, 500, 1448);
  f.vnet.gso_type = wv::kGsoNone;
  f.vnet.gso_size = 0;
  auto r = w.write(f);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_EQ(r.frames, 1u);
  ASSERT_EQ(k.out.size(), 1u);
  EXPECT_EQ(k.out[0].frame, flat(f));
  EXPECT_EQ(w.stats().short_writes, 1u);
}

// A GSO frame the kernel keeps taking only in part: resent as segments, no loss.
TEST(TapWriteFallback, GsoShortForeverResentAsSegments) {
  Pipe p;
  FakeKernel k;
  k.policy = [](const wv::Hdr& h, std::size_t) { return h.gso_type != wv::kGsoNone ? -1 : 0; };
  auto w = make_writer(k, p.fd[1]);
  auto super = tcp_super(false, 2 * 1448 + 1, 1448);
  auto r = w.write(super);
  EXPECT_EQ(r.failed, 0u);
  check_tcp_segments(super, k.out, 1448, true);
  EXPECT_GE(w.stats().short_writes, 1u);
}

}  // namespace

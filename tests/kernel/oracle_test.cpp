// Self-checks of the kernel oracle (spec §16 K-3, K-3b, K-4, K-6, K-7; §4.9b; §13.1).
//
// Expected values come from the spec (worked example §4.9b, selftest table §13.1, rules X-21,
// ) and RFC 1071 / RFC 793 / RFC 768 / RFC 7348 — never from ofld's own engines.
// Frames and checksums are built here with deliberately plain code.
//
// Every test creates and deletes its own network namespace; without root or a needed kernel
// facility the oracle returns "skipped" and the test is skipped with that reason.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "ofld/lab/kernel_oracle.hpp"
#include "../common/frame_builder.hpp"

namespace {

using ofld::tools::Frame;
using ofld::tools::KernelGro;
using ofld::tools::KernelGso;
using ofld::tools::KernelVxlan;
using ofld::tools::Mac;
using ofld::tools::VnetHdr;
using Bytes = std::vector<std::uint8_t>;

#define ORACLE_OR_SKIP(var, expr)                                     \
  auto var = (expr);                                                  \
  if (var.is_skipped()) GTEST_SKIP() << "skipped: " << var.message(); \
  ASSERT_TRUE(var.ok()) << var.describe()

// ---- plain RFC 1071 arithmetic ------------------------------------------------------------
std::uint32_t sum16(const std::uint8_t* p, std::size_t n, std::uint32_t acc = 0) {
  for (std::size_t i = 0; i + 1 < n; i += 2) acc += std::uint32_t(p[i] << 8 | p[i + 1]);
  if (n & 1) acc += std::uint32_t(p[n - 1] << 8);
  return acc;
}
std::uint16_t fold(std::uint32_t acc) {
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return std::uint16_t(acc);
}
std::uint16_t be16(const Bytes& b, std::size_t o) { return std::uint16_t(b[o] << 8 | b[o + 1]); }
std::uint32_t be32(const Bytes& b, std::size_t o) {
  return std::uint32_t(b[o]) << 24 | std::uint32_t(b[o + 1]) << 16 | std::uint32_t(b[o + 2]) << 8 | b[o + 3];
}
/// IPv4 pseudo-header sum (RFC 793 §3.1 / RFC 768): src, dst, zero+proto, L4 length.
std::uint32_t pseudo4(const Bytes& f, std::size_t ip, std::uint8_t proto, std::size_t l4len) {
  std::uint32_t acc = sum16(&f[ip + 12], 8);
  return acc + proto + std::uint32_t(l4len);
}
/// True if the IPv4 header at `ip` sums to 0xffff (RFC 791 header checksum valid).
bool ipv4_csum_ok(const Bytes& f, std::size_t ip) {
  return fold(sum16(&f[ip], std::size_t(f[ip] & 0xf) * 4)) == 0xffff;
}
/// True if the L4 segment at `l4` (through `end`) has a valid checksum over the pseudo header.
bool l4_csum_ok(const Bytes& f, std::size_t ip, std::size_t l4, std::size_t end, std::uint8_t proto) {
  return fold(sum16(&f[l4], end - l4, pseudo4(f, ip, proto, end - l4))) == 0xffff;
}

// ---- frame builders (tests/common/frame_builder.hpp) ----------------------------------------
constexpr Mac kSrcMac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
constexpr Mac kDstMac{0x02, 0x00, 0x00, 0x00, 0x00, 0x02};

struct V4Spec {
  Mac dst = kDstMac, src = kSrcMac;
  std::uint8_t saddr[4] = {192, 168, 1, 200}, daddr[4] = {192, 168, 1, 100};
  std::uint16_t id = 0;
  bool df = true;
  std::uint8_t ttl = 64, tos = 0;
};

/// Ethernet + IPv4 (20, header checksum filled) of `s`, without the L4 layer yet.
ofld::fb::Frame v4_frame(const V4Spec& s) {
  ofld::wire::Ipv4Repr r;
  r.tos = s.tos;
  r.id = s.id;
  r.frag_off = s.df ? ofld::wire::ipv4::kDF : 0;
  r.ttl = s.ttl;
  r.saddr = ofld::fb::ip4(s.saddr[0], s.saddr[1], s.saddr[2], s.saddr[3]);
  r.daddr = ofld::fb::ip4(s.daddr[0], s.daddr[1], s.daddr[2], s.daddr[3]);
  ofld::fb::Frame f;
  f.eth(s.dst, s.src).ipv4(r);
  return f;
}

constexpr std::uint8_t kFin = ofld::wire::tcp_flag::kFin, kSyn = ofld::wire::tcp_flag::kSyn,
                       kPsh = ofld::wire::tcp_flag::kPsh, kAck = ofld::wire::tcp_flag::kAck,
                       kCwr = ofld::wire::tcp_flag::kCwr;

ofld::wire::TcpRepr tcp_repr(std::uint16_t sport, std::uint16_t dport, std::uint32_t seq,
                             std::uint32_t ack, std::uint8_t flags, std::uint16_t window) {
  ofld::wire::TcpRepr t;
  t.source = sport;
  t.dest = dport;
  t.seq = seq;
  t.ack_seq = ack;
  t.flags = flags;
  t.window = window;
  return t;
}

/// TCPv4 frame with a complete, valid TCP checksum; payload of 'a'.
Bytes tcp4_full(const V4Spec& s, std::uint32_t seq, std::uint8_t flags, std::size_t payload) {
  auto f = v4_frame(s);
  f.tcp(tcp_repr(1500, 8000, seq, 100, flags, 65535)).payload(Bytes(payload, 'a'));
  return f.build();
}

/// TCPv4 super-packet with the pseudo-header seed in the checksum field (CHECKSUM_PARTIAL:
/// the field holds the folded, uncomplemented pseudo-header sum for the whole TCP length).
Bytes tcp4_partial(const V4Spec& s, std::uint32_t seq, std::uint8_t flags, std::size_t payload) {
  auto f = v4_frame(s);
  f.tcp(tcp_repr(40000, 5201, seq, 0x01020304, flags, 502), ofld::fb::L4Csum::Partial)
      .payload(Bytes(payload, 'a'));
  return f.build();
}

Bytes udp4_partial(const V4Spec& s, std::size_t payload) {
  auto f = v4_frame(s);
  f.udp({40001, 9000, 0, 0}, ofld::fb::L4Csum::Partial).payload(Bytes(payload, 'a'));
  return f.build();
}

VnetHdr gso_hdr(std::uint8_t type, std::uint16_t gso_size, std::uint16_t csum_offset, std::uint16_t hdr_len) {
  VnetHdr h;
  h.flags = VnetHdr::kNeedsCsum;
  h.gso_type = type;
  h.gso_size = gso_size;
  h.hdr_len = hdr_len;
  h.csum_start = 34;
  h.csum_offset = csum_offset;
  return h;
}

// ---- io building blocks ---------------------------------------------------------------------

TEST(KernelIo, V18_VnetHdrLittleEndianLayout) {
  // V-18: flags | gso_type | hdr_len | gso_size | csum_start | csum_offset, LE on our TAPs.
  VnetHdr h;
  h.flags = VnetHdr::kNeedsCsum;
  h.gso_type = VnetHdr::kGsoTcpv4;
  h.hdr_len = 54;
  h.gso_size = 1448;
  h.csum_start = 34;
  h.csum_offset = 16;
  std::uint8_t b[10];
  h.store(b, true);
  const std::uint8_t want[10] = {0x01, 0x01, 0x36, 0x00, 0xa8, 0x05, 0x22, 0x00, 0x10, 0x00};
  EXPECT_TRUE(std::equal(b, b + 10, want));
  EXPECT_EQ(VnetHdr::load(b, true), h);
  h.store(b, false);
  EXPECT_EQ(b[4], 0x05);
  EXPECT_EQ(b[5], 0xa8);
  EXPECT_EQ(VnetHdr::load(b, false), h);
}

TEST(KernelIo, RunCommandCapturesAndTimesOut) {
  auto r = ofld::io::run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  auto c = ofld::io::check_command({"sh", "-c", "echo boom >&2; exit 1"});
  ASSERT_TRUE(c.is_error());
  EXPECT_NE(c.message().find("boom"), std::string::npos) << c.message();
  const auto t0 = std::chrono::steady_clock::now();
  auto t = ofld::io::run_command({"sleep", "5"}, std::chrono::milliseconds(200));
  EXPECT_TRUE(t.is_error());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST(KernelIo, NetnsLifecycleAndRunInside) {
  std::string name;
  {
    ORACLE_OR_SKIP(ns, ofld::io::Netns::create("ofld-iotest"));
    name = ns->name();
    EXPECT_EQ(::access(("/run/netns/" + name).c_str(), F_OK), 0);
    struct stat want {};
    ASSERT_EQ(::fstat(ns->fd(), &want), 0);
    auto ino = ns->run([] {
      struct stat st {};
      ::stat("/proc/thread-self/ns/net", &st);
      return std::uint64_t(st.st_ino);
    });
    ASSERT_TRUE(ino.ok()) << ino.describe();
    EXPECT_EQ(*ino, std::uint64_t(want.st_ino));
    struct stat mine {};
    ASSERT_EQ(::stat("/proc/thread-self/ns/net", &mine), 0);
    EXPECT_NE(mine.st_ino, want.st_ino) << "the calling thread must stay in its namespace";
    auto bad = ns->exec({"sh", "-c", "echo nope >&2; exit 2"});
    ASSERT_TRUE(bad.is_error());
    EXPECT_NE(bad.message().find("nope"), std::string::npos);
  }
  EXPECT_NE(::access(("/run/netns/" + name).c_str(), F_OK), 0) << "namespace not deleted";
}

TEST(KernelIo, F22_TunSetOffloadRules) {
  ORACLE_OR_SKIP(ns, ofld::io::Netns::create("ofld-iotest"));
  using namespace ofld::io::tun_offload;
  auto r = ns->run([]() -> ofld::io::Result<std::vector<bool>> {
    ofld::io::TapOptions o;
    o.name = "otapx";
    o.vnet_hdr = true;
    auto t = ofld::io::Tap::open(o);
    if (!t) return ofld::io::Result<std::vector<bool>>::from(t);
    return std::vector<bool>{
        t->set_offload(kCsum).ok(),                  // CSUM alone: accepted
        t->set_offload(kCsum | kTso4 | kTso6).ok(),  // TSO with CSUM: accepted
        t->set_offload(kTso4).ok(),                  // TSO without CSUM: EINVAL
        t->set_offload(kCsum | kUso4).ok(),          // USO4 without USO6: leftover → EINVAL
        t->set_offload(kCsum | kUfo).ok(),           // UFO accepted (ignored)
    };
  });
  if (r.is_skipped()) GTEST_SKIP() << "skipped: " << r.message();
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(*r, (std::vector<bool>{true, true, false, false, true}));
}

TEST(KernelIo, S9_TapWriteOfShortFrameRefusedAndPacketSocketSeesWrites) {
  ORACLE_OR_SKIP(ns, ofld::io::Netns::create("ofld-iotest"));
  struct Pair {
    ofld::io::Tap tap;
    ofld::io::PacketSocket sock;
  };
  auto p = ns->run([]() -> ofld::io::Result<Pair> {
    ofld::io::TapOptions o;
    o.name = "otapy";
    o.vnet_hdr = true;
    auto t = ofld::io::Tap::open(o);
    if (!t) return ofld::io::Result<Pair>::from(t);
    if (auto s = t->set_up(); !s) return ofld::io::Result<Pair>::from(s);
    ofld::io::PacketSocketOptions po;
    po.ifindex = t->ifindex();
    auto k = ofld::io::PacketSocket::open(po);
    if (!k) return ofld::io::Result<Pair>::from(k);
    return Pair{std::move(*t), std::move(*k)};
  });
  if (p.is_skipped()) GTEST_SKIP() << "skipped: " << p.message();
  ASSERT_TRUE(p.ok()) << p.describe();
  const Bytes tiny(10, 0x42);
  EXPECT_TRUE(p->tap.write(tiny).is_error()) << "TAP accepted a frame shorter than 14 bytes (S-9)";
  V4Spec s;
  Bytes f = tcp4_full(s, 1, kAck, 10);
  ASSERT_TRUE(p->tap.write(f).ok());
  auto got = p->sock.recv(1000);
  ASSERT_TRUE(got.ok()) << got.describe();
  ASSERT_TRUE(got->has_value()) << "frame written into the TAP not seen by AF_PACKET";
  EXPECT_EQ((*got)->frame.data, f);
}

// ---- KernelGso -----------------------------------------------------------------------------

/// §4.9b worked example checked on the kernel's output frames starting at `eth` offset 0.
void expect_49b(const std::vector<Frame>& out, std::uint32_t S) {
  ASSERT_EQ(out.size(), 3u);
  const std::size_t payload[3] = {1448, 1448, 104};
  const std::uint16_t tot_len[3] = {1488, 1488, 144};
  for (int i = 0; i < 3; ++i) {
    const Bytes& f = out[i].data;
    SCOPED_TRACE("segment " + std::to_string(i));
    ASSERT_EQ(f.size(), 14 + 20 + 20 + payload[i]);
    EXPECT_EQ(be16(f, 16), tot_len[i]);
    EXPECT_EQ(be16(f, 18), 1000 + i);           // ID = original + i
    EXPECT_EQ(be16(f, 20), 0x4000);             // DF kept
    EXPECT_EQ(be32(f, 34 + 4), S + 1448u * i);  // X-21 seq
    const std::uint8_t fl = f[34 + 13];
    EXPECT_EQ(bool(fl & kCwr), i == 0);  // CWR only on the first
    EXPECT_EQ(bool(fl & kPsh), i == 2);  // PSH only on the last
    EXPECT_TRUE(fl & kAck);
    EXPECT_TRUE(ipv4_csum_ok(f, 14));
    EXPECT_TRUE(l4_csum_ok(f, 14, 34, f.size(), 6));
    for (std::size_t k = 54; k < f.size(); ++k)
      if (f[k] != 'a') {
        ADD_FAILURE() << "payload byte " << k << " changed";
        break;
      }
  }
}

TEST(KernelOracle, K3b_Gso_TcpV4WorkedExample_X21_X25) {
  ORACLE_OR_SKIP(gso, KernelGso::create());
  V4Spec s;
  s.id = 1000;
  const std::uint32_t S = 0x10000000;
  Bytes sp = tcp4_partial(s, S, kAck | kPsh | kCwr, 3000);
  ORACLE_OR_SKIP(out, gso->segment(gso_hdr(VnetHdr::kGsoTcpv4, 1448, 16, 54), sp));
  expect_49b(*out, S);
}

TEST(KernelOracle, K3b_Gso_VethSinkGivesSameBytes) {
  KernelGso::Options tap_opts, veth_opts;
  tap_opts.sink = KernelGso::Sink::Tap;
  veth_opts.sink = KernelGso::Sink::Veth;
  ORACLE_OR_SKIP(tap_sink, KernelGso::create(tap_opts));
  ORACLE_OR_SKIP(veth_sink, KernelGso::create(veth_opts));
  V4Spec s;
  s.id = 1000;
  Bytes sp = tcp4_partial(s, 7, kAck | kPsh | kCwr, 3000);
  auto h = gso_hdr(VnetHdr::kGsoTcpv4, 1448, 16, 54);
  ORACLE_OR_SKIP(a, tap_sink->segment(h, sp));
  ORACLE_OR_SKIP(b, veth_sink->segment(h, sp));
  expect_49b(*a, 7);
  ASSERT_EQ(a->size(), b->size());
  for (std::size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i].data, (*b)[i].data) << "segment " << i;
}

/// UDP length 8+gso_size per segment (last: actual), valid checksums, IDs +i.
void expect_uso(const std::vector<Frame>& out, const std::vector<std::size_t>& payloads) {
  ASSERT_EQ(out.size(), payloads.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Bytes& f = out[i].data;
    SCOPED_TRACE("segment " + std::to_string(i));
    ASSERT_EQ(f.size(), 14 + 20 + 8 + payloads[i]);
    EXPECT_EQ(be16(f, 16), 20 + 8 + payloads[i]);
    EXPECT_EQ(be16(f, 34 + 4), 8 + payloads[i]);
    EXPECT_EQ(be16(f, 18), 2000 + i);
    EXPECT_TRUE(ipv4_csum_ok(f, 14));
    EXPECT_NE(be16(f, 34 + 6), 0);  // computed checksum, never "no checksum"
    EXPECT_TRUE(l4_csum_ok(f, 14, 34, f.size(), 17));
  }
}

TEST(KernelOracle, K3b_Gso_UsoV4ExactMultiple_X29) {
  ORACLE_OR_SKIP(gso, KernelGso::create());
  if (!(gso->tap_offloads() & 0x20)) GTEST_SKIP() << "skipped: TAP refused USO offload bits";
  V4Spec s;
  s.id = 2000;
  Bytes sp = udp4_partial(s, 1500);
  ORACLE_OR_SKIP(out, gso->segment(gso_hdr(VnetHdr::kGsoUdpL4, 500, 6, 42), sp));
  expect_uso(*out, {500, 500, 500});
}

TEST(KernelOracle, K3b_Gso_UsoV4OneByteTail_X29) {
  ORACLE_OR_SKIP(gso, KernelGso::create());
  V4Spec s;
  s.id = 2000;
  Bytes sp = udp4_partial(s, 1501);
  ORACLE_OR_SKIP(out, gso->segment(gso_hdr(VnetHdr::kGsoUdpL4, 500, 6, 42), sp));
  expect_uso(*out, {500, 500, 500, 1});
}

TEST(KernelOracle, K6_Gso_UsoWithoutNeedsCsumRefused) {
  ORACLE_OR_SKIP(gso, KernelGso::create());
  V4Spec s;
  Bytes sp = udp4_partial(s, 1000);
  VnetHdr h = gso_hdr(VnetHdr::kGsoUdpL4, 500, 6, 42);
  h.flags = 0;
  auto out = gso->segment(h, sp);
  EXPECT_TRUE(out.is_error()) << "kernel accepted USO without NEEDS_CSUM (K-6, S-4)";
}

// ---- KernelGro (selftest gro.c template, §13.1) --------------------------------------------

Bytes gro_pkt(std::size_t payload, std::uint32_t seq_off, std::uint8_t flags = kAck) {
  V4Spec s;
  s.dst = KernelGro::kVeth1Mac;
  s.src = KernelGro::kVeth0Mac;
  s.ttl = 8;
  return tcp4_full(s, 100 + seq_off, flags, payload);
}

std::vector<std::size_t> tcp_payloads(const std::vector<Frame>& out) {
  std::vector<std::size_t> v;
  for (const auto& f : out) v.push_back(f.data.size() - 14 - 20 - 20);
  return v;
}

TEST(KernelOracle, K3_Gro_DataSame_13_1) {
  ORACLE_OR_SKIP(gro, KernelGro::create());
  ORACLE_OR_SKIP(out, gro->receive({gro_pkt(100, 0), gro_pkt(100, 100), gro_pkt(0, 200, kAck | kFin)}));
  EXPECT_EQ(tcp_payloads(*out), (std::vector<std::size_t>{200, 0}));
  ASSERT_FALSE(out->empty());
  const Frame& agg = out->front();
  // K-4 / S-7 / S-8: the aggregate is a TCPV4 GSO packet of gso_size 100, CHECKSUM_PARTIAL.
  EXPECT_EQ(agg.vnet.gso_type, VnetHdr::kGsoTcpv4);
  EXPECT_EQ(agg.vnet.gso_size, 100);
  EXPECT_EQ(agg.vnet.flags & VnetHdr::kNeedsCsum, VnetHdr::kNeedsCsum);
  EXPECT_EQ(agg.vnet.csum_start, 34);
  EXPECT_EQ(agg.vnet.csum_offset, 16);
  EXPECT_EQ(be16(agg.data, 16), 20 + 20 + 200);
  EXPECT_TRUE(ipv4_csum_ok(agg.data, 14));
}

TEST(KernelOracle, K3_Gro_DataLargeThenSmall_13_1) {
  ORACLE_OR_SKIP(gro, KernelGro::create());
  ORACLE_OR_SKIP(out, gro->receive({gro_pkt(100, 0), gro_pkt(50, 100), gro_pkt(0, 200, kAck | kFin)}));
  EXPECT_EQ(tcp_payloads(*out), (std::vector<std::size_t>{150, 0}));
}

TEST(KernelOracle, K3_Gro_DataSmallThenLarge_13_1) {
  ORACLE_OR_SKIP(gro, KernelGro::create());
  ORACLE_OR_SKIP(out, gro->receive({gro_pkt(50, 0), gro_pkt(100, 50), gro_pkt(0, 200, kAck | kFin)}));
  EXPECT_EQ(tcp_payloads(*out), (std::vector<std::size_t>{50, 100, 0}));
}

TEST(KernelOracle, K3_Gro_FlagsPsh_13_1) {
  ORACLE_OR_SKIP(gro, KernelGro::create());
  std::vector<Bytes> burst;
  for (std::uint32_t i = 0; i < 5; ++i) burst.push_back(gro_pkt(100, 100 * i, i == 2 ? kAck | kPsh : kAck));
  burst.push_back(gro_pkt(0, 500, kAck | kFin));
  ORACLE_OR_SKIP(out, gro->receive(burst));
  EXPECT_EQ(tcp_payloads(*out), (std::vector<std::size_t>{300, 200, 0}));
}

TEST(KernelOracle, K3_Gro_FlagsSyn_13_1) {
  ORACLE_OR_SKIP(gro, KernelGro::create());
  std::vector<Bytes> burst;
  // gro.c send_flags geometry: packet i at seq offset 100·i; #2 is the flag packet (SYN,
  // no payload), so the data after it starts a new flow.
  for (std::uint32_t i = 0; i < 5; ++i)
    burst.push_back(i == 2 ? gro_pkt(0, 200, kAck | kSyn) : gro_pkt(100, 100 * i));
  burst.push_back(gro_pkt(0, 500, kAck | kFin));
  ORACLE_OR_SKIP(out, gro->receive(burst));
  EXPECT_EQ(tcp_payloads(*out), (std::vector<std::size_t>{200, 0, 200, 0}));
}

TEST(KernelOracle, K3_Gro_ThreadedNapiAgrees) {
  KernelGro::Options opts;
  opts.mode = KernelGro::Mode::ThreadedNapi;
  ORACLE_OR_SKIP(gro, KernelGro::create(opts));
  std::vector<Bytes> burst;
  for (std::uint32_t i = 0; i < 5; ++i) burst.push_back(gro_pkt(100, 100 * i, i == 2 ? kAck | kPsh : kAck));
  burst.push_back(gro_pkt(0, 500, kAck | kFin));
  ORACLE_OR_SKIP(out, gro->receive(burst));
  EXPECT_EQ(tcp_payloads(*out), (std::vector<std::size_t>{300, 200, 0}));
}

// ---- KernelVxlan ---------------------------------------------------------------------------

TEST(KernelOracle, K3b_Vxlan_TcpV4SuperPacket_X31) {
  ORACLE_OR_SKIP(vx, KernelVxlan::create());
  V4Spec s;
  s.id = 1000;
  const std::uint32_t S = 12345;
  Bytes sp = tcp4_partial(s, S, kAck | kPsh | kCwr, 3000);
  ORACLE_OR_SKIP(out, vx->transmit(gso_hdr(VnetHdr::kGsoTcpv4, 1448, 16, 54), sp));
  ASSERT_EQ(out->size(), 3u);
  const std::size_t payload[3] = {1448, 1448, 104};
  for (std::size_t i = 0; i < 3; ++i) {
    const Bytes& f = (*out)[i].data;
    SCOPED_TRACE("outer frame " + std::to_string(i));
    const std::size_t outer = 14 + 20 + 8 + 8;  // RFC 7348 §5: Ethernet, IPv4, UDP, VXLAN
    ASSERT_EQ(f.size(), outer + 14 + 20 + 20 + payload[i]);
    EXPECT_TRUE(std::equal(KernelVxlan::kPeerMac.begin(), KernelVxlan::kPeerMac.end(), f.begin()));
    EXPECT_TRUE(std::equal(KernelVxlan::kUnderlayMac.begin(), KernelVxlan::kUnderlayMac.end(), f.begin() + 6));
    EXPECT_EQ(f[23], 17);
    EXPECT_EQ(be16(f, 20) & 0x4000, 0);  // K-3b: outer DF clear
    EXPECT_TRUE(ipv4_csum_ok(f, 14));
    EXPECT_EQ(be16(f, 36), 4789);
    EXPECT_EQ(be16(f, 38), f.size() - 34);
    EXPECT_TRUE(l4_csum_ok(f, 14, 34, f.size(), 17));  // udpcsum
    EXPECT_EQ(be32(f, 42), 0x08000000u);               // I flag (RFC 7348 §5)
    EXPECT_EQ(be32(f, 46), 42u << 8);                  // VNI 42, reserved 0
    // Inner: the super-packet's Ethernet header, segmented per §4.9b.
    const std::size_t in = outer;
    EXPECT_TRUE(std::equal(sp.begin(), sp.begin() + 14, f.begin() + in));
    Bytes inner(f.begin() + in, f.end());
    EXPECT_EQ(be16(inner, 18), 1000 + i);
    EXPECT_EQ(be32(inner, 34 + 4), S + 1448u * i);
    EXPECT_EQ(bool(inner[34 + 13] & kCwr), i == 0);
    EXPECT_EQ(bool(inner[34 + 13] & kPsh), i == 2);
    EXPECT_TRUE(ipv4_csum_ok(inner, 14));
    EXPECT_TRUE(l4_csum_ok(inner, 14, 34, inner.size(), 6));
  }
}

TEST(KernelOracle, K1_V1_V3_Vxlan_RcoTransmitEncoding_4_9c) {
  KernelVxlan::Options o;
  o.remcsumtx = true;
  o.udpcsum = true;
  ORACLE_OR_SKIP(vx, KernelVxlan::create(o));
  V4Spec s;
  s.id = 1000;
  Bytes sp = tcp4_partial(s, 1, kAck, 3000);
  ORACLE_OR_SKIP(out, vx->transmit(gso_hdr(VnetHdr::kGsoTcpv4, 1448, 16, 54), sp));
  ASSERT_EQ(out->size(), 3u);
  const std::size_t payload[3] = {1448, 1448, 104};
  for (std::size_t i = 0; i < 3; ++i) {
    const Bytes& f = (*out)[i].data;
    SCOPED_TRACE("outer frame " + std::to_string(i));
    ASSERT_EQ(f.size(), 50 + 14 + 20 + 20 + payload[i]);
    // §4.9c / V-1..V-3: flags I|RCO, low byte of word1 = 34>>1 with the UDP bit clear.
    EXPECT_EQ(be32(f, 42), 0x08200000u);
    EXPECT_EQ(be32(f, 46), (42u << 8) | 0x11u);
    // X-31 / W-28 / K-1: the inner TCP checksum stays the pseudo-header seed for the
    // segment's own length; the outer UDP checksum (udpcsum) covers the real bytes.
    Bytes inner(f.begin() + 50, f.end());
    EXPECT_EQ(be16(inner, 34 + 16), fold(pseudo4(inner, 14, 6, 20 + payload[i])));
    EXPECT_TRUE(l4_csum_ok(f, 14, 34, f.size(), 17));
    EXPECT_TRUE(ipv4_csum_ok(inner, 14));
  }
}

TEST(KernelOracle, K5_Gro_BadChecksumDeliveredAloneFirst) {
  ORACLE_OR_SKIP(gro, KernelGro::create());
  Bytes bad = gro_pkt(100, 100);
  bad[34 + 16] ^= 0xff;  // corrupt the TCP checksum (gro.c "tcp: changed checksum")
  ORACLE_OR_SKIP(out, gro->receive({gro_pkt(100, 0), bad, gro_pkt(0, 200, kAck | kFin)}));
  ASSERT_EQ(tcp_payloads(*out), (std::vector<std::size_t>{100, 100, 0}));  // §13.1 tcp_csum
  EXPECT_EQ(be32((*out)[0].data, 34 + 4), 200u) << "K-5: the bad segment comes before the held one";
  EXPECT_EQ(be32((*out)[1].data, 34 + 4), 100u);
}

// ---- IPv6 (fdaa::2 → fdaa::1 as in the gro.c template) ---------------------------------------

/// Ethernet + IPv6 (40, next header TCP, hop limit 8) + TCP (20) + payload 'a'.
/// full_csum: valid TCP checksum; else the pseudo-header seed (CHECKSUM_PARTIAL).
Bytes tcp6(Mac dst, Mac src, std::uint32_t seq, std::uint8_t flags, std::size_t payload, bool full_csum) {
  ofld::wire::Ipv6Repr r;
  r.hop_limit = 8;
  r.saddr = ofld::fb::ip6(0xfd, 0xaa, 2);
  r.daddr = ofld::fb::ip6(0xfd, 0xaa, 1);
  ofld::fb::Frame f;
  f.eth(dst, src).ipv6(r);
  f.tcp(tcp_repr(1500, 8000, seq, 100, flags, 65535),
        full_csum ? ofld::fb::L4Csum::Full : ofld::fb::L4Csum::Partial);
  f.payload(Bytes(payload, 'a'));
  return f.build();
}

bool tcp6_csum_ok(const Bytes& f) {
  std::uint32_t ph = sum16(&f[22], 32) + std::uint32_t(f.size() - 54) + 6;
  return fold(sum16(&f[54], f.size() - 54, ph)) == 0xffff;
}

TEST(KernelOracle, K3b_Gso_TcpV6_X21_X27) {
  ORACLE_OR_SKIP(gso, KernelGso::create());
  Bytes sp = tcp6(kDstMac, kSrcMac, 5000, kAck | kPsh | kCwr, 3000, false);
  VnetHdr h = gso_hdr(VnetHdr::kGsoTcpv6, 1448, 16, 74);
  h.csum_start = 54;
  ORACLE_OR_SKIP(out, gso->segment(h, sp));
  ASSERT_EQ(out->size(), 3u);
  const std::size_t payload[3] = {1448, 1448, 104};
  for (std::size_t i = 0; i < 3; ++i) {
    const Bytes& f = (*out)[i].data;
    SCOPED_TRACE("segment " + std::to_string(i));
    ASSERT_EQ(f.size(), 74 + payload[i]);
    EXPECT_EQ(be16(f, 18), 20 + payload[i]);  // X-27 payload_len = segment − 40
    EXPECT_EQ(be32(f, 54 + 4), 5000 + 1448u * i);
    EXPECT_EQ(bool(f[54 + 13] & kCwr), i == 0);
    EXPECT_EQ(bool(f[54 + 13] & kPsh), i == 2);
    EXPECT_TRUE(tcp6_csum_ok(f));
  }
}

TEST(KernelOracle, K3_Gro_Ipv6DataSame_13_1) {
  ORACLE_OR_SKIP(gro, KernelGro::create());
  const Mac d = KernelGro::kVeth1Mac, s = KernelGro::kVeth0Mac;
  ORACLE_OR_SKIP(out, gro->receive({tcp6(d, s, 100, kAck, 100, true), tcp6(d, s, 200, kAck, 100, true),
                                    tcp6(d, s, 300, kAck | kFin, 0, true)}));
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].data.size(), 74u + 200);
  EXPECT_EQ((*out)[1].data.size(), 74u);
  EXPECT_EQ((*out)[0].vnet.gso_type, VnetHdr::kGsoTcpv6);
  EXPECT_EQ((*out)[0].vnet.gso_size, 100);
  EXPECT_EQ(be16((*out)[0].data, 18), 220);
}

TEST(KernelOracle, K3_Gro_LargeMax_13_1) {
  // §13.1 large_max (IPv4): MSS 4036; 16 × MSS, a 919-byte remainder (aggregate IP datagram
  // exactly 65535 bytes), then a non-contiguous remainder → [65495, 919] before the FIN.
  ORACLE_OR_SKIP(gro, KernelGro::create());
  const std::uint32_t mss = 4036, rem = 919;
  std::vector<Bytes> burst;
  for (std::uint32_t i = 0; i < 16; ++i) burst.push_back(gro_pkt(mss, i * mss));
  burst.push_back(gro_pkt(rem, 16 * mss));
  burst.push_back(gro_pkt(rem, 17 * mss));
  burst.push_back(gro_pkt(0, 18 * mss, kAck | kFin));
  ORACLE_OR_SKIP(out, gro->receive(burst));
  EXPECT_EQ(tcp_payloads(*out), (std::vector<std::size_t>{65495, 919, 0}));
  ASSERT_FALSE(out->empty());
  EXPECT_EQ(be16(out->front().data, 16), 65535);
  EXPECT_EQ(out->front().vnet.gso_size, mss);
}

}  // namespace

// Integrity mode in the endpoint (no I/O): toward a peer whose session advertised
// the capability, the inner checksum is left as the pseudo-header seed (C-12, as RCO does,
// W-26) and GSO copies without summing (X-8: HW_CSUM|SG, no CopySum segments); the receiver
// takes the seed as CHECKSUM_PARTIAL and writes NEEDS_CSUM (S-8) without summing. Toward a
// peer without it (I-7): full inner checksums, verified by the RFC 793 sum.
#include <gtest/gtest.h>

#include <cstring>

#include "ofld/core/skb_segment.hpp"
#include "ofld/daemon/config.hpp"
#include "../common/tunnel_config_of.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/ip_tunnel.hpp"
#include "ofld/tunnel/peer.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using namespace tunnel_test;
namespace wv = wire::virtio_net;

const tunnel::IpAddr kA = *tunnel::IpAddr::parse("10.0.0.1");
const tunnel::IpAddr kB = *tunnel::IpAddr::parse("10.0.0.2");

tunnel::VxlanConfig cfg(const tunnel::IpAddr& local, const tunnel::IpAddr& remote) {
  tunnel::VxlanConfig c;
  c.vni = 42;
  c.local = local;
  c.remotes = {remote};
  return c;
}

wv::Hdr tso_hdr(std::uint16_t gso_size) {
  wv::Hdr h;
  h.flags = wv::kFlagNeedsCsum;
  h.gso_type = wv::kGsoTcpv4;
  h.gso_size = gso_size;
  h.csum_start = 34;
  h.csum_offset = 16;
  return h;
}

struct Side {
  std::shared_ptr<tunnel::PeerTable> t;
  std::unique_ptr<tunnel::Endpoint> ep;
  Side(const tunnel::IpAddr& self, const tunnel::IpAddr& other, bool integrity, std::uint32_t epoch) {
    tunnel::PeerOptions o;
    o.integrity = integrity;
    o.epoch = epoch;
    t = std::make_shared<tunnel::PeerTable>(o);
    t->add(other);
    tunnel::EndpointOptions eo;
    eo.peer_sessions = t;
    ep = std::make_unique<tunnel::Endpoint>(cfg(self, other), eo);
  }
};

/// A GUE / GRE / ip6gre endpoint configured by its words (as `ofld tunnel` reads them, so
/// `integrity` goes through the same checks as the daemon's), with its peer sessions.
struct IpSide {
  std::shared_ptr<tunnel::PeerTable> t;
  std::unique_ptr<tunnel::Endpoint> ep;
  IpSide(const std::vector<std::string>& words, std::uint32_t epoch) {
    daemon::DaemonConfig c;
    auto e = daemon::parse_tunnel_words(words, c);
    EXPECT_FALSE(e) << e.value_or("");
    tunnel::PeerOptions o;
    const auto* gre = c.tunnel.get<tunnel::GreConfig>();
    o.encap = gre ? wire::peer::Encap::Gre : wire::peer::Encap::Gue;
    if (gre) o.gre = wire::peer::GreOptions{gre->ocsum, gre->okey};
    o.integrity = c.integrity;
    o.epoch = epoch;
    t = std::make_shared<tunnel::PeerTable>(o);
    t->add(gre ? gre->remote : tunnel_test::gue_of(c).remote);
    tunnel::EndpointOptions eo;
    eo.peer_sessions = t;
    ep = std::make_unique<tunnel::Endpoint>(c.tunnel, eo);
  }
};

/// HELLOs of `a` through b's endpoint (as received datagrams), b's ACKs back.
template <class S>
void handshake(S& a, const tunnel::IpAddr& a_addr, S& b, const tunnel::IpAddr& b_addr,
               std::uint64_t now, std::uint16_t port = 4789) {
  std::vector<tunnel::TxTrain> msgs;
  a.ep->control_out(now, true, msgs);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].remote, b_addr);
  EXPECT_EQ(msgs[0].src_port, port);
  for (auto& m : msgs) b.ep->receive(m.buf, a_addr, tunnel::OuterCsum::Present, now);
  msgs.clear();
  b.ep->control_out(now, false, msgs);
  ASSERT_EQ(msgs.size(), 1u);
  for (auto& m : msgs) a.ep->receive(m.buf, b_addr, tunnel::OuterCsum::Present, now + 1);
  // control messages are not data
  EXPECT_EQ(a.ep->counters().rx_datagrams, 0u);
  EXPECT_EQ(b.ep->counters().rx_datagrams, 0u);
  EXPECT_EQ(a.ep->counters().drops_total(), 0u);
  EXPECT_EQ(b.ep->counters().drops_total(), 0u);
}

template <class S>
std::vector<tunnel::TapFrame> deliver(const tunnel::TxTrain& t, S& to, const tunnel::IpAddr& from) {
  to.ep->receive_train(t.buf, t.seg_size, from, tunnel::OuterCsum::Present, 10);
  std::vector<tunnel::TapFrame> frames;
  to.ep->rx_flush(11, frames);
  return frames;
}

}  // namespace

// I-5: both sides have integrity, so neither computes an inner checksum.
TEST(TunnelIntegrity, BothSidesNoInnerChecksumComputed) {
  Side a(kA, kB, true, 0x1111), b(kB, kA, true, 0x2222);
  handshake(a, kA, b, kB, 1);
  auto f = tcp_frame(3000, false, true);  // field holds the seed, as a TAP read gives it
  std::vector<tunnel::TxTrain> out;
  a.ep->transmit(tso_hdr(1000), f, 5, out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].count, 3u);
  const std::size_t dgram = 8 + 14 + 20 + 20 + 1000;
  for (int i = 0; i < 3; ++i) {
    const std::uint8_t* seg = out[0].buf.data() + i * dgram + 8;
    EXPECT_EQ(out[0].buf[i * dgram], 0x08);  // a plain VXLAN data header: no RCO
    EXPECT_EQ(out[0].buf[i * dgram + 1], 0x00);
    EXPECT_EQ(get16(seg + 14 + 20 + 16), tcp_seed(seg, 1020)) << i;  // C-12 seed, not summed
  }
  // Sender: nothing summed (no software checksum, no copy-and-sum GSO segment).
  EXPECT_EQ(a.ep->counters().tx_csum_sw, 0u);
  EXPECT_EQ(a.ep->gso_counters().seg_mode[std::size_t(core::SegMode::CopySum)], 0u);
  EXPECT_EQ(a.ep->counters().tx_csum_skipped, 3u);
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_elided, 3u);
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_full, 0u);

  auto frames = deliver(out[0], b, kA);
  ASSERT_EQ(frames.size(), 1u);
  // Receiver: NEEDS_CSUM at the inner TCP header (S-8), taken from the seed, not summed.
  EXPECT_EQ(frames[0].vnet.flags, wv::kFlagNeedsCsum);
  EXPECT_EQ(frames[0].vnet.csum_start, 34);
  EXPECT_EQ(frames[0].vnet.csum_offset, 16);
  EXPECT_EQ(b.ep->counters().rx_csum_partial_seed, 3u);
  EXPECT_EQ(b.ep->peer(kA)->ctr.rx_csum_seed, 3u);
  EXPECT_EQ(b.ep->counters().drops_total(), 0u);
  ASSERT_EQ(frames[0].size(), f.size());
  const auto got = frames[0].pkt->to_bytes();
  EXPECT_EQ(0, std::memcmp(got.data() + 54, f.data() + 54, 3000));  // payload intact
}

TEST(TunnelIntegrity, I7_PeerWithoutCapabilityGetsFullChecksums) {
  Side a(kA, kB, true, 0x1111), b(kB, kA, false, 0x2222);
  handshake(a, kA, b, kB, 1);
  auto f = tcp_frame(3000, false, true);
  std::vector<tunnel::TxTrain> out;
  a.ep->transmit(tso_hdr(1000), f, 5, out);
  ASSERT_EQ(out.size(), 1u);
  const std::size_t dgram = 8 + 14 + 20 + 20 + 1000;
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(tcp_csum_ok(out[0].buf.data() + i * dgram + 8, dgram - 8)) << i;  // RFC 793
  EXPECT_EQ(a.ep->counters().tx_csum_sw, 3u);
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_elided, 0u);
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_full, 3u);
}

TEST(TunnelIntegrity, NoSessionNoElision) {
  // Integrity on, but the peer never answered (a kernel VXLAN device): full checksums.
  Side a(kA, kB, true, 0x1111);
  std::vector<tunnel::TxTrain> msgs;
  a.ep->control_out(1, true, msgs);  // the HELLO goes unanswered
  auto f = tcp_frame(3000, false, true);
  std::vector<tunnel::TxTrain> out;
  a.ep->transmit(tso_hdr(1000), f, 5, out);
  ASSERT_EQ(out.size(), 1u);
  const std::size_t dgram = 8 + 14 + 20 + 20 + 1000;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(tcp_csum_ok(out[0].buf.data() + i * dgram + 8, dgram - 8));
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_full, 3u);
}

TEST(TunnelIntegrity, MalformedControlCountedNotDelivered) {
  Side a(kA, kB, true, 0x1111);
  std::vector<tunnel::TxTrain> msgs;
  a.ep->control_out(1, true, msgs);
  auto bad = msgs[0].buf;
  bad[8 + 4] = 7;  // version
  a.ep->receive(bad, kB, tunnel::OuterCsum::Present, 2);
  a.ep->receive(msgs[0].buf, *tunnel::IpAddr::parse("10.0.0.77"), tunnel::OuterCsum::Present, 2);
  std::vector<tunnel::TapFrame> frames;
  a.ep->rx_flush(3, frames);
  EXPECT_TRUE(frames.empty());
  EXPECT_EQ(a.t->malformed_total(), 1u);
  EXPECT_EQ(a.t->unknown_source(), 1u);
  // Without sessions (an endpoint of an older kind) the same datagram is a counted VXLAN drop.
  tunnel::Endpoint old(cfg(kB, kA), {});
  old.receive(msgs[0].buf, kA, tunnel::OuterCsum::Present, 2);
  EXPECT_EQ(old.counters().drops[std::size_t(tunnel::Drop::RxNoVniFlag)], 1u);
}

// The underlay attack on a remote that never answers (a kernel VXLAN device): one datagram
// from the remote's address to the tunnel's port, a version-1 HELLO with a made-up epoch,
// "receiver's epoch" 0 and capability bit 0 (integrity). It proves no round trip, so the
// session stays without capabilities and the next segments leave with full checksums (I-7),
// which a receiver that verifies them (the kernel) takes; the claim is counted.
TEST(TunnelIntegrity, I7_ForgedHelloFromSilentRemoteKeepsFullChecksums) {
  Side a(kA, kB, true, 0x1111);
  std::vector<tunnel::TxTrain> msgs;
  for (std::uint64_t t = 1; t <= 8'000'000'000ull; t += 100'000'000ull) a.ep->control_out(t, true, msgs);
  ASSERT_EQ(msgs.size(), 4u);  // 0, 1, 3, 7 s: unanswered
  ASSERT_EQ(a.t->session(kB, 8'000'000'001ull).state, tunnel::SessionState::Silent);
  const std::vector<std::uint8_t> v1 = {
      0, 0, 0, 0, 0, 0, 0, 0,                                  // VXLAN, I flag clear
      0x6f, 0x66, 0x6c, 0x64, 1, 1, 0, 28,                    // "ofld", version 1, HELLO, 28
      0x5e, 0x11, 0x7e, 0xd0, 0, 0, 0, 0, 0, 0, 0, 1,          // made-up epoch, peer_epoch 0, seq
      0, 0, 0, 1, 0xff, 0xff, 0x05, 0xaa};                     // integrity
  a.ep->receive(v1, kB, tunnel::OuterCsum::Present, 8'100'000'000ull);
  // The same as version 2 (random nonce, nothing echoed).
  wire::peer::Msg m;
  m.epoch = 0x5e117ed0;
  m.nonce = 0x0102030405060708ull;
  m.caps = wire::peer::kCapIntegrity;
  std::vector<std::uint8_t> v2(wire::peer::kMaxMsgLen);
  v2.resize(wire::peer::encode(m, wire::peer::Encap::Vxlan, v2));
  a.ep->receive(v2, kB, tunnel::OuterCsum::Present, 8'100'000'000ull);
  EXPECT_EQ(a.ep->counters().rx_datagrams, 0u);
  EXPECT_EQ(a.ep->counters().drops_total(), 0u);
  auto f = tcp_frame(3000, false, true);
  std::vector<tunnel::TxTrain> out;
  a.ep->transmit(tso_hdr(1000), f, 8'200'000'000ull, out);
  ASSERT_EQ(out.size(), 1u);
  const std::size_t dgram = 8 + 14 + 20 + 20 + 1000;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(tcp_csum_ok(out[0].buf.data() + i * dgram + 8, dgram - 8)) << i;
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_elided, 0u);
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_full, 3u);
  EXPECT_EQ(a.t->unproven(), 2u);
  const auto i = a.t->session(kB, 8'200'000'000ull);
  EXPECT_EQ(i.peer_epoch, 0u);
  EXPECT_FALSE(i.integrity);
  EXPECT_NE(i.state, tunnel::SessionState::Established);
}

// ---- GUE, GRE, ip6gre (integrity mode beyond VXLAN) -------------------------------------------

namespace {

/// The L3 modes under test: words after the local/remote pair, the tunnel header's length in
/// front of the inner IP packet (GUE V-10: 4; GRE V-13 with checksum and key: 4 + 4 + 4), the
/// port of the control messages (GUE: the tunnel's UDP port; GRE: none), the inner family.
struct L3Mode {
  const char* mode;
  bool v6_underlay;
  std::vector<std::string> extra;
  std::size_t hdr;
  std::uint16_t port;
  bool v6_inner;
};
const L3Mode kL3Modes[] = {
    {"gue", false, {"port", "5555"}, 4, 5555, false},
    {"gue", true, {"port", "5555"}, 4, 5555, true},
    {"gre", false, {"key", "42", "csum"}, 12, 0, false},
    {"ip6gre", true, {"key", "42", "csum"}, 12, 0, true},
};

tunnel::IpAddr l3_addr(const L3Mode& m, bool a) {
  return *tunnel::IpAddr::parse(m.v6_underlay ? (a ? "fd00::1" : "fd00::2") : (a ? "10.0.0.1" : "10.0.0.2"));
}
std::vector<std::string> l3_words(const L3Mode& m, bool a, bool integrity) {
  std::vector<std::string> w = {m.mode, "local", l3_addr(m, a).to_string(), "remote",
                                l3_addr(m, !a).to_string()};
  w.insert(w.end(), m.extra.begin(), m.extra.end());
  if (integrity) w.push_back("integrity");
  return w;
}

/// An IPv4/IPv6 TCP packet (tcp_frame without its Ethernet header); `seed`: the field holds
/// the pseudo-header seed (as a TAP/TUN read of a CHECKSUM_PARTIAL packet gives it).
std::vector<std::uint8_t> tcp_ip(std::size_t len, bool v6, bool seed) {
  auto f = tcp_frame(len, v6, seed);
  return std::vector<std::uint8_t>(f.begin() + 14, f.end());
}
std::size_t l3_len(const std::uint8_t* ip) { return (ip[0] >> 4) == 6 ? 40 : std::size_t(ip[0] & 0xf) * 4; }
std::uint32_t l4_len(const std::uint8_t* ip) {
  return (ip[0] >> 4) == 6 ? get16(ip + 4) : std::uint32_t(get16(ip + 2) - l3_len(ip));
}
/// C-12 pseudo-header seed of a raw IP/TCP packet (folded, not complemented).
std::uint16_t tcp_seed_ip(const std::uint8_t* ip) {
  const bool v6 = (ip[0] >> 4) == 6;
  const std::uint32_t l4 = l4_len(ip);
  return csum::csum_fold16(v6 ? csum::csum_ipv6_nofold(ip + 8, ip + 24, l4, 6, 0)
                              : csum::csum_tcpudp_nofold(ip + 12, ip + 16, l4, 6, 0));
}
/// RFC 793 §3.1 / RFC 8200 §8.1: the TCP checksum of a raw IP packet verifies.
bool tcp_ok_ip(const std::uint8_t* ip) {
  const bool v6 = (ip[0] >> 4) == 6;
  const std::uint32_t l4 = l4_len(ip);
  const auto s = csum::csum_partial(ip + l3_len(ip), l4, 0);
  return (v6 ? csum::csum_ipv6_magic(ip + 8, ip + 24, l4, 6, s)
             : csum::csum_tcpudp_magic(ip + 12, ip + 16, l4, 6, s)) == 0;
}

wv::Hdr tso_ip_hdr(bool v6, std::uint16_t gso_size) {
  wv::Hdr h;
  h.flags = wv::kFlagNeedsCsum;
  h.gso_type = v6 ? wv::kGsoTcpv6 : wv::kGsoTcpv4;
  h.gso_size = gso_size;
  h.csum_start = v6 ? 40 : 20;
  h.csum_offset = 16;
  return h;
}

std::string l3_name(const L3Mode& m) {
  return std::string(m.mode) + (m.v6_underlay ? " over IPv6" : " over IPv4") +
         (m.v6_inner ? ", IPv6 inner" : ", IPv4 inner");
}

}  // namespace

// Both GUE / GRE / ip6gre endpoints with integrity: toward the peer that advertised it, every
// segment leaves with its inner TCP field holding the C-12 seed (GSO copies without summing,
// X-8; GRE's raw socket would otherwise have summed each one, X-33), and the receiver, whose
// outer checksum (GUE: UDP; GRE: the verified GRE checksum, V-13) protects the bytes, takes the
// seed as CHECKSUM_PARTIAL (K-9) and writes NEEDS_CSUM (S-8) without summing.
TEST(TunnelIntegrity, GueGre_BothSidesNoInnerChecksumComputed) {
  for (const auto& m : kL3Modes) {
    SCOPED_TRACE(l3_name(m));
    const auto A = l3_addr(m, true), B = l3_addr(m, false);
    IpSide a(l3_words(m, true, true), 0x1111), b(l3_words(m, false, true), 0x2222);
    handshake(a, A, b, B, 1, m.port);
    auto p = tcp_ip(3000, m.v6_inner, true);
    const std::size_t l3 = m.v6_inner ? 40 : 20;
    std::vector<tunnel::TxTrain> out;
    a.ep->transmit(tso_ip_hdr(m.v6_inner, 1000), p, 5, out);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].count, 3u);
    const std::size_t dgram = m.hdr + l3 + 20 + 1000;
    ASSERT_EQ(out[0].buf.size(), 3 * dgram);
    for (std::size_t i = 0; i < 3; ++i) {
      const std::uint8_t* ip = out[0].buf.data() + i * dgram + m.hdr;
      EXPECT_EQ(get16(ip + l3 + 16), tcp_seed_ip(ip)) << i;  // C-12 seed, not summed
    }
    EXPECT_EQ(a.ep->counters().tx_csum_sw, 0u);
    EXPECT_EQ(a.ep->gso_counters().seg_mode[std::size_t(core::SegMode::CopySum)], 0u);
    EXPECT_EQ(a.ep->counters().tx_csum_skipped, 3u);
    EXPECT_EQ(a.ep->peer(B)->ctr.tx_csum_elided, 3u);
    EXPECT_EQ(a.ep->peer(B)->ctr.tx_csum_full, 0u);
    EXPECT_EQ(a.ep->counters().drops_total(), 0u);

    auto frames = deliver(out[0], b, A);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].vnet.flags, wv::kFlagNeedsCsum);
    EXPECT_EQ(frames[0].vnet.csum_start, l3);
    EXPECT_EQ(frames[0].vnet.csum_offset, 16);
    EXPECT_EQ(b.ep->counters().rx_csum_partial_seed, 3u);
    EXPECT_EQ(b.ep->peer(A)->ctr.rx_csum_seed, 3u);
    EXPECT_EQ(b.ep->counters().drops_total(), 0u);
    if (std::string(m.mode) != "gue") {
      EXPECT_EQ(b.ep->counters().rx_gre_csum_ok, 3u);  // V-13
    }
    ASSERT_EQ(frames[0].size(), p.size());
    EXPECT_EQ(0, std::memcmp(frames[0].pkt->to_bytes().data() + l3 + 20, p.data() + l3 + 20, 3000));
  }
}

// I-7 in the L3 modes: integrity on here, the peer answered without it: full inner checksums
// (RFC 793 verifies each), counted as full toward that peer; its receiver takes no seed.
TEST(TunnelIntegrity, I7_GueGre_PeerWithoutCapabilityGetsFullChecksums) {
  for (const auto& m : kL3Modes) {
    SCOPED_TRACE(l3_name(m));
    const auto A = l3_addr(m, true), B = l3_addr(m, false);
    IpSide a(l3_words(m, true, true), 0x1111), b(l3_words(m, false, false), 0x2222);
    handshake(a, A, b, B, 1, m.port);
    auto p = tcp_ip(3000, m.v6_inner, true);
    std::vector<tunnel::TxTrain> out;
    a.ep->transmit(tso_ip_hdr(m.v6_inner, 1000), p, 5, out);
    ASSERT_EQ(out.size(), 1u);
    const std::size_t dgram = m.hdr + (m.v6_inner ? 40 : 20) + 20 + 1000;
    ASSERT_EQ(out[0].buf.size(), 3 * dgram);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(tcp_ok_ip(out[0].buf.data() + i * dgram + m.hdr)) << i;
    EXPECT_EQ(a.ep->counters().tx_csum_sw, 3u);
    EXPECT_EQ(a.ep->peer(B)->ctr.tx_csum_elided, 0u);
    EXPECT_EQ(a.ep->peer(B)->ctr.tx_csum_full, 3u);
    auto frames = deliver(out[0], b, A);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(b.ep->counters().rx_csum_partial_seed, 0u);
    EXPECT_EQ(b.ep->counters().drops_total(), 0u);
  }
}

// K-9 in the L3 modes, at decapsulation: an inner TCP field holding exactly its seed is taken
// as CHECKSUM_PARTIAL only where an outer checksum protects the bytes — GUE with a UDP
// checksum present (not zero), GRE with its checksum present and verified (V-13). Under a zero
// UDP checksum or a GRE header without one, nothing covers the inner packet (public bug E2):
// the seed is not trusted, the packet stays unverified and is counted. A complete inner
// checksum under a GRE checksum stays CHECKSUM_COMPLETE (the sum comes free, V-13); a GRE
// packet whose checksum fails is dropped, whatever its inner field holds.
TEST(TunnelIntegrity, K9_GueGreSeedPartialOnlyUnderOuterChecksum) {
  for (bool v6 : {false, true}) {
    SCOPED_TRACE(v6 ? "IPv6 inner" : "IPv4 inner");
    const int l3 = v6 ? 40 : 20;
    const auto seeded = tcp_ip(1200, v6, true), full = tcp_ip(1200, v6, false);
    ASSERT_TRUE(tcp_ok_ip(full.data()));
    auto partial_at = [&](const core::Packet& p) {
      if (p.ip_summed() != core::IpSummed::Partial) return -1;
      EXPECT_EQ(std::get<core::CsumPartial>(p.csum).csum_offset, 16);
      return p.csum_start_offset();
    };
    {  // GUE (V-10 header: version 0, hlen 0, proto 4 / 41)
      daemon::DaemonConfig dc;
      ASSERT_FALSE(daemon::parse_tunnel_words({"gue", "local", "10.0.0.2", "remote", "10.0.0.1", "port", "5555"}, dc));
      auto dgram = [&](const std::vector<std::uint8_t>& ip) {
        std::vector<std::uint8_t> d = {0, std::uint8_t(v6 ? 41 : 4), 0, 0};
        d.insert(d.end(), ip.begin(), ip.end());
        return d;
      };
      tunnel::Counters c;
      auto r = tunnel::gue_decap(dgram(seeded), tunnel_test::gue_of(dc), tunnel::OuterCsum::Present, c, -1);
      ASSERT_TRUE(r.ok);
      EXPECT_EQ(partial_at(r.pkt), l3) << "GUE, outer UDP checksum present: seed taken";
      EXPECT_EQ(c.rx_csum_partial_seed, 1u);
      r = tunnel::gue_decap(dgram(seeded), tunnel_test::gue_of(dc), tunnel::OuterCsum::Zero, c, -1);
      ASSERT_TRUE(r.ok);
      EXPECT_EQ(partial_at(r.pkt), -1) << "GUE, outer UDP checksum zero: seed not trusted";
      EXPECT_EQ(r.pkt.ip_summed(), core::IpSummed::None);
      EXPECT_EQ(c.rx_csum_partial_seed, 1u);
      EXPECT_EQ(c.rx_csum_seed_nocsum, 1u);
      r = tunnel::gue_decap(dgram(full), tunnel_test::gue_of(dc), tunnel::OuterCsum::Present, c, -1);
      ASSERT_TRUE(r.ok);
      EXPECT_EQ(partial_at(r.pkt), -1) << "a complete checksum is no seed";
      EXPECT_EQ(c.rx_csum_partial_seed, 1u);
    }
    for (bool csum : {true, false}) {  // GRE key 42, with and without its checksum
      SCOPED_TRACE(csum ? "GRE csum" : "GRE without csum");
      daemon::DaemonConfig dc;
      std::vector<std::string> w = {"gre", "local", "10.0.0.2", "remote", "10.0.0.1", "key", "42"};
      if (csum) w.push_back("csum");
      ASSERT_FALSE(daemon::parse_tunnel_words(w, dc));
      auto dgram = [&](const std::vector<std::uint8_t>& ip) {
        std::vector<std::uint8_t> d(tunnel::kMaxTunnelHdr);
        d.resize(tunnel::gre_build_header(v6 ? 0x86DD : 0x0800, tunnel_test::gre_of(dc), d));
        d.insert(d.end(), ip.begin(), ip.end());
        tunnel::gre_fill_checksum(d);
        return d;
      };
      tunnel::Counters c;
      auto r = tunnel::gre_decap(dgram(seeded), tunnel_test::gre_of(dc), c, -1);
      ASSERT_TRUE(r.ok);
      if (csum) {
        EXPECT_EQ(partial_at(r.pkt), l3) << "GRE checksum verified: seed taken";
        EXPECT_EQ(c.rx_csum_partial_seed, 1u);
        EXPECT_EQ(c.rx_gre_csum_ok, 1u);
      } else {
        EXPECT_EQ(partial_at(r.pkt), -1) << "no GRE checksum: seed not trusted";
        EXPECT_EQ(r.pkt.ip_summed(), core::IpSummed::None);
        EXPECT_EQ(c.rx_csum_partial_seed, 0u);
        EXPECT_EQ(c.rx_csum_seed_nocsum, 1u);
      }
      r = tunnel::gre_decap(dgram(full), tunnel_test::gre_of(dc), c, -1);
      ASSERT_TRUE(r.ok);
      EXPECT_EQ(partial_at(r.pkt), -1);
      EXPECT_EQ(r.pkt.ip_summed(), csum ? core::IpSummed::Complete : core::IpSummed::None);
      if (csum) {  // a byte flipped on the wire: the GRE checksum catches it, nothing delivered
        auto bad = dgram(seeded);
        bad[bad.size() - 7] ^= 0xff;
        r = tunnel::gre_decap(bad, tunnel_test::gre_of(dc), c, -1);
        EXPECT_FALSE(r.ok);
        EXPECT_EQ(c.drops[std::size_t(tunnel::Drop::RxGreCsumBad)], 1u);
        EXPECT_EQ(c.rx_csum_partial_seed, 1u);
      }
    }
  }
}

// `integrity` in the L3 modes (word and TOML): GUE needs its outer UDP checksum both ways,
// like VXLAN; GRE / ip6gre need the GRE checksum both ways (`csum`, or `icsum` + `ocsum`),
// since that is what protects the inner packet once its own checksum is elided.
TEST(TunnelConfig, IntegrityGueGreNeedsOuterChecksum) {
  auto words = [](std::vector<std::string> w, daemon::DaemonConfig* out = nullptr) {
    daemon::DaemonConfig c;
    auto e = daemon::parse_tunnel_words(w, c);
    if (out) *out = c;
    return e;
  };
  daemon::DaemonConfig c;
  ASSERT_FALSE(words({"gue", "local", "10.0.0.1", "remote", "10.0.0.2", "port", "5555", "integrity"}, &c));
  EXPECT_TRUE(c.integrity);
  ASSERT_FALSE(words({"gre", "local", "10.0.0.1", "remote", "10.0.0.2", "key", "7", "csum", "integrity"}, &c));
  EXPECT_TRUE(c.integrity);
  ASSERT_FALSE(words({"ip6gre", "local", "fd00::1", "remote", "fd00::2", "icsum", "ocsum", "integrity"}, &c));
  EXPECT_TRUE(c.integrity);
  auto p = daemon::parse_toml("[gue]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nport = 5555\nintegrity = true\n");
  ASSERT_TRUE(std::holds_alternative<daemon::DaemonConfig>(p)) << std::get<std::string>(p);
  EXPECT_TRUE(std::get<daemon::DaemonConfig>(p).integrity);
  p = daemon::parse_toml("[gre]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\ncsum = true\nintegrity = true\n");
  ASSERT_TRUE(std::holds_alternative<daemon::DaemonConfig>(p)) << std::get<std::string>(p);
  EXPECT_TRUE(std::get<daemon::DaemonConfig>(p).integrity);

  // GUE without the outer UDP checksum in one direction: refused, naming the setting.
  for (auto [l, r, off] : {std::tuple{"10.0.0.1", "10.0.0.2", "noudpcsum"},
                           std::tuple{"fd00::1", "fd00::2", "udp6zerocsumtx"},
                           std::tuple{"fd00::1", "fd00::2", "udp6zerocsumrx"}}) {
    auto e = words({"gue", "local", l, "remote", r, "port", "5555", off, "integrity"});
    ASSERT_TRUE(e) << off;
    EXPECT_EQ(e->rfind("integrity: needs the outer UDP checksum", 0), 0u) << *e;
    EXPECT_NE(e->find(off), std::string::npos) << *e;
  }
  // GRE without its checksum in one direction: refused.
  const std::string gre_msg = "integrity needs csum: the GRE checksum is what protects the inner packet";
  for (const char* only : {"", "icsum", "ocsum"}) {
    std::vector<std::string> w = {"gre", "local", "10.0.0.1", "remote", "10.0.0.2", "key", "7"};
    if (*only) w.push_back(only);
    w.push_back("integrity");
    auto e = words(w);
    ASSERT_TRUE(e) << only;
    EXPECT_EQ(e->rfind(gre_msg, 0), 0u) << *e;
  }
  auto e = words({"ip6gre", "local", "fd00::1", "remote", "fd00::2", "integrity"});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->rfind(gre_msg, 0), 0u) << *e;
  p = daemon::parse_toml("[gre]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nkey = 9\nintegrity = true\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(p));
  EXPECT_NE(std::get<std::string>(p).find(gre_msg), std::string::npos) << std::get<std::string>(p);
}

// X-36 property: GSO (ofld::gso) of every GRO aggregate gives back the original frames byte
// for byte, over randomised single-flow streams (seeded RNG): TCPv4 / TCPv6 (with TCP options,
// IPv6 extension headers), UDP segment mode (GRO_UDP_FWD, U-3..U-12), and TCP inside VXLAN
// (outer IPv4 / IPv6, outer UDP checksum or zero, W-15..W-18), a third of the TCP streams
// through fraglist GRO (T-4, T-21 → X-32), with random segment sizes, a
// shorter last segment (T-16 / U-11), PSH on the last (T-15, X-21), TTL / TOS, and IPv4 IDs
// that increment (wrapping at 65535) or stay fixed — the two ID patterns X-36 calls reversible
// (fixed → TCP_FIXEDID recorded by GRO, N-15/N-17, kept by GSO, X-24). Outer IPv4 IDs of
// VXLAN increment (X-24: GSO advances outer IDs).
//
// Input frames are built from the RFC layouts (RFC 791, 8200, 9293, 768, 7348) with checksums
// per RFC 1071 (ofld::csum arithmetic); the expected output is the input itself.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/features.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "../common/frame_builder.hpp"

using namespace ofld;

namespace {

using Bytes = std::vector<std::uint8_t>;
namespace cs = ofld::csum;

void p16(Bytes& v, std::size_t at, std::uint16_t x) { ofld::wire::store_be16(&v[at], x); }

struct Ip {
  bool v6 = false;
  std::uint8_t ttl = 64, tos = 0;
  bool df = true;
  std::uint32_t flow_label = 0;
  Bytes v6_ext;  // one Hop-by-Hop header (nexthdr filled), or empty
  std::uint8_t saddr_last = 1, daddr_last = 2;
};

// Frames from tests/common/frame_builder.hpp: 10.9.0.<last> / 2001:db8::<last>, checksums
// per RFC 1071 (RFC 791 header, RFC 9293 / 768 with the pseudo header).
ofld::fb::Frame ip_frame(const Ip& ip, std::uint16_t id) {
  namespace w = ofld::wire;
  ofld::fb::Frame f;
  if (!ip.v6) {
    w::Ipv4Repr r;
    r.tos = ip.tos;
    r.id = id;
    r.frag_off = ip.df ? w::ipv4::kDF : 0;
    r.ttl = ip.ttl;
    r.saddr = ofld::fb::ip4(10, 9, 0, ip.saddr_last);
    r.daddr = ofld::fb::ip4(10, 9, 0, ip.daddr_last);
    f.ipv4(r);
  } else {
    w::Ipv6Repr r;
    r.traffic_class = ip.tos;
    r.flow_label = ip.flow_label;
    r.hop_limit = ip.ttl;
    r.saddr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ip.saddr_last};
    r.daddr = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ip.daddr_last};
    f.ipv6(r);
    if (!ip.v6_ext.empty()) f.raw(ip.v6_ext, ofld::wire::ipproto::kHopOpts, true);
  }
  return f;
}

// IPv4 / IPv6 header (+ ext) followed by `l4` of protocol `proto` (ICMP here).
Bytes ip_packet(const Ip& ip, std::uint8_t proto, const Bytes& l4, std::uint16_t id) {
  auto f = ip_frame(ip, id);
  f.raw(l4, proto);
  return f.build();
}

Bytes eth(std::uint16_t type, std::uint8_t tag) {
  ofld::fb::Frame f;
  f.eth({0x02, 0, 0, 0, tag, 0x02}, {0x02, 0, 0, 0, tag, 0x01}, type, 0);
  return f.build();
}

struct Tcp {
  std::uint16_t sport = 40001, dport = 80;
  std::uint32_t seq = 0, ack = 0;
  std::uint8_t flags = 0x10;
  std::uint16_t window = 1000;
  Bytes options;
};

// IP + TCP datagram with valid checksums.
Bytes tcp_l3(const Ip& ip, std::uint16_t id, const Tcp& t, const Bytes& payload) {
  auto f = ip_frame(ip, id);
  ofld::wire::TcpRepr r;
  r.source = t.sport;
  r.dest = t.dport;
  r.seq = t.seq;
  r.ack_seq = t.ack;
  r.flags = t.flags;
  r.window = t.window;
  f.tcp(r, ofld::fb::L4Csum::Full, 0, t.options).payload(payload);
  return f.build();
}

// IP + UDP datagram; csum false → checksum 0 (IPv4 only, RFC 768), else RFC value (0 → FFFF).
Bytes udp_l3(const Ip& ip, std::uint16_t id, std::uint16_t sport, std::uint16_t dport,
             const Bytes& payload, bool csum) {
  auto f = ip_frame(ip, id);
  f.udp({sport, dport, 0, 0}, csum ? ofld::fb::L4Csum::Full : ofld::fb::L4Csum::Zero).payload(payload);
  return f.build();
}

enum class Kind { TcpV4, TcpV6, Udp, Vxlan };

struct Stream {
  Kind kind;
  std::string what;  // description for failure messages
  std::vector<Bytes> frames;
  gro::EngineOptions gro;
};

Bytes random_bytes(std::mt19937& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = std::uint8_t(rng());
  return b;
}

Bytes tcp_options(std::mt19937& rng) {
  switch (rng() % 4) {
    case 0: return {};
    case 1: {  // NOP NOP Timestamp (RFC 7323)
      Bytes o{1, 1, 8, 10};
      Bytes v = random_bytes(rng, 8);
      o.insert(o.end(), v.begin(), v.end());
      return o;
    }
    case 2: {  // NOP NOP SACK with one block (RFC 2018)
      Bytes o{1, 1, 5, 10};
      Bytes v = random_bytes(rng, 8);
      o.insert(o.end(), v.begin(), v.end());
      return o;
    }
    default: {  // Timestamp then NOP NOP, and 4 NOPs (reordered padding)
      Bytes o{8, 10};
      Bytes v = random_bytes(rng, 8);
      o.insert(o.end(), v.begin(), v.end());
      o.insert(o.end(), {1, 1, 1, 1, 1, 1});
      return o;
    }
  }
}

Stream make_stream(std::mt19937& rng, Kind kind) {
  Stream s;
  s.kind = kind;
  s.gro.batch = 1u << 20;
  Ip ip;
  ip.v6 = kind == Kind::TcpV6 || (kind != Kind::TcpV4 && rng() % 2);
  ip.ttl = std::uint8_t(1 + rng() % 255);
  ip.tos = std::uint8_t(rng() % 4 == 0 ? rng() : 0);
  ip.df = rng() % 2;
  ip.flow_label = rng() % 3 == 0 ? rng() & 0xFFFFF : 0;
  if (ip.v6 && rng() % 3 == 0) {  // Hop-by-Hop with a PadN option (RFC 8200 §4.3)
    ip.v6_ext = {0, 0, 1, 4, 0, 0, 0, 0};
    if (rng() % 2) ip.v6_ext = {0, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  }
  // Reversible ID patterns only: incrementing, or fixed with DF set for TCP (GRO records
  // TCP_FIXEDID, N-17, and GSO keeps the ID, X-24). Fixed with DF clear merges on 6.18 (N-15)
  // but ofld::gso follows 6.12's X-24 and refuses TCP_FIXEDID without DF (see the test at the
  // end). UDP GRO records no fixed-ID bit, so UDP GSO always increments (the X-36 exception).
  // Fraglist completion (T-21) records no fixed-ID bit either, so fraglist streams increment.
  const bool fraglist = (kind == Kind::TcpV4 || kind == Kind::TcpV6) && rng() % 3 == 0;
  const bool fixed_id = kind != Kind::Udp && !fraglist && ip.df && rng() % 3 == 0;
  std::uint16_t id = std::uint16_t(rng() % 4 == 0 ? 65535 - rng() % 8 : rng());  // wraps too
  const std::size_t nseg = 2 + rng() % 58;  // up to 59 × 1460: some streams pass 64 KB (G-16)
  // Segment size: the aggregate must stay within one 64 KB datagram only as far as GRO
  // allows — it splits larger streams itself (G-16), which the property covers as well.
  std::size_t mss = kind == Kind::Udp ? 1 + rng() % 1400 : 1 + rng() % 1460;
  if (rng() % 5 == 0) mss = 1 + rng() % 64;
  const std::size_t last = rng() % 2 ? mss : 1 + rng() % mss;
  const bool psh_last = kind != Kind::Udp && rng() % 2;

  Tcp t;
  t.sport = std::uint16_t(1024 + rng() % 60000);
  t.seq = rng();
  t.ack = rng();
  t.window = std::uint16_t(rng());
  t.options = tcp_options(rng);

  // VXLAN: outer IPv4 / IPv6, outer UDP checksum on or (IPv4) zero; inner TCPv4 / TCPv6.
  Ip outer;
  bool outer_csum = true;
  std::uint16_t outer_id = std::uint16_t(rng()), outer_sport = std::uint16_t(49152 + rng() % 16384);
  std::uint32_t vni = rng() & 0xFFFFFF;
  if (kind == Kind::Vxlan) {
    outer.v6 = rng() % 2;
    outer.ttl = 64;
    outer.df = rng() % 2;
    outer_csum = outer.v6 || rng() % 2;
    ip.v6_ext.clear();
    s.gro.config.udp_tunnels.push_back({4789, 4789, false, false});
  }
  if (kind == Kind::Udp) s.gro.config.udp_gro_fwd = true;
  // TCP outside a tunnel: a third of the streams through fraglist GRO (T-4 no local socket,
  // T-21), segmented back by skb_segment_list.
  s.gro.config.gro_fraglist = fraglist;

  s.what = std::string(kind == Kind::TcpV4 ? "tcp4" : kind == Kind::TcpV6 ? "tcp6" : kind == Kind::Udp ? "udp" : "vxlan") +
           (ip.v6 ? " v6" : " v4") + " nseg " + std::to_string(nseg) + " mss " + std::to_string(mss) +
           " last " + std::to_string(last) + (fixed_id ? " fixed-id" : " inc-id") + " df " +
           std::to_string(ip.df) + " opts " + std::to_string(t.options.size()) + " ext " +
           std::to_string(ip.v6_ext.size()) + (kind == Kind::Vxlan ? (outer.v6 ? " outer v6" : " outer v4") : "") +
           (kind == Kind::Vxlan ? (outer_csum ? " ucsum" : " nocsum") : "") + (fraglist ? " fraglist" : "");

  for (std::size_t i = 0; i < nseg; ++i) {
    const std::size_t len = i + 1 == nseg ? last : mss;
    Bytes payload = random_bytes(rng, len);
    Tcp ti = t;
    if (i + 1 == nseg && psh_last) ti.flags |= 0x08;
    Bytes f;
    if (kind == Kind::Udp) {
      f = eth(ip.v6 ? 0x86DD : 0x0800, 1);
      Bytes l3 = udp_l3(ip, id, t.sport, 4000, payload, true);
      f.insert(f.end(), l3.begin(), l3.end());
    } else if (kind == Kind::Vxlan) {
      Bytes inner = eth(ip.v6 ? 0x86DD : 0x0800, 7);
      Bytes l3 = tcp_l3(ip, id, ti, payload);
      inner.insert(inner.end(), l3.begin(), l3.end());
      Bytes vx(ofld::wire::vxlan::kLen);
      ofld::wire::VxlanRepr{vni, std::nullopt}.emit(vx);
      vx.insert(vx.end(), inner.begin(), inner.end());
      f = eth(outer.v6 ? 0x86DD : 0x0800, 1);
      Bytes ol3 = udp_l3(outer, outer_id, outer_sport, 4789, vx, outer_csum);
      f.insert(f.end(), ol3.begin(), ol3.end());
      ++outer_id;
    } else {
      f = eth(ip.v6 ? 0x86DD : 0x0800, 1);
      Bytes l3 = tcp_l3(ip, id, ti, payload);
      f.insert(f.end(), l3.begin(), l3.end());
    }
    s.frames.push_back(std::move(f));
    t.seq += std::uint32_t(len);
    if (!fixed_id) ++id;
  }
  return s;
}

// GRO of the stream, then software GSO (no device offloads: every checksum in software) of
// every aggregate; singles pass as they are (G-8).
struct RoundTrip {
  std::vector<Bytes> frames;
  std::size_t aggregates = 0;
  std::string error;
};
RoundTrip round_trip(const Stream& s) {
  RoundTrip r;
  gro::Engine e(s.gro);
  for (const auto& f : s.frames) e.receive(core::Packet::from_bytes(f));
  e.flush_all();
  core::Device dev;  // no features: software segmentation and checksums
  for (auto& p : e.take_output()) {
    if (!p.is_gso()) {
      r.frames.push_back(p.to_bytes());
      continue;
    }
    ++r.aggregates;
    auto g = gso::gso_segment(std::move(p), dev.features, dev);
    if (!g.ok()) {
      r.error = "gso_segment failed: reason " + std::to_string(int(g.reason));
      return r;
    }
    for (auto& seg : g.segs) r.frames.push_back(seg.to_bytes());
  }
  return r;
}

void check_kind(Kind kind, std::uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  std::size_t aggregated = 0;
  for (int c = 0; c < cases; ++c) {
    Stream s = make_stream(rng, kind);
    RoundTrip r = round_trip(s);
    ASSERT_TRUE(r.error.empty()) << "case " << c << " (" << s.what << "): " << r.error;
    aggregated += r.aggregates;
    ASSERT_EQ(r.frames.size(), s.frames.size()) << "case " << c << " (" << s.what << ")";
    for (std::size_t i = 0; i < s.frames.size(); ++i) {
      const Bytes& a = r.frames[i];
      const Bytes& b = s.frames[i];
      if (a == b) continue;
      std::size_t at = 0;
      while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
      FAIL() << "case " << c << " (" << s.what << "): frame " << i << " differs at byte " << at
             << " (length " << a.size() << " vs original " << b.size() << ")";
    }
  }
  // The property must not hold vacuously: the streams do aggregate.
  EXPECT_GE(aggregated, std::size_t(cases) * 9 / 10);
}

}  // namespace

TEST(GroGsoProperty, X36_TcpV4StreamsRoundTrip) { check_kind(Kind::TcpV4, 0x36001, 150); }
TEST(GroGsoProperty, X36_TcpV6StreamsRoundTrip) { check_kind(Kind::TcpV6, 0x36002, 150); }
TEST(GroGsoProperty, X36_UdpSegmentStreamsRoundTrip) { check_kind(Kind::Udp, 0x36003, 100); }
TEST(GroGsoProperty, X36_VxlanTcpStreamsRoundTrip) { check_kind(Kind::Vxlan, 0x36004, 100); }

// IPv4 DF clear with a fixed ID: GRO on 6.18 merges it and records the fixed ID (N-15, K-7:
// ip_id_df0_fixed -> [200]); GSO as on 6.18 (X-24 [newer], no DF restriction) gives back the
// original frames byte for byte, the shared ID included.
TEST(GroGsoProperty, X36_X24_DfClearFixedIdRoundTrips) {
  Ip ip;
  ip.df = false;
  Tcp t;
  gro::EngineOptions o;
  o.batch = 1000;
  gro::Engine e(o);
  std::vector<Bytes> in;
  for (int i = 0; i < 2; ++i) {
    Bytes f = eth(0x0800, 1);
    Bytes l3 = tcp_l3(ip, 8, t, Bytes(100, 'a'));
    f.insert(f.end(), l3.begin(), l3.end());
    in.push_back(f);
    e.receive(core::Packet::from_bytes(f));
    t.seq += 100;
  }
  e.flush_all();
  auto out = e.take_output();
  ASSERT_EQ(out.size(), 1u);  // N-15 / K-7: [200]
  EXPECT_NE(out[0].gso.type & core::skb_gso::TCP_FIXEDID, 0u);
  core::Device dev;
  auto g = gso::gso_segment(std::move(out[0]), dev.features, dev);
  ASSERT_TRUE(g.ok()) << offload::to_string(g.reason);
  ASSERT_EQ(g.segs.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_EQ(g.segs[i].to_bytes(), in[i]) << i;
}

// ---- G3 (public-bugs.md: DPDK "gro: fix unprocessed IPv4 packets") -----------------------------
// Random mixes of packets GRO cannot merge (ARP, ICMP/ICMPv6, an IPv4 fragment, a TCP segment
// with a bad checksum, a SYN, a lone UDP datagram that is held and never merged, G-8) with
// mergeable TCPv4/TCPv6, UDP segment-mode and VXLAN-TCP streams, fed in random batches. After
// GSO of every aggregate the output must be exactly the input: every unmergeable packet once and
// byte-identical, every stream's frames complete and in order, nothing lost, nothing duplicated,
// and the count of delivered packets (an aggregate counting gso_segs) equal to the count received.
namespace {

std::vector<Bytes> unmergeable_frames(std::mt19937& rng) {
  std::vector<Bytes> v;
  Ip ip;
  ip.saddr_last = 77;  // hosts no stream uses
  ip.daddr_last = 78;
  {  // ARP request (RFC 826): Ethernet / IPv4, 28 bytes
    Bytes f = eth(0x0806, 3);
    Bytes a{0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 3, 2, 10, 9, 0, 77, 0, 0, 0, 0, 0, 0, 10, 9, 0, 78};
    f.insert(f.end(), a.begin(), a.end());
    v.push_back(f);
  }
  {  // ICMP echo request (RFC 792) with random data
    Bytes m{8, 0, 0, 0, 0, 1, 0, 1};
    Bytes d = random_bytes(rng, 56);
    m.insert(m.end(), d.begin(), d.end());
    p16(m, 2, cs::ip_compute_csum(m.data(), m.size()));
    Bytes f = eth(0x0800, 3);
    Bytes l3 = ip_packet(ip, 1, m, 4242);
    f.insert(f.end(), l3.begin(), l3.end());
    v.push_back(f);
  }
  {  // ICMPv6 echo request (RFC 4443): checksum over the IPv6 pseudo header
    Ip ip6 = ip;
    ip6.v6 = true;
    Bytes m{128, 0, 0, 0, 0, 1, 0, 1};
    Bytes d = random_bytes(rng, 40);
    m.insert(m.end(), d.begin(), d.end());
    const ofld::wire::Ipv6Addr sa{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ip6.saddr_last};
    const ofld::wire::Ipv6Addr da{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ip6.daddr_last};
    p16(m, 2, ofld::wire::l4_checksum_v6(sa, da, 58, m));
    Bytes f = eth(0x86DD, 3);
    Bytes l3 = ip_packet(ip6, 58, m, 0);
    f.insert(f.end(), l3.begin(), l3.end());
    v.push_back(f);
  }
  {  // first fragment of a UDP datagram (MF set): never a GRO candidate
    Ip fr = ip;
    fr.df = false;
    Bytes f = eth(0x0800, 3);
    Bytes l3 = udp_l3(fr, 999, 5000, 5001, random_bytes(rng, 600), true);
    l3[6] |= 0x20;
    p16(l3, 10, 0);
    p16(l3, 10, cs::ip_compute_csum(l3.data(), 20));
    f.insert(f.end(), l3.begin(), l3.end());
    v.push_back(f);
  }
  {  // TCP with a bad checksum: validation fails, delivered as it came (G-13)
    Tcp t;
    t.sport = 7;
    t.seq = rng();
    Bytes f = eth(0x0800, 3);
    Bytes l3 = tcp_l3(ip, 1, t, random_bytes(rng, 300));
    l3[20 + 16] ^= 0x01;
    f.insert(f.end(), l3.begin(), l3.end());
    v.push_back(f);
  }
  {  // SYN: flushes its own flow, never merged (T-rules: flags)
    Tcp t;
    t.sport = 8;
    t.flags = 0x02;
    t.seq = rng();
    Bytes f = eth(0x0800, 3);
    Bytes l3 = tcp_l3(ip, 2, t, {});
    f.insert(f.end(), l3.begin(), l3.end());
    v.push_back(f);
  }
  {  // a lone UDP datagram (segment-mode UDP GRO holds it; it never merges, G-8)
    Bytes f = eth(0x0800, 3);
    Bytes l3 = udp_l3(ip, 3, 6000, 6001, random_bytes(rng, 200), true);
    f.insert(f.end(), l3.begin(), l3.end());
    v.push_back(f);
  }
  return v;
}

void check_mix(std::uint32_t seed, int cases) {
  std::mt19937 rng(seed);
  std::size_t aggregates = 0;
  for (int c = 0; c < cases; ++c) {
    const Kind kinds[] = {Kind::TcpV4, Kind::TcpV6, Kind::Udp, Kind::Vxlan, Kind::Vxlan};
    std::vector<Stream> streams;
    for (Kind k : kinds) streams.push_back(make_stream(rng, k));
    std::vector<Bytes> singles = unmergeable_frames(rng);
    // Interleave: keep each stream's order, scatter the singles (each a stream of one).
    std::vector<std::pair<int, std::size_t>> order;  // (stream or -1-single, index)
    std::vector<std::size_t> next(streams.size(), 0);
    std::size_t left = 0;
    for (auto& s : streams) left += s.frames.size();
    std::vector<std::size_t> single_at;
    for (std::size_t i = 0; i < singles.size(); ++i) single_at.push_back(rng() % (left + 1));
    std::size_t pos = 0;
    while (left) {
      for (std::size_t i = 0; i < singles.size(); ++i)
        if (single_at[i] == pos) order.push_back({-1 - int(i), 0});
      std::size_t k;
      do k = rng() % streams.size(); while (next[k] == streams[k].frames.size());
      order.push_back({int(k), next[k]++});
      --left;
      ++pos;
    }
    for (std::size_t i = 0; i < singles.size(); ++i)
      if (single_at[i] == pos) order.push_back({-1 - int(i), 0});

    gro::EngineOptions o;
    o.batch = 1 + rng() % 64;
    o.config.udp_gro_fwd = true;
    o.config.udp_tunnels.push_back({4789, 4789, false, false});
    gro::Engine e(o);
    for (auto [s, i] : order)
      e.receive(core::Packet::from_bytes(s >= 0 ? streams[std::size_t(s)].frames[i]
                                                : singles[std::size_t(-1 - s)]));
    e.flush_all();
    const std::size_t received = order.size();
    ASSERT_EQ(e.counters().packets_in, received);

    std::size_t delivered = 0;
    std::vector<Bytes> out;
    core::Device dev;
    for (auto& p : e.take_output()) {
      delivered += p.is_gso() ? std::max<std::size_t>(1, p.gso.segs) : 1;
      if (!p.is_gso()) {
        out.push_back(p.to_bytes());
        continue;
      }
      ++aggregates;
      auto g = gso::gso_segment(std::move(p), dev.features, dev);
      ASSERT_TRUE(g.ok()) << "case " << c << ": " << offload::to_string(g.reason);
      for (auto& seg : g.segs) out.push_back(seg.to_bytes());
    }
    EXPECT_EQ(delivered, received) << "case " << c << ": output count != merged + unprocessed";
    std::fill(next.begin(), next.end(), 0);
    std::vector<bool> seen(singles.size(), false);
    for (std::size_t j = 0; j < out.size(); ++j) {
      bool found = false;
      for (std::size_t k = 0; k < streams.size() && !found; ++k)
        if (next[k] < streams[k].frames.size() && streams[k].frames[next[k]] == out[j])
          ++next[k], found = true;
      for (std::size_t i = 0; i < singles.size() && !found; ++i)
        if (!seen[i] && singles[i] == out[j]) seen[i] = found = true;
      ASSERT_TRUE(found) << "case " << c << ": output frame " << j << " (" << out[j].size()
                         << " B) is no input frame still due: corrupted, duplicated or reordered";
    }
    for (std::size_t k = 0; k < streams.size(); ++k)
      EXPECT_EQ(next[k], streams[k].frames.size()) << "case " << c << ": stream " << k << " ("
                                                   << streams[k].what << ") lost frames";
    for (std::size_t i = 0; i < singles.size(); ++i)
      EXPECT_TRUE(seen[i]) << "case " << c << ": unmergeable packet " << i << " lost";
  }
  // Not vacuous: the mixes did aggregate (several streams per case).
  EXPECT_GE(aggregates, std::size_t(cases) * 3);
}

}  // namespace

TEST(GroGsoProperty, BugG3_UnmergeablePacketsSurviveFlushesInMixes) { check_mix(0x63001, 60); }

// Decapsulation bounds (a remote crash: every length and offset that RCO and decapsulation take
// from the packet is checked before use) and inner lengths (inner IP lengths checked on
// decapsulation; a guest's own tunnel inside the overlay is not merged by GRO into a frame the
// TAP cannot describe).
//
// Expected values come from the kernel (6.12 source, cited per test): vxlan_rcv/vxlan_remcsum
// (drivers/net/vxlan/vxlan_core.c), gue_remcsum (net/ipv4/fou_core.c), skb_remcsum_process /
// remcsum_adjust (include/linux/skbuff.h, include/net/checksum.h), pskb_inet_may_pull
// (include/net/ip_tunnels.h), ip_rcv_core (net/ipv4/ip_input.c), ip6_rcv_core
// (net/ipv6/ip6_input.c), virtio_net_hdr_from_skb (include/linux/virtio_net.h); spec C-33,
// V-3, V-9, W-12, S-7. Checksums expected in the tests are computed with an RFC 1071 loop
// written here, not with the library.
#include <gtest/gtest.h>

#include <cstring>

#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/wire/virtio_net.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using tunnel::Drop;
using tunnel_test::get16;
using tunnel_test::put16;
using Bytes = std::vector<std::uint8_t>;
namespace wv = wire::virtio_net;

/// RFC 1071 sum of big-endian 16-bit words from an even position (odd byte padded), folded.
std::uint16_t rfc1071(const std::uint8_t* p, std::size_t n, std::uint32_t sum = 0) {
  for (std::size_t i = 0; i + 1 < n; i += 2) sum += std::uint32_t(p[i] << 8 | p[i + 1]);
  if (n & 1) sum += std::uint32_t(p[n - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return std::uint16_t(sum);
}

Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Ethernet header 02:00:00:00:00:02 ← 02:00:00:00:00:01, the given ethertype.
Bytes eth(std::uint16_t type) {
  Bytes e = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0, 0};
  put16(e, 12, type);
  return e;
}

/// IPv4 header (RFC 791; IHL 5, DF, TTL 64, valid header checksum) + payload.
Bytes ip4(std::uint8_t proto, const Bytes& payload, std::uint16_t id, std::uint8_t net = 9) {
  Bytes h(20, 0);
  h[0] = 0x45;
  put16(h, 2, std::uint16_t(20 + payload.size()));
  put16(h, 4, id);
  put16(h, 6, 0x4000);
  h[8] = 64;
  h[9] = proto;
  h[12] = 10, h[13] = net, h[14] = 0, h[15] = 1;
  h[16] = 10, h[17] = net, h[18] = 0, h[19] = 2;
  put16(h, 10, std::uint16_t(~rfc1071(h.data(), 20)));
  return cat(h, payload);
}

/// IPv6 header (RFC 8200; hop limit 64, fd09::1 → fd09::2) + payload.
Bytes ip6(std::uint8_t next, const Bytes& payload) {
  Bytes h(40, 0);
  h[0] = 0x60;
  put16(h, 4, std::uint16_t(payload.size()));
  h[6] = next;
  h[7] = 64;
  h[8] = 0xfd, h[9] = 0x09, h[23] = 1;
  h[24] = 0xfd, h[25] = 0x09, h[39] = 2;
  return cat(h, payload);
}

/// A TCP segment (ACK only, doff 5) of `len` payload bytes at sequence `seq` inside an IPv4
/// packet with ID `id`, TCP checksum valid (RFC 793 §3.1 pseudo header).
Bytes tcp4(std::uint32_t seq, std::size_t len, std::uint16_t id) {
  Bytes t(20 + len, 0);
  put16(t, 0, 40000);
  put16(t, 2, 5201);
  t[4] = std::uint8_t(seq >> 24), t[5] = std::uint8_t(seq >> 16);
  t[6] = std::uint8_t(seq >> 8), t[7] = std::uint8_t(seq);
  t[11] = 1;
  t[12] = 0x50;
  t[13] = 0x10;  // ACK: no PSH, so that GRO keeps the flow open (T-17)
  put16(t, 14, 0xffff);
  for (std::size_t i = 0; i < len; ++i) t[20 + i] = std::uint8_t(seq + i * 7);
  Bytes p = ip4(6, t, id, 1);
  std::uint32_t ps = 6 + std::uint32_t(t.size());
  for (int i = 12; i < 20; i += 2) ps += std::uint32_t(p[i] << 8 | p[i + 1]);
  put16(p, 20 + 16, std::uint16_t(~rfc1071(p.data() + 20, t.size(), ps)));
  return p;
}

tunnel::VxlanConfig vx_cfg() {
  tunnel::VxlanConfig c = tunnel_test::vxlan_cfg();
  c.learning = false;
  return c;
}
const tunnel::IpAddr kRemote = *tunnel::IpAddr::parse("10.0.0.2");

Bytes vxlan_hdr(std::uint8_t rco_byte = 0, bool rco = false) {
  return {0x08, std::uint8_t(rco ? 0x20 : 0), 0, 0, 0, 0, 42, rco_byte};
}

Bytes bytes_of(const tunnel::TapFrame& f) { return f.pkt ? f.pkt->to_bytes() : Bytes{}; }

struct Rx {
  std::vector<tunnel::TapFrame> frames;
  tunnel::Counters ctr;
};

/// One VXLAN datapath receive of each payload, then the poll end.
Rx vxlan_rx(const tunnel::VxlanConfig& c, bool gro, const std::vector<Bytes>& payloads,
            tunnel::OuterCsum outer = tunnel::OuterCsum::Present) {
  tunnel::EndpointOptions o;
  o.gro = gro;
  tunnel::Endpoint dp(c, o);
  for (const auto& p : payloads) dp.receive(p, kRemote, outer, 1);
  Rx r;
  dp.rx_flush(2, r.frames);
  r.ctr = dp.counters();
  return r;
}

// ---- the reported datagram -----------------------------------------------------------------

// 22 bytes to port 4789: VXLAN with RCO (start 1 << 1 = 2, offset flag: UDP, +6 → the field at
// 8; V-3) and an inner frame that is only a 14-byte Ethernet header (ethertype 0). The kernel
// accepts it: vxlan_remcsum pulls start + offset + 2 = 10 ≤ 14 bytes, eth_type_trans gives
// a non-IP protocol, so pskb_inet_may_pull needs nothing more, and the frame is delivered.
// With remcsum-nopartial skb_remcsum_process writes at 8 csum_fold of the frame's sum minus
// the sum of bytes 0..2 (remcsum_adjust, C-33). Every byte is 0: the skb sum (taken over the
// VXLAN header and frame, the header's sum then subtracted, skb_postpull_rcsum) is
// ones'-complement "negative zero" 0xFFFFFFFF, csum_sub keeps it there, and csum_fold of it is
// 0x0000 — the field stays 0. Partial mode leaves the bytes and marks csum_start 2,
// csum_offset 6 (S-7: NEEDS_CSUM on the TAP write).
TEST(TunnelDecapBounds, RcoFrameOfOnlyAnEthernetHeaderIsDeliveredNotACrash) {
  const Bytes payload = {0x08, 0x20, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x81, 0, 0, 0, 0, 0, 0,
                         0,    0,    0,    0,    0,    0,    0,    0};
  ASSERT_EQ(payload.size(), 22u);
  for (bool nopartial : {true, false})
    for (bool gro : {true, false})
      for (auto outer : {tunnel::OuterCsum::Present, tunnel::OuterCsum::Unknown}) {
        SCOPED_TRACE(testing::Message() << "nopartial " << nopartial << " gro " << gro);
        auto c = vx_cfg();
        c.remcsum_rx = true;
        c.remcsum_nopartial = nopartial;
        auto r = vxlan_rx(c, gro, {payload}, outer);
        EXPECT_EQ(r.ctr.drops_total(), 0u);
        ASSERT_EQ(r.frames.size(), 1u);
        EXPECT_EQ(bytes_of(r.frames[0]), Bytes(14, 0));
        if (!nopartial) {
          EXPECT_EQ(r.frames[0].vnet.flags & wv::kFlagNeedsCsum, wv::kFlagNeedsCsum);
          EXPECT_EQ(r.frames[0].vnet.csum_start, 2);
          EXPECT_EQ(r.frames[0].vnet.csum_offset, 6);
        }
        EXPECT_EQ(r.frames[0].vnet.gso_type, wv::kGsoNone);
      }
}

// ---- the class, VXLAN RCO -------------------------------------------------------------------

// Every encodable RCO start (0..254, even; V-3) with both offsets (6, 16) against inner frames
// of many lengths (non-IP ethertype, so only the RCO bounds matter): vxlan_remcsum accepts
// exactly when start + offset + 2 ≤ frame length (pskb_may_pull), else the frame is dropped —
// here counted as rx_rco_bad_offset. An accepted nopartial frame carries at start + offset
// the folded sum of bytes start..end (remcsum_adjust), every other byte unchanged; GRO on.
TEST(TunnelDecapBounds, VxlanRcoStartAndOffsetAreCheckedAgainstTheInnerFrame) {
  for (bool nopartial : {true, false}) {
    auto c = vx_cfg();
    c.remcsum_rx = true;
    c.remcsum_nopartial = nopartial;
    tunnel::EndpointOptions o;
    tunnel::Endpoint dp(c, o);
    std::uint64_t drops = 0;
    for (std::size_t len : {14u, 15u, 16u, 17u, 23u, 24u, 25u, 34u, 35u, 36u, 60u, 271u, 272u}) {
      Bytes f = eth(0x88B5);  // IEEE local experimental ethertype: not IP
      f.resize(len);
      for (std::size_t i = 14; i < len; ++i) f[i] = std::uint8_t(i * 31 + 7);
      for (unsigned enc = 0; enc < 128; ++enc)
        for (bool udp : {false, true}) {
          const std::size_t start = enc * 2, field = start + (udp ? 6 : 16);
          const bool fits = field + 2 <= len;
          SCOPED_TRACE(testing::Message() << "len " << len << " start " << start << " field "
                                          << field << " nopartial " << nopartial);
          dp.receive(cat(vxlan_hdr(std::uint8_t(enc | (udp ? 0x80 : 0)), true), f), kRemote,
                     tunnel::OuterCsum::Present, 1);
          std::vector<tunnel::TapFrame> out;
          dp.rx_flush(2, out);
          if (!fits) {
            EXPECT_TRUE(out.empty());
            EXPECT_EQ(dp.counters().drops[std::size_t(Drop::RxRcoBadOffset)], ++drops);
            continue;
          }
          ASSERT_EQ(out.size(), 1u);
          Bytes got = bytes_of(out[0]);
          ASSERT_EQ(got.size(), len);
          if (nopartial) {
            Bytes want = f;
            const std::uint16_t v = std::uint16_t(~rfc1071(f.data() + start, len - start));
            want[field] = std::uint8_t(v >> 8);
            want[field + 1] = std::uint8_t(v);
            EXPECT_EQ(got, want);
          } else {
            EXPECT_EQ(got, f);
            EXPECT_EQ(out[0].vnet.csum_start, start);
            EXPECT_EQ(out[0].vnet.csum_offset, field - start);
          }
        }
    }
    EXPECT_EQ(dp.counters().drops_total(), drops);
  }
}

// ---- the class, GUE RCO --------------------------------------------------------------------

// GUE RCO (V-9, gue_remcsum): start and offset are 16-bit byte positions from the inner
// packet; the checksum field at offset must lie wholly inside the packet (pskb_may_pull of
// offset + 2), else the packet is dropped (rx_rco_bad_offset); offset < start is refused by
// the header check (V-9). Every start/offset pair around the end of IPv4 packets of several
// lengths, both modes, through the GUE datapath with GRO on: a packet is delivered exactly
// when it fits, and nopartial writes the folded sum of bytes start..end at offset.
TEST(TunnelDecapBounds, GueRcoStartAndOffsetAreCheckedAgainstTheInnerPacket) {
  for (bool nopartial : {true, false}) {
    tunnel::GueConfig c;
    c.local = *tunnel::IpAddr::parse("10.0.0.1");
    c.remote = kRemote;
    c.port = 5555;
    c.remcsum_rx = true;
    c.remcsum_nopartial = nopartial;
    tunnel::Endpoint dp(c, {});
    std::uint64_t bad = 0, delivered = 0;
    for (std::size_t plen : {0u, 1u, 2u, 3u, 20u, 21u}) {
      Bytes payload(plen);
      for (std::size_t i = 0; i < plen; ++i) payload[i] = std::uint8_t(i * 11 + 5);
      const Bytes p = ip4(253, payload, 7);  // protocol 253: experimentation (RFC 3692)
      const std::size_t len = p.size();
      for (std::size_t start = 0; start <= len + 4; start += 2)
        for (std::size_t off = start; off <= len + 4; ++off) {
          SCOPED_TRACE(testing::Message() << "len " << len << " start " << start << " offset "
                                          << off << " nopartial " << nopartial);
          Bytes h = {0x02, 0x04, 0x00, 0x01, 0x80, 0, 0, 0, 0, 0, 0, 0};
          put16(h, 8, std::uint16_t(start));
          put16(h, 10, std::uint16_t(off));
          dp.receive(cat(h, p), kRemote, tunnel::OuterCsum::Present, 1);
          std::vector<tunnel::TapFrame> out;
          dp.rx_flush(2, out);
          const bool fits = off + 2 <= len;
          if (!fits) {
            EXPECT_TRUE(out.empty());
            EXPECT_EQ(dp.counters().drops[std::size_t(Drop::RxRcoBadOffset)], ++bad);
            continue;
          }
          ++delivered;
          ASSERT_EQ(out.size(), 1u);
          if (nopartial) {
            Bytes want = p;
            const std::uint16_t v = std::uint16_t(~rfc1071(p.data() + start, len - start));
            want[off] = std::uint8_t(v >> 8);
            want[off + 1] = std::uint8_t(v);
            EXPECT_EQ(bytes_of(out[0]), want);
          } else {
            EXPECT_EQ(bytes_of(out[0]), p);
          }
        }
    }
    EXPECT_EQ(dp.counters().drops_total(), bad);
    EXPECT_GT(delivered, 0u);
  }
}

// ---- inner IP lengths ----------------------------------------------------------------------

struct LenCase {
  const char* what;
  Bytes l3;            // the inner packet from its IP header (after any link header)
  std::uint16_t type;  // its ethertype
  std::optional<Drop> drop;
  std::size_t keep;    // bytes of l3 delivered when not dropped (padding trimmed)
};

/// The inner-L3 cases, kernel reasons in the comments. A good IPv4 and IPv6 TCP packet;
/// the tunnel header and link header are added by each test.
std::vector<LenCase> len_cases() {
  const Bytes v4 = tcp4(1000, 26, 1);           // 66 bytes
  const Bytes v6 = ip6(59, Bytes(26, 0xab));    // 66 bytes, no next header
  std::vector<LenCase> cs;
  cs.push_back({"good IPv4", v4, 0x0800, std::nullopt, v4.size()});
  cs.push_back({"good IPv6", v6, 0x86DD, std::nullopt, v6.size()});
  // pskb_inet_may_pull (vxlan_rcv: rx_length_errors): fewer bytes than an IPv4 header.
  cs.push_back({"IPv4 header cut short", Bytes(v4.begin(), v4.begin() + 19), 0x0800,
                Drop::RxInnerTooSmall, 0});
  // ip_rcv_core: pskb_may_pull(ihl * 4) fails: the header claims more than the frame holds.
  Bytes ihl = v4;
  ihl[0] = 0x4F;  // 60-byte header in a 66-byte packet is fine; cut the packet to 40 bytes
  ihl.resize(40);
  put16(ihl, 2, 40);
  cs.push_back({"IPv4 IHL past the end", ihl, 0x0800, Drop::RxInnerTooSmall, 0});
  // ip_rcv_core: tot_len > skb->len → SKB_DROP_REASON_PKT_TOO_SMALL (INTRUNCATEDPKTS).
  Bytes longer = v4;
  put16(longer, 2, std::uint16_t(v4.size() + 1));
  cs.push_back({"IPv4 tot_len past the end", longer, 0x0800, Drop::RxInnerTooSmall, 0});
  // ip_rcv_core: ihl < 5, version != 4, tot_len < ihl * 4 → inhdr_error (IP_INHDR).
  Bytes ihl4 = v4;
  ihl4[0] = 0x44;
  cs.push_back({"IPv4 IHL 4", ihl4, 0x0800, Drop::RxInnerHdrError, 0});
  Bytes ver = v4;
  ver[0] = 0x65;
  cs.push_back({"IPv4 ethertype, version 6", ver, 0x0800, Drop::RxInnerHdrError, 0});
  Bytes shortlen = v4;
  put16(shortlen, 2, 19);
  cs.push_back({"IPv4 tot_len below the header", shortlen, 0x0800, Drop::RxInnerHdrError, 0});
  // ip_rcv_core: pskb_trim_rcsum(skb, tot_len): link-layer padding is removed.
  Bytes pad4 = v4;
  pad4.resize(v4.size() + 7, 0);
  cs.push_back({"IPv4 with padding", pad4, 0x0800, std::nullopt, v4.size()});
  // pskb_inet_may_pull: a 30-byte "IPv6".
  cs.push_back({"30-byte IPv6", Bytes(v6.begin(), v6.begin() + 30), 0x86DD,
                Drop::RxInnerTooSmall, 0});
  // ip6_rcv_core: payload_len + 40 > skb->len → INTRUNCATEDPKTS, PKT_TOO_SMALL.
  Bytes plen = v6;
  put16(plen, 4, 27);
  cs.push_back({"IPv6 payload_len past the end", plen, 0x86DD, Drop::RxInnerTooSmall, 0});
  // ip6_rcv_core: version != 6 → IP_INHDR.
  Bytes ver6 = v6;
  ver6[0] = 0x40;
  cs.push_back({"IPv6 ethertype, version 4", ver6, 0x86DD, Drop::RxInnerHdrError, 0});
  // ip6_rcv_core: pskb_trim_rcsum(skb, payload_len + 40).
  Bytes pad6 = v6;
  pad6.resize(v6.size() + 5, 0);
  cs.push_back({"IPv6 with padding", pad6, 0x86DD, std::nullopt, v6.size()});
  return cs;
}

// VXLAN: the inner frame's IP header (after Ethernet, and after one 802.1Q tag: the kernel
// checks it again after untagging, skb_vlan_inet_prepare / ip_rcv_core) is checked before
// delivery; a bad one is a counted drop with its reason, padding past the IP length is trimmed.
TEST(TunnelDecapInner, VxlanInnerIpLengthIsCheckedAndPaddingTrimmed) {
  for (bool gro : {true, false})
    for (bool vlan : {false, true})
      for (const auto& k : len_cases()) {
        SCOPED_TRACE(testing::Message() << k.what << " gro " << gro << " vlan " << vlan);
        Bytes link = eth(k.type);
        if (vlan) {
          put16(link, 12, 0x8100);
          link.insert(link.end(), {0x00, 0x05, std::uint8_t(k.type >> 8), std::uint8_t(k.type)});
        }
        const Bytes frame = cat(link, k.l3);
        auto r = vxlan_rx(vx_cfg(), gro, {cat(vxlan_hdr(), frame)});
        if (k.drop) {
          EXPECT_TRUE(r.frames.empty());
          EXPECT_EQ(r.ctr.drops[std::size_t(*k.drop)], 1u) << to_string(*k.drop);
          EXPECT_EQ(r.ctr.drops_total(), 1u);
        } else {
          EXPECT_EQ(r.ctr.drops_total(), 0u);
          ASSERT_EQ(r.frames.size(), 1u);
          EXPECT_EQ(bytes_of(r.frames[0]), Bytes(frame.begin(), frame.begin() + long(link.size() + k.keep)));
        }
      }
}

// RCO nopartial over a padded frame: the field is summed over the IP packet only (the kernel
// trims in ip_rcv_core with pskb_trim_rcsum, which takes the padding out of the sum); the
// delivered frame is the trimmed packet and its TCP checksum verifies.
TEST(TunnelDecapInner, VxlanRcoOverPaddedFrameDeliversTheTrimmedPacketWithAValidChecksum) {
  auto c = vx_cfg();
  c.remcsum_rx = true;
  c.remcsum_nopartial = true;
  Bytes p = tcp4(5000, 9, 3);
  // The TCP field holds the pseudo-header seed (what RCO transmit leaves, C-6).
  std::uint32_t ps = 6 + std::uint32_t(p.size() - 20);
  for (int i = 12; i < 20; i += 2) ps += std::uint32_t(p[i] << 8 | p[i + 1]);
  put16(p, 36, 0);
  put16(p, 36, rfc1071(nullptr, 0, ps));
  Bytes frame = cat(eth(0x0800), p);
  Bytes padded = frame;
  padded.resize(frame.size() + 9, 0x5a);  // non-zero padding
  auto r = vxlan_rx(c, false, {cat(vxlan_hdr(0x11 | 0x00, true), padded)});  // start 34, TCP
  ASSERT_EQ(r.frames.size(), 1u);
  Bytes got = bytes_of(r.frames[0]);
  ASSERT_EQ(got.size(), frame.size());
  EXPECT_TRUE(tunnel_test::tcp_csum_ok(got.data(), got.size()));
}

// GUE and GRE carry the IP packet itself: the same checks on it, same reasons (Drop).
TEST(TunnelDecapInner, GueAndGreInnerIpLengthIsCheckedAndPaddingTrimmed) {
  for (bool gue : {true, false})
    for (bool gro : {true, false})
      for (const auto& k : len_cases()) {
        SCOPED_TRACE(testing::Message() << k.what << (gue ? " gue" : " gre") << " gro " << gro);
        tunnel::GueConfig gc;
        tunnel::GreConfig rc;
        gc.local = rc.local = *tunnel::IpAddr::parse("10.0.0.1");
        gc.remote = rc.remote = kRemote;
        gc.port = 5555;
        tunnel::EndpointOptions o;
        o.gro = gro;
        tunnel::Endpoint dp(gue ? tunnel::TunnelConfig(gc) : tunnel::TunnelConfig(rc), o);
        const bool v6 = k.type == 0x86DD;
        Bytes hdr = gue ? Bytes{0x00, std::uint8_t(v6 ? 41 : 4), 0, 0}
                        : Bytes{0x00, 0x00, std::uint8_t(k.type >> 8), std::uint8_t(k.type)};
        dp.receive(cat(hdr, k.l3), kRemote, tunnel::OuterCsum::Present, 1);
        std::vector<tunnel::TapFrame> out;
        dp.rx_flush(2, out);
        const auto& ctr = dp.counters();
        if (k.drop) {
          const Drop want = *k.drop == Drop::RxInnerTooSmall ? Drop::RxInnerTooSmall
                                                               : Drop::RxInnerHdrError;
          // A packet whose first nibble disagrees with the tunnel's protocol was already
          // refused as not-IP (RxNotIp); every other case gets the inner length reason.
          if (ctr.drops[std::size_t(Drop::RxNotIp)] == 1u) {
            EXPECT_TRUE(std::string(k.what).find("version") != std::string::npos);
          } else {
            EXPECT_EQ(ctr.drops[std::size_t(want)], 1u) << to_string(want);
          }
          EXPECT_TRUE(out.empty());
          EXPECT_EQ(ctr.drops_total(), 1u);
        } else {
          EXPECT_EQ(ctr.drops_total(), 0u);
          ASSERT_EQ(out.size(), 1u);
          EXPECT_EQ(bytes_of(out[0]), Bytes(k.l3.begin(), k.l3.begin() + long(k.keep)));
        }
      }
}

// GRE with a checksum over a padded packet: the GRE checksum covers the padding (V-13), the
// delivered packet is trimmed, and its sum handed on (CHECKSUM_COMPLETE) is the trimmed
// packet's: GRO's validation accepts it and a 2-segment train merges.
TEST(TunnelDecapInner, GreChecksumOverPaddedPacketsStillMerges) {
  tunnel::GreConfig c;
  c.local = *tunnel::IpAddr::parse("10.0.0.1");
  c.remote = kRemote;
  c.icsum = c.ocsum = true;
  tunnel::Endpoint dp(c, {});
  for (int i = 0; i < 2; ++i) {
    Bytes p = tcp4(1000 + std::uint32_t(i) * 100, 100, std::uint16_t(1 + i));
    p.resize(p.size() + 3, 0x77);
    Bytes g = cat({0x80, 0, 0x08, 0x00, 0, 0, 0, 0}, p);
    put16(g, 4, std::uint16_t(~rfc1071(g.data(), g.size())));
    dp.receive(g, kRemote, tunnel::OuterCsum::Present, 1);
  }
  std::vector<tunnel::TapFrame> out;
  dp.rx_flush(2, out);
  EXPECT_EQ(dp.counters().drops_total(), 0u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].vnet.gso_type, wv::kGsoTcpv4);
  EXPECT_EQ(out[0].size(), 20u + 20u + 200u);
}

// ---- a guest's own tunnel inside the overlay -----------------------------------------------

/// The guest's tunnel packet for TCP segment `i` of a train (a different inner IP ID each, the
/// guest tunnel's outer ID incrementing too), starting at its outermost IP header.
Bytes guest_tunnel(const std::string& kind, int i) {
  const Bytes inner = tcp4(1000 + std::uint32_t(i) * 200, 200, std::uint16_t(100 + i));
  const std::uint16_t id = std::uint16_t(500 + i);
  if (kind == "gre") return ip4(47, cat({0, 0, 0x08, 0x00}, inner), id, 7);
  if (kind == "gre-csum") {
    Bytes g = cat({0x80, 0, 0x08, 0x00, 0, 0, 0, 0}, inner);
    put16(g, 4, std::uint16_t(~rfc1071(g.data(), g.size())));
    return ip4(47, g, id, 7);
  }
  if (kind == "gretap") return ip4(47, cat({0, 0, 0x65, 0x58}, cat(eth(0x0800), inner)), id, 7);
  if (kind == "ipip") return ip4(4, inner, id, 7);
  if (kind == "ip6gre") return ip6(47, cat({0, 0, 0x08, 0x00}, inner));
  if (kind == "ip4ip6") return ip6(4, inner);
  if (kind == "vxlan") {  // UDP 4789, checksum 0 (IPv4), VNI 7
    Bytes vx = cat({0x08, 0, 0, 0, 0, 0, 7, 0}, cat(eth(0x0800), inner));
    Bytes u(8, 0);
    put16(u, 0, 40001);
    put16(u, 2, 4789);
    put16(u, 4, std::uint16_t(8 + vx.size()));
    return ip4(17, cat(u, vx), id, 7);
  }
  return inner;  // "plain": the control case, a TCP train GRO must merge
}

const std::vector<std::string> kGuestTunnels = {"gre",    "gre-csum", "gretap", "ipip",
                                                "ip6gre", "ip4ip6",   "vxlan"};

// A virtio_net_hdr describes only TCPv4, TCPv6 and UDP (gso types 1, 4, 5; virtio spec 5.1.6,
// virtio_net_hdr_from_skb refuses anything else) — not GRE, IPIP or a UDP tunnel. GRO after
// decapsulation must therefore not build such aggregates for the TAP: each TCP train inside
// a guest's tunnel comes out as the original packets, byte for byte, with gso_type NONE. The
// plain TCP train (control) is merged into one TCPv4 aggregate.
TEST(TunnelDecapInner, GuestTunnelInsideVxlanIsNotMergedByGroAfterDecap) {
  {
    std::vector<Bytes> payloads;
    for (int i = 0; i < 4; ++i)
      payloads.push_back(cat(vxlan_hdr(), cat(eth(0x0800), guest_tunnel("plain", i))));
    auto r = vxlan_rx(vx_cfg(), true, payloads);
    ASSERT_EQ(r.frames.size(), 1u) << "control: a plain TCP train is merged";
    EXPECT_EQ(r.frames[0].vnet.gso_type, wv::kGsoTcpv4);
  }
  for (const auto& kind : kGuestTunnels) {
    SCOPED_TRACE(kind);
    std::vector<Bytes> frames, payloads;
    for (int i = 0; i < 4; ++i) {
      const Bytes t = guest_tunnel(kind, i);
      frames.push_back(cat(eth((t[0] >> 4) == 6 ? 0x86DD : 0x0800), t));
      payloads.push_back(cat(vxlan_hdr(), frames.back()));
    }
    auto r = vxlan_rx(vx_cfg(), true, payloads);
    EXPECT_EQ(r.ctr.drops_total(), 0u);
    ASSERT_EQ(r.frames.size(), 4u);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(r.frames[std::size_t(i)].vnet.gso_type, wv::kGsoNone) << i;
      EXPECT_EQ(bytes_of(r.frames[std::size_t(i)]), frames[std::size_t(i)]) << i;
    }
  }
}

// The same for the L3 modes: a GRE endpoint's TUN gets the guest tunnel's packets unmerged.
TEST(TunnelDecapInner, GuestTunnelInsideGreIsNotMergedByGroAfterDecap) {
  tunnel::GreConfig c;
  c.local = *tunnel::IpAddr::parse("10.0.0.1");
  c.remote = kRemote;
  {
    tunnel::Endpoint dp(c, {});
    for (int i = 0; i < 4; ++i)
      dp.receive(cat({0, 0, 0x08, 0x00}, guest_tunnel("plain", i)), kRemote,
                 tunnel::OuterCsum::Present, 1);
    std::vector<tunnel::TapFrame> out;
    dp.rx_flush(2, out);
    ASSERT_EQ(out.size(), 1u) << "control: a plain TCP train is merged";
    EXPECT_EQ(out[0].vnet.gso_type, wv::kGsoTcpv4);
  }
  for (const auto& kind : kGuestTunnels) {
    SCOPED_TRACE(kind);
    tunnel::Endpoint dp(c, {});
    std::vector<Bytes> pkts;
    for (int i = 0; i < 4; ++i) {
      pkts.push_back(guest_tunnel(kind, i));
      const std::uint16_t et = (pkts.back()[0] >> 4) == 6 ? 0x86DD : 0x0800;
      dp.receive(cat({0, 0, std::uint8_t(et >> 8), std::uint8_t(et)}, pkts.back()), kRemote,
                 tunnel::OuterCsum::Present, 1);
    }
    std::vector<tunnel::TapFrame> out;
    dp.rx_flush(2, out);
    EXPECT_EQ(dp.counters().drops_total(), 0u);
    ASSERT_EQ(out.size(), 4u);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(out[std::size_t(i)].vnet.gso_type, wv::kGsoNone) << i;
      EXPECT_EQ(bytes_of(out[std::size_t(i)]), pkts[std::size_t(i)]) << i;
    }
  }
}

}  // namespace

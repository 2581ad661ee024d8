// One tunnel::Endpoint for VXLAN, GUE, GRE and ip6gre — one transmit shape, one
// receive shape (decapsulate → gro_cells → virtio_net_hdr → device), one set of counters and
// drop reasons, one stats document, peers owned by the endpoint.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>

#include "ofld/gro/gro_cells.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using namespace tunnel_test;

/// Clear PSH in tcp_frame's IPv4 frame (ACK only; PSH ends a GRO aggregate in tcp_gro_receive)
/// and write the TCP checksum again (RFC 793 §3.1, RFC 1071 sum).
void ack_only(std::vector<std::uint8_t>& f) {
  constexpr std::size_t t = 14 + 20;
  f[t + 13] = 0x10;
  put16(f, t + 16, 0);
  const std::uint32_t l4 = std::uint32_t(f.size() - t);
  const auto ph = csum::csum_tcpudp_nofold(f.data() + 14 + 12, f.data() + 14 + 16, l4, 6, 0);
  put16(f, t + 16, csum::csum_fold(csum::csum_partial(f.data() + t, l4, ph)));
  ASSERT_TRUE(tcp_csum_ok(f.data(), f.size()));
}

// Spec W-12 (gro_cells_receive): only a device without GRO or a cloned skb (shared header
// data) bypasses GRO. Fragments that share a receive buffer are the normal case of a page-frag
// receive (the kernel's page_pool; ofld's zero-copy decapsulation keeps the inner payload in
// the recvmmsg slot), not a reason to skip GRO. Four consecutive segments of one flow whose
// payloads are fragments of one buffer must leave as one aggregate.
TEST(TunnelGroCells, W12_SharedReceiveBufferFragmentsAreAggregated) {
  constexpr std::size_t kPay = 1000, kHdr = 14 + 20 + 20;
  auto slot = core::Buffer::create(std::size_t(4 * (kHdr + kPay)));
  gro::GroCellsOptions o;
  o.engine.link = gro::LinkLayer::Ethernet;
  gro::GroCells cells(o);
  std::vector<core::Packet> keep;
  for (std::uint32_t i = 0; i < 4; ++i) {
    auto f = tcp_frame(kPay, false, false, 1000 + i * std::uint32_t(kPay));
    ack_only(f);
    const std::size_t at = i * (kHdr + kPay);
    std::memcpy(slot->bytes.data() + at, f.data(), f.size());
    auto p = core::Packet::from_bytes(std::span<const std::uint8_t>(f.data(), kHdr));
    ASSERT_EQ(p.add_frag(slot, std::uint32_t(at + kHdr), std::uint32_t(kPay)), core::PacketError::Ok);
    ASSERT_TRUE(p.frags_shared());  // the slot is referenced by the caller too
    EXPECT_TRUE(cells.receive(std::move(p)));
  }
  cells.poll(64);
  auto out = cells.take_output();
  EXPECT_EQ(cells.counters().bypassed, 0u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.segs, 4);
  EXPECT_EQ(out[0].len(), kHdr + 4 * kPay);
}

// ---- one Endpoint, four encapsulations ------------------------------------------------------

namespace wv = wire::virtio_net;
using tunnel::Drop;
using tunnel::Encap;

struct Mode {
  const char* name;
  Encap encap;
  bool v6;        // underlay
  bool rco;       // remcsumtx/remcsumrx (VXLAN, GUE)
  bool gre_opts;  // GRE key 42 + csum
};

tunnel::IpAddr addr(const char* s) { return *tunnel::IpAddr::parse(s); }

/// The endpoint of one side: `a` true = the sender (local .1 / ::1).
std::unique_ptr<tunnel::Endpoint> make(const Mode& m, bool a, tunnel::EndpointOptions o = {}) {
  const auto l = addr(m.v6 ? (a ? "fd00::1" : "fd00::2") : (a ? "10.0.0.1" : "10.0.0.2"));
  const auto r = addr(m.v6 ? (a ? "fd00::2" : "fd00::1") : (a ? "10.0.0.2" : "10.0.0.1"));
  if (m.encap == Encap::Vxlan) {
    tunnel::VxlanConfig c;
    c.vni = 42;
    c.local = l;
    c.remotes = {r};
    c.remcsum_tx = c.remcsum_rx = m.rco;
    return std::make_unique<tunnel::Endpoint>(c, o);
  }
  if (m.encap == Encap::Gue) {
    tunnel::GueConfig c;
    c.local = l;
    c.remote = r;
    c.port = 5555;
    c.remcsum_tx = c.remcsum_rx = m.rco;
    return std::make_unique<tunnel::Endpoint>(c, o);
  }
  tunnel::GreConfig c;
  c.local = l;
  c.remote = r;
  if (m.gre_opts) {
    c.ikey = c.okey = 42;
    c.icsum = c.ocsum = true;
  }
  return std::make_unique<tunnel::Endpoint>(c, o);
}

const Mode kModes[] = {
    {"vxlan", Encap::Vxlan, false, false, false}, {"vxlan6", Encap::Vxlan, true, false, false},
    {"vxlan-rco", Encap::Vxlan, false, true, false}, {"gue", Encap::Gue, false, false, false},
    {"gue6", Encap::Gue, true, false, false},      {"gue-rco", Encap::Gue, false, true, false},
    {"gre", Encap::Gre, false, false, false},       {"gre-key-csum", Encap::Gre, false, false, true},
    {"ip6gre", Encap::Ip6gre, true, false, false},  {"ip6gre-key-csum", Encap::Ip6gre, true, false, true},
};

bool ethernet(const Mode& m) { return m.encap == Encap::Vxlan; }

/// A TSO super-packet (NEEDS_CSUM, seed in the TCP field) as the device delivers it: an
/// Ethernet frame for VXLAN, the IP packet for GUE/GRE; its virtio_net_hdr (S-7, S-8).
std::pair<wv::Hdr, std::vector<std::uint8_t>> tso(const Mode& m, bool v6_inner, std::size_t payload,
                                                  std::uint16_t mss) {
  auto f = tcp_frame(payload, v6_inner, true);
  std::size_t link = 14;
  if (!ethernet(m)) {
    f.erase(f.begin(), f.begin() + 14);
    link = 0;
  }
  wv::Hdr h{};
  h.flags = wv::kFlagNeedsCsum;
  h.gso_type = v6_inner ? wv::kGsoTcpv6 : wv::kGsoTcpv4;
  h.gso_size = mss;
  h.csum_start = std::uint16_t(link + (v6_inner ? 40 : 20));
  h.csum_offset = 16;
  h.hdr_len = std::uint16_t(h.csum_start + 20);
  return {h, f};
}

/// TCP payload of an IP packet at `ip` (RFC 791 IHL/total length, RFC 8200 payload length,
/// RFC 793 data offset).
std::vector<std::uint8_t> tcp_payload(const std::uint8_t* ip, std::size_t n) {
  if (n < 40) return {};
  const bool v6 = (ip[0] >> 4) == 6;
  const std::size_t l3 = v6 ? 40 : std::size_t(ip[0] & 0xf) * 4;
  const std::size_t tot = v6 ? 40 + get16(ip + 4) : get16(ip + 2);
  if (tot > n || l3 + 20 > tot) return {};
  const std::size_t doff = std::size_t(ip[l3 + 12] >> 4) * 4;
  return std::vector<std::uint8_t>(ip + l3 + doff, ip + tot);
}

/// The tunnel header length of a datagram by its first bytes (RFC 7348 §5: 8; GUE
/// draft-ietf-intarea-gue §3.1: 4 + hlen·4; RFC 2784/2890: 4 + 4 per C/K/S bit).
std::size_t tunnel_hdr_len(const Mode& m, const std::uint8_t* d) {
  if (m.encap == Encap::Vxlan) return 8;
  if (m.encap == Encap::Gue) return 4 + std::size_t(d[0] & 0x1f) * 4;
  return 4 + ((d[0] & 0x80) ? 4 : 0) + ((d[0] & 0x20) ? 4 : 0) + ((d[0] & 0x10) ? 4 : 0);
}

// One transmit shape and one receive shape for every encapsulation. A TSO
// super-packet through A's transmit becomes ceil(payload / mss) datagrams, each a tunnel
// header followed by one inner segment with a valid TCP checksum (RFC 793; or, with RCO, the
// segment's pseudo-header seed, W-28/X-31), in order; the trains hold equal-size datagrams
// (udp(7) UDP_SEGMENT). Every datagram into B's receive_train, then rx_flush: GRO after
// decapsulation through gro_cells (W-12/W-19) gives back all payload bytes in fewer frames.
//
// The same with the frame handed with its read buffer (as the daemon reads the
// device): the payload is segmented from there, with the same result, and no reference to
// the buffer is left when transmit returns (the device reads the next frame into it).
TEST(TunnelEndpointShape, OneShapeForEveryEncapsulation) {
  for (bool in_place : {false, true})
  for (const auto& m : kModes)
    for (bool v6_inner : {false, true}) {
      SCOPED_TRACE(std::string(m.name) + (v6_inner ? " inner IPv6" : " inner IPv4") +
                   (in_place ? ", in the read buffer" : ""));
      const std::size_t payload = 12000;
      const std::uint16_t mss = 1200;
      auto A = make(m, true), B = make(m, false);
      EXPECT_EQ(A->encap(), m.encap);
      EXPECT_EQ(A->encapsulation().socket(),
                m.encap == Encap::Gre || m.encap == Encap::Ip6gre ? tunnel::SocketKind::RawIp
                                                                  : tunnel::SocketKind::Udp);
      EXPECT_EQ(A->encapsulation().link(),
                ethernet(m) ? wire::LinkType::Ethernet : wire::LinkType::RawIp);
      auto [h, f] = tso(m, v6_inner, payload, mss);
      // the frame 12 bytes into its buffer, behind a virtio_net_hdr's place
      std::vector<std::uint8_t> rd(12, 0xEE);
      rd.insert(rd.end(), f.begin(), f.end());
      const auto owner = core::Buffer::make(rd);
      std::vector<tunnel::TxTrain> trains;
      A->transmit(h, std::span<const std::uint8_t>(owner->bytes).subspan(12), 1, trains,
                  in_place ? &owner : nullptr);
      EXPECT_EQ(owner.use_count(), 1) << "a reference to the read buffer outlived transmit";
      EXPECT_EQ(A->counters().drops_total(), 0u);
      EXPECT_EQ(A->counters().tx_gso_super, 1u);
      std::size_t n = 0;
      std::vector<std::uint8_t> got;
      for (const auto& t : trains) {
        EXPECT_EQ(t.remote, addr(m.v6 ? "fd00::2" : "10.0.0.2"));
        for (std::size_t off = 0; off < t.buf.size(); off += t.seg_size, ++n) {
          const std::size_t len = std::min<std::size_t>(t.seg_size, t.buf.size() - off);
          if (off + t.seg_size < t.buf.size()) {
            EXPECT_EQ(len, t.seg_size);  // only the last is shorter
          }
          const std::uint8_t* d = t.buf.data() + off;
          const std::size_t th = tunnel_hdr_len(m, d);
          ASSERT_GT(len, th + (ethernet(m) ? 14u : 0u) + 40u);
          const std::uint8_t* inner = d + th;
          const std::uint8_t* ip = inner + (ethernet(m) ? 14 : 0);
          const std::size_t iplen = len - th - (ethernet(m) ? 14 : 0);
          const std::size_t l3 = v6_inner ? 40 : 20;
          const std::uint16_t field = get16(ip + l3 + 16);
          if (m.rco) {  // the field is this segment's seed (C-12: folded pseudo-header sum)
            std::vector<std::uint8_t> fr(14, 0);
            fr[12] = v6_inner ? 0x86 : 0x08, fr[13] = v6_inner ? 0xDD : 0x00;
            fr.insert(fr.end(), ip, ip + iplen);
            EXPECT_EQ(field, tcp_seed(fr.data(), std::uint32_t(iplen - l3)));
          } else {
            std::vector<std::uint8_t> fr(14, 0);
            fr[12] = v6_inner ? 0x86 : 0x08, fr[13] = v6_inner ? 0xDD : 0x00;
            fr.insert(fr.end(), ip, ip + iplen);
            EXPECT_TRUE(tcp_csum_ok(fr.data(), fr.size())) << "datagram " << n;
          }
          if (m.gre_opts) {
            EXPECT_EQ(d[0], 0xA0);  // C | K (RFC 2784 / 2890)
            std::vector<std::uint8_t> dg(d, d + len);
            EXPECT_EQ(csum::ip_compute_csum(dg.data(), dg.size()), 0) << "GRE checksum (V-13)";
          }
          auto p = tcp_payload(ip, iplen);
          EXPECT_LE(p.size(), mss);
          got.insert(got.end(), p.begin(), p.end());
        }
        B->receive_train(t.buf, t.count > 1 ? t.seg_size : 0, addr(m.v6 ? "fd00::1" : "10.0.0.1"),
                         tunnel::OuterCsum::Present, 2);
      }
      EXPECT_EQ(n, (payload + mss - 1) / mss);
      std::vector<std::uint8_t> want(f.end() - long(payload), f.end());
      EXPECT_EQ(got, want);
      std::vector<tunnel::TapFrame> frames;
      B->rx_flush(3, frames);
      EXPECT_EQ(B->counters().drops_total(), 0u);
      EXPECT_EQ(B->counters().rx_datagrams, n);
      EXPECT_EQ(B->gro_cells().counters().queued, n);  // GRO after decap through gro_cells
      EXPECT_LT(frames.size(), n);                      // merged
      std::vector<std::uint8_t> back;
      for (const auto& fr : frames) {
        const std::size_t link = ethernet(m) ? 14 : 0;
        const auto fb = fr.pkt->to_bytes();
        auto p = tcp_payload(fb.data() + link, fb.size() - link);
        back.insert(back.end(), p.begin(), p.end());
      }
      EXPECT_EQ(back, want);
    }
}

// The device's gso_max_segs from segs_per_train. udp(7): one UDP_SEGMENT send
// carries at most 65,535 − 20 − 8 payload bytes (and 64 segments); a datagram is the inner L3
// packet (at most the device MTU, 1500 − overhead as the daemon sets it) plus inner Ethernet
// and VXLAN (14 + 8), or GUE (4, + 8 with RCO). A TSO frame of that many full segments leaves
// as one train; one segment more needs a second. GRE/ip6gre are not sent in trains: 0.
TEST(TunnelTrain, SegsPerTrainIsWhatOneUdpSegmentSendCarries) {
  for (const auto& m : kModes) {
    SCOPED_TRACE(m.name);
    auto A = make(m, true);
    const int mtu = 1500 - A->encapsulation().overhead();
    const std::uint32_t segs = A->segs_per_train(mtu);
    if (m.encap == Encap::Gre || m.encap == Encap::Ip6gre) {
      EXPECT_EQ(segs, 0u);
      continue;
    }
    const int tun_hdr = m.encap == Encap::Vxlan ? 14 + 8 : 4 + (m.rco ? 8 : 0);
    EXPECT_EQ(segs, std::uint32_t((65535 - 20 - 8) / (mtu + tun_hdr)));
    const std::uint16_t mss = std::uint16_t(mtu - 20 - 20);  // inner IPv4 + TCP, no options
    for (std::uint32_t n : {segs, segs + 1}) {
      auto [h, f] = tso(m, false, std::size_t(n) * mss, mss);
      std::vector<tunnel::TxTrain> trains;
      A->transmit(h, f, 1, trains);
      std::uint32_t dgrams = 0;
      for (const auto& t : trains) dgrams += t.count;
      EXPECT_EQ(dgrams, n);
      EXPECT_EQ(trains.size(), n == segs ? 1u : 2u);
      A->recycle(trains);
    }
  }
}

// Checksum summed in the train: a TCP segment whose sum folds to 0 carries 0x0000,
// as tcp_gso_segment writes it (gso_make_checksum, no CSUM_MANGLED_0; include/net/gso.h), and
// is valid (RFC 1071: the sum over the segment, field included, is 0xFFFF). The input is
// made so: a zero payload word of the first segment is set to that segment's checksum, which
// makes its sum +0 (RFC 1624 §3: 0xFFFF and 0x0000 are the two zeros).
TEST(TunnelTrain, TcpSegmentWhoseSumIsZeroCarriesZero) {
  const Mode m = kModes[0];  // vxlan
  auto [h, f] = tso(m, false, 2400, 1200);
  const std::size_t pay = 14 + 20 + 20, field_in_dgram = 8 + 14 + 20 + 16;
  f[pay] = f[pay + 1] = 0;
  std::vector<tunnel::TxTrain> trains;
  make(m, true)->transmit(h, f, 1, trains);
  ASSERT_FALSE(trains.empty());
  const std::uint16_t c = get16(trains[0].buf.data() + field_in_dgram);
  ASSERT_NE(c, 0u);
  f[pay] = std::uint8_t(c >> 8), f[pay + 1] = std::uint8_t(c);
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "in the read buffer" : "copied");
    const auto owner = core::Buffer::make(f);
    std::vector<tunnel::TxTrain> t2;
    make(m, true)->transmit(h, owner->bytes, 1, t2, in_place ? &owner : nullptr);
    ASSERT_FALSE(t2.empty());
    const std::uint8_t* d = t2[0].buf.data();
    EXPECT_EQ(get16(d + field_in_dgram), 0x0000);
    std::vector<std::uint8_t> seg(d + 8, d + t2[0].seg_size);
    EXPECT_TRUE(tcp_csum_ok(seg.data(), seg.size()));
  }
}

// Sends per GB: the frames of one device read batch are handed to transmit() one
// after the other into one vector; a frame continues the previous frame's last train when
// that train is still open and bound the same way. udp(7) UDP_SEGMENT: every datagram of a
// send is gso_size bytes except the last, which may be shorter, so a shorter datagram ends
// its train and a longer one starts a new one. One flow's pure ACKs (all the same size)
// thus leave as one send. The datagrams are the bytes, in the order, that one-frame-per-call
// transmits give, and every counter counts each datagram once. After recycle() nothing is
// continued.
TEST(TunnelTrain, SameSizeFramesOfOneBatchShareATrain) {
  for (const auto& m : kModes) {
    SCOPED_TRACE(m.name);
    // A pure ACK (len 0) or a data segment of one flow (TCP source port `sport`).
    auto frame = [&](std::size_t len, std::uint32_t seq, std::uint16_t sport = 40000) {
      auto f = tcp_frame(len, false, false, seq);
      put16(f, 14 + 20, sport);
      ack_only(f);  // also writes the checksum again
      if (!ethernet(m)) f.erase(f.begin(), f.begin() + 14);
      return f;
    };
    // Ack, ack, ack, data, ack, ack: [A A A] [D A] [A].
    const std::vector<std::vector<std::uint8_t>> batch = {
        frame(0, 1000), frame(0, 1000), frame(0, 1000), frame(100, 1000), frame(0, 1100), frame(0, 1100)};
    auto A = make(m, true), R = make(m, true);
    std::vector<tunnel::TxTrain> trains;
    for (const auto& f : batch) A->transmit(wv::Hdr{}, f, 1, trains);
    ASSERT_EQ(trains.size(), 3u);
    EXPECT_EQ(trains[0].count, 3u);
    EXPECT_EQ(trains[1].count, 2u);
    EXPECT_EQ(trains[2].count, 1u);
    EXPECT_GT(trains[1].seg_size, trains[0].seg_size);
    // The same bytes as one frame per call (R, its trains recycled after each frame).
    std::vector<std::uint8_t> joined, one_by_one;
    std::size_t dgram_bytes = 0;
    for (const auto& t : trains) {
      joined.insert(joined.end(), t.buf.begin(), t.buf.end());
      dgram_bytes += t.size();
      for (std::size_t off = 0; off + t.seg_size < t.buf.size(); off += t.seg_size)
        EXPECT_EQ(std::min<std::size_t>(t.seg_size, t.buf.size() - off), t.seg_size);
    }
    for (const auto& f : batch) {
      std::vector<tunnel::TxTrain> one;
      R->transmit(wv::Hdr{}, f, 1, one);
      ASSERT_EQ(one.size(), 1u);
      ASSERT_EQ(one[0].count, 1u);
      one_by_one.insert(one_by_one.end(), one[0].buf.begin(), one[0].buf.end());
      R->recycle(one);
    }
    EXPECT_EQ(joined, one_by_one);
    EXPECT_EQ(A->counters().tx_frames, batch.size());
    EXPECT_EQ(A->counters().tx_datagrams, batch.size());
    EXPECT_EQ(A->counters().tx_dgram_bytes, dgram_bytes);
    EXPECT_EQ(A->counters().tx_dgram_bytes, R->counters().tx_dgram_bytes);
    ASSERT_EQ(A->peers().size(), 1u);
    EXPECT_EQ(A->peers().begin()->second.ctr.tx_datagrams, batch.size());
    EXPECT_EQ(A->peers().begin()->second.ctr.tx_bytes, dgram_bytes);
    // Sent and recycled: the next batch starts its own train.
    A->recycle(trains);
    A->transmit(wv::Hdr{}, batch[0], 1, trains);
    A->transmit(wv::Hdr{}, batch[1], 1, trains);
    ASSERT_EQ(trains.size(), 1u);
    EXPECT_EQ(trains[0].count, 2u);
    A->recycle(trains);
    // VXLAN: another flow has another UDP source port (udp_flow_src_port), so another train
    // (another socket); the first flow's next ACK still continues the first flow's train only
    // if it is the last one.
    if (m.encap == Encap::Vxlan) {
      A->transmit(wv::Hdr{}, frame(0, 1000), 1, trains);
      A->transmit(wv::Hdr{}, frame(0, 1000, 40001), 1, trains);
      A->transmit(wv::Hdr{}, frame(0, 1000), 1, trains);
      ASSERT_EQ(trains.size(), 3u);
      ASSERT_NE(trains[0].src_port, trains[1].src_port);
      EXPECT_EQ(trains[0].src_port, trains[2].src_port);
      for (const auto& t : trains) EXPECT_EQ(t.count, 1u);
      A->recycle(trains);
    }
  }
}

// One stats document. The same keys for every encapsulation, the counters
// behind them, drops by name (every reason's to_string is distinct), and the per-peer part.
TEST(TunnelEndpointShape, OneStatsDocumentForEveryEncapsulation) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < tunnel::kDropCount; ++i) names.insert(std::string(to_string(Drop(i))));
  EXPECT_EQ(names.size(), tunnel::kDropCount);
  for (const auto& m : kModes) {
    SCOPED_TRACE(m.name);
    auto A = make(m, true);
    std::vector<tunnel::TxTrain> trains;
    A->transmit(wv::Hdr{}, std::vector<std::uint8_t>(ethernet(m) ? 10 : 3, 0), 1, trains);  // too short
    auto j = A->stats();
    for (const char* k : {"encap", "tx", "rx", "drops", "drops_total", "gso", "gro", "gro_cells", "peers"})
      EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j["encap"], std::string(to_string(m.encap)));
    EXPECT_EQ(j["tx"]["frames"], 1u);
    EXPECT_EQ(j["drops_total"], 1u);
    EXPECT_EQ(j["drops"][ethernet(m) ? "tx_not_ethernet" : "tx_not_ip"], 1u);
    for (const char* k : {"datagrams", "gso_super_packets", "rco", "csum_sw", "gre_csum", "flooded"})
      EXPECT_TRUE(j["tx"].contains(k)) << k;
    for (const char* k : {"datagrams", "frames", "gro_merged", "gre_csum_ok", "ecn_ce"})
      EXPECT_TRUE(j["rx"].contains(k)) << k;
    EXPECT_EQ(j.contains("fdb"), ethernet(m));
    const std::string peer = m.v6 ? "fd00::2" : "10.0.0.2";
    ASSERT_TRUE(j["peers"].contains(peer));
    EXPECT_EQ(j["peers"][peer]["tx_datagrams"], 0u);
  }
}

// Each remote is a Peer owned by the endpoint. VXLAN: the configured remotes
// from the start; a remote that sends a valid datagram becomes a (learned) peer with its
// counters and FDB entries (vxlan_snoop learned the inner source MAC at that address);
// GUE/GRE: the one remote, and a datagram from another source is dropped
// (ip_tunnel_lookup finds no tunnel: rx_wrong_source) without creating a peer.
TEST(TunnelEndpointShape, PeersAreOwnedByTheEndpoint) {
  tunnel::VxlanConfig c;
  c.vni = 42;
  c.local = addr("10.0.0.1");
  c.remotes = {addr("10.0.0.2"), addr("10.0.0.3")};
  c.fdb_limits.from = tunnel::LearnFrom::Any;  // learning from the unconfigured 10.0.0.9
  tunnel::Endpoint ep(c);
  ASSERT_EQ(ep.peers().size(), 2u);
  for (const auto& [a, p] : ep.peers()) {
    EXPECT_TRUE(p.configured);
    EXPECT_EQ(p.addr, a);
  }
  // One frame to an unknown MAC is flooded: one datagram to each configured peer.
  std::vector<tunnel::TxTrain> out;
  ep.transmit(wv::Hdr{}, tcp_frame(100), 1, out);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& [a, p] : ep.peers()) {
    EXPECT_EQ(p.ctr.tx_datagrams, 1u);
    EXPECT_EQ(p.ctr.tx_bytes, 8u + tcp_frame(100).size());
  }
  // A datagram from 10.0.0.9 (VXLAN header, RFC 7348 §5: I flag, VNI 42).
  std::vector<std::uint8_t> d = {0x08, 0, 0, 0, 0, 0, 42, 0};
  auto inner = tcp_frame(100, false, false, 1000, 7);  // source MAC 02:00:00:00:00:07
  d.insert(d.end(), inner.begin(), inner.end());
  ep.receive(d, addr("10.0.0.9"), tunnel::OuterCsum::Present, 2);
  d[6] = 43;  // wrong VNI: dropped, counted on the peer too
  ep.receive(d, addr("10.0.0.9"), tunnel::OuterCsum::Present, 3);
  const auto* p = ep.peer(addr("10.0.0.9"));
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->configured);
  EXPECT_EQ(p->ctr.rx_datagrams, 2u);
  EXPECT_EQ(p->ctr.rx_dropped, 1u);
  EXPECT_EQ(p->ctr.fdb_learned, 1u);
  EXPECT_EQ(ep.fdb_entries(*p), 1u);
  EXPECT_EQ(ep.counters().drops[std::size_t(Drop::RxWrongVni)], 1u);
  EXPECT_EQ(ep.stats()["peers"]["10.0.0.9"]["rx_datagrams"], 2u);

  tunnel::GreConfig g;
  g.local = addr("10.0.0.1");
  g.remote = addr("10.0.0.2");
  tunnel::Endpoint gre(g);
  ASSERT_EQ(gre.peers().size(), 1u);
  std::vector<std::uint8_t> b = {0, 0, 0x08, 0};  // GRE, protocol IPv4 (RFC 2784)
  auto ip = tcp_frame(10);
  b.insert(b.end(), ip.begin() + 14, ip.end());
  gre.receive(b, addr("10.0.0.9"), tunnel::OuterCsum::Unknown, 1);
  EXPECT_EQ(gre.counters().drops[std::size_t(Drop::RxWrongSource)], 1u);
  EXPECT_EQ(gre.peer(addr("10.0.0.9")), nullptr);
  gre.receive(b, addr("10.0.0.2"), tunnel::OuterCsum::Unknown, 2);
  EXPECT_EQ(gre.peer(addr("10.0.0.2"))->ctr.rx_datagrams, 1u);
  EXPECT_EQ(gre.peer(addr("10.0.0.2"))->ctr.rx_dropped, 0u);
}

/// VXLAN datagram of `k` consecutive ACK-only TCP segments of `pay` bytes, laid end to end
/// in one receive slot at `seg` bytes each (as UDP_GRO delivers a train).
core::BufferRef vxlan_slot(std::size_t k, std::size_t pay, std::size_t& seg) {
  std::vector<std::uint8_t> all;
  for (std::size_t i = 0; i < k; ++i) {
    auto f = tcp_frame(pay, false, false, std::uint32_t(1000 + i * pay));
    ack_only(f);
    std::vector<std::uint8_t> d = {0x08, 0, 0, 0, 0, 0, 42, 0};
    d.insert(d.end(), f.begin(), f.end());
    seg = d.size();
    all.insert(all.end(), d.begin(), d.end());
  }
  return core::Buffer::make(all);
}

// W-12 through the endpoint: the zero-copy receive (inner payload left in the receive slot as
// a fragment) reaches GRO; 16 segments of one flow leave as one aggregate (64 KiB rule not
// reached), nothing bypassed.
TEST(TunnelEndpointShape, ZeroCopyReceiveIsAggregatedThroughGroCells) {
  tunnel::VxlanConfig c;
  c.vni = 42;
  c.local = addr("10.0.0.2");
  c.remotes = {addr("10.0.0.1")};
  tunnel::EndpointOptions o;
  tunnel::Endpoint ep(c, o);
  std::size_t seg = 0;
  auto slot = vxlan_slot(16, 1000, seg);
  ep.receive_train(slot, 0, slot->bytes.size(), std::uint16_t(seg), addr("10.0.0.1"),
                   tunnel::OuterCsum::Present, 1);
  std::vector<tunnel::TapFrame> out;
  ep.rx_flush(2, out);
  EXPECT_EQ(ep.gro_cells().counters().bypassed, 0u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].size(), 14u + 20 + 20 + 16 * 1000);
  EXPECT_EQ(out[0].vnet.gso_type, wv::kGsoTcpv4);
  EXPECT_EQ(ep.counters().rx_gro_merged, 15u);
}

// gro_cells backlog (netdev_max_backlog, W-12): a batch longer than the backlog is polled
// early instead of dropped — every byte arrives, nothing counted as rx_gro_cells_dropped.
TEST(TunnelEndpointShape, GroCellsBacklogIsPolledNotDropped) {
  tunnel::VxlanConfig c;
  c.vni = 42;
  c.local = addr("10.0.0.2");
  c.remotes = {addr("10.0.0.1")};
  tunnel::EndpointOptions o;
  o.gro_backlog = 4;
  tunnel::Endpoint ep(c, o);
  std::size_t seg = 0;
  auto slot = vxlan_slot(10, 500, seg);
  ep.receive_train(std::span<const std::uint8_t>(slot->bytes), std::uint16_t(seg), addr("10.0.0.1"),
                   tunnel::OuterCsum::Present, 1);
  std::vector<tunnel::TapFrame> out;
  ep.rx_flush(2, out);
  EXPECT_EQ(ep.counters().drops_total(), 0u);
  std::size_t bytes = 0;
  for (const auto& f : out) bytes += f.size() - (14 + 20 + 20);
  EXPECT_EQ(bytes, 10u * 500);
  EXPECT_GE(out.size(), 3u);  // polled at 4 and 8 queued frames, then at rx_flush
}

}  // namespace

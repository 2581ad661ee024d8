// GRO rules that the gro.c table does not isolate, one test per rule (spec §5–§8): the checksum
// rules G-4/G-5/G-11/G-12 (which packets need software validation, how csum_level counts
// checksums outside in, COMPLETE with a wrong value), TCP T-2/T-3/T-7/T-14/T-19/T-20, IPv4 and
// IPv6 N-3/N-6/N-13/N-15/N-16 (with W-2; outer IDs as on 6.18), and UDP U-1/U-7. Expected outcomes are the spec's words
// turned into counts and bytes; the T-20 seed and the N-5 header checksum are recomputed here with
// a plain RFC 1071 loop, independent of ofld::csum.
#include <gtest/gtest.h>

#include "gro_test_util.hpp"

namespace {

using namespace ofld;
using namespace ofld::grotest;
using Bytes = std::vector<std::uint8_t>;
using core::CsumComplete;
using core::CsumNone;
using core::CsumPartial;
using core::CsumUnnecessary;
using offload::GroReason;

struct Result {
  std::vector<core::Packet> out;
  gro::Counters c;
  std::size_t not_merged(GroReason r) const { return c.not_merged[std::size_t(r)]; }
};

core::Packet pkt(const Bytes& f, core::CsumState s = CsumNone{}) {
  core::Packet p = core::Packet::from_bytes(f);
  p.csum = s;
  return p;
}

template <class... P>
std::vector<core::Packet> vec(P&&... p) {
  std::vector<core::Packet> v;
  (v.push_back(std::forward<P>(p)), ...);
  return v;
}

Result run_pkts(std::vector<core::Packet> in, gro::EngineOptions o = {}) {
  o.batch = 100000;
  gro::Engine e(o);
  for (auto& p : in) e.receive(std::move(p));
  e.flush_all();
  return {e.take_output(), e.counters()};
}

gro::EngineOptions vxlan_opts() {
  gro::EngineOptions o;
  o.config.udp_tunnels.push_back({4789, 4789, false, false});
  return o;
}

Tcp seg(bool v6, std::uint32_t seq_off, std::size_t payload = 100) {
  return tcp_seg(v6, seq_off, payload);
}

// RFC 1071 sum of big-endian 16-bit words, folded, not complemented (independent of ofld::csum).
std::uint16_t fold_sum(const std::vector<std::uint8_t>& b) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < b.size(); i += 2)
    s += std::uint32_t(b[i]) << 8 | (i + 1 < b.size() ? b[i + 1] : 0);
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return std::uint16_t(s);
}

// Recompute the TCP checksum of an Ethernet/IPv4/TCP frame in place (RFC 9293 §3.1).
void fix_tcp4_csum(Bytes& f) {
  const std::size_t ip = 14, th = ip + std::size_t(f[ip] & 0xF) * 4;
  const std::size_t tlen = std::size_t(get16(&f[ip + 2])) - (th - ip);
  f[th + 16] = f[th + 17] = 0;
  Bytes ph(f.begin() + std::ptrdiff_t(ip + 12), f.begin() + std::ptrdiff_t(ip + 20));
  ph.insert(ph.end(), {0, 6, std::uint8_t(tlen >> 8), std::uint8_t(tlen)});
  ph.insert(ph.end(), f.begin() + std::ptrdiff_t(th), f.begin() + std::ptrdiff_t(th + tlen));
  const std::uint16_t c = std::uint16_t(~fold_sum(ph));
  f[th + 16] = std::uint8_t(c >> 8);
  f[th + 17] = std::uint8_t(c);
}

std::size_t payload_of(const core::Packet& p) { return tcp_payload(p); }

}  // namespace

// G-5 / G-11: CHECKSUM_UNNECESSARY with csum_level L vouches for L+1 checksums, outermost first.
// Plain TCP, level 0: the TCP checksum is covered, so a wrong one does not stop the merge. VXLAN,
// level 0: only the outer UDP checksum is covered; the inner TCP checksum must be validated and
// a wrong one flushes. VXLAN, level 1: both covered, the flow merges.
TEST(GroRules, G5_G11_CsumLevelCountsChecksumsOutsideIn) {
  for (bool v6 : {false, true}) {
    Tcp a = seg(v6, 0), b = seg(v6, 100);
    a.bad_csum = b.bad_csum = true;
    auto r = run_pkts(vec(pkt(tcp_frame(a), CsumUnnecessary{}), pkt(tcp_frame(b), CsumUnnecessary{})));
    ASSERT_EQ(r.out.size(), 1u) << v6;
    EXPECT_EQ(payload_of(r.out[0]), 200u);
    EXPECT_EQ(r.out[0].gso.segs, 2u);

    for (unsigned level : {0u, 1u}) {
      auto r2 = run_pkts(vec(pkt(vxlan(v6, tcp_frame(a)), CsumUnnecessary{core::CsumLevel(level)}),
                          pkt(vxlan(v6, tcp_frame(b)), CsumUnnecessary{core::CsumLevel(level)})),
                         vxlan_opts());
      if (level == 0) {
        EXPECT_EQ(r2.out.size(), 2u) << "outer v6 " << v6 << ": inner checksum not validated";
        EXPECT_EQ(r2.not_merged(GroReason::Checksum), 2u);
      } else {
        ASSERT_EQ(r2.out.size(), 1u) << "outer v6 " << v6;
        EXPECT_EQ(r2.out[0].gso.segs, 2u);
      }
    }
  }
}

// G-11: a CHECKSUM_PARTIAL packet whose csum_start is at (or after) the header being validated
// needs no validation — its checksum field holds a seed, not a checksum. The same bytes as
// CHECKSUM_NONE (C-1: nothing verified) must be validated, fail, and are delivered unmerged (T-1).
TEST(GroRules, G11_PartialAtTransportHeaderNeedsNoValidation) {
  for (bool v6 : {false, true}) {
    Bytes f0 = tcp_frame(seg(v6, 0)), f1 = tcp_frame(seg(v6, 100));
    const std::size_t th = tcp_offset(f0);
    for (Bytes* f : {&f0, &f1}) (*f)[th + 16] = 0x12, (*f)[th + 17] = 0x34;  // a seed, not a sum
    const CsumPartial part{core::pos_t(th), 16, false};
    auto r = run_pkts(vec(pkt(f0, part), pkt(f1, part)));
    ASSERT_EQ(r.out.size(), 1u) << v6;
    EXPECT_EQ(payload_of(r.out[0]), 200u);
    EXPECT_EQ(r.not_merged(GroReason::Checksum), 0u);

    auto n = run_pkts(vec(pkt(f0), pkt(f1)));
    EXPECT_EQ(n.out.size(), 2u);
    EXPECT_EQ(n.not_merged(GroReason::Checksum), 2u);
    EXPECT_EQ(n.out[0].to_bytes(), f0);  // delivered as received
  }
}

// G-11 (zero allowed) / U-1 / U-4: an outer UDP checksum of zero is not validated and the inner
// flow merges; a wrong non-zero outer checksum fails validation and nothing merges.
TEST(GroRules, G11_U1_ZeroOuterUdpChecksumSkippedWrongOneFlushes) {
  Bytes i0 = tcp_frame(seg(false, 0)), i1 = tcp_frame(seg(false, 100));
  auto z = run_pkts(vec(pkt(vxlan(false, i0, 42, false)), pkt(vxlan(false, i1, 42, false))), vxlan_opts());
  ASSERT_EQ(z.out.size(), 1u);
  EXPECT_EQ(z.out[0].gso.segs, 2u);

  Bytes o0 = vxlan(false, i0), o1 = vxlan(false, i1);
  const std::size_t uh = 14 + 20;
  for (Bytes* f : {&o0, &o1}) (*f)[uh + 7] ^= 0x5A;  // corrupt the outer UDP checksum
  auto w = run_pkts(vec(pkt(o0), pkt(o1)), vxlan_opts());
  EXPECT_EQ(w.out.size(), 2u);
  EXPECT_EQ(w.not_merged(GroReason::Checksum), 2u);
}

// G-12: CHECKSUM_COMPLETE is used when its value proves the checksum; when it does not (a wrong
// COMPLETE value) the rest of the packet is summed in software, so a valid TCP checksum still
// merges. A wrong TCP checksum with a COMPLETE value that is the true sum of the bytes fails.
TEST(GroRules, G12_CompleteUsedOrRecomputedInSoftware) {
  for (bool v6 : {false, true}) {
    Bytes f0 = tcp_frame(seg(v6, 0)), f1 = tcp_frame(seg(v6, 100));
    auto sum_of = [](const Bytes& f) { return CsumComplete{csum::csum_partial(f.data(), f.size(), 0)}; };
    auto good = run_pkts(vec(pkt(f0, sum_of(f0)), pkt(f1, sum_of(f1))));
    ASSERT_EQ(good.out.size(), 1u) << v6;
    EXPECT_EQ(payload_of(good.out[0]), 200u);

    auto wrong_value = run_pkts(vec(pkt(f0, CsumComplete{0x1234}), pkt(f1, CsumComplete{0x4321})));
    ASSERT_EQ(wrong_value.out.size(), 1u) << v6 << ": software recomputation must validate";
    EXPECT_EQ(payload_of(wrong_value.out[0]), 200u);

    Tcp a = seg(v6, 0), b = seg(v6, 100);
    a.bad_csum = b.bad_csum = true;
    Bytes g0 = tcp_frame(a), g1 = tcp_frame(b);
    auto bad = run_pkts(vec(pkt(g0, sum_of(g0)), pkt(g1, sum_of(g1))));
    EXPECT_EQ(bad.out.size(), 2u) << v6;
    EXPECT_EQ(bad.not_merged(GroReason::Checksum), 2u);
  }
}

// G-4: an already-GSO TCP packet enters GRO with count = gso_segs and keeps its gso_size as the
// flow's mss (T-10); a following segment of that size merges and the count adds up. A DODGY
// GSO packet is flushed and delivered as it came.
TEST(GroRules, G4_GsoInputCountsItsSegmentsDodgyIsFlushed) {
  Tcp nt = seg(false, 300, 100);
  nt.ip_id = 3;  // N-14: the ID advances by the aggregate's count (3), not by 1
  Bytes big = tcp_frame(seg(false, 0, 300)), next = tcp_frame(nt);
  const std::size_t th = tcp_offset(big);
  auto gso_pkt = [&](std::uint32_t extra) {
    core::Packet p = pkt(big, CsumPartial{core::pos_t(th), 16, false});
    p.gso = {100, 3, core::skb_gso::TCPV4 | extra};
    return p;
  };
  std::vector<core::Packet> in;
  in.push_back(gso_pkt(0));
  in.push_back(pkt(next));
  auto r = run_pkts(std::move(in));
  ASSERT_EQ(r.out.size(), 1u);
  EXPECT_EQ(r.out[0].gso.segs, 4u);
  EXPECT_EQ(r.out[0].gso.size, 100u);
  EXPECT_EQ(payload_of(r.out[0]), 400u);

  std::vector<core::Packet> in2;
  in2.push_back(gso_pkt(core::skb_gso::DODGY));
  auto d = run_pkts(std::move(in2));
  ASSERT_EQ(d.out.size(), 1u);
  EXPECT_EQ(d.not_merged(GroReason::GsoInput), 1u);
  EXPECT_EQ(d.out[0].to_bytes(), big);
  EXPECT_EQ(d.out[0].gso.segs, 3u);
}

// T-2: a TCP header whose data offset is below 5 words is flushed (checksum valid, so T-1 passes).
TEST(GroRules, T2_DataOffsetBelowFiveIsFlushed) {
  Bytes f0 = tcp_frame(seg(false, 0)), f1 = tcp_frame(seg(false, 100));
  for (Bytes* f : {&f0, &f1}) {
    (*f)[34 + 12] = 0x40;  // doff 4
    fix_tcp4_csum(*f);
  }
  auto r = run_pkts(vec(pkt(f0), pkt(f1)));
  EXPECT_EQ(r.out.size(), 2u);
  EXPECT_EQ(r.not_merged(GroReason::TcpHeader), 2u);
  EXPECT_EQ(r.out[0].to_bytes(), f0);
}

// T-3: flows differing only in their ports are told apart by the port word; interleaved, each
// aggregates on its own.
TEST(GroRules, T3_PortsSelectTheFlow) {
  for (bool v6 : {false, true}) {
    std::vector<core::Packet> in;
    for (std::uint32_t i = 0; i < 3; ++i)
      for (std::uint16_t sp : {1500, 1501}) {
        Tcp t = seg(v6, i * 100);
        t.sport = sp;
        in.push_back(pkt(tcp_frame(t)));
      }
    auto r = run_pkts(std::move(in));
    ASSERT_EQ(r.out.size(), 2u) << v6;
    for (auto& p : r.out) {
      EXPECT_EQ(p.gso.segs, 3u);
      EXPECT_EQ(payload_of(p), 300u);
    }
  }
}

// T-7: a different ack_seq does not merge; the held aggregate is completed (T-18) and the
// packet starts a flow of its own.
TEST(GroRules, T7_AckChangeCompletesTheFlow) {
  for (bool v6 : {false, true}) {
    Tcp a = seg(v6, 0), b = seg(v6, 100), c = seg(v6, 200);
    b.ack = c.ack = 101;
    auto r = run_pkts(vec(pkt(tcp_frame(a)), pkt(tcp_frame(b)), pkt(tcp_frame(c))));
    ASSERT_EQ(r.out.size(), 2u) << v6;
    EXPECT_EQ(payload_of(r.out[0]), 100u);
    EXPECT_EQ(payload_of(r.out[1]), 200u);
    EXPECT_EQ(r.not_merged(GroReason::Ack), 1u);
  }
}

// T-14 / G-16: when skb_gro_receive refuses (the merged datagram would reach 65536 bytes counted
// from the network header), the aggregate is completed and the packet starts a new flow.
// 1448-byte segments: IPv4 20+20+45×1448 = 65200 fits, a 46th does not; IPv6 40+20+45×1448 = 65220
// fits, a 46th does not. 50 segments → 45 + 5.
TEST(GroRules, T14_MergeRefusedStartsANewFlow) {
  for (bool v6 : {false, true}) {
    std::vector<core::Packet> in;
    for (std::uint32_t i = 0; i < 50; ++i) in.push_back(pkt(tcp_frame(seg(v6, i * 1448, 1448))));
    auto r = run_pkts(std::move(in));
    ASSERT_EQ(r.out.size(), 2u) << v6;
    EXPECT_EQ(r.out[0].gso.segs, 45u);
    EXPECT_EQ(payload_of(r.out[0]), 45u * 1448);
    EXPECT_EQ(r.out[1].gso.segs, 5u);
    EXPECT_EQ(r.not_merged(GroReason::SizeLimit), 1u);
  }
}

// T-17 / T-19: a packet with PSH that finds no flow to merge into is delivered at once, not held;
// the held flow of another connection stays held until the flush.
TEST(GroRules, T19_FlaggedPacketWithoutFlowIsDeliveredAtOnce) {
  Tcp a = seg(false, 0), b = seg(false, 0);
  b.sport = 1600;
  b.flags = 0x18;  // PSH|ACK
  Bytes fa = tcp_frame(a), fb = tcp_frame(b);
  auto r = run_pkts(vec(pkt(fa), pkt(fb)));
  ASSERT_EQ(r.out.size(), 2u);
  EXPECT_EQ(r.c.delivered_now, 1u);
  EXPECT_EQ(r.out[0].to_bytes(), fb);  // at once, before the flush delivers the held one
  EXPECT_EQ(r.out[1].to_bytes(), fa);
  EXPECT_EQ(r.out[1].gso.size, 0u);    // G-8: a single is delivered untouched
}

// T-20 / N-5 / §5.6: the completed TCPv4 aggregate is CHECKSUM_PARTIAL at the TCP header
// (+16), its checksum field holds the folded pseudo-header sum for the new TCP length (K-4),
// tot_len covers the aggregate and the IPv4 header checksum is valid; gso_type TCPV4, gso_size
// the first payload, gso_segs the count.
TEST(GroRules, T20_N5_CompletedAggregateState) {
  auto r = run_pkts(vec(pkt(tcp_frame(seg(false, 0))), pkt(tcp_frame(seg(false, 100))),
                     pkt(tcp_frame(seg(false, 200)))));
  ASSERT_EQ(r.out.size(), 1u);
  const core::Packet& p = r.out[0];
  const Bytes b = p.to_bytes();
  ASSERT_EQ(b.size(), 14u + 20 + 20 + 300);
  const auto* part = std::get_if<CsumPartial>(&p.csum);
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(p.csum_start_offset(), 34);
  EXPECT_EQ(part->csum_offset, 16u);
  EXPECT_EQ(p.gso.type & core::skb_gso::TCPV4, core::skb_gso::TCPV4);
  EXPECT_EQ(p.gso.size, 100u);
  EXPECT_EQ(p.gso.segs, 3u);
  EXPECT_EQ(get16(&b[16]), 340u);  // tot_len
  EXPECT_EQ(fold_sum(Bytes(b.begin() + 14, b.begin() + 34)), 0xFFFFu) << "IPv4 header checksum";
  Bytes ph(b.begin() + 26, b.begin() + 34);
  ph.insert(ph.end(), {0, 6, std::uint8_t(320 >> 8), std::uint8_t(320 & 0xFF)});
  EXPECT_EQ(get16(&b[34 + 16]), fold_sum(ph)) << "pseudo-header seed";
}

// N-3: packets that differ only in the destination address are different flows.
TEST(GroRules, N3_AddressesSeparateFlows) {
  std::vector<core::Packet> in;
  for (std::uint32_t i = 0; i < 2; ++i)
    for (std::uint8_t d : {100, 101}) {
      Tcp t = seg(false, i * 100);
      t.dst_last = d;
      in.push_back(pkt(tcp_frame(t)));
    }
  auto r = run_pkts(std::move(in));
  ASSERT_EQ(r.out.size(), 2u);
  for (auto& p : r.out) EXPECT_EQ(p.gso.segs, 2u);
}

// N-6: an IPv6 payload_len that does not match the bytes present (Ethernet padding behind the
// datagram) flushes; nothing merges and the frames are delivered as they came.
TEST(GroRules, N6_Ipv6PayloadLengthMismatchFlushes) {
  Tcp a = seg(true, 0, 10), b = seg(true, 10, 10);
  a.eth_pad_to = b.eth_pad_to = 14 + 40 + 20 + 10 + 6;
  Bytes fa = tcp_frame(a), fb = tcp_frame(b);
  auto r = run_pkts(vec(pkt(fa), pkt(fb)));
  ASSERT_EQ(r.out.size(), 2u);
  EXPECT_EQ(r.not_merged(GroReason::IpLength), 2u);
  EXPECT_EQ(r.out[0].to_bytes(), fa);
  EXPECT_EQ(r.out[1].to_bytes(), fb);
}

// N-13 / N-15 / W-2, as on the running kernel (6.18, spec §16): 6.12 ignored the ID of an outer
// IPv4 header with DF set (N-13); 6.18 checks outer IDs like any other (N-15, separate fixed-ID
// marks for outer and inner) — the kernel-verified conformance case vxlan-rx/ipv4/outer_random_id
// shows the underlay not merging such a stream. So: outer IDs that jump about (DF set) do not
// merge; a fixed outer ID with incrementing inner IDs merges. N-16: the inner header's ID rule
// applies too — inner IDs that neither increment nor stay fixed do not merge.
TEST(GroRules, N13_N15_N16_OuterAndInnerIdsChecked) {
  auto stream = [](const std::uint16_t* outer_ids, const std::uint16_t* inner_ids, std::uint32_t n) {
    std::vector<core::Packet> in;
    for (std::uint32_t i = 0; i < n; ++i) {
      Tcp t = seg(false, i * 100);
      t.ip_id = inner_ids[i];
      in.push_back(pkt(vxlan(false, tcp_frame(t), 42, true, outer_ids[i])));
    }
    return in;
  };
  const std::uint16_t jumping[] = {5, 900, 17, 40000}, fixed[] = {7, 7, 7, 7}, inc[] = {0, 1, 2, 3};
  auto r = run_pkts(stream(jumping, inc, 4), vxlan_opts());
  EXPECT_EQ(r.out.size(), 4u);
  EXPECT_EQ(r.not_merged(GroReason::IpId), 3u);

  auto f = run_pkts(stream(fixed, inc, 4), vxlan_opts());
  ASSERT_EQ(f.out.size(), 1u);
  EXPECT_EQ(f.out[0].gso.segs, 4u);

  const std::uint16_t inner_jumping[] = {3, 70, 9, 1};
  auto r2 = run_pkts(stream(inc, inner_jumping, 3), vxlan_opts());
  EXPECT_EQ(r2.out.size(), 3u);
  EXPECT_EQ(r2.not_merged(GroReason::IpId), 2u);
}

// U-7: UDP segment-mode flows are told apart by their ports; interleaved, each aggregates.
TEST(GroRules, U7_UdpPortsSelectTheFlow) {
  gro::EngineOptions o;
  o.config.udp_gro_fwd = true;
  std::vector<core::Packet> in;
  for (int i = 0; i < 3; ++i)
    for (std::uint16_t sp : {1500, 1501}) in.push_back(pkt(udp_frame(false, 200, false, sp)));
  auto r = run_pkts(std::move(in), o);
  ASSERT_EQ(r.out.size(), 2u);
  for (auto& p : r.out) {
    EXPECT_EQ(p.gso.segs, 3u);
    EXPECT_EQ(p.gso.type & core::skb_gso::UDP_L4, core::skb_gso::UDP_L4);
  }
}

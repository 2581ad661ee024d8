// Helpers for the GRO tests. The frames come from the one test frame builder
// (tests/common/frame_builder.hpp, preset fb::gro: packets shaped like
// tools/testing/selftests/net/gro.c, spec §13.1); its names are brought in here. The rest is
// engine plumbing (make_packet, run) and comparisons. The tests' expected values come from
// the spec tables.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/gro/engine.hpp"
#include "../common/frame_builder.hpp"
#include "packet_compare.hpp"

namespace ofld::grotest {

using fb::gro::eth_header;
using fb::gro::gre;
using fb::gro::ip_only;
using fb::gro::outer;
using fb::gro::Tcp;
using fb::gro::tcp_frame;
using fb::gro::tcp_l3;
using fb::gro::tcp_seg;
using fb::gro::udp_frame;
using fb::gro::udp_l4;
using fb::gro::vxlan;

inline void put16(std::vector<std::uint8_t>& v, std::size_t at, std::uint16_t x) {
  v[at] = std::uint8_t(x >> 8);
  v[at + 1] = std::uint8_t(x);
}
inline void put32(std::vector<std::uint8_t>& v, std::size_t at, std::uint32_t x) {
  put16(v, at, std::uint16_t(x >> 16));
  put16(v, at + 2, std::uint16_t(x));
}
inline std::uint16_t get16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

/// One packet to feed a GRO engine: its bytes and the layout and metadata a driver would
/// have given it.
struct PacketSpec {
  std::vector<std::uint8_t> bytes;
  std::size_t headlen = 0;    ///< bytes in the head; 0 (or >= size) = linear
  std::size_t frag_size = 0;  ///< fragment size for the rest (0 = one fragment)
  core::CsumState csum{core::CsumNone{}};
  bool vlan = false;          ///< hw-accelerated VLAN tag (802.1Q)
  std::uint16_t tci = 0;
  core::GsoInfo gso{};
  std::vector<std::uint8_t> frag_list;  ///< non-empty: appended as one frag_list member
};

inline core::Packet make_packet(const PacketSpec& in) {
  core::Packet p = in.headlen == 0 || in.headlen >= in.bytes.size()
                       ? core::Packet::from_bytes(in.bytes)
                       : core::Packet::from_bytes_frags(in.bytes, in.headlen, in.frag_size);
  p.csum = in.csum;
  p.vlan_present = in.vlan;
  p.vlan_tci = in.tci;
  if (in.vlan) p.vlan_proto = 0x8100;
  p.gso = in.gso;
  if (!in.frag_list.empty()) p.add_to_frag_list(core::Packet::from_bytes(in.frag_list));
  return p;
}

/// Run frames through a fresh engine (one batch, then flush) and return the output packets.
inline std::vector<core::Packet> run(const std::vector<std::vector<std::uint8_t>>& frames,
                                     gro::EngineOptions opt = {}) {
  if (opt.batch == 64) opt.batch = 100000;
  // A fixed key, so that the order of different flows' outputs is reproducible.
  if (!opt.config.flow_hash_key) opt.config.flow_hash_key = 0;
  gro::Engine e(opt);
  for (const auto& f : frames) e.receive(core::Packet::from_bytes(f));
  e.flush_all();
  return e.take_output();
}

/// Offset of the TCP header in an Ethernet + IPv4/IPv6 (+ext) frame.
inline std::size_t tcp_offset(const std::vector<std::uint8_t>& b) {
  std::size_t off = 14;
  if (get16(b.data() + 12) == 0x86DD) {
    std::uint8_t proto = b[off + 6];
    off += 40;
    while (proto == 0 || proto == 43 || proto == 60 || proto == 44) {
      std::uint8_t nh = b[off];
      off += proto == 44 ? 8 : (std::size_t(b[off + 1]) + 1) * 8;
      proto = nh;
    }
    return off;
  }
  return off + std::size_t(b[off] & 0x0F) * 4;
}

/// TCP payload length of an output frame (Ethernet + IPv4/IPv6 (+ext) + TCP).
inline std::size_t tcp_payload(const core::Packet& p) {
  auto b = p.to_bytes();
  std::size_t off = 14;
  std::uint8_t proto;
  std::size_t end;
  if (get16(b.data() + 12) == 0x86DD) {
    end = 14 + 40 + get16(b.data() + 18);
    proto = b[off + 6];
    off += 40;
    while (proto == 0 || proto == 43 || proto == 60 || proto == 44) {
      std::uint8_t nh = b[off];
      off += proto == 44 ? 8 : (std::size_t(b[off + 1]) + 1) * 8;
      proto = nh;
    }
  } else {
    end = 14 + std::size_t(get16(b.data() + 16));
    off += std::size_t(b[off] & 0x0F) * 4;
  }
  off += std::size_t(b[off + 12] >> 4) * 4;
  return end - off;
}

inline std::string describe(const core::Packet& p) {
  std::string s = "len=" + std::to_string(p.len()) + " headlen=" + std::to_string(p.headlen()) +
                  " frags=" + std::to_string(p.nr_frags()) +
                  " summed=" + std::to_string(int(p.ip_summed())) +
                  " gso=" + std::to_string(p.gso.size) + "/" + std::to_string(p.gso.segs) + "/" +
                  std::to_string(p.gso.type);
  return s;
}

/// Every byte, the head/fragment geometry and every metadata field of two packets (the
/// fast/general differential tests).
inline void expect_same(const core::Packet& a, const core::Packet& b, const std::string& where) {
  ASSERT_EQ(a.to_bytes(), b.to_bytes()) << where << " fast " << describe(a) << " general " << describe(b);
  EXPECT_EQ(a.len(), b.len()) << where;
  EXPECT_EQ(a.headlen(), b.headlen()) << where;
  EXPECT_EQ(a.nr_frags(), b.nr_frags()) << where;
  EXPECT_EQ(a.frag_list().size(), b.frag_list().size()) << where;
  EXPECT_EQ(a.data_pos(), b.data_pos()) << where;
  testutil::expect_same_meta(a, b, where + " fast " + describe(a) + " general " + describe(b));
}

}  // namespace ofld::grotest

// Field-by-field comparison of two packets' metadata (every PacketMeta field) and of two GSO
// runs' counters, for the differential tests that hold a fast path equal to its general path
// (GSO and GRO).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ofld/core/packet.hpp"
#include "ofld/core/skb_segment.hpp"

namespace ofld::testutil {

inline void expect_same_meta(const core::PacketMeta& a, const core::PacketMeta& b, const std::string& where) {
  EXPECT_EQ(a.mac_header, b.mac_header) << where;
  EXPECT_EQ(a.network_header, b.network_header) << where;
  EXPECT_EQ(a.transport_header, b.transport_header) << where;
  EXPECT_EQ(a.inner_mac_header, b.inner_mac_header) << where;
  EXPECT_EQ(a.inner_network_header, b.inner_network_header) << where;
  EXPECT_EQ(a.inner_transport_header, b.inner_transport_header) << where;
  EXPECT_EQ(a.protocol, b.protocol) << where;
  EXPECT_EQ(a.inner_protocol, b.inner_protocol) << where;
  EXPECT_EQ(a.inner_protocol_type, b.inner_protocol_type) << where;
  EXPECT_EQ(a.inner_ipproto, b.inner_ipproto) << where;
  EXPECT_EQ(a.vlan_tci, b.vlan_tci) << where;
  EXPECT_EQ(a.vlan_present, b.vlan_present) << where;
  EXPECT_EQ(a.vlan_proto, b.vlan_proto) << where;
  EXPECT_EQ(a.encapsulation, b.encapsulation) << where;
  EXPECT_EQ(a.encap_hdr_csum, b.encap_hdr_csum) << where;
  EXPECT_EQ(a.remcsum_offload, b.remcsum_offload) << where;
  EXPECT_EQ(a.csum_valid, b.csum_valid) << where;
  EXPECT_EQ(a.csum_complete_sw, b.csum_complete_sw) << where;
  EXPECT_TRUE(a.csum == b.csum) << where << ": checksum state " << a.csum.index() << " vs "
                                << b.csum.index();
  EXPECT_EQ(a.pending_csum, b.pending_csum) << where;
  EXPECT_EQ(a.gso.size, b.gso.size) << where;
  EXPECT_EQ(a.gso.segs, b.gso.segs) << where;
  EXPECT_EQ(a.gso.type, b.gso.type) << where;
  EXPECT_EQ(a.tstamp, b.tstamp) << where;
}

inline void expect_same_counters(const core::GsoCounters& a, const core::GsoCounters& b,
                                 const std::string& where) {
  EXPECT_EQ(a.packets_in, b.packets_in) << where;
  EXPECT_EQ(a.packets_segmented, b.packets_segmented) << where;
  EXPECT_EQ(a.packets_hw, b.packets_hw) << where;
  EXPECT_EQ(a.segments_out, b.segments_out) << where;
  EXPECT_EQ(a.seg_mode, b.seg_mode) << where;
  EXPECT_EQ(a.sg_sum, b.sg_sum) << where;
  EXPECT_EQ(a.payload_bytes_copied, b.payload_bytes_copied) << where;
  EXPECT_EQ(a.payload_bytes_referenced, b.payload_bytes_referenced) << where;
  EXPECT_EQ(a.header_bytes_copied, b.header_bytes_copied) << where;
  EXPECT_EQ(a.packets_partial, b.packets_partial) << where;
  EXPECT_EQ(a.packets_fraglist, b.packets_fraglist) << where;
  EXPECT_EQ(a.errors, b.errors) << where;
}

}  // namespace ofld::testutil

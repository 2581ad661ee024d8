// Field-by-field comparison of two packets' metadata (every PacketMeta field) and of two GSO
// runs' counters, for the differential tests that hold a fast path equal to its general path
// (GSO and GRO).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/core/segment_batch.hpp"
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

/// A SegmentBatch against gso_segment's packets `ref`, segment by segment: length, bytes and
/// metadata; in the slab form also the headers (the packet's head) and the slices (the
/// packet's fragments: the same buffers, offsets and lengths) and the piece count; and each
/// segment made a packet again (to_packet) equal to the reference.
inline void expect_batch_equals(const core::SegmentBatch& b, const std::vector<core::Packet>& ref,
                                const std::string& where) {
  ASSERT_EQ(b.size(), ref.size()) << where;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const core::Packet& a = ref[i];
    const std::string w = where + " seg " + std::to_string(i) + "/" + std::to_string(b.size());
    EXPECT_EQ(b.len(i), a.len()) << w;
    EXPECT_EQ(b.to_bytes(i), a.to_bytes()) << w;
    expect_same_meta(b.meta(i), a.meta(), w);
    if (b.is_slab()) {
      EXPECT_EQ(b.header_len(), a.headlen()) << w;
      EXPECT_TRUE(std::ranges::equal(b.header(i), a.head())) << w;
      ASSERT_EQ(b.slices(i).size(), a.nr_frags()) << w;
      for (std::size_t k = 0; k < a.nr_frags(); ++k) {
        EXPECT_EQ(b.slices(i)[k].buf, a.frags()[k].buf.get()) << w << " slice " << k;
        EXPECT_EQ(b.slices(i)[k].off, a.frags()[k].off) << w << " slice " << k;
        EXPECT_EQ(b.slices(i)[k].len, a.frags()[k].len) << w << " slice " << k;
      }
      EXPECT_EQ(b.piece_count(i), 1 + a.nr_frags()) << w;
    }
    const core::Packet q = b.to_packet(i);  // the batch's segment as a packet again
    EXPECT_EQ(q.to_bytes(), a.to_bytes()) << w;
    expect_same_meta(q.meta(), a.meta(), w + " to_packet");
  }
}

}  // namespace ofld::testutil

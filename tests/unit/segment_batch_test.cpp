// core::SegmentBatch as gso_segment_batch fills it: the page references it holds (X-7: one per
// fragment slice, as skb_segment's __skb_frag_ref), their release, reuse of its storage across
// runs of other sizes and forms, moves, and the failure and device-segments cases (X-13,
// The segment bytes themselves are held to gso_segment's by the differential tests
// (gso_fast_path_test.cpp) and to the kernel's by GsoKernel.K3b_BatchSlabSegmentsMatchKernel.
#include <gtest/gtest.h>

#include "gso_test_util.hpp"

namespace {

using namespace gso_test;
namespace core = ofld::core;
namespace gso = ofld::gso;
namespace nf = ofld::core::netif_f;

const core::Features kSgCsum = nf::SG | nf::HW_CSUM;

long slices_of(const core::SegmentBatch& b, const core::Buffer* buf) {
  long n = 0;
  for (std::size_t i = 0; i < b.size(); ++i)
    for (const auto& s : b.slices(i)) n += s.buf == buf;
  return n;
}

// every slice holds one counted reference to its buffer, and clear() gives back exactly
// those: each buffer's count is ours + the input packet's + its slices while the batch holds
// them, ours alone after (no leak, no double release).
TEST(SegmentBatch, X7_OneReferencePerSliceReleasedByClear) {
  std::vector<core::BufferRef> bufs;
  core::SegmentBatch b;
  {
    core::Packet in = socket_packet(20000, 1448, 4096, bufs);
    const auto r = gso::gso_segment_batch(std::move(in), kSgCsum, device(kSgCsum), b);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(b.is_slab());
    EXPECT_EQ(b.size(), 14u);  // ceil(20000 / 1448)
  }
  long total = 0;
  for (const auto& buf : bufs) {
    const long n = slices_of(b, buf.get());
    EXPECT_GE(n, 1);
    total += n;
    // ours + the slices (the input packet is gone: it was consumed and destroyed above)
    EXPECT_EQ(buf.use_count(), 1 + n);
  }
  // 14 segments, and a slice more for each 4096-byte boundary inside a segment
  EXPECT_EQ(total, 14 + 4);
  b.clear();
  EXPECT_TRUE(b.empty());
  for (const auto& buf : bufs) EXPECT_EQ(buf.use_count(), 1);
}

// The storage is kept: one batch through runs of other sizes and both forms gives each
// run's segments (length, pieces) and leaves no reference behind.
TEST(SegmentBatch, ReusedAcrossSizesAndForms) {
  std::vector<core::BufferRef> bufs;
  core::SegmentBatch b;
  for (std::size_t payload : {60000, 3000, 45000, 61000}) {
    for (bool slab : {true, false, true}) {
      bufs.clear();
      core::Packet in = socket_packet(payload, 1000, slab ? 4096 : 333, bufs);
      // a slab needs checksum offload; SG alone sums each segment: the packet form
      const core::Features f = slab ? kSgCsum : core::Features{nf::SG};
      const auto r = gso::gso_segment_batch(std::move(in), f, device(f), b);
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(b.is_slab(), slab);
      ASSERT_EQ(b.size(), (payload + 999) / 1000);
      std::size_t bytes = 0;
      for (std::size_t i = 0; i < b.size(); ++i) {
        std::size_t n = 0;
        b.for_each_piece(i, [&](std::span<const std::uint8_t> x) { n += x.size(); });
        EXPECT_EQ(n, b.len(i));
        bytes += b.len(i) - 54;  // Ethernet + IPv4 + TCP headers
      }
      EXPECT_EQ(bytes, payload);
    }
  }
  b.clear();
  for (const auto& buf : bufs) EXPECT_EQ(buf.use_count(), 1);
}

// A moved batch carries its segments and their references; the source is left empty.
TEST(SegmentBatch, MovesCarryTheReferences) {
  std::vector<core::BufferRef> bufs;
  core::SegmentBatch a;
  ASSERT_TRUE(gso::gso_segment_batch(socket_packet(9000, 1448, 4096, bufs), kSgCsum,
                                     device(kSgCsum), a).ok());
  const std::vector<Bytes> want = [&] {
    std::vector<Bytes> v;
    for (std::size_t i = 0; i < a.size(); ++i) v.push_back(a.to_bytes(i));
    return v;
  }();
  core::SegmentBatch b(std::move(a));
  EXPECT_TRUE(a.empty());
  core::SegmentBatch c;
  c = std::move(b);
  EXPECT_TRUE(b.empty());
  ASSERT_EQ(c.size(), want.size());
  for (std::size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c.to_bytes(i), want[i]);
  for (const auto& buf : bufs) EXPECT_EQ(buf.use_count(), 1 + slices_of(c, buf.get()));
  c = core::SegmentBatch();
  for (const auto& buf : bufs) EXPECT_EQ(buf.use_count(), 1);
}

// X-13 in the middle of a slab: two 4000-byte segments in one fragment each, then 40
// fragments of 100 bytes for the third. The run fails with gso_segment's reason, the batch
// is empty, and every reference taken for the segments and slices written before the
// failure is given back.
TEST(SegmentBatch, X13_FailureLeavesItEmptyAndReferencesBalanced) {
  std::vector<core::BufferRef> bufs;
  core::SegmentBatch b;
  const auto r = gso::gso_segment_batch(socket_packet(20000, 4000, 100, bufs, 8000), kSgCsum,
                                        device(kSgCsum), b);
  EXPECT_EQ(r.reason, gso::GsoReason::TooManyFrags);
  EXPECT_TRUE(b.empty());
  for (const auto& buf : bufs) EXPECT_EQ(buf.use_count(), 1);
}

// a device with TSO segments itself: the batch holds the input, unchanged, in the
// packet form, still GSO with its gso_size.
TEST(SegmentBatch, X20_DeviceSegmentsGivesTheInputWhole) {
  std::vector<core::BufferRef> bufs;
  core::SegmentBatch b;
  const core::Features f = kSgCsum | nf::TSO;
  const auto r = gso::gso_segment_batch(socket_packet(9000, 1448, 4096, bufs), f, device(f), b);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.hw);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_FALSE(b.is_slab());
  EXPECT_EQ(b.meta(0).gso.size, 1448);
  EXPECT_EQ(b.len(0), 54u + 9000);
  EXPECT_TRUE(b.header(0).empty());  // no slab
}

// F-17..F-20 through tx_prepare_batch: a packet the device takes whole comes back alone in the
// packet form; one whose checksum cannot be finished (the field beyond the packet: C-28's
// NotInHead) is dropped, and the batch is then empty, whatever an earlier run left in it.
TEST(SegmentBatch, F19_TxPrepareBatchWholePacketAndDropLeaveNothingStale) {
  std::vector<core::BufferRef> bufs;
  core::SegmentBatch b;
  ASSERT_EQ(gso::tx_prepare_batch(socket_packet(9000, 1448, 4096, bufs), device(kSgCsum), b).gso_reason,
            gso::GsoReason::Ok);
  EXPECT_TRUE(b.is_slab());
  EXPECT_EQ(b.size(), 7u);
  core::Packet whole = core::Packet::from_bytes(Bytes(100, 0x11));
  whole.set_partial(20, 16);
  const auto ok = gso::tx_prepare_batch(std::move(whole), device(kSgCsum), b);
  EXPECT_FALSE(ok.dropped());
  ASSERT_EQ(b.size(), 1u);
  EXPECT_FALSE(b.is_slab());
  EXPECT_EQ(b.len(0), 100u);
  core::Packet bad = core::Packet::from_bytes(Bytes(100, 0x22));
  bad.set_partial(90, 16);  // the field at 106..107, past the packet's 100 bytes
  const auto r = gso::tx_prepare_batch(std::move(bad), device(core::Features{}), b);
  EXPECT_TRUE(r.dropped());
  EXPECT_EQ(r.csum_error, core::PacketError::NotInHead);
  EXPECT_TRUE(b.empty());
  for (const auto& buf : bufs) EXPECT_EQ(buf.use_count(), 1);
}

}  // namespace

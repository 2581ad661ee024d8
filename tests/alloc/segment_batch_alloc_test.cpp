// Allocation failure while gso_segment_batch builds a slab (its own executable: it replaces
// the global operator new[] to make exactly one allocation fail). The batch must be left
// empty, with every page reference given back, never claiming segments whose slices were not
// written; the C API's engine must report the failure with no outputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "ofld/core/segment_batch.hpp"
#include "ofld/ofld.h"
#include "../unit/gso_test_util.hpp"

namespace {
std::size_t g_fail_size = 0;  // the next operator new[] of exactly this many bytes throws
}  // namespace

void* operator new[](std::size_t n) {
  if (g_fail_size && n == g_fail_size) {
    g_fail_size = 0;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace gso_test;
namespace core = ofld::core;
namespace gso = ofld::gso;
namespace nf = ofld::core::netif_f;

// The slice array (200 segments + 5 fragments) cannot be had: bad_alloc reaches the caller,
// and the batch is empty with no reference held.
TEST(SegmentBatchAlloc, X7_BadAllocBuildingTheSlabLeavesItEmpty) {
  std::vector<core::BufferRef> bufs;
  core::SegmentBatch b;  // fresh: every array is allocated on the first run
  core::Packet in = socket_packet(20000, 100, 4096, bufs);
  g_fail_size = (200 + 5) * sizeof(core::BatchSlice);
  const core::Features f = nf::SG | nf::HW_CSUM;
  bool threw = false;
  try {
    (void)gso::gso_segment_batch(std::move(in), f, device(f), b);
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  g_fail_size = 0;
  ASSERT_TRUE(threw) << "the allocation failure was not injected";
  EXPECT_TRUE(b.empty());
  EXPECT_FALSE(b.is_slab());
  in = core::Packet();
  for (const auto& buf : bufs) EXPECT_EQ(buf.use_count(), 1);
  // and the batch works afterwards
  ASSERT_TRUE(gso::gso_segment_batch(socket_packet(20000, 100, 4096, bufs), f, device(f), b).ok());
  EXPECT_TRUE(b.is_slab());
  EXPECT_EQ(b.size(), 200u);
}

// The same failure inside ofld_gso_run: an error code, no outputs to read.
TEST(SegmentBatchAlloc, CApiGsoRunReportsOutOfMemoryWithNoOutputs) {
  TcpSpec s;
  s.payload = 10000;
  Bytes fr = tcp_frame(s);
  std::size_t len = fr.size();
  ofld_vnet_hdr h{};
  ASSERT_EQ(ofld_vnet_build(fr.data(), &len, OFLD_LINK_ETHERNET, 100, 0, &h), OFLD_OK);
  ofld_gso* g = ofld_gso_new((nf::SG | nf::HW_CSUM).bits, OFLD_LINK_ETHERNET);
  ASSERT_NE(g, nullptr);
  std::uint8_t* buf = ofld_gso_input(g, len);
  ASSERT_NE(buf, nullptr);
  std::memcpy(buf, fr.data(), len);
  g_fail_size = (100 + 1) * sizeof(core::BatchSlice);  // 100 segments, one input fragment
  const int rc = ofld_gso_run(g, buf, len, &h, 0, 0);
  g_fail_size = 0;
  EXPECT_EQ(rc, OFLD_E_NOMEM) << ofld_last_reason();
  EXPECT_EQ(ofld_gso_count(g), 0u);
  ASSERT_EQ(ofld_gso_run(g, buf, len, &h, 0, 0), OFLD_OK);  // and it works afterwards
  EXPECT_EQ(ofld_gso_count(g), 100u);
  ofld_gso_free(g);
}

}  // namespace

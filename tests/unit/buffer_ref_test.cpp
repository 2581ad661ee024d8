// Buffer reference counts: references taken and dropped in bulk (BufferRef::acquire/release,
// used by skb_segment's fast loop and by destroy_packets), and the batched drop of GSO segments'
// page references (X-7: segments reference the super-packet's pages). Freed buffers and
// leaks are checked by the ASan/LSan build; the counts here by use_count.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/core/features.hpp"
#include "ofld/gso/gso.hpp"

namespace {

using namespace ofld;
using core::Buffer;
using core::BufferRef;
using core::Packet;

BufferRef page(std::size_t n = 4096) { return Buffer::create(n); }

TEST(PacketBufferRef, X7_BulkAcquireAndReleaseKeepTheCount) {
  BufferRef a = page();
  ASSERT_EQ(a.use_count(), 1);
  BufferRef::acquire(a.get(), 5);
  EXPECT_EQ(a.use_count(), 6);
  BufferRef::release(a.get(), 3);
  EXPECT_EQ(a.use_count(), 3);
  BufferRef b = BufferRef::adopt(a.get());  // one of the remaining two taken ones
  EXPECT_EQ(a.use_count(), 3);
  Buffer* raw = b.disown();  // handed back to the caller, count unchanged
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(a.use_count(), 3);
  BufferRef::release(raw, 2);
  EXPECT_EQ(a.use_count(), 1);
}

TEST(PacketBufferRef, X7_BulkAcquireOnASharedBufferAddsToEveryHoldersCount) {
  // The sole holder's acquire stores the new count; a shared buffer's adds to it.
  BufferRef a = page();
  BufferRef b = a;  // two holders
  BufferRef::acquire(a.get(), 3);
  EXPECT_EQ(a.use_count(), 5);
  BufferRef::release(a.get(), 3);
  b.reset();
  EXPECT_EQ(a.use_count(), 1);
  BufferRef::acquire(a.get(), 2);
  EXPECT_EQ(a.use_count(), 3);
  BufferRef::release(a.get(), 2);
  EXPECT_EQ(a.use_count(), 1);
}

TEST(PacketBufferRef, X7_BulkAcquireWhileAnotherThreadDropsItsReference) {
  // Another thread's last drop may land just before or just after the acquire's look at the
  // count: either way the count ends exact (one reference left after the taken ones go).
  for (int i = 0; i < 2000; ++i) {
    BufferRef a = page(64);
    BufferRef other = a;
    std::thread t([r = std::move(other)]() mutable { r.reset(); });
    BufferRef::acquire(a.get(), 4);
    t.join();
    ASSERT_EQ(a.use_count(), 5) << "iteration " << i;
    BufferRef::release(a.get(), 4);
    ASSERT_EQ(a.use_count(), 1) << "iteration " << i;
  }
}

TEST(PacketBufferRef, X7_ReleaseOfTheLastReferencesFreesTheBuffer) {
  // The only holder drops n references at once: the sole-owner path frees without an atomic
  // subtraction (LSan reports a leak, ASan a double free, if it does not free exactly once).
  BufferRef a = page();
  BufferRef::acquire(a.get(), 3);
  BufferRef::release(a.disown(), 4);
  BufferRef c = page();
  BufferRef d = c;  // two references, dropped one by one: the second frees
  c.reset();
  EXPECT_EQ(d.use_count(), 1);
}

// Packets referencing buffers A and B as A A | A B | B A: runs across packet borders, and a
// buffer that comes back after another one.
std::vector<Packet> three_packets(const BufferRef& a, const BufferRef& b) {
  const std::uint8_t hdr[54] = {};
  std::vector<Packet> v;
  for (int i = 0; i < 3; ++i) v.push_back(Packet::from_bytes(hdr));
  EXPECT_EQ(v[0].add_frag(a, 0, 100), core::PacketError::Ok);
  EXPECT_EQ(v[0].add_frag(a, 100, 100), core::PacketError::Ok);
  EXPECT_EQ(v[1].add_frag(a, 200, 100), core::PacketError::Ok);
  EXPECT_EQ(v[1].add_frag(b, 0, 100), core::PacketError::Ok);
  EXPECT_EQ(v[2].add_frag(b, 100, 100), core::PacketError::Ok);
  EXPECT_EQ(v[2].add_frag(a, 300, 100), core::PacketError::Ok);
  return v;
}

TEST(PacketBufferRef, X7_DestroyPacketsDropsEveryFragmentReference) {
  BufferRef a = page(), b = page();
  {
    auto v = three_packets(a, b);
    EXPECT_EQ(a.use_count(), 5);
    EXPECT_EQ(b.use_count(), 3);
    core::destroy_packets(v);
    EXPECT_TRUE(v.empty());
  }
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_EQ(b.use_count(), 1);
  // The packets holding the last references: every buffer freed (LSan checks).
  Buffer* ra = a.get();
  Buffer* rb = b.get();
  auto v = three_packets(a, b);
  BufferRef::release(a.disown(), 1);
  BufferRef::release(b.disown(), 1);
  core::destroy_packets(v);
  EXPECT_NE(ra, rb);
}

TEST(PacketBufferRef, X7_GsoResultDropsItsSegmentsPageReferences) {
  // A 64 KB TCP super-packet in 4 KiB pages, segmented with SG (pages referenced, X-7): while
  // the result lives every segment holds its pages; when it ends only the caller's remain.
  const std::size_t pay = 16 * 4096;
  std::vector<std::uint8_t> f(54 + pay);
  f[12] = 0x08;
  f[14] = 0x45;
  const std::size_t tot = 40 + pay;  // 65576: a GSO super-packet's IPv4 total length field
  f[16] = std::uint8_t(tot >> 8), f[17] = std::uint8_t(tot);
  f[22] = 64, f[23] = 6;
  f[26] = 10, f[29] = 1, f[30] = 10, f[33] = 2;
  f[46] = 0x50;  // data offset 5
  for (std::size_t i = 0; i < pay; ++i) f[54 + i] = std::uint8_t(i * 31);
  Packet p = Packet::from_bytes_frags(f, 54, 4096);  // a TCP socket's skb: payload in pages
  p.mac_header = 0;
  p.network_header = 14;
  p.transport_header = 34;
  p.protocol = 0x0800;
  p.csum = core::CsumPartial{34, 16, false};
  p.gso = {1448, 0, core::skb_gso::TCPV4};
  std::vector<BufferRef> pages;
  for (const auto& fr : p.frags()) pages.push_back(fr.buf);
  ASSERT_EQ(pages.size(), 16u);
  core::Device dev;
  dev.features = dev.hw_enc_features = core::netif_f::SG | core::netif_f::HW_CSUM;
  {
    // gso_segment takes the packet by rvalue reference: a temporary, so the super-packet's own
    // page references end with this statement and only the segments' remain.
    gso::GsoResult r = gso::gso_segment(Packet(std::move(p)), dev.features, dev);
    ASSERT_TRUE(r.ok()) << int(r.reason);
    ASSERT_EQ(r.segs.size(), (pay + 1447) / 1448);
    long held = 0;
    for (const auto& pg : pages) held += pg.use_count() - 1;
    std::size_t frags = 0;
    for (const auto& s : r.segs) frags += s.nr_frags();
    EXPECT_EQ(held, long(frags));
    gso::GsoResult moved = std::move(r);  // the moved-from result drops nothing
    held = 0;
    for (const auto& pg : pages) held += pg.use_count() - 1;
    EXPECT_EQ(held, long(frags));
  }
  for (const auto& pg : pages) EXPECT_EQ(pg.use_count(), 1);
}

}  // namespace

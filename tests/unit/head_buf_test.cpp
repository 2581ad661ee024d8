// The pooled head storage (core/head_buf.hpp). HeadBufTake, which GSO's fast loop uses for its
// segments' heads, must take the blocks one HeadBuf(min_bytes) per segment would. HeadBufReturn, which GRO's fast run uses to
// return the heads of the packets it merged, must leave the thread's free lists exactly as
// one HeadBuf release per block would (the same blocks cached, in the same order, the same
// bounds), for blocks of mixed size classes, blocks of no class and empty heads. Builds with
// AddressSanitizer bypass the pool (every block goes to the allocator): there only the
// emptiness is checked, and ASan checks that no block is freed twice or leaked.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "ofld/core/head_buf.hpp"

using namespace ofld::core::detail;

namespace {

std::uint32_t cached(unsigned c) { return t_headbuf_pool.lists[c].count; }

// Class of a block of `bytes` (head_buf.hpp: powers of two from 256 B).
constexpr unsigned kClass300 = 1;    // 512 B
constexpr unsigned kClass5000 = 5;   // 8 KiB
constexpr unsigned kClass64k = 8;    // 64 KiB, the largest

}  // namespace

TEST(HeadBufReturn, MixedClassesCachedAsSingleReleasesWould) {
  { HeadBuf warm(300); }  // the thread's pool is in use (its cleanup armed)
  std::vector<HeadBuf> v;
  v.emplace_back(300);
  v.emplace_back(300);
  v.emplace_back(5000);
  v.emplace_back(300);
  v.emplace_back(std::size_t(1) << 20);  // beyond every class: to the allocator
  v.emplace_back();                      // empty: nothing to return
  std::vector<std::uint8_t*> blocks;
  for (auto& h : v) blocks.push_back(h.data());
  const std::uint32_t c1 = cached(kClass300), c5 = cached(kClass5000);

  HeadBufReturn r;
  for (auto& h : v) r.put(h);
  for (auto& h : v) {
    EXPECT_EQ(h.data(), nullptr);
    EXPECT_EQ(h.size(), 0u);
  }
  if (!kHeadBufPool) GTEST_SKIP() << "sanitizer build: the pool is bypassed";
  EXPECT_EQ(cached(kClass300), c1 + 3);
  EXPECT_EQ(cached(kClass5000), c5 + 1);
  // Last in, first out, as HeadBuf's own release: the next 512-byte heads are the blocks
  // returned last, in reverse order.
  HeadBuf a(400), b(257), c(512);
  EXPECT_EQ(a.data(), blocks[3]);
  EXPECT_EQ(b.data(), blocks[1]);
  EXPECT_EQ(c.data(), blocks[0]);
  HeadBuf d(8000);
  EXPECT_EQ(d.data(), blocks[2]);
}

TEST(HeadBufReturn, ClassBoundHeldAcrossPuts) {
  if (!kHeadBufPool) GTEST_SKIP() << "sanitizer build: the pool is bypassed";
  { HeadBuf warm(300); }
  // Take every cached 64 KiB block, then return more than the class may keep.
  std::vector<HeadBuf> held;
  while (cached(kClass64k) > 0) held.emplace_back(std::size_t(1) << 16);
  const std::uint32_t bound = kHeadBufMaxCached[kClass64k];
  std::vector<HeadBuf> v;
  for (std::uint32_t i = 0; i < bound + 5; ++i) v.emplace_back(std::size_t(60000));
  HeadBufReturn r;
  for (auto& h : v) r.put(h);
  EXPECT_EQ(cached(kClass64k), bound);
  for (auto& h : v) EXPECT_EQ(h.data(), nullptr);
  held.clear();  // released one by one: the list stays at its bound
  EXPECT_EQ(cached(kClass64k), bound);
}

// A thread whose pool was never used: the first put goes through HeadBuf's release, which
// arms the thread's cleanup; the next ones are cached through the kept list.
TEST(HeadBufReturn, FreshThreadArmsItsPoolFirst) {
  std::uint32_t after = 0;
  bool armed_before = true;
  std::thread t([&] {
    armed_before = t_headbuf_pool.cleanup_armed;
    std::vector<HeadBuf> v;
    for (int i = 0; i < 4; ++i) v.emplace_back(1000);
    HeadBufReturn r;
    for (auto& h : v) r.put(h);
    after = t_headbuf_pool.lists[2].count;  // 1 KiB
  });
  t.join();
  EXPECT_FALSE(armed_before);
  if (!kHeadBufPool) GTEST_SKIP() << "sanitizer build: the pool is bypassed";
  EXPECT_EQ(after, 4u);
}

TEST(HeadBufTake, TakesTheBlocksSingleAllocationsWould) {
  { HeadBuf warm(300); }  // the thread's pool is in use (its cleanup armed)
  // Three cached 512-byte blocks, the last released on top.
  std::vector<std::uint8_t*> blocks;
  {
    HeadBuf x(300), y(300), z(300);
    blocks = {x.data(), y.data(), z.data()};
  }  // released z, y, x: x on top
  const std::uint32_t c1 = cached(kClass300);
  HeadBufTake t(86 + 300);  // a segment's head: class 512 B
  std::vector<HeadBuf> got;
  for (int i = 0; i < 3; ++i) got.push_back(t.take());
  for (auto& h : got) EXPECT_EQ(h.size(), 512u);
  if (!kHeadBufPool) GTEST_SKIP() << "sanitizer build: the pool is bypassed";
  EXPECT_EQ(got[0].data(), blocks[0]);
  EXPECT_EQ(got[1].data(), blocks[1]);
  EXPECT_EQ(got[2].data(), blocks[2]);
  EXPECT_EQ(cached(kClass300), c1 - 3);
  // A release between takes is seen by the next take (the list is read through).
  HeadBuf w(300);
  std::uint8_t* const back = w.data();
  w = HeadBuf();  // released: on top of the list
  HeadBuf again = t.take();
  EXPECT_EQ(again.data(), back);
  // An empty list: a new block of the class size.
  std::vector<HeadBuf> drain;
  while (cached(kClass300)) drain.push_back(t.take());
  HeadBuf fresh = t.take();
  EXPECT_NE(fresh.data(), nullptr);
  EXPECT_EQ(fresh.size(), 512u);
}

TEST(HeadBufTake, BeyondEveryClassGoesToTheAllocator) {
  HeadBufTake t(std::size_t(1) << 20);
  HeadBuf a = t.take(), b = t.take();
  EXPECT_NE(a.data(), nullptr);
  EXPECT_NE(a.data(), b.data());
  EXPECT_EQ(a.size(), std::size_t(1) << 20);
}

// Size classes: powers of two from 256 bytes (2^kHeadBufMinShift), the smallest that holds the
// request; a request over the largest class's 64 KiB is beyond every class.
TEST(HeadBuf, SizeClassIsTheSmallestPowerOfTwoThatHolds) {
  EXPECT_EQ(headbuf_class(0), 0u);
  EXPECT_EQ(headbuf_class(1), 0u);
  EXPECT_EQ(headbuf_class(256), 0u);
  EXPECT_EQ(headbuf_class(257), 1u);
  EXPECT_EQ(headbuf_class(512), 1u);
  EXPECT_EQ(headbuf_class(513), 2u);
  EXPECT_EQ(headbuf_class(65536), 8u);
  EXPECT_GE(headbuf_class(65537), kHeadBufClasses);
  for (std::size_t n = 1; n <= 70000; n += 97) {
    const unsigned c = headbuf_class(n);
    const std::size_t cap = std::size_t(1) << (c + kHeadBufMinShift);
    EXPECT_GE(cap, n) << n;
    if (c > 0) {
      EXPECT_LT(cap / 2, n) << n;
    }
  }
  HeadBuf b(300);  // class 1: a 512-byte block
  EXPECT_EQ(b.size(), 512u);
}

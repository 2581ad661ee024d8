// Checksum kernels at page boundaries: every buffer is placed so that it ends exactly where a
// PROT_NONE page begins (and, separately, starts exactly where one ends), so any byte the
// AVX-512 kernel's masked tail or the AVX2 kernel's overlapping last load touches outside
// [p, p+n) faults — in every build, not only under ASan (which does not see masked loads).
// The copy kernels get the same treatment on the destination side, and the bytes around the
// destination must be left as they were. Expected values: the byte-wise reference kernel
// (Kernel::Reference, RFC 1071), the contract of csum.hpp ("every kernel returns exactly the
// reference kernel's value for any buffer, alignment, length, seed"). Rule A4 (any address).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <vector>

#include "ofld/core/csum.hpp"

using namespace ofld::csum;

namespace {

// `pages` read-write pages with a PROT_NONE page on each side.
class Guarded {
 public:
  explicit Guarded(std::size_t bytes) {
    page_ = std::size_t(sysconf(_SC_PAGESIZE));
    rw_ = (bytes + page_ - 1) / page_ * page_;
    if (rw_ == 0) rw_ = page_;
    void* m = mmap(nullptr, rw_ + 2 * page_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    base_ = static_cast<std::uint8_t*>(m);
    if (mprotect(base_ + page_, rw_, PROT_READ | PROT_WRITE) != 0) return;
    ok_ = true;
  }
  ~Guarded() {
    if (base_) munmap(base_, rw_ + 2 * page_);
  }
  bool ok() const { return ok_; }
  std::uint8_t* begin() { return base_ + page_; }        // right after the low guard
  std::uint8_t* end() { return base_ + page_ + rw_; }    // the high guard starts here
  std::size_t size() const { return rw_; }

 private:
  std::uint8_t* base_ = nullptr;
  std::size_t page_ = 0, rw_ = 0;
  bool ok_ = false;
};

std::vector<Kernel> kernels() {
  std::vector<Kernel> v;
  for (Kernel k : {Kernel::Reference, Kernel::Scalar64, Kernel::SSE, Kernel::AVX2, Kernel::AVX512})
    if (kernel_supported(k)) v.push_back(k);
  return v;
}

void fill(std::uint8_t* p, std::size_t n, int pattern, std::mt19937& rng) {
  for (std::size_t i = 0; i < n; ++i) {
    switch (pattern) {
      case 0: p[i] = std::uint8_t(rng()); break;
      case 1: p[i] = 0xff; break;
      default: p[i] = rng() % 5 == 0 ? std::uint8_t(rng()) : 0xff; break;
    }
  }
}

const wsum kSeeds[] = {0, 0xffffffffu, 0x80000000u, 0xffff0001u, 0x0001ffffu, 0xfffffffeu};

// Sum and copy-and-sum of [p, p+n) with every kernel against the reference; the copy's
// destination `d` must receive exactly the source bytes and nothing around it may change.
void check_all(const std::uint8_t* p, std::size_t n, std::uint8_t* d, std::size_t dpre,
               std::size_t dpost, wsum seed, const char* where) {
  const wsum ref = csum_partial_with(Kernel::Reference, p, n, seed);
  ASSERT_EQ(csum_partial(p, n, seed), ref) << where << " csum_partial n=" << n;
  for (Kernel k : kernels()) {
    ASSERT_EQ(csum_partial_with(k, p, n, seed), ref)
        << where << " " << kernel_name(k) << " n=" << n << " seed=" << seed;
    if (!d) continue;
    std::memset(d - dpre, 0x5a, dpre + n + dpost);
    ASSERT_EQ(csum_partial_copy_with(k, d, p, n, seed), ref)
        << where << " copy " << kernel_name(k) << " n=" << n;
    if (n) {
      ASSERT_EQ(std::memcmp(d, p, n), 0) << where << " copy bytes " << kernel_name(k) << " n=" << n;
    }
    for (std::size_t i = 1; i <= dpre; ++i)
      ASSERT_EQ(d[-std::ptrdiff_t(i)], 0x5a) << where << " copy wrote before dst " << kernel_name(k);
    for (std::size_t i = 0; i < dpost; ++i)
      ASSERT_EQ(d[n + i], 0x5a) << where << " copy wrote after dst " << kernel_name(k) << " n=" << n;
  }
}

}  // namespace

// Short and medium buffers (0..600 bytes, every length) ending at a guard page, the
// destination of the copy also ending at one; and starting right after a guard page.
TEST(CsumGuardPage, A4_BuffersEndingOrStartingAtAPageBoundary) {
  Guarded src(8192), dst(8192), dst2(8192);
  ASSERT_TRUE(src.ok() && dst.ok() && dst2.ok());
  std::mt19937 rng(0x9a9e);
  for (int pattern = 0; pattern < 3; ++pattern) {
    fill(src.begin(), src.size(), pattern, rng);
    for (std::size_t n = 0; n <= 600; ++n) {
      const wsum seed = kSeeds[n % 6] ^ (n % 4 == 3 ? wsum(rng()) : 0);
      // [end - n, end): the byte after the buffer is the guard page.
      check_all(src.end() - n, n, dst.end() - n, std::min<std::size_t>(64, dst.size() - n), 0,
                seed, "ends at guard");
      if (::testing::Test::HasFatalFailure()) return;
      // [begin, begin + n): the byte before is the guard page.
      check_all(src.begin(), n, dst2.begin(), 0, 64, seed, "starts at guard");
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Lengths around the 64 KiB bulk chunk and the 128 KiB exact-chunk bound, odd and even,
// ending at a guard page (so the start address takes every parity), all-0xFF (a carry on
// every add, the largest chunk sums) and random data, seeds with high bits.
TEST(CsumGuardPage, C13_A4_ChunkBoundaryLengthsEndingAtAPageBoundary) {
  constexpr std::size_t kMax = 4 * 65536 + 256;
  Guarded src(kMax), dst(kMax);
  ASSERT_TRUE(src.ok() && dst.ok());
  std::mt19937 rng(0x9a9f);
  std::vector<std::size_t> lens;
  for (std::size_t base : {32768u, 65536u, 131072u, 196608u, 262144u})
    for (std::size_t d : {0u, 1u, 2u, 3u, 31u, 32u, 33u, 63u, 64u, 65u, 66u, 127u, 128u, 129u})
      for (int sgn : {-1, 1}) lens.push_back(std::size_t(std::int64_t(base) + sgn * std::int64_t(d)));
  for (int pattern = 0; pattern < 3; ++pattern) {
    fill(src.end() - kMax, kMax, pattern, rng);
    for (std::size_t n : lens) {
      const wsum seed = kSeeds[n % 6];
      check_all(src.end() - n, n, dst.end() - n, 64, 0, seed, "chunk end at guard");
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// Zero-length sums at a null pointer (an empty std::vector's data()) and right at a guard
// page: nothing is read or written, the result is the seed (csum_add(seed, 0)).
TEST(CsumGuardPage, A4_ZeroLengthTouchesNothing) {
  Guarded g(4096);
  ASSERT_TRUE(g.ok());
  for (wsum seed : kSeeds) {
    for (Kernel k : kernels()) {
      EXPECT_EQ(csum_partial_with(k, nullptr, 0, seed), seed) << kernel_name(k);
      EXPECT_EQ(csum_partial_with(k, g.end(), 0, seed), seed) << kernel_name(k);
      EXPECT_EQ(csum_partial_copy_with(k, g.end(), g.end(), 0, seed), seed) << kernel_name(k);
      EXPECT_EQ(csum_partial_copy_with(k, nullptr, nullptr, 0, seed), seed) << kernel_name(k);
    }
    EXPECT_EQ(csum_partial(nullptr, 0, seed), seed);
    EXPECT_EQ(csum_partial_copy(nullptr, nullptr, 0, seed), seed);
  }
}

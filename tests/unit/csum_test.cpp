// Checksum engine: kernels vs the byte-wise reference, RFC golden vectors, rules C-10..C-15,
// public bugs A3/A4. Expected values come from RFCs, hand derivations (shown) or captures.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "ofld/core/csum.hpp"

using namespace ofld::csum;

namespace {

constexpr Kernel kAll[] = {Kernel::Reference, Kernel::Scalar64, Kernel::SSE, Kernel::AVX2,
                           Kernel::AVX512};

std::vector<Kernel> fast_kernels() {
  std::vector<Kernel> v;
  for (Kernel k : {Kernel::Scalar64, Kernel::SSE, Kernel::AVX2, Kernel::AVX512})
    if (kernel_supported(k)) v.push_back(k);
  return v;
}

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = std::uint8_t(rng());
  return v;
}

/// Independent model of RFC 1071 §1: big-endian 16-bit words, odd tail byte padded with a
/// zero low byte, 32-bit accumulation with end-around carry, folded.
std::uint16_t rfc1071_be_words(const std::uint8_t* p, std::size_t n) {
  std::uint32_t s = 0;
  for (std::size_t i = 0; i < n; i += 2) {
    std::uint16_t w = std::uint16_t(p[i] << 8 | (i + 1 < n ? p[i + 1] : 0));
    s = csum_add(s, w);
  }
  return csum_fold16(s);
}
/// The same sum as a little-endian host computes it (RFC 1071 §2(B)): words loaded in host
/// order, the odd tail byte placed at the low-address position, folded, then byte-swapped.
std::uint16_t rfc1071_le_words_swapped(const std::uint8_t* p, std::size_t n) {
  std::uint32_t s = 0;
  for (std::size_t i = 0; i < n; i += 2) {
    std::uint16_t w = std::uint16_t(p[i] | (i + 1 < n ? p[i + 1] << 8 : 0));
    s = csum_add(s, w);
  }
  return __builtin_bswap16(csum_fold16(s));
}

}  // namespace

// ---- C-13 folding, RFC 1071 §3 --------------------------------------------------------

// RFC 1071 §3 numeric example: bytes 00 01 f2 03 f4 f5 f6 f7. Word sums:
// 0001 + f203 + f4f5 + f6f7 = 0x2ddf0 → fold: 0xddf0 + 0x2 = 0xddf2; checksum ~ = 0x220d.
TEST(Csum, C13_Rfc1071Example) {
  wsum w = 0x0001 + 0xf203 + 0xf4f5 + 0xf6f7;
  EXPECT_EQ(csum_fold16(w), 0xddf2);
  EXPECT_EQ(csum_fold(w), 0x220d);
  const std::uint8_t bytes[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  for (Kernel k : kAll) {
    if (!kernel_supported(k)) continue;
    EXPECT_EQ(csum_fold16(csum_partial_with(k, bytes, sizeof bytes)), 0xddf2) << kernel_name(k);
  }
  EXPECT_EQ(csum_fold16(csum_partial(bytes, sizeof bytes)), 0xddf2);
}

TEST(Csum, C13_AddSubEndAroundCarry) {
  // 0xffffffff + 1 = 0x1_00000000 → end-around carry → 0x00000001.
  EXPECT_EQ(csum_add(0xffffffffu, 1u), 1u);
  // a - b = a + ~b: 5 - 3 = 5 + 0xfffffffc = 0x1_00000001 → 2.
  EXPECT_EQ(csum_sub(5u, 3u), 2u);
  EXPECT_EQ(csum_fold16(0), 0);
  // 0xffff0001 → 0xffff + 0x0001 = 0x10000 → 0x0001.
  EXPECT_EQ(csum_fold16(0xffff0001u), 1);
}

// Classic IPv4 header (RFC 791 layout): 4500 0073 0000 4000 4011 [0000] c0a8 0001 c0a8 00c7.
// Sum: 4500+0073+0000+4000+4011+c0a8+0001+c0a8+00c7 = 0x2479c → 0x479c + 0x2 = 0x479e;
// checksum = ~0x479e = 0xb861.
TEST(Csum, C13_Ipv4HeaderGolden) {
  std::uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                        0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(ip_compute_csum(h, sizeof h), 0xb861);
  for (Kernel k : kAll) {
    if (!kernel_supported(k)) continue;
    EXPECT_EQ(csum_fold(csum_partial_with(k, h, sizeof h)), 0xb861) << kernel_name(k);
  }
  h[10] = 0xb8;
  h[11] = 0x61;  // a correct header sums to 0xffff, i.e. checksum 0
  EXPECT_EQ(ip_compute_csum(h, sizeof h), 0);
}

// ---- A3: odd lengths, tail byte is the HIGH byte ---------------------------------------

TEST(Csum, A3_TailByteIsHighByte) {
  const std::uint8_t b[] = {0x42};
  for (Kernel k : kAll) {
    if (!kernel_supported(k)) continue;
    EXPECT_EQ(csum_fold16(csum_partial_with(k, b, 1)), 0x4200) << kernel_name(k);
    // 3 bytes 01 02 42 → 0x0102 + 0x4200 = 0x4302.
    const std::uint8_t c[] = {0x01, 0x02, 0x42};
    EXPECT_EQ(csum_fold16(csum_partial_with(k, c, 3)), 0x4302) << kernel_name(k);
  }
}

TEST(Csum, A3_OddLengths1to1501BothByteOrders) {
  auto buf = random_bytes(1501, 3);
  for (std::size_t n = 1; n <= 1501; n += 2) {
    std::uint16_t be = rfc1071_be_words(buf.data(), n);
    // Both host byte orders give the same network-order sum (the bug was LE tail handling).
    ASSERT_EQ(rfc1071_le_words_swapped(buf.data(), n), be) << n;
    for (Kernel k : kAll) {
      if (!kernel_supported(k)) continue;
      ASSERT_EQ(csum_fold16(csum_partial_with(k, buf.data(), n)), be)
          << kernel_name(k) << " len " << n;
    }
  }
}

// ---- A4: any start offset --------------------------------------------------------------

TEST(Csum, A4_AllStartOffsets0to127AllKernels) {
  auto buf = random_bytes(128 + 1600, 4);
  std::mt19937 rng(44);
  for (std::size_t off = 0; off < 128; ++off) {
    for (std::size_t n : {0u, 1u, 2u, 3u, 7u, 15u, 16u, 17u, 31u, 32u, 33u, 63u, 64u, 65u, 127u,
                          128u, 129u, 255u, 256u, 257u, 1499u, 1500u, 1600u}) {
      wsum seed = rng();
      wsum ref = csum_partial_with(Kernel::Reference, buf.data() + off, n, seed);
      for (Kernel k : kAll) {
        if (!kernel_supported(k)) continue;
        ASSERT_EQ(csum_partial_with(k, buf.data() + off, n, seed), ref)
            << kernel_name(k) << " off " << off << " len " << n;
      }
    }
  }
}

// ---- exhaustive kernel agreement ----------------------------------------------------------

TEST(Csum, KernelsMatchReferenceAllLengths0to2048AllOffsets0to63) {
  auto buf = random_bytes(2048 + 64, 5);
  auto ks = fast_kernels();
  std::mt19937 rng(55);
  for (std::size_t off = 0; off < 64; ++off) {
    for (std::size_t n = 0; n <= 2048; ++n) {
      wsum seed = rng();
      wsum ref = csum_partial_with(Kernel::Reference, buf.data() + off, n, seed);
      for (Kernel k : ks)
        ASSERT_EQ(csum_partial_with(k, buf.data() + off, n, seed), ref)
            << kernel_name(k) << " off " << off << " len " << n;
    }
  }
}

// The dispatched entry points (csum_partial, csum_partial_copy) and every kernel, against the
// reference, at every start offset 0..63 from a 64-byte boundary — so that each head a kernel
// may sum before its first aligned load (0..63 bytes, odd ones moving the word pairing of the
// rest by one byte) meets every remaining length — over every length 0..4096 for random bytes
// and all 0xFF (a carry on every add), and 0..2048 for 0xFF runs mixed with random and zero
// bytes; random wsum seeds (including 0xffffffff). Rules C-13 (fold, end-around carry), A3
// (odd tail byte is a high byte), A4 (any start address).
TEST(Csum, C13_A3_A4_EntryPointsAndKernelsMatchReferencePatternsAllLengthsOffsets) {
  constexpr std::size_t kMax = 4096, kOffs = 64;
  struct Free {
    void operator()(std::uint8_t* q) const { std::free(q); }
  };
  std::unique_ptr<std::uint8_t, Free> mem(static_cast<std::uint8_t*>(std::aligned_alloc(64, kMax + kOffs)));
  std::unique_ptr<std::uint8_t, Free> dmem(static_cast<std::uint8_t*>(std::aligned_alloc(64, kMax + 2 * kOffs)));
  ASSERT_TRUE(mem && dmem);
  std::mt19937 rng(0xc5a1);
  const auto ks = fast_kernels();
  for (int pattern = 0; pattern < 4; ++pattern) {
    for (std::size_t i = 0; i < kMax + kOffs; ++i) {
      std::uint8_t& b = mem.get()[i];
      switch (pattern) {
        case 0: b = std::uint8_t(rng()); break;
        case 1: b = 0xff; break;
        case 2: b = rng() % 8 == 0 ? std::uint8_t(rng()) : 0xff; break;
        default: b = rng() % 3 == 0 ? 0 : (rng() % 2 ? 0xff : std::uint8_t(rng())); break;
      }
    }
    const std::size_t max = pattern < 2 ? kMax : kMax / 2;
    for (std::size_t off = 0; off < kOffs; ++off) {
      const std::uint8_t* p = mem.get() + off;
      for (std::size_t n = 0; n <= max; ++n) {
        const wsum seed = n % 7 == 0 ? 0xffffffffu : n % 5 == 0 ? 0 : wsum(rng());
        const wsum ref = csum_partial_with(Kernel::Reference, p, n, seed);
        ASSERT_EQ(csum_partial(p, n, seed), ref) << "pattern " << pattern << " off " << off
                                                 << " len " << n;
        for (Kernel k : ks)
          ASSERT_EQ(csum_partial_with(k, p, n, seed), ref)
              << kernel_name(k) << " pattern " << pattern << " off " << off << " len " << n;
        if (off % 8 == 0 || n % 61 == 0 || n > 1000) {  // copy+sum: a sample (it also checks the bytes)
          std::uint8_t* d = dmem.get() + (off * 13 + 5) % kOffs;
          ASSERT_EQ(csum_partial_copy(d, p, n, seed), ref) << "copy off " << off << " len " << n;
          ASSERT_EQ(std::memcmp(d, p, n), 0) << "copy off " << off << " len " << n;
        }
      }
    }
  }
}

// Lengths around the kernels' internal chunk boundaries (64 KiB bulk chunks, 128 KiB exact
// 32-bit chunk bound) with all-0xFF data, where a lost carry or a 32-bit overflow would show,
// and with random data; every kernel and the entry points against the reference.
TEST(Csum, C13_ChunkBoundaryLengthsAllOnesAndRandom) {
  std::vector<std::uint8_t> ones(3 * 65536 + 512, 0xff);
  auto rnd = random_bytes(ones.size(), 0xc5a2);
  std::mt19937 rng(0xc5a3);
  std::vector<std::size_t> lens;
  for (std::size_t base : {65536u, 131072u, 196608u})
    for (int d = -65; d <= 129; ++d) lens.push_back(std::size_t(std::int64_t(base) + d));
  for (const auto* data : {&ones, &rnd}) {
    for (std::size_t n : lens) {
      for (std::size_t off : {0u, 1u, 33u}) {
        const wsum seed = n % 3 == 0 ? 0xffffffffu : wsum(rng());
        const std::uint8_t* p = data->data() + off;
        const wsum ref = csum_partial_with(Kernel::Reference, p, n, seed);
        ASSERT_EQ(csum_partial(p, n, seed), ref) << n << " off " << off;
        for (Kernel k : fast_kernels())
          ASSERT_EQ(csum_partial_with(k, p, n, seed), ref) << kernel_name(k) << " " << n;
      }
    }
  }
}

// Every buffer ends exactly at the end of its heap block, so the ASan build catches any read
// or write past the end (the AVX-512 kernel's masked tail, the AVX2 kernel's overlapping last
// load must stay inside [p, p+n)). A4: all start offsets 0..63.
TEST(Csum, A4_ExactSizeBlocksNoAccessPastTheEnd) {
  std::mt19937 rng(0xc5a4);
  for (std::size_t n = 0; n <= 300; ++n) {
    for (std::size_t off = 0; off < 64; off += (n < 80 ? 1 : 9)) {
      std::vector<std::uint8_t> src(off + n), dst(off + n);
      for (auto& b : src) b = std::uint8_t(rng() % 4 == 0 ? 0xff : rng());
      const std::uint8_t* p = src.data() + off;
      const wsum seed = wsum(rng());
      const wsum ref = csum_partial_with(Kernel::Reference, p, n, seed);
      ASSERT_EQ(csum_partial(p, n, seed), ref) << n << " " << off;
      for (Kernel k : kAll) {
        if (!kernel_supported(k)) continue;
        ASSERT_EQ(csum_partial_with(k, p, n, seed), ref) << kernel_name(k) << " " << n;
        ASSERT_EQ(csum_partial_copy_with(k, dst.data() + off, p, n, seed), ref)
            << kernel_name(k) << " " << n;
        if (n) {
          ASSERT_EQ(std::memcmp(dst.data() + off, p, n), 0);
        }
      }
    }
  }
}

TEST(Csum, WorstCarryAllOnes) {
  // n bytes of 0xff: every full word is 0xffff, which is 0 mod 0xffff but keeps the sum
  // non-zero, so an even n folds to 0xffff. An odd n adds a final word 0xff00 (tail byte is
  // the high byte), so it folds to 0xff00.
  std::vector<std::uint8_t> buf(256 * 1024 + 64, 0xff);
  for (std::size_t n : {2u, 3u, 64u, 65u, 1500u, 1501u, 65535u, 65536u, 65537u, 131072u,
                        200000u, 200001u, 262143u, 262144u}) {
    std::uint16_t expect = (n & 1) ? 0xff00 : 0xffff;
    for (std::size_t off : {0u, 1u, 31u}) {
      for (Kernel k : kAll) {
        if (!kernel_supported(k)) continue;
        ASSERT_EQ(csum_fold16(csum_partial_with(k, buf.data() + off, n)), expect)
            << kernel_name(k) << " n " << n;
        ASSERT_EQ(csum_partial_with(k, buf.data() + off, n, 0xffffffffu),
                  csum_partial_with(Kernel::Reference, buf.data() + off, n, 0xffffffffu));
      }
    }
  }
}

TEST(Csum, WorstCarryAllOnesLastByte01) {
  // Even n: (n/2 - 1) words 0xffff and a final 0xff01. mod 0xffff: 0xff01 → folded 0xff01.
  std::vector<std::uint8_t> buf(256 * 1024, 0xff);
  for (std::size_t n : {2u, 64u, 1500u, 9000u, 65536u, 131072u, 262144u}) {
    std::vector<std::uint8_t> b(buf.begin(), buf.begin() + n);
    b[n - 1] = 0x01;
    for (Kernel k : kAll) {
      if (!kernel_supported(k)) continue;
      ASSERT_EQ(csum_fold16(csum_partial_with(k, b.data(), n)), 0xff01) << kernel_name(k);
    }
  }
}

TEST(Csum, LargeLengthsUpTo200KiB) {
  auto buf = random_bytes(200 * 1024 + 8, 6);
  std::mt19937 rng(66);
  for (std::size_t n : {4095u, 65535u, 65536u, 65537u, 100001u, 131072u, 200u * 1024u}) {
    for (std::size_t off : {0u, 3u}) {
      wsum seed = rng();
      wsum ref = csum_partial_with(Kernel::Reference, buf.data() + off, n, seed);
      for (Kernel k : fast_kernels())
        ASSERT_EQ(csum_partial_with(k, buf.data() + off, n, seed), ref) << kernel_name(k) << n;
      EXPECT_EQ(csum_partial(buf.data() + off, n, seed), ref);
    }
  }
}

TEST(Csum, CopyAndSumEqualsMemcpyPlusSum) {
  auto src = random_bytes(2048 + 64, 7);
  std::vector<std::uint8_t> dst(2048 + 64 + 32), guard(dst.size(), 0xa5);
  std::mt19937 rng(77);
  for (Kernel k : kAll) {
    if (!kernel_supported(k)) continue;
    for (std::size_t off = 0; off < 64; ++off) {
      std::size_t doff = (off * 7) % 64;
      for (std::size_t n = 0; n <= 2048; n += (k == Kernel::Reference ? 61 : 1)) {
        std::memset(dst.data(), 0xa5, dst.size());
        wsum seed = rng();
        wsum got = csum_partial_copy_with(k, dst.data() + doff, src.data() + off, n, seed);
        ASSERT_EQ(got, csum_partial_with(Kernel::Reference, src.data() + off, n, seed))
            << kernel_name(k) << " off " << off << " len " << n;
        ASSERT_EQ(std::memcmp(dst.data() + doff, src.data() + off, n), 0);
        ASSERT_EQ(std::memcmp(dst.data(), guard.data(), doff), 0);  // nothing before dst
        ASSERT_EQ(std::memcmp(dst.data() + doff + n, guard.data(), dst.size() - doff - n), 0);
      }
    }
  }
  std::vector<std::uint8_t> big = random_bytes(200 * 1024, 8), out(big.size());
  EXPECT_EQ(csum_partial_copy(out.data(), big.data(), big.size(), 9),
            csum_partial_with(Kernel::Reference, big.data(), big.size(), 9));
  EXPECT_EQ(out, big);
}

TEST(Csum, KernelRegistry) {
  EXPECT_TRUE(kernel_supported(Kernel::Reference));
  EXPECT_TRUE(kernel_supported(Kernel::Scalar64));
  EXPECT_TRUE(kernel_supported(best_kernel()));
  EXPECT_EQ(kernel_name(Kernel::AVX2), "avx2");
  EXPECT_EQ(kernel_name(Kernel::AVX512), "avx512");
  EXPECT_EQ(kernel_name(Kernel::Reference), "reference");
#if defined(__x86_64__)
  if (kernel_supported(Kernel::AVX512)) {
    EXPECT_EQ(best_kernel(), Kernel::AVX512);
  } else if (__builtin_cpu_supports("avx2")) {
    EXPECT_EQ(best_kernel(), Kernel::AVX2);
  }
  // AVX512 needs F+BW+VL+VNNI and BMI2 (csum.hpp); it is never claimed without them.
  if (kernel_supported(Kernel::AVX512)) {
    EXPECT_TRUE(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni") &&
                __builtin_cpu_supports("bmi2"));
  }
#endif
}

// ---- csum_block_add/sub and span lists (odd boundaries) ------------------------------------

TEST(Csum, C13_BlockAddSubOddOffsets) {
  auto buf = random_bytes(301, 9);
  for (std::size_t n : {0u, 1u, 2u, 77u, 300u, 301u}) {
    std::uint16_t whole = rfc1071_be_words(buf.data(), n);
    for (std::size_t split = 0; split <= n; ++split) {
      wsum a = csum_partial(buf.data(), split);
      wsum b = csum_partial(buf.data() + split, n - split);
      ASSERT_EQ(csum_fold16(csum_block_add(a, b, split)), whole) << n << " " << split;
      // Removing the second block again leaves the first block's sum (mod 0xffff).
      wsum w = csum_partial(buf.data(), n);
      ASSERT_EQ(csum_fold16(csum_block_sub(w, b, split)) % 0xffff, csum_fold16(a) % 0xffff);
    }
  }
}

TEST(Csum, PartialSpansOddBoundaries) {
  auto buf = random_bytes(1000, 10);
  std::mt19937 rng(100);
  for (int iter = 0; iter < 500; ++iter) {
    std::vector<std::span<const std::uint8_t>> spans;
    std::size_t pos = 0, total = rng() % 1000;
    while (pos < total) {
      std::size_t l = std::min<std::size_t>(rng() % 64, total - pos);
      spans.emplace_back(buf.data() + pos, l);
      pos += l;
    }
    wsum seed = rng() & 0xffff;
    ASSERT_EQ(csum_fold16(csum_partial_spans(spans, seed)),
              csum_fold16(csum_add(seed, rfc1071_be_words(buf.data(), total))));
  }
}

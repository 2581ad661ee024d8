// `ofld bench csum`'s memory-read baseline is the fastest read the CPU can do
// (the widest vector ISA it has, several accumulators, the same buffer, timed in the same run),
// so that "best kernel / read" says how close the checksum is to the limit. A read loop slower
// than a checksum of the same bytes is no limit: a checksum loads every byte too, and adds.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ofld/core/csum.hpp"
#include "runners/bench_csum.hpp"

using namespace ofld;

TEST(BenchCsum, ReadBaselineIsTheWidestAndFastestRead) {
  bench::CsumBenchOptions o;
  o.sizes = {1500, 65536};
  o.reps = 7;
  o.rep_seconds = 0.01;
  auto r = bench::run_csum_bench(o);
  ASSERT_EQ(r.sizes.size(), 2u);
#if defined(__x86_64__)
  const char* widest = __builtin_cpu_supports("avx512f") ? "avx512"
                       : __builtin_cpu_supports("avx2")   ? "avx2"
                                                          : "scalar";
#else
  const char* widest = "scalar";
#endif
  EXPECT_EQ(r.read_isa, widest);
  for (const auto& s : r.sizes) {
    SCOPED_TRACE(s.size);
    const bench::CsumBenchEntry* read = nullptr;
    double best_read_variant = 0, best_csum = 0;
    for (const auto& e : s.entries) {
      if (e.name == "memread") read = &e;
      if (e.name.rfind("memread/", 0) == 0) best_read_variant = std::max(best_read_variant, e.median_gbps);
      // the ratios are the public entry point's (csum_partial: inline short path, then the
      // chosen kernel)
      if (e.name == "csum_partial") best_csum = e.median_gbps;
    }
    ASSERT_NE(read, nullptr);
    ASSERT_GT(best_csum, 0);
    // the baseline is the best of the read variants timed in this run
    EXPECT_DOUBLE_EQ(read->median_gbps, best_read_variant);
    EXPECT_DOUBLE_EQ(s.best_over_read, best_csum / read->median_gbps);
    // How close the checksum comes to the read is a measurement, reported by `ofld bench
    // csum` as a ratio in the same run; it is not asserted here (timing in a unit test on a
    // shared machine is noise).
  }
}

// --offset: buffers start that many bytes past a 64-byte boundary; the run reports it, and
// an offset outside 0..63 is refused with an error naming the field.
TEST(BenchCsum, OffsetIsReportedAndOutOfRangeRefused) {
  bench::CsumBenchOptions o;
  o.sizes = {100};
  o.reps = 1;
  o.rep_seconds = 0.001;
  o.offset = 13;
  const auto r = bench::run_csum_bench(o);
  EXPECT_EQ(r.offset, 13u);
  ASSERT_EQ(r.sizes.size(), 1u);
  o.offset = 64;
  try {
    (void)bench::run_csum_bench(o);
    FAIL() << "offset 64 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
  }
}

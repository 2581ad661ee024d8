// bench/runners/bench_csum.hpp — throughput of the checksum kernels against memory baselines.
//
// One run times, for each buffer size: memory-read loops (the ceiling for any summing
// kernel: every read variant the CPU runs — scalar, AVX2 and AVX-512 with 4 and 8
// accumulators — on the same buffer; the fastest median is "memread"), memcpy (the ceiling for copy-and-sum), every supported csum kernel,
// csum_partial (what callers use: inline up to 64 bytes, the chosen kernel above),
// fused copy-and-sum with the best kernel, and DPDK's rte_raw_cksum when built with
// OFLD_HAVE_DPDK. Buffers are cache-hot and start CsumBenchOptions::offset bytes past a
// 64-byte boundary (default 0: aligned). Throughput is in GB/s (10^9 bytes per second of
// the calling thread's CPU time, so time slices lost to other processes do not count); each
// entry reports the median and min/max over repetitions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ofld::bench {

struct CsumBenchOptions {
  std::vector<std::size_t> sizes{64, 1448, 1500, 9000, 65536};  ///< buffer sizes, bytes
  int reps = 9;                ///< repetitions per (entry, size); median reported
  double rep_seconds = 0.02;   ///< target wall time of one repetition, seconds
  /// Every buffer (source and destination) starts this many bytes past a 64-byte boundary,
  /// 0..63 (a packet's payload rarely starts on one; the loads of every entry then split
  /// across cache lines unless the code aligns itself).
  std::size_t offset = 0;
};

/// One timed operation at one size.
struct CsumBenchEntry {
  std::string name;  ///< "memread" (fastest read), "memread/avx512x8" (each read), "memcpy", "csum/avx2" (a kernel called directly), "csum_partial" (the public entry point), "copy+csum/avx2", "dpdk/rte_raw_cksum"
  double median_gbps = 0, min_gbps = 0, max_gbps = 0;
};

struct CsumBenchSize {
  std::size_t size = 0;  ///< bytes
  std::vector<CsumBenchEntry> entries;
  double best_over_read = 0;     ///< csum_partial (the public entry) median / memread median
  double copy_over_memcpy = 0;   ///< fused copy+csum median / memcpy median
  double best_over_dpdk = 0;     ///< csum_partial median / rte_raw_cksum median; 0 if no DPDK
};

/// The CPU the run measured: CPUID brand string, family/model (decimal) and the
/// micro-architecture class where known, e.g. "AMD EPYC (family 26 model 2: Zen 5)".
/// Empty brand strings (some VMs) leave "family F model M". Not x86: "unknown".
std::string cpu_model();

struct CsumBenchResults {
  std::string cpu;          ///< cpu_model()
  std::string best_kernel;  ///< kernel_name(best_kernel())
  /// ISA of the widest read loop this CPU runs ("avx512", "avx2", "scalar").
  std::string read_isa;
  std::size_t offset = 0;  ///< CsumBenchOptions::offset of the run
  bool have_dpdk = false;
  std::vector<CsumBenchSize> sizes;
};

/// Run the benchmark (takes about sizes × entries × reps × rep_seconds). Invalid options
/// (reps < 1, rep_seconds <= 0, a size of 0, offset > 63) throw std::invalid_argument
/// naming the field.
CsumBenchResults run_csum_bench(const CsumBenchOptions& opt);

}  // namespace ofld::bench

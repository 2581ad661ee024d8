// bench/runners/bench.hpp — LAB code (target ofld_bench_runners, not installed, no stable API):
// the runners behind `ofld bench gso` and `ofld bench gro` (`ofld bench csum`:
// bench/runners/bench_csum.hpp). Timed in the same run beside DPDK when built with libdpdk-dev.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ofld::bench {

// ---- ofld bench gso --------------------------------------------------------------------------

struct GsoBenchRow {
  std::string name;
  double ns_per_segment_median = 0, ns_per_segment_min = 0, ns_per_segment_max = 0;
  std::size_t segments = 0;
  std::string note;
};
struct GsoBenchResults {
  std::size_t payload = 0, mss = 0, segments = 0, reps = 0;
  std::vector<GsoBenchRow> rows;
  bool have_dpdk = false;
  std::string dpdk_note;
  double sg_over_dpdk = 0;  ///< ours SG median / DPDK median
  double batch_over_dpdk = 0;  ///< ours SG into a SegmentBatch (slab form) median / DPDK median
  double vxlan_sg_over_dpdk = 0;  ///< ours VXLAN sg-ref median / DPDK VXLAN_TNL_TSO median (0: not run)
  double vxlan_batch_over_dpdk = 0;  ///< the same, ours into a SegmentBatch (slab form)
  /// Same-run ratios of medians, in print order: "copy/copy-sum" (seed 001 holds below 1),
  /// "<mode> excess/memcpy" ((mode − sg-ref) / memcpy of the same bytes; target ≤ 2), for
  /// fresh and warm inputs.
  std::vector<std::pair<std::string, double>> ratios;
};
GsoBenchResults run_gso_bench(int reps = 15);
std::string gso_bench_text(const GsoBenchResults& r);
std::string gso_bench_json(const GsoBenchResults& r);

// ---- `ofld bench gro` ----------------------------------------------------------------------

struct GroBenchStat {
  std::string name;
  double median_ns = 0, min_ns = 0, max_ns = 0;  ///< per packet
};
struct GroBenchResult {
  std::vector<GroBenchStat> entries;  ///< prevalidated, validated, dpdk (when available), checksum_only
  bool have_dpdk = false;
  double prevalidated_over_dpdk = 0, validated_over_dpdk = 0;
  double csum_only_over_dpdk = 0;  ///< the validation's checksum alone over DPDK's GRO
  /// BIG TCP: ns/packet with 183936-byte aggregates (gro_ipv4_max_size 185000) over 65200-
  /// byte ones (default limit), same 1448-byte segments, same run: the per-byte cost ratio.
  double big_over_64k = 0;
  /// ns the two thread-CPU clock reads of one timed batch cost (subtracted from every batch:
  /// a system call in a VM, about 1.4 us against a few us per batch).
  double clock_overhead_ns = 0;
  std::string note;
};
/// One flow of 1448-byte TCPv4 segments in batches of 64 (header in the head, payload in a
/// fragment, as a NIC's header split delivers them); ofld with CHECKSUM_UNNECESSARY input
/// (pre-validated) and with CHECKSUM_NONE (software validation, G-12), and DPDK's
/// rte_gro_reassemble + rte_gro_timeout_flush on the same frames when built with DPDK
/// (DPDK GRO does no checksum work); and `checksum_only`, the software checksum of each
/// segment without GRO (the floor under the validated figure). ns per packet, median of `reps` runs.
GroBenchResult run_gro_bench(int reps = 11);
nlohmann::json to_json(const GroBenchResult& r);

}  // namespace ofld::bench

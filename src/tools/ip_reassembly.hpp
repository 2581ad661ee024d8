// IPv4/IPv6 reassembly of a capture's fragments, for CaptureVerifier (private to the tools
// layer; the public types ReassemblyLimits, FragFault and DatagramReport are in
// ofld/tools/csum_check.hpp, whose file comment states the rules: RFC 791 §3.2 and RFC 8200
// §4.5 keys plus the enclosing layers, RFC 5722 §4 with erratum 3089 for overlaps, RFC 7112 §5
// for IPv6 first fragments, Linux's inet_frag_queue_insert / discard_qp / ipfrag_time limits).
// Knows nothing of checksums: it takes walked buffers, gives back rebuilt datagrams.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ofld/tools/csum_check.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::tools {

/// The layer flags that mark an IP header (or IPv6 Fragment header) as a fragment's.
inline constexpr std::uint16_t kFragFlags =
    wire::layer_flag::kFirstFragment | wire::layer_flag::kLaterFragment;

inline bool is_ip(wire::HeaderKind k) noexcept {
  return k == wire::HeaderKind::Ipv4 || k == wire::HeaderKind::Ipv6;
}

/// Fragment reassembly state of one capture, bounded by ReassemblyLimits (memory; age in
/// capture time). Not thread-safe.
class IpReassembler {
 public:
  /// max_datagrams and max_fragments of 0 are taken as 1.
  explicit IpReassembler(const ReassemblyLimits& lim);
  ~IpReassembler();
  IpReassembler(const IpReassembler&) = delete;
  IpReassembler& operator=(const IpReassembler&) = delete;

  /// A datagram completed by feed(): its bytes from the IP header on (total/payload length
  /// and fragment fields rewritten as one datagram), and its report (fault None, frames and
  /// duplicates set; fields, inner_error and limit left for the caller's walk).
  struct Reassembled {
    std::vector<std::uint8_t> bytes;
    DatagramReport report;
    /// The enclosing-layer identity of its key, to pass on as `base_outer` when the datagram
    /// is walked and fed in turn (a tunnel inside it may carry fragments).
    std::string outer;
  };

  /// Age out datagrams older than their family's timeout at capture time `now_ns` (ns):
  /// Timeout events to `out`.
  void expire(std::uint64_t now_ns, std::vector<DatagramReport>& out);
  /// Take the outermost fragmented IP header of `buf` (as parsed into `lay`) into its
  /// datagram. `base_level` is added to the layout's levels; `base_outer` is the identity of
  /// the layers enclosing `buf`. Events (duplicate, overlap, evicted, ...) go to `out`.
  /// Returns the datagram when this fragment completes it.
  std::optional<Reassembled> feed(std::span<const std::uint8_t> buf, const wire::Layout& lay,
                                  std::uint8_t base_level, const std::string& base_outer,
                                  std::uint64_t frame_no, std::uint64_t now_ns,
                                  std::vector<DatagramReport>& out);
  /// End of capture: every datagram still held as Incomplete (discarded ones are not
  /// repeated); the state is cleared.
  std::vector<DatagramReport> finish();
  std::size_t datagrams_held() const noexcept;  ///< incomplete and discarded, in flight
  std::size_t bytes_held() const noexcept;      ///< fragment bytes held

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ofld::tools

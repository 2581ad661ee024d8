// ofld/io/vnet_writer.hpp — writing frames into a TAP or TUN fd with their virtio_net_hdr
// (the receive direction of the tunnel endpoints: the kernel takes the frame as if from the
// wire, drivers/net/tun.c tun_get_user → virtio_net_hdr_to_skb).
//
// One writev per frame: the 10-byte legacy header (little-endian fields, TUNSETVNETLE) when
// the fd has IFF_VNET_HDR, then the frame's pieces (offload::virtio::tap_pieces; no flattening copy).
//
// The write is where the kernel can refuse what ofld built. Linux 6.6.44 and later 6.6 stable
// releases answered EINVAL to a GSO frame with a short last segment (public fault, tailscale
// #13041); a device that is down answers EIO. VnetWriter therefore:
//  * EINTR: writes again. EAGAIN (the tun socket's send buffer is full): waits for POLLOUT and
//    writes again, for at most VnetWriterOptions::eagain_wait_ms per frame. A write that
//    returns fewer bytes than given (tun never does: tun_get_user takes a frame whole or
//    fails) is written again whole, at most kMaxShortRetries times. Only when these bounds
//    run out is the frame lost, and then it is counted (VnetWriterStats::failed).
//  * EINVAL or EIO (or a short write that cannot be cured) for a GSO frame: the same data
//    is resent as individual segments (software GSO through gso::gso_segment, as the
//    kernel's own gate virtio_net_hdr_to_skb would have set the frame up): TCP segments
//    of at most the device's MTU (gso_size lowered when MTU − headers is smaller), UDP (USO)
//    datagrams at their own gso_size (their boundaries are data); each segment written with
//    NEEDS_CSUM (csum_start/csum_offset) when the fd has a vnet header, with its checksum
//    completed in software when it has none or when the kernel refuses the NEEDS_CSUM
//    segment too (EINVAL). When every segment was taken, GSO writes of that kind (TCPv4,
//    TCPv6, USO, separately) are turned off — one log line, VnetWriterStats::gso_refused —
//    and every later frame of that kind is segmented before it is written. When the
//    segments are refused as well, the fault was not the GSO (e.g. EIO from a device that
//    is down): GSO writes stay on and the frame is counted as failed.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/offload/gso_context.hpp"
#include "ofld/offload/virtio_net.hpp"  // TapFrame
#include "ofld/wire/layout.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::io {

/// The kinds of GSO frame a TAP/TUN write can carry (virtio_net_hdr gso_type, ECN bit aside).
enum class GsoWriteKind : std::uint8_t { Tcpv4, Tcpv6, Uso, kCount };
inline constexpr std::size_t kGsoWriteKinds = std::size_t(GsoWriteKind::kCount);
/// "tcpv4", "tcpv6", "uso" (the keys of the stats document).
std::string_view to_string(GsoWriteKind k) noexcept;

/// Which GSO write kinds are turned off for one device. Shared by the writers of the queues
/// of a multi-queue device (the kernel's answer is the device's), so that the first queue
/// that meets a refusal turns the kind off for all and only it logs.
struct GsoWriteGate {
  std::array<std::atomic<bool>, kGsoWriteKinds> off{};
  bool is_off(GsoWriteKind k) const noexcept { return off[std::size_t(k)].load(std::memory_order_relaxed); }
};

/// Counters of one VnetWriter.
struct VnetWriterStats {
  std::uint64_t frames = 0;        ///< frames written (a segmented frame counts its segments)
  std::uint64_t bytes = 0;         ///< frame bytes written (without the vnet header)
  /// GSO frames of each kind the kernel refused (EINVAL/EIO) and then took as segments:
  /// each such refusal turned the kind off (normally 1 per kind and device).
  std::array<std::uint64_t, kGsoWriteKinds> gso_refused{};
  std::uint64_t sw_gso_frames = 0;    ///< GSO frames written as segments (software GSO)
  std::uint64_t sw_gso_segments = 0;  ///< segments written for them
  std::uint64_t csum_sw = 0;       ///< segments whose checksum was completed in software
  std::uint64_t eagain_waits = 0;  ///< EAGAIN answers waited out (POLLOUT) and written again
  std::uint64_t short_writes = 0;  ///< writes the kernel took only part of (written again)
  std::uint64_t failed = 0;        ///< frames (or segments) not written: counted losses
  int last_errno = 0;              ///< errno of the last failure
};

/// writev(2)'s signature: the seam through which tests make writes fail.
using WritevFn = std::function<ssize_t(int fd, const iovec* iov, int iovcnt)>;

struct VnetWriterOptions {
  std::string dev;  ///< device name (log lines)
  wire::LinkType link = wire::LinkType::Ethernet;  ///< Ethernet (TAP) or RawIp (TUN)
  bool vnet_hdr = true;  ///< the fd carries a 10-byte virtio_net_hdr (IFF_VNET_HDR)
  int mtu = 1500;        ///< the device's MTU, bytes of L3 packet (caps software-GSO TCP segments)
  int eagain_wait_ms = 1000;  ///< longest wait for POLLOUT per frame before it is counted lost
  /// null → ::writev. Tests inject one that fails on purpose (the software-GSO fallback).
  WritevFn writev;
  /// shared by the queues of one device; null → the writer's own
  std::shared_ptr<GsoWriteGate> gate;
};

/// What write() did with one frame.
struct WriteResult {
  std::uint32_t frames = 0;  ///< frames the kernel took (segments count one each)
  std::uint32_t failed = 0;  ///< frames or segments lost (also in VnetWriterStats::failed)
  std::size_t bytes = 0;     ///< bytes the kernel took (without vnet headers)
  int error = 0;             ///< errno of a failure, 0 if none
};

class VnetWriter {
 public:
  /// More iovec entries than this and the frame is flattened first.
  static constexpr std::size_t kIovMax = 256;
  /// Whole-frame rewrites after short writes before the frame counts as refused.
  static constexpr int kMaxShortRetries = 3;

  VnetWriter(int fd, VnetWriterOptions opts);
  ~VnetWriter();
  VnetWriter(VnetWriter&&) noexcept;
  VnetWriter& operator=(VnetWriter&&) noexcept;

  /// Write one frame (header fields host-order in f.vnet); see the file comment.
  WriteResult write(const offload::virtio::TapFrame& f);
  /// Whether GSO frames of kind `k` are written as they are (false: segmented first).
  bool gso_on(GsoWriteKind k) const noexcept { return !opts_.gate->is_off(k); }
  const VnetWriterStats& stats() const noexcept { return st_; }
  /// The software GSO engine's counters (segmentation of refused / disabled kinds).
  const offload::GsoCounters& gso_counters() const noexcept { return *gso_ctr_; }

 private:
  // One writev of `f` with the EINTR/EAGAIN/short-write retries: 0, an errno, or -1 (short
  // writes past kMaxShortRetries).
  int write_whole(const offload::virtio::TapFrame& f);
  // Software GSO of `f` and a write per segment; 0 when every segment was written.
  int segment_and_write(const offload::virtio::TapFrame& f, WriteResult& res);
  void count_ok(const offload::virtio::TapFrame& f, WriteResult& res);
  void count_failed(int err, WriteResult& res);

  int fd_ = -1;
  VnetWriterOptions opts_;
  VnetWriterStats st_;
  std::unique_ptr<offload::GsoCounters> gso_ctr_;
  std::vector<core::Packet> segs_;
  std::vector<iovec> iov_;
  std::vector<std::span<const std::uint8_t>> pieces_;
  std::vector<std::uint8_t> flat_;
};

}  // namespace ofld::io

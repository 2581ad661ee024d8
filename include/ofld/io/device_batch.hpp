// ofld/io/device_batch.hpp — the batch read/write interface shared by io::Tap and io::Tun:
// what an endpoint's loop uses to move frames between a TAP/TUN queue and its data path
// without touching the fd itself.
//
// Read: Tap::read_batch / Tun::read_batch read up to `max` frames without blocking (one
// read(2) each into the device's own 64 KiB + 64 buffer, reused frame after frame so that it
// stays in cache, unless the sink kept a reference to it) and hand each to a FrameSink with
// its virtio_net_hdr decoded (little-endian fields, TUNSETVNETLE; wire::virtio_net::parse). A frame shorter than the vnet header, or
// whose header does not decode, is not handed on: it is counted (DeviceReadStats::bad_vnet_hdr).
// Write: Tap::write_batch / Tun::write_batch write frames with their virtio_net_hdr through the
// device's io::VnetWriter (EAGAIN waits, short-write retries, software GSO fallback when the
// kernel refuses a GSO frame; io/vnet_writer.hpp) and return what was taken and what was lost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ofld/core/packet.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::io {

/// Receives the frames of a read_batch, one call per frame, in the order the kernel gave them.
/// `frame` points into the device's buffer and is valid only during the call.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  /// `vnet`: the decoded header (all zero when the device has no vnet header); `frame`: the
  /// Ethernet frame (TAP) or IP packet (TUN), without the header.
  virtual void frame(const wire::virtio_net::Hdr& vnet, std::span<const std::uint8_t> frame) = 0;
  /// The same, with the read buffer that holds `frame`: a sink may keep references to it
  /// (packets whose fragments point into it) past the call; the device then reads the next
  /// frame into a new buffer. Default: frame(vnet, frame).
  virtual void frame(const wire::virtio_net::Hdr& vnet, std::span<const std::uint8_t> frame,
                     const core::BufferRef& owner) {
    (void)owner;
    this->frame(vnet, frame);
  }
};

/// Counters of a device's read_batch calls (one device queue; not thread-safe).
struct DeviceReadStats {
  std::uint64_t frames = 0;        ///< frames handed to the sink
  std::uint64_t bytes = 0;         ///< their bytes (without the vnet header)
  std::uint64_t bad_vnet_hdr = 0;  ///< frames dropped: shorter than, or undecodable, vnet header
  std::uint64_t read_errors = 0;   ///< read(2) failures other than EAGAIN/EINTR
  int last_errno = 0;              ///< errno of the last read failure
};

/// Largest frame one read returns: a 64 KiB GSO super-frame, its Ethernet header and the
/// vnet header (drivers/net/tun.c never hands more to a queue reader).
inline constexpr std::size_t kDeviceReadBuf = 65536 + 64;

}  // namespace ofld::io

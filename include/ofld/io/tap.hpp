// ofld/io/tap.hpp — Linux TAP devices (/dev/net/tun) with the virtio_net_hdr.
//
// Tap::open attaches to (or creates) a TAP interface in the network namespace of the CALLING
// THREAD (use Netns::run to open one inside a namespace). The fd can then be used from any
// thread. With IFF_VNET_HDR every read and write carries a virtio_net_hdr in front of the
// Ethernet frame (spec V-18..V-21, §11; kernel drivers/net/tun.c, include/linux/virtio_net.h).
//
// VnetHdr layout (legacy 10-byte header, spec V-18):
//   byte 0 flags | 1 gso_type | 2-3 hdr_len | 4-5 gso_size | 6-7 csum_start | 8-9 csum_offset
// The 16-bit fields are LITTLE-ENDIAN on a Tap opened by this class: Tap::open issues
// TUNSETVNETLE (and fails if it is refused on a big-endian host; on a little-endian host a
// refusal is harmless since legacy native order is little-endian). AF_PACKET's
// PACKET_VNET_HDR uses the host's native order for the legacy header (little-endian on
// x86/arm64); PacketSocket handles that. Encode/decode with VnetHdr::store/load
// (wire::virtio_net, the one codec).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ofld/io/device_batch.hpp"
#include "ofld/io/result.hpp"
#include "ofld/io/unique_fd.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::offload::virtio { struct TapFrame; }

namespace ofld::io {

class VnetWriter;
struct VnetWriterOptions;
struct WriteResult;

/// virtio_net_hdr: the one codec is wire::virtio_net (layout, byte order, V-18..V-20); this
/// name is kept for io's users. store()/load() write/read the 10-byte legacy header.
using VnetHdr = wire::virtio_net::Hdr;

/// One frame read from / written to a device, with its vnet header when one is configured.
struct Frame {
  VnetHdr vnet;                    ///< all zero when the fd carries no vnet header
  std::vector<std::uint8_t> data;  ///< the Ethernet frame
};

/// TUNSETOFFLOAD argument bits (include/uapi/linux/if_tun.h; spec §3.4, F-22).
namespace tun_offload {
inline constexpr unsigned kCsum = 0x01;    ///< TUN_F_CSUM → NETIF_F_HW_CSUM
inline constexpr unsigned kTso4 = 0x02;    ///< TUN_F_TSO4 (needs CSUM)
inline constexpr unsigned kTso6 = 0x04;    ///< TUN_F_TSO6 (needs CSUM)
inline constexpr unsigned kTsoEcn = 0x08;  ///< TUN_F_TSO_ECN (needs TSO4 or TSO6)
inline constexpr unsigned kUfo = 0x10;     ///< TUN_F_UFO (accepted, ignored)
inline constexpr unsigned kUso4 = 0x20;    ///< TUN_F_USO4 (only together with USO6)
inline constexpr unsigned kUso6 = 0x40;    ///< TUN_F_USO6
}  // namespace tun_offload

/// How to open a TAP.
struct TapOptions {
  std::string name;           ///< interface name; empty → kernel picks tapN
  bool vnet_hdr = false;      ///< IFF_VNET_HDR: every read/write carries a VnetHdr
  bool multi_queue = false;   ///< IFF_MULTI_QUEUE (open again with the same name for more queues)
  int vnet_hdr_size = 10;     ///< TUNSETVNETHDRSZ (≥ 10; bytes beyond 10 are written as zero)
  bool vnet_le = true;        ///< TUNSETVNETLE (fields little-endian); false → native order
};

/// An open TAP queue. Move-only; closing the last queue of a non-persistent TAP deletes it.
class Tap {
 public:
  /// Largest MTU a TAP accepts (64 KiB − 1 − the 14-byte Ethernet header; drivers/net/tun.c).
  static constexpr int kMaxMtu = 65535 - 14;

  /// Open /dev/net/tun and TUNSETIFF(IFF_TAP|IFF_NO_PI[|IFF_VNET_HDR][|IFF_MULTI_QUEUE])
  /// in the calling thread's network namespace. Skipped if /dev/net/tun is missing or the
  /// caller lacks CAP_NET_ADMIN; error on any other ioctl failure (named).
  static Result<Tap> open(const TapOptions& opts);

  Tap(Tap&& o) noexcept;
  Tap& operator=(Tap&& o) noexcept;
  Tap(const Tap&) = delete;
  Tap& operator=(const Tap&) = delete;
  ~Tap();

  const std::string& name() const noexcept { return name_; }
  int ifindex() const noexcept { return ifindex_; }
  int fd() const noexcept { return fd_.get(); }
  bool has_vnet_hdr() const noexcept { return vnet_hdr_; }

  /// TUNSETOFFLOAD(bits) (tun_offload::*). Error (EINVAL) for combinations the kernel
  /// refuses (F-22: TSO without CSUM, USO4 without USO6, ...).
  Status set_offload(unsigned bits);
  /// Try `wanted`, then progressively smaller subsets (drop USO, TSO_ECN, TSO6, TSO4) until
  /// one is accepted; returns the accepted bit set (0 = nothing could be set).
  Result<unsigned> set_offload_best(unsigned wanted);

  /// Bring the link up (SIOCSIFFLAGS |= IFF_UP).
  Status set_up();
  /// Set the MTU (SIOCSIFMTU), bytes of L3 payload.
  Status set_mtu(int mtu);
  /// Set the MAC address (SIOCSIFHWADDR).
  Status set_mac(const std::uint8_t mac[6]);
  /// Read the MAC address (SIOCGIFHWADDR) into `mac`.
  Status get_mac(std::uint8_t mac[6]) const;

  /// Write one frame (the kernel receives it as if from the wire). With a vnet header,
  /// `vnet` is prepended (nullptr → all-zero header). Error carries errno text (e.g. EINVAL
  /// when the kernel rejects the header, S-9).
  Status write(std::span<const std::uint8_t> frame, const VnetHdr* vnet = nullptr);
  /// Wait up to timeout_ms for one frame the kernel transmitted on this TAP; nullopt on
  /// timeout. Frames longer than the buffer (256 KiB) are an error.
  Result<std::optional<Frame>> read(int timeout_ms);
  /// Read and discard everything queued now.
  void drain();

  /// Endpoint loop, device → data path: up to `max` non-blocking reads, each frame (vnet
  /// header decoded) handed to `sink`; stops when nothing is queued. Returns the reads done
  /// (device_batch.hpp). Not thread-safe: one reader per queue.
  std::size_t read_batch(std::size_t max, FrameSink& sink);
  const DeviceReadStats& read_stats() const noexcept { return rstats_; }
  /// Set up the writer of write_batch (device name, MTU, shared GSO gate, fault seam);
  /// without it the first write_batch uses defaults (Ethernet, the TAP's vnet header, MTU 1500).
  void attach_writer(const VnetWriterOptions& opts);
  /// Endpoint loop, data path → device: write every frame with its virtio_net_hdr through the
  /// writer (fallbacks: vnet_writer.hpp). The sum of the frames' results.
  WriteResult write_batch(std::span<const offload::virtio::TapFrame> frames);
  /// The writer's counters (null before the first attach_writer / write_batch).
  const VnetWriter* writer() const noexcept { return writer_.get(); }

 private:
  Tap() = default;
  Status ifreq_ioctl(unsigned long req, void* ifr, const char* what);

  UniqueFd fd_;
  UniqueFd ctl_fd_;  // AF_INET datagram socket in the TAP's namespace, for SIOC* ioctls
  std::string name_;
  int ifindex_ = 0;
  bool vnet_hdr_ = false;
  bool vnet_le_ = true;
  int vnet_hdr_size_ = 10;
  core::BufferRef rbuf_;                // read_batch buffer (kDeviceReadBuf)
  DeviceReadStats rstats_;
  std::unique_ptr<VnetWriter> writer_;  // write_batch
};

}  // namespace ofld::io

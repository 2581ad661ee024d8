// ofld/io/tun.hpp — a Linux TUN device (IFF_TUN: raw IP packets, no Ethernet header) with
// the virtio_net_hdr, for the L3 tunnel modes (GUE, GRE, ip6gre).
//
// With IFF_VNET_HDR every read and write carries the 10-byte legacy virtio_net_hdr (spec
// V-18..V-21, fields little-endian via TUNSETVNETLE); csum_start counts from the IP header.
// TUNSETOFFLOAD bits are those of io::tun_offload (tap.hpp). The device lives in the calling
// thread's network namespace and is deleted when the fd closes (not persistent).
// Kernel: drivers/net/tun.c (tun_set_iff, tun_get_user, tun_put_user).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ofld/io/device_batch.hpp"
#include "ofld/io/result.hpp"
#include "ofld/io/unique_fd.hpp"

namespace ofld::offload::virtio { struct TapFrame; }

namespace ofld::io {

class VnetWriter;
struct VnetWriterOptions;
struct WriteResult;

class Tun {
 public:
  /// TUNSETIFF(IFF_TUN|IFF_NO_PI[|IFF_VNET_HDR]), non-blocking fd. Skipped without
  /// /dev/net/tun or CAP_NET_ADMIN; other failures are errors naming the step.
  /// multi_queue: IFF_MULTI_QUEUE (open again with the same name for more queues).
  static Result<Tun> open(const std::string& name, bool vnet_hdr, bool multi_queue = false);
  Tun(Tun&& o) noexcept;
  Tun& operator=(Tun&& o) noexcept;
  Tun(const Tun&) = delete;
  Tun& operator=(const Tun&) = delete;
  ~Tun();

  int fd() const noexcept { return fd_.get(); }
  const std::string& name() const noexcept { return name_; }
  bool has_vnet_hdr() const noexcept { return vnet_hdr_; }
  /// TUNSETOFFLOAD(bits); EINVAL for combinations the kernel refuses (F-22).
  Status set_offload(unsigned bits);
  /// Try `wanted`, then drop USO, TSO_ECN, TSO6, TSO4, CSUM in turn; the accepted set.
  Result<unsigned> set_offload_best(unsigned wanted);
  Status set_mtu(int mtu);
  Status set_up();

  /// Endpoint loop, device → data path: up to `max` non-blocking reads, each IP packet (vnet
  /// header decoded) handed to `sink` (device_batch.hpp). One reader per queue.
  std::size_t read_batch(std::size_t max, FrameSink& sink);
  const DeviceReadStats& read_stats() const noexcept { return rstats_; }
  /// Set up the writer of write_batch; without it the first write_batch uses defaults (raw IP,
  /// the TUN's vnet header, MTU 1500).
  void attach_writer(const VnetWriterOptions& opts);
  /// Endpoint loop, data path → device: write every packet with its virtio_net_hdr through
  /// the writer (fallbacks: vnet_writer.hpp). The sum of the packets' results.
  WriteResult write_batch(std::span<const offload::virtio::TapFrame> frames);
  /// The writer's counters (null before the first attach_writer / write_batch).
  const VnetWriter* writer() const noexcept { return writer_.get(); }

 private:
  Tun() = default;
  UniqueFd fd_, ctl_;
  std::string name_;
  bool vnet_hdr_ = false;
  core::BufferRef rbuf_;                // read_batch buffer (kDeviceReadBuf)
  DeviceReadStats rstats_;
  std::unique_ptr<VnetWriter> writer_;  // write_batch
};

}  // namespace ofld::io

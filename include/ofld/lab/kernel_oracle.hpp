// ofld/lab/kernel_oracle.hpp — the running Linux kernel as a reference for GSO and GRO.
//
// Each oracle builds a private network namespace ("ofld-<what>-<pid>-<n>") with its
// interfaces inside, replays frames through the kernel there and returns what the kernel
// emitted, byte for byte. Nothing is addressed outside the namespace; IPv6 is disabled on
// all its interfaces (sysctl disable_ipv6) so no router solicitations or MLD reports appear.
// Destruction closes every fd and deletes the namespace (and with it the interfaces).
//
//  - KernelGso   (spec K-3b): a super-packet + virtio_net_hdr is written into a TAP opened
//    with IFF_VNET_HDR; the kernel bridges it to a sink without any offload (a second TAP
//    without vnet header / TUNSETOFFLOAD, or a veth with tx-checksumming/sg/tso/gso off), so
//    it segments and checksums in software; the sink's frames are returned.
//  - KernelGro   (spec K-3, K-7): frames are sent with AF_PACKET into veth0; veth1 has GRO on
//    and either gro_flush_timeout + napi_defer_hard_irqs (default) or threaded NAPI, so a
//    burst reaches one NAPI poll; veth1's frames after GRO are captured with PACKET_VNET_HDR
//    (gso_type/gso_size of each aggregate, NEEDS_CSUM/csum_start for CHECKSUM_PARTIAL).
//    A poll that uses its whole budget (64) flushes everything, so bursts > 64 frames are
//    cut by the kernel every 64 frames (K-3).
//  - KernelVxlan (spec K-3b, K-1, K-2): the TAP above is bridged with a kernel VXLAN device
//    whose underlay is a veth with all offloads off; VXLAN-encapsulated, segmented output is
//    captured on the underlay's peer. Use only as a TRANSMIT reference (kernel RCO receive
//    is broken, K-1). Outer IPv4 ID is random and DF clear (K-3b).
//
// All waits are bounded: an operation returns once no matching frame arrived for
// `quiet_ms` after the last one (or `first_frame_ms` when none came), and never later
// than `total_ms`. Results: ok, error (step + command stderr), or skipped (not root, a
// kernel facility missing) — tests GTEST_SKIP() with Result::message().
//
// LAB code (target ofld_lab): used by the ofld command and the tests; not part of libofld,
// not installed, no stable API.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ofld/io/link.hpp"
#include "ofld/io/netns.hpp"
#include "ofld/io/packet_socket.hpp"
#include "ofld/io/tap.hpp"

namespace ofld::lab {

using io::Frame;
using io::Result;
using io::Status;
using io::VnetHdr;
using Mac = std::array<std::uint8_t, 6>;

/// Bounded waiting for kernel output.
struct OracleTiming {
  int first_frame_ms = 1000;  ///< give up when nothing arrives within this
  int quiet_ms = 50;          ///< done when nothing more arrives for this long
  int total_ms = 4000;        ///< hard cap per operation
};

/// Software GSO reference (K-3b).
class KernelGso {
 public:
  enum class Sink : std::uint8_t {
    Tap,   ///< tap0 —br0— tap1 (tap1 without vnet header / TUNSETOFFLOAD)
    Veth,  ///< tap0 —br0— veth0 (tx/sg/tso/gso off) → veth1, captured with AF_PACKET
  };
  struct Options {
    Sink sink = Sink::Tap;
    /// TUNSETOFFLOAD wanted on tap0; the largest accepted subset is used (tap_offloads()).
    unsigned tap_offload = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40;
    int mtu = 65535;  ///< MTU of the veth sink; TAPs get min(mtu, Tap::kMaxMtu)
    OracleTiming timing;
  };

  static Result<KernelGso> create(const Options& opts);
  static Result<KernelGso> create() { return create(Options{}); }

  /// Write `frame` with `vnet` into tap0; return the frames the sink emitted whose Ethernet
  /// source address equals `frame`'s, in order (vnet headers all zero). An error if the
  /// kernel refuses the write (e.g. EINVAL for a header it rejects, S-9 / K-6).
  Result<std::vector<Frame>> segment(const VnetHdr& vnet, std::span<const std::uint8_t> frame);

  unsigned tap_offloads() const noexcept { return offloads_; }
  const std::string& netns_name() const noexcept { return ns_.name(); }

 private:
  KernelGso(io::Netns ns) : ns_(std::move(ns)) {}
  io::Netns ns_;  // declared first: destroyed last, after every fd below is closed
  std::optional<io::Tap> tap0_, tap1_;
  std::optional<io::PacketSocket> sink_;
  unsigned offloads_ = 0;
  OracleTiming timing_;
};

/// veth GRO reference (K-3, K-7).
class KernelGro {
 public:
  enum class Mode : std::uint8_t {
    FlushTimeout,  ///< gro_flush_timeout + napi_defer_hard_irqs 1 on veth1 (selftest's way)
    ThreadedNapi,  ///< threaded NAPI, kthread pinned to the sender's CPU, SCHED_FIFO sender
  };
  struct Options {
    Mode mode = Mode::FlushTimeout;
    std::uint32_t gro_flush_timeout_ns = 2'000'000;
    int mtu = 65535;
    bool promiscuous = true;  ///< veth1 promisc: any destination MAC is taken
    /// BIG TCP limits set on veth1, the GRO side (0: the netdev default, 65536); the IPv4
    /// ones over netlink (io::set_link_size_limits). A kernel that refuses them → skipped.
    io::LinkSizeLimits sizes{};
    OracleTiming timing;
  };
  static constexpr Mac kVeth0Mac{0x02, 0x6f, 0x66, 0x6c, 0x00, 0x01};  ///< sender side
  static constexpr Mac kVeth1Mac{0x02, 0x6f, 0x66, 0x6c, 0x00, 0x02};  ///< GRO side

  static Result<KernelGro> create(const Options& opts);
  static Result<KernelGro> create() { return create(Options{}); }

  /// Send `burst` back to back into veth0 (a frame's non-zero vnet header is passed with
  /// PACKET_VNET_HDR) and return what veth1 delivered after GRO, in delivery order, each
  /// with the kernel's virtio_net_hdr view (gso_type/gso_size; NEEDS_CSUM + csum_start/
  /// csum_offset for a merged, CHECKSUM_PARTIAL aggregate — K-4).
  Result<std::vector<Frame>> receive(std::span<const Frame> burst);
  /// Convenience: frames without vnet headers.
  Result<std::vector<Frame>> receive(const std::vector<std::vector<std::uint8_t>>& burst);

  const std::string& netns_name() const noexcept { return ns_.name(); }

 private:
  KernelGro(io::Netns ns) : ns_(std::move(ns)) {}
  Status pin_napi_thread(int cpu);
  io::Netns ns_;
  std::optional<io::PacketSocket> tx_, rx_;
  Options opts_;
};

/// Kernel VXLAN transmit reference (K-3b; see K-1/K-2 for RCO caveats).
class KernelVxlan {
 public:
  struct Options {
    std::uint32_t vni = 42;
    std::uint16_t dstport = 4789;
    bool udpcsum = true;     ///< outer UDP checksum (false → noudpcsum)
    bool remcsumtx = false;  ///< RCO on transmit (needs the vxlan "remcsumtx" option)
    /// Non-zero: pin the outer UDP source port (srcport P P+1); 0: kernel's hashed range.
    std::uint16_t src_port = 0;
    int underlay_mtu = 9000;  ///< veth underlay MTU; the vxlan device gets underlay − 50
    unsigned tap_offload = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40;
    OracleTiming timing;
  };
  static constexpr std::array<std::uint8_t, 4> kLocalIp{10, 200, 0, 1};   ///< vxlan local
  static constexpr std::array<std::uint8_t, 4> kRemoteIp{10, 200, 0, 2};  ///< vxlan remote
  static constexpr Mac kUnderlayMac{0x02, 0x6f, 0x66, 0x6c, 0x01, 0x01};  ///< veth0 (outer src)
  static constexpr Mac kPeerMac{0x02, 0x6f, 0x66, 0x6c, 0x01, 0x02};      ///< veth1 (outer dst)

  static Result<KernelVxlan> create(const Options& opts);
  static Result<KernelVxlan> create() { return create(Options{}); }

  /// Write the inner `frame` with `vnet` into the TAP; return the outer frames captured on
  /// the underlay peer (UDP to kRemoteIp:dstport only), in order.
  Result<std::vector<Frame>> transmit(const VnetHdr& vnet, std::span<const std::uint8_t> frame);

  unsigned tap_offloads() const noexcept { return offloads_; }
  const std::string& netns_name() const noexcept { return ns_.name(); }

 private:
  KernelVxlan(io::Netns ns) : ns_(std::move(ns)) {}
  io::Netns ns_;
  std::optional<io::Tap> tap_;
  std::optional<io::PacketSocket> cap_;
  unsigned offloads_ = 0;
  Options opts_;
};

namespace oracle_detail {
/// Shared set-up steps (kernel_oracle.cpp).
Status disable_ipv6(const io::Netns& ns);
Status wait_bridge_forwarding(const io::Netns& ns, const std::string& port, int timeout_ms);
/// ethtool -K dev <feature> off for each; features the device lacks are ignored.
void features_off(const io::Netns& ns, const std::string& dev, const std::vector<std::string>& f);
std::string mac_str(const Mac& m);
/// Dotted-quad text of an IPv4 address in network byte order ("10.200.0.1").
std::string ipv4_str(const std::array<std::uint8_t, 4>& a);
/// Skipped ("ethtool not available") unless `ethtool --version` runs.
Status require_ethtool();
/// `ip link add dev0 address mac0 mtu M type veth peer name dev1 address mac1 mtu M` in `ns`;
/// skipped ("cannot create veth: ...") when the kernel refuses it.
Status add_veth_pair(const io::Netns& ns, const std::string& dev0, const Mac& mac0,
                     const std::string& dev1, const Mac& mac1, int mtu);
/// Inside `ns`: an AF_PACKET socket bound to `dev` (PACKET_VNET_HDR when `vnet_hdr`).
Result<io::PacketSocket> open_packet_socket(const io::Netns& ns, const std::string& dev,
                                            bool vnet_hdr = false);
using ReadFn = std::function<Result<std::optional<Frame>>(int timeout_ms)>;
using KeepFn = std::function<bool(const Frame&)>;
/// Read frames until quiet / first-frame timeout / total cap (OracleTiming); keep those
/// `keep` accepts.
Result<std::vector<Frame>> collect(const ReadFn& read, const KeepFn& keep, const OracleTiming& t);
}  // namespace oracle_detail

}  // namespace ofld::lab

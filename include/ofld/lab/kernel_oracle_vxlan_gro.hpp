// ofld/lab/kernel_oracle_vxlan_gro.hpp — the running kernel's VXLAN receive side as a GRO
// reference (spec K-3, W-12, W-15..W-19).
//
// A private namespace ("ofld-vxgro-<pid>-<n>") holds a veth pair and a kernel VXLAN device:
//
//   AF_PACKET → oveth0 (TSO off) ──veth── oveth1 (10.201.0.2, GRO on, threaded NAPI)
//                                           └─ ovx0: vxlan id VNI dstport 4789 local 10.201.0.2
//                                              remote 10.201.0.1 dev oveth1 (GRO on)
//
// Outer frames (Ethernet / IPv4 to 10.201.0.2 / UDP to 4789 / VXLAN / inner Ethernet) are sent
// as one burst; the burst reaches one NAPI poll of oveth1 (K-3 (a)), whose GRO runs UDP tunnel
// GRO through the VXLAN socket's gro_receive (U-4, W-15..W-18). The aggregates go up the
// stack to vxlan_rcv, which strips the outer headers and the tunnel GSO bits and hands the
// inner frame to the device's gro_cells (W-12, W-19), a second GRO pass. What ovx0 delivers
// after that is captured with PACKET_VNET_HDR (gso_type / gso_size, NEEDS_CSUM + csum_start
// for a CHECKSUM_PARTIAL aggregate). Root only; everything lives inside the namespace and is
// removed with it. IPv6 is disabled in the namespace, so the outer header is IPv4.
//
// LAB code (target ofld_lab): used by the ofld command and the tests; not part of libofld,
// not installed, no stable API.
#pragma once

#include "ofld/lab/kernel_oracle.hpp"

namespace ofld::lab {

class KernelVxlanGro {
 public:
  struct Options {
    std::uint32_t vni = 42;
    std::uint16_t dstport = 4789;
    int mtu = 9000;  ///< veth MTU; the vxlan device gets mtu − 50
    OracleTiming timing;
  };
  static constexpr Mac kSenderMac{0x02, 0x6f, 0x66, 0x6c, 0x02, 0x01};    ///< oveth0 (outer src)
  static constexpr Mac kReceiverMac{0x02, 0x6f, 0x66, 0x6c, 0x02, 0x02};  ///< oveth1 (outer dst)
  static constexpr Mac kVxlanMac{0x02, 0x6f, 0x66, 0x6c, 0x02, 0x03};     ///< ovx0 (inner dst)
  static constexpr std::array<std::uint8_t, 4> kSenderIp{10, 201, 0, 1};
  static constexpr std::array<std::uint8_t, 4> kReceiverIp{10, 201, 0, 2};

  static Result<KernelVxlanGro> create(const Options& opts);
  static Result<KernelVxlanGro> create() { return create(Options{}); }

  /// Send the outer frames back to back into oveth0 and return the inner frames ovx0
  /// delivered (IPv4 / IPv6 ethertypes only), in delivery order, with the kernel's
  /// virtio_net_hdr view of each.
  Result<std::vector<Frame>> receive(const std::vector<std::vector<std::uint8_t>>& burst);

  const std::string& netns_name() const noexcept { return ns_.name(); }

 private:
  KernelVxlanGro(io::Netns ns) : ns_(std::move(ns)) {}
  io::Netns ns_;  // declared first: destroyed last
  std::optional<io::PacketSocket> tx_, rx_;
  Options opts_;
};

namespace oracle_detail {
/// K-3 (a): pin the sender thread and the `napi/<dev>-*` kernel thread(s) to one CPU, then send
/// `burst` from a SCHED_FIFO thread so that the whole burst waits in the veth ring and is
/// polled at once (kernel_oracle_gro.cpp).
Status send_burst_threaded(io::PacketSocket& tx, std::span<const Frame> burst, const std::string& napi_dev);
}  // namespace oracle_detail

}  // namespace ofld::lab

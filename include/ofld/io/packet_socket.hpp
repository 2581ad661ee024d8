// ofld/io/packet_socket.hpp — AF_PACKET SOCK_RAW sockets bound to one interface.
//
// Opened in the network namespace of the CALLING THREAD (use Netns::run). Frames are whole
// Ethernet frames. With PACKET_VNET_HDR, received frames come with the kernel's
// virtio_net_hdr_from_skb view of the packet (S-7, S-8: gso_type/gso_size of a GRO
// aggregate, NEEDS_CSUM + csum_start/offset for CHECKSUM_PARTIAL, DATA_VALID for
// CHECKSUM_UNNECESSARY), and sent frames must carry one (S-1..S-5). The legacy header on a
// packet socket is in the host's native byte order (little-endian on x86).
// Kernel: net/packet/af_packet.c (packet_rcv, packet_snd, packet_rcv_vnet).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ofld/io/result.hpp"
#include "ofld/io/tap.hpp"
#include "ofld/io/unique_fd.hpp"

namespace ofld::io {

struct PacketSocketOptions {
  int ifindex = 0;                  ///< interface to bind to (required)
  bool vnet_hdr = false;            ///< PACKET_VNET_HDR on receive and send
  bool ignore_outgoing = true;      ///< PACKET_IGNORE_OUTGOING: do not see our own sends
  std::uint16_t protocol = 0x0003;  ///< ETH_P_ALL (host order)
  int rcvbuf = 4 << 20;             ///< SO_RCVBUF(FORCE) bytes
};

/// One received frame.
struct PacketRecv {
  Frame frame;                ///< bytes (+ vnet header if enabled)
  std::uint8_t pkttype = 0;   ///< sll_pkttype: PACKET_HOST 0, BROADCAST 1, MULTICAST 2, OTHERHOST 3, OUTGOING 4
  bool truncated = false;     ///< longer than the receive buffer (256 KiB)
};

class PacketSocket {
 public:
  /// socket(AF_PACKET, SOCK_RAW, htons(protocol)) + bind(ifindex) + options. Skipped without
  /// CAP_NET_RAW; errors name the failing call.
  static Result<PacketSocket> open(const PacketSocketOptions& opts);

  PacketSocket(PacketSocket&& o) noexcept;
  PacketSocket& operator=(PacketSocket&& o) noexcept;
  PacketSocket(const PacketSocket&) = delete;
  PacketSocket& operator=(const PacketSocket&) = delete;
  ~PacketSocket();

  int fd() const noexcept { return fd_.get(); }
  int ifindex() const noexcept { return ifindex_; }

  /// Transmit one frame on the bound interface. With vnet_hdr, `vnet` is prepended
  /// (nullptr → zero header). ENOBUFS (full veth ring) is retried for up to ~200 ms.
  Status send(std::span<const std::uint8_t> frame, const VnetHdr* vnet = nullptr);
  /// Wait up to timeout_ms for a frame; nullopt on timeout.
  Result<std::optional<PacketRecv>> recv(int timeout_ms);
  /// Discard everything queued now.
  void drain();

 private:
  PacketSocket() = default;
  UniqueFd fd_;
  int ifindex_ = 0;
  bool vnet_hdr_ = false;
};

}  // namespace ofld::io

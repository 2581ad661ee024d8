// ofld/io/raw_ip_socket.hpp — a raw IP socket for one IP protocol (GRE = 47), IPv4 or IPv6,
// for the gre / ip6gre tunnel modes. The kernel builds the outer IP header (no
// IP_HDRINCL); we send and receive from the protocol header on (raw(7), ipv6 raw(7)).
//
// Receive: an IPv4 raw socket delivers the IP header too; recv() skips it (ihl × 4) so that
// both families hand back the protocol payload; the outer TOS is read from that IPv4 header,
// the IPv6 traffic class from an IPV6_RECVTCLASS control message (RawIpRx::tos, for RFC 6040
// decapsulation). Bound to the local address, the socket sees
// only datagrams addressed to it. Raw sockets have no GSO: a train is sent with sendmmsg
// (one datagram per message). They work without the kernel's ip_gre module: with no
// protocol handler registered, the packet is consumed by the raw socket.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "ofld/io/result.hpp"
#include "ofld/io/unique_fd.hpp"
#include "ofld/wire/ip_addr.hpp"

namespace ofld::io {

struct RawIpSocketOptions {
  wire::IpAddr local;          ///< bind address (family picks AF_INET / AF_INET6)
  std::uint8_t protocol = 47;    ///< IP protocol (IPPROTO_GRE)
  int ttl = 0;                   ///< IP_TTL / IPV6_UNICAST_HOPS (0 = default)
  int tos = 0;                   ///< IP_TOS / IPV6_TCLASS
  int buf_bytes = 4 << 20;       ///< SO_SNDBUF / SO_RCVBUF request (SO_*BUFFORCE when allowed)
  int rcvbuf_bytes = 0;          ///< SO_RCVBUF request when > 0, else buf_bytes
};

struct RawIpRx {
  std::size_t off = 0;   ///< payload start in the buffer (past an IPv4 header)
  std::size_t len = 0;   ///< payload bytes
  wire::IpAddr from;
  int tos = -1;          ///< outer IPv4 TOS / IPv6 traffic class; -1 when not reported
};

struct RawIpStats {
  std::uint64_t sendmmsg_calls = 0;
  std::uint64_t datagrams_sent = 0;
  std::uint64_t send_errors = 0;
};

class RawIpSocket {
 public:
  /// socket(AF_INET/AF_INET6, SOCK_RAW, protocol) + bind(local) + options; non-blocking.
  /// Skipped without CAP_NET_RAW.
  static Result<RawIpSocket> open(const RawIpSocketOptions& o);
  RawIpSocket(RawIpSocket&& o) noexcept;
  RawIpSocket& operator=(RawIpSocket&& o) noexcept;
  RawIpSocket(const RawIpSocket&) = delete;
  RawIpSocket& operator=(const RawIpSocket&) = delete;
  ~RawIpSocket();

  int fd() const noexcept { return fd_.get(); }
  const RawIpStats& stats() const noexcept { return st_; }
  /// Packets the kernel dropped on this socket since it was opened, mostly receive-queue
  /// overflow (sk_drops, getsockopt SO_MEMINFO). 0 when the kernel does not say.
  std::uint64_t rx_queue_drops() const noexcept;
  /// Send `buf` as datagrams of `seg_size` bytes (last may be shorter) to `dst` with
  /// sendmmsg (up to 64 per call). EAGAIN/ENOBUFS → wait for POLLOUT (≤ 100 ms) and retry.
  /// Returns datagrams sent, or an error naming the errno.
  Result<std::size_t> send_train(const wire::IpAddr& dst, std::span<const std::uint8_t> buf,
                                 std::uint16_t seg_size);
  /// IP_TOS / IPV6_TCLASS for the following sends (the outer dsfield of a train, RFC 6040
  /// §4.1); no system call when unchanged. Returns an error naming the option.
  Result<bool> set_tos(int tos);
  /// Non-blocking receive into `buf`; nullopt when nothing is queued. A malformed IPv4
  /// header (cannot happen from the kernel) is an error.
  Result<std::optional<RawIpRx>> recv(std::span<std::uint8_t> buf);
  /// Make the socket send-only: a drop-all socket filter (SO_ATTACH_FILTER), so the kernel
  /// queues no received copy on it (every raw socket of a protocol gets a copy of every
  /// packet; the workers of a multi-queue GRE endpoint leave receiving to one). Error names
  /// the option.
  Status receive_none();

 private:
  RawIpSocket() = default;
  UniqueFd fd_;
  bool v6_ = false;
  int tos_ = 0;  // last IP_TOS / IPV6_TCLASS set
  RawIpStats st_;
};

}  // namespace ofld::io

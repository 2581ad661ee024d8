// ofld/io/udp_socket.hpp — UDP sockets for a tunnel underlay with the kernel's UDP offloads:
// UDP_SEGMENT (send a train of equal-size datagrams with one sendmsg; the kernel or NIC
// segments it and completes each outer UDP checksum) and UDP_GRO (receive a train of
// equal-size datagrams as one buffer with a gso_size cmsg). Linux udp(7), net/ipv4/udp.c
// udp_send_skb / udp_cmsg_send, udp_gro_receive (spec U-*).
//
// Start-up probes decide what the kernel accepts (one spdlog line each); each path falls
// back on its own: UDP_SEGMENT → sendmmsg of the datagrams; UDP_GRO → one datagram per
// recvmsg (recvmmsg batch). At run time EINVAL/EIO from a UDP_SEGMENT send turns that path
// off and the train is resent datagram by datagram: data is never lost to a refused offload.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <optional>
#include <string>
#include <span>

#include "ofld/io/result.hpp"
#include "ofld/io/unique_fd.hpp"
#include "ofld/wire/ip_addr.hpp"

namespace ofld::io {

struct UdpSocketOptions {
  wire::IpAddr local;        ///< bind address (family picks AF_INET / AF_INET6)
  std::uint16_t port = 0;      ///< bind port (host order); 0 = any
  bool zero_csum_tx = false;   ///< IPv4 SO_NO_CHECK / IPv6 UDP_NO_CHECK6_TX: outer checksum 0
  bool zero_csum6_rx = false;  ///< IPv6 UDP_NO_CHECK6_RX: accept checksum 0
  int ttl = 0;                 ///< IP_TTL / IPV6_UNICAST_HOPS (0 = default)
  int tos = 0;                 ///< IP_TOS / IPV6_TCLASS (0 = default)
  bool want_gso = true;        ///< use UDP_SEGMENT when the kernel accepts it
  bool want_gro = true;        ///< enable UDP_GRO when the kernel accepts it
  int buf_bytes = 4 << 20;     ///< SO_SNDBUF / SO_RCVBUF request (bytes)
  bool quiet = false;          ///< no probe log lines (secondary sockets)
  /// Whether UDP_SEGMENT sends whose last datagram is shorter are accepted: a known answer
  /// (copy the primary socket's gso_short_tail()), or nullopt = probe it at open() when
  /// UDP_SEGMENT is accepted and !quiet (else assumed yes, as on every kernel with UDP_SEGMENT
  /// so far). When refused, send_train sends the equal-size datagrams as a train and the
  /// short one on its own.
  std::optional<bool> gso_short_tail{};
  /// SO_REUSEPORT before bind: several sockets (one per worker of a multi-queue endpoint) on
  /// the same local address and port; the kernel spreads received flows over them by the
  /// 4-tuple hash.
  bool reuse_port = false;
  /// IP_RECVTOS / IPV6_RECVTCLASS: report each received datagram's outer TOS / traffic
  /// class (UdpRx::tos), for RFC 6040 ECN decapsulation.
  bool recv_tos = false;
  /// Underlay multicast (the kernel VXLAN device's `group ADDR dev IF`): the interface that
  /// datagrams to a multicast group leave by (IP_MULTICAST_IF / IPV6_MULTICAST_IF; empty: the
  /// routing table decides). With `mcast` set, multicast sends are not looped back to this host
  /// (IP_MULTICAST_LOOP 0) and leave with hop limit `ttl`, or 1 when ttl is 0 (as
  /// vxlan_xmit_one does for a multicast destination).
  bool mcast = false;
  std::string mcast_dev{};
  /// Receive a group: `local` is the group address; the socket binds group:port
  /// (SO_REUSEADDR) and joins it on mcast_dev (IP_ADD_MEMBERSHIP / IPV6_JOIN_GROUP).
  bool join_group = false;
  /// SO_RCVBUF request (bytes) when > 0, else buf_bytes. The tunnel's receive sockets ask for
  /// more than they send: a receiver descheduled for a few ms on a busy host lets the queue
  /// fill, and the kernel drops what does not fit (rx_queue_drops()).
  int rcvbuf_bytes = 0;
  /// IPv4 DF: 1 = IP_MTU_DISCOVER IP_PMTUDISC_DO (DF set; a datagram above the path MTU is
  /// refused with EMSGSIZE), 0 = IP_PMTUDISC_DONT (DF clear; the kernel fragments), -1 = the
  /// kernel's default (IP_PMTUDISC_WANT, sysctl ip_no_pmtu_disc). Ignored on IPv6.
  int df = -1;
};

/// One received buffer: `len` bytes; when gso_size > 0 it holds datagrams of gso_size bytes
/// end to end (the last may be shorter) that the kernel coalesced (UDP_GRO).
struct UdpRx {
  std::size_t len = 0;
  std::uint16_t gso_size = 0;
  wire::IpAddr from;
  std::uint16_t from_port = 0;
  /// Outer IPv4 TOS / IPv6 traffic class (UdpSocketOptions::recv_tos), -1 when not reported.
  /// A UDP_GRO train has one: the kernel's GRO does not merge datagrams whose TOS differ.
  int tos = -1;
};

/// Per-socket I/O counters.
struct UdpSocketStats {
  std::uint64_t gso_sends = 0;       ///< sendmsg calls with UDP_SEGMENT
  std::uint64_t plain_sends = 0;     ///< datagrams sent without UDP_SEGMENT
  std::uint64_t gso_disabled = 0;    ///< times a run-time error turned UDP_SEGMENT off
  std::uint64_t gso_emsgsize = 0;    ///< GSO trains resent plainly after EMSGSIZE (seg > MTU)
  std::uint64_t send_errors = 0;     ///< datagrams lost to send errors (after fallback)
  std::uint64_t gro_buffers = 0;     ///< received buffers with a gso_size cmsg
  std::uint64_t recv_batches = 0;    ///< recvmmsg calls that returned data
  std::uint64_t recv_buffers = 0;    ///< buffers (datagrams or trains) those calls returned
};

/// Whether local:port is free to bind, tested with a plain bind (no SO_REUSEPORT) of a socket
/// that is closed again. Sockets that share a port with SO_REUSEPORT admit any later socket
/// of the same user that also sets it, so a second endpoint on the same port would join the
/// group silently and take part of the flows; testing before binding the group names it
/// instead. Error: "in use by another socket ..." (EADDRINUSE; the caller names address and
/// port), or the bind's own error naming them.
/// (Two processes that test at the same instant can both pass.)
Status check_udp_port_free(const wire::IpAddr& local, std::uint16_t port);

class UdpSocket {
 public:
  /// socket + bind + options; probes UDP_SEGMENT and UDP_GRO. The socket is non-blocking.
  static Result<UdpSocket> open(const UdpSocketOptions& o);
  UdpSocket(UdpSocket&& o) noexcept;
  UdpSocket& operator=(UdpSocket&& o) noexcept;
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  ~UdpSocket();

  int fd() const noexcept { return fd_.get(); }
  bool gso() const noexcept { return gso_; }
  bool gro() const noexcept { return gro_; }
  /// UDP_SEGMENT accepts a shorter last datagram (start-up probe or given in the options).
  bool gso_short_tail() const noexcept { return short_tail_; }
  std::uint16_t local_port() const noexcept { return port_; }
  const UdpSocketStats& stats() const noexcept { return st_; }
  /// Datagrams (or UDP_GRO trains: one skb) the kernel dropped on this socket since it was
  /// opened, mostly receive-queue overflow (sk_drops: getsockopt SO_MEMINFO, SK_MEMINFO_DROPS;
  /// what `ss -m` shows as d). 0 when the kernel does not say.
  std::uint64_t rx_queue_drops() const noexcept;

  /// UDP_MAX_SEGMENTS (include/linux/udp.h, 128 since Linux 5.x; 6.12): the most datagrams
  /// one UDP_SEGMENT send may carry (udp_send_skb answers EINVAL past it).
  static constexpr std::size_t kMaxSegments = 128;

  /// Send `count` datagrams of `seg_size` bytes laid end to end in `buf` (last may be
  /// shorter) to dst:port. With UDP_SEGMENT: one sendmsg per kMaxSegments datagrams (a longer
  /// train is split, UDP_SEGMENT stays on); EINVAL/EIO there →
  /// UDP_SEGMENT off, resend without it; EMSGSIZE (segment above the path MTU) → this train
  /// is resent without it, UDP_SEGMENT stays on. EAGAIN/ENOBUFS → wait for POLLOUT (≤ 100 ms) and
  /// retry. Returns datagrams sent, or an error naming the errno.
  Result<std::size_t> send_train(const wire::IpAddr& dst, std::uint16_t port,
                                 std::span<const std::uint8_t> buf, std::uint16_t seg_size);
  /// IP_TOS / IPV6_TCLASS for the datagrams sent from now on (0..255). A setsockopt only
  /// when the value changes; error naming the errno.
  Result<bool> set_tos(int tos);
  /// IP_TTL / IPV6_UNICAST_HOPS for the datagrams sent from now on: 1..255, or 0 for the
  /// kernel's default (the setsockopt value -1). A setsockopt only when the value changes.
  Result<bool> set_ttl(int ttl);
  /// IPv4 DF for the datagrams sent from now on (UdpSocketOptions::df: 1 set, 0 clear); -1
  /// and IPv6 sockets: nothing. A setsockopt only when the value changes.
  Result<bool> set_df(int df);
  /// Non-blocking receive into `buf` (size ≥ 65535 recommended). nullopt when nothing is
  /// queued (EAGAIN).
  Result<std::optional<UdpRx>> recv(std::span<std::uint8_t> buf);
  /// Non-blocking batch receive (one recvmmsg, MSG_DONTWAIT): `arena` is cut into
  /// out.size() slots of `slot` bytes (≥ 65535 with UDP_GRO: a train can fill 64 KiB);
  /// datagram/train i lands at arena[i * slot]. Returns how many slots were filled (0 when
  /// nothing is queued). With UDP_GRO each slot may hold a train (UdpRx::gso_size); without
  /// it this is the one-datagram-per-slot fallback, still one system call per batch.
  Result<std::size_t> recv_batch(std::span<std::uint8_t> arena, std::size_t slot,
                                 std::span<UdpRx> out);
  /// As above with one buffer per slot (bufs[i] receives out[i]); at most 64 per call.
  Result<std::size_t> recv_batch(std::span<const std::span<std::uint8_t>> bufs,
                                 std::span<UdpRx> out);

 private:
  UdpSocket() = default;
  Result<std::size_t> send_plain(const void* sa, unsigned salen, std::span<const std::uint8_t> buf,
                                 std::uint16_t seg_size);
  Result<std::size_t> send_gso_iov(const void* sa, unsigned salen, iovec* iov, std::size_t niov,
                                   std::uint16_t seg_size, std::size_t n, int& eno);
  UniqueFd fd_;
  bool v6_ = false;
  bool gso_ = false;
  bool gro_ = false;
  bool short_tail_ = true;
  std::uint16_t port_ = 0;
  int tos_ = 0;  // last IP_TOS / IPV6_TCLASS set
  int ttl_ = 0;  // last IP_TTL / IPV6_UNICAST_HOPS set (0: the default)
  int df_ = -1;  // last IP_MTU_DISCOVER set: 1 DO, 0 DONT, -1 the kernel's default
  UdpSocketStats st_;
};

}  // namespace ofld::io

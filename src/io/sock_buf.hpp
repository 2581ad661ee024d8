// Socket buffer sizes and the kernel's drop count, shared by the UDP and raw IP sockets.
#pragma once

#include <sys/socket.h>

#include <cstdint>

namespace ofld::io::detail {

/// SO_SNDBUF / SO_RCVBUF requests in bytes. SO_*BUFFORCE (CAP_NET_ADMIN) goes past
/// net.core.{w,r}mem_max (208 KiB by default: too small for 64 KiB trains at several
/// Gbit/s); unprivileged, the plain option (capped by the kernel). socket(7): the kernel
/// doubles each value for its bookkeeping.
inline void set_socket_buffers(int fd, int snd, int rcv) noexcept {
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof snd) < 0)
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd);
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv) < 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
}

/// The socket's sk_drops (getsockopt SO_MEMINFO: u32[SK_MEMINFO_VARS], SK_MEMINFO_DROPS at
/// index 8, include/uapi/linux/sock_diag.h): packets the kernel dropped on it, mostly
/// receive-queue overflow; what `ss -m` shows as d. 0 when the kernel does not say.
inline std::uint64_t socket_drops(int fd) noexcept {
  std::uint32_t mem[16] = {};
  socklen_t len = sizeof mem;
  if (fd < 0 || ::getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 || len < 9 * sizeof(std::uint32_t))
    return 0;
  return mem[8];
}

}  // namespace ofld::io::detail

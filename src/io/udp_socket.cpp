// UDP sockets with UDP_SEGMENT / UDP_GRO, probes and fallbacks (see udp_socket.hpp).
#include "ofld/io/udp_socket.hpp"

#include "sock_buf.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef UDP_NO_CHECK6_TX
#define UDP_NO_CHECK6_TX 101
#endif
#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102
#endif
#ifndef SO_NO_CHECK
#define SO_NO_CHECK 11
#endif

namespace ofld::io {

namespace {
std::string err(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

socklen_t make_sa(const wire::IpAddr& a, std::uint16_t port, sockaddr_storage& ss) {
  std::memset(&ss, 0, sizeof ss);
  if (a.is_v6()) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(port);
    std::memcpy(&s6->sin6_addr, a.bytes.data(), 16);
    return sizeof(sockaddr_in6);
  }
  auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
  s4->sin_family = AF_INET;
  s4->sin_port = htons(port);
  if (a.family == 4) std::memcpy(&s4->sin_addr, a.bytes.data(), 4);
  return sizeof(sockaddr_in);
}

void from_sa(const sockaddr_storage& ss, wire::IpAddr& a, std::uint16_t& port) {
  a = {};
  if (ss.ss_family == AF_INET6) {
    auto* s6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    a.family = 6;
    std::memcpy(a.bytes.data(), &s6->sin6_addr, 16);
    port = ntohs(s6->sin6_port);
  } else if (ss.ss_family == AF_INET) {
    auto* s4 = reinterpret_cast<const sockaddr_in*>(&ss);
    a.family = 4;
    std::memcpy(a.bytes.data(), &s4->sin_addr, 4);
    port = ntohs(s4->sin_port);
  }
}

/// Control buffer of one UDP_SEGMENT cmsg.
using UdpSegmentCtrl = char[CMSG_SPACE(sizeof(std::uint16_t))];
/// A msghdr that sends the `niov` pieces at `iov` to `sa` as datagrams of `seg` bytes each
/// (the last may be shorter): one UDP_SEGMENT cmsg, written into `ctrl`.
inline msghdr udp_segment_msg(void* sa, socklen_t salen, iovec* iov, std::size_t niov,
                              UdpSegmentCtrl& ctrl, std::uint16_t seg) {
  msghdr mh{};
  mh.msg_name = sa;
  mh.msg_namelen = salen;
  mh.msg_iov = iov;
  mh.msg_iovlen = niov;
  mh.msg_control = ctrl;
  mh.msg_controllen = sizeof ctrl;
  cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_UDP;
  c->cmsg_type = UDP_SEGMENT;
  c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
  std::memcpy(CMSG_DATA(c), &seg, sizeof seg);
  return mh;
}

/// Send a 2-datagram UDP_SEGMENT train (64 + 20 bytes) over loopback to a socket of our
/// own and read it back. 1 = accepted and all 84 bytes arrived, 0 = refused (EINVAL), -1 =
/// inconclusive (no loopback in this namespace, nothing arrived).
int probe_short_tail(bool v6) {
  int rx = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int tx = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int result = -1;
  sockaddr_storage ss{};
  socklen_t sl = make_sa(*wire::IpAddr::parse(v6 ? "::1" : "127.0.0.1"), 0, ss);
  if (rx >= 0 && tx >= 0 && ::bind(rx, reinterpret_cast<sockaddr*>(&ss), sl) == 0 &&
      ::getsockname(rx, reinterpret_cast<sockaddr*>(&ss), &sl) == 0) {
    std::uint8_t buf[84] = {};
    iovec iov{buf, sizeof buf};
    alignas(cmsghdr) UdpSegmentCtrl ctrl = {};
    msghdr mh = udp_segment_msg(&ss, sl, &iov, 1, ctrl, 64);
    if (::sendmsg(tx, &mh, 0) < 0) {
      result = errno == EINVAL ? 0 : -1;
    } else {
      std::size_t got = 0;
      for (int i = 0; i < 4 && got < sizeof buf; ++i) {
        pollfd p{rx, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        std::uint8_t rb[128];
        ssize_t n;
        while ((n = ::recv(rx, rb, sizeof rb, MSG_DONTWAIT)) > 0) got += std::size_t(n);
      }
      result = got == sizeof buf ? 1 : -1;
    }
  }
  if (rx >= 0) ::close(rx);
  if (tx >= 0) ::close(tx);
  return result;
}

bool wait_writable(int fd) {
  pollfd p{fd, POLLOUT, 0};
  return ::poll(&p, 1, 100) > 0;
}

// sendmmsg until every message is sent, waiting (bounded) while the socket buffer is full;
// counts plain sends and, on a hard error, the messages not sent.
Result<std::size_t> sendmmsg_all(int fd, std::vector<mmsghdr>& m, UdpSocketStats& st) {
  const std::size_t n = m.size();
  std::size_t done = 0;
  int tries = 0;
  while (done < n) {
    int r = ::sendmmsg(fd, m.data() + done, unsigned(n - done), 0);
    if (r > 0) {
      done += std::size_t(r);
      st.plain_sends += std::size_t(r);
      continue;
    }
    if ((errno == EAGAIN || errno == ENOBUFS || errno == EINTR) && ++tries < 50) {
      wait_writable(fd);
      continue;
    }
    st.send_errors += n - done;
    return Result<std::size_t>::error(err("sendmmsg"));
  }
  return done;
}

/// The multicast send settings (and SO_REUSEADDR for a group receiver); error text or "".
std::string set_multicast(int fd, bool v6, const UdpSocketOptions& o) {
  int one = 1, zero = 0;
  unsigned ifindex = 0;
  if (!o.mcast_dev.empty()) {
    ifindex = ::if_nametoindex(o.mcast_dev.c_str());
    if (!ifindex) return "group dev " + o.mcast_dev + ": no such interface";
  }
  if (o.join_group && ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
    return err("SO_REUSEADDR");
  const int hops = o.ttl > 0 ? o.ttl : 1;
  if (v6) {
    int idx = int(ifindex);
    if ((ifindex && ::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &idx, sizeof idx) < 0) ||
        ::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &zero, sizeof zero) < 0 ||
        ::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof hops) < 0)
      return err("IPV6_MULTICAST_IF/LOOP/HOPS");
    return "";
  }
  ip_mreqn mr{};
  mr.imr_ifindex = int(ifindex);
  if ((ifindex && ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &mr, sizeof mr) < 0) ||
      ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &zero, sizeof zero) < 0 ||
      ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &hops, sizeof hops) < 0)
    return err("IP_MULTICAST_IF/LOOP/TTL");
  // only the groups this socket joined (not every group any socket of the host joined)
  ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof zero);
  return "";
}

std::string join_group(int fd, bool v6, const UdpSocketOptions& o) {
  const unsigned ifindex = o.mcast_dev.empty() ? 0 : ::if_nametoindex(o.mcast_dev.c_str());
  if (v6) {
    ipv6_mreq mr{};
    std::memcpy(&mr.ipv6mr_multiaddr, o.local.bytes.data(), 16);
    mr.ipv6mr_interface = ifindex;
    if (::setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr, sizeof mr) < 0)
      return err(("IPV6_JOIN_GROUP " + o.local.to_string()).c_str());
    return "";
  }
  ip_mreqn mr{};
  std::memcpy(&mr.imr_multiaddr, o.local.bytes.data(), 4);
  mr.imr_ifindex = int(ifindex);
  if (::setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr) < 0)
    return err(("IP_ADD_MEMBERSHIP " + o.local.to_string()).c_str());
  return "";
}

}  // namespace

Status check_udp_port_free(const wire::IpAddr& local, std::uint16_t port) {
  const bool v6 = local.is_v6();
  UniqueFd fd(::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Status::error(err("socket"));
  if (v6) {
    const int one = 1;  // as the endpoint's own sockets bind
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  }
  sockaddr_storage ss;
  const socklen_t sl = make_sa(local, port, ss);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), sl) == 0) return ok_status();
  if (errno == EADDRINUSE)
    return Status::error("in use by another socket (another endpoint on this port?)");
  return Status::error(err(("bind " + local.to_string() + " port " + std::to_string(port)).c_str()));
}

Result<UdpSocket> UdpSocket::open(const UdpSocketOptions& o) {
  UdpSocket s;
  s.v6_ = o.local.is_v6();
  s.fd_.reset(::socket(s.v6_ ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (s.fd_.get() < 0) return Result<UdpSocket>::error(err("udp socket"));
  int one = 1;
  if (s.v6_) ::setsockopt(s.fd_.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  detail::set_socket_buffers(s.fd_.get(), o.buf_bytes, o.rcvbuf_bytes > 0 ? o.rcvbuf_bytes : o.buf_bytes);
  if (o.zero_csum_tx) {
    int r = s.v6_ ? ::setsockopt(s.fd_.get(), IPPROTO_UDP, UDP_NO_CHECK6_TX, &one, sizeof one)
                  : ::setsockopt(s.fd_.get(), SOL_SOCKET, SO_NO_CHECK, &one, sizeof one);
    if (r < 0) return Result<UdpSocket>::error(err(s.v6_ ? "UDP_NO_CHECK6_TX" : "SO_NO_CHECK"));
  }
  if (s.v6_ && o.zero_csum6_rx &&
      ::setsockopt(s.fd_.get(), IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof one) < 0)
    return Result<UdpSocket>::error(err("UDP_NO_CHECK6_RX"));
  if (o.ttl > 0) {
    int t = o.ttl;
    if ((s.v6_ ? ::setsockopt(s.fd_.get(), IPPROTO_IPV6, IPV6_UNICAST_HOPS, &t, sizeof t)
               : ::setsockopt(s.fd_.get(), IPPROTO_IP, IP_TTL, &t, sizeof t)) < 0)
      return Result<UdpSocket>::error(err("ttl"));
  }
  if (o.tos > 0) {
    int t = o.tos;
    if ((s.v6_ ? ::setsockopt(s.fd_.get(), IPPROTO_IPV6, IPV6_TCLASS, &t, sizeof t)
               : ::setsockopt(s.fd_.get(), IPPROTO_IP, IP_TOS, &t, sizeof t)) < 0)
      return Result<UdpSocket>::error(err("tos"));
  }
  s.tos_ = o.tos;
  s.ttl_ = o.ttl > 0 ? o.ttl : 0;
  if (!s.v6_ && o.df >= 0)
    if (auto r = s.set_df(o.df); !r.ok()) return Result<UdpSocket>::error(r.message());
  if (o.recv_tos &&
      (s.v6_ ? ::setsockopt(s.fd_.get(), IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof one)
             : ::setsockopt(s.fd_.get(), IPPROTO_IP, IP_RECVTOS, &one, sizeof one)) < 0)
    return Result<UdpSocket>::error(err(s.v6_ ? "IPV6_RECVTCLASS" : "IP_RECVTOS"));
  if (o.reuse_port && ::setsockopt(s.fd_.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0)
    return Result<UdpSocket>::error(err("SO_REUSEPORT"));
  if (o.mcast || o.join_group)
    if (auto e = set_multicast(s.fd_.get(), s.v6_, o); !e.empty()) return Result<UdpSocket>::error(e);
  sockaddr_storage ss;
  socklen_t sl = make_sa(o.local, o.port, ss);
  if (::bind(s.fd_.get(), reinterpret_cast<sockaddr*>(&ss), sl) < 0)
    return Result<UdpSocket>::error(err(("bind " + o.local.to_string() + " port " +
                                         std::to_string(o.port)).c_str()));
  if (o.join_group)
    if (auto e = join_group(s.fd_.get(), s.v6_, o); !e.empty()) return Result<UdpSocket>::error(e);
  sl = sizeof ss;
  ::getsockname(s.fd_.get(), reinterpret_cast<sockaddr*>(&ss), &sl);
  wire::IpAddr dummy;
  from_sa(ss, dummy, s.port_);
  // Probes: UDP_SEGMENT is accepted as a socket option with a size since 4.18; UDP_GRO since 5.0.
  if (o.want_gso && o.zero_csum_tx) {
    // udp_send_skb refuses GSO on a socket without TX checksums (EINVAL): do not even try.
    if (!o.quiet) spdlog::info("udp: UDP_SEGMENT not used: the kernel refuses it with a zero outer checksum; sendmmsg");
  } else if (o.want_gso) {
    int seg = 1400;
    s.gso_ = ::setsockopt(s.fd_.get(), SOL_UDP, UDP_SEGMENT, &seg, sizeof seg) == 0;
    if (s.gso_) {
      seg = 0;  // per-send cmsg decides the size
      ::setsockopt(s.fd_.get(), SOL_UDP, UDP_SEGMENT, &seg, sizeof seg);
    }
    if (!o.quiet) {
      if (s.gso_) spdlog::info("udp: UDP_SEGMENT accepted: one sendmsg per train");
      else spdlog::warn("udp: UDP_SEGMENT refused ({}): falling back to sendmmsg", std::strerror(errno));
    }
  }
  if (s.gso_) {
    if (o.gso_short_tail) {
      s.short_tail_ = *o.gso_short_tail;
    } else if (!o.quiet) {
      int r = probe_short_tail(s.v6_);
      s.short_tail_ = r != 0;
      if (r == 1) spdlog::info("udp: UDP_SEGMENT with a short last datagram accepted: one sendmsg per train");
      else if (r == 0) spdlog::warn("udp: UDP_SEGMENT with a short last datagram refused: the short one goes alone");
      else spdlog::info("udp: short-tail UDP_SEGMENT probe inconclusive (no loopback): assumed accepted");
    }
  }
  if (o.want_gro) {
    s.gro_ = ::setsockopt(s.fd_.get(), SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
    if (!o.quiet) {
      if (s.gro_) spdlog::info("udp: UDP_GRO accepted: receive trains of datagrams");
      else spdlog::warn("udp: UDP_GRO refused ({}): one datagram per receive", std::strerror(errno));
    }
  }
  return s;
}

UdpSocket::UdpSocket(UdpSocket&&) noexcept = default;
UdpSocket& UdpSocket::operator=(UdpSocket&&) noexcept = default;
UdpSocket::~UdpSocket() = default;

Result<std::size_t> UdpSocket::send_plain(const void* sa, unsigned salen,
                                          std::span<const std::uint8_t> buf,
                                          std::uint16_t seg_size) {
  std::size_t n = seg_size ? (buf.size() + seg_size - 1) / seg_size : 1;
  std::vector<iovec> iov(n);
  std::vector<mmsghdr> m(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t off = i * seg_size, len = std::min<std::size_t>(seg_size ? seg_size : buf.size(), buf.size() - off);
    iov[i] = {const_cast<std::uint8_t*>(buf.data() + off), len};
    std::memset(&m[i], 0, sizeof m[i]);
    m[i].msg_hdr.msg_name = const_cast<void*>(sa);
    m[i].msg_hdr.msg_namelen = salen;
    m[i].msg_hdr.msg_iov = &iov[i];
    m[i].msg_hdr.msg_iovlen = 1;
  }
  return sendmmsg_all(fd_.get(), m, st_);
}

Result<std::size_t> UdpSocket::send_train(const wire::IpAddr& dst, std::uint16_t port,
                                          std::span<const std::uint8_t> buf,
                                          std::uint16_t seg_size) {
  sockaddr_storage ss;
  socklen_t sl = make_sa(dst, port, ss);
  std::size_t n = seg_size ? (buf.size() + seg_size - 1) / seg_size : 1;
  if (!gso_ || n <= 1) return send_plain(&ss, sl, buf, seg_size);
  if (n > kMaxSegments) {
    // More than UDP_MAX_SEGMENTS datagrams: udp_send_skb would answer EINVAL, which is no
    // refusal of UDP_SEGMENT. Send the train in pieces of at most kMaxSegments datagrams.
    const std::size_t chunk = kMaxSegments * seg_size;
    std::size_t sent = 0;
    for (std::size_t off = 0; off < buf.size(); off += chunk) {
      auto r = send_train(dst, port, buf.subspan(off, std::min(chunk, buf.size() - off)), seg_size);
      if (!r.ok()) return r;
      sent += r.value();
    }
    return sent;
  }
  if (!short_tail_ && buf.size() % seg_size != 0) {
    // The kernel refuses a shorter last datagram: the equal ones as a train, the tail alone.
    std::size_t whole = (n - 1) * seg_size;
    auto r = send_train(dst, port, buf.first(whole), seg_size);
    if (!r.ok()) return r;
    auto t = send_plain(&ss, sl, buf.subspan(whole), 0);
    if (!t.ok()) return t;
    return r.value() + t.value();
  }
  iovec iov{const_cast<std::uint8_t*>(buf.data()), buf.size()};
  int eno = 0;
  auto g = send_gso_iov(&ss, sl, &iov, 1, seg_size, n, eno);
  if (g.ok()) return g;
  if (eno == EINVAL || eno == EIO) {
    spdlog::warn("udp: UDP_SEGMENT send refused at run time ({}; seg {} x {}): turned off, resending",
                 std::strerror(eno), seg_size, n);
    gso_ = false;
    ++st_.gso_disabled;
    return send_plain(&ss, sl, buf, seg_size);
  }
  if (eno == EMSGSIZE) {
    // gso_size + headers above the path MTU: this train cannot go as one GSO packet, the
    // path itself is fine. Resend datagram by datagram (the kernel fragments them).
    ++st_.gso_emsgsize;
    return send_plain(&ss, sl, buf, seg_size);
  }
  st_.send_errors += n;
  return g;
}

// One sendmsg with UDP_SEGMENT over niov pieces (n datagrams). Returns n; an error with
// errno kept (the caller picks the fallback).
Result<std::size_t> UdpSocket::send_gso_iov(const void* sa, unsigned salen, iovec* iov,
                                            std::size_t niov, std::uint16_t seg_size, std::size_t n,
                                            int& eno) {
  eno = 0;
  alignas(cmsghdr) UdpSegmentCtrl ctrl = {};
  msghdr mh = udp_segment_msg(const_cast<void*>(sa), salen, iov, niov, ctrl, seg_size);
  for (int tries = 0;; ++tries) {
    ssize_t r = ::sendmsg(fd_.get(), &mh, 0);
    if (r >= 0) {
      ++st_.gso_sends;
      return n;
    }
    if ((errno == EAGAIN || errno == ENOBUFS || errno == EINTR) && tries < 50) {
      wait_writable(fd_.get());
      continue;
    }
    eno = errno;
    return Result<std::size_t>::error(err("sendmsg UDP_SEGMENT"));
  }
}

namespace {
/// IP_TOS (1 byte, IP_RECVTOS) or IPV6_TCLASS (int, IPV6_RECVTCLASS) into rx.tos.
void read_tos(const cmsghdr* c, UdpRx& rx) {
  if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS && c->cmsg_len >= CMSG_LEN(1)) {
    rx.tos = *reinterpret_cast<const unsigned char*>(CMSG_DATA(c));
  } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS &&
             c->cmsg_len >= CMSG_LEN(sizeof(int))) {
    int v = 0;
    std::memcpy(&v, CMSG_DATA(c), sizeof v);
    if (v >= 0 && v <= 255) rx.tos = v;
  }
}
/// The ancillary data of one received buffer into rx: the TOS / traffic class, and the
/// UDP_GRO segment size (rx.gso_size only when the buffer holds more than one segment, each
/// such buffer counted in `gro_buffers`). rx.len must be set.
inline void read_rx_cmsgs(msghdr* mh, UdpRx& rx, std::uint64_t& gro_buffers) {
  for (cmsghdr* c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
    read_tos(c, rx);
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int g = 0;
      std::memcpy(&g, CMSG_DATA(c), sizeof g);
      if (g > 0 && std::size_t(g) < rx.len) {
        rx.gso_size = std::uint16_t(g);
        ++gro_buffers;
      }
    }
  }
}
}  // namespace

Result<bool> UdpSocket::set_ttl(int ttl) {
  if (ttl == ttl_) return true;
  const int v = ttl > 0 ? ttl : -1;  // -1: back to the route's / sysctl's default
  if ((v6_ ? ::setsockopt(fd_.get(), IPPROTO_IPV6, IPV6_UNICAST_HOPS, &v, sizeof v)
           : ::setsockopt(fd_.get(), IPPROTO_IP, IP_TTL, &v, sizeof v)) < 0)
    return Result<bool>::error(err(v6_ ? "IPV6_UNICAST_HOPS" : "IP_TTL"));
  ttl_ = ttl;
  return true;
}

Result<bool> UdpSocket::set_df(int df) {
  if (df < 0 || df == df_ || v6_) return true;
  const int v = df ? IP_PMTUDISC_DO : IP_PMTUDISC_DONT;
  if (::setsockopt(fd_.get(), IPPROTO_IP, IP_MTU_DISCOVER, &v, sizeof v) < 0)
    return Result<bool>::error(err("IP_MTU_DISCOVER"));
  df_ = df;
  return true;
}

Result<bool> UdpSocket::set_tos(int tos) {
  if (tos == tos_) return true;
  if ((v6_ ? ::setsockopt(fd_.get(), IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos)
           : ::setsockopt(fd_.get(), IPPROTO_IP, IP_TOS, &tos, sizeof tos)) < 0)
    return Result<bool>::error(err(v6_ ? "IPV6_TCLASS" : "IP_TOS"));
  tos_ = tos;
  return true;
}

std::uint64_t UdpSocket::rx_queue_drops() const noexcept { return detail::socket_drops(fd_.get()); }

Result<std::optional<UdpRx>> UdpSocket::recv(std::span<std::uint8_t> buf) {
  sockaddr_storage ss{};
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int)) * 2] = {};
  msghdr mh{};
  mh.msg_name = &ss;
  mh.msg_namelen = sizeof ss;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctrl;
  mh.msg_controllen = sizeof ctrl;
  ssize_t r;
  do r = ::recvmsg(fd_.get(), &mh, MSG_DONTWAIT);
  while (r < 0 && errno == EINTR);
  if (r < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::optional<UdpRx>{};
    return Result<std::optional<UdpRx>>::error(err("recvmsg"));
  }
  UdpRx rx;
  rx.len = std::size_t(r);
  from_sa(ss, rx.from, rx.from_port);
  read_rx_cmsgs(&mh, rx, st_.gro_buffers);
  return std::optional<UdpRx>(rx);
}

Result<std::size_t> UdpSocket::recv_batch(std::span<std::uint8_t> arena, std::size_t slot,
                                          std::span<UdpRx> out) {
  constexpr std::size_t kMax = 64;
  std::size_t n = std::min({out.size(), kMax, slot ? arena.size() / slot : 0});
  std::array<std::span<std::uint8_t>, kMax> bufs;
  for (std::size_t i = 0; i < n; ++i) bufs[i] = arena.subspan(i * slot, slot);
  return recv_batch(std::span<const std::span<std::uint8_t>>(bufs.data(), n), out);
}

Result<std::size_t> UdpSocket::recv_batch(std::span<const std::span<std::uint8_t>> bufs,
                                          std::span<UdpRx> out) {
  constexpr std::size_t kMax = 64;
  std::size_t n = std::min({out.size(), kMax, bufs.size()});
  if (n == 0) return std::size_t(0);
  using Ctrl = std::array<char, CMSG_SPACE(sizeof(int)) * 2>;
  alignas(cmsghdr) Ctrl ctrl[kMax];
  sockaddr_storage from[kMax];
  iovec iov[kMax];
  mmsghdr m[kMax];
  for (std::size_t i = 0; i < n; ++i) {
    iov[i] = {bufs[i].data(), bufs[i].size()};
    std::memset(&m[i], 0, sizeof m[i]);
    m[i].msg_hdr.msg_name = &from[i];
    m[i].msg_hdr.msg_namelen = sizeof from[i];
    m[i].msg_hdr.msg_iov = &iov[i];
    m[i].msg_hdr.msg_iovlen = 1;
    m[i].msg_hdr.msg_control = ctrl[i].data();
    m[i].msg_hdr.msg_controllen = ctrl[i].size();
  }
  int r;
  do r = ::recvmmsg(fd_.get(), m, unsigned(n), MSG_DONTWAIT, nullptr);
  while (r < 0 && errno == EINTR);
  if (r < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::size_t(0);
    return Result<std::size_t>::error(err("recvmmsg"));
  }
  ++st_.recv_batches;
  st_.recv_buffers += std::size_t(r);
  for (int i = 0; i < r; ++i) {
    UdpRx& rx = out[std::size_t(i)];
    rx = UdpRx{};
    rx.len = m[i].msg_len;
    from_sa(from[i], rx.from, rx.from_port);
    read_rx_cmsgs(&m[i].msg_hdr, rx, st_.gro_buffers);
  }
  return std::size_t(r);
}

}  // namespace ofld::io

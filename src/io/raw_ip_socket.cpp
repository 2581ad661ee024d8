// Raw IP sockets for GRE; see ofld/io/raw_ip_socket.hpp.
#include "ofld/io/raw_ip_socket.hpp"

#include "sock_buf.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <linux/filter.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "ofld/wire/ip.hpp"

namespace ofld::io {

namespace {
std::string errstr(const std::string& what) { return what + ": " + std::strerror(errno); }

void to_sockaddr(const wire::IpAddr& a, sockaddr_storage& ss, socklen_t& len) {
  std::memset(&ss, 0, sizeof ss);
  if (a.is_v6()) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    std::memcpy(&s6->sin6_addr, a.bytes.data(), 16);
    len = sizeof *s6;
  } else {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    s4->sin_family = AF_INET;
    std::memcpy(&s4->sin_addr, a.bytes.data(), 4);
    len = sizeof *s4;
  }
}
}  // namespace

Result<RawIpSocket> RawIpSocket::open(const RawIpSocketOptions& o) {
  using R = Result<RawIpSocket>;
  RawIpSocket s;
  s.v6_ = o.local.is_v6();
  const int fam = s.v6_ ? AF_INET6 : AF_INET;
  s.fd_.reset(::socket(fam, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, o.protocol));
  if (s.fd_.get() < 0) {
    if (errno == EPERM || errno == EACCES) return R::skipped(errstr("raw socket (need CAP_NET_RAW)"));
    return R::error(errstr("raw socket protocol " + std::to_string(o.protocol)));
  }
  sockaddr_storage ss;
  socklen_t len;
  to_sockaddr(o.local, ss, len);
  if (::bind(s.fd_.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0)
    return R::error(errstr("bind raw socket to " + o.local.to_string()));
  detail::set_socket_buffers(s.fd_.get(), o.buf_bytes, o.rcvbuf_bytes > 0 ? o.rcvbuf_bytes : o.buf_bytes);
  if (o.ttl > 0) {
    int v = o.ttl;
    if (s.v6_ ? ::setsockopt(s.fd_.get(), IPPROTO_IPV6, IPV6_UNICAST_HOPS, &v, sizeof v)
              : ::setsockopt(s.fd_.get(), IPPROTO_IP, IP_TTL, &v, sizeof v))
      return R::error(errstr("ttl " + std::to_string(o.ttl)));
  }
  if (o.tos > 0) {
    int v = o.tos;
    if (s.v6_ ? ::setsockopt(s.fd_.get(), IPPROTO_IPV6, IPV6_TCLASS, &v, sizeof v)
              : ::setsockopt(s.fd_.get(), IPPROTO_IP, IP_TOS, &v, sizeof v))
      return R::error(errstr("tos " + std::to_string(o.tos)));
    s.tos_ = o.tos;
  }
  // The arriving traffic class for RFC 6040 (an IPv4 raw socket has the header itself).
  if (s.v6_) {
    int one = 1;
    if (::setsockopt(s.fd_.get(), IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof one))
      return R::error(errstr("IPV6_RECVTCLASS"));
  }
  return s;
}

RawIpSocket::RawIpSocket(RawIpSocket&&) noexcept = default;
RawIpSocket& RawIpSocket::operator=(RawIpSocket&&) noexcept = default;
RawIpSocket::~RawIpSocket() = default;

Result<bool> RawIpSocket::set_tos(int tos) {
  if (tos == tos_) return true;
  if ((v6_ ? ::setsockopt(fd_.get(), IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos)
           : ::setsockopt(fd_.get(), IPPROTO_IP, IP_TOS, &tos, sizeof tos)) < 0)
    return Result<bool>::error(errstr(v6_ ? "IPV6_TCLASS" : "IP_TOS"));
  tos_ = tos;
  return true;
}


Result<std::size_t> RawIpSocket::send_train(const wire::IpAddr& dst,
                                            std::span<const std::uint8_t> buf,
                                            std::uint16_t seg_size) {
  if (seg_size == 0 || buf.empty()) return std::size_t(0);
  sockaddr_storage ss;
  socklen_t salen;
  to_sockaddr(dst, ss, salen);
  constexpr std::size_t kMax = 64;
  mmsghdr msgs[kMax];
  iovec iov[kMax];
  std::size_t off = 0, sent = 0;
  int waits = 0;
  while (off < buf.size()) {
    std::size_t n = 0;
    for (std::size_t o = off; o < buf.size() && n < kMax; o += seg_size, ++n) {
      iov[n] = {const_cast<std::uint8_t*>(buf.data() + o), std::min<std::size_t>(seg_size, buf.size() - o)};
      msgs[n] = {};
      msgs[n].msg_hdr.msg_name = &ss;
      msgs[n].msg_hdr.msg_namelen = salen;
      msgs[n].msg_hdr.msg_iov = &iov[n];
      msgs[n].msg_hdr.msg_iovlen = 1;
    }
    int r = ::sendmmsg(fd_.get(), msgs, unsigned(n), 0);
    if (r < 0) {
      if ((errno == EAGAIN || errno == ENOBUFS) && waits++ < 10) {
        pollfd p{fd_.get(), POLLOUT, 0};
        ::poll(&p, 1, 10);
        continue;
      }
      if (errno == EINTR) continue;
      std::size_t lost = (buf.size() - off + seg_size - 1) / seg_size;
      st_.send_errors += lost;
      return Result<std::size_t>::error(errstr("sendmmsg to " + dst.to_string()));
    }
    ++st_.sendmmsg_calls;
    st_.datagrams_sent += std::size_t(r);
    sent += std::size_t(r);
    off += std::size_t(r) * seg_size;
  }
  return sent;
}

Result<std::optional<RawIpRx>> RawIpSocket::recv(std::span<std::uint8_t> buf) {
  using R = Result<std::optional<RawIpRx>>;
  sockaddr_storage ss{};
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
  msghdr mh{};
  mh.msg_name = &ss;
  mh.msg_namelen = sizeof ss;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctrl;
  mh.msg_controllen = sizeof ctrl;
  ssize_t n;
  do {
    n = ::recvmsg(fd_.get(), &mh, MSG_TRUNC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::optional<RawIpRx>{};
    return R::error(errstr("raw recv"));
  }
  RawIpRx rx;
  rx.len = std::min<std::size_t>(std::size_t(n), buf.size());
  if (ss.ss_family == AF_INET6) {
    rx.from.family = 6;
    std::memcpy(rx.from.bytes.data(), &reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr, 16);
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
      if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
        int v = 0;
        std::memcpy(&v, CMSG_DATA(c), sizeof v);
        rx.tos = v & 0xff;
      }
    }
  } else {
    rx.from.family = 4;
    std::memcpy(rx.from.bytes.data(), &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, 4);
    auto ip = wire::Ipv4Header<>::parse(std::span<const std::uint8_t>(buf.data(), rx.len));
    if (!ip) {
      const auto c = ip.error().code;
      return R::error(c == wire::Errc::Truncated || c == wire::Errc::BadVersion
                          ? "raw recv: not an IPv4 header"
                          : "raw recv: bad IPv4 header length");
    }
    rx.tos = ip->tos();  // the arriving outer TOS
    rx.off = ip->header_len();
    rx.len -= rx.off;
  }
  return std::optional<RawIpRx>{rx};
}

Status RawIpSocket::receive_none() {
  sock_filter drop_all{BPF_RET | BPF_K, 0, 0, 0};
  sock_fprog prog{1, &drop_all};
  if (::setsockopt(fd_.get(), SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) < 0)
    return Status::error(std::string("SO_ATTACH_FILTER (drop all): ") + std::strerror(errno));
  return ok_status();
}

std::uint64_t RawIpSocket::rx_queue_drops() const noexcept { return detail::socket_drops(fd_.get()); }

}  // namespace ofld::io

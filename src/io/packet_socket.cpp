// AF_PACKET sockets; see ofld/io/packet_socket.hpp.
#include "ofld/io/packet_socket.hpp"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

namespace ofld::io {

namespace {
std::string errstr(const char* what) { return std::string(what) + ": " + strerror(errno); }
constexpr std::size_t kBuf = 256 * 1024;
}  // namespace

Result<PacketSocket> PacketSocket::open(const PacketSocketOptions& opts) {
  using R = Result<PacketSocket>;
  if (opts.ifindex <= 0) return R::error("PacketSocket: ifindex required");
  PacketSocket s;
  s.fd_.reset(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(opts.protocol)));
  if (s.fd_.get() < 0) {
    if (errno == EPERM || errno == EACCES || errno == EAFNOSUPPORT)
      return R::skipped(errstr("socket(AF_PACKET)"));
    return R::error(errstr("socket(AF_PACKET)"));
  }
  s.ifindex_ = opts.ifindex;
  s.vnet_hdr_ = opts.vnet_hdr;
  if (opts.vnet_hdr) {
    int one = 1;
    if (::setsockopt(s.fd_.get(), SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) != 0)
      return R::error(errstr("PACKET_VNET_HDR"));
  }
  if (opts.ignore_outgoing) {
    int one = 1;
    if (::setsockopt(s.fd_.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0)
      return R::error(errstr("PACKET_IGNORE_OUTGOING"));
  }
  if (opts.rcvbuf > 0) {
    int v = opts.rcvbuf;
    if (::setsockopt(s.fd_.get(), SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof v) != 0)
      (void)::setsockopt(s.fd_.get(), SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
  }
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(opts.protocol);
  sll.sll_ifindex = opts.ifindex;
  if (::bind(s.fd_.get(), reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0)
    return R::error(errstr("bind(AF_PACKET)"));
  return s;
}

PacketSocket::PacketSocket(PacketSocket&&) noexcept = default;
PacketSocket& PacketSocket::operator=(PacketSocket&&) noexcept = default;
PacketSocket::~PacketSocket() = default;

Status PacketSocket::send(std::span<const std::uint8_t> frame, const VnetHdr* vnet) {
  std::uint8_t hdr[VnetHdr::kSize] = {};
  iovec iov[2];
  int n = 0;
  if (vnet_hdr_) {
    (vnet ? *vnet : VnetHdr{}).store(hdr, VnetHdr::host_is_little_endian());
    iov[n++] = {hdr, sizeof hdr};
  }
  iov[n++] = {const_cast<std::uint8_t*>(frame.data()), frame.size()};
  msghdr mh{};
  mh.msg_iov = iov;
  mh.msg_iovlen = std::size_t(n);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  for (;;) {
    ssize_t w = ::sendmsg(fd_.get(), &mh, 0);
    if (w >= 0) return ok_status();
    if (errno == EINTR) continue;
    if ((errno == ENOBUFS || errno == EAGAIN) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    return Status::error(errstr(("send on ifindex " + std::to_string(ifindex_)).c_str()));
  }
}

Result<std::optional<PacketRecv>> PacketSocket::recv(int timeout_ms) {
  using R = Result<std::optional<PacketRecv>>;
  pollfd p{fd_.get(), POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, timeout_ms);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return R::error(errstr("poll AF_PACKET"));
  if (n == 0) return std::optional<PacketRecv>{};
  std::vector<std::uint8_t> buf(kBuf);
  sockaddr_ll from{};
  iovec iov{buf.data(), buf.size()};
  msghdr mh{};
  mh.msg_name = &from;
  mh.msg_namelen = sizeof from;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  ssize_t r = ::recvmsg(fd_.get(), &mh, MSG_TRUNC);
  if (r < 0) {
    if (errno == EAGAIN) return std::optional<PacketRecv>{};
    return R::error(errstr("recvmsg AF_PACKET"));
  }
  PacketRecv out;
  out.pkttype = from.sll_pkttype;
  std::size_t got = std::size_t(r);
  if (got > buf.size()) {
    out.truncated = true;
    got = buf.size();
  }
  std::size_t off = 0;
  if (vnet_hdr_) {
    if (got < VnetHdr::kSize) return R::error("AF_PACKET frame shorter than the vnet header");
    out.frame.vnet = VnetHdr::load(buf.data(), VnetHdr::host_is_little_endian());
    off = VnetHdr::kSize;
  }
  out.frame.data.assign(buf.begin() + off, buf.begin() + got);
  return std::optional<PacketRecv>(std::move(out));
}

void PacketSocket::drain() {
  std::vector<std::uint8_t> buf(kBuf);
  for (int i = 0; i < 100000; ++i)
    if (::recv(fd_.get(), buf.data(), buf.size(), MSG_DONTWAIT) < 0) break;
}

}  // namespace ofld::io

// TAP devices; see ofld/io/tap.hpp.
#include "ofld/io/tap.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <net/if_arp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "device_batch_impl.hpp"

namespace ofld::io {

namespace {
std::string errstr(const char* what) { return std::string(what) + ": " + strerror(errno); }
constexpr std::size_t kReadBuf = 256 * 1024;
}  // namespace

Result<Tap> Tap::open(const TapOptions& opts) {
  if (opts.vnet_hdr && opts.vnet_hdr_size < int(VnetHdr::kSize))
    return Result<Tap>::error("vnet_hdr_size must be >= 10");
  if (opts.name.size() >= IFNAMSIZ) return Result<Tap>::error("TAP name too long: " + opts.name);
  Tap t;
  t.fd_.reset(::open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK));
  if (t.fd_.get() < 0) {
    if (errno == ENOENT || errno == ENODEV || errno == EACCES || errno == EPERM)
      return Result<Tap>::skipped(errstr("open /dev/net/tun"));
    return Result<Tap>::error(errstr("open /dev/net/tun"));
  }
  ifreq ifr{};
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  if (opts.vnet_hdr) ifr.ifr_flags |= IFF_VNET_HDR;
  if (opts.multi_queue) ifr.ifr_flags |= IFF_MULTI_QUEUE;
  std::strncpy(ifr.ifr_name, opts.name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(t.fd_.get(), TUNSETIFF, &ifr) != 0) {
    if (errno == EPERM) return Result<Tap>::skipped(errstr("TUNSETIFF (need CAP_NET_ADMIN)"));
    return Result<Tap>::error(errstr(("TUNSETIFF " + opts.name).c_str()));
  }
  t.name_ = ifr.ifr_name;
  t.vnet_hdr_ = opts.vnet_hdr;
  t.vnet_hdr_size_ = opts.vnet_hdr ? opts.vnet_hdr_size : 0;
  if (opts.vnet_hdr) {
    int sz = opts.vnet_hdr_size;
    if (::ioctl(t.fd_.get(), TUNSETVNETHDRSZ, &sz) != 0) return Result<Tap>::error(errstr("TUNSETVNETHDRSZ"));
    if (opts.vnet_le) {
      int le = 1;
      if (::ioctl(t.fd_.get(), TUNSETVNETLE, &le) != 0 && !VnetHdr::host_is_little_endian())
        return Result<Tap>::error(errstr("TUNSETVNETLE"));
      t.vnet_le_ = true;
    } else {
      t.vnet_le_ = VnetHdr::host_is_little_endian();
    }
  }
  t.ctl_fd_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (t.ctl_fd_.get() < 0) return Result<Tap>::error(errstr("control socket"));
  ifreq q{};
  std::strncpy(q.ifr_name, t.name_.c_str(), IFNAMSIZ - 1);
  if (::ioctl(t.ctl_fd_.get(), SIOCGIFINDEX, &q) != 0) return Result<Tap>::error(errstr("SIOCGIFINDEX"));
  t.ifindex_ = q.ifr_ifindex;
  return t;
}

Tap::Tap(Tap&&) noexcept = default;
// The writer borrows fd_ and does not touch it when destroyed, so the defaulted moves and
// destructor (fd_ closed by its UniqueFd) need no ordering.
Tap& Tap::operator=(Tap&&) noexcept = default;
Tap::~Tap() = default;

Status Tap::set_offload(unsigned bits) {
  if (::ioctl(fd_.get(), TUNSETOFFLOAD, static_cast<unsigned long>(bits)) != 0)
    return Status::error(errstr(("TUNSETOFFLOAD 0x" + std::to_string(bits)).c_str()));
  return ok_status();
}

Result<unsigned> Tap::set_offload_best(unsigned wanted) {
  using namespace tun_offload;
  const unsigned drops[] = {kUso4 | kUso6, kUfo, kTsoEcn, kTso6, kTso4, kCsum};
  unsigned bits = wanted;
  if (set_offload(bits)) return bits;
  for (unsigned d : drops) {
    if (!(bits & d)) continue;
    bits &= ~d;
    if (set_offload(bits)) return bits;
  }
  return Result<unsigned>::error("TUNSETOFFLOAD refused every subset of 0x" + std::to_string(wanted));
}

Status Tap::ifreq_ioctl(unsigned long req, void* ifr, const char* what) {
  if (::ioctl(ctl_fd_.get(), req, ifr) != 0) return Status::error(errstr((std::string(what) + " " + name_).c_str()));
  return ok_status();
}

Status Tap::set_up() {
  ifreq q{};
  std::strncpy(q.ifr_name, name_.c_str(), IFNAMSIZ - 1);
  if (auto s = ifreq_ioctl(SIOCGIFFLAGS, &q, "SIOCGIFFLAGS"); !s) return s;
  q.ifr_flags |= IFF_UP;
  return ifreq_ioctl(SIOCSIFFLAGS, &q, "SIOCSIFFLAGS");
}

Status Tap::set_mtu(int mtu) {
  ifreq q{};
  std::strncpy(q.ifr_name, name_.c_str(), IFNAMSIZ - 1);
  q.ifr_mtu = mtu;
  return ifreq_ioctl(SIOCSIFMTU, &q, "SIOCSIFMTU");
}

Status Tap::set_mac(const std::uint8_t mac[6]) {
  ifreq q{};
  std::strncpy(q.ifr_name, name_.c_str(), IFNAMSIZ - 1);
  q.ifr_hwaddr.sa_family = ARPHRD_ETHER;
  std::memcpy(q.ifr_hwaddr.sa_data, mac, 6);
  return ifreq_ioctl(SIOCSIFHWADDR, &q, "SIOCSIFHWADDR");
}

Status Tap::get_mac(std::uint8_t mac[6]) const {
  ifreq q{};
  std::strncpy(q.ifr_name, name_.c_str(), IFNAMSIZ - 1);
  if (::ioctl(ctl_fd_.get(), SIOCGIFHWADDR, &q) != 0) return Status::error(errstr(("SIOCGIFHWADDR " + name_).c_str()));
  std::memcpy(mac, q.ifr_hwaddr.sa_data, 6);
  return ok_status();
}

Status Tap::write(std::span<const std::uint8_t> frame, const VnetHdr* vnet) {
  std::uint8_t hdr[64] = {};
  iovec iov[2];
  int n = 0;
  if (vnet_hdr_) {
    VnetHdr h = vnet ? *vnet : VnetHdr{};
    h.store(hdr, vnet_le_);
    iov[n++] = {hdr, std::size_t(vnet_hdr_size_) <= sizeof hdr ? std::size_t(vnet_hdr_size_) : sizeof hdr};
  }
  iov[n++] = {const_cast<std::uint8_t*>(frame.data()), frame.size()};
  std::size_t want = 0;
  for (int i = 0; i < n; ++i) want += iov[i].iov_len;
  for (int attempt = 0; attempt < 100; ++attempt) {
    ssize_t w = ::writev(fd_.get(), iov, n);
    if (w == ssize_t(want)) return ok_status();
    if (w >= 0) return Status::error("short TAP write: " + std::to_string(w) + " of " + std::to_string(want));
    if (errno == EINTR) continue;
    if (errno == EAGAIN) {
      pollfd p{fd_.get(), POLLOUT, 0};
      ::poll(&p, 1, 10);
      continue;
    }
    return Status::error(errstr(("write to TAP " + name_).c_str()));
  }
  return Status::error("TAP write kept failing with EAGAIN");
}

Result<std::optional<Frame>> Tap::read(int timeout_ms) {
  using R = Result<std::optional<Frame>>;
  pollfd p{fd_.get(), POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, timeout_ms);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return R::error(errstr("poll TAP"));
  if (n == 0) return std::optional<Frame>{};
  std::vector<std::uint8_t> buf(kReadBuf);
  ssize_t r = ::read(fd_.get(), buf.data(), buf.size());
  if (r < 0) {
    if (errno == EAGAIN) return std::optional<Frame>{};
    return R::error(errstr(("read TAP " + name_).c_str()));
  }
  Frame f;
  std::size_t off = 0;
  if (vnet_hdr_) {
    if (r < vnet_hdr_size_) return R::error("TAP read shorter than the vnet header");
    f.vnet = VnetHdr::load(buf.data(), vnet_le_);
    off = std::size_t(vnet_hdr_size_);
  }
  f.data.assign(buf.begin() + off, buf.begin() + r);
  return std::optional<Frame>(std::move(f));
}

void Tap::drain() {
  std::vector<std::uint8_t> buf(kReadBuf);
  for (int i = 0; i < 10000; ++i)
    if (::read(fd_.get(), buf.data(), buf.size()) < 0) break;
}

}  // namespace ofld::io

namespace ofld::io {

std::size_t Tap::read_batch(std::size_t max, FrameSink& sink) {
  return detail::read_batch(fd_.get(), vnet_hdr_, "TAP", name_, rbuf_, max, sink, rstats_);
}

void Tap::attach_writer(const VnetWriterOptions& opts) {
  writer_ = std::make_unique<VnetWriter>(fd_.get(), opts);
}

WriteResult Tap::write_batch(std::span<const offload::virtio::TapFrame> frames) {
  VnetWriterOptions d;
  d.dev = name_;
  d.link = wire::LinkType::Ethernet;
  d.vnet_hdr = vnet_hdr_;
  return detail::write_batch(writer_, fd_.get(), d, frames);
}

}  // namespace ofld::io

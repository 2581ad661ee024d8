// TUN devices for the L3 tunnel modes; see ofld/io/tun.hpp.
#include "ofld/io/tun.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "device_batch_impl.hpp"
#include "ofld/io/tap.hpp"

namespace ofld::io {

namespace {
std::string errstr(const std::string& what) { return what + ": " + std::strerror(errno); }
}  // namespace

Result<Tun> Tun::open(const std::string& name, bool vnet_hdr, bool multi_queue) {
  using R = Result<Tun>;
  if (name.size() >= IFNAMSIZ) return R::error("TUN name too long: " + name);
  Tun t;
  t.fd_ = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (t.fd_ < 0) {
    if (errno == ENOENT || errno == ENODEV || errno == EACCES || errno == EPERM)
      return R::skipped(errstr("open /dev/net/tun"));
    return R::error(errstr("open /dev/net/tun"));
  }
  ifreq ifr{};
  ifr.ifr_flags = short(IFF_TUN | IFF_NO_PI | (vnet_hdr ? IFF_VNET_HDR : 0) |
                        (multi_queue ? IFF_MULTI_QUEUE : 0));
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(t.fd_, TUNSETIFF, &ifr) != 0) {
    if (errno == EPERM) return R::skipped(errstr("TUNSETIFF (need CAP_NET_ADMIN)"));
    return R::error(errstr("TUNSETIFF " + name));
  }
  t.name_ = ifr.ifr_name;
  t.vnet_hdr_ = vnet_hdr;
  if (vnet_hdr) {
    int sz = int(VnetHdr::kSize);
    if (::ioctl(t.fd_, TUNSETVNETHDRSZ, &sz) != 0) return R::error(errstr("TUNSETVNETHDRSZ"));
    int le = 1;
    if (::ioctl(t.fd_, TUNSETVNETLE, &le) != 0 && !VnetHdr::host_is_little_endian())
      return R::error(errstr("TUNSETVNETLE"));
  }
  t.ctl_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (t.ctl_ < 0) return R::error(errstr("control socket"));
  return t;
}

Tun::Tun(Tun&& o) noexcept
    : fd_(o.fd_), ctl_(o.ctl_), name_(std::move(o.name_)), vnet_hdr_(o.vnet_hdr_),
      rbuf_(std::move(o.rbuf_)), rstats_(o.rstats_), writer_(std::move(o.writer_)) {
  o.fd_ = o.ctl_ = -1;
}

Tun& Tun::operator=(Tun&& o) noexcept {
  if (this != &o) {
    close_all();
    fd_ = o.fd_;
    ctl_ = o.ctl_;
    name_ = std::move(o.name_);
    vnet_hdr_ = o.vnet_hdr_;
    rbuf_ = std::move(o.rbuf_);
    rstats_ = o.rstats_;
    writer_ = std::move(o.writer_);
    o.fd_ = o.ctl_ = -1;
  }
  return *this;
}

Tun::~Tun() { close_all(); }

void Tun::close_all() noexcept {
  writer_.reset();
  if (fd_ >= 0) ::close(fd_);
  if (ctl_ >= 0) ::close(ctl_);
  fd_ = ctl_ = -1;
}

Status Tun::set_offload(unsigned bits) {
  if (::ioctl(fd_, TUNSETOFFLOAD, static_cast<unsigned long>(bits)) != 0)
    return Status::error(errstr("TUNSETOFFLOAD 0x" + std::to_string(bits)));
  return ok_status();
}

Result<unsigned> Tun::set_offload_best(unsigned wanted) {
  using namespace tun_offload;
  const unsigned drops[] = {kUso4 | kUso6, kUfo, kTsoEcn, kTso6, kTso4, kCsum};
  unsigned bits = wanted;
  if (set_offload(bits).ok()) return bits;
  for (unsigned d : drops) {
    if (!(bits & d)) continue;
    bits &= ~d;
    if (set_offload(bits).ok()) return bits;
  }
  return 0u;
}

Status Tun::set_mtu(int mtu) {
  ifreq q{};
  std::strncpy(q.ifr_name, name_.c_str(), IFNAMSIZ - 1);
  q.ifr_mtu = mtu;
  if (::ioctl(ctl_, SIOCSIFMTU, &q) != 0) return Status::error(errstr("SIOCSIFMTU " + std::to_string(mtu)));
  return ok_status();
}

Status Tun::set_up() {
  ifreq q{};
  std::strncpy(q.ifr_name, name_.c_str(), IFNAMSIZ - 1);
  if (::ioctl(ctl_, SIOCGIFFLAGS, &q) != 0) return Status::error(errstr("SIOCGIFFLAGS"));
  q.ifr_flags = short(q.ifr_flags | IFF_UP);
  if (::ioctl(ctl_, SIOCSIFFLAGS, &q) != 0) return Status::error(errstr("SIOCSIFFLAGS up"));
  return ok_status();
}

std::size_t Tun::read_batch(std::size_t max, FrameSink& sink) {
  return detail::read_batch(fd_, vnet_hdr_, "TUN", name_, rbuf_, max, sink, rstats_);
}

void Tun::attach_writer(const VnetWriterOptions& opts) {
  writer_ = std::make_unique<VnetWriter>(fd_, opts);
}

WriteResult Tun::write_batch(std::span<const offload::virtio::TapFrame> frames) {
  VnetWriterOptions d;
  d.dev = name_;
  d.link = wire::LinkType::RawIp;
  d.vnet_hdr = vnet_hdr_;
  return detail::write_batch(writer_, fd_, d, frames);
}

}  // namespace ofld::io

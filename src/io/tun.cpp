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
  t.fd_.reset(::open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK));
  if (t.fd_.get() < 0) {
    if (errno == ENOENT || errno == ENODEV || errno == EACCES || errno == EPERM)
      return R::skipped(errstr("open /dev/net/tun"));
    return R::error(errstr("open /dev/net/tun"));
  }
  ifreq ifr{};
  ifr.ifr_flags = short(IFF_TUN | IFF_NO_PI | (vnet_hdr ? IFF_VNET_HDR : 0) |
                        (multi_queue ? IFF_MULTI_QUEUE : 0));
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(t.fd_.get(), TUNSETIFF, &ifr) != 0) {
    if (errno == EPERM) return R::skipped(errstr("TUNSETIFF (need CAP_NET_ADMIN)"));
    return R::error(errstr("TUNSETIFF " + name));
  }
  t.name_ = ifr.ifr_name;
  t.vnet_hdr_ = vnet_hdr;
  if (vnet_hdr) {
    int sz = int(VnetHdr::kSize);
    if (::ioctl(t.fd_.get(), TUNSETVNETHDRSZ, &sz) != 0) return R::error(errstr("TUNSETVNETHDRSZ"));
    int le = 1;
    if (::ioctl(t.fd_.get(), TUNSETVNETLE, &le) != 0 && !VnetHdr::host_is_little_endian())
      return R::error(errstr("TUNSETVNETLE"));
  }
  t.ctl_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (t.ctl_.get() < 0) return R::error(errstr("control socket"));
  return t;
}

Tun::Tun(Tun&&) noexcept = default;
// The writer borrows fd_ and does not touch it when destroyed, so the defaulted moves and
// destructor (fd_ closed by its UniqueFd) need no ordering.
Tun& Tun::operator=(Tun&&) noexcept = default;
Tun::~Tun() = default;

Status Tun::set_offload(unsigned bits) {
  if (::ioctl(fd_.get(), TUNSETOFFLOAD, static_cast<unsigned long>(bits)) != 0)
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
  if (::ioctl(ctl_.get(), SIOCSIFMTU, &q) != 0) return Status::error(errstr("SIOCSIFMTU " + std::to_string(mtu)));
  return ok_status();
}

Status Tun::set_up() {
  ifreq q{};
  std::strncpy(q.ifr_name, name_.c_str(), IFNAMSIZ - 1);
  if (::ioctl(ctl_.get(), SIOCGIFFLAGS, &q) != 0) return Status::error(errstr("SIOCGIFFLAGS"));
  q.ifr_flags = short(q.ifr_flags | IFF_UP);
  if (::ioctl(ctl_.get(), SIOCSIFFLAGS, &q) != 0) return Status::error(errstr("SIOCSIFFLAGS up"));
  return ok_status();
}

std::size_t Tun::read_batch(std::size_t max, FrameSink& sink) {
  return detail::read_batch(fd_.get(), vnet_hdr_, "TUN", name_, rbuf_, max, sink, rstats_);
}

void Tun::attach_writer(const VnetWriterOptions& opts) {
  writer_ = std::make_unique<VnetWriter>(fd_.get(), opts);
}

WriteResult Tun::write_batch(std::span<const offload::virtio::TapFrame> frames) {
  VnetWriterOptions d;
  d.dev = name_;
  d.link = wire::LinkType::RawIp;
  d.vnet_hdr = vnet_hdr_;
  return detail::write_batch(writer_, fd_.get(), d, frames);
}

}  // namespace ofld::io

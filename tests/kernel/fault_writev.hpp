// A device write function that fails on purpose, for injection into an in-process endpoint
// (daemon::TunnelDaemonOptions::device_writev, io::VnetWriterOptions::writev): it drives the
// writer's software-GSO fallback and its EAGAIN / short-write handling against the real kernel.
#pragma once

#include <sys/uio.h>

#include <cerrno>
#include <cstdint>
#include <memory>

#include "ofld/io/vnet_writer.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::ktest {

struct WriteFault {
  /// Every write of a GSO frame (the virtio_net_hdr's gso_type is not NONE) fails with this
  /// errno (EINVAL: what Linux 6.6.44+ stable answered to a GSO frame with a short last
  /// segment, tailscale #13041; EIO); 0 = none.
  int gso_errno = 0;
  unsigned eagain_every = 0;  ///< every Nth write answers EAGAIN once (nothing written); 0 = never
  unsigned short_every = 0;   ///< every Nth write reports one byte less than given (nothing written)
  bool vnet_hdr = true;       ///< the first iovec entry is the 10-byte virtio_net_hdr
};

/// The writev that fails as `f` says and otherwise calls ::writev. One counter for all writes
/// through the returned function (shared by its copies).
inline ofld::io::WritevFn fault_writev(WriteFault f) {
  namespace wv = ofld::wire::virtio_net;
  auto count = std::make_shared<std::uint64_t>(0);
  return [f, count](int fd, const iovec* iov, int n) -> ssize_t {
    const std::uint64_t i = ++*count;
    std::size_t want = 0;
    for (int k = 0; k < n; ++k) want += iov[k].iov_len;
    if (f.gso_errno && f.vnet_hdr && n > 0 && iov[0].iov_len >= wv::kHdrLen &&
        static_cast<const std::uint8_t*>(iov[0].iov_base)[wv::kOffGsoType] != wv::kGsoNone) {
      errno = f.gso_errno;
      return -1;
    }
    if (f.eagain_every && i % f.eagain_every == 0) {
      errno = EAGAIN;
      return -1;
    }
    if (f.short_every && i % f.short_every == 0 && want > 1) return ssize_t(want - 1);
    return ::writev(fd, iov, n);
  };
}

}  // namespace ofld::ktest

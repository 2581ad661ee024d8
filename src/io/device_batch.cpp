// Batch reads and writes of TAP/TUN queues; see ofld/io/device_batch.hpp.
#include "device_batch_impl.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace ofld::io::detail {

namespace wv = wire::virtio_net;

std::size_t read_batch(int fd, bool vnet_hdr, const char* kind, const std::string& dev,
                       core::BufferRef& buf,
                       std::size_t max, FrameSink& sink, DeviceReadStats& st) {
  std::size_t n = 0;
  for (; n < max; ++n) {
    if (!buf || buf.use_count() > 1) buf = core::Buffer::create(kDeviceReadBuf);
    const ssize_t r = ::read(fd, buf->bytes.data(), buf->bytes.size());
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) {
        if (!st.read_errors) spdlog::warn("read {} {}: {}", kind, dev, std::strerror(errno));
        ++st.read_errors;
        st.last_errno = errno;
      }
      break;
    }
    std::span<const std::uint8_t> b(buf->bytes.data(), std::size_t(r));
    wv::Hdr h{};
    if (vnet_hdr) {
      auto p = wv::parse(b, wv::kHdrLen, wv::ByteOrder::Little);
      if (!p.ok()) {
        ++st.bad_vnet_hdr;
        continue;
      }
      h = p.value();
      b = b.subspan(wv::kHdrLen);
    }
    ++st.frames;
    st.bytes += b.size();
    sink.frame(h, b, buf);
  }
  return n;
}

WriteResult write_batch(std::unique_ptr<VnetWriter>& w, int fd, const VnetWriterOptions& defaults,
                        std::span<const offload::virtio::TapFrame> frames) {
  if (!w) w = std::make_unique<VnetWriter>(fd, defaults);
  WriteResult sum;
  for (const auto& f : frames) {
    const auto r = w->write(f);
    sum.frames += r.frames;
    sum.failed += r.failed;
    sum.bytes += r.bytes;
    if (r.error) sum.error = r.error;
  }
  return sum;
}

}  // namespace ofld::io::detail

// TAP/TUN writes with the virtio_net_hdr; see ofld/io/vnet_writer.hpp.
#include "ofld/io/vnet_writer.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <spdlog/spdlog.h>

#include "ofld/core/features.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/wire/l4.hpp"

namespace ofld::io {

namespace wv = wire::virtio_net;

std::string_view to_string(GsoWriteKind k) noexcept {
  switch (k) {
    case GsoWriteKind::Tcpv4: return "tcpv4";
    case GsoWriteKind::Tcpv6: return "tcpv6";
    case GsoWriteKind::Uso: return "uso";
    case GsoWriteKind::kCount: break;
  }
  return "?";
}

namespace {

ssize_t sys_writev(int fd, const iovec* iov, int n) { return ::writev(fd, iov, n); }

}  // namespace

VnetWriter::VnetWriter(int fd, VnetWriterOptions opts)
    : fd_(fd), opts_(std::move(opts)), gso_ctr_(std::make_unique<offload::GsoCounters>()) {
  if (!opts_.writev) opts_.writev = sys_writev;
  if (!opts_.gate) opts_.gate = std::make_shared<GsoWriteGate>();
}

VnetWriter::~VnetWriter() = default;
VnetWriter::VnetWriter(VnetWriter&&) noexcept = default;
VnetWriter& VnetWriter::operator=(VnetWriter&&) noexcept = default;

namespace {

constexpr int kShortWrite = -1;  // write_whole(): the kernel kept taking less than the frame

std::optional<GsoWriteKind> kind_of(const wv::Hdr& h) noexcept {
  switch (h.gso_type & ~wv::kGsoEcn) {
    case wv::kGsoTcpv4: return GsoWriteKind::Tcpv4;
    case wv::kGsoTcpv6: return GsoWriteKind::Tcpv6;
    case wv::kGsoUdpL4: return GsoWriteKind::Uso;
    default: return std::nullopt;  // NONE, or UFO (never built by GRO here): written as it is
  }
}

}  // namespace

int VnetWriter::write_whole(const offload::virtio::TapFrame& f) {
  std::uint8_t hb[wv::kHdrLen] = {};
  wv::emit(f.vnet, hb, wv::kHdrLen, wv::ByteOrder::Little);
  pieces_.clear();
  offload::virtio::tap_pieces(f, pieces_);
  iov_.clear();
  if (opts_.vnet_hdr) iov_.push_back({hb, sizeof hb});
  for (auto p : pieces_) iov_.push_back({const_cast<std::uint8_t*>(p.data()), p.size()});
  if (iov_.size() > kIovMax) {  // pathological piece count: flatten
    flat_.clear();
    for (auto p : pieces_) flat_.insert(flat_.end(), p.begin(), p.end());
    iov_.resize(opts_.vnet_hdr ? 1 : 0);
    iov_.push_back({flat_.data(), flat_.size()});
  }
  std::size_t want = 0;
  for (const auto& v : iov_) want += v.iov_len;
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::milliseconds(opts_.eagain_wait_ms);
  int shorts = 0;
  for (;;) {
    const ssize_t w = opts_.writev(fd_, iov_.data(), int(iov_.size()));
    if (w == ssize_t(want)) return 0;
    if (w >= 0) {
      // tun_get_user takes a frame whole or not at all; what was taken is no frame the stack
      // can use, so the whole frame goes again (bounded).
      ++st_.short_writes;
      if (++shorts > kMaxShortRetries) return kShortWrite;
      continue;
    }
    const int e = errno;
    if (e == EINTR) continue;
    if (e == EAGAIN || e == EWOULDBLOCK) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
      if (left.count() <= 0) return EAGAIN;
      ++st_.eagain_waits;
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, int(left.count()));
      continue;
    }
    return e;
  }
}

void VnetWriter::count_ok(const offload::virtio::TapFrame& f, WriteResult& res) {
  ++res.frames;
  res.bytes += f.size();
  ++st_.frames;
  st_.bytes += f.size();
}

void VnetWriter::count_failed(int e, WriteResult& res) {
  if (e == kShortWrite) e = EIO;
  ++res.failed;
  ++st_.failed;
  res.error = st_.last_errno = e;
}

WriteResult VnetWriter::write(const offload::virtio::TapFrame& f) {
  WriteResult res;
  const auto kind = kind_of(f.vnet);
  if (kind && opts_.gate->is_off(*kind)) {  // this kind goes out as segments
    if (segment_and_write(f, res) == 0) ++st_.sw_gso_frames;
    return res;
  }
  const int e = write_whole(f);
  if (e == 0) {
    count_ok(f, res);
    return res;
  }
  if (kind && (e == EINVAL || e == EIO || e == kShortWrite)) {
    // The kernel refused the aggregate: resend the same data as segments. Only if it takes
    // those was the GSO frame the problem (a device that is down refuses them too).
    const std::uint32_t before = res.failed;
    const int se = segment_and_write(f, res);
    if (se == 0 && res.failed == before) {
      ++st_.sw_gso_frames;
      ++st_.gso_refused[std::size_t(*kind)];
      if (!opts_.gate->off[std::size_t(*kind)].exchange(true))
        spdlog::warn("{}: the kernel refused a {} GSO frame ({}; gso_size {}, {} bytes); resent as "
                     "{} segments; {} GSO writes turned off, such frames are segmented in software "
                     "from now on",
                     opts_.dev, to_string(*kind), e == kShortWrite ? "short write" : std::strerror(e),
                     f.vnet.gso_size, f.size(), res.frames, to_string(*kind));
    }
    return res;
  }
  count_failed(e, res);
  return res;
}

int VnetWriter::segment_and_write(const offload::virtio::TapFrame& f, WriteResult& res) {
  // The frame as the kernel's own gate would set it up (virtio_net_hdr_to_skb, S-1..S-5).
  if (f.pkt) flat_ = f.pkt->to_bytes();
  else flat_.clear();
  const std::span<const std::uint8_t> bytes = flat_;
  auto tp = offload::virtio::to_packet(f.vnet, bytes, opts_.link);
  if (!tp.ok()) {
    count_failed(EINVAL, res);
    return EINVAL;
  }
  core::Packet p = std::move(tp.pkt);
  if (p.is_gso() && !(p.gso.type & core::skb_gso::UDP_L4) && opts_.mtu > 0 &&
      p.network_header != core::kNoHeader && p.transport_header != core::kNoHeader) {
    // TCP: segments of at most the device's MTU (UDP datagram boundaries are data: kept).
    const std::size_t th = std::size_t(p.transport_offset());
    if (th + wire::TcpHeader<>::kMinLen <= bytes.size()) {
      auto tcp = wire::TcpHeader<>::parse(bytes.subspan(th));
      if (tcp) {
        const int hdrs = int(th) - p.network_offset() + int(tcp.value().header_len());
        const int cap = opts_.mtu - hdrs;
        if (cap > 0 && cap < int(p.gso.size)) p.gso.size = std::uint16_t(cap);
      }
    }
  }
  // With a vnet header the segments keep NEEDS_CSUM (the kernel finishes or trusts them);
  // without one the engine sums every segment's checksum while copying.
  core::Features feats{};
  if (opts_.vnet_hdr) feats = core::netif_f::SG | core::netif_f::HW_CSUM;
  core::Device dev;
  dev.features = feats;
  segs_.clear();
  if (p.is_gso()) {
    auto r = gso::gso_segment(std::move(p), feats, dev, gso_ctr_.get());
    if (!r.ok()) {
      count_failed(EINVAL, res);
      return EINVAL;
    }
    segs_ = std::move(r.segs);
  } else {
    segs_.push_back(std::move(p));  // payload within one gso_size: a single frame
  }
  int err = 0;
  for (auto& s : segs_) {
    if (!opts_.vnet_hdr && s.ip_summed() == core::IpSummed::Partial &&
        core::checksum_help(s) != core::PacketError::Ok) {
      count_failed(EINVAL, res);
      err = EINVAL;
      continue;
    }
    auto h = offload::virtio::from_packet(s, true);
    if (!h) {
      count_failed(EINVAL, res);
      err = EINVAL;
      continue;
    }
    offload::virtio::TapFrame sf{*h, std::move(s)};
    int e = write_whole(sf);
    if (e == EINVAL && sf.pkt->ip_summed() == core::IpSummed::Partial) {
      // NEEDS_CSUM refused too: complete the checksum here and write it without.
      if (core::checksum_help(*sf.pkt) == core::PacketError::Ok) {
        if (auto h2 = offload::virtio::from_packet(*sf.pkt, true)) {
          sf.vnet = *h2;
          ++st_.csum_sw;
          e = write_whole(sf);
        }
      }
    }
    if (e) {
      count_failed(e, res);
      err = e;
      continue;
    }
    count_ok(sf, res);
    ++st_.sw_gso_segments;
  }
  segs_.clear();
  return err;
}

}  // namespace ofld::io

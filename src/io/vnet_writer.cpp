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
  if (!opts_.writev) opts_.writev = fault_writev_from_env(opts_.vnet_hdr);
  if (!opts_.writev) opts_.writev = sys_writev;
  if (!opts_.gate) opts_.gate = std::make_shared<GsoWriteGate>();
}

VnetWriter::~VnetWriter() = default;
VnetWriter::VnetWriter(VnetWriter&&) noexcept = default;
VnetWriter& VnetWriter::operator=(VnetWriter&&) noexcept = default;

WriteResult VnetWriter::write(const tunnel::TapFrame& f) {
  WriteResult res;
  std::uint8_t hb[wv::kHdrLen] = {};
  wv::emit(f.vnet, hb, wv::kHdrLen, wv::ByteOrder::Little);
  pieces_.clear();
  tunnel::tap_pieces(f, pieces_);
  iov_.clear();
  if (opts_.vnet_hdr) iov_.push_back({hb, sizeof hb});
  for (auto p : pieces_) iov_.push_back({const_cast<std::uint8_t*>(p.data()), p.size()});
  if (iov_.size() > kIovMax) {  // pathological piece count: flatten
    flat_.clear();
    for (auto p : pieces_) flat_.insert(flat_.end(), p.begin(), p.end());
    iov_.resize(opts_.vnet_hdr ? 1 : 0);
    iov_.push_back({flat_.data(), flat_.size()});
  }
  ssize_t r = opts_.writev(fd_, iov_.data(), int(iov_.size()));
  if (r < 0) {
    ++res.failed;
    ++st_.failed;
    res.error = st_.last_errno = errno;
    return res;
  }
  ++res.frames;
  res.bytes += f.size();
  ++st_.frames;
  st_.bytes += f.size();
  return res;
}

// ---- the test seam ------------------------------------------------------------------------

WritevFn fault_writev_from_env(bool vnet_hdr) {
  const char* env = std::getenv("OFLD_TEST_TAP_WRITE_FAULT");
  if (!env || !*env) return nullptr;
  int gso_errno = 0;
  unsigned eagain_every = 0, short_every = 0;
  std::string s(env);
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    auto eq = item.find('=');
    std::string k = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (k == "gso" && (v == "EINVAL" || v == "EIO")) gso_errno = v == "EINVAL" ? EINVAL : EIO;
    else if ((k == "eagain" || k == "short") && !v.empty() && std::atoi(v.c_str()) >= 2)
      (k == "eagain" ? eagain_every : short_every) = unsigned(std::atoi(v.c_str()));
    else spdlog::warn("OFLD_TEST_TAP_WRITE_FAULT: '{}' not understood (ignored)", item);
  }
  spdlog::warn("OFLD_TEST_TAP_WRITE_FAULT={}: test hook active, TAP/TUN writes fail on purpose", s);
  auto count = std::make_shared<std::uint64_t>(0);
  return [=](int fd, const iovec* iov, int n) -> ssize_t {
    const std::uint64_t i = ++*count;
    std::size_t want = 0;
    for (int k = 0; k < n; ++k) want += iov[k].iov_len;
    if (gso_errno && vnet_hdr && n > 0 && iov[0].iov_len >= wv::kHdrLen &&
        static_cast<const std::uint8_t*>(iov[0].iov_base)[1] != wv::kGsoNone) {
      errno = gso_errno;
      return -1;
    }
    if (eagain_every && i % eagain_every == 0) {
      errno = EAGAIN;
      return -1;
    }
    if (short_every && i % short_every == 0 && want > 1) return ssize_t(want - 1);
    return ::writev(fd, iov, n);
  };
}

}  // namespace ofld::io

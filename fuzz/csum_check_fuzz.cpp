// libFuzzer target: arbitrary frame bytes × link type → verify_frame and fix_frame never crash
// or over-read; after fix, no field that fix could repair is left bad or partial.
//
// Second mode (flags bit 1): the bytes are a capture — records of [2-byte big-endian length,
// 1-byte time step in seconds, frame] — fed to CaptureVerifier with small reassembly limits,
// so that fragments, overlaps, eviction, ageing and datagrams nested in tunnels are reached;
// the limits must hold after every frame, and every reassembled datagram names frames seen.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ofld/tools/csum_check.hpp"

namespace {

void capture_mode(const std::uint8_t* p, std::size_t n, ofld::wire::LinkType link) {
  ofld::tools::ReassemblyLimits lim;
  lim.max_datagrams = 8;
  lim.max_bytes = 8192;
  lim.max_fragments = 16;
  ofld::tools::CaptureVerifier cv(link, {}, lim);
  std::uint64_t frame_no = 0, ts = 0;
  std::size_t i = 0;
  while (i + 3 <= n) {
    std::size_t len = std::size_t(p[i] << 8 | p[i + 1]);
    ts += std::uint64_t(p[i + 2]) * 1000000000ull;
    i += 3;
    if (len > n - i) len = n - i;
    std::vector<std::uint8_t> frame(p + i, p + i + len);  // exact size: ASan sees over-reads
    i += len;
    auto r = cv.verify(frame, std::uint32_t(frame.size()), ++frame_no, ts);
    if (cv.bytes_held() > lim.max_bytes || cv.datagrams_held() > lim.max_datagrams) std::abort();
    for (const auto& d : r.datagrams) {
      if (d.fault == ofld::tools::FragFault::None && d.frames.empty()) std::abort();
      for (auto f : d.frames)
        if (f == 0 || f > frame_no) std::abort();
    }
  }
  for (const auto& d : cv.finish())
    if (d.fault != ofld::tools::FragFault::Incomplete) std::abort();
  if (cv.bytes_held() != 0 || cv.datagrams_held() != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto link = static_cast<ofld::wire::LinkType>(data[0] % 4);
  if (data[1] & 2) {
    capture_mode(data + 2, size - 2, link);
    return 0;
  }
  const bool truncated = data[1] & 1;
  std::vector<std::uint8_t> frame(data + 2, data + size);
  const std::uint32_t orig = std::uint32_t(frame.size()) + (truncated ? 100 : 0);
  auto before = ofld::tools::verify_frame(frame, link, orig);
  auto fx = ofld::tools::fix_frame(frame, link, orig);
  if (fx.before.fields.size() != before.fields.size()) std::abort();
  const bool touched = !(fx.before.parse_error || fx.before.any(ofld::tools::Verdict::Skipped));
  if (touched) {
    for (const auto& f : fx.after.fields) {
      if (f.verdict == ofld::tools::Verdict::Bad || f.verdict == ofld::tools::Verdict::Partial)
        std::abort();
    }
  } else if (fx.after.rewritten != 0) {
    std::abort();  // unverifiable frames are never modified
  }
  return 0;
}

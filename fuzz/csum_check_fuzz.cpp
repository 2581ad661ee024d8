// libFuzzer target: arbitrary frame bytes × link type → verify_frame and fix_frame never crash
// or over-read; after fix, no field that fix could repair is left bad or partial.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ofld/tools/csum_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto link = static_cast<ofld::wire::LinkType>(data[0] % 4);
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

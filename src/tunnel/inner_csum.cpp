// The one transmit decision on a segment's inner checksum (see inner_csum.hpp).
#include "ofld/tunnel/inner_csum.hpp"

namespace ofld::tunnel {

std::string_view to_string(InnerCsum c) noexcept {
  switch (c) {
    case InnerCsum::Done: return "done";
    case InnerCsum::Rco: return "rco";
    case InnerCsum::Elided: return "elided";
    case InnerCsum::SumInTrain: return "sum_in_train";
    case InnerCsum::SumInEncap: return "sum_in_encap";
  }
  return "unknown";
}

InnerCsum inner_csum_plan(const InnerCsumFacts& f) noexcept {
  if (!f.partial) return InnerCsum::Done;
  // Only an Internet checksum can be left as a seed for the receiver (a CRC32c cannot).
  if (f.elide && f.inet) return InnerCsum::Elided;
  if (f.rco_tx) return f.inet && f.start_known && f.rco_encodable ? InnerCsum::Rco : InnerCsum::SumInEncap;
  return f.inet && f.start_known ? InnerCsum::SumInTrain : InnerCsum::SumInEncap;
}

}  // namespace ofld::tunnel

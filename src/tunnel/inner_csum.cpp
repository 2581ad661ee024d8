// Names of the inner-checksum decisions (the decision itself: inner_csum.hpp).
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

}  // namespace ofld::tunnel

// The one transmit decision on a segment's inner checksum (tunnel::inner_csum_plan), over
// every combination of its facts, and what the endpoint does with it.
//
// The table states the rules as the spec and the kernel have them:
//   - only a CHECKSUM_PARTIAL segment has work left (C-28, skb_checksum_help);
//   - integrity mode leaves an Internet checksum's seed for a peer that has it (I-5);
//   - a CRC32c checksum (not_inet) can be neither a seed nor RCO: finished before (C-30);
//   - RCO only when configured (remcsumtx with an outer checksum) and the start/offset
//     encode (W-26 VXLAN, W-27 GUE), else the checksum is finished in software (W-28);
//   - otherwise summed while copied into the train (X-8, skb_copy_and_csum_dev), which needs
//     csum_start inside the packet; without it the software path (skb_checksum_help).
#include <gtest/gtest.h>

#include <set>

#include "ofld/tunnel/encapsulation.hpp"
#include "ofld/tunnel/inner_csum.hpp"

namespace {

using ofld::tunnel::InnerCsum;
using ofld::tunnel::InnerCsumFacts;
using I = InnerCsum;

struct Row {
  bool partial, inet, start_known, elide, rco_tx, rco_encodable;
  InnerCsum want;
};

// partial, inet, start_known, elide, rco_tx, rco_encodable → decision (all 64 combinations)
const Row kRows[] = {
      {false, false, false, false, false, false, I::Done},
      {false, false, false, false, false, true , I::Done},
      {false, false, false, false, true , false, I::Done},
      {false, false, false, false, true , true , I::Done},
      {false, false, false, true , false, false, I::Done},
      {false, false, false, true , false, true , I::Done},
      {false, false, false, true , true , false, I::Done},
      {false, false, false, true , true , true , I::Done},
      {false, false, true , false, false, false, I::Done},
      {false, false, true , false, false, true , I::Done},
      {false, false, true , false, true , false, I::Done},
      {false, false, true , false, true , true , I::Done},
      {false, false, true , true , false, false, I::Done},
      {false, false, true , true , false, true , I::Done},
      {false, false, true , true , true , false, I::Done},
      {false, false, true , true , true , true , I::Done},
      {false, true , false, false, false, false, I::Done},
      {false, true , false, false, false, true , I::Done},
      {false, true , false, false, true , false, I::Done},
      {false, true , false, false, true , true , I::Done},
      {false, true , false, true , false, false, I::Done},
      {false, true , false, true , false, true , I::Done},
      {false, true , false, true , true , false, I::Done},
      {false, true , false, true , true , true , I::Done},
      {false, true , true , false, false, false, I::Done},
      {false, true , true , false, false, true , I::Done},
      {false, true , true , false, true , false, I::Done},
      {false, true , true , false, true , true , I::Done},
      {false, true , true , true , false, false, I::Done},
      {false, true , true , true , false, true , I::Done},
      {false, true , true , true , true , false, I::Done},
      {false, true , true , true , true , true , I::Done},
      {true , false, false, false, false, false, I::SumInEncap},
      {true , false, false, false, false, true , I::SumInEncap},
      {true , false, false, false, true , false, I::SumInEncap},
      {true , false, false, false, true , true , I::SumInEncap},
      {true , false, false, true , false, false, I::SumInEncap},
      {true , false, false, true , false, true , I::SumInEncap},
      {true , false, false, true , true , false, I::SumInEncap},
      {true , false, false, true , true , true , I::SumInEncap},
      {true , false, true , false, false, false, I::SumInEncap},
      {true , false, true , false, false, true , I::SumInEncap},
      {true , false, true , false, true , false, I::SumInEncap},
      {true , false, true , false, true , true , I::SumInEncap},
      {true , false, true , true , false, false, I::SumInEncap},
      {true , false, true , true , false, true , I::SumInEncap},
      {true , false, true , true , true , false, I::SumInEncap},
      {true , false, true , true , true , true , I::SumInEncap},
      {true , true , false, false, false, false, I::SumInEncap},
      {true , true , false, false, false, true , I::SumInEncap},
      {true , true , false, false, true , false, I::SumInEncap},
      {true , true , false, false, true , true , I::SumInEncap},
      {true , true , false, true , false, false, I::Elided},
      {true , true , false, true , false, true , I::Elided},
      {true , true , false, true , true , false, I::Elided},
      {true , true , false, true , true , true , I::Elided},
      {true , true , true , false, false, false, I::SumInTrain},
      {true , true , true , false, false, true , I::SumInTrain},
      {true , true , true , false, true , false, I::SumInEncap},
      {true , true , true , false, true , true , I::Rco},
      {true , true , true , true , false, false, I::Elided},
      {true , true , true , true , false, true , I::Elided},
      {true , true , true , true , true , false, I::Elided},
      {true , true , true , true , true , true , I::Elided},
};

TEST(TunnelInnerCsum, X8_W26_W27_W28_I5_OneDecisionOverEveryCombination) {
  ASSERT_EQ(std::size(kRows), 64u);
  for (const auto& r : kRows) {
    InnerCsumFacts f;
    f.partial = r.partial, f.inet = r.inet, f.start_known = r.start_known;
    f.elide = r.elide, f.rco_tx = r.rco_tx, f.rco_encodable = r.rco_encodable;
    const unsigned key = unsigned(r.partial) << 5 | unsigned(r.inet) << 4 | unsigned(r.start_known) << 3 |
                         unsigned(r.elide) << 2 | unsigned(r.rco_tx) << 1 | unsigned(r.rco_encodable);
    EXPECT_EQ(ofld::tunnel::inner_csum_plan(f), r.want)
        << "partial " << r.partial << " inet " << r.inet << " start " << r.start_known << " elide "
        << r.elide << " rco_tx " << r.rco_tx << " encodable " << r.rco_encodable << " (row " << key
        << ") got " << ofld::tunnel::to_string(ofld::tunnel::inner_csum_plan(f));
  }
  std::set<unsigned> keys;
  for (const auto& r : kRows)
    keys.insert(unsigned(r.partial) << 5 | unsigned(r.inet) << 4 | unsigned(r.start_known) << 3 |
                unsigned(r.elide) << 2 | unsigned(r.rco_tx) << 1 | unsigned(r.rco_encodable));
  EXPECT_EQ(keys.size(), 64u) << "the table covers every combination once";
}

TEST(TunnelInnerCsum, EveryDecisionHasAName) {
  EXPECT_EQ(ofld::tunnel::to_string(I::Done), "done");
  EXPECT_EQ(ofld::tunnel::to_string(I::Rco), "rco");
  EXPECT_EQ(ofld::tunnel::to_string(I::Elided), "elided");
  EXPECT_EQ(ofld::tunnel::to_string(I::SumInTrain), "sum_in_train");
  EXPECT_EQ(ofld::tunnel::to_string(I::SumInEncap), "sum_in_encap");
}

}  // namespace

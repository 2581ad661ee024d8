// `ofld fdb --mac M` / `--vtep A` (SharedFdb::write_json with an FdbFilter; docs/evpn.md
// "Scale"): the selected entries, flood member and local MACs, counters whole-table.
// Expected values: the entries put in, read back through the JSON text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ofld/tunnel/fdb.hpp"

namespace {

using ofld::tunnel::FdbFilter;
using ofld::tunnel::FdbSource;
using ofld::tunnel::IpAddr;
using ofld::tunnel::Mac;
using ofld::tunnel::SharedFdb;

IpAddr ip(const char* s) { return *IpAddr::parse(s); }

struct FdbFilterJson : ::testing::Test {
  SharedFdb fdb{0};
  void SetUp() override {
    fdb.add_static(Mac{2, 0, 0, 0, 0, 1}, ip("10.0.0.2"));
    fdb.add_static(Mac{2, 0, 0, 0, 0, 2}, ip("10.0.0.2"));
    fdb.add_static(Mac{2, 0, 0, 0, 0, 3}, ip("10.0.0.3"));
    fdb.add_flood(ip("10.0.0.2"), FdbSource::Evpn);
    fdb.add_flood(ip("10.0.0.3"), FdbSource::Evpn);
    fdb.set_local_learning(true);
    std::vector<IpAddr> out;
    fdb.lookup_tx(Mac{2, 0, 0, 0, 0, 9}, Mac{2, 0, 0, 0, 0, 1}, 1, out);  // local 02:..:09
  }
  nlohmann::json doc(const FdbFilter& f) {
    std::string t;
    fdb.write_json(t, 1, f);
    return nlohmann::json::parse(t);
  }
};

TEST_F(FdbFilterJson, MacSelectsItsEntryAndNoFloodList) {
  FdbFilter f;
  f.mac = Mac{2, 0, 0, 0, 0, 3};
  const auto j = doc(f);
  ASSERT_EQ(j["entries"].size(), 1u);
  EXPECT_EQ(j["entries"][0]["mac"], "02:00:00:00:00:03");
  EXPECT_EQ(j["entries"][0]["remote"], "10.0.0.3");
  EXPECT_TRUE(j["flood"].empty());
  EXPECT_TRUE(j["local"].empty());
  f.mac = Mac{2, 0, 0, 0, 0, 9};
  const auto k = doc(f);
  EXPECT_TRUE(k["entries"].empty());
  ASSERT_EQ(k["local"].size(), 1u);
  EXPECT_EQ(k["local"][0]["mac"], "02:00:00:00:00:09");
}

TEST_F(FdbFilterJson, VtepSelectsItsEntriesAndFloodMember) {
  FdbFilter f;
  f.remote = ip("10.0.0.2");
  const auto j = doc(f);
  ASSERT_EQ(j["entries"].size(), 2u);
  EXPECT_EQ(j["entries"][0]["mac"], "02:00:00:00:00:01");
  EXPECT_EQ(j["entries"][1]["mac"], "02:00:00:00:00:02");
  ASSERT_EQ(j["flood"].size(), 1u);
  EXPECT_EQ(j["flood"][0]["remote"], "10.0.0.2");
  EXPECT_TRUE(j["local"].empty());
}

TEST_F(FdbFilterJson, NoFilterIsTheWholeTable) {
  const auto j = doc({});
  EXPECT_EQ(j["entries"].size(), 3u);
  EXPECT_EQ(j["flood"].size(), 2u);
  EXPECT_EQ(j["local"].size(), 1u);
}

}  // namespace

// FdbJsonCursor: `ofld fdb`'s document written in pieces from a position (docs/fdb.md "The
// table as JSON"). Expected values: the entries put in (MACs, remotes, sources, ages, MAC
// Mobility sequence numbers of RFC 7432 §15), read back through the JSON text; the document
// must not depend on where it is cut.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "ofld/tunnel/fdb.hpp"

namespace {

using ofld::tunnel::FdbFilter;
using ofld::tunnel::FdbJsonCursor;
using ofld::tunnel::FdbSource;
using ofld::tunnel::IpAddr;
using ofld::tunnel::Mac;
using ofld::tunnel::SharedFdb;

constexpr std::uint64_t kMs = 1000000ull;

IpAddr ip(const char* s) { return *IpAddr::parse(s); }
Mac mac(std::uint32_t i) {
  return Mac{0x02, 0x00, std::uint8_t(i >> 24), std::uint8_t(i >> 16), std::uint8_t(i >> 8), std::uint8_t(i)};
}
std::string mac_text(std::uint32_t i) {
  char b[32];
  std::snprintf(b, sizeof b, "02:00:%02x:%02x:%02x:%02x", (i >> 24) & 255, (i >> 16) & 255, (i >> 8) & 255, i & 255);
  return b;
}

std::string whole(const FdbJsonCursor& c, std::size_t piece) {
  std::string out;
  std::size_t pos = 0, calls = 0;
  while (pos != FdbJsonCursor::kEnd) {
    pos = c.write(out, pos, piece);
    ++calls;
  }
  const std::size_t p = std::max<std::size_t>(piece, 1);
  EXPECT_EQ(calls, std::max<std::size_t>(1, (c.entries() + p - 1) / p));
  return out;
}

// 5,000 EVPN entries (past the cursor's radix-sort threshold) at 10 VTEPs (one IPv6), a static and a learned entry, inserted in
// descending MAC order: the document lists them sorted by MAC with each one's remote, source,
// age and sequence number, and is the same text however it is cut.
TEST(FdbJsonCursor, PiecesFromAnyPositionMakeTheSameSortedDocument) {
  SharedFdb f(0);
  const char* vteps[] = {"10.1.0.0", "10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4",
                         "10.1.0.5", "10.1.0.6", "10.1.0.7", "10.1.0.8", "2001:db8::1"};
  for (std::uint32_t i = 5000; i-- > 0;) f.program_evpn(mac(i), ip(vteps[i % 10]), i * 3, 5 * kMs);
  f.add_static(mac(50000), ip("10.9.9.9"));
  f.learn(mac(0x1000000), ip("10.1.0.1"), 7 * kMs);
  f.add_flood(ip("10.1.0.1"), FdbSource::Evpn);
  FdbJsonCursor c(f, 10 * kMs, {}, ",\"vni\":100");
  ASSERT_EQ(c.entries(), 5002u);
  const std::string one = whole(c, 5002);
  for (std::size_t piece : {1u, 7u, 5001u, 9000u}) EXPECT_EQ(whole(c, piece), one) << "pieces of " << piece;
  EXPECT_EQ(whole(c, 0), one);  // 0 counts as 1: every call makes progress

  const auto j = nlohmann::json::parse(one);
  ASSERT_EQ(j["entries"].size(), 5002u);
  for (std::uint32_t i = 0; i < 5000; ++i) {
    const auto& e = j["entries"][i];
    ASSERT_EQ(e["mac"], mac_text(i)) << i;
    EXPECT_EQ(e["remote"], vteps[i % 10]);
    EXPECT_EQ(e["source"], "evpn");
    EXPECT_EQ(e["age_ms"], 5u);
    EXPECT_EQ(e["seq"], i * 3);
  }
  EXPECT_EQ(j["entries"][5000], (nlohmann::json{{"mac", mac_text(50000)}, {"remote", "10.9.9.9"},
                                                 {"source", "static"}, {"age_ms", 0}}));
  EXPECT_EQ(j["entries"][5001], (nlohmann::json{{"mac", mac_text(0x1000000)}, {"remote", "10.1.0.1"},
                                                 {"source", "learned"}, {"age_ms", 3}}));
  EXPECT_EQ(j["flood"], (nlohmann::json::array({{{"remote", "10.1.0.1"}, {"source", "evpn"}}})));
  EXPECT_EQ(j["vni"], 100);
  EXPECT_EQ(j["learned"], 1u);
  // SharedFdb::write_json is the same document written at once (without the added member).
  std::string w;
  f.write_json(w, 10 * kMs);
  auto k = j;
  k.erase("vni");
  EXPECT_EQ(nlohmann::json::parse(w), k);
}

// The copy is taken when the cursor is made: later changes to the table do not show in it,
// and nothing it refers to goes away with them.
TEST(FdbJsonCursor, IsASnapshotOfTheTableWhenMade) {
  SharedFdb f(0);
  for (std::uint32_t i = 0; i < 100; ++i) f.program_evpn(mac(i), ip("10.1.0.1"), 1, 0);
  FdbJsonCursor c(f, 0);
  for (std::uint32_t i = 0; i < 100; ++i) f.clear_evpn(mac(i));
  f.program_evpn(mac(500), ip("10.1.0.2"), 1, 0);
  const auto j = nlohmann::json::parse(whole(c, 10));
  ASSERT_EQ(j["entries"].size(), 100u);
  EXPECT_EQ(j["entries"][99]["mac"], mac_text(99));
}

// An empty table and a filter that selects nothing are complete documents in one call; a
// position past the entries is an error, and writing from kEnd appends nothing.
TEST(FdbJsonCursor, EmptyTableAndBadPositions) {
  SharedFdb f(0);
  FdbJsonCursor c(f, 0);
  std::string out;
  EXPECT_EQ(c.write(out, 0, 10), FdbJsonCursor::kEnd);
  const auto j = nlohmann::json::parse(out);
  EXPECT_TRUE(j["entries"].empty());
  EXPECT_TRUE(j["flood"].empty());
  EXPECT_EQ(c.write(out, FdbJsonCursor::kEnd, 10), FdbJsonCursor::kEnd);
  EXPECT_EQ(nlohmann::json::parse(out), j);  // nothing appended
  EXPECT_THROW(c.write(out, 1, 10), std::out_of_range);

  f.program_evpn(mac(1), ip("10.1.0.1"), 0, 0);
  FdbFilter none;
  none.remote = ip("10.1.0.9");
  FdbJsonCursor d(f, 0, none);
  EXPECT_EQ(d.entries(), 0u);
  std::string t;
  EXPECT_EQ(d.write(t, 0, 1), FdbJsonCursor::kEnd);
  EXPECT_TRUE(nlohmann::json::parse(t)["entries"].empty());
}

}  // namespace

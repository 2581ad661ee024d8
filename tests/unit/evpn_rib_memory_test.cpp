// Memory after a mass withdrawal (docs/evpn.md "Scale"): 100,000 type-2 routes from 1,000
// VTEPs (the scale target) put into the route set and all withdrawn (RFC 7432 §7.2:
// the FDB entry of a MAC goes with its last route). The FDB's tables must give their slots
// back: each shard's table shrinks to its smallest size (8 slots, FlatMacMap), so the table
// bytes return to what they were before the routes. RSS is printed, not asserted (noisy).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "../../src/daemon/evpn_rib.hpp"

namespace {

using ofld::daemon::EvpnRib;
using ofld::tunnel::IpAddr;
using ofld::tunnel::Mac;
using ofld::tunnel::SharedFdb;

constexpr std::uint32_t kRoutes = 100000, kVteps = 1000;
constexpr std::size_t kMinSlots = 8, kSlotBytes = 24;  // FlatMacMap's smallest table, FdbSlot

long rss_kb() {
  std::ifstream f("/proc/self/status");
  std::string k;
  long v = -1;
  while (f >> k)
    if (k == "VmRSS:" && f >> v) break;
  return v;
}

IpAddr vtep(std::uint32_t i) {
  IpAddr a;
  a.family = 4;
  a.bytes = {10, 77, std::uint8_t(i >> 8), std::uint8_t(i)};
  return a;
}
Mac mac(std::uint32_t i) {
  return Mac{0x02, 0x77, std::uint8_t(i >> 24), std::uint8_t(i >> 16), std::uint8_t(i >> 8), std::uint8_t(i)};
}

TEST(RouteSetMemory, Rfc7432_7_2_WithdrawalOfAllRoutesShrinksTheFdbTables) {
  auto fdb = std::make_shared<SharedFdb>(0);
  EvpnRib rib(fdb, {});
  for (std::uint32_t v = 0; v < kVteps; ++v) rib.update_imet(v, vtep(v));  // the VTEPs interned
  const std::size_t empty = fdb->table_bytes();
  const long rss0 = rss_kb();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (std::uint32_t i = 0; i < kRoutes; ++i) rib.update_mac(1000000 + i, mac(i), vtep(i % kVteps), 0, 1);
  ASSERT_EQ(fdb->size(), kRoutes);
  const std::size_t full = fdb->table_bytes();
  const long rss1 = rss_kb();
  const auto t1 = Clock::now();
  EXPECT_GE(full, empty + kRoutes * kSlotBytes);  // at most 3/4 full: ≥ one slot a route
  for (std::uint32_t i = 0; i < kRoutes; ++i) rib.withdraw_mac(1000000 + i, mac(i), 2);
  const auto t2 = Clock::now();
  EXPECT_EQ(fdb->size(), 0u);
  EXPECT_EQ(rib.mac_routes(), 0u);
  EXPECT_EQ(rib.remote_macs(), 0u);
  // Every shard back to its smallest table (the local-MAC tables were never used).
  EXPECT_LE(fdb->table_bytes(), empty + SharedFdb::kShards * kMinSlots * kSlotBytes);
  const long rss2 = rss_kb();
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  const long rss3 = rss_kb();
  std::printf("[mem] %u routes from %u VTEPs: FDB tables %zu -> %zu -> %zu bytes; VmRSS %ld -> %ld kB "
              "(%.0f B a route), after the withdrawal %ld kB, after malloc_trim %ld kB; "
              "added in %.0f ms, withdrawn in %.0f ms\n",
              kRoutes, kVteps, empty, full, fdb->table_bytes(), rss0, rss1,
              double(rss1 - rss0) * 1024.0 / kRoutes, rss2, rss3,
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count());
  // The flood list goes with the type-3 routes.
  for (std::uint32_t v = 0; v < kVteps; ++v) rib.withdraw_imet(v);
  EXPECT_TRUE(fdb->flood_list().empty());
}

}  // namespace

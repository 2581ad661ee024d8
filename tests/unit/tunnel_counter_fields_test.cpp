// The endpoint's counters and their one field table (tunnel/types.hpp kCounterFields):
// every counter summed by Counters::operator+=, named once in the stats document (`ofld stats
// --json`), summed across workers (the daemon's json_sum) and present in the metrics text.
// Values are set per field from its index, so a counter read from the wrong member, summed
// twice or left out shows as a wrong number.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../../src/daemon/worker_set.hpp"
#include "ofld/daemon/metrics.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/types.hpp"

namespace {

using namespace ofld;
using json = nlohmann::json;
using tunnel::kCounterFields;

constexpr std::uint64_t value_a(std::size_t i) { return 1000 + 7 * i; }
constexpr std::uint64_t value_b(std::size_t i) { return 500000 + 11 * i; }

template <class C>
void fill(C& c, std::uint64_t (*v)(std::size_t)) {
  for (std::size_t i = 0; i < std::size(kCounterFields); ++i) c.*kCounterFields[i].member = v(i);
}

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

std::unique_ptr<tunnel::Endpoint> vxlan_endpoint() {
  tunnel::VxlanConfig c;
  c.vni = 42;
  c.local = *tunnel::IpAddr::parse("10.0.0.1");
  c.remotes = {*tunnel::IpAddr::parse("10.0.0.2")};
  return std::make_unique<tunnel::Endpoint>(c);
}

// One entry per member, one name per (group, key): two rows naming one member would count
// it twice, two members under one key would hide one.
TEST(TunnelCounterFields, EachMemberOnceEachNameOnce) {
  std::set<std::string> names;
  tunnel::Counters c;
  for (std::size_t i = 0; i < std::size(kCounterFields); ++i) {
    const auto& f = kCounterFields[i];
    EXPECT_TRUE(names.insert(std::string(f.group) + "/" + std::string(f.name)).second) << f.name;
    ++(c.*f.member);
  }
  for (const auto& f : kCounterFields) EXPECT_EQ(c.*f.member, 1u) << f.group << "/" << f.name;
  EXPECT_EQ(names.size(), std::size(kCounterFields));
}

TEST(TunnelCounterFields, PlusEqualsSumsEveryCounterAndDrop) {
  tunnel::Counters a, b;
  fill(a, value_a);
  fill(b, value_b);
  a.drops[1] = 3, b.drops[1] = 4;
  a += b;
  for (std::size_t i = 0; i < std::size(kCounterFields); ++i)
    EXPECT_EQ(a.*kCounterFields[i].member, value_a(i) + value_b(i)) << kCounterFields[i].name;
  EXPECT_EQ(a.drops[1], 7u);
}

// Two workers' stats documents summed as the daemon does, then rendered as metrics: every
// counter at its table path with the sum of both, and as an ofld_<group>_<name>_total sample
// (the learn_refused reasons as one family labelled by reason).
TEST(TunnelCounterFields, EveryCounterInStatsJsonAndMetricsSummedAcrossWorkers) {
  auto w0 = vxlan_endpoint(), w1 = vxlan_endpoint();
  fill(w0->counters(), value_a);
  fill(w1->counters(), value_b);
  json sum = json::object();
  daemon::detail::json_sum(sum, w0->stats());
  daemon::detail::json_sum(sum, w1->stats());
  const std::string text = daemon::render_metrics(sum, daemon::MetricsFormat::Prometheus);
  for (std::size_t i = 0; i < std::size(kCounterFields); ++i) {
    const auto& f = kCounterFields[i];
    const std::string group(f.group), name(f.name);
    SCOPED_TRACE(group + "/" + name);
    const std::uint64_t want = value_a(i) + value_b(i);
    const json::json_pointer ptr(group + "/" + name);
    ASSERT_TRUE(sum.contains(ptr));
    EXPECT_EQ(sum[ptr].get<std::uint64_t>(), want);
    std::string line;
    if (group == "/fdb/learn_refused") {
      line = "ofld_fdb_learn_refused_total{reason=\"" + name + "\"} " + std::to_string(want);
    } else {
      line = "ofld_" + group.substr(1) + "_" + name + "_total " + std::to_string(want);
    }
    EXPECT_TRUE(has_line(text, line)) << line;
  }
}

// A GSO fallback reported by the daemon is counted, and that train is not a UDP_SEGMENT train.
TEST(TunnelCounterFields, GsoFallbackCounted) {
  auto ep = vxlan_endpoint();
  tunnel::TxTrain t;
  t.count = 4;
  ep->sent(t, true, false, true);
  ep->sent(t, true, true);
  EXPECT_EQ(ep->counters().gso_fallbacks, 1u);
  EXPECT_EQ(ep->counters().tx_trains, 1u);
  EXPECT_EQ(ep->stats()["tx"]["gso_fallbacks"], 1u);
}

}  // namespace

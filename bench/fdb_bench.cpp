// The VXLAN FDB under a learning flood (its own main; not a Google Benchmark program):
//
//   fdb_bench lookups [ROUNDS] [MS]  transmit lookups by 4 threads, each round with and
//       without a 5th thread learning new source MACs as fast as it can; alternating rounds of
//       the sharded tunnel::SharedFdb and of the previous design (one std::map behind one
//       mutex, kept here as LegacyFdb) — medians and same-run ratios;
//   fdb_bench json [ROUNDS]  the longest a lookup waits while another thread serialises a
//       100,000-entry table for `ofld fdb --json` (SharedFdb::write_json vs LegacyFdb's
//       whole-table lock), per round, median of the per-round maxima and p99.9;
//   fdb_bench rss new|legacy [N]  RSS growth per learned entry for N entries (default
//       65,536), in a fresh process.
//
// Lookups, learning and serialisation are what the endpoint's workers and control thread
// call; no sockets. Absolute numbers depend on the machine and its load: read the ratios.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "ofld/tunnel/fdb.hpp"

namespace {

namespace tn = ofld::tunnel;
using Clock = std::chrono::steady_clock;

/// The previous SharedFdb: one std::map of full entries behind one mutex (learn, lookup,
/// whole-table JSON under the lock), for comparison.
class LegacyFdb {
 public:
  bool learn(const tn::Mac& src, const tn::IpAddr& from, std::uint64_t now) {
    std::lock_guard g(mu_);
    auto [it, fresh] = m_.try_emplace(src, tn::FdbEntry{from, false, now, tn::FdbSource::Learned, 0});
    if (fresh) return true;
    it->second.updated_ns = now;
    if (it->second.remote == from) return false;
    it->second.remote = from;
    return true;
  }
  bool lookup(const tn::Mac& dst, std::uint64_t, std::vector<tn::IpAddr>& out) {
    std::lock_guard g(mu_);
    auto it = m_.find(dst);
    if (it == m_.end()) {
      out.assign(defaults_.begin(), defaults_.end());
      return true;
    }
    out.assign(1, it->second.remote);
    return false;
  }
  std::string json(std::uint64_t now) const {
    std::lock_guard g(mu_);
    nlohmann::json e = nlohmann::json::array();
    for (const auto& [m, x] : m_) {
      char b[18];
      std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
      e.push_back({{"mac", b}, {"remote", x.remote.to_string()}, {"source", "learned"},
                   {"age_ms", (now - x.updated_ns) / 1000000}});
    }
    return nlohmann::json{{"entries", e}}.dump();
  }
  std::vector<tn::IpAddr> defaults_;

 private:
  mutable std::mutex mu_;
  std::map<tn::Mac, tn::FdbEntry> m_;
};

tn::Mac mac(std::uint32_t i) {
  return tn::Mac{0x02, 0x20, std::uint8_t(i >> 24), std::uint8_t(i >> 16), std::uint8_t(i >> 8), std::uint8_t(i)};
}
tn::IpAddr remote(int i) { return *tn::IpAddr::parse("10.0.0." + std::to_string(2 + i)); }

constexpr int kLookupThreads = 4;
constexpr std::uint32_t kKnown = 10000;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Lookups per second by kLookupThreads threads for `ms`, with a flood thread when asked.
template <class Table>
double lookup_round(Table& t, bool flood, int ms, std::uint32_t& flood_next) {
  std::atomic<bool> stop{false}, go{false};
  std::atomic<std::uint64_t> total{0};
  std::vector<std::thread> ts;
  for (int w = 0; w < kLookupThreads; ++w)
    ts.emplace_back([&, w] {
      std::vector<tn::IpAddr> out;
      std::uint32_t x = 12345u + std::uint32_t(w) * 7919u;
      std::uint64_t n = 0;
      while (!go.load(std::memory_order_acquire)) {}
      while (!stop.load(std::memory_order_relaxed)) {
        for (int k = 0; k < 256; ++k) {
          x = x * 1664525u + 1013904223u;
          t.lookup(mac(x % kKnown), 1, out);
        }
        n += 256;
      }
      total += n;
    });
  std::thread f;
  if (flood)
    f = std::thread([&] {
      const tn::IpAddr r = remote(0);
      while (!go.load(std::memory_order_acquire)) {}
      while (!stop.load(std::memory_order_relaxed)) {
        // new source MACs, cycling through 2^19 of them (LegacyFdb would otherwise grow
        // without bound over the rounds)
        for (int k = 0; k < 64; ++k) t.learn(mac(0x01000000u + (flood_next++ & 0x7FFFF)), r, 1);
      }
    });
  go.store(true, std::memory_order_release);
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  stop = true;
  for (auto& x : ts) x.join();
  if (f.joinable()) f.join();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return double(total.load()) / s;
}

int run_lookups(int rounds, int ms) {
  tn::SharedFdb shared;
  LegacyFdb legacy;
  for (int i = 0; i < 4; ++i) shared.add_default_remote(remote(i)), legacy.defaults_.push_back(remote(i));
  for (std::uint32_t i = 0; i < kKnown; ++i) {
    shared.learn(mac(i), remote(int(i % 4)), 1);
    legacy.learn(mac(i), remote(int(i % 4)), 1);
  }
  std::vector<double> sq, sf, lq, lf;
  std::uint32_t fs = 0, fl = 0;
  for (int r = 0; r < rounds; ++r) {  // alternate: every configuration once per round
    sq.push_back(lookup_round(shared, false, ms, fs));
    lq.push_back(lookup_round(legacy, false, ms, fl));
    sf.push_back(lookup_round(shared, true, ms, fs));
    lf.push_back(lookup_round(legacy, true, ms, fl));
  }
  const double a = median(sq), b = median(sf), c = median(lq), d = median(lf);
  std::printf("lookups/s by %d threads, median of %d alternating rounds of %d ms (%u known MACs)\n",
              kLookupThreads, rounds, ms, kKnown);
  std::printf("  sharded, quiet:       %12.0f\n  sharded, flood:       %12.0f   (flood/quiet %.2fx)\n",
              a, b, b / a);
  std::printf("  map+mutex, quiet:     %12.0f\n  map+mutex, flood:     %12.0f   (flood/quiet %.2fx)\n",
              c, d, d / c);
  std::printf("  sharded/map+mutex: quiet %.2fx, under flood %.2fx\n", a / c, b / d);
  std::printf("  sharded table after the rounds: %zu learned (maxaddress %u), %llu refused\n",
              shared.learned_count(), shared.limits().maxaddress,
              (unsigned long long)shared.refusals().maxaddress);
  return 0;
}

/// Longest single-lookup time (µs) and p99.9 while `serialise` runs in a loop for `ms`.
template <class Table, class Ser>
std::pair<double, double> json_round(Table& t, Ser serialise, int ms) {
  std::atomic<bool> stop{false};
  std::vector<double> lat;
  lat.reserve(1 << 22);
  std::thread s([&] {
    while (!stop.load(std::memory_order_relaxed)) serialise();
  });
  std::vector<tn::IpAddr> out;
  std::uint32_t x = 1;
  const auto end = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < end) {
    x = x * 1664525u + 1013904223u;
    const auto t0 = Clock::now();
    t.lookup(mac(x % 100000), 1, out);
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  stop = true;
  s.join();
  std::sort(lat.begin(), lat.end());
  return {lat.back(), lat[lat.size() * 999 / 1000]};
}

int run_json(int rounds) {
  tn::SharedFdb shared;
  tn::FdbLimits l;
  l.maxaddress = 0;
  l.from = tn::LearnFrom::Any;
  shared.set_limits(l);
  LegacyFdb legacy;
  for (std::uint32_t i = 0; i < 100000; ++i) {
    shared.learn(mac(i), remote(int(i % 8)), 1);
    legacy.learn(mac(i), remote(int(i % 8)), 1);
  }
  std::vector<double> smax, s999, lmax, l999, sbytes;
  for (int r = 0; r < rounds; ++r) {
    auto [a, b] = json_round(shared, [&] {
      std::string out;
      shared.write_json(out, 2);
    }, 1000);
    auto [c, d] = json_round(legacy, [&] { (void)legacy.json(2); }, 1000);
    smax.push_back(a), s999.push_back(b), lmax.push_back(c), l999.push_back(d);
  }
  std::string out;
  const auto t0 = Clock::now();
  shared.write_json(out, 2);
  const double ser_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const auto t1 = Clock::now();
  const std::string lj = legacy.json(2);
  const double leg_ms = std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  std::printf("a lookup while another thread serialises 100,000 entries in a loop (%d rounds of 1 s)\n", rounds);
  std::printf("  sharded write_json: longest lookup %8.0f us (median of rounds), p99.9 %6.1f us; one document %.1f ms, %zu bytes\n",
              median(smax), median(s999), ser_ms, out.size());
  std::printf("  map+mutex to_json:  longest lookup %8.0f us (median of rounds), p99.9 %6.1f us; one document %.1f ms, %zu bytes\n",
              median(lmax), median(l999), leg_ms, lj.size());
  return 0;
}

std::size_t rss() {
  std::ifstream s("/proc/self/statm");
  std::size_t a = 0, b = 0;
  s >> a >> b;
  return b * std::size_t(sysconf(_SC_PAGESIZE));
}

int run_rss(const std::string& which, std::uint32_t n) {
  const std::size_t before = rss();
  std::size_t table = 0;
  if (which == "new") {
    auto* f = new tn::SharedFdb;  // kept: RSS is read with it alive
    tn::FdbLimits l;
    l.maxaddress = n;
    l.from = tn::LearnFrom::Any;
    f->set_limits(l);
    for (std::uint32_t i = 0; i < 2 * n; ++i) f->learn(mac(i * 2654435761u), remote(int(i % 8)), 1);
    table = f->table_bytes();
    std::printf("new: %zu learned of %u offered\n", f->learned_count(), 2 * n);
  } else {
    auto* f = new LegacyFdb;
    for (std::uint32_t i = 0; i < n; ++i) f->learn(mac(i * 2654435761u), remote(int(i % 8)), 1);
  }
  const std::size_t grown = rss() - before;
  std::printf("%s: %u entries, RSS +%zu bytes = %.1f bytes/entry", which.c_str(), n, grown, double(grown) / n);
  if (table) std::printf("; slot arrays + remote table %zu bytes = %.1f bytes/entry", table, double(table) / n);
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "lookups";
  if (mode == "lookups") return run_lookups(argc > 2 ? std::atoi(argv[2]) : 7, argc > 3 ? std::atoi(argv[3]) : 300);
  if (mode == "json") return run_json(argc > 2 ? std::atoi(argv[2]) : 5);
  if (mode == "rss")
    return run_rss(argc > 2 ? argv[2] : "new", argc > 3 ? std::uint32_t(std::atoi(argv[3])) : 65536);
  std::fprintf(stderr, "usage: fdb_bench lookups [ROUNDS] [MS] | json [ROUNDS] | rss new|legacy [N]\n");
  return 2;
}

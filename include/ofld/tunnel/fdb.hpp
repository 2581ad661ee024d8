// ofld/tunnel/fdb.hpp — the VXLAN forwarding database: inner MAC → underlay remote.
//
// Mirrors drivers/net/vxlan/vxlan_core.c: entries learned from received frames (vxlan_snoop:
// a new source MAC creates an entry, a known one seen from another remote moves, every
// sighting refreshes `updated`), static entries (never learned over, never aged), ageing of
// dynamic entries `ageing` after their last update (vxlan_cleanup), and the all-zeros
// default entry whose remote list receives broadcast, multicast and unknown-unicast frames
// (flooding). Times are caller-supplied nanoseconds. Fdb is not thread-safe; SharedFdb
// wraps one behind a mutex for the workers of a multi-queue endpoint (learning from any
// worker, lookups copy the remotes out, ageing from one).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <vector>

#include "ofld/tunnel/types.hpp"

namespace ofld::tunnel {

using Mac = std::array<std::uint8_t, 6>;

struct FdbEntry {
  IpAddr remote;
  bool is_static = false;
  std::uint64_t updated_ns = 0;
};

class Fdb {
 public:
  /// `ageing_ns` = 0 disables ageing.
  explicit Fdb(std::uint64_t ageing_ns = 300ull * 1000000000ull) : ageing_ns_(ageing_ns) {}

  /// Add a remote to the default (flood) list; duplicates are ignored.
  void add_default_remote(const IpAddr& r);
  /// Static MAC → remote entry (replaces a dynamic one).
  void add_static(const Mac& mac, const IpAddr& r);
  /// vxlan_snoop: learn `src` (inner source MAC) at `from`. Group (multicast/broadcast)
  /// source addresses and all-zero MACs are not learned; static entries are not changed.
  /// Returns true when an entry was created or moved to another remote.
  bool learn(const Mac& src, const IpAddr& from, std::uint64_t now_ns);

  struct Lookup {
    std::span<const IpAddr> remotes;  ///< where to send (empty: nowhere)
    bool flooded = false;             ///< true: the default list (group or unknown dst)
  };
  /// Destinations for inner destination MAC `dst`. An expired dynamic entry counts as
  /// unknown (and is removed). The span stays valid until the next non-const call.
  Lookup lookup(const Mac& dst, std::uint64_t now_ns);
  /// Remove expired dynamic entries; returns how many were removed.
  std::size_t age(std::uint64_t now_ns);

  std::size_t size() const noexcept { return entries_.size(); }
  const std::map<Mac, FdbEntry>& entries() const noexcept { return entries_; }
  std::span<const IpAddr> default_remotes() const noexcept { return defaults_; }

  static bool is_group(const Mac& m) noexcept { return m[0] & 1; }

 private:
  bool expired(const FdbEntry& e, std::uint64_t now) const noexcept {
    return !e.is_static && ageing_ns_ && now >= e.updated_ns + ageing_ns_;
  }
  std::uint64_t ageing_ns_;
  std::map<Mac, FdbEntry> entries_;
  std::vector<IpAddr> defaults_;
};

/// An Fdb shared by the workers of one endpoint (thread-safe: every call takes the lock; the
/// remotes of a lookup are copied into the caller's vector, so no reference outlives it).
class SharedFdb {
 public:
  explicit SharedFdb(std::uint64_t ageing_ns = 300ull * 1000000000ull) : fdb_(ageing_ns) {}
  void add_default_remote(const IpAddr& r) {
    std::lock_guard g(mu_);
    fdb_.add_default_remote(r);
  }
  void add_static(const Mac& mac, const IpAddr& r) {
    std::lock_guard g(mu_);
    fdb_.add_static(mac, r);
  }
  bool learn(const Mac& src, const IpAddr& from, std::uint64_t now_ns) {
    std::lock_guard g(mu_);
    return fdb_.learn(src, from, now_ns);
  }
  /// Fdb::lookup; the remotes are copied into `out` (cleared first). Returns `flooded`.
  bool lookup(const Mac& dst, std::uint64_t now_ns, std::vector<IpAddr>& out) {
    std::lock_guard g(mu_);
    auto l = fdb_.lookup(dst, now_ns);
    out.assign(l.remotes.begin(), l.remotes.end());
    return l.flooded;
  }
  std::size_t age(std::uint64_t now_ns) {
    std::lock_guard g(mu_);
    return fdb_.age(now_ns);
  }
  /// Entries (learned or static) whose remote is `r`.
  std::size_t count_remote(const IpAddr& r) const {
    std::lock_guard g(mu_);
    std::size_t n = 0;
    for (const auto& [mac, e] : fdb_.entries()) n += e.remote == r;
    return n;
  }
  std::size_t size() const {
    std::lock_guard g(mu_);
    return fdb_.size();
  }
  /// A copy of the entries (for stats and tests).
  std::map<Mac, FdbEntry> entries() const {
    std::lock_guard g(mu_);
    return fdb_.entries();
  }

 private:
  mutable std::mutex mu_;
  Fdb fdb_;
};

}  // namespace ofld::tunnel

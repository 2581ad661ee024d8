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
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/tunnel/types.hpp"

namespace ofld::tunnel {

using Mac = std::array<std::uint8_t, 6>;

/// Where an FDB entry or flood-list member came from.
enum class FdbSource : std::uint8_t {
  Static,   ///< configuration: `fdb MAC ADDR` entries, `remote ADDR` flood members
  Learned,  ///< vxlan_snoop: the inner source MAC of a received datagram
  Evpn,     ///< a BGP EVPN route (type-2: entry, type-3: flood member)
  Group,    ///< flood member: the underlay multicast group (`group ADDR dev IF`)
  Local,    ///< a MAC behind our own TAP (source of transmitted frames; EVPN advertises it)
};
/// "static", "learned", "evpn", "group", "local".
std::string_view to_string(FdbSource s) noexcept;

struct FdbEntry {
  IpAddr remote;
  bool is_static = false;
  std::uint64_t updated_ns = 0;  ///< last learned / refreshed / programmed (ns, caller clock)
  FdbSource source = FdbSource::Learned;
  std::uint32_t seq = 0;         ///< EVPN: MAC Mobility sequence number (RFC 7432 §15)
};

/// A MAC behind our own TAP (local learning).
struct LocalMac {
  std::uint64_t updated_ns = 0;  ///< last frame from it (ns)
  std::uint32_t seq = 0;         ///< MAC Mobility sequence number to advertise it with
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
  /// EVPN type-2: `mac` lives behind `r` (replaces a learned or older EVPN entry; a static
  /// entry is kept). `seq` = the route's MAC Mobility sequence number. When `mac` is one of
  /// our locals and the route's seq is at least ours, the MAC moved away: the local is
  /// dropped. Returns true when the entry was created or changed.
  bool set_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns);
  /// EVPN type-2 withdrawn: remove `mac`'s EVPN entry if it points at `r`. True when removed.
  bool remove_evpn(const Mac& mac, const IpAddr& r);
  /// Flood list by source: add `r` (Evpn: type-3; Group: the multicast group) / remove it.
  /// A member is kept while any source still names it.
  void add_flood(const IpAddr& r, FdbSource src);
  void remove_flood(const IpAddr& r, FdbSource src);
  /// The flood list with each member's sources.
  std::vector<std::pair<IpAddr, FdbSource>> flood_list() const;

  /// Local learning (off by default; EVPN turns it on).
  void set_local_learning(bool on) noexcept { local_learning_ = on; }
  bool local_learning() const noexcept { return local_learning_; }
  /// A frame from our TAP with source `src`: keep it as a local MAC (unicast, non-zero only);
  /// a learned/EVPN remote entry for it is removed (it moved here; static entries stay).
  /// Returns true when the MAC is new here.
  bool learn_local(const Mac& src, std::uint64_t now_ns);
  const std::map<Mac, LocalMac>& locals() const noexcept { return locals_; }

  /// Destinations for inner destination MAC `dst`. An expired dynamic entry counts as
  /// unknown (and is removed). The span stays valid until the next non-const call.
  Lookup lookup(const Mac& dst, std::uint64_t now_ns);
  /// Remove expired dynamic entries (learned entries and local MACs); returns how many
  /// learned entries were removed.
  std::size_t age(std::uint64_t now_ns);

  std::size_t size() const noexcept { return entries_.size(); }
  const std::map<Mac, FdbEntry>& entries() const noexcept { return entries_; }
  std::span<const IpAddr> default_remotes() const noexcept { return defaults_; }

  static bool is_group(const Mac& m) noexcept { return m[0] & 1; }

 private:
  bool expired(const FdbEntry& e, std::uint64_t now) const noexcept {
    return e.source == FdbSource::Learned && ageing_ns_ && now >= e.updated_ns + ageing_ns_;
  }
  std::uint64_t ageing_ns_;
  std::map<Mac, FdbEntry> entries_;
  std::vector<IpAddr> defaults_;
  std::vector<unsigned> default_srcs_;  // per defaults_ member: bit (1 << FdbSource)
  std::map<Mac, LocalMac> locals_;
  bool local_learning_ = false;
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
  bool set_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns) {
    std::lock_guard g(mu_);
    return fdb_.set_evpn(mac, r, seq, now_ns);
  }
  bool remove_evpn(const Mac& mac, const IpAddr& r) {
    std::lock_guard g(mu_);
    return fdb_.remove_evpn(mac, r);
  }
  void add_flood(const IpAddr& r, FdbSource src) {
    std::lock_guard g(mu_);
    fdb_.add_flood(r, src);
  }
  void remove_flood(const IpAddr& r, FdbSource src) {
    std::lock_guard g(mu_);
    fdb_.remove_flood(r, src);
  }
  std::vector<std::pair<IpAddr, FdbSource>> flood_list() const {
    std::lock_guard g(mu_);
    return fdb_.flood_list();
  }
  void set_local_learning(bool on) {
    std::lock_guard g(mu_);
    fdb_.set_local_learning(on);
  }
  /// A copy of the local MACs.
  std::map<Mac, LocalMac> locals() const {
    std::lock_guard g(mu_);
    return fdb_.locals();
  }
  /// Transmit: local learning of `src` (when on) and the lookup of `dst` under one lock;
  /// remotes copied into `out`. Returns `flooded`.
  bool lookup_tx(const Mac& src, const Mac& dst, std::uint64_t now_ns, std::vector<IpAddr>& out) {
    std::lock_guard g(mu_);
    if (fdb_.local_learning()) fdb_.learn_local(src, now_ns);
    auto l = fdb_.lookup(dst, now_ns);
    out.assign(l.remotes.begin(), l.remotes.end());
    return l.flooded;
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
  /// The table for `ofld fdb --json` at `now_ns`: {"entries": [{"mac", "remote", "source"
  /// (static|learned|evpn), "age_ms" (since learned/refreshed/programmed; static: 0), "seq"
  /// (evpn)}], "flood": [{"remote", "source" (static|group|evpn)}], "local": [{"mac",
  /// "age_ms", "seq"}] (only with local learning)}. MACs as "02:00:00:00:00:01".
  nlohmann::json to_json(std::uint64_t now_ns) const;
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

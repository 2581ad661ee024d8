// The EVPN routes received for our VNI, as a set, and the FDB as a function of it
// (docs/evpn.md "Route sets"). Pure bookkeeping: no I/O, no lock (the EVPN client holds its
// own around every call), times are caller-supplied monotonic nanoseconds.
//
// A route is identified by its NLRI (RFC 7432 §7.2 / §7.3: RD, Ethernet tag, MAC and IP, or
// RD, Ethernet tag and originator): a new best path for the same NLRI replaces the previous
// one, a withdrawal removes it. After every add and withdraw of a type-2 route the FDB entry
// of its MAC is recomputed from all type-2 routes for that MAC (RFC 7432 §15.1: the highest
// MAC Mobility sequence number wins; of equal ones the lowest VTEP address); the entry goes
// only when no route for the MAC is left. A VTEP stays in the flood list while at least one
// type-3 route names it.
//
// Duplicate MAC detection (RFC 7432 §15.1, settings as FRR's `dup-addr-detection`): a move —
// the VTEP a MAC is reached at changes, between two remote VTEPs or between us and a remote —
// is counted; `max_moves` moves within `time_s` seconds of the first mark the MAC duplicate
// (logged once, counted). With `freeze` the FDB entry of a duplicate MAC stays where it was
// for `freeze_s` seconds (or for good: `freeze permanent`): later routes are kept in the set
// but not followed, except that the entry goes when no route for the MAC is left.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "ofld/tunnel/fdb.hpp"

namespace ofld::daemon {

/// FRR's `dup-addr-detection [max-moves N time S]` and `dup-addr-detection freeze
/// S|permanent` (defaults: on, 5 moves in 180 s, no freeze).
struct DupAddrDetection {
  bool enabled = true;
  std::uint32_t max_moves = 5;   ///< FRR: 2..1000
  std::uint32_t time_s = 180;    ///< FRR: 2..1800
  std::uint32_t freeze_s = 0;    ///< FRR: 30..3600; 0 = no freeze
  bool freeze_permanent = false; ///< `freeze permanent`: until the endpoint restarts
};

/// When a re-synchronisation's stale routes are removed (docs/evpn.md "Re-synchronisation"):
/// `stale_ms` after the last time their count fell (a restarted gobgpd takes its peers'
/// routes in over seconds, and each one it takes confirms one of ours), and at the latest
/// `max_ms` after the re-synchronisation began. Times in monotonic nanoseconds.
class StaleTimer {
 public:
  StaleTimer(std::uint64_t stale_ms, std::uint64_t max_ms) : stale_ns_(stale_ms * 1000000ull), max_ns_(max_ms * 1000000ull) {}
  /// A re-synchronisation begins at `now_ns` with `stale` routes stale.
  void begin(std::uint64_t now_ns, std::size_t stale) noexcept {
    due_ = now_ns + stale_ns_;
    cap_ = now_ns + max_ns_;
    last_ = stale;
  }
  /// The count of stale routes now; true once they are to be removed.
  bool due(std::uint64_t now_ns, std::size_t stale) noexcept {
    if (stale < last_) due_ = std::min(cap_, std::max(due_, now_ns + stale_ns_));
    last_ = stale;
    return now_ns >= due_;
  }

 private:
  std::uint64_t stale_ns_, max_ns_, due_ = 0, cap_ = 0;
  std::size_t last_ = 0;
};

/// When the EVPN client gives freed heap back (malloc_trim) after the route set shrank
/// (docs/evpn.md "Scale"): the count of what it holds (routes and mobility records) has fallen
/// from its peak by `min_drop`, or by half, and has not changed for `quiet_ms` (a withdrawal
/// arrives in bursts; a trim between them would leave what the next ones free). Times in
/// monotonic nanoseconds.
class TrimTrigger {
 public:
  TrimTrigger(std::size_t min_drop, std::uint64_t quiet_ms) : min_drop_(min_drop), quiet_ns_(quiet_ms * 1000000ull) {}
  /// The count now; true when the heap is to be trimmed (the peak then starts over from it).
  bool due(std::uint64_t now_ns, std::size_t count) noexcept {
    if (count != last_) last_ = count, changed_ns_ = now_ns;
    peak_ = std::max(peak_, count);
    const std::size_t drop = peak_ - count;
    if (drop == 0 || (drop < min_drop_ && drop * 2 < peak_) || now_ns - changed_ns_ < quiet_ns_) return false;
    peak_ = count;
    return true;
  }

 private:
  std::size_t min_drop_;
  std::uint64_t quiet_ns_, changed_ns_ = 0;
  std::size_t peak_ = 0, last_ = 0;
};

class EvpnRib {
 public:
  /// Identity of one route: a hash of its NLRI's key fields (evpn_route.hpp route_key).
  using RouteId = std::uint64_t;

  EvpnRib(std::shared_ptr<tunnel::SharedFdb> fdb, DupAddrDetection dad);

  /// Type-2 route `id` for `mac` at `vtep` with MAC Mobility sequence `seq`: added or
  /// replaced; the MAC's entry recomputed.
  void update_mac(RouteId id, const tunnel::Mac& mac, const tunnel::IpAddr& vtep, std::uint32_t seq,
                  std::uint64_t now_ns);
  /// Type-2 route `id` withdrawn (nothing when unknown); the MAC's entry recomputed.
  void withdraw_mac(RouteId id, const tunnel::Mac& mac, std::uint64_t now_ns);
  /// Type-3 route `id` naming flood member `vtep`: added or replaced.
  void update_imet(RouteId id, const tunnel::IpAddr& vtep);
  /// Type-3 route `id` withdrawn.
  void withdraw_imet(RouteId id);

  /// A local MAC appeared (learned from our TAP; the FDB took it from the remote it was at):
  /// counted as a move when routes for it are present.
  void local_appeared(const tunnel::Mac& mac, std::uint64_t now_ns);
  /// A local MAC went away (aged out, or moved): program what the routes say.
  void local_gone(const tunnel::Mac& mac, std::uint64_t now_ns);

  /// Re-synchronisation: every route present is stale until received again; end_resync
  /// withdraws those still stale (what a restarted gobgpd no longer has).
  void begin_resync();
  /// Returns how many routes were withdrawn.
  std::size_t end_resync(std::uint64_t now_ns);
  bool resyncing() const noexcept { return resyncing_; }
  /// Routes not received again since begin_resync (0 when not re-synchronising).
  std::size_t stale_routes() const noexcept { return stale_; }

  /// Ends freezes that are due (call about once a second).
  void tick(std::uint64_t now_ns);

  std::size_t mac_routes() const noexcept { return macs_.size(); }
  std::size_t imet_routes() const noexcept { return imets_.size(); }
  /// MACs with a move in their detection window (or a duplicate mark) kept by tick.
  std::size_t mobility_records() const noexcept { return mobility_.size(); }
  std::size_t vteps() const noexcept { return vtep_refs_.size(); }
  /// MACs with at least one route.
  std::size_t remote_macs() const noexcept { return n_macs_; }
  std::uint64_t moves() const noexcept { return moves_; }
  std::uint64_t duplicates_detected() const noexcept { return dups_; }
  /// Whether `mac` is marked duplicate / frozen now.
  bool duplicate(const tunnel::Mac& mac) const;
  bool frozen(const tunnel::Mac& mac, std::uint64_t now_ns) const;
  /// [{"mac", "moves", "frozen" (bool), "freeze_left_s" (with freeze; -1 permanent)}] of
  /// the MACs marked duplicate now.
  nlohmann::json duplicates_json(std::uint64_t now_ns) const;

 private:
  struct Mac2 {
    tunnel::IpAddr vtep;
    std::uint32_t seq;
    std::uint32_t gen;
  };
  struct Imet {
    tunnel::IpAddr vtep;
    std::uint32_t gen;
  };
  struct Mobility {
    std::uint64_t first_ns = 0;   ///< first move of the current window
    std::uint32_t moves = 0;      ///< moves in the window
    bool duplicate = false;
    std::uint64_t frozen_until_ns = 0;  ///< UINT64_MAX: permanent; 0: not frozen
  };
  /// The best route for `mac` (RFC 7432 §15.1), if any.
  std::optional<std::pair<tunnel::IpAddr, std::uint32_t>> best(const tunnel::Mac& mac) const;
  /// Program the FDB from the routes for `mac`; counts a move when the VTEP changes.
  void apply(const tunnel::Mac& mac, std::uint64_t now_ns);
  void moved(const tunnel::Mac& mac, std::uint64_t now_ns, const std::string& from, const std::string& to);
  void vtep_ref(const tunnel::IpAddr& v);
  void vtep_unref(const tunnel::IpAddr& v);

  std::shared_ptr<tunnel::SharedFdb> fdb_;
  DupAddrDetection dad_;
  std::map<std::pair<tunnel::Mac, RouteId>, Mac2> macs_;  // by MAC first: a MAC's routes adjacent
  std::map<RouteId, Imet> imets_;
  std::map<tunnel::IpAddr, std::uint32_t> vtep_refs_;     // type-3 routes naming each VTEP
  std::map<tunnel::Mac, Mobility> mobility_;              // MACs that moved recently
  std::size_t n_macs_ = 0;
  std::size_t stale_ = 0;
  std::uint32_t gen_ = 0;
  bool resyncing_ = false;
  std::uint64_t moves_ = 0, dups_ = 0;
};

}  // namespace ofld::daemon

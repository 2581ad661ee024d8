// ofld/tunnel/fdb.hpp — the VXLAN forwarding database: inner MAC → underlay remote.
//
// Mirrors drivers/net/vxlan/vxlan_core.c: entries learned from received frames (vxlan_snoop:
// a new source MAC creates an entry, a known one seen from another remote moves, every
// sighting refreshes `updated`), static entries (never learned over, never aged), ageing of
// dynamic entries `ageing` after their last update (vxlan_cleanup), and the all-zeros
// default entry whose remote list receives broadcast, multicast and unknown-unicast frames
// (flooding). Times are caller-supplied nanoseconds.
//
// Bounded learning (the kernel's IFLA_VXLAN_LIMIT, `maxaddress N`, checked in
// vxlan_fdb_create): past FdbLimits::maxaddress learned entries a NEW learned entry is
// refused (counted, one log line per 10 s); refreshing and moving existing entries still
// works; static and EVPN entries are never refused and never count against the bound (an
// EVPN route replaces a learned entry). Unlike the kernel (0 = unbounded by default) the
// default is bounded: FdbLimits::kDefaultMaxAddress. Further bounds: learned entries per
// remote, which sources may teach entries at all (`learning-from`), and local MACs.
//
// Layout: entries live in flat open-addressing tables (linear probing, backward-shift
// deletion, keyed hash with a per-table random seed so that chosen MACs cannot build probe
// chains), 24 bytes a slot, no per-entry heap node; the remote is an index into a table of
// interned underlay addresses shared by the tables of one endpoint (FdbRemotes, in fdb.cpp).
//
// Threading: Fdb is not thread-safe. SharedFdb splits the table into kShards shards by a
// hash of the MAC, each behind its own mutex, so the workers of a multi-queue endpoint
// (learning, transmit lookups) meet only when they touch the same shard; whole-table reads
// (to_json, write_json, for_each_entry, age) take one shard at a time.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
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

/// Which underlay sources may create or move learned entries (`learning-from`).
enum class LearnFrom : std::uint8_t {
  Auto,     ///< Remotes, but Any while the flood list has a multicast group (whose members
            ///< are only known by learning)
  Remotes,  ///< known sources only: configured remotes (flood list), remotes of static
            ///< entries, EVPN VTEPs (type-3 flood members, type-2 next hops)
  Any,      ///< every source (the kernel's vxlan_snoop)
};
/// "auto", "remotes", "any".
std::string_view to_string(LearnFrom f) noexcept;

/// Learning bounds of one FDB (shared by the shards of a SharedFdb). 0 = unbounded.
struct FdbLimits {
  /// Default `maxaddress`: 65,536 learned entries. At ≤ 64 bytes an entry (measured, see
  /// docs/fdb.md) that is ≤ 4 MiB per endpoint, while one VNI rarely has more than a few
  /// thousand stations; the kernel's default is unbounded.
  static constexpr std::uint32_t kDefaultMaxAddress = 65536;
  /// Default `local-maxaddress`: 4,096 MACs behind our own TAP (each is one EVPN type-2
  /// route in every VTEP of the VNI).
  static constexpr std::uint32_t kDefaultLocalMax = 4096;
  std::uint32_t maxaddress = kDefaultMaxAddress;  ///< learned entries (`maxaddress`)
  std::uint32_t per_remote = 0;                   ///< learned entries at one remote (`maxaddress-per-remote`)
  /// `learning-from`. (An Fdb / SharedFdb learns from any source until set_limits, as the
  /// kernel's vxlan_snoop; an Endpoint sets its VxlanConfig's limits, Auto by default.)
  LearnFrom from = LearnFrom::Auto;
  std::uint32_t local_max = kDefaultLocalMax;     ///< local MACs (`local-maxaddress`)
};

/// What one learning attempt did (Fdb::learn_ex).
enum class LearnResult : std::uint8_t {
  Created,             ///< a new learned entry
  Moved,               ///< a learned entry now points at another remote
  Refreshed,           ///< same remote: `updated` refreshed
  Ignored,             ///< group / all-zero source MAC, or a static / EVPN entry (unchanged)
  RefusedFull,         ///< new entry past `maxaddress`
  RefusedPerRemote,    ///< new entry past `maxaddress-per-remote` for that remote
  RefusedUnknownSource,///< `learning-from remotes` and the source is not a known remote
  RefusedRemoteTable,  ///< the interned-remote table is full (FdbRemotes capacity)
};
/// "created", "moved", "refreshed", "ignored", "maxaddress", "per_remote",
/// "unknown_source", "remote_table".
std::string_view to_string(LearnResult r) noexcept;
/// Created or Moved (what Fdb::learn returns true for).
constexpr bool learned(LearnResult r) noexcept { return r == LearnResult::Created || r == LearnResult::Moved; }

/// What one local-learning attempt did (Fdb::learn_local_ex).
enum class LocalResult : std::uint8_t { Created, Refreshed, Ignored, RefusedFull };

/// Index of an interned underlay address (FdbRemotes). Two sentinel values.
using RemoteId = std::uint32_t;
inline constexpr RemoteId kNoRemote = 0xFFFFFFFFu;    ///< not interned: unknown source
inline constexpr RemoteId kRemotesFull = 0xFFFFFFFEu; ///< not interned: the table is full

/// A view of one entry (as returned by entries() / for_each_entry; stored compactly).
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

/// What `ofld fdb --mac M` / `--vtep A` show (SharedFdb::write_json): unset = everything.
/// With `mac`: that MAC's entry and local MAC, no flood list. With `remote`: the entries at
/// that remote and the flood-list member, no local MACs. Both: both conditions.
struct FdbFilter {
  std::optional<Mac> mac;
  std::optional<IpAddr> remote;
  bool empty() const noexcept { return !mac && !remote; }
};

/// Refusal counters of one FDB (all its shards; relaxed atomics inside, copied out here).
struct FdbRefusals {
  std::uint64_t maxaddress = 0;      ///< LearnResult::RefusedFull
  std::uint64_t per_remote = 0;      ///< LearnResult::RefusedPerRemote
  std::uint64_t unknown_source = 0;  ///< LearnResult::RefusedUnknownSource
  std::uint64_t remote_table = 0;    ///< LearnResult::RefusedRemoteTable
  std::uint64_t local_max = 0;       ///< LocalResult::RefusedFull
};

namespace detail {
/// One FDB slot: 24 bytes (the remote is an interned index, the time full nanoseconds).
struct FdbSlot {
  std::uint64_t updated_ns;
  RemoteId remote;
  std::uint32_t seq;
  Mac mac;
  FdbSource source;
  std::uint8_t used;
};
/// One local-MAC slot: 24 bytes.
struct LocalSlot {
  std::uint64_t updated_ns;
  std::uint32_t seq;
  Mac mac;
  std::uint8_t used;
};

/// Flat open-addressing map keyed by MAC (linear probing, load ≤ 3/4, backward-shift
/// deletion: no tombstones). Slots are `Slot` with members `mac` and `used`.
template <class Slot>
class FlatMacMap {
 public:
  explicit FlatMacMap(std::uint64_t seed) : seed_(seed) {}
  Slot* find(const Mac& m) noexcept;
  const Slot* find(const Mac& m) const noexcept { return const_cast<FlatMacMap*>(this)->find(m); }
  /// The slot for `m` (created zeroed but for mac/used when new) and whether it is new.
  std::pair<Slot*, bool> insert(const Mac& m);
  void erase(Slot* s) noexcept;
  /// Give memory back after removals: a table below 1/8 full is rehashed to its size.
  void maybe_shrink();
  /// Remove the slots `pred` is true for; `on_erase(slot)` runs before each removal.
  template <class Pred, class OnErase>
  std::size_t erase_if(Pred pred, OnErase on_erase);
  template <class F>
  void for_each(F f) const {
    for (const Slot& s : slots_)
      if (s.used) f(s);
  }
  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return slots_.size(); }
  std::size_t bytes() const noexcept { return slots_.capacity() * sizeof(Slot); }

 private:
  std::size_t home(const Mac& m) const noexcept;
  void rehash(std::size_t cap);
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  std::uint64_t seed_;
};
}  // namespace detail

struct FdbShared;  // interned remotes, limits, counts shared by the shards (fdb.cpp)

class Fdb {
 public:
  /// `ageing_ns` = 0 disables ageing. Default limits (FdbLimits{}).
  explicit Fdb(std::uint64_t ageing_ns = 300ull * 1000000000ull);
  /// A table that shares `shared` (remotes, limits, counts) with others: SharedFdb's shards.
  Fdb(std::uint64_t ageing_ns, std::shared_ptr<FdbShared> shared);
  ~Fdb();
  Fdb(const Fdb&) = delete;
  Fdb& operator=(const Fdb&) = delete;

  /// Learning bounds (shared with the other shards of a SharedFdb).
  void set_limits(const FdbLimits& l) noexcept;
  FdbLimits limits() const noexcept;

  /// Add a remote to the default (flood) list; duplicates are ignored.
  void add_default_remote(const IpAddr& r);
  /// Static MAC → remote entry (replaces a dynamic one).
  void add_static(const Mac& mac, const IpAddr& r);
  /// vxlan_snoop: learn `src` (inner source MAC) at `from`. Group (multicast/broadcast)
  /// source addresses and all-zero MACs are not learned; static entries are not changed.
  /// Returns true when an entry was created or moved to another remote.
  bool learn(const Mac& src, const IpAddr& from, std::uint64_t now_ns) {
    return learned(learn_ex(src, from, now_ns));
  }
  /// learn() with the outcome, refusals included (counted in refusals()).
  LearnResult learn_ex(const Mac& src, const IpAddr& from, std::uint64_t now_ns);
  /// learn_ex() from a remote already resolved by remote_id() (kNoRemote / kRemotesFull:
  /// refused as unknown source / remote table full, unless the MAC is static or EVPN).
  LearnResult learn_ex(const Mac& src, RemoteId from, std::uint64_t now_ns);
  /// The interned id of `a` for learning: interned now when the limits let `a` teach
  /// entries (LearnFrom::Any, or `a` is known); kNoRemote when it may not; kRemotesFull.
  RemoteId remote_id(const IpAddr& a);

  struct Lookup {
    std::span<const IpAddr> remotes;  ///< where to send (empty: nowhere)
    bool flooded = false;             ///< true: the default list (group or unknown dst)
  };
  /// EVPN type-2: `mac` lives behind `r` (replaces a learned or older EVPN entry; a static
  /// entry is kept). `seq` = the route's MAC Mobility sequence number. When `mac` is one of
  /// our locals and the route's seq is at least ours, the MAC moved away: the local is
  /// dropped. Returns true when the entry was created or changed. Never refused by the
  /// learning bounds.
  bool set_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns);
  /// EVPN type-2 withdrawn: remove `mac`'s EVPN entry if it points at `r`. True when removed.
  bool remove_evpn(const Mac& mac, const IpAddr& r);
  /// The EVPN entry of `mac` as a function of the routes present (the caller — the EVPN
  /// client's route set, daemon::EvpnRib — chose the best route, RFC 7432 §15.1): `mac` →
  /// `r` with `seq`, replacing a learned or EVPN entry whatever its sequence number (a static
  /// entry is kept). A local MAC of ours wins over it when its sequence number is higher, or
  /// equal and our VTEP (set_own_vtep) is the lower address; else the local is dropped (it
  /// moved away). Returns true when the entry is now `r`.
  bool program_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns);
  /// No route for `mac` is left: remove its EVPN entry, wherever it points. True when removed.
  bool clear_evpn(const Mac& mac);
  /// Our VTEP address (RFC 7432 §15.1: of equal sequence numbers the lower VTEP wins).
  /// Unset: a remote route of equal sequence number takes a local MAC away.
  void set_own_vtep(const IpAddr& a);
  /// A static entry taken out of the configuration (a reload): remove `mac`'s entry if it is
  /// static. True when removed.
  bool remove_static(const Mac& mac);
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
  bool learn_local(const Mac& src, std::uint64_t now_ns) {
    return learn_local_ex(src, now_ns) == LocalResult::Created;
  }
  /// learn_local() with the outcome: past FdbLimits::local_max a new local MAC is refused
  /// (counted in refusals().local_max).
  LocalResult learn_local_ex(const Mac& src, std::uint64_t now_ns);
  /// The local MACs: a snapshot brought up to date by this call (O(n log n)); references
  /// into it stay valid while their MAC stays.
  const std::map<Mac, LocalMac>& locals() const;

  /// Destinations for inner destination MAC `dst`. An expired dynamic entry counts as
  /// unknown (and is removed). The span stays valid until the next non-const call.
  Lookup lookup(const Mac& dst, std::uint64_t now_ns);
  /// Remove expired dynamic entries (learned entries and local MACs); returns how many
  /// learned entries were removed.
  std::size_t age(std::uint64_t now_ns);

  std::size_t size() const noexcept { return entries_.size(); }
  /// Learned entries in this table.
  std::size_t learned_count() const noexcept { return n_learned_; }
  std::size_t local_count() const noexcept { return locals_.size(); }
  /// The entries: a snapshot brought up to date by this call (O(n log n); tests, tools —
  /// the data path never builds it); references into it stay valid while their MAC stays.
  const std::map<Mac, FdbEntry>& entries() const;
  /// f(const Mac&, const FdbEntry&) for every entry, table order.
  template <class F>
  void for_each_entry(F f) const {
    entries_.for_each([&](const detail::FdbSlot& s) { f(s.mac, view(s)); });
  }
  /// f(const detail::FdbSlot&, const IpAddr& remote) for every entry: the stored form.
  template <class F>
  void for_each_slot(F f) const {
    entries_.for_each([&](const detail::FdbSlot& s) { f(s, addr(s.remote)); });
  }
  /// f(const FdbEntry&) for the entry of `m`, when there is one.
  template <class F>
  void for_one(const Mac& m, F f) const {
    if (const auto* s = entries_.find(m)) f(view(*s));
  }
  bool has_local(const Mac& m) const noexcept { return locals_.find(m) != nullptr; }
  /// f(const Mac&, const LocalMac&) for every local MAC, table order.
  template <class F>
  void for_each_local(F f) const {
    locals_.for_each([&](const detail::LocalSlot& s) { f(s.mac, LocalMac{s.updated_ns, s.seq}); });
  }
  std::span<const IpAddr> default_remotes() const noexcept { return defaults_; }
  /// Heap bytes of this table's slot arrays (entries and locals).
  std::size_t table_bytes() const noexcept { return entries_.bytes() + locals_.bytes(); }
  /// Refusal counters (of the whole SharedFdb when shared).
  FdbRefusals refusals() const noexcept;

  static bool is_group(const Mac& m) noexcept { return m[0] & 1; }

 private:
  bool expired(const detail::FdbSlot& e, std::uint64_t now) const noexcept {
    return e.source == FdbSource::Learned && ageing_ns_ && now >= e.updated_ns + ageing_ns_;
  }
  FdbEntry view(const detail::FdbSlot& s) const noexcept;
  const IpAddr& addr(RemoteId id) const noexcept;
  RemoteId intern_known(const IpAddr& a);
  void forget_learned(const detail::FdbSlot& s) noexcept;  // counts of a learned slot going away
  void log_refusal(LearnResult r, std::uint64_t now_ns);

  std::uint64_t ageing_ns_;
  std::shared_ptr<FdbShared> sh_;
  detail::FlatMacMap<detail::FdbSlot> entries_;
  detail::FlatMacMap<detail::LocalSlot> locals_;
  std::size_t n_learned_ = 0;
  std::vector<IpAddr> defaults_;
  std::vector<unsigned> default_srcs_;  // per defaults_ member: bit (1 << FdbSource)
  bool local_learning_ = false;
  mutable std::map<Mac, FdbEntry> entries_snapshot_;
  mutable std::map<Mac, LocalMac> locals_snapshot_;
};

/// An Fdb shared by the workers of one endpoint (thread-safe). kShards shards by a keyed
/// hash of the MAC, each an Fdb behind its own mutex; the flood list is replicated in every
/// shard (it changes rarely), so a lookup — hit or flood — takes one shard's lock and no
/// other. The remotes of a lookup are copied into the caller's vector, so no reference
/// outlives the lock. Whole-table reads lock one shard at a time (≈ kShards⁻¹ of the table
/// each): learning and lookups in other shards go on meanwhile.
class FdbJsonCursor;

class SharedFdb {
 public:
  static constexpr std::size_t kShards = 64;
  explicit SharedFdb(std::uint64_t ageing_ns = 300ull * 1000000000ull);
  ~SharedFdb();

  void set_limits(const FdbLimits& l) noexcept;
  FdbLimits limits() const noexcept;
  void add_default_remote(const IpAddr& r);
  void add_static(const Mac& mac, const IpAddr& r);
  bool learn(const Mac& src, const IpAddr& from, std::uint64_t now_ns) {
    return learned(learn_ex(src, from, now_ns));
  }
  LearnResult learn_ex(const Mac& src, const IpAddr& from, std::uint64_t now_ns);
  /// Fdb::learn_ex from a cached Fdb::remote_id (see remote_id / known_generation).
  LearnResult learn_ex(const Mac& src, RemoteId from, std::uint64_t now_ns);
  /// Fdb::remote_id. A worker may cache the answer per remote: kNoRemote / kRemotesFull
  /// stay right until known_generation() changes, an id stays valid for good.
  RemoteId remote_id(const IpAddr& a);
  /// Changes when a remote becomes known or the limits change.
  std::uint32_t known_generation() const noexcept;
  /// Whether `a` is a known remote: a configured one (flood list), the remote of a static
  /// entry, or an EVPN VTEP (what `learning-from remotes` trusts). Once known, a remote stays
  /// known (its id is interned for good). Takes the interned-remote table's lock.
  bool is_known(const IpAddr& a) const;
  bool set_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns);
  bool remove_evpn(const Mac& mac, const IpAddr& r);
  bool program_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns);
  bool clear_evpn(const Mac& mac);
  void set_own_vtep(const IpAddr& a);
  /// The entry of `mac`, if any (one shard's lock).
  std::optional<FdbEntry> find(const Mac& mac) const;
  /// Whether `mac` is one of our local MACs.
  bool is_local(const Mac& mac) const;
  bool remove_static(const Mac& mac);
  void add_flood(const IpAddr& r, FdbSource src);
  void remove_flood(const IpAddr& r, FdbSource src);
  std::vector<std::pair<IpAddr, FdbSource>> flood_list() const;
  void set_local_learning(bool on);
  /// A copy of the local MACs.
  std::map<Mac, LocalMac> locals() const;
  /// Transmit: local learning of `src` (when on) and the lookup of `dst`; remotes copied
  /// into `out`. Returns `flooded`.
  bool lookup_tx(const Mac& src, const Mac& dst, std::uint64_t now_ns, std::vector<IpAddr>& out) {
    return lookup_tx(src, dst, now_ns, out, nullptr);
  }
  /// lookup_tx() that also reports what local learning did (when on; else Ignored).
  bool lookup_tx(const Mac& src, const Mac& dst, std::uint64_t now_ns, std::vector<IpAddr>& out,
                 LocalResult* local);
  /// Fdb::lookup; the remotes are copied into `out` (cleared first). Returns `flooded`.
  bool lookup(const Mac& dst, std::uint64_t now_ns, std::vector<IpAddr>& out);
  std::size_t age(std::uint64_t now_ns);
  /// Entries (learned or static) whose remote is `r`.
  std::size_t count_remote(const IpAddr& r) const;
  std::size_t size() const;
  /// Learned entries (what `maxaddress` bounds) and local MACs (`local-maxaddress`).
  std::size_t learned_count() const noexcept;
  std::size_t local_count() const noexcept;
  FdbRefusals refusals() const noexcept;
  /// Heap bytes of the slot arrays of every shard plus the interned-remote table.
  std::size_t table_bytes() const;
  /// f(const Mac&, const FdbEntry&) for every entry; one shard's lock at a time, held while
  /// f runs over that shard's entries (keep f short; copy out what is needed).
  template <class F>
  void for_each_entry(F f) const {
    for (const auto& s : shards_) {
      std::lock_guard g(s->mu);
      s->fdb.for_each_entry(f);
    }
  }
  /// The table for `ofld fdb --json` at `now_ns`: {"entries": [{"mac", "remote", "source"
  /// (static|learned|evpn), "age_ms" (since learned/refreshed/programmed; static: 0), "seq"
  /// (evpn)}], "flood": [{"remote", "source" (static|group|evpn)}], "local": [{"mac",
  /// "age_ms", "seq"}] (only with local learning), "limits": {"maxaddress",
  /// "maxaddress_per_remote", "learning_from", "local_maxaddress"}, "learned", "refused":
  /// {"maxaddress", "per_remote", "unknown_source", "remote_table", "local_maxaddress"}}.
  /// MACs as "02:00:00:00:00:01", entries sorted by MAC. Built from a compact copy taken
  /// one shard at a time (no lock held while the JSON is built).
  nlohmann::json to_json(std::uint64_t now_ns) const;
  /// The same document as to_json, written as text to `out` (appended) without building a
  /// JSON tree: FdbJsonCursor's document written whole. `filter` restricts entries, flood
  /// list and local MACs (FdbFilter); the counters and limits are always whole-table.
  void write_json(std::string& out, std::uint64_t now_ns, const FdbFilter& filter = {}) const;
  /// A copy of the entries (for stats and tests).
  std::map<Mac, FdbEntry> entries() const;

 private:
  friend class FdbJsonCursor;
  struct alignas(64) Shard {
    Shard(std::uint64_t ageing_ns, std::shared_ptr<FdbShared> sh) : fdb(ageing_ns, std::move(sh)) {}
    mutable std::mutex mu;
    Fdb fdb;
  };
  Shard& shard(const Mac& m) const noexcept;
  std::shared_ptr<FdbShared> sh_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

/// `ofld fdb`'s document (SharedFdb::to_json's layout) written in pieces, so that a server
/// answers other clients between them (the daemon's `fdb` answer; SharedFdb::write_json is
/// one piece). Construction takes, at `now_ns`, a compact copy of the entries `filter`
/// selects (24 bytes an entry, one shard lock at a time, then sorted by MAC), the flood list,
/// the local MACs, the limits and the counters; write() formats entries from any position
/// without a lock and without an allocation per entry (each remote's text is formatted once).
/// The document is the same however it is cut into pieces.
class FdbJsonCursor {
 public:
  /// write()'s answer once the document is complete.
  static constexpr std::size_t kEnd = static_cast<std::size_t>(-1);
  /// `members`: JSON members written verbatim before the document's closing brace, each with
  /// its leading comma (the daemon adds ",\"vni\":100,\"evpn\":{...}").
  FdbJsonCursor(const SharedFdb& fdb, std::uint64_t now_ns, const FdbFilter& filter = {},
                std::string members = {});
  /// Entries in the document.
  std::size_t entries() const noexcept { return rows_.size(); }
  /// Append the document's text from entry `pos` on to `out`: "{\"entries\":[" when `pos` is
  /// 0, then up to `max_entries` entries (0 counts as 1), then — when no entry is left — the
  /// rest of the document. Returns the next position; kEnd once the document is complete
  /// (writing from kEnd appends nothing). Throws std::out_of_range for `pos` past entries().
  std::size_t write(std::string& out, std::size_t pos, std::size_t max_entries) const;

 private:
  struct Row {
    std::uint64_t key;         // MAC (48 bits, big-endian order) << 8 | FdbSource: sorts by MAC
    std::uint64_t updated_ns;
    std::uint32_t seq;
    std::uint32_t remote;      // index into names_
  };
  void sort_rows();
  std::uint64_t now_ns_;
  std::vector<Row> rows_;
  std::string names_;                                       // the remotes' text, back to back
  std::vector<std::pair<std::uint32_t, std::uint32_t>> name_at_;  // offset, length in names_
  std::size_t name_max_ = 0;
  std::string rest_;                                        // "],\"flood\":..." to the end
};

}  // namespace ofld::tunnel

// VXLAN forwarding database (vxlan_snoop, vxlan_find_mac, vxlan_cleanup; the IFLA_VXLAN_LIMIT
// bound of vxlan_fdb_create), as flat tables with interned remotes and sharded locks.
#include "ofld/tunnel/fdb.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string_view>

#include <spdlog/spdlog.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ofld::tunnel {

static_assert(sizeof(detail::FdbSlot) == 24, "an FDB slot is 24 bytes");
static_assert(sizeof(detail::LocalSlot) == 24, "a local-MAC slot is 24 bytes");

std::string_view to_string(FdbSource s) noexcept {
  switch (s) {
    case FdbSource::Static: return "static";
    case FdbSource::Learned: return "learned";
    case FdbSource::Evpn: return "evpn";
    case FdbSource::Group: return "group";
    case FdbSource::Local: return "local";
  }
  return "?";
}

std::string_view to_string(LearnFrom f) noexcept {
  switch (f) {
    case LearnFrom::Auto: return "auto";
    case LearnFrom::Remotes: return "remotes";
    case LearnFrom::Any: return "any";
  }
  return "?";
}

std::string_view to_string(LearnResult r) noexcept {
  switch (r) {
    case LearnResult::Created: return "created";
    case LearnResult::Moved: return "moved";
    case LearnResult::Refreshed: return "refreshed";
    case LearnResult::Ignored: return "ignored";
    case LearnResult::RefusedFull: return "maxaddress";
    case LearnResult::RefusedPerRemote: return "per_remote";
    case LearnResult::RefusedUnknownSource: return "unknown_source";
    case LearnResult::RefusedRemoteTable: return "remote_table";
  }
  return "?";
}

namespace {

/// Keyed 64-bit hash of a MAC (splitmix64's finaliser over the MAC xor a random seed).
std::uint64_t mac_hash(const Mac& m, std::uint64_t seed) noexcept {
  std::uint64_t x = 0;
  std::memcpy(&x, m.data(), m.size());
  x ^= seed;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

std::uint64_t random_seed() {
  std::random_device rd;
  return (std::uint64_t(rd()) << 32) ^ rd();
}

constexpr std::uint64_t kLogIntervalNs = 10ull * 1000000000ull;

}  // namespace

// ---- flat map ---------------------------------------------------------------------------------

namespace detail {

template <class Slot>
std::size_t FlatMacMap<Slot>::home(const Mac& m) const noexcept {
  return std::size_t(mac_hash(m, seed_)) & (slots_.size() - 1);
}

template <class Slot>
Slot* FlatMacMap<Slot>::find(const Mac& m) noexcept {
  if (slots_.empty()) return nullptr;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = home(m);; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (!s.used) return nullptr;
    if (s.mac == m) return &s;
  }
}

template <class Slot>
void FlatMacMap<Slot>::rehash(std::size_t cap) {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(cap, Slot{});
  slots_.shrink_to_fit();
  const std::size_t mask = cap - 1;
  for (const Slot& s : old) {
    if (!s.used) continue;
    std::size_t i = home(s.mac);
    while (slots_[i].used) i = (i + 1) & mask;
    slots_[i] = s;
  }
  const std::size_t freed = old.capacity() * sizeof(Slot);
  std::vector<Slot>().swap(old);
#if defined(__GLIBC__)
  // A table that grew leaves its previous array free inside the heap (below glibc's mmap
  // threshold); give such pages back so that RSS follows the tables (measured: 66 → 48
  // bytes an entry at 65,536 entries). Rare: a shard's table changes size O(log n) times.
  if (freed >= 16384) malloc_trim(0);
#else
  (void)freed;
#endif
}

template <class Slot>
std::pair<Slot*, bool> FlatMacMap<Slot>::insert(const Mac& m) {
  if (Slot* s = find(m)) return {s, false};
  if ((size_ + 1) * 4 > slots_.size() * 3) rehash(std::max<std::size_t>(8, slots_.size() * 2));
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = home(m);
  while (slots_[i].used) i = (i + 1) & mask;
  slots_[i] = Slot{};
  slots_[i].mac = m;
  slots_[i].used = 1;
  ++size_;
  return {&slots_[i], true};
}

template <class Slot>
void FlatMacMap<Slot>::erase(Slot* s) noexcept {
  // Backward-shift deletion: pull each later member of the probe run into the hole unless
  // its home lies cyclically within (hole, member].
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = std::size_t(s - slots_.data()), j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!slots_[j].used) break;
    const std::size_t k = home(slots_[j].mac);
    const bool move = i <= j ? (k <= i || k > j) : (k <= i && k > j);
    if (move) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Slot{};
  --size_;
}

template <class Slot>
void FlatMacMap<Slot>::maybe_shrink() {
  if (slots_.size() > 8 && size_ * 8 < slots_.size())
    rehash(std::max<std::size_t>(8, std::bit_ceil(size_ * 2 + 1)));
}

template <class Slot>
template <class Pred, class OnErase>
std::size_t FlatMacMap<Slot>::erase_if(Pred pred, OnErase on_erase) {
  // A removal only pulls members into positions at or after the hole (or, across the wrap,
  // into positions already checked): re-checking the hole visits every member.
  std::size_t n = 0;
  for (std::size_t i = 0; i < slots_.size();) {
    if (slots_[i].used && pred(slots_[i])) {
      on_erase(slots_[i]);
      erase(&slots_[i]);
      ++n;
    } else {
      ++i;
    }
  }
  maybe_shrink();  // after a flood has aged out
  return n;
}

template class FlatMacMap<FdbSlot>;
template class FlatMacMap<LocalSlot>;

}  // namespace detail

// ---- shared state: interned remotes, limits, counts -------------------------------------------

namespace {

struct RemoteSlot {
  IpAddr addr;
  std::atomic<std::uint32_t> learned{0};  // learned entries at this remote
  std::atomic<bool> known{false};         // configured / static / EVPN remote
};

/// Interned underlay addresses: ids are stable, slots never move (chunks of kChunk), so a
/// reader holding an id reads its address without a lock. Learning may intern up to
/// kLearnCap; the rest is kept for configured, static and EVPN remotes.
class FdbRemotes {
 public:
  static constexpr std::size_t kChunk = 256, kChunks = 256;
  static constexpr std::size_t kCap = kChunk * kChunks;    // 65,536
  static constexpr std::size_t kLearnCap = kCap / 4 * 3;   // 49,152
  ~FdbRemotes() {
    for (auto& c : chunks_) delete[] c.load(std::memory_order_relaxed);
  }
  RemoteId find(const IpAddr& a) const {
    std::lock_guard g(mu_);
    auto it = index_.find(a);
    return it == index_.end() ? kNoRemote : it->second;
  }
  /// `a`'s id, interned now when there is room (`reserved`: may use the last quarter).
  RemoteId intern(const IpAddr& a, bool reserved) {
    std::lock_guard g(mu_);
    if (auto it = index_.find(a); it != index_.end()) return it->second;
    if (n_ >= (reserved ? kCap : kLearnCap)) return kRemotesFull;
    const RemoteId id = RemoteId(n_);
    auto& chunk = chunks_[id / kChunk];
    if (!chunk.load(std::memory_order_relaxed)) chunk.store(new RemoteSlot[kChunk], std::memory_order_release);
    chunk.load(std::memory_order_relaxed)[id % kChunk].addr = a;
    index_.emplace(a, id);
    ++n_;
    return id;
  }
  RemoteSlot& at(RemoteId id) const noexcept {
    return chunks_[id / kChunk].load(std::memory_order_acquire)[id % kChunk];
  }
  std::size_t bytes() const {
    std::lock_guard g(mu_);
    const std::size_t chunks = (n_ + kChunk - 1) / kChunk;
    return chunks * kChunk * sizeof(RemoteSlot) + index_.size() * (sizeof(IpAddr) + 48);
  }

 private:
  mutable std::mutex mu_;
  std::map<IpAddr, RemoteId> index_;
  std::array<std::atomic<RemoteSlot*>, kChunks> chunks_{};
  std::size_t n_ = 0;
};

}  // namespace

struct FdbShared {
  FdbRemotes remotes;
  std::atomic<std::uint32_t> maxaddress{FdbLimits::kDefaultMaxAddress}, per_remote{0},
      local_max{FdbLimits::kDefaultLocalMax};
  std::atomic<LearnFrom> from{LearnFrom::Any};  // until set_limits: the kernel's vxlan_snoop
  std::atomic<bool> has_group{false};
  std::atomic<std::uint64_t> learned{0}, locals{0};
  std::atomic<std::uint32_t> gen{0};
  std::atomic<std::uint64_t> r_full{0}, r_per_remote{0}, r_unknown{0}, r_table{0}, r_local{0};
  std::atomic<std::uint64_t> next_log_ns{0};
  const std::uint64_t seed = random_seed();
  mutable std::mutex own_mu;
  IpAddr own_vtep;  // under own_mu (set once, read when a route meets a local MAC)

  LearnFrom effective_from() const noexcept {
    const LearnFrom f = from.load(std::memory_order_relaxed);
    if (f != LearnFrom::Auto) return f;
    return has_group.load(std::memory_order_relaxed) ? LearnFrom::Any : LearnFrom::Remotes;
  }
  RemoteId remote_id(const IpAddr& a) {
    const RemoteId id = remotes.find(a);
    if (id != kNoRemote) return id;
    if (effective_from() != LearnFrom::Any) return kNoRemote;
    return remotes.intern(a, false);
  }
  /// Intern `a` as a known remote (configured, static, EVPN).
  RemoteId intern_known(const IpAddr& a) {
    const RemoteId id = remotes.intern(a, true);
    if (id >= kRemotesFull) return id;
    if (!remotes.at(id).known.exchange(true, std::memory_order_relaxed)) gen.fetch_add(1, std::memory_order_relaxed);
    return id;
  }
  FdbRefusals refusals() const noexcept {
    auto l = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
    return {l(r_full), l(r_per_remote), l(r_unknown), l(r_table), l(r_local)};
  }
  /// One log line per kLogIntervalNs (the first refusal logs at once).
  bool log_due(std::uint64_t now_ns) noexcept {
    std::uint64_t next = next_log_ns.load(std::memory_order_relaxed);
    return now_ns >= next &&
           next_log_ns.compare_exchange_strong(next, now_ns + kLogIntervalNs, std::memory_order_relaxed);
  }
};

// ---- Fdb ----------------------------------------------------------------------------------------

Fdb::Fdb(std::uint64_t ageing_ns) : Fdb(ageing_ns, std::make_shared<FdbShared>()) {}

Fdb::Fdb(std::uint64_t ageing_ns, std::shared_ptr<FdbShared> shared)
    : ageing_ns_(ageing_ns), sh_(std::move(shared)), entries_(sh_->seed), locals_(sh_->seed) {}

Fdb::~Fdb() = default;

void Fdb::set_limits(const FdbLimits& l) noexcept {
  sh_->maxaddress.store(l.maxaddress, std::memory_order_relaxed);
  sh_->per_remote.store(l.per_remote, std::memory_order_relaxed);
  sh_->local_max.store(l.local_max, std::memory_order_relaxed);
  sh_->from.store(l.from, std::memory_order_relaxed);
  sh_->gen.fetch_add(1, std::memory_order_relaxed);
}

FdbLimits Fdb::limits() const noexcept {
  return {sh_->maxaddress.load(std::memory_order_relaxed), sh_->per_remote.load(std::memory_order_relaxed),
          sh_->from.load(std::memory_order_relaxed), sh_->local_max.load(std::memory_order_relaxed)};
}

FdbRefusals Fdb::refusals() const noexcept { return sh_->refusals(); }

const IpAddr& Fdb::addr(RemoteId id) const noexcept { return sh_->remotes.at(id).addr; }

FdbEntry Fdb::view(const detail::FdbSlot& s) const noexcept {
  return FdbEntry{addr(s.remote), s.source == FdbSource::Static, s.updated_ns, s.source, s.seq};
}

RemoteId Fdb::intern_known(const IpAddr& a) { return sh_->intern_known(a); }

RemoteId Fdb::remote_id(const IpAddr& a) { return sh_->remote_id(a); }

void Fdb::forget_learned(const detail::FdbSlot& s) noexcept {
  if (s.source != FdbSource::Learned) return;
  sh_->learned.fetch_sub(1, std::memory_order_relaxed);
  sh_->remotes.at(s.remote).learned.fetch_sub(1, std::memory_order_relaxed);
  --n_learned_;
}

void Fdb::log_refusal(LearnResult r, std::uint64_t now_ns) {
  std::atomic<std::uint64_t>* c = nullptr;
  switch (r) {
    case LearnResult::RefusedFull: c = &sh_->r_full; break;
    case LearnResult::RefusedPerRemote: c = &sh_->r_per_remote; break;
    case LearnResult::RefusedUnknownSource: c = &sh_->r_unknown; break;
    case LearnResult::RefusedRemoteTable: c = &sh_->r_table; break;
    default: return;
  }
  const std::uint64_t n = c->fetch_add(1, std::memory_order_relaxed) + 1;
  if (!sh_->log_due(now_ns)) return;
  const FdbLimits l = limits();
  spdlog::warn("fdb: new learned entry refused ({}; {} such so far): {} learned, maxaddress {}, "
               "maxaddress-per-remote {}, learning-from {} (next such line in >= 10 s)",
               to_string(r), n, sh_->learned.load(std::memory_order_relaxed), l.maxaddress,
               l.per_remote, to_string(sh_->effective_from()));
}

void Fdb::add_default_remote(const IpAddr& r) { add_flood(r, FdbSource::Static); }

void Fdb::add_flood(const IpAddr& r, FdbSource src) {
  if (src == FdbSource::Group) {
    if (!sh_->has_group.exchange(true, std::memory_order_relaxed)) sh_->gen.fetch_add(1, std::memory_order_relaxed);
  } else {
    intern_known(r);  // a configured remote or an EVPN VTEP may teach entries
  }
  const unsigned bit = 1u << unsigned(src);
  auto it = std::find(defaults_.begin(), defaults_.end(), r);
  if (it == defaults_.end()) {
    defaults_.push_back(r);
    default_srcs_.push_back(bit);
  } else {
    default_srcs_[std::size_t(it - defaults_.begin())] |= bit;
  }
}

void Fdb::remove_flood(const IpAddr& r, FdbSource src) {
  auto it = std::find(defaults_.begin(), defaults_.end(), r);
  if (it == defaults_.end()) return;
  const auto i = std::size_t(it - defaults_.begin());
  default_srcs_[i] &= ~(1u << unsigned(src));
  if (default_srcs_[i] == 0) {
    defaults_.erase(it);
    default_srcs_.erase(default_srcs_.begin() + std::ptrdiff_t(i));
  }
  if (src == FdbSource::Group) {
    const unsigned gbit = 1u << unsigned(FdbSource::Group);
    const bool any = std::any_of(default_srcs_.begin(), default_srcs_.end(), [&](unsigned b) { return b & gbit; });
    if (sh_->has_group.exchange(any, std::memory_order_relaxed) != any) sh_->gen.fetch_add(1, std::memory_order_relaxed);
  }
}

std::vector<std::pair<IpAddr, FdbSource>> Fdb::flood_list() const {
  std::vector<std::pair<IpAddr, FdbSource>> out;
  for (std::size_t i = 0; i < defaults_.size(); ++i)
    for (auto s : {FdbSource::Static, FdbSource::Group, FdbSource::Evpn})
      if (default_srcs_[i] & (1u << unsigned(s))) {
        out.emplace_back(defaults_[i], s);
        break;  // one line per member: its strongest source
      }
  return out;
}

void Fdb::add_static(const Mac& mac, const IpAddr& r) {
  const RemoteId id = intern_known(r);
  if (id >= kRemotesFull) {
    spdlog::error("fdb: static entry for {} not added: the remote table is full", r.to_string());
    return;
  }
  auto [s, fresh] = entries_.insert(mac);
  if (!fresh) forget_learned(*s);
  s->updated_ns = 0, s->remote = id, s->seq = 0, s->source = FdbSource::Static;
}

bool Fdb::set_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns) {
  if (is_group(mac) || mac == Mac{}) return false;
  if (auto* l = locals_.find(mac)) {
    if (seq < l->seq) return false;  // ours is newer (RFC 7432 §15.1)
    locals_.erase(l);                 // it moved away from here
    sh_->locals.fetch_sub(1, std::memory_order_relaxed);
  }
  const RemoteId id = intern_known(r);
  if (id >= kRemotesFull) {
    spdlog::error("fdb: EVPN entry at {} not added: the remote table is full", r.to_string());
    return false;
  }
  auto* e = entries_.find(mac);
  if (!e) {
    auto* s = entries_.insert(mac).first;
    s->updated_ns = now_ns, s->remote = id, s->seq = seq, s->source = FdbSource::Evpn;
    return true;
  }
  if (e->source == FdbSource::Static) return false;
  // RFC 7432 §15.1: of two routes for one MAC from different VTEPs the higher sequence wins
  if (e->source == FdbSource::Evpn && e->remote != id && seq < e->seq) return false;
  const bool changed = e->source != FdbSource::Evpn || e->remote != id || e->seq != seq;
  forget_learned(*e);
  if (changed) e->updated_ns = now_ns;
  e->remote = id, e->seq = seq, e->source = FdbSource::Evpn;
  return changed;
}

bool Fdb::remove_evpn(const Mac& mac, const IpAddr& r) {
  auto* e = entries_.find(mac);
  if (!e || e->source != FdbSource::Evpn || addr(e->remote) != r) return false;
  entries_.erase(e);
  entries_.maybe_shrink();  // a mass withdrawal gives its memory back
  return true;
}

void Fdb::set_own_vtep(const IpAddr& a) {
  std::lock_guard g(sh_->own_mu);
  sh_->own_vtep = a;
}

bool Fdb::program_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns) {
  if (is_group(mac) || mac == Mac{}) return false;
  if (auto* l = locals_.find(mac)) {
    // RFC 7432 §15.1: the higher sequence number wins; of equal ones the lower VTEP address
    IpAddr own;
    {
      std::lock_guard g(sh_->own_mu);
      own = sh_->own_vtep;
    }
    if (seq < l->seq || (seq == l->seq && !own.empty() && own < r)) return false;
    locals_.erase(l);  // it moved away from here
    sh_->locals.fetch_sub(1, std::memory_order_relaxed);
  }
  const RemoteId id = intern_known(r);
  if (id >= kRemotesFull) {
    spdlog::error("fdb: EVPN entry at {} not added: the remote table is full", r.to_string());
    return false;
  }
  auto [e, fresh] = entries_.insert(mac);
  if (!fresh) {
    if (e->source == FdbSource::Static) return false;
    forget_learned(*e);
    if (e->source == FdbSource::Evpn && e->remote == id && e->seq == seq) return true;
  }
  e->updated_ns = now_ns, e->remote = id, e->seq = seq, e->source = FdbSource::Evpn;
  return true;
}

bool Fdb::clear_evpn(const Mac& mac) {
  auto* e = entries_.find(mac);
  if (!e || e->source != FdbSource::Evpn) return false;
  entries_.erase(e);
  entries_.maybe_shrink();
  return true;
}

bool Fdb::remove_static(const Mac& mac) {
  auto* e = entries_.find(mac);
  if (!e || e->source != FdbSource::Static) return false;
  entries_.erase(e);
  return true;
}

LocalResult Fdb::learn_local_ex(const Mac& src, std::uint64_t now_ns) {
  if (is_group(src) || src == Mac{}) return LocalResult::Ignored;
  if (auto* l = locals_.find(src)) {
    l->updated_ns = now_ns;
    return LocalResult::Refreshed;
  }
  const std::uint32_t max = sh_->local_max.load(std::memory_order_relaxed);
  if (sh_->locals.fetch_add(1, std::memory_order_relaxed) >= max && max) {
    sh_->locals.fetch_sub(1, std::memory_order_relaxed);
    const std::uint64_t n = sh_->r_local.fetch_add(1, std::memory_order_relaxed) + 1;
    if (sh_->log_due(now_ns))
      spdlog::warn("fdb: new local MAC refused ({} such so far): local-maxaddress {} reached "
                   "(next such line in >= 10 s)", n, max);
    return LocalResult::RefusedFull;
  }
  auto* l = locals_.insert(src).first;
  l->updated_ns = now_ns, l->seq = 0;
  if (auto* e = entries_.find(src); e && e->source != FdbSource::Static) {
    // It lived behind a remote: advertise it here with a higher sequence number (§15.1).
    if (e->source == FdbSource::Evpn) l->seq = e->seq + 1;
    forget_learned(*e);
    entries_.erase(e);
  }
  return LocalResult::Created;
}

namespace {
/// Bring `snap` up to `fresh` in place: references into `snap` to MACs still present stay
/// valid (and see the new values).
template <class V>
void refresh_snapshot(std::map<Mac, V>& snap, std::map<Mac, V>&& fresh) {
  for (auto it = snap.begin(); it != snap.end();) it = fresh.count(it->first) ? std::next(it) : snap.erase(it);
  for (auto& [m, v] : fresh) snap[m] = v;
}
}  // namespace

const std::map<Mac, LocalMac>& Fdb::locals() const {
  std::map<Mac, LocalMac> fresh;
  for_each_local([&](const Mac& m, const LocalMac& l) { fresh.emplace(m, l); });
  refresh_snapshot(locals_snapshot_, std::move(fresh));
  return locals_snapshot_;
}

const std::map<Mac, FdbEntry>& Fdb::entries() const {
  std::map<Mac, FdbEntry> fresh;
  for_each_entry([&](const Mac& m, const FdbEntry& e) { fresh.emplace(m, e); });
  refresh_snapshot(entries_snapshot_, std::move(fresh));
  return entries_snapshot_;
}

LearnResult Fdb::learn_ex(const Mac& src, const IpAddr& from, std::uint64_t now_ns) {
  if (is_group(src) || src == Mac{}) return LearnResult::Ignored;
  return learn_ex(src, remote_id(from), now_ns);
}

LearnResult Fdb::learn_ex(const Mac& src, RemoteId from, std::uint64_t now_ns) {
  if (is_group(src) || src == Mac{}) return LearnResult::Ignored;
  auto* e = entries_.find(src);
  if (e && e->source != FdbSource::Learned) return LearnResult::Ignored;  // static / EVPN
  LearnResult refused = LearnResult::Ignored;
  if (from == kNoRemote) refused = LearnResult::RefusedUnknownSource;
  else if (from == kRemotesFull) refused = LearnResult::RefusedRemoteTable;
  else if (sh_->effective_from() == LearnFrom::Remotes && !sh_->remotes.at(from).known.load(std::memory_order_relaxed))
    refused = LearnResult::RefusedUnknownSource;
  if (refused != LearnResult::Ignored) {
    log_refusal(refused, now_ns);
    return refused;
  }
  RemoteSlot& r = sh_->remotes.at(from);
  if (e) {  // vxlan_snoop on a known station: refresh, or move (never refused by the bounds)
    e->updated_ns = now_ns;
    if (e->remote == from) return LearnResult::Refreshed;
    sh_->remotes.at(e->remote).learned.fetch_sub(1, std::memory_order_relaxed);
    r.learned.fetch_add(1, std::memory_order_relaxed);
    e->remote = from;  // the station moved
    return LearnResult::Moved;
  }
  // A new station: the bounds (vxlan_fdb_create: addrcnt >= addrmax → -ENOSPC). Reserve
  // first, give back on refusal, so that workers racing in other shards never overshoot.
  const std::uint32_t max = sh_->maxaddress.load(std::memory_order_relaxed);
  if (sh_->learned.fetch_add(1, std::memory_order_relaxed) >= max && max) {
    sh_->learned.fetch_sub(1, std::memory_order_relaxed);
    log_refusal(LearnResult::RefusedFull, now_ns);
    return LearnResult::RefusedFull;
  }
  const std::uint32_t per = sh_->per_remote.load(std::memory_order_relaxed);
  if (r.learned.fetch_add(1, std::memory_order_relaxed) >= per && per) {
    r.learned.fetch_sub(1, std::memory_order_relaxed);
    sh_->learned.fetch_sub(1, std::memory_order_relaxed);
    log_refusal(LearnResult::RefusedPerRemote, now_ns);
    return LearnResult::RefusedPerRemote;
  }
  auto* s = entries_.insert(src).first;
  s->updated_ns = now_ns, s->remote = from, s->seq = 0, s->source = FdbSource::Learned;
  ++n_learned_;
  return LearnResult::Created;
}

Fdb::Lookup Fdb::lookup(const Mac& dst, std::uint64_t now_ns) {
  if (!is_group(dst)) {
    if (auto* e = entries_.find(dst)) {
      if (!expired(*e, now_ns)) return {std::span<const IpAddr>(&addr(e->remote), 1), false};
      forget_learned(*e);
      entries_.erase(e);
    }
  }
  return {defaults_, true};
}

std::size_t Fdb::age(std::uint64_t now_ns) {
  if (ageing_ns_)
    locals_.erase_if([&](const detail::LocalSlot& l) { return now_ns >= l.updated_ns + ageing_ns_; },
                     [&](const detail::LocalSlot&) { sh_->locals.fetch_sub(1, std::memory_order_relaxed); });
  return entries_.erase_if([&](const detail::FdbSlot& e) { return expired(e, now_ns); },
                           [&](const detail::FdbSlot& e) { forget_learned(e); });
}

// ---- SharedFdb ----------------------------------------------------------------------------------

static_assert(SharedFdb::kShards == 64, "shard() takes the hash's top 6 bits");

SharedFdb::SharedFdb(std::uint64_t ageing_ns) : sh_(std::make_shared<FdbShared>()) {
  shards_.reserve(kShards);
  for (std::size_t i = 0; i < kShards; ++i) shards_.push_back(std::make_unique<Shard>(ageing_ns, sh_));
}

SharedFdb::~SharedFdb() = default;

SharedFdb::Shard& SharedFdb::shard(const Mac& m) const noexcept {
  return *shards_[mac_hash(m, sh_->seed) >> 58];
}

void SharedFdb::set_limits(const FdbLimits& l) noexcept { shards_[0]->fdb.set_limits(l); }
FdbLimits SharedFdb::limits() const noexcept { return shards_[0]->fdb.limits(); }
std::uint32_t SharedFdb::known_generation() const noexcept { return sh_->gen.load(std::memory_order_relaxed); }
RemoteId SharedFdb::remote_id(const IpAddr& a) { return sh_->remote_id(a); }
bool SharedFdb::is_known(const IpAddr& a) const {
  const RemoteId id = sh_->remotes.find(a);
  return id < kRemotesFull && sh_->remotes.at(id).known.load(std::memory_order_relaxed);
}
std::size_t SharedFdb::learned_count() const noexcept { return sh_->learned.load(std::memory_order_relaxed); }
std::size_t SharedFdb::local_count() const noexcept { return sh_->locals.load(std::memory_order_relaxed); }
FdbRefusals SharedFdb::refusals() const noexcept { return sh_->refusals(); }

void SharedFdb::add_default_remote(const IpAddr& r) { add_flood(r, FdbSource::Static); }

void SharedFdb::add_flood(const IpAddr& r, FdbSource src) {
  for (auto& s : shards_) {
    std::lock_guard g(s->mu);
    s->fdb.add_flood(r, src);
  }
}

void SharedFdb::remove_flood(const IpAddr& r, FdbSource src) {
  for (auto& s : shards_) {
    std::lock_guard g(s->mu);
    s->fdb.remove_flood(r, src);
  }
}

std::vector<std::pair<IpAddr, FdbSource>> SharedFdb::flood_list() const {
  std::lock_guard g(shards_[0]->mu);
  return shards_[0]->fdb.flood_list();
}

void SharedFdb::set_local_learning(bool on) {
  for (auto& s : shards_) {
    std::lock_guard g(s->mu);
    s->fdb.set_local_learning(on);
  }
}

void SharedFdb::add_static(const Mac& mac, const IpAddr& r) {
  Shard& s = shard(mac);
  std::lock_guard g(s.mu);
  s.fdb.add_static(mac, r);
}

LearnResult SharedFdb::learn_ex(const Mac& src, const IpAddr& from, std::uint64_t now_ns) {
  if (Fdb::is_group(src) || src == Mac{}) return LearnResult::Ignored;
  return learn_ex(src, remote_id(from), now_ns);
}

LearnResult SharedFdb::learn_ex(const Mac& src, RemoteId from, std::uint64_t now_ns) {
  Shard& s = shard(src);
  std::lock_guard g(s.mu);
  return s.fdb.learn_ex(src, from, now_ns);
}

bool SharedFdb::set_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns) {
  Shard& s = shard(mac);
  std::lock_guard g(s.mu);
  return s.fdb.set_evpn(mac, r, seq, now_ns);
}

bool SharedFdb::remove_evpn(const Mac& mac, const IpAddr& r) {
  Shard& s = shard(mac);
  std::lock_guard g(s.mu);
  return s.fdb.remove_evpn(mac, r);
}

bool SharedFdb::program_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns) {
  Shard& s = shard(mac);
  std::lock_guard g(s.mu);
  return s.fdb.program_evpn(mac, r, seq, now_ns);
}

bool SharedFdb::clear_evpn(const Mac& mac) {
  Shard& s = shard(mac);
  std::lock_guard g(s.mu);
  return s.fdb.clear_evpn(mac);
}

void SharedFdb::set_own_vtep(const IpAddr& a) { shards_[0]->fdb.set_own_vtep(a); }

std::optional<FdbEntry> SharedFdb::find(const Mac& mac) const {
  Shard& s = shard(mac);
  std::lock_guard g(s.mu);
  std::optional<FdbEntry> out;
  s.fdb.for_one(mac, [&](const FdbEntry& e) { out = e; });
  return out;
}

bool SharedFdb::is_local(const Mac& mac) const {
  Shard& s = shard(mac);
  std::lock_guard g(s.mu);
  return s.fdb.has_local(mac);
}

bool SharedFdb::remove_static(const Mac& mac) {
  Shard& s = shard(mac);
  std::lock_guard g(s.mu);
  return s.fdb.remove_static(mac);
}

std::map<Mac, LocalMac> SharedFdb::locals() const {
  std::map<Mac, LocalMac> out;
  for (const auto& s : shards_) {
    std::lock_guard g(s->mu);
    s->fdb.for_each_local([&](const Mac& m, const LocalMac& l) { out.emplace(m, l); });
  }
  return out;
}

bool SharedFdb::lookup_tx(const Mac& src, const Mac& dst, std::uint64_t now_ns, std::vector<IpAddr>& out,
                          LocalResult* local) {
  Shard& d = shard(dst);
  Shard& s = shard(src);
  LocalResult lr = LocalResult::Ignored;
  if (&s != &d) {
    std::lock_guard g(s.mu);
    if (s.fdb.local_learning()) lr = s.fdb.learn_local_ex(src, now_ns);
  }
  std::lock_guard g(d.mu);
  if (&s == &d && d.fdb.local_learning()) lr = d.fdb.learn_local_ex(src, now_ns);
  auto l = d.fdb.lookup(dst, now_ns);
  out.assign(l.remotes.begin(), l.remotes.end());
  if (local) *local = lr;
  return l.flooded;
}

bool SharedFdb::lookup(const Mac& dst, std::uint64_t now_ns, std::vector<IpAddr>& out) {
  Shard& s = shard(dst);
  std::lock_guard g(s.mu);
  auto l = s.fdb.lookup(dst, now_ns);
  out.assign(l.remotes.begin(), l.remotes.end());
  return l.flooded;
}

std::size_t SharedFdb::age(std::uint64_t now_ns) {
  std::size_t n = 0;
  for (auto& s : shards_) {
    std::lock_guard g(s->mu);
    n += s->fdb.age(now_ns);
  }
  return n;
}

std::size_t SharedFdb::count_remote(const IpAddr& r) const {
  std::size_t n = 0;
  for_each_entry([&](const Mac&, const FdbEntry& e) { n += e.remote == r; });
  return n;
}

std::size_t SharedFdb::size() const {
  std::size_t n = 0;
  for (const auto& s : shards_) {
    std::lock_guard g(s->mu);
    n += s->fdb.size();
  }
  return n;
}

std::size_t SharedFdb::table_bytes() const {
  std::size_t n = sh_->remotes.bytes();
  for (const auto& s : shards_) {
    std::lock_guard g(s->mu);
    n += s->fdb.table_bytes();
  }
  return n;
}

std::map<Mac, FdbEntry> SharedFdb::entries() const {
  std::map<Mac, FdbEntry> out;
  for_each_entry([&](const Mac& m, const FdbEntry& e) { out.emplace(m, e); });
  return out;
}

// ---- the table as JSON ------------------------------------------------------------------------

namespace {
constexpr char kHex[] = "0123456789abcdef";
/// "02:00:00:00:00:01" (17 characters) from a MAC packed big-endian into the low 48 bits.
char* mac_to(char* p, std::uint64_t m48) {
  for (int i = 5; i >= 0; --i) {
    const auto b = unsigned(m48 >> (8 * i)) & 0xffu;
    *p++ = kHex[b >> 4];
    *p++ = kHex[b & 15];
    if (i) *p++ = ':';
  }
  return p;
}
std::uint64_t mac48(const Mac& m) {
  std::uint64_t v = 0;
  for (std::uint8_t b : m) v = v << 8 | b;
  return v;
}
char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}
char* num_to(char* p, std::uint64_t v) { return std::to_chars(p, p + 20, v).ptr; }
void num_to(std::string& out, std::uint64_t v) {
  char b[24];
  out.append(b, num_to(b, v));
}
void mac_to(std::string& out, const Mac& m) {
  char b[17];
  out.append(b, mac_to(b, mac48(m)));
}
std::uint64_t age_ms(std::uint64_t now_ns, std::uint64_t t) { return now_ns > t ? (now_ns - t) / 1000000ull : 0ull; }
}  // namespace

FdbJsonCursor::FdbJsonCursor(const SharedFdb& fdb, std::uint64_t now_ns, const FdbFilter& f, std::string members)
    : now_ns_(now_ns) {
  // Each remote's text once: RemoteId → index into name_at_ (formatted after the copy, from
  // addresses that never move: FdbRemotes).
  std::vector<std::uint32_t> name_of;
  std::vector<const IpAddr*> addrs;
  auto row = [&](const detail::FdbSlot& e, const IpAddr& r) {
    if (e.remote >= name_of.size()) name_of.resize(std::size_t(e.remote) + 1, UINT32_MAX);
    std::uint32_t& n = name_of[e.remote];
    if (n == UINT32_MAX) {
      n = std::uint32_t(addrs.size());
      addrs.push_back(&r);
    }
    rows_.push_back(Row{mac48(e.mac) << 8 | std::uint8_t(e.source), e.updated_ns, e.seq, n});
  };
  bool local_on = false;
  const SharedFdb::Shard* only = f.mac ? &fdb.shard(*f.mac) : nullptr;  // one shard holds it
  std::vector<std::pair<Mac, LocalMac>> locals;
  // One reservation for the whole table, before any lock (entries added meanwhile grow it
  // geometrically). Reserving each shard's share on top of the rows so far reallocated and
  // copied the growing copy once per shard (64 times, O(n·kShards)), under that shard's lock:
  // two thirds of the control thread's time per 100,000-entry dump in the ASan build.
  if (f.empty()) {
    const std::size_t n = fdb.size();
    rows_.reserve(n + n / 16);
  }
  for (const auto& s : fdb.shards_) {
    std::lock_guard g(s->mu);
    local_on = s->fdb.local_learning();
    if (only && &*s != only) continue;
    s->fdb.for_each_slot([&](const detail::FdbSlot& e, const IpAddr& r) {
      if ((!f.mac || e.mac == *f.mac) && (!f.remote || r == *f.remote)) row(e, r);
    });
    if (!f.remote)
      s->fdb.for_each_local([&](const Mac& m, const LocalMac& l) {
        if (!f.mac || m == *f.mac) locals.emplace_back(m, l);
      });
  }
  sort_rows();
  name_at_.reserve(addrs.size());
  for (const IpAddr* a : addrs) {
    const std::string t = a->to_string();  // inet_ntop text: nothing to escape
    name_at_.emplace_back(std::uint32_t(names_.size()), std::uint32_t(t.size()));
    names_ += t;
    name_max_ = std::max(name_max_, t.size());
  }

  // The rest of the document (small: flood members, local MACs, limits, counters).
  std::string& o = rest_;
  o += "],\"flood\":[";
  bool first = true;
  for (const auto& [a, src] : fdb.flood_list()) {
    if (f.mac || (f.remote && a != *f.remote)) continue;
    o += first ? "{\"remote\":\"" : ",{\"remote\":\"";
    first = false;
    o += a.to_string();
    o += "\",\"source\":\"";
    o += to_string(src);
    o += "\"}";
  }
  o += ']';
  if (local_on) {
    std::sort(locals.begin(), locals.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    o += ",\"local\":[";
    first = true;
    for (const auto& [m, l] : locals) {
      o += first ? "{\"mac\":\"" : ",{\"mac\":\"";
      first = false;
      mac_to(o, m);
      o += "\",\"age_ms\":";
      num_to(o, age_ms(now_ns, l.updated_ns));
      o += ",\"seq\":";
      num_to(o, l.seq);
      o += '}';
    }
    o += ']';
  }
  const FdbLimits l = fdb.limits();
  const FdbRefusals rf = fdb.refusals();
  o += ",\"limits\":{\"maxaddress\":";
  num_to(o, l.maxaddress);
  o += ",\"maxaddress_per_remote\":";
  num_to(o, l.per_remote);
  o += ",\"learning_from\":\"";
  o += to_string(fdb.sh_->effective_from());
  o += "\",\"local_maxaddress\":";
  num_to(o, l.local_max);
  o += "},\"learned\":";
  num_to(o, fdb.learned_count());
  o += ",\"refused\":{\"maxaddress\":";
  num_to(o, rf.maxaddress);
  o += ",\"per_remote\":";
  num_to(o, rf.per_remote);
  o += ",\"unknown_source\":";
  num_to(o, rf.unknown_source);
  o += ",\"remote_table\":";
  num_to(o, rf.remote_table);
  o += ",\"local_maxaddress\":";
  num_to(o, rf.local_max);
  o += '}';
  o += members;
  o += '}';
}

void FdbJsonCursor::sort_rows() {
  // By MAC (the key's bits 8-55; MACs are unique in the table). Small tables: std::sort.
  // Large ones: an LSD radix sort, three passes of 16 bits, O(n) and without a comparison
  // call per step (100,000 entries are copied while `ofld fdb` is answered on the control
  // thread, also in unoptimised sanitizer builds).
  if (rows_.size() < 4096) {
    std::sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) { return a.key < b.key; });
    return;
  }
  std::vector<Row> tmp(rows_.size());
  std::vector<std::uint32_t> count(65537);
  for (unsigned shift = 8; shift < 56; shift += 16) {
    std::fill(count.begin(), count.end(), 0u);
    for (const Row& r : rows_) ++count[((r.key >> shift) & 0xffff) + 1];
    for (std::size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
    for (const Row& r : rows_) tmp[count[(r.key >> shift) & 0xffff]++] = r;
    rows_.swap(tmp);
  }
}

std::size_t FdbJsonCursor::write(std::string& out, std::size_t pos, std::size_t max_entries) const {
  if (pos == kEnd) return kEnd;
  if (pos > rows_.size())
    throw std::out_of_range("FdbJsonCursor: position " + std::to_string(pos) + " past " +
                            std::to_string(rows_.size()) + " entries");
  const std::size_t end = pos + std::min(std::max<std::size_t>(max_entries, 1), rows_.size() - pos);
  // The longest entry: ,{"mac":"…","remote":"…","source":"learned","age_ms":N,"seq":N}
  static constexpr std::string_view kMac = "{\"mac\":\"", kRemote = "\",\"remote\":\"",
                                    kSource = "\",\"source\":\"", kAge = "\",\"age_ms\":", kSeq = ",\"seq\":",
                                    kHead = "{\"entries\":[";
  const std::size_t most = 1 + kMac.size() + 17 + kRemote.size() + name_max_ + kSource.size() + 7 + kAge.size() +
                           20 + kSeq.size() + 10 + 1;
  const std::size_t at = out.size();
  out.resize(at + kHead.size() + (end - pos) * most);
  char* const base = out.data();
  char* p = base + at;
  if (pos == 0) p = put(p, kHead);
  for (std::size_t i = pos; i < end; ++i) {
    const Row& r = rows_[i];
    const auto src = FdbSource(r.key & 0xff);
    if (i) *p++ = ',';
    p = put(p, kMac);
    p = mac_to(p, r.key >> 8);
    p = put(p, kRemote);
    const auto [off, len] = name_at_[r.remote];
    p = put(p, std::string_view(names_).substr(off, len));
    p = put(p, kSource);
    p = put(p, to_string(src));
    p = put(p, kAge);
    p = num_to(p, src == FdbSource::Static ? 0 : age_ms(now_ns_, r.updated_ns));
    if (src == FdbSource::Evpn) {
      p = put(p, kSeq);
      p = num_to(p, r.seq);
    }
    *p++ = '}';
  }
  out.resize(std::size_t(p - base));
  if (end < rows_.size()) return end;
  out += rest_;
  return kEnd;
}

nlohmann::json SharedFdb::to_json(std::uint64_t now_ns) const {
  std::string text;
  write_json(text, now_ns);
  return nlohmann::json::parse(text);
}

void SharedFdb::write_json(std::string& out, std::uint64_t now_ns, const FdbFilter& f) const {
  FdbJsonCursor c(*this, now_ns, f);
  c.write(out, 0, c.entries());
}

}  // namespace ofld::tunnel

// The EVPN route set and the FDB as a function of it; see evpn_rib.hpp.
#include "evpn_rib.hpp"

#include <cstdio>
#include <limits>

#include <spdlog/spdlog.h>

namespace ofld::daemon {

namespace {

using tunnel::IpAddr;
using tunnel::Mac;

constexpr std::uint64_t kNs = 1000000000ull;
constexpr std::uint64_t kForever = std::numeric_limits<std::uint64_t>::max();

std::string mac_text(const Mac& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

}  // namespace

EvpnRib::EvpnRib(std::shared_ptr<tunnel::SharedFdb> fdb, DupAddrDetection dad)
    : fdb_(std::move(fdb)), dad_(dad) {}

std::optional<std::pair<IpAddr, std::uint32_t>> EvpnRib::best(const Mac& mac) const {
  std::optional<std::pair<IpAddr, std::uint32_t>> b;
  for (auto it = macs_.lower_bound({mac, 0}); it != macs_.end() && it->first.first == mac; ++it) {
    const Mac2& r = it->second;
    // RFC 7432 §15.1: the higher sequence number; of equal ones the lower VTEP address
    if (!b || r.seq > b->second || (r.seq == b->second && r.vtep < b->first)) b.emplace(r.vtep, r.seq);
  }
  return b;
}

bool EvpnRib::duplicate(const Mac& mac) const {
  auto it = mobility_.find(mac);
  return it != mobility_.end() && it->second.duplicate;
}

bool EvpnRib::frozen(const Mac& mac, std::uint64_t now_ns) const {
  auto it = mobility_.find(mac);
  return it != mobility_.end() && it->second.frozen_until_ns > now_ns;
}

void EvpnRib::moved(const Mac& mac, std::uint64_t now_ns, const std::string& from, const std::string& to) {
  ++moves_;
  if (!dad_.enabled) return;
  Mobility& m = mobility_[mac];
  if (m.duplicate) return;  // already marked: until its freeze ends (or for good)
  if (m.moves == 0 || now_ns - m.first_ns > std::uint64_t(dad_.time_s) * kNs) {
    m.first_ns = now_ns;  // a new detection window starts with this move
    m.moves = 0;
  }
  if (++m.moves < dad_.max_moves) return;
  m.duplicate = true;
  ++dups_;
  if (dad_.freeze_permanent) m.frozen_until_ns = kForever;
  else if (dad_.freeze_s) m.frozen_until_ns = now_ns + std::uint64_t(dad_.freeze_s) * kNs;
  spdlog::warn("evpn: MAC {} is a duplicate: {} moves within {} s (last from {} to {}){}", mac_text(mac),
               m.moves, dad_.time_s, from, to,
               dad_.freeze_permanent ? "; frozen for good"
               : dad_.freeze_s       ? "; frozen for " + std::to_string(dad_.freeze_s) + " s"
                                     : std::string());
}

void EvpnRib::apply(const Mac& mac, std::uint64_t now_ns) {
  const auto b = best(mac);
  const auto cur = fdb_->find(mac);
  const bool was_local = fdb_->is_local(mac);
  if (!b) {  // no route left: the entry goes (frozen or not)
    fdb_->clear_evpn(mac);
    return;
  }
  if (frozen(mac, now_ns)) return;  // a frozen duplicate stays where it is
  const bool changed_vtep = !cur || cur->source != tunnel::FdbSource::Evpn || cur->remote != b->first;
  if (!fdb_->program_evpn(mac, b->first, b->second, now_ns)) return;
  if (was_local) moved(mac, now_ns, "local", b->first.to_string());
  else if (changed_vtep && cur && cur->source == tunnel::FdbSource::Evpn)
    moved(mac, now_ns, cur->remote.to_string(), b->first.to_string());
}

void EvpnRib::update_mac(RouteId id, const Mac& mac, const IpAddr& vtep, std::uint32_t seq, std::uint64_t now_ns) {
  auto it = macs_.lower_bound({mac, 0});
  const bool first = it == macs_.end() || it->first.first != mac;
  if (auto old = macs_.find({mac, id}); old != macs_.end() && old->second.gen != gen_ && stale_) --stale_;
  auto [r, fresh] = macs_.insert_or_assign({mac, id}, Mac2{vtep, seq, gen_});
  (void)r;
  if (first && fresh) ++n_macs_;
  apply(mac, now_ns);
}

void EvpnRib::withdraw_mac(RouteId id, const Mac& mac, std::uint64_t now_ns) {
  auto old = macs_.find({mac, id});
  if (old == macs_.end()) return;
  if (old->second.gen != gen_ && stale_) --stale_;
  macs_.erase(old);
  auto it = macs_.lower_bound({mac, 0});
  if (it == macs_.end() || it->first.first != mac) --n_macs_;
  apply(mac, now_ns);
}

void EvpnRib::vtep_ref(const IpAddr& v) {
  if (vtep_refs_[v]++ == 0) fdb_->add_flood(v, tunnel::FdbSource::Evpn);
}

void EvpnRib::vtep_unref(const IpAddr& v) {
  auto it = vtep_refs_.find(v);
  if (it == vtep_refs_.end()) return;
  if (--it->second == 0) {
    vtep_refs_.erase(it);
    fdb_->remove_flood(v, tunnel::FdbSource::Evpn);
  }
}

void EvpnRib::update_imet(RouteId id, const IpAddr& vtep) {
  auto [it, fresh] = imets_.try_emplace(id, Imet{vtep, gen_});
  if (fresh) {
    vtep_ref(vtep);
    return;
  }
  if (it->second.gen != gen_ && stale_) --stale_;
  it->second.gen = gen_;
  if (it->second.vtep == vtep) return;
  const IpAddr old = it->second.vtep;
  it->second.vtep = vtep;
  vtep_ref(vtep);  // first the new one: a VTEP named by both never leaves the list
  vtep_unref(old);
}

void EvpnRib::withdraw_imet(RouteId id) {
  auto it = imets_.find(id);
  if (it == imets_.end()) return;
  const IpAddr v = it->second.vtep;
  if (it->second.gen != gen_ && stale_) --stale_;
  imets_.erase(it);
  vtep_unref(v);
}

void EvpnRib::local_appeared(const Mac& mac, std::uint64_t now_ns) {
  auto it = macs_.lower_bound({mac, 0});
  if (it == macs_.end() || it->first.first != mac) return;
  const auto b = best(mac);
  moved(mac, now_ns, b ? b->first.to_string() : "?", "local");
}

void EvpnRib::local_gone(const Mac& mac, std::uint64_t now_ns) {
  auto it = macs_.lower_bound({mac, 0});
  if (it == macs_.end() || it->first.first != mac) return;
  if (auto b = best(mac); b && !frozen(mac, now_ns)) fdb_->program_evpn(mac, b->first, b->second, now_ns);
}

void EvpnRib::begin_resync() {
  ++gen_;
  resyncing_ = true;
  stale_ = macs_.size() + imets_.size();
}

std::size_t EvpnRib::end_resync(std::uint64_t now_ns) {
  if (!resyncing_) return 0;
  resyncing_ = false;
  stale_ = 0;
  std::size_t n = 0;
  for (auto it = macs_.begin(); it != macs_.end();) {
    if (it->second.gen == gen_) {
      ++it;
      continue;
    }
    const Mac mac = it->first.first;
    it = macs_.erase(it);
    ++n;
    if (it == macs_.end() || it->first.first != mac) {
      auto lb = macs_.lower_bound({mac, 0});
      if (lb == macs_.end() || lb->first.first != mac) --n_macs_;
      apply(mac, now_ns);
    }
  }
  for (auto it = imets_.begin(); it != imets_.end();) {
    if (it->second.gen == gen_) {
      ++it;
      continue;
    }
    const IpAddr v = it->second.vtep;
    it = imets_.erase(it);
    vtep_unref(v);
    ++n;
  }
  return n;
}

void EvpnRib::tick(std::uint64_t now_ns) {
  for (auto it = mobility_.begin(); it != mobility_.end();) {
    Mobility& m = it->second;
    if (m.duplicate && m.frozen_until_ns && m.frozen_until_ns != kForever && now_ns >= m.frozen_until_ns) {
      // FRR: when the freeze ends the MAC is cleared of its duplicate state, detection
      // starts over, and the routes present are followed again
      const Mac mac = it->first;
      spdlog::info("evpn: MAC {}: freeze ended, following its routes again", mac_text(mac));
      it = mobility_.erase(it);
      apply(mac, now_ns);
      continue;
    }
    const bool window_over = now_ns - m.first_ns > std::uint64_t(dad_.time_s) * kNs;
    if (!m.duplicate && window_over) {
      it = mobility_.erase(it);
      continue;
    }
    if (m.duplicate && !m.frozen_until_ns && window_over) {
      // without freeze the duplicate mark lasts one detection window (then counted again)
      it = mobility_.erase(it);
      continue;
    }
    ++it;
  }
}

nlohmann::json EvpnRib::duplicates_json(std::uint64_t now_ns) const {
  auto out = nlohmann::json::array();
  for (const auto& [mac, m] : mobility_) {
    if (!m.duplicate) continue;
    nlohmann::json j = {{"mac", mac_text(mac)}, {"moves", m.moves}, {"frozen", m.frozen_until_ns > now_ns}};
    if (m.frozen_until_ns == kForever) j["freeze_left_s"] = -1;
    else if (m.frozen_until_ns > now_ns) j["freeze_left_s"] = (m.frozen_until_ns - now_ns + kNs - 1) / kNs;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace ofld::daemon

// VXLAN forwarding database (vxlan_snoop, vxlan_find_mac, vxlan_cleanup).
#include "ofld/tunnel/fdb.hpp"

#include <algorithm>
#include <cstdio>

namespace ofld::tunnel {

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

void Fdb::add_default_remote(const IpAddr& r) { add_flood(r, FdbSource::Static); }

void Fdb::add_flood(const IpAddr& r, FdbSource src) {
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
  entries_[mac] = FdbEntry{r, true, 0, FdbSource::Static, 0};
}

bool Fdb::set_evpn(const Mac& mac, const IpAddr& r, std::uint32_t seq, std::uint64_t now_ns) {
  if (is_group(mac) || mac == Mac{}) return false;
  if (auto l = locals_.find(mac); l != locals_.end()) {
    if (seq < l->second.seq) return false;  // ours is newer (RFC 7432 §15.1)
    locals_.erase(l);                        // it moved away from here
  }
  auto it = entries_.find(mac);
  if (it == entries_.end()) {
    entries_.emplace(mac, FdbEntry{r, false, now_ns, FdbSource::Evpn, seq});
    return true;
  }
  FdbEntry& e = it->second;
  if (e.is_static) return false;
  // RFC 7432 §15.1: of two routes for one MAC from different VTEPs the higher sequence wins
  if (e.source == FdbSource::Evpn && e.remote != r && seq < e.seq) return false;
  const bool changed = e.source != FdbSource::Evpn || e.remote != r || e.seq != seq;
  e = FdbEntry{r, false, changed ? now_ns : e.updated_ns, FdbSource::Evpn, seq};
  return changed;
}

bool Fdb::remove_evpn(const Mac& mac, const IpAddr& r) {
  auto it = entries_.find(mac);
  if (it == entries_.end() || it->second.source != FdbSource::Evpn || it->second.remote != r) return false;
  entries_.erase(it);
  return true;
}

bool Fdb::learn_local(const Mac& src, std::uint64_t now_ns) {
  if (is_group(src) || src == Mac{}) return false;
  auto [it, fresh] = locals_.try_emplace(src, LocalMac{now_ns, 0});
  it->second.updated_ns = now_ns;
  if (!fresh) return false;
  if (auto e = entries_.find(src); e != entries_.end() && !e->second.is_static) {
    // It lived behind a remote: advertise it here with a higher sequence number (§15.1).
    if (e->second.source == FdbSource::Evpn) it->second.seq = e->second.seq + 1;
    entries_.erase(e);
  }
  return true;
}

bool Fdb::learn(const Mac& src, const IpAddr& from, std::uint64_t now_ns) {
  if (is_group(src) || src == Mac{}) return false;
  auto it = entries_.find(src);
  if (it == entries_.end()) {
    entries_.emplace(src, FdbEntry{from, false, now_ns, FdbSource::Learned, 0});
    return true;
  }
  FdbEntry& e = it->second;
  if (e.is_static || e.source == FdbSource::Evpn) return false;
  e.updated_ns = now_ns;
  if (e.remote == from) return false;
  e.remote = from;  // the station moved
  return true;
}

Fdb::Lookup Fdb::lookup(const Mac& dst, std::uint64_t now_ns) {
  if (!is_group(dst)) {
    auto it = entries_.find(dst);
    if (it != entries_.end()) {
      if (!expired(it->second, now_ns)) return {std::span<const IpAddr>(&it->second.remote, 1), false};
      entries_.erase(it);
    }
  }
  return {defaults_, true};
}

std::size_t Fdb::age(std::uint64_t now_ns) {
  if (ageing_ns_)
    std::erase_if(locals_, [&](const auto& kv) { return now_ns >= kv.second.updated_ns + ageing_ns_; });
  return std::erase_if(entries_, [&](const auto& kv) { return expired(kv.second, now_ns); });
}

namespace {
std::string mac_str(const Mac& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}
}  // namespace

nlohmann::json SharedFdb::to_json(std::uint64_t now_ns) const {
  using json = nlohmann::json;
  std::lock_guard g(mu_);
  auto age = [&](std::uint64_t t) { return now_ns > t ? (now_ns - t) / 1000000ull : 0ull; };
  json entries = json::array(), flood = json::array(), local = json::array();
  for (const auto& [mac, e] : fdb_.entries()) {
    json x = {{"mac", mac_str(mac)}, {"remote", e.remote.to_string()},
              {"source", std::string(to_string(e.source))},
              {"age_ms", e.is_static ? 0ull : age(e.updated_ns)}};
    if (e.source == FdbSource::Evpn) x["seq"] = e.seq;
    entries.push_back(std::move(x));
  }
  for (const auto& [r, src] : fdb_.flood_list())
    flood.push_back({{"remote", r.to_string()}, {"source", std::string(to_string(src))}});
  json j = {{"entries", entries}, {"flood", flood}};
  if (fdb_.local_learning()) {
    for (const auto& [mac, l] : fdb_.locals())
      local.push_back({{"mac", mac_str(mac)}, {"age_ms", age(l.updated_ns)}, {"seq", l.seq}});
    j["local"] = local;
  }
  return j;
}

}  // namespace ofld::tunnel

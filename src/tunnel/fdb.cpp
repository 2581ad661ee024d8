// VXLAN forwarding database (vxlan_snoop, vxlan_find_mac, vxlan_cleanup).
#include "ofld/tunnel/fdb.hpp"

#include <algorithm>

namespace ofld::tunnel {

void Fdb::add_default_remote(const IpAddr& r) {
  if (std::find(defaults_.begin(), defaults_.end(), r) == defaults_.end()) defaults_.push_back(r);
}

void Fdb::add_static(const Mac& mac, const IpAddr& r) {
  entries_[mac] = FdbEntry{r, true, 0};
}

bool Fdb::learn(const Mac& src, const IpAddr& from, std::uint64_t now_ns) {
  if (is_group(src) || src == Mac{}) return false;
  auto it = entries_.find(src);
  if (it == entries_.end()) {
    entries_.emplace(src, FdbEntry{from, false, now_ns});
    return true;
  }
  FdbEntry& e = it->second;
  if (e.is_static) return false;
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
  return std::erase_if(entries_, [&](const auto& kv) { return expired(kv.second, now_ns); });
}

}  // namespace ofld::tunnel

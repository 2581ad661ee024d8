// Live reload: the plan (ofld/daemon/reload.hpp). One table of the settings a reload may not
// change, each with how to print it; then the ones it may change, as lists of changes.
#include "ofld/daemon/reload.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

namespace ofld::daemon {

namespace {

std::string b(bool v) { return v ? "on" : "off"; }
std::string n(std::uint64_t v) { return std::to_string(v); }
std::string mac_text(const tunnel::Mac& m) {
  char s[24];
  std::snprintf(s, sizeof s, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return s;
}
std::string mode_text(const DaemonConfig& c) { return std::string(c.tunnel.name()); }
// The running encapsulation's settings (plan_reload compares within one encapsulation only).
const tunnel::TunnelCommon& common(const DaemonConfig& c) { return c.tunnel.common(); }
const tunnel::UdpTunnelSettings& udp(const DaemonConfig& c) { return *c.tunnel.udp(); }
std::string tos_text(std::uint8_t tos, bool inherit) {
  char h[8];
  std::snprintf(h, sizeof h, "0x%x", tos);  // hexadecimal, as the word is read (and ip -d link shows it)
  return inherit ? "inherit" : tos ? h : "0";
}
std::string ttl_text(std::uint8_t ttl, bool inherit) { return inherit ? "inherit" : n(ttl); }
std::string df_text(tunnel::OuterDf d) {
  return d == tunnel::OuterDf::Set ? "set" : d == tunnel::OuterDf::Inherit ? "inherit" : "unset";
}

/// A setting a reload may not change: its name and its value as text.
struct Fixed {
  const char* name;
  std::function<std::string(const DaemonConfig&)> text;
};

// The settings a reload may not change, per mode ("encapsulation" first: the rest only
// compare within one mode).
const std::vector<Fixed>& fixed_common() {
  static const std::vector<Fixed> k = {
      {"encapsulation", [](const DaemonConfig& c) { return mode_text(c); }},
      {"dev", [](const DaemonConfig& c) { return c.dev; }},
      {"queues", [](const DaemonConfig& c) { return queues_text(c.queues); }},
      {"address", [](const DaemonConfig& c) { return c.address; }},
      {"control", [](const DaemonConfig& c) { return c.control; }},
      {"control-group", [](const DaemonConfig& c) { return c.control_group; }},
      {"offload", [](const DaemonConfig& c) { return b(c.offload); }},
      {"gro", [](const DaemonConfig& c) { return b(c.gro); }},
      {"user", [](const DaemonConfig& c) { return c.user; }},
      {"log-format", [](const DaemonConfig& c) { return c.log_format; }},
      {"metrics", [](const DaemonConfig& c) { return c.metrics; }},
  };
  return k;
}
// Rows of the settings every encapsulation has (TunnelCommon), and of the UDP ones
// (UdpTunnelSettings).
std::vector<Fixed> common_rows(bool udp_settings) {
  std::vector<Fixed> k = {
      {"local", [](const DaemonConfig& c) { return common(c).local.to_string(); }},
      {"mtu", [](const DaemonConfig& c) { return n(std::uint64_t(common(c).mtu)); }},
  };
  if (udp_settings)
    k.insert(k.end(), {
      {"udpcsum", [](const DaemonConfig& c) { return b(udp(c).udp_csum); }},
      {"udp6zerocsumtx", [](const DaemonConfig& c) { return b(udp(c).udp6_zero_csum_tx); }},
      {"udp6zerocsumrx", [](const DaemonConfig& c) { return b(udp(c).udp6_zero_csum_rx); }},
      {"remcsumtx", [](const DaemonConfig& c) { return b(udp(c).remcsum_tx); }},
      {"remcsumrx", [](const DaemonConfig& c) { return b(udp(c).remcsum_rx); }},
      {"remcsum-nopartial", [](const DaemonConfig& c) { return b(udp(c).remcsum_nopartial); }},
    });
  return k;
}
// Rows of the multicast group (encapsulations that flood to one: Caps::group).
std::vector<Fixed> group_rows() {
  return {{"group", [](const DaemonConfig& c) { return c.group.empty() ? "" : c.group.to_string() + " dev " + c.group_dev; }}};
}
// Rows of the EVPN settings (the Ethernet encapsulations: Caps::ethernet).
std::vector<Fixed> evpn_rows() {
  return {
      {"evpn", [](const DaemonConfig& c) { return b(c.evpn); }},
      {"router-id", [](const DaemonConfig& c) { return c.evpn_router_id.to_string(); }},
      {"dup-addr-detection", [](const DaemonConfig& c) {
         return b(c.dup_addr_detection) + " " + n(c.dad_max_moves) + " " + n(c.dad_time_s) + " " +
                n(c.dad_freeze_s) + b(c.dad_freeze_permanent);
       }},
  };
}
// The fixed settings of one encapsulation: the common (and UDP) ones, its own (its
// EncapKind::fixed, read from the tunnel configuration), then the daemon's by capability.
std::vector<Fixed> fixed_of(const tunnel::EncapKind& k, bool udp_settings) {
  std::vector<Fixed> rows = common_rows(udp_settings);
  for (const auto& f : k.fixed)
    rows.push_back({f.name, [text = f.text](const DaemonConfig& c) { return text(c.tunnel); }});
  if (k.caps.group) {
    auto g = group_rows();
    rows.insert(rows.end(), g.begin(), g.end());
  }
  if (k.caps.ethernet) {
    auto e = evpn_rows();
    rows.insert(rows.end(), e.begin(), e.end());
  }
  return rows;
}
// The fixed settings of the running encapsulation (encapsulation first compared equal).
const std::vector<Fixed>& fixed_encap(const DaemonConfig& c) {
  static const std::vector<std::vector<Fixed>> by_kind = [] {
    std::vector<std::vector<Fixed>> v;
    for (const tunnel::EncapKind* k : tunnel::encap_kinds()) {
      tunnel::TunnelConfig t;
      k->reset(t);
      v.push_back(fixed_of(*k, t.udp() != nullptr));
    }
    return v;
  }();
  return by_kind[c.tunnel.encap.index()];
}

std::string shown(const std::string& v) { return v.empty() ? "(none)" : v; }

}  // namespace

ReloadPlan plan_reload(const DaemonConfig& a, const DaemonConfig& z) {
  ReloadPlan p;
  auto check = [&](const std::vector<Fixed>& list) {
    for (const auto& f : list) {
      const std::string x = f.text(a), y = f.text(z);
      if (x != y) {
        p.refused = std::string(f.name) + ": " + shown(x) + " -> " + shown(y) +
                    " cannot change while the endpoint runs (it needs a new device or socket, or "
                    "changes what the data path was built with); restart the endpoint to change it";
        return false;
      }
    }
    return true;
  };
  if (!check(fixed_common())) return p;
  if (!check(fixed_encap(a))) return p;

  // ---- what a reload applies
  // The Ethernet encapsulations (VXLAN, Geneve): their remotes, static entries, EVPN server.
  const std::vector<tunnel::IpAddr>* rem_a = tunnel::kind_of(a.tunnel).remotes_of(a.tunnel);
  const std::vector<tunnel::IpAddr>* rem_z = tunnel::kind_of(z.tunnel).remotes_of(z.tunnel);
  if (rem_a) {
    const std::set<tunnel::IpAddr> ra(rem_a->begin(), rem_a->end()), rz(rem_z->begin(), rem_z->end());
    for (const auto& r : rz)
      if (!ra.count(r)) p.remotes_added.push_back(r), p.changes.push_back("remote +" + r.to_string());
    for (const auto& r : ra)
      if (!rz.count(r)) p.remotes_removed.push_back(r), p.changes.push_back("remote -" + r.to_string());
    std::map<tunnel::Mac, tunnel::IpAddr> fa(a.static_fdb.begin(), a.static_fdb.end()),
        fz(z.static_fdb.begin(), z.static_fdb.end());
    for (const auto& [m, r] : fz)
      if (auto it = fa.find(m); it == fa.end() || !(it->second == r))
        p.fdb_added.emplace_back(m, r), p.changes.push_back("fdb " + mac_text(m) + " " + r.to_string());
    for (const auto& [m, r] : fa)
      if (!fz.count(m)) p.fdb_removed.push_back(m), p.changes.push_back("fdb -" + mac_text(m));
    if (a.evpn && a.evpn_server != z.evpn_server)
      p.evpn_server = true, p.changes.push_back("evpn-server " + a.evpn_server + " -> " + z.evpn_server);
  }
  const auto &ca = common(a), &cz = common(z);
  if (ca.ttl != cz.ttl || ca.ttl_inherit != cz.ttl_inherit)
    p.outer = true,
    p.changes.push_back("ttl " + ttl_text(ca.ttl, ca.ttl_inherit) + " -> " + ttl_text(cz.ttl, cz.ttl_inherit));
  if (ca.tos != cz.tos || ca.tos_inherit != cz.tos_inherit)
    p.outer = true,
    p.changes.push_back("tos " + tos_text(ca.tos, ca.tos_inherit) + " -> " + tos_text(cz.tos, cz.tos_inherit));
  if (ca.df != cz.df) p.outer = true, p.changes.push_back("df " + df_text(ca.df) + " -> " + df_text(cz.df));
  if (a.integrity != z.integrity)
    p.peers = true, p.changes.push_back(std::string("integrity ") + (a.integrity ? "on" : "off") + " -> " +
                                        (z.integrity ? "on" : "off"));
  if (a.peer_key != z.peer_key)
    p.peers = true, p.changes.push_back("peer-key " + shown(a.peer_key) + " -> " + shown(z.peer_key));
  if (a.log_level != z.log_level)
    p.log_level = true, p.changes.push_back("log-level " + shown(a.log_level) + " -> " + shown(z.log_level));
  if (a.cpus != z.cpus)
    p.cpus = true, p.changes.push_back("cpus " + shown(cpus_text(a.cpus)) + " -> " + shown(cpus_text(z.cpus)));
  return p;
}

}  // namespace ofld::daemon

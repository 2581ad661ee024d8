// `ofld peers [--dev NAME | --control PATH] [--json]`: the peer sessions of a running
// `ofld tunnel` (docs/peer-protocol.md): per remote its session state, capabilities, epoch, age of its
// last answer, round-trip time, and datagrams sent with elided and with full inner checksums.
// The same data is in `ofld stats` (peer_sessions, peers); this only reads and lays it out.
#include <cstdio>
#include <iostream>

#include "control_target.hpp"
#include "ofld/daemon/tunnel_daemon.hpp"

namespace {

struct PeersArgs {
  ofld::cli::ControlTarget target;
  bool json = false;
};

using json = nlohmann::json;

std::uint64_t num(const json& j, const char* k) {
  return j.is_object() && j.contains(k) && j[k].is_number() ? j[k].get<std::uint64_t>() : 0;
}

/// One document per remote: the session (peer_sessions.sessions[addr]) with the data path's
/// per-peer counters (peers[addr], summed over the workers) beside it.
json peers_doc(const json& st) {
  const json ps = st.value("peer_sessions", json::object());
  const json counters = st.value("peers", json::object());
  json out = {{"epoch", ps.value("epoch", 0u)}, {"caps", ps.value("caps", json::array())},
              {"malformed", ps.value("malformed", json::object())},
              {"unknown_source", ps.value("unknown_source", 0u)},
              {"stale_ack", ps.value("stale_ack", 0u)},
              {"unproven", ps.value("unproven", 0u)},
              {"rate_limited", ps.value("rate_limited", 0u)},
              {"authenticated", ps.value("authenticated", false)},
              {"bad_mac", ps.value("bad_mac", 0u)},
              {"unauthenticated", ps.value("unauthenticated", 0u)},
              {"legacy", ps.value("legacy", 0u)}, {"peers", json::object()}};
  const json sessions = ps.value("sessions", json::object());
  for (auto it = sessions.begin(); it != sessions.end(); ++it) {
    json p = *it;
    const json c = counters.value(it.key(), json::object());
    p["tx_datagrams"] = num(c, "tx_datagrams");
    p["rx_datagrams"] = num(c, "rx_datagrams");
    p["tx_csum_elided"] = num(c, "tx_csum_elided");
    p["tx_csum_full"] = num(c, "tx_csum_full");
    p["rx_csum_seed"] = num(c, "rx_csum_seed");
    out["peers"][it.key()] = p;
  }
  return out;
}

std::string caps_text(const json& caps) {
  std::string s;
  for (const auto& c : caps) s += (s.empty() ? "" : ",") + c.get<std::string>();
  return s.empty() ? "-" : s;
}

void print_table(const json& d) {
  char ep[16];
  std::snprintf(ep, sizeof ep, "%08llx", static_cast<unsigned long long>(d["epoch"].get<std::uint64_t>()));
  std::cout << "local epoch " << ep << ", caps " << caps_text(d["caps"]) << "; malformed "
            << d["malformed"].dump() << ", unknown source " << d["unknown_source"].dump()
            << ", stale acks " << d["stale_ack"].dump() << ", unproven " << d["unproven"].dump()
            << ", rate-limited " << d["rate_limited"].dump() << ", legacy " << d["legacy"].dump();
  if (d["authenticated"].get<bool>())
    std::cout << "; authenticated, bad MAC " << d["bad_mac"].dump() << ", no MAC "
              << d["unauthenticated"].dump();
  std::cout << "\n";
  std::printf("%-39s %-11s %-8s %-16s %6s %9s %8s %12s %12s\n", "remote", "state", "epoch",
              "caps", "mtu", "age_ms", "rtt_us", "tx_elided", "tx_full");
  for (auto it = d["peers"].begin(); it != d["peers"].end(); ++it) {
    const json& p = *it;
    char e[16] = "-";
    if (p["epoch"].get<std::uint64_t>())
      std::snprintf(e, sizeof e, "%08llx", static_cast<unsigned long long>(p["epoch"].get<std::uint64_t>()));
    std::printf("%-39s %-11s %-8s %-16s %6llu %9s %8s %12llu %12llu\n", it.key().c_str(),
                p["state"].get<std::string>().c_str(), e, caps_text(p["caps"]).c_str(),
                static_cast<unsigned long long>(num(p, "mtu")),
                p["age_ms"].is_null() ? "-" : p["age_ms"].dump().c_str(),
                p["rtt_us"].is_null() ? "-" : p["rtt_us"].dump().c_str(),
                static_cast<unsigned long long>(num(p, "tx_csum_elided")),
                static_cast<unsigned long long>(num(p, "tx_csum_full")));
  }
}

ofld::cli::Registrar reg([](CLI::App& root) {
  auto a = std::make_shared<PeersArgs>();
  auto* s = root.add_subcommand("peers", "peer sessions of a running `ofld tunnel`");
  a->target.add_options(s, "TAP/TUN name of the endpoint (default ofld0)");
  s->add_flag("--json", a->json, "JSON output");
  s->callback([a] {
    auto r = ofld::daemon::query_stats(a->target.path());
    if (!r.ok()) return ofld::cli::fail("peers", r.message());
    if (!r.value().contains("peer_sessions"))
      return ofld::cli::fail("peers", "the endpoint reports no peer sessions (an older ofld?)");
    const json d = peers_doc(r.value());
    if (a->json) std::cout << d.dump(2) << "\n";
    else print_table(d);
  });
});

}  // namespace

// `ofld fdb [--dev NAME | --control PATH] [--mac MAC] [--vtep ADDR] [--json]`: the forwarding database of a running
// VXLAN `ofld tunnel` — entries with their source (static, learned, evpn), age and remote,
// the flood list (static remotes, the multicast group, EVPN type-3 members) and, with EVPN,
// the local MACs it advertises.
#include <cstdio>
#include <iostream>

#include "control_target.hpp"
#include "ofld/daemon/tunnel_daemon.hpp"

namespace {

struct FdbArgs {
  ofld::cli::ControlTarget target;
  std::string mac, vtep;
  bool json = false;
};

std::string age_text(const nlohmann::json& e) {
  if (e.value("source", "") == "static") return "permanent";
  char b[32];
  std::snprintf(b, sizeof b, "%.1fs", double(e.value("age_ms", 0ull)) / 1000.0);
  return b;
}

ofld::cli::Registrar reg([](CLI::App& root) {
  auto a = std::make_shared<FdbArgs>();
  auto* s = root.add_subcommand("fdb", "forwarding database of a running VXLAN `ofld tunnel`");
  a->target.add_options(s, "TAP name of the endpoint (default ofld0)");
  s->add_option("--mac", a->mac, "only this MAC (its entry and local MAC)");
  s->add_option("--vtep", a->vtep, "only entries and the flood member at this remote VTEP");
  s->add_flag("--json", a->json, "JSON output (the daemon's document as it is sent)");
  s->callback([a] {
    const std::string path = a->target.path();
    std::string req = "fdb";
    if (!a->mac.empty()) req += " mac " + a->mac;
    if (!a->vtep.empty()) req += " vtep " + a->vtep;
    auto r = ofld::daemon::query_control_text(path, req);
    if (!r.ok()) return ofld::cli::fail("fdb", r.message());
    // The table itself is passed through unparsed (100,000 entries: about 10 MB of text)
    if (a->json && r.value().starts_with("{\"entries\":")) {
      std::cout << r.value();
      return;
    }
    const auto j = nlohmann::json::parse(r.value(), nullptr, false);
    if (j.is_discarded()) return ofld::cli::fail("fdb", "malformed reply from " + path);
    if (j.contains("error") || !j.contains("entries"))
      return ofld::cli::fail(
          "fdb", j.value("error", std::string("the daemon does not answer `fdb` (older version?)")));
    // like `bridge fdb show`: MAC dst REMOTE, then the source and age
    for (const auto& e : j["entries"])
      std::cout << e["mac"].get<std::string>() << " dst " << e["remote"].get<std::string>() << " "
                << e["source"].get<std::string>() << " " << age_text(e) << "\n";
    for (const auto& e : j["flood"])
      std::cout << "00:00:00:00:00:00 dst " << e["remote"].get<std::string>() << " "
                << e["source"].get<std::string>() << " flood\n";
    if (j.contains("local"))
      for (const auto& e : j["local"])
        std::cout << e["mac"].get<std::string>() << " local " << age_text(e) << " seq "
                  << e["seq"] << "\n";
    if (j.contains("evpn") && j["evpn"].contains("duplicate_macs"))  // RFC 7432 §15.1
      for (const auto& d : j["evpn"]["duplicate_macs"])
        std::cout << d.value("mac", "") << " duplicate moves " << d.value("moves", 0)
                  << (d.value("frozen", false) ? " frozen" : "") << "\n";
    if (j.contains("evpn")) std::cout << "evpn " << j["evpn"].dump() << "\n";
  });
});

}  // namespace

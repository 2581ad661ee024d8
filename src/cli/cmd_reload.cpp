// `ofld reload [--dev NAME | --control PATH]`: ask a running `ofld tunnel` to read its
// configuration file again (as SIGHUP does; ofld/daemon/reload.hpp says what may change).
#include <iostream>

#include "control_target.hpp"
#include "ofld/daemon/tunnel_daemon.hpp"

namespace {

struct ReloadArgs {
  ofld::cli::ControlTarget target;
};

ofld::cli::Registrar reg([](CLI::App& root) {
  auto a = std::make_shared<ReloadArgs>();
  auto* s = root.add_subcommand("reload",
                                "re-read the configuration file of a running `ofld tunnel` (like SIGHUP): "
                                "remotes, static FDB entries, ttl, tos, EVPN server, log level");
  a->target.add_options(s, "TAP/TUN name of the endpoint (default ofld0)");
  s->callback([a] {
    auto r = ofld::daemon::query_control(a->target.path(), "reload");
    if (!r.ok()) return ofld::cli::fail("reload", r.message());
    if (r.value().contains("error"))
      return ofld::cli::fail("reload", r.value()["error"].get<std::string>(), 1);
    const auto& ch = r.value().value("changes", nlohmann::json::array());
    if (ch.empty()) std::cout << "no change\n";
    for (const auto& c : ch) std::cout << c.get<std::string>() << "\n";
  });
});

}  // namespace

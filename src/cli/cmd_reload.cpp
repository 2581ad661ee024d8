// `ofld reload [--dev NAME | --control PATH]`: ask a running `ofld tunnel` to read its
// configuration file again (as SIGHUP does; ofld/daemon/reload.hpp says what may change).
#include <iostream>

#include "ofld/daemon/config.hpp"
#include "ofld/daemon/tunnel_daemon.hpp"
#include "registry.hpp"

namespace {

struct ReloadArgs {
  std::string dev = "ofld0", control;
};

ofld::cli::Registrar reg([](CLI::App& root) {
  auto a = std::make_shared<ReloadArgs>();
  auto* s = root.add_subcommand("reload",
                                "re-read the configuration file of a running `ofld tunnel` (like SIGHUP): "
                                "remotes, static FDB entries, ttl, tos, EVPN server, log level");
  s->add_option("--dev", a->dev, "TAP/TUN name of the endpoint (default ofld0)");
  s->add_option("--control", a->control, "control socket path");
  s->callback([a] {
    auto path = a->control.empty() ? ofld::daemon::default_control_path(a->dev) : a->control;
    auto r = ofld::daemon::query_control(path, "reload");
    if (!r.ok()) {
      std::cerr << "ofld reload: " << r.message() << "\n";
      ofld::cli::exit_code() = 2;
      return;
    }
    if (r.value().contains("error")) {
      std::cerr << "ofld reload: " << r.value()["error"].get<std::string>() << "\n";
      ofld::cli::exit_code() = 1;
      return;
    }
    const auto& ch = r.value().value("changes", nlohmann::json::array());
    if (ch.empty()) std::cout << "no change\n";
    for (const auto& c : ch) std::cout << c.get<std::string>() << "\n";
  });
});

}  // namespace

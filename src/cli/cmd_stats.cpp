// `ofld stats [--dev NAME | --control PATH] [--json]`: query a running `ofld tunnel`.
#include <iostream>

#include "control_target.hpp"
#include "ofld/daemon/tunnel_daemon.hpp"

namespace {

struct StatsArgs {
  ofld::cli::ControlTarget target;
  bool json = false;
};

void print_tree(const nlohmann::json& j, const std::string& prefix) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_object()) {
      print_tree(*it, prefix + it.key() + ".");
    } else if (it->is_array() && !it->empty() && it->front().is_object()) {
      for (std::size_t i = 0; i < it->size(); ++i)  // per_queue.0.tx.frames ...
        print_tree((*it)[i], prefix + it.key() + "." + std::to_string(i) + ".");
    } else {
      std::cout << prefix << it.key() << " " << it->dump() << "\n";
    }
  }
}

ofld::cli::Registrar reg([](CLI::App& root) {
  auto a = std::make_shared<StatsArgs>();
  auto* s = root.add_subcommand("stats", "counters of a running `ofld tunnel`");
  a->target.add_options(s, "TAP name of the endpoint (default ofld0)");
  s->add_flag("--json", a->json, "JSON output");
  s->callback([a] {
    auto r = ofld::daemon::query_stats(a->target.path());
    if (!r.ok()) return ofld::cli::fail("stats", r.message());
    if (a->json) std::cout << r.value().dump(2) << "\n";
    else print_tree(r.value(), "");
  });
});

}  // namespace

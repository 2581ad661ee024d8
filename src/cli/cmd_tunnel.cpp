// `ofld tunnel [options] MODE WORDS...` (MODE: a mode word of tunnel::encap_kinds(); options may also follow the words):
// wiring of daemon::parse_* and daemon::TunnelDaemon (every mode) — no packet logic here.
#include <iostream>
#include <optional>

#include <spdlog/spdlog.h>

#include "ofld/daemon/config.hpp"
#include "ofld/daemon/service.hpp"
#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/tunnel/encap_kind.hpp"
#include "registry.hpp"

namespace {

struct TunnelArgs {
  std::optional<std::string> dev, queues;  // given, even empty, override the configuration's
  std::string config, address, control, control_group, cpus, user, log_format, log_level, metrics;
  bool no_offload = false, no_gro = false, verbose = false;
  std::vector<std::string> words;
};

int run_tunnel(const TunnelArgs& a) {
  using namespace ofld::daemon;
  DaemonConfig cfg;
  if (!a.config.empty()) {
    auto p = parse_toml_file(a.config);
    if (auto* e = std::get_if<std::string>(&p)) {
      std::cerr << "ofld tunnel: " << *e << "\n";
      return 2;
    }
    cfg = std::get<DaemonConfig>(p);
    if (!a.words.empty()) {
      std::cerr << "ofld tunnel: give either --config or the tunnel words, not both\n";
      return 2;
    }
  } else {
    if (auto e = parse_tunnel_words(a.words, cfg)) {
      std::cerr << "ofld tunnel: " << *e << "\n";
      return 2;
    }
  }
  // The options are settings like the TOML file's top-level keys: one description, the same
  // rules and messages (daemon::apply_setting); given on the command line they win.
  std::vector<std::pair<std::string, std::vector<std::string>>> opts;
  if (a.dev) opts.push_back({"dev", {*a.dev}});
  if (!a.address.empty()) opts.push_back({"address", {a.address}});
  if (!a.control.empty()) opts.push_back({"control", {a.control}});
  if (!a.control_group.empty()) opts.push_back({"control-group", {a.control_group}});
  if (a.no_offload) opts.push_back({"no-offload", {}});
  if (a.no_gro) opts.push_back({"no-gro", {}});
  if (a.queues) opts.push_back({"queues", {*a.queues}});
  if (!a.cpus.empty()) opts.push_back({"cpus", {a.cpus}});
  if (!a.user.empty()) opts.push_back({"user", {a.user}});
  if (!a.log_format.empty()) opts.push_back({"log-format", {a.log_format}});
  if (!a.metrics.empty()) opts.push_back({"metrics", {a.metrics}});
  if (!a.log_level.empty()) opts.push_back({"log-level", {a.log_level}});
  for (const auto& [name, values] : opts)
    if (auto e = apply_setting(cfg, name, values)) {
      std::cerr << "ofld tunnel: " << *e << "\n";
      return 2;
    }
  if (auto e = validate_local(cfg)) {
    std::cerr << "ofld tunnel: " << *e << "\n";
    return 2;
  }
  if (!cfg.log_level.empty()) spdlog::set_level(spdlog::level::from_str(cfg.log_level));
  if (a.verbose) spdlog::set_level(spdlog::level::debug);
  set_log_format(parse_log_format(cfg.log_format).value_or(LogFormat::Text));
  auto d = TunnelDaemon::create(cfg);
  if (!d.ok()) {
    std::cerr << "ofld tunnel: " << d.message() << "\n";
    return d.is_skipped() ? 1 : 2;
  }
  // A reload (SIGHUP, `ofld reload`) reads the file again and applies the same options.
  if (!a.config.empty())
    d.value()->set_reload_source([path = a.config, opts]() -> Parsed<DaemonConfig> {
      auto p = parse_toml_file(path);
      if (std::holds_alternative<std::string>(p)) return p;
      DaemonConfig next = std::get<DaemonConfig>(p);
      for (const auto& [name, values] : opts)
        if (auto e = apply_setting(next, name, values)) return *e;
      if (auto e = validate_local(next)) return *e;
      return next;
    });
  return d.value()->run();
}

ofld::cli::Registrar reg([](CLI::App& root) {
  auto a = std::make_shared<TunnelArgs>();
  auto* t = root.add_subcommand(
      "tunnel", "overlay endpoint: VXLAN (TAP <-> UDP), GUE (TUN <-> UDP) or GRE/ip6gre (TUN <-> raw IP), "
                "with GSO/GRO/RCO");
  t->add_option("--dev", a->dev, "TAP/TUN interface name (default ofld0)");
  t->add_option("--config", a->config, "TOML configuration file");
  t->add_option("--address", a->address, "CIDR address to assign to the TAP");
  t->add_option("--control", a->control, "control socket path (default /run/ofld/DEV.sock)");
  t->add_option("--control-group", a->control_group,
                "group of the control socket (mode 0660): its members may read stats and the FDB");
  t->add_flag("--no-offload", a->no_offload,
              "no TAP vnet header/TSO, no UDP_SEGMENT/UDP_GRO: one datagram per packet");
  t->add_flag("--no-gro", a->no_gro, "no GRO after decapsulation");
  t->add_option("--queues", a->queues,
                "TAP/TUN queues, one worker thread each: 1..256 or auto (the default: 2 for VXLAN and "
                "Geneve where two CPUs are allowed, else 1; TOML: queues = N or \"auto\")");
  t->add_option("--cpus", a->cpus,
                "pin worker i to CPU LIST[i % n] (LIST: 0,1 or 0-3; default: no pinning; "
                "TOML: cpus = [0, 1]; a reload applies a change)");
  t->add_option("--user", a->user,
                "after set-up, run as this user (name or uid) with only the capabilities still "
                "needed (TOML: user = NAME)");
  t->add_option("--log-format", a->log_format,
                "log lines: text (key=value, default) or json (TOML: log_format = ...)");
  t->add_option("--metrics", a->metrics,
                "serve the counters as Prometheus/OpenMetrics text at http://ADDR:PORT/metrics "
                "([ADDR:]PORT, [ADDR6]:PORT; a port alone: 127.0.0.1; TOML: metrics = ...)");
  t->add_option("--log-level", a->log_level,
                "trace, debug, info (default), warning, error, critical or off (TOML: log_level = ...; "
                "changed by a reload)");
  t->add_flag("-v,--verbose", a->verbose, "debug logging");
  std::string usage;  // each encapsulation's words (tunnel::EncapKind::usage)
  for (const auto* k : ofld::tunnel::encap_kinds()) usage += (usage.empty() ? "" : "\n") + std::string(k->usage);
  t->add_option("words", a->words, usage);
  // Options may come anywhere among the words (`... remote B --dev X`): no
  // positionals_at_end(), so CLI11 keeps recognising --options after the first word.
  t->callback([a] { ofld::cli::exit_code() = run_tunnel(*a); });
});

}  // namespace

// `ofld tunnel [options] vxlan id VNI local ADDR remote ADDR ...` and `ofld stats`: wiring of
// daemon::parse_* and daemon::TunnelDaemon (no packet logic here).
#include <iostream>

#include <spdlog/spdlog.h>

#include "ofld/daemon/config.hpp"
#include "ofld/daemon/tunnel_daemon.hpp"
#include "registry.hpp"

namespace {

struct TunnelArgs {
  std::string dev, config, address, control;
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
      std::cerr << "ofld tunnel: give either --config or the vxlan words, not both\n";
      return 2;
    }
  } else {
    if (a.words.empty() || a.words[0] != "vxlan") {
      std::cerr << "ofld tunnel: expected `vxlan id VNI local ADDR remote ADDR ...`"
                   " (gue and gre are not implemented)\n";
      return 2;
    }
    std::vector<std::string> w(a.words.begin() + 1, a.words.end());
    if (auto e = parse_vxlan_words(w, cfg)) {
      std::cerr << "ofld tunnel: " << *e << "\n";
      return 2;
    }
  }
  if (!a.dev.empty()) cfg.dev = a.dev;
  if (!a.address.empty()) cfg.address = a.address;
  if (!a.control.empty()) cfg.control = a.control;
  if (a.no_offload) cfg.offload = false;
  if (a.no_gro) cfg.gro = false;
  if (a.verbose) spdlog::set_level(spdlog::level::debug);
  auto d = TunnelDaemon::create(cfg);
  if (!d.ok()) {
    std::cerr << "ofld tunnel: " << d.message() << "\n";
    return d.is_skipped() ? 1 : 2;
  }
  return d.value()->run();
}

ofld::cli::Registrar reg([](CLI::App& root) {
  auto a = std::make_shared<TunnelArgs>();
  auto* t = root.add_subcommand("tunnel", "VXLAN overlay endpoint: TAP <-> UDP with GSO/GRO/RCO");
  t->add_option("--dev", a->dev, "TAP interface name (default ofld0)");
  t->add_option("--config", a->config, "TOML configuration file");
  t->add_option("--address", a->address, "CIDR address to assign to the TAP");
  t->add_option("--control", a->control, "control socket path (default /run/ofld/DEV.sock)");
  t->add_flag("--no-offload", a->no_offload,
              "no TAP vnet header/TSO, no UDP_SEGMENT/UDP_GRO: one datagram per packet");
  t->add_flag("--no-gro", a->no_gro, "no GRO after decapsulation");
  t->add_flag("-v,--verbose", a->verbose, "debug logging");
  t->add_option("words", a->words,
                "vxlan id VNI local ADDR remote ADDR [remote ADDR..] [dstport N] [srcport MIN MAX] "
                "[udpcsum|noudpcsum] [udp6zerocsumtx] [udp6zerocsumrx] [remcsumtx] [remcsumrx] "
                "[remcsum-nopartial] [ttl N] [tos N] [mtu N] [ageing S] [nolearning] [fdb MAC ADDR]");
  t->positionals_at_end();
  t->callback([a] { ofld::cli::exit_code() = run_tunnel(*a); });
});

}  // namespace

// Self-registration of `ofld` subcommands: each src/cli/cmd_*.cpp defines one static
// Registrar, so adding a command never touches main.cpp. CLI only; no packet logic here.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace ofld::cli {

/// A setup function adds its subcommand(s) to the root app. Runs before parsing.
using Setup = std::function<void(CLI::App& root)>;

inline std::vector<Setup>& registry() {
  static std::vector<Setup> r;
  return r;
}
struct Registrar {
  explicit Registrar(Setup s) { registry().push_back(std::move(s)); }
};

/// Get or create the child subcommand `name` of `parent` (e.g. the shared "bench" group).
inline CLI::App& group(CLI::App& parent, const std::string& name, const std::string& desc) {
  for (auto* sc : parent.get_subcommands({})) {
    if (sc->get_name() == name) return *sc;
  }
  auto* sc = parent.add_subcommand(name, desc);
  sc->require_subcommand(1);
  return *sc;
}

/// Exit code set by the command's callback (CLI11 callbacks return void).
inline int& exit_code() {
  static int rc = 0;
  return rc;
}

/// Where a command that writes a capture prints its report: stderr when the capture itself
/// goes to standard output (`-o -`, libpcap's name for stdout), so that the report neither
/// corrupts the pcap stream nor is lost when libpcap closes stdout with the capture.
inline bool capture_to_stdout(const std::string& out) { return out == "-"; }
inline std::FILE* report_file(const std::string& out) {
  return capture_to_stdout(out) ? stderr : stdout;
}

}  // namespace ofld::cli

// The `--dev NAME | --control PATH` options of the commands that talk to a running
// `ofld tunnel` over its control socket (fdb, peers, reload, stats), and their one way of
// saying that it failed. CLI only; no packet logic here.
#pragma once
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <string_view>

#include "ofld/daemon/config.hpp"
#include "registry.hpp"

namespace ofld::cli {

/// Which endpoint a command asks: --control, else the default socket of --dev.
struct ControlTarget {
  std::string dev = "ofld0", control;
  /// Add --dev (described by `dev_help`) and --control to `s`.
  void add_options(CLI::App* s, const std::string& dev_help) {
    s->add_option("--dev", dev, dev_help);
    s->add_option("--control", control, "control socket path");
  }
  /// The control socket path (daemon::default_control_path(dev) unless --control is given).
  std::string path() const {
    return control.empty() ? daemon::default_control_path(dev) : control;
  }
};

/// "ofld CMD: MESSAGE" on stderr and exit code `rc` (2: the endpoint could not be asked or
/// gave no usable answer).
inline void fail(std::string_view cmd, std::string_view message, int rc = 2) {
  std::cerr << "ofld " << cmd << ": " << message << "\n";
  exit_code() = rc;
}

}  // namespace ofld::cli

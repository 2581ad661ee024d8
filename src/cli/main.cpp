// ofld command line: thin wiring of library calls (docs/ARCHITECTURE.md: the top layer; no
// packet logic here).
// Subcommands register themselves from src/cli/cmd_*.cpp (see registry.hpp).
#include "registry.hpp"

#include <cstdio>
#include <exception>
#include <string>

#include "ofld/daemon/heap.hpp"
#include "ofld/version.hpp"

int main(int argc, char** argv) {
  // Process-wide heap settings, made once here rather than by a library: buffers from the
  // heap, and the heap of the control threads given back after a burst (ofld/daemon/heap.hpp).
  ofld::daemon::tune_process_heap();
  CLI::App app{"ofld — Linux network offload machinery in user space"};
  app.set_version_flag("--version", std::string("ofld ") + ofld::version(),
                       "print the version (of the program and of libofld) and exit");
  app.require_subcommand(1);
  for (auto& setup : ofld::cli::registry()) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help/--version exit 0; every usage error exits 2, like any other bad setting.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    // Commands report bad settings/input by throwing; the message names what is wrong.
    std::fprintf(stderr, "ofld: error: %s\n", e.what());
    return 2;
  }
  return ofld::cli::exit_code();
}

// ofld command line: thin wiring of library calls (docs/ARCHITECTURE.md: the top layer; no
// packet logic here).
// Subcommands register themselves from src/cli/cmd_*.cpp (see registry.hpp).
#include "registry.hpp"

#include <malloc.h>

#include <cstdio>
#include <exception>
#include <string>

#include "ofld/version.hpp"

int main(int argc, char** argv) {
  // Process-wide heap settings, made once here rather than by a library: the packet paths
  // (ofld tunnel's workers above all) free and reallocate 64 KiB buffers all the time. Keep
  // them in the heap (no mmap/munmap per buffer) and do not give the heap top back on every
  // free (brk churn and page faults were ~5% of an endpoint's profile).
  ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 64 << 20);
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

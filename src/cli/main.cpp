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
  // Process-wide heap settings, made once here rather than by a library:
  // - Buffers below 4 MiB come from the heap, not from an mmap/munmap of their own (the packet
  //   paths free and reallocate 64 KiB buffers all the time).
  // - A thread arena's free top goes back to the kernel once it exceeds 256 KiB. malloc_trim
  //   (the EVPN client's, after a mass withdrawal) cannot do that: glibc's trim gives back
  //   free pages inside every arena but the top of the main one only. Setting the threshold
  //   also stops glibc from raising it after a large free, which would let each control
  //   thread's arena (gRPC's, the route reader's, the control socket's JSON) keep megabytes
  //   after a burst. The endpoint's data path does not grow and shrink its heap in steady
  //   state: the same brk/madvise counts at 128 KiB as at 64 MiB (docs/evpn.md "Scale").
  ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 10);
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

// ofld command line: thin wiring of library calls (DESIGN.md layer 7; no packet logic here).
#include <CLI/CLI.hpp>
int main(int argc, char** argv) {
  CLI::App app{"ofld — Linux network offload machinery in user space"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}

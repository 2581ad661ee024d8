// ABI discipline of libofld.so (docs/c-api.md "ABI"): the C API's ABI equals the checked-in
// libabigail baseline (abi/ofld-c.abi) but for additions, and the library exports its
// documented API only (-fvisibility=hidden: no fmt/spdlog/toml++/private-header symbols).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

const std::string kSrc = OFLD_SOURCE_DIR;
const std::string kLib = OFLD_SHARED_LIB;

int run(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::string s;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) s.append(buf, n);
  const int st = pclose(p);
  *out = s;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
bool have(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

#ifdef OFLD_CAPI_SANITIZED
#define SKIP_IF_SANITIZED() GTEST_SKIP() << "sanitizer build: the ABI is checked in the release build"
#else
#define SKIP_IF_SANITIZED() (void)0
#endif

TEST(CApiAbi, MatchesBaseline) {
  SKIP_IF_SANITIZED();
  if (!have("abidw") || !have("abidiff"))
    GTEST_SKIP() << "abidw/abidiff missing (Debian abigail-tools): C API ABI not checked";
  const std::string dir = std::string(OFLD_SHARED_LIB_DIR) + "/abi-headers";
  std::string log;
  ASSERT_EQ(run("mkdir -p " + dir + " && cp " + kSrc + "/include/ofld/ofld.h " + dir, &log), 0);
  const std::string now = std::string(OFLD_SHARED_LIB_DIR) + "/ofld-c.now.abi";
  ASSERT_EQ(run("abidw --suppressions " + kSrc + "/abi/c-api.suppr --headers-dir " + dir +
                    " --no-corpus-path --no-comp-dir-path --drop-private-types --out-file " + now +
                    " " + kLib,
                &log),
            0)
      << log;
  // Exit 0: no change; added functions are allowed (--no-added-syms), anything else is not.
  // (Both files hold the C API only — abidw dropped the rest — so no suppressions here: in an
  // abixml file the suppressions' symbol-name rules would match, and hide, every function.)
  const int rc = run("abidiff --no-added-syms " + kSrc + "/abi/ofld-c.abi " + now, &log);
  EXPECT_EQ(rc, 0) << "the C API's ABI changed (regenerate with scripts/abi-baseline only if "
                      "intended, and bump OFLD_API_VERSION's major for a break):\n"
                   << log;
}

TEST(CApiAbi, ExportsOnlyTheDocumentedApi) {
  SKIP_IF_SANITIZED();
  if (!have("nm")) GTEST_SKIP() << "nm missing";
  std::string syms;
  ASSERT_EQ(run("nm -D --defined-only -C " + kLib, &syms), 0) << syms;
  // The C API is there...
  for (const char* f : {"ofld_api_version", "ofld_gso_run", "ofld_gro_receive", "ofld_tunnel_decap",
                        "ofld_verify_file"})
    EXPECT_NE(syms.find(std::string(" T ") + f + "\n"), std::string::npos) << f;
  // ... the public C++ API too (what examples/offload_counters.cpp links) ...
  for (const char* f : {"ofld::gso::gso_segment(", "ofld::gro::Engine::receive(",
                        "ofld::io::PcapReader::next(", "ofld::version()"})
    EXPECT_NE(syms.find(f), std::string::npos) << f;
  // ... but not what private headers under src/ declare (src/offload/gro_protos.hpp), nor the
  // gRPC/protobuf code of the EVPN client, nor the binding layer's helpers.
  for (const char* f : {"ofld::offload::gro_hooks::eth_gro_receive(", " apipb::", "ofld::capi::"})
    EXPECT_EQ(syms.find(f), std::string::npos) << f << " is exported";
}

}  // namespace

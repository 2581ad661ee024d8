// Operator-facing behaviour of the `ofld` command found by a new user (runs the real binary,
// OFLD_CLI_PATH): options accepted after the tunnel words, `ofld demo --rco --kernel-peer`
// refused up front (spec K-1: kernel RCO receive is broken, the run could only time out).
#include <gtest/gtest.h>

#include "ofld/daemon/demo.hpp"
#include "ofld/io/netns.hpp"

namespace {

using namespace ofld;

io::CmdResult run(std::vector<std::string> args) {
  args.insert(args.begin(), OFLD_CLI_PATH);
  auto r = io::run_command(args, std::chrono::seconds(20));
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? r.value() : io::CmdResult{};
}

TEST(CliOperator, TunnelOptionsAfterTheWords) {
  // --dev after the words used to be refused by the command line parser; now the words are
  // parsed and the configuration error (GUE without a port) is what comes back.
  auto r = run({"tunnel", "gue", "local", "10.0.0.1", "remote", "10.0.0.2", "--dev", "t9",
                "--control", "/tmp/nonexistent.sock"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("port"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not expected"), std::string::npos) << r.err;
  auto v = run({"tunnel", "vxlan", "id", "1", "local", "10.0.0.1", "--dev", "v9"});
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_NE(v.err.find("remote"), std::string::npos) << v.err;  // reached the vxlan checks
}

TEST(CliOperator, K1_DemoRcoWithKernelPeerRefusedUpFront) {
  daemon::DemoOptions o;
  o.rco = true;
  o.kernel_peer = true;
  auto why = daemon::demo_refusal(o);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("K-1"), std::string::npos);
  o.kernel_peer = false;
  EXPECT_FALSE(daemon::demo_refusal(o));  // two ofld endpoints with RCO are fine
  o.kernel_both = true;
  EXPECT_TRUE(daemon::demo_refusal(o));
  auto r = run({"demo", "--rco", "--kernel-peer", "--seconds", "1"});
  EXPECT_EQ(r.exit_code, 2);  // a usage refusal, before any namespace is made (root or not)
  EXPECT_NE(r.err.find("--rco"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("K-1"), std::string::npos) << r.err;
}

}  // namespace

// `ofld tunnel --queues 2` with `cpus` (root; own namespaces and addresses only; skipped
// otherwise): each worker thread's CPU affinity, as the kernel reports it in
// /proc/PID/task/TID/status (Cpus_allowed_list), is the one CPU the setting gave it
// (worker i: cpus[i % n]; worker 0 is the main thread, worker i > 0 the thread named
// "ofld-qI"); the threads that are no worker (control socket) keep the process's CPUs. A
// reload applies a new list live and an emptied list gives the workers their CPUs back.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "ofld/daemon/config.hpp"
#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "netns_pair.hpp"
#include "proc_util.hpp"

namespace {

using namespace ofld;

const char* kUa = "10.86.0.1";
const char* kUb = "10.86.0.2";

struct Lab : ktest::Lab {
  std::string conf, ctl;
  pid_t pid = -1;
};

/// "0-1", "3" as the kernel prints a CPU list (bitmap_print_to_pagebuf: ranges, commas).
std::string kernel_list(std::vector<unsigned> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string t;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    t += (t.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return t;
}

/// Thread name ("ofld", "ofld-q1", …; the main thread's is the process's) → its
/// Cpus_allowed_list; the main thread under "main". Other threads of one name: the last read.
std::map<std::string, std::string> thread_cpus(pid_t pid) {
  std::map<std::string, std::string> out;
  for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::string comm = ktest::slurp((t.path() / "comm").string());
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    std::ifstream f(t.path() / "status");
    std::string line, list;
    while (std::getline(f, line))
      if (line.rfind("Cpus_allowed_list:", 0) == 0) list = line.substr(line.find_first_not_of(" \t", 18));
    out[t.path().filename() == std::to_string(pid) ? std::string("main") : comm] = list;
  }
  return out;
}

std::string conf_text(const std::string& cpus) {
  return std::string("queues = 2\n") + (cpus.empty() ? "" : "cpus = " + cpus + "\n") +
         "[vxlan]\nid = 42\nlocal = \"" + kUa + "\"\nremote = \"" + kUb + "\"\n";
}

std::string make_lab(Lab& l, bool& skipped, const std::string& cpus) {
  if (auto why = ktest::make_lab(
          l, {.prefix = "ofld-cpu", .addr_a = std::string(kUa) + "/24", .addr_b = std::string(kUb) + "/24"},
          skipped);
      !why.empty())
    return why;
  l.conf = l.dir + "/a.toml";
  std::ofstream(l.conf) << conf_text(cpus);
  std::string why;
  l.pid = l.start(*l.A, "a", {"--config", l.conf}, l.ctl, why);
  return why;
}

/// Wait (up to 2 s) until `want(threads)` holds; the last reading.
template <class F>
std::map<std::string, std::string> wait_threads(pid_t pid, F&& want) {
  std::map<std::string, std::string> t;
  for (int i = 0; i < 40; ++i) {
    t = thread_cpus(pid);
    if (want(t)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return t;
}

TEST(TunnelCpus, WorkerThreadsPinnedAsSetAndReloadedLive) {
  const auto allowed = daemon::allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  // Two CPUs of this process, given in reverse (worker 0 on the higher one) so that the order
  // of the list is what is checked; one CPU: both workers on it.
  const unsigned hi = allowed.back(), lo = allowed.front();
  const std::string all = kernel_list(allowed);
  Lab l;
  {
    bool skipped = false;
    const std::string why = make_lab(l, skipped, "[" + std::to_string(hi) + ", " + std::to_string(lo) + "]");
    if (skipped) GTEST_SKIP() << why;
    ASSERT_EQ(why, "");
  }
  auto pinned = [&](unsigned w0, unsigned w1) {
    return [=](const std::map<std::string, std::string>& t) {
      return t.count("main") && t.count("ofld-q1") && t.at("main") == std::to_string(w0) &&
             t.at("ofld-q1") == std::to_string(w1);
    };
  };
  auto t = wait_threads(l.pid, pinned(hi, lo));
  ASSERT_TRUE(t.count("ofld-q1")) << "no worker thread named ofld-q1";
  EXPECT_EQ(t["main"], std::to_string(hi));    // worker 0: cpus[0]
  EXPECT_EQ(t["ofld-q1"], std::to_string(lo));  // worker 1: cpus[1]
  // every other thread (control socket, logging) keeps the process's CPUs
  for (const auto& [name, list] : t) {
    if (name != "main" && name != "ofld-q1") {
      EXPECT_EQ(list, all) << name;
    }
  }
  auto j = daemon::query_stats(l.ctl);
  ASSERT_TRUE(j.ok()) << j.message();
  EXPECT_EQ(j.value().value("cpus", nlohmann::json()), nlohmann::json({hi, lo}));

  // a reload swaps them, live
  std::ofstream(l.conf) << conf_text("[" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  auto r = daemon::query_control(l.ctl, "reload");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().value("reloaded", false), true) << r.value().dump();
  t = wait_threads(l.pid, pinned(lo, hi));
  EXPECT_EQ(t["main"], std::to_string(lo));
  EXPECT_EQ(t["ofld-q1"], std::to_string(hi));

  // a reload without cpus gives both workers the process's CPUs back
  std::ofstream(l.conf) << conf_text("");
  r = daemon::query_control(l.ctl, "reload");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().value("reloaded", false), true) << r.value().dump();
  t = wait_threads(l.pid, [&](const std::map<std::string, std::string>& x) {
    return x.count("main") && x.count("ofld-q1") && x.at("main") == all && x.at("ofld-q1") == all;
  });
  EXPECT_EQ(t["main"], all);
  EXPECT_EQ(t["ofld-q1"], all);
  EXPECT_FALSE(daemon::query_stats(l.ctl).value().contains("cpus"));
}

// A CPU outside the process's allowed set is refused before anything is made, naming `cpus`.
TEST(TunnelCpus, CpuOutsideTheAllowedSetRefused) {
  const auto allowed = daemon::allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  const std::string past = std::to_string(allowed.back() + 1);
  auto r = io::run_command({OFLD_CLI_PATH, "tunnel", "--cpus", past, "--dev", "ofld-cpu-x", "vxlan", "id", "42",
                            "local", kUa, "remote", kUb});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().exit_code, 2);
  EXPECT_NE(r.value().err.find("ofld tunnel: cpus: CPU " + past + " is not one this process may run on"),
            std::string::npos)
      << r.value().err;
}

}  // namespace

// The control socket of a running `ofld tunnel` with traffic flowing through it (root; own
// namespaces "ofld-ctl*" and addresses only; skipped otherwise): two VXLAN endpoints in two
// namespaces joined by a veth, endpoint A configured with 100,000 static FDB entries (TOML
// [[fdb]]). Alternating rounds of an iperf3 TCP stream A -> B with a UDP request/response probe
// beside it, without and with control clients abusing A's socket: idle connections, clients
// that ask for the FDB and never read, a flood of connect/close, `fdb` dumps of 100,000
// entries and `stats` polls. Asserted: every stats poll is answered, the FDB dump is whole,
// forwarding is never stalled past a generous bound (the probe's largest round trip) and the
// stream keeps flowing. The throughput ratio and the probe's numbers are printed (and
// recorded as test properties), not asserted: this machine is shared.
// Then one owner per socket: a second endpoint on A's --control path is refused naming A,
// and A still answers; a socket left by a killed endpoint is taken over.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "netns_pair.hpp"
#include "proc_util.hpp"

namespace {

using namespace ofld;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using ktest::slurp;
using ktest::spawn;
using ktest::stop;

const char* kUa = "10.79.0.1";
const char* kUb = "10.79.0.2";
const char* kOb = "192.168.79.2";
constexpr int kFdbEntries = 100000;

const char* kEcho =
    "import socket\n"
    "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.bind(('0.0.0.0',5012))\n"
    "while True:\n"
    "  d,a=s.recvfrom(64);s.sendto(d,a)\n";

// One small datagram at a time, the next as soon as its echo is back: the largest round
// trip is the longest time forwarding through both endpoints stood still.
std::string probe(const std::string& dst, double secs) {
  return "import socket,time,json\n"
         "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.settimeout(1.0)\n"
         "dst=('" + dst + "',5012);end=time.time()+" + std::to_string(secs) + ";r=[];lost=0;i=0\n"
         "while time.time()<end:\n"
         "  i+=1;t=time.perf_counter();s.sendto(i.to_bytes(8,'big'),dst)\n"
         "  try:\n"
         "    while True:\n"
         "      d,_=s.recvfrom(64)\n"
         "      if int.from_bytes(d,'big')==i: break\n"
         "    r.append((time.perf_counter()-t)*1000)\n"
         "  except socket.timeout: lost+=1\n"
         "r.sort();n=len(r)\n"
         "print(json.dumps({'n':n,'lost':lost,'max_ms':r[-1] if n else -1,"
         "'p50_ms':r[n//2] if n else -1,'p99_ms':r[min(n-1,int(n*0.99))] if n else -1}))\n";
}

struct Endpoint {
  pid_t pid = -1;
  std::string ctl, log;
  ~Endpoint() { stop(pid); }
};

struct Lab {
  std::optional<io::Netns> A, B;
  Endpoint a, b;
  std::string toml;
  ~Lab() {
    if (!toml.empty()) ::unlink(toml.c_str());
  }
};

std::string make_lab(Lab& l, bool& skipped) {
  if (auto why = ktest::make_veth_pair(l.A, l.B,
                                       {.prefix = "ofld-ctl",
                                        .addr_a = std::string(kUa) + "/24",
                                        .addr_b = std::string(kUb) + "/24",
                                        .disable_ipv6 = true},
                                       skipped);
      !why.empty())
    return why;
  return "";
}

std::string ctl_path(const io::Netns& ns, const std::string& tag) {
  return "/run/ofld/ctl-" + std::to_string(::getpid()) + "-" + ns.name() + tag + ".sock";
}

/// `ofld tunnel` in `ns` with `args` after "tunnel"; waits until its control socket answers.
std::string start(Endpoint& e, const io::Netns& ns, const std::string& ctl,
                  const std::vector<std::string>& args, const std::string& tag, int wait_s = 30) {
  e.ctl = ctl;
  e.log = "/tmp/ofld-ctl-" + ns.name() + tag + ".log";
  return ktest::start_tunnel(ns, e.ctl, e.log, args, e.pid, wait_s);
}

/// A TOML file: VXLAN A -> B and `n` static FDB entries toward a third (absent) VTEP.
std::string write_toml(int n) {
  std::string p = "/tmp/ofld-ctl-" + std::to_string(::getpid()) + ".toml";
  std::ofstream f(p);
  f << "[vxlan]\nid = 42\nlocal = \"" << kUa << "\"\nremote = \"" << kUb << "\"\nudpcsum = true\n";
  char mac[32];
  for (int i = 0; i < n; ++i) {
    std::snprintf(mac, sizeof mac, "02:ab:00:%02x:%02x:%02x", (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff);
    f << "[[fdb]]\nmac = \"" << mac << "\"\nremote = \"10.79.0.3\"\n";
  }
  return p;
}

int connect_to(const std::string& path) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
  if (::connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    ::close(s);
    return -1;
  }
  return s;
}

/// The abusive clients of one loaded round, on their own threads until stop.
struct Abuse {
  std::string ctl;
  std::atomic<bool> stop{false};
  std::atomic<int> stats_ok{0}, stats_failed{0}, fdb_ok{0}, fdb_bad{0}, flood{0};
  std::atomic<long> stats_max_us{0}, fdb_max_us{0};
  std::vector<std::thread> th;

  void run() {
    // idle clients: connect, send nothing, hold (re-opened when the daemon closes them)
    th.emplace_back([this] {
      std::vector<int> held;
      while (!stop) {
        while (held.size() < 16) {
          int c = connect_to(ctl);
          if (c < 0) break;
          held.push_back(c);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        for (auto& c : held) {  // closed by the daemon (idle timeout): reopen
          char b;
          if (::recv(c, &b, 1, MSG_DONTWAIT) == 0) {
            ::close(c);
            c = -1;
          }
        }
        held.erase(std::remove(held.begin(), held.end(), -1), held.end());
      }
      for (int c : held) ::close(c);
    });
    // clients that ask for the 100,000-entry FDB and never read the answer
    th.emplace_back([this] {
      std::vector<int> held;
      for (int i = 0; i < 4; ++i)
        if (int c = connect_to(ctl); c >= 0) {
          if (::send(c, "fdb\n", 4, MSG_NOSIGNAL) != 4) {
            // the daemon closed it already: counted as not held
          }
          held.push_back(c);
        }
      while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      for (int c : held) ::close(c);
    });
    // the operator: connect, send nothing, close after 120 ms, again and again, and
    // a flood of immediate connect/close
    th.emplace_back([this] {
      while (!stop) {
        int c = connect_to(ctl);
        std::this_thread::sleep_for(std::chrono::milliseconds(120));
        if (c >= 0) ::close(c);
        for (int i = 0; i < 50 && !stop; ++i)
          if (int d = connect_to(ctl); d >= 0) ::close(d), ++flood;
      }
    });
    // `ofld fdb --json` of 100,000 entries, read whole
    th.emplace_back([this] {
      while (!stop) {
        const auto t0 = Clock::now();
        auto r = daemon::query_control(ctl, "fdb");
        const long us = long(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
        if (r.ok() && r.value().contains("entries") && r.value()["entries"].size() >= std::size_t(kFdbEntries)) {
          ++fdb_ok;
          fdb_max_us = std::max(fdb_max_us.load(), us);
        } else {
          if (!fdb_bad++) std::printf("[ctl] fdb failed: %s\n", r.ok() ? r.value().dump().substr(0, 300).c_str() : r.message().c_str());
        }
      }
    });
    // a monitor polling stats
    th.emplace_back([this] {
      while (!stop) {
        const auto t0 = Clock::now();
        auto r = daemon::query_stats(ctl);
        const long us = long(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
        if (r.ok() && r.value().contains("tx")) ++stats_ok, stats_max_us = std::max(stats_max_us.load(), us);
        else if (!stats_failed++) std::printf("[ctl] stats failed: %s\n", r.ok() ? r.value().dump().substr(0, 300).c_str() : r.message().c_str());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  void end() {
    stop = true;
    for (auto& t : th) t.join();
  }
};

struct Round {
  double gbps = 0;
  json probe;
};

/// One round: iperf3 A -> B for `secs` with the probe beside it.
Round round_trip(Lab& l, double secs) {
  Round r;
  const std::string plog = "/tmp/ofld-ctl-probe-" + std::to_string(::getpid()) + ".log";
  pid_t pp = spawn({"ip", "netns", "exec", l.A->name(), "python3", "-c", probe(kOb, secs)}, plog);
  auto c = l.A->exec({"iperf3", "-c", kOb, "-t", std::to_string(int(secs)), "-J"},
                     std::chrono::seconds(int(secs) + 30));
  int st = 0;
  ::waitpid(pp, &st, 0);
  if (c.ok()) {
    auto j = json::parse(c.value().out, nullptr, false);
    if (!j.is_discarded() && j.contains("end"))
      r.gbps = j["end"]["sum_received"].value("bits_per_second", 0.0) / 1e9;
  }
  r.probe = json::parse(slurp(plog), nullptr, false);
  if (r.probe.is_discarded()) r.probe = json::object();
  ::unlink(plog.c_str());
  return r;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

TEST(TunnelControlSocket, ForwardingAndAnswersWithIdleStalledFloodingAndFdbDumpClients) {
  auto which = io::run_command({"sh", "-c", "command -v iperf3"});
  if (!which.ok() || which.value().exit_code != 0) GTEST_SKIP() << "iperf3 is not installed";
  Lab l;
  {
    bool skipped = false;
    std::string why = make_lab(l, skipped);
    if (skipped) GTEST_SKIP() << why;
    ASSERT_EQ(why, "");
  }
  l.toml = write_toml(kFdbEntries);
  ASSERT_EQ(start(l.a, *l.A, ctl_path(*l.A, ""),
                  {"--config", l.toml, "--dev", "ofld0", "--address", "192.168.79.1/24"}, "", 120),
            "");
  ASSERT_EQ(start(l.b, *l.B, ctl_path(*l.B, ""),
                  {"--dev", "ofld0", "--address", "192.168.79.2/24", "vxlan", "id", "42", "local",
                   kUb, "remote", kUa, "udpcsum"},
                  ""),
            "");
  auto st0 = daemon::query_stats(l.a.ctl);
  ASSERT_TRUE(st0.ok());
  EXPECT_EQ(st0.value()["fdb"]["entries"], kFdbEntries);
  {  // the streamed FDB document: every configured entry, as configured
    auto f = daemon::query_control(l.a.ctl, "fdb");
    ASSERT_TRUE(f.ok()) << f.message();
    const json& j = f.value();
    ASSERT_GE(j["entries"].size(), std::size_t(kFdbEntries));  // (+ any learned MAC)
    int configured = 0;
    bool first = false, last = false;
    for (const auto& e : j["entries"]) {
      if (e.value("source", "") == "static" && e.value("remote", "") == "10.79.0.3") ++configured;
      first |= e == json{{"mac", "02:ab:00:00:00:00"}, {"remote", "10.79.0.3"}, {"source", "static"}, {"age_ms", 0}};
      last |= e.value("mac", "") == "02:ab:00:01:86:9f";  // entry 99,999 = 0x01869f
    }
    EXPECT_EQ(configured, kFdbEntries);
    EXPECT_TRUE(first);
    EXPECT_TRUE(last);
    EXPECT_EQ(j["vni"], 42);
    EXPECT_TRUE(j["flood"].is_array());
  }
  const std::string elog = "/tmp/ofld-ctl-echo-" + std::to_string(::getpid()) + ".log";
  const std::string ilog = "/tmp/ofld-ctl-iperf-" + std::to_string(::getpid()) + ".log";
  pid_t echo = spawn({"ip", "netns", "exec", l.B->name(), "python3", "-c", kEcho}, elog);
  pid_t iperf = spawn({"ip", "netns", "exec", l.B->name(), "iperf3", "-s"}, ilog);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  l.A->exec({"ping", "-c", "3", "-i", "0.2", "-W", "1", kOb}, std::chrono::seconds(10));

  // alternating rounds: baseline, loaded, baseline, loaded, ...
  constexpr int kRounds = 3;
  constexpr double kSecs = 4;
  std::vector<double> base_gbps, load_gbps, base_max, load_max, base_p99, load_p99;
  Abuse total;
  int stats_ok = 0, stats_failed = 0, fdb_ok = 0, fdb_bad = 0, flood = 0;
  long stats_max_us = 0, fdb_max_us = 0;
  for (int i = 0; i < 2 * kRounds; ++i) {
    const bool loaded = i % 2 == 1;
    Abuse ab;
    ab.ctl = l.a.ctl;
    if (loaded) {
      ab.run();
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    Round r = round_trip(l, kSecs);
    if (loaded) {
      ab.end();
      stats_ok += ab.stats_ok, stats_failed += ab.stats_failed, fdb_ok += ab.fdb_ok;
      fdb_bad += ab.fdb_bad, flood += ab.flood;
      stats_max_us = std::max(stats_max_us, ab.stats_max_us.load());
      fdb_max_us = std::max(fdb_max_us, ab.fdb_max_us.load());
    }
    (loaded ? load_gbps : base_gbps).push_back(r.gbps);
    (loaded ? load_max : base_max).push_back(r.probe.value("max_ms", -1.0));
    (loaded ? load_p99 : base_p99).push_back(r.probe.value("p99_ms", -1.0));
    std::printf("[ctl] round %d %s: %.2f Gbit/s, probe %s\n", i, loaded ? "loaded" : "baseline",
                r.gbps, r.probe.dump().c_str());
    EXPECT_GT(r.gbps, 0) << "no stream in round " << i;
    EXPECT_GT(r.probe.value("n", 0), 0) << "no probe answered in round " << i;
  }
  stop(iperf);
  stop(echo);
  ::unlink(elog.c_str());
  ::unlink(ilog.c_str());
  const double ratio = median(base_gbps) > 0 ? median(load_gbps) / median(base_gbps) : 0;
  std::printf("[ctl] throughput loaded/baseline (medians of %d rounds each): %.3f (%.2f / %.2f Gbit/s)\n"
              "[ctl] probe max RTT ms: baseline median %.2f (worst %.2f), loaded median %.2f (worst %.2f); "
              "p99 baseline %.2f loaded %.2f\n"
              "[ctl] control: stats answered %d (failed %d, slowest %.1f ms), fdb dumps of %d entries "
              "%d (bad %d, slowest %.1f ms), flood connections %d\n",
              kRounds, ratio, median(load_gbps), median(base_gbps), median(base_max),
              *std::max_element(base_max.begin(), base_max.end()), median(load_max),
              *std::max_element(load_max.begin(), load_max.end()), median(base_p99), median(load_p99),
              stats_ok, stats_failed, stats_max_us / 1000.0, kFdbEntries, fdb_ok, fdb_bad,
              fdb_max_us / 1000.0, flood);
  RecordProperty("throughput_ratio", std::to_string(ratio));
  RecordProperty("probe_max_ms_loaded", std::to_string(*std::max_element(load_max.begin(), load_max.end())));
  EXPECT_EQ(stats_failed, 0);
  EXPECT_GT(stats_ok, 10);
  EXPECT_GT(fdb_ok, 0);
  EXPECT_EQ(fdb_bad, 0);
  // Generous: a loaded 2-core machine shows tens of ms of scheduling noise; the old control
  // path stalled forwarding for as long as a client did not read (seconds, unbounded).
  // Under ASan/UBSan the endpoints run several times slower: the numbers are still printed,
  // the stall bound is not asserted.
  if (!ktest::kSanitized) {
    EXPECT_LT(*std::max_element(load_max.begin(), load_max.end()), 500.0);
  }
  auto st = daemon::query_stats(l.a.ctl);
  ASSERT_TRUE(st.ok());
  std::printf("[ctl] A control counters: %s\n", st.value()["control"].dump().c_str());
  EXPECT_GT(st.value()["control"].value("closed_idle", 0) + st.value()["control"].value("evicted", 0), 0);
  // A clean exit after all that (under ASan/UBSan: no report, which would change the status)
  const std::string ctl = l.a.ctl, log = l.a.log;
  EXPECT_EQ(stop(l.a.pid), 0) << slurp(log);
  const std::string text = slurp(log);
  EXPECT_EQ(text.find("Sanitizer"), std::string::npos) << text;
  EXPECT_EQ(text.find("runtime error"), std::string::npos) << text;
  EXPECT_NE(::access(ctl.c_str(), F_OK), 0);  // its socket is gone with it
  ::unlink(log.c_str());
  ::unlink(l.b.log.c_str());
}

TEST(TunnelControlSocket, SecondEndpointOnTheSamePathIsRefusedAndStaleSocketTakenOver) {
  Lab l;
  {
    bool skipped = false;
    std::string why = make_lab(l, skipped);
    if (skipped) GTEST_SKIP() << why;
    ASSERT_EQ(why, "");
  }
  const std::string ctl = ctl_path(*l.A, "");
  const std::vector<std::string> words = {"vxlan", "id", "42", "local", kUa, "remote", kUb};
  std::vector<std::string> a1 = {"--dev", "ofld0"}, a2 = {"--dev", "ofld1"};
  a1.insert(a1.end(), words.begin(), words.end());
  a2.insert(a2.end(), words.begin(), words.end());
  a2[6] = "10.79.0.9";  // another local address: only the control path is shared
  ASSERT_EQ(l.A->ip({"addr", "add", "10.79.0.9/24", "dev", "veth0"}).ok(), true);
  ASSERT_EQ(start(l.a, *l.A, ctl, a1, ""), "");
  {  // a second endpoint on the same path: refused, exit status 2, the message names A
    Endpoint second;
    second.log = "/tmp/ofld-ctl-" + l.A->name() + "-2.log";
    std::vector<std::string> cmd = {"ip", "netns", "exec", l.A->name(), OFLD_CLI_PATH, "tunnel", "--control", ctl};
    cmd.insert(cmd.end(), a2.begin(), a2.end());
    second.pid = spawn(cmd, second.log);
    int st = -1;
    for (int i = 0; i < 600 && st < 0; ++i) {
      int w = 0;
      if (::waitpid(second.pid, &w, WNOHANG) == second.pid) st = WIFEXITED(w) ? WEXITSTATUS(w) : 128;
      else std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (st >= 0) second.pid = -1;
    const std::string log = slurp(second.log);
    EXPECT_EQ(st, 2) << log;
    EXPECT_NE(log.find("control socket " + ctl + ": in use by a running endpoint (ofld tunnel dev ofld0, pid " +
                       std::to_string(l.a.pid)), std::string::npos) << log;
    ::unlink(second.log.c_str());
  }
  // the first still owns and answers its socket
  auto st = daemon::query_stats(l.a.ctl);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(st.value()["dev"], "ofld0");
  // killed without its exit path: the socket file stays, stale; the next one takes it over
  stop(l.a.pid, SIGKILL);
  ASSERT_EQ(::access(ctl.c_str(), F_OK), 0);
  EXPECT_FALSE(daemon::query_stats(ctl).ok());
  Endpoint third;
  ASSERT_EQ(start(third, *l.A, ctl, a2, "-3"), "");
  auto st3 = daemon::query_stats(ctl);
  ASSERT_TRUE(st3.ok());
  EXPECT_EQ(st3.value()["dev"], "ofld1");
  EXPECT_NE(slurp(third.log).find("stale"), std::string::npos);
  stop(third.pid);
  EXPECT_NE(::access(ctl.c_str(), F_OK), 0);  // its own socket: removed at exit
  ::unlink(third.log.c_str());
  ::unlink(l.a.log.c_str());
}

}  // namespace

// The metrics endpoint of `ofld tunnel` (`--metrics`; docs/service.md "Metrics") on real
// endpoints (root; own namespaces named svm*, their own addresses; skipped otherwise): a scrape
// agrees with `ofld stats --json` and passes `promtool check metrics`; a real Prometheus,
// started in the namespace, scrapes it (up == 1, a counter's value through its HTTP API); idle
// and slow clients neither stall a scrape nor grow the endpoint's sockets without bound.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "ofld/tunnel/types.hpp"
#include "netns_pair.hpp"
#include "proc_util.hpp"

namespace {

using namespace ofld;
using json = nlohmann::json;
using ktest::slurp;
using ktest::spawn;
using ktest::stop;

const char* kUa = "10.83.0.1";
const char* kUb = "10.83.0.2";
const char* kOa = "192.168.83.1";
const char* kOb = "192.168.83.2";

bool have(const std::string& prog) {
  auto r = io::run_command({"sh", "-c", "command -v " + prog});
  return r.ok() && r.value().exit_code == 0;
}

struct Lab : ktest::Lab {
  std::string ctl_a, ctl_b;
  pid_t ofld_a = -1;
};

/// Two namespaces joined by a veth, a VXLAN endpoint in each; A's has `--metrics 9100`
/// (loopback of A's namespace). "" or a reason (skipped: a skip).
std::string make_lab(Lab& l, bool& skipped) {
  if (auto why = ktest::make_lab(
          l, {.prefix = "svm", .addr_a = std::string(kUa) + "/24", .addr_b = std::string(kUb) + "/24", .disable_ipv6 = true},
          skipped);
      !why.empty())
    return why;
  std::string why;
  l.ofld_a = l.start(*l.A, "a",
                     {"--metrics", "9100", "--address", std::string(kOa) + "/24", "vxlan", "id", "42", "local",
                      kUa, "remote", kUb},
                     l.ctl_a, why);
  if (l.ofld_a < 0) return why;
  l.start(*l.B, "b", {"--address", std::string(kOb) + "/24", "vxlan", "id", "42", "local", kUb, "remote", kUa},
          l.ctl_b, why);
  return why;
}

#define LAB_OR_SKIP(l) KTEST_LAB_OR_SKIP(Lab, l, make_lab)


struct Http {
  int code = 0;
  std::string body;
};
/// GET `url` from inside `ns` with curl (at most `max_s` seconds); code 0 when it failed.
Http get(const io::Netns& ns, const std::string& url, const std::string& accept = "", double max_s = 5) {
  std::vector<std::string> cmd = {"curl", "-s", "--max-time", std::to_string(max_s), "-w", "\n%{http_code}"};
  if (!accept.empty()) cmd.insert(cmd.end(), {"-H", "Accept: " + accept});
  cmd.push_back(url);
  auto r = ns.exec(cmd, std::chrono::seconds(int(max_s) + 5));
  Http h;
  if (!r.ok()) return h;
  const std::string& o = r.value().out;
  const auto nl = o.rfind('\n');
  if (nl == std::string::npos) return h;
  h.code = std::atoi(o.c_str() + nl + 1);
  h.body = o.substr(0, nl);
  return h;
}

/// The value of the sample line `name{labels} V` (exact name and labels); -1 when absent.
double sample(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  const auto p = ("\n" + text).find(key);
  if (p == std::string::npos) return -1;
  return std::atof(text.c_str() + p + key.size() - 1);
}

std::size_t fd_count(pid_t pid) {
  std::size_t n = 0;
  if (DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str())) {
    while (::readdir(d)) ++n;
    ::closedir(d);
  }
  return n;
}

TEST(TunnelMetrics, ScrapeAgreesWithStatsAndPassesPromtool) {
  LAB_OR_SKIP(l);
  ASSERT_EQ(ktest::echo20(*l.A, *l.B, kOb, l.dir), "");
  auto h = get(*l.A, "http://127.0.0.1:9100/metrics");
  ASSERT_EQ(h.code, 200) << h.body;
  auto st = daemon::query_stats(l.ctl_a);
  ASSERT_TRUE(st.ok()) << st.message();
  // The counters only grow: what the scrape saw lies between the 20 messages sent and
  // what `ofld stats` reports after it.
  const double tx = sample(h.body, "ofld_tx_frames_total");
  EXPECT_GE(tx, 20) << h.body;
  EXPECT_LE(tx, st.value()["tx"]["frames"].get<double>());
  EXPECT_GE(sample(h.body, "ofld_rx_frames_total"), 20);
  EXPECT_EQ(sample(h.body, "ofld_endpoint_info{dev=\"ofld0\",encap=\"vxlan\",mode=\"vxlan\",socket_kind=\"udp\",vni=\"42\"}"), 1)
      << h.body;
  EXPECT_EQ(sample(h.body, std::string("ofld_peer_tx_datagrams_total{remote=\"") + kUb + "\"}") > 0, true);
  EXPECT_EQ(sample(h.body, "ofld_drops_total{reason=\"rx_wrong_vni\"}"), 0);
  if (have("promtool")) {
    const std::string f = l.dir + "/scrape.txt";
    std::ofstream(f) << h.body;
    auto r = io::run_command({"sh", "-c", "promtool check metrics < " + f});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.value().exit_code, 0) << r.value().out << r.value().err;
  } else {
    std::cout << "[ skip part ] promtool is not installed (Debian: prometheus)\n";
  }
  // OpenMetrics when asked for; other paths 404; loopback only: not reachable from B.
  auto om = get(*l.A, "http://127.0.0.1:9100/metrics", "application/openmetrics-text;version=1.0.0");
  ASSERT_EQ(om.code, 200);
  EXPECT_EQ(om.body.substr(om.body.size() - 6), "# EOF\n");
  EXPECT_EQ(get(*l.A, "http://127.0.0.1:9100/").code, 404);
  EXPECT_EQ(get(*l.B, std::string("http://") + kUa + ":9100/metrics", "", 2).code, 0);
  auto st2 = daemon::query_stats(l.ctl_a);
  ASSERT_TRUE(st2.ok());
  EXPECT_GE(st2.value()["metrics"]["scrapes"].get<int>(), 2);
  EXPECT_EQ(st2.value()["metrics"]["not_found"].get<int>(), 1);
}

TEST(TunnelMetrics, PrometheusInTheNamespaceScrapesIt) {
  if (!have("prometheus")) GTEST_SKIP() << "prometheus is not installed (Debian: prometheus)";
  LAB_OR_SKIP(l);
  ASSERT_EQ(ktest::echo20(*l.A, *l.B, kOb, l.dir), "");
  const std::string cfg = l.dir + "/prometheus.yml";
  std::ofstream(cfg) << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                        "scrape_configs:\n  - job_name: ofld\n    static_configs:\n"
                        "      - targets: ['127.0.0.1:9100']\n";
  ::mkdir((l.dir + "/tsdb").c_str(), 0700);
  pid_t prom = spawn({"ip", "netns", "exec", l.A->name(), "prometheus", "--config.file=" + cfg,
                      "--storage.tsdb.path=" + l.dir + "/tsdb", "--web.listen-address=127.0.0.1:9090"},
                     l.dir + "/prometheus.log");
  l.pids.push_back(prom);
  auto query = [&](const std::string& q) -> json {
    auto h = get(*l.A, "http://127.0.0.1:9090/api/v1/query?query=" + q, "", 3);
    if (h.code != 200) return json();
    auto j = json::parse(h.body, nullptr, false);
    if (j.is_discarded() || j.value("status", "") != "success") return json();
    return j["data"]["result"];
  };
  json up;
  for (int i = 0; i < 60; ++i) {  // Prometheus starts, then scrapes every second
    up = query("up%7Bjob%3D%22ofld%22%7D");
    if (up.is_array() && !up.empty() && up[0]["value"][1] == "1") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_TRUE(up.is_array() && !up.empty()) << slurp(l.dir + "/prometheus.log");
  EXPECT_EQ(up[0]["value"][1], "1") << up.dump();
  auto tx = query("ofld_tx_frames_total");
  ASSERT_TRUE(tx.is_array() && !tx.empty());
  const double v = std::stod(tx[0]["value"][1].get<std::string>());
  EXPECT_GE(v, 20);
  auto st = daemon::query_stats(l.ctl_a);
  ASSERT_TRUE(st.ok());
  EXPECT_LE(v, st.value()["tx"]["frames"].get<double>());
  // every drop reason is a series, by its label
  auto drops = query("count(ofld_drops_total)");
  ASSERT_TRUE(drops.is_array() && !drops.empty());
  EXPECT_EQ(drops[0]["value"][1], std::to_string(tunnel::kDropCount));
  // the scrape was OpenMetrics (Prometheus asks for it): the endpoint's info metric kept its labels
  auto info = query("ofld_endpoint_info");
  ASSERT_TRUE(info.is_array() && !info.empty());
  EXPECT_EQ(info[0]["metric"]["vni"], "42");
}

TEST(TunnelMetrics, IdleAndSlowClientsNeitherStallAScrapeNorPileUp) {
  LAB_OR_SKIP(l);
  // three idle connections and one that sends its request a byte a second
  const std::string idle_py =
      "import socket,sys,time\n"
      "n=int(sys.argv[1]);ss=[]\n"
      "for i in range(n):\n"
      "  try: ss.append(socket.create_connection(('127.0.0.1',9100),timeout=0.2))\n"
      "  except OSError: pass\n"
      "print(len(ss),flush=True)\n"
      "time.sleep(float(sys.argv[2]))\n";
  const std::string slow_py =
      "import socket,time\n"
      "s=socket.create_connection(('127.0.0.1',9100))\n"
      "print('connected',flush=True)\n"
      "for c in b'GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n':\n"
      "  s.send(bytes([c]));time.sleep(1)\n";
  pid_t idle = spawn({"ip", "netns", "exec", l.A->name(), "python3", "-c", idle_py, "3", "20"}, l.dir + "/idle.log");
  l.pids.push_back(idle);
  pid_t slow = spawn({"ip", "netns", "exec", l.A->name(), "python3", "-c", slow_py}, l.dir + "/slow.log");
  l.pids.push_back(slow);
  // Python takes about a second to start on a loaded machine: scrape once all four are connected
  for (int i = 0; i < 200; ++i) {
    if (slurp(l.dir + "/idle.log") == "3\n" && slurp(l.dir + "/slow.log") == "connected\n") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(slurp(l.dir + "/idle.log"), "3\n");
  ASSERT_EQ(slurp(l.dir + "/slow.log"), "connected\n");
  const auto t0 = std::chrono::steady_clock::now();
  auto h = get(*l.A, "http://127.0.0.1:9100/metrics", "", 4);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(h.code, 200);
  // waiting for one of them to time out (2 s after it connected, just before t0) takes ~2 s
  EXPECT_LT(s, 1.0) << "a scrape behind 3 idle clients and a slow one took " << s << " s";
  // a crowd: 300 connections at once hold at most the pool's threads and queue (16 + 4) and
  // the listen backlog; the rest wait in the kernel or time out, and nothing grows
  const std::size_t fds0 = fd_count(l.ofld_a);
  pid_t crowd = spawn({"ip", "netns", "exec", l.A->name(), "python3", "-c", idle_py, "300", "6"}, l.dir + "/crowd.log");
  l.pids.push_back(crowd);
  std::size_t most = 0;
  for (int i = 0; i < 40; ++i) {
    most = std::max(most, fd_count(l.ofld_a));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_LE(most, fds0 + 16 + 4 + 2) << "the endpoint held " << most - fds0 << " more sockets";
  stop(l.pids.back());
  // once the crowd is gone (its sockets time out on the server: 2 s each), scrapes work again
  Http after;
  for (int i = 0; i < 30 && after.code != 200; ++i) after = get(*l.A, "http://127.0.0.1:9100/metrics", "", 2);
  EXPECT_EQ(after.code, 200);
}

}  // namespace

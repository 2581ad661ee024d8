// `ofld tunnel` service settings and logs (daemon/service.hpp, docs/service.md): the `user` and
// `log_format` settings, the structured log lines (logfmt and JSON, fields from trailing
// key=value words) and the rate-limited drop lines named by the counters' reasons.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "ofld/daemon/config.hpp"
#include "ofld/daemon/service.hpp"

namespace {

using namespace ofld::daemon;
using json = nlohmann::json;

/// Captures spdlog's default logger into a string for the test's lifetime.
struct Capture {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> saved = spdlog::default_logger();
  Capture(LogFormat f) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("svc-test", sink));
    set_log_format(f);
  }
  ~Capture() { spdlog::set_default_logger(saved); }
  std::vector<std::string> lines() const {
    std::vector<std::string> v;
    std::istringstream in(out.str());
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  }
};

}  // namespace

TEST(ServiceConfig, UserAndLogFormatFromTomlAndOptions) {
  auto p = parse_toml("user = \"nobody\"\nlog_format = \"json\"\n[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\n"
                      "remote = \"10.0.0.2\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
  EXPECT_EQ(std::get<DaemonConfig>(p).user, "nobody");
  EXPECT_EQ(std::get<DaemonConfig>(p).log_format, "json");
  DaemonConfig c;
  EXPECT_EQ(c.user, "");
  EXPECT_EQ(c.log_format, "text");
  EXPECT_EQ(apply_setting(c, "user", {"65534"}), std::nullopt);
  EXPECT_EQ(c.user, "65534");
  EXPECT_EQ(apply_setting(c, "log-format", {"xml"}), "log-format: 'xml' is not text or json");
  EXPECT_EQ(apply_setting(c, "user", {"a:b"}), "user: 'a:b' is not a user name or uid");
  auto bad = parse_toml("log_format = \"yaml\"\n[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(bad));
  EXPECT_NE(std::get<std::string>(bad).find("log-format: 'yaml' is not text or json"), std::string::npos)
      << std::get<std::string>(bad);
}

TEST(ServiceLog, JsonLinesCarryTrailingKeyValuesAsFields) {
  std::vector<std::string> lines;
  {
    Capture c(LogFormat::Json);
    spdlog::info("tunnel ofld0: vxlan id 42 \"quoted\" mtu 1450");
    spdlog::warn("drop reason=vxlan_bad_flags count=3 total=10");
    spdlog::info("privileges dropped uid=65534 note=\"two words\"");
    lines = c.lines();
  }
  ASSERT_EQ(lines.size(), 3u);
  auto a = json::parse(lines[0]);
  EXPECT_EQ(a["level"], "info");
  EXPECT_EQ(a["msg"], "tunnel ofld0: vxlan id 42 \"quoted\" mtu 1450");
  EXPECT_EQ(a.size(), 3u);  // ts, level, msg
  EXPECT_NE(a["ts"].get<std::string>().find('T'), std::string::npos);
  auto b = json::parse(lines[1]);
  EXPECT_EQ(b["level"], "warning");
  EXPECT_EQ(b["msg"], "drop");
  EXPECT_EQ(b["reason"], "vxlan_bad_flags");
  EXPECT_EQ(b["count"], "3");
  EXPECT_EQ(b["total"], "10");
  auto d = json::parse(lines[2]);
  EXPECT_EQ(d["msg"], "privileges dropped");
  EXPECT_EQ(d["uid"], "65534");
  EXPECT_EQ(d["note"], "two words");
}

TEST(ServiceLog, TextLinesAreLogfmt) {
  std::vector<std::string> lines;
  {
    Capture c(LogFormat::Text);
    spdlog::info("a \"b\" c");
    spdlog::warn("drop reason=short_frame count=1 total=1");
    lines = c.lines();
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].substr(0, 3), "ts=");
  EXPECT_NE(lines[0].find(" level=info msg=\"a \\\"b\\\" c\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" level=warning msg=\"drop\" reason=short_frame count=1 total=1"), std::string::npos)
      << lines[1];
}

// Per-packet events are reported as counts: one line per reason whose counter grew since the
// previous report, none when nothing grew, at most max_lines and the rest as reason=other.
TEST(ServiceLog, DropReporterLogsCounterDeltasRateLimited) {
  std::vector<std::string> lines;
  {
    Capture c(LogFormat::Json);
    DropReporter r(2);
    json st = {{"drops", {{"vxlan_bad_flags", 5u}, {"short_frame", 1u}}},
               {"socket", {{"rx_queue_drops", 0u}}},
               {"tap_write", {{"failed", 0u}}}};
    EXPECT_EQ(r.report(st), 2u);
    EXPECT_EQ(r.report(st), 0u);  // nothing new: silent
    st["drops"]["vxlan_bad_flags"] = 7u;
    st["drops"]["vni_unknown"] = 4u;
    st["socket"]["rx_queue_drops"] = 9u;
    st["tap_write"]["failed"] = 1u;
    EXPECT_EQ(r.report(st), 3u);  // 2 lines + "other"
    lines = c.lines();
  }
  ASSERT_EQ(lines.size(), 5u);
  auto j0 = json::parse(lines[0]), j1 = json::parse(lines[1]);
  EXPECT_EQ(j0["reason"], "short_frame");
  EXPECT_EQ(j0["count"], "1");
  EXPECT_EQ(j1["reason"], "vxlan_bad_flags");
  EXPECT_EQ(j1["count"], "5");
  // second round: sorted by reason; socket.rx_queue_drops (9) and tap_write.failed (1) shown,
  // vni_unknown (4) and vxlan_bad_flags (+2) summed into other
  auto k0 = json::parse(lines[2]), k1 = json::parse(lines[3]), k2 = json::parse(lines[4]);
  EXPECT_EQ(k0["reason"], "socket.rx_queue_drops");
  EXPECT_EQ(k0["count"], "9");
  EXPECT_EQ(k1["reason"], "tap_write.failed");
  EXPECT_EQ(k1["count"], "1");
  EXPECT_EQ(k2["reason"], "other");
  EXPECT_EQ(k2["count"], "6");
}

TEST(ServiceLog, LogFormatNames) {
  EXPECT_EQ(parse_log_format("text"), LogFormat::Text);
  EXPECT_EQ(parse_log_format("json"), LogFormat::Json);
  EXPECT_EQ(parse_log_format("JSON"), std::nullopt);
}

TEST(ServicePrivilege, CapabilitiesKeptAfterStartByMode) {
  DaemonConfig c;
  c.tunnel = ofld::tunnel::VxlanConfig{};
  EXPECT_EQ(caps_after_start(c), cap_bit(12));  // CAP_NET_ADMIN: SO_SNDBUFFORCE on later sockets
  c.offload = false;
  EXPECT_EQ(caps_after_start(c), 0u);
  c.tunnel = ofld::tunnel::GueConfig{};
  c.offload = true;
  EXPECT_EQ(caps_after_start(c), 0u);
  c.tunnel = ofld::tunnel::GreConfig{};
  EXPECT_EQ(caps_after_start(c), 0u);  // CAP_NET_RAW only to open the raw socket
}

// A field value cannot split a log line: control characters, spaces, quotes and '=' make it
// quoted and escaped (a value "\nk" once came out bare, starting a forged second line).
TEST(ServiceLog, TextFieldValueWithNewlineStaysOnOneLine) {
  std::vector<std::string> lines;
  {
    Capture c(LogFormat::Text);
    spdlog::info("z=\nlevel=error");
    spdlog::info("peer addr=a\tb");
    lines = c.lines();
  }
  ASSERT_EQ(lines.size(), 2u) << lines[0];
  EXPECT_NE(lines[0].find("z=\"\\u000alevel=error\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("addr=\"a\\u0009b\""), std::string::npos) << lines[1];
}

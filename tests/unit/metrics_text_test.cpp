// The metrics text (ofld/daemon/metrics.hpp): Prometheus naming conventions
// (https://prometheus.io/docs/practices/naming/), the 0.0.4 text format and OpenMetrics 1.0.0
// (families named without `_total`, `# EOF`), `promtool check metrics` over the output, and the
// `metrics` setting (loopback when only a port is given).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ofld/daemon/config.hpp"
#include "ofld/daemon/metrics.hpp"
#include "ofld/io/netns.hpp"
#include "ofld/tunnel/types.hpp"

namespace {

using namespace ofld::daemon;
using json = nlohmann::json;

// A stats document in the layout `ofld stats --json` prints (taken from a VXLAN endpoint, then
// given distinct values so that a misplaced number shows).
json sample_doc() {
  return json::parse(R"({
  "control": {"accepted": 11, "bad_requests": 12, "clients": 1, "closed_idle": 13,
              "closed_stalled": 14, "closed_unanswered": 15, "denied": 16, "evicted": 17,
              "over_buffer": 18, "refused_busy": 19, "replies": 20, "requests": 21},
  "dev": "ofld0", "drops": {"rx_wrong_vni": 3, "tx_no_remote": 4}, "drops_total": 7,
  "encap": "vxlan",
  "fdb": {"aged": 22, "entries": 5,
          "learn_refused": {"maxaddress": 23, "per_remote": 24, "remote_table": 25, "unknown_source": 26},
          "learned": 27, "local_refused": 28},
  "gro": {"aggregates": 29, "merged": 30, "not_merged_by_reason": {"flush": 31}, "packets_in": 32, "singles": 33},
  "gro_cells": {"bypassed": 34, "dropped_backlog": 35, "dropped_down": 36, "queued": 37},
  "gso": {"errors": 38, "packets_in": 39, "payload_bytes_copied": 40, "segmented": 41, "segments_out": 42},
  "mode": "vxlan",
  "peer_sessions": {"authenticated": false, "bad_mac": 43, "caps": [], "epoch": 167726123, "legacy": 44,
                    "malformed": {"short": 45}, "rate_limited": 46,
                    "sessions": {"10.0.0.2": {"acks_received": 47, "acks_sent": 48, "age_ms": 1500,
                                              "caps": ["integrity"], "claim_pending_ms": null, "downgrades": 49,
                                              "epoch": 50, "epoch_changes": 51, "gso_size": 65535,
                                              "hellos_received": 52, "hellos_sent": 53, "integrity": true,
                                              "legacy_received": 54, "mtu": 1450, "probes": 55,
                                              "rtt_us": 250, "state": "up", "unproven": 56}},
                    "stale_ack": 57, "unauthenticated": 58, "unknown_source": 59, "unproven": 60, "version": 2},
  "peers": {"10.0.0.2": {"fdb_learned": 61, "rx_bytes": 62, "rx_csum_seed": 63, "rx_datagrams": 64,
                         "rx_dropped": 65, "tx_bytes": 66, "tx_csum_elided": 67, "tx_csum_full": 68,
                         "tx_datagrams": 69}},
  "queues": 2,
  "rx": {"bytes": 70, "csum_partial_seed": 71, "csum_seed_no_outer_csum": 72, "csum_skipped": 73,
         "csum_validated": 74, "datagram_bytes": 75, "datagrams": 76, "ecn_bogus": 77, "ecn_ce": 78,
         "frames": 79, "gre_csum_ok": 80, "gro_aggregates": 81, "gro_merged": 82, "rco": 83,
         "rco_no_outer_csum": 84, "udp_gro_trains": 85},
  "socket": {"gro_buffers": 86, "kind": "udp", "plain_sends": 87, "recv_batches": 88, "recv_buffers": 89,
             "rx_queue_drops": 90, "tx_ports": 4, "udp_gro": true, "udp_segment": true,
             "udp_segment_disabled": 91, "udp_segment_sends": 92},
  "tap": {"multi_queue": true, "offload_bits": 111, "vnet_hdr": true},
  "tap_write": {"csum_sw": 93, "eagain_waits": 94, "failed": 95,
                "gso_off": {"tcpv4": false, "tcpv6": true, "uso": false},
                "gso_refused": {"tcpv4": 96, "tcpv6": 97, "uso": 98},
                "short_writes": 99, "sw_gso_frames": 100, "sw_gso_segments": 101},
  "tx": {"bytes": 102, "csum_skipped": 103, "csum_sw": 104, "datagram_bytes": 105, "datagrams": 106,
         "flooded": 107, "frames": 108, "gre_csum": 109, "gso_super_packets": 110, "rco": 112,
         "udp_segment_trains": 113},
  "per_queue": [{"queue": 0, "tx": {"frames": 114}, "rx": {"frames": 115}, "drops_total": 116},
                {"queue": 1, "tx": {"frames": 117}, "rx": {"frames": 118}, "drops_total": 119}],
  "vni": 42
})");
}

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l))
    if (l == line) return true;
  return false;
}

// Every number and boolean of the document, except drops_total (the sum of ofld_drops_total)
// and vni (a label of ofld_endpoint_info).
void numbers(const json& j, const std::string& path, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) numbers(*it, path + "." + it.key(), out);
  } else if (j.is_array()) {
    for (const auto& e : j) numbers(e, path + "[]", out);
  } else if ((j.is_number() || j.is_boolean()) && path != ".drops_total" && path != ".vni" &&
             path.rfind("[].queue") == std::string::npos) {
    out.push_back(path);
  }
}

TEST(MetricsText, DropsAreOneCounterLabelledByReasonEveryReasonIncluded) {
  const auto t = render_metrics(sample_doc(), MetricsFormat::Prometheus);
  EXPECT_TRUE(has_line(t, "# TYPE ofld_drops_total counter")) << t;
  EXPECT_TRUE(has_line(t, "ofld_drops_total{reason=\"rx_wrong_vni\"} 3"));
  EXPECT_TRUE(has_line(t, "ofld_drops_total{reason=\"tx_no_remote\"} 4"));
  // a reason that did not happen is a series of 0 (rate() and alerts need it to exist)
  std::size_t reasons = 0;
  for (std::size_t p = 0; (p = t.find("\nofld_drops_total{reason=", p)) != std::string::npos; ++p) ++reasons;
  EXPECT_EQ(reasons, ofld::tunnel::kDropCount);
  // the sum is not repeated as a series of its own
  EXPECT_EQ(t.find("\nofld_drops_total "), std::string::npos);
}

TEST(MetricsText, CountersEndInTotalUnitsInNamesTimesInSeconds) {
  const auto t = render_metrics(sample_doc(), MetricsFormat::Prometheus);
  EXPECT_TRUE(has_line(t, "ofld_tx_frames_total 108"));
  EXPECT_TRUE(has_line(t, "ofld_tx_bytes_total 102"));
  EXPECT_TRUE(has_line(t, "ofld_gro_not_merged_total{reason=\"flush\"} 31"));
  EXPECT_TRUE(has_line(t, "ofld_fdb_learn_refused_total{reason=\"per_remote\"} 24"));
  EXPECT_TRUE(has_line(t, "ofld_peer_tx_bytes_total{remote=\"10.0.0.2\"} 66"));
  EXPECT_TRUE(has_line(t, "ofld_peer_sessions_malformed_total{reason=\"short\"} 45"));
  EXPECT_TRUE(has_line(t, "ofld_tap_write_gso_refused_total{kind=\"tcpv6\"} 97"));
  EXPECT_TRUE(has_line(t, "ofld_queue_tx_frames_total{queue=\"1\"} 117"));
  EXPECT_TRUE(has_line(t, "ofld_queue_drops_total{queue=\"0\"} 116"));
  EXPECT_TRUE(has_line(t, "ofld_socket_rx_queue_drops_total 90"));
  // gauges: values now, no _total
  EXPECT_TRUE(has_line(t, "# TYPE ofld_fdb_entries gauge"));
  EXPECT_TRUE(has_line(t, "ofld_fdb_entries 5"));
  EXPECT_TRUE(has_line(t, "ofld_queues 2"));
  EXPECT_TRUE(has_line(t, "ofld_control_clients 1"));
  EXPECT_TRUE(has_line(t, "ofld_peer_session_mtu{remote=\"10.0.0.2\"} 1450"));
  EXPECT_TRUE(has_line(t, "ofld_tap_write_gso_off{kind=\"tcpv6\"} 1"));
  EXPECT_TRUE(has_line(t, "ofld_socket_udp_gro 1"));
  // milliseconds and microseconds become seconds (base units)
  EXPECT_TRUE(has_line(t, "ofld_peer_session_age_seconds{remote=\"10.0.0.2\"} 1.5"));
  EXPECT_TRUE(has_line(t, "ofld_peer_session_rtt_seconds{remote=\"10.0.0.2\"} 0.00025"));
  for (std::size_t a = 0, e; a < t.size(); a = e + 1) {  // no sample named in milliseconds
    e = t.find('\n', a);
    const std::string line = t.substr(a, e - a);
    if (!line.empty() && line[0] != '#') {
      EXPECT_EQ(line.find("_ms"), std::string::npos) << line;
    }
    if (e == std::string::npos) break;
  }
  // the strings are labels
  EXPECT_TRUE(has_line(t, "ofld_endpoint_info{dev=\"ofld0\",encap=\"vxlan\",mode=\"vxlan\",socket_kind=\"udp\",vni=\"42\"} 1"))
      << t;
  EXPECT_TRUE(has_line(t, "ofld_peer_session_state{remote=\"10.0.0.2\",state=\"up\"} 1"));
}

TEST(MetricsText, EveryNumberOfTheStatsDocumentIsASample) {
  std::vector<std::string> paths;
  numbers(sample_doc(), "", paths);
  const auto t = render_metrics(sample_doc(), MetricsFormat::Prometheus);
  // samples, minus the ones the renderer adds (the 0 series of reasons that did not happen,
  // the endpoint's info, a session's state) and the null claim_pending_ms (no sample)
  std::size_t samples = 0, added = 0;
  std::istringstream in(t);
  std::string l;
  while (std::getline(in, l)) {
    if (l.empty() || l[0] == '#') continue;
    ++samples;
    if (l.rfind("ofld_endpoint_info", 0) == 0 || l.rfind("ofld_peer_session_state", 0) == 0 ||
        ((l.rfind("ofld_drops_total{", 0) == 0 || l.rfind("ofld_gro_not_merged_total{", 0) == 0) &&
         l.size() > 2 && l.substr(l.size() - 2) == " 0"))
      ++added;
  }
  EXPECT_EQ(samples - added, paths.size()) << t;
}

TEST(MetricsText, OpenMetricsNamesFamiliesWithoutSuffixAndEndsWithEof) {
  const auto t = render_metrics(sample_doc(), MetricsFormat::OpenMetrics);
  EXPECT_TRUE(has_line(t, "# TYPE ofld_tx_frames counter")) << t;
  EXPECT_TRUE(has_line(t, "ofld_tx_frames_total 108"));
  EXPECT_TRUE(has_line(t, "# TYPE ofld_endpoint info"));
  ASSERT_GE(t.size(), 6u);
  EXPECT_EQ(t.substr(t.size() - 6), "# EOF\n");
  EXPECT_EQ(metrics_format_for("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"),
            MetricsFormat::OpenMetrics);
  EXPECT_EQ(metrics_format_for("*/*"), MetricsFormat::Prometheus);
  EXPECT_EQ(metrics_format_for(""), MetricsFormat::Prometheus);
}

TEST(MetricsText, LabelValuesAreEscaped) {
  json d = {{"dev", "a\"b\\c\nd"}, {"drops", json::object()}};
  const auto t = render_metrics(d, MetricsFormat::Prometheus);
  EXPECT_NE(t.find(R"(ofld_endpoint_info{dev="a\"b\\c\nd"} 1)"), std::string::npos) << t;
}

TEST(MetricsText, PromtoolCheckMetricsAcceptsIt) {
  auto which = ofld::io::run_command({"sh", "-c", "command -v promtool"});
  if (!which.ok() || which.value().exit_code != 0)
    GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  char path[] = "/tmp/ofld-metrics-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << render_metrics(sample_doc(), MetricsFormat::Prometheus);
  auto r = ofld::io::run_command({"sh", "-c", std::string("promtool check metrics < ") + path});
  ::unlink(path);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().exit_code, 0) << r.value().out << r.value().err;
  EXPECT_EQ(r.value().out + r.value().err, "");
}

TEST(MetricsConfig, PortAloneListensOnLoopback) {
  auto l = parse_metrics_listen("9100");
  ASSERT_TRUE(std::holds_alternative<MetricsListen>(l));
  EXPECT_EQ(std::get<MetricsListen>(l).host, "127.0.0.1");
  EXPECT_EQ(std::get<MetricsListen>(l).port, 9100);
  l = parse_metrics_listen("0.0.0.0:9200");
  ASSERT_TRUE(std::holds_alternative<MetricsListen>(l));
  EXPECT_EQ(std::get<MetricsListen>(l).host, "0.0.0.0");
  l = parse_metrics_listen("[::1]:9300");
  ASSERT_TRUE(std::holds_alternative<MetricsListen>(l));
  EXPECT_EQ(std::get<MetricsListen>(l).host, "::1");
  EXPECT_EQ(std::get<MetricsListen>(l).port, 9300);
  for (const char* bad : {"", "x", "99999", "1.2.3.4:", "1.2.3.4:65536", "::1:9100", "[1.2.3.4]:80",
                          "[::1]9100", "host.example:9100", "9100 "}) {
    auto b = parse_metrics_listen(bad);
    ASSERT_TRUE(std::holds_alternative<std::string>(b)) << bad;
    EXPECT_EQ(std::get<std::string>(b).rfind("metrics: '", 0), 0u) << std::get<std::string>(b);
  }
}

TEST(MetricsConfig, TomlAndOptionGoThroughOneSetting) {
  auto p = parse_toml("metrics = 9100\n[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
  EXPECT_EQ(std::get<DaemonConfig>(p).metrics, "9100");
  auto p6 = parse_toml("metrics = \"[::1]:9100\"\n[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p6));
  EXPECT_EQ(std::get<DaemonConfig>(p6).metrics, "[::1]:9100");
  auto bad = parse_toml("metrics = \"nope\"\n[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(bad));
  EXPECT_NE(std::get<std::string>(bad).find("metrics: 'nope'"), std::string::npos) << std::get<std::string>(bad);
  DaemonConfig c;
  EXPECT_EQ(apply_setting(c, "metrics", {"127.0.0.1:9100"}), std::nullopt);
  EXPECT_EQ(c.metrics, "127.0.0.1:9100");
  EXPECT_NE(apply_setting(c, "metrics", {"x"}), std::nullopt);
  EXPECT_TRUE(DaemonConfig{}.metrics.empty());  // off unless configured
}

}  // namespace

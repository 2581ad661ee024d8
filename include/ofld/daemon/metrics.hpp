// ofld/daemon/metrics.hpp — the counters of `ofld stats --json` as Prometheus / OpenMetrics
// text (the endpoint's `--metrics ADDR:PORT`, TOML `metrics =`; docs/service.md "Metrics").
//
// Naming (Prometheus "Metric and label naming"): `ofld_` + the document's path joined by '_'
// (`tx.frames` → ofld_tx_frames_total); counters end in `_total`; the keyed maps become labels
// (`drops` → ofld_drops_total{reason="rx_wrong_vni"}, every drop reason the endpoint knows,
// 0 included; `gro.not_merged_by_reason` {reason}, `fdb.learn_refused` {reason},
// `peers` {remote}, `peer_sessions.sessions` {remote}, `peer_sessions.malformed` {reason},
// `tap_write.gso_refused` / `gso_off` {kind}, `per_queue` {queue}); times are converted to
// seconds (`age_ms` → `_age_seconds`), byte counts keep `bytes` in the name; booleans are gauges
// of 0/1; the strings (dev, mode, encap, socket kind, VNI) are labels of ofld_endpoint_info,
// a session's state a label of ofld_peer_session_state. `drops_total` is not repeated (the sum
// of ofld_drops_total). Wiring only: no packet logic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ofld/daemon/config.hpp"

namespace ofld::daemon {

/// The exposition format of a scrape.
enum class MetricsFormat : std::uint8_t {
  Prometheus,   ///< text/plain; version=0.0.4 (what `promtool check metrics` reads)
  OpenMetrics,  ///< application/openmetrics-text; version=1.0.0 (ends with `# EOF`)
};

/// The Content-Type header of `f`.
std::string_view metrics_content_type(MetricsFormat f) noexcept;

/// The format to answer a request whose Accept header is `accept`: OpenMetrics when it names
/// application/openmetrics-text (Prometheus 2.x scrapers do), otherwise the 0.0.4 text format.
MetricsFormat metrics_format_for(std::string_view accept) noexcept;

/// Render a stats document (TunnelDaemon::stats_json / the control socket's "stats" shape)
/// in format `f`. Every number of the document appears once (see the file comment); each family
/// has one `# HELP` (naming the document's path) and one `# TYPE` line, its samples together.
std::string render_metrics(const nlohmann::json& stats, MetricsFormat f);

/// Where the metrics endpoint listens.
struct MetricsListen {
  std::string host;         ///< numeric IPv4 or IPv6 address (no brackets)
  std::uint16_t port = 0;   ///< 0: any free port (tests)
};

/// Parse `metrics`: "PORT" (→ 127.0.0.1:PORT, loopback by default), "ADDR:PORT" (IPv4) or
/// "[ADDR]:PORT" (IPv6). Errors name the setting ("metrics: 'x' is not ...").
Parsed<MetricsListen> parse_metrics_listen(const std::string& s);

}  // namespace ofld::daemon

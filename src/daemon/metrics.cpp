// The stats document as Prometheus 0.0.4 / OpenMetrics 1.0.0 text (ofld/daemon/metrics.hpp).
#include "ofld/daemon/metrics.hpp"

#include <charconv>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "ofld/offload/gro_context.hpp"
#include "ofld/wire/ip_addr.hpp"
#include "ofld/tunnel/types.hpp"

namespace ofld::daemon {

using json = nlohmann::json;

std::string_view metrics_content_type(MetricsFormat f) noexcept {
  return f == MetricsFormat::OpenMetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                         : "text/plain; version=0.0.4; charset=utf-8";
}

MetricsFormat metrics_format_for(std::string_view accept) noexcept {
  return accept.find("application/openmetrics-text") != std::string_view::npos
             ? MetricsFormat::OpenMetrics
             : MetricsFormat::Prometheus;
}

namespace {

enum class Kind : std::uint8_t { Counter, Gauge, Info };

struct Family {
  Kind kind = Kind::Counter;
  std::string help;
  std::vector<std::pair<std::string, std::string>> samples;  // labels ("" or {a="b"}), value
};

/// [a-zA-Z0-9_] only (a key with another character becomes '_' there).
std::string metric_word(std::string_view s) {
  std::string o(s);
  for (auto& c : o)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) c = '_';
  return o;
}

/// A label value with '\\', '"' and newlines escaped (both formats).
std::string label_value(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '\\') o += "\\\\";
    else if (c == '"') o += "\\\"";
    else if (c == '\n') o += "\\n";
    else o += c;
  }
  return o;
}

std::string number_text(const json& v, double scale) {
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  if (scale == 1.0 && v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (scale == 1.0 && v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  char b[64];  // the shortest text that reads back as the same double
  auto r = std::to_chars(b, b + sizeof b, v.get<double>() * scale);
  return std::string(b, r.ptr);
}

/// Dotted paths whose numbers are values now, not counts since start (gauges); '*' stands for
/// a map key (a remote). Booleans and times are gauges anyway.
const std::set<std::string>& gauge_paths() {
  static const std::set<std::string> k = {
      "queues", "fdb.entries", "control.clients", "socket.tx_ports", "tap.offload_bits",
      "tun.offload_bits", "peer_sessions.epoch", "peer_sessions.version",
      "peer_sessions.sessions.*.epoch", "peer_sessions.sessions.*.gso_size",
      "peer_sessions.sessions.*.mtu"};
  return k;
}

/// Objects whose keys are names (a reason, a remote, a kind): path → (family stem, label).
struct KeyedMap {
  const char* stem;
  const char* label;
};
const std::map<std::string, KeyedMap>& keyed_maps() {
  static const std::map<std::string, KeyedMap> k = {
      {"drops", {"drops", "reason"}},
      {"gro.not_merged_by_reason", {"gro_not_merged", "reason"}},
      {"fdb.learn_refused", {"fdb_learn_refused", "reason"}},
      {"peers", {"peer", "remote"}},
      {"peer_sessions.sessions", {"peer_session", "remote"}},
      {"peer_sessions.malformed", {"peer_sessions_malformed", "reason"}},
      {"tap_write.gso_refused", {"tap_write_gso_refused", "kind"}},
      {"tap_write.gso_off", {"tap_write_gso_off", "kind"}},
      {"tun_write.gso_refused", {"tun_write_gso_refused", "kind"}},
      {"tun_write.gso_off", {"tun_write_gso_off", "kind"}},
  };
  return k;
}

class Renderer {
 public:
  void walk(const json& j, const std::string& path, const std::string& stem, const std::string& labels) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string key = it.key();
      const std::string p = path.empty() ? key : path + "." + key;
      // a bit mask is not a quantity of bits (promtool: "use base unit bytes instead of bits")
      const std::string word = key == "offload_bits" ? "offload_flags" : metric_word(key);
      const std::string s = stem.empty() ? word : stem + "_" + word;
      const json& v = it.value();
      if (auto km = keyed_maps().find(p); km != keyed_maps().end() && v.is_object()) {
        keyed(v, p, km->second, labels);
        continue;
      }
      if (v.is_object()) {
        walk(v, p, s, labels);
        continue;
      }
      if (p == "per_queue" && v.is_array()) {  // [{queue, tx, rx, drops_total}]: label queue
        for (const auto& q : v) {
          if (!q.is_object() || !q.contains("queue")) continue;
          const std::string l = "queue=\"" + number_text(q["queue"], 1.0) + "\"";
          json rest = q;
          rest.erase("queue");
          walk(rest, "per_queue", "queue", labels.empty() ? l : labels + "," + l);
        }
        continue;
      }
      leaf(v, p, s, labels);
    }
  }

  // A keyed map: each key a label value of the families below it. Maps of plain numbers are
  // one family (ofld_drops_total{reason=...}); maps of objects (peers) a family per field.
  void keyed(const json& m, const std::string& p, const KeyedMap& km, const std::string& labels) {
    auto with = [&](const std::string& key) {
      const std::string l = std::string(km.label) + "=\"" + label_value(key) + "\"";
      return labels.empty() ? l : labels + "," + l;
    };
    // Every reason the endpoint knows, 0 when it never happened (a rate needs the series).
    std::vector<std::string> known;
    if (p == "drops")
      for (std::size_t i = 0; i < tunnel::kDropCount; ++i) known.emplace_back(tunnel::to_string(tunnel::Drop(i)));
    if (p == "gro.not_merged_by_reason")
      for (std::size_t i = 0; i < offload::kGroReasonCount; ++i)
        known.emplace_back(offload::to_string(offload::GroReason(i)));
    for (const auto& k : known)
      if (!m.contains(k)) leaf(json(0u), p + ".*", km.stem, with(k));
    for (auto it = m.begin(); it != m.end(); ++it) {
      const std::string sub = p + ".*";
      if (it->is_object()) {
        // a remote's session: its state a label of its own family
        if (p == "peer_sessions.sessions" && it->contains("state") && (*it)["state"].is_string())
          add("ofld_peer_session_state", Kind::Gauge, "peer_sessions.sessions.*.state (1 for the current state)",
              "{" + with(it.key()) + ",state=\"" + label_value((*it)["state"].get<std::string>()) + "\"}", "1");
        walk(*it, sub, km.stem, with(it.key()));
      } else {
        leaf(*it, sub, km.stem, with(it.key()));
      }
    }
  }

  void leaf(const json& v, const std::string& p, std::string s, const std::string& labels) {
    if (p == "drops_total") return;  // the sum of ofld_drops_total
    if (v.is_string()) {
      // the endpoint's names: labels of ofld_endpoint_info (a session's state: see keyed())
      if (p == "dev" || p == "mode" || p == "encap" || p == "socket.kind")
        info_.emplace_back(metric_word(p == "socket.kind" ? "socket_kind" : p), v.get<std::string>());
      return;
    }
    if (p == "vni" && v.is_number()) {
      info_.emplace_back("vni", number_text(v, 1.0));
      return;
    }
    if (p == "stale_queues" && v.is_array()) {
      add("ofld_stale_queues", Kind::Gauge, "stale_queues (queues whose worker did not answer the last snapshot)",
          "", std::to_string(v.size()));
      return;
    }
    if (!v.is_number() && !v.is_boolean()) return;  // null (no RTT yet), arrays (caps)
    double scale = 1.0;
    bool gauge = v.is_boolean() || gauge_paths().count(p);
    auto ends = [&](std::string_view suf) {
      return s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
    };
    if (ends("_ms")) {
      s = s.substr(0, s.size() - 3) + "_seconds", scale = 1e-3, gauge = true;
    } else if (ends("_us")) {
      s = s.substr(0, s.size() - 3) + "_seconds", scale = 1e-6, gauge = true;
    }
    if (!gauge && ends("_total")) s.resize(s.size() - 6);  // per_queue drops_total: one _total
    const std::string name = "ofld_" + s;
    add(name, gauge ? Kind::Gauge : Kind::Counter, p,
        labels.empty() ? "" : "{" + labels + "}", number_text(v, scale));
  }

  void add(const std::string& name, Kind k, const std::string& help, std::string labels, std::string value) {
    auto& f = fam_[name];
    if (f.help.empty()) {
      f.kind = k;
      f.help = help;
    }
    f.samples.emplace_back(std::move(labels), std::move(value));
  }

  std::string text(MetricsFormat fmt) {
    if (!info_.empty()) {
      std::string l;
      for (const auto& [k, v] : info_) l += (l.empty() ? "" : ",") + k + "=\"" + label_value(v) + "\"";
      add("ofld_endpoint", Kind::Info, "the endpoint: dev, mode, encap, socket kind, vni", "{" + l + "}", "1");
    }
    const bool om = fmt == MetricsFormat::OpenMetrics;
    std::string o;
    for (const auto& [name, f] : fam_) {
      // OpenMetrics names the family without the suffix its samples carry (_total, _info).
      const char* suffix = f.kind == Kind::Counter ? "_total" : f.kind == Kind::Info ? "_info" : "";
      const std::string sample = name + suffix;
      const std::string fam = om ? name : sample;
      const char* type = f.kind == Kind::Counter ? "counter" : f.kind == Kind::Gauge ? "gauge" : om ? "info" : "gauge";
      o += "# HELP " + fam + " ofld stats " + f.help + "\n";
      o += "# TYPE " + fam + " " + type + "\n";
      for (const auto& [l, v] : f.samples) o += sample + l + " " + v + "\n";
    }
    if (om) o += "# EOF\n";
    return o;
  }

 private:
  std::map<std::string, Family> fam_;
  std::vector<std::pair<std::string, std::string>> info_;
};

}  // namespace

std::string render_metrics(const json& stats, MetricsFormat f) {
  Renderer r;
  if (stats.is_object()) r.walk(stats, "", "", "");
  return r.text(f);
}

Parsed<MetricsListen> parse_metrics_listen(const std::string& s) {
  const auto bad = [&s] {
    return Parsed<MetricsListen>(std::in_place_index<1>, "metrics: '" + s + "' is not PORT, ADDR:PORT or [ADDR6]:PORT (e.g. 9100, 127.0.0.1:9100)");
  };
  MetricsListen l;
  std::string host, port;
  if (!s.empty() && s[0] == '[') {
    const auto close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') return bad();
    host = s.substr(1, close - 1);
    port = s.substr(close + 2);
    auto ip = tunnel::IpAddr::parse(host);
    if (!ip || !ip->is_v6()) return bad();
  } else if (const auto colon = s.rfind(':'); colon != std::string::npos) {
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
    auto ip = tunnel::IpAddr::parse(host);
    if (!ip || ip->is_v6()) return bad();
  } else {
    host = "127.0.0.1";  // loopback unless an address is given
    port = s;
  }
  unsigned n = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  if (port.empty() || ec != std::errc() || p != port.data() + port.size() || n > 65535) return bad();
  l.host = host;
  l.port = std::uint16_t(n);
  return l;
}

}  // namespace ofld::daemon

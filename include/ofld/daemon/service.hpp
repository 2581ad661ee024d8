// ofld/daemon/service.hpp — `ofld tunnel` as a service: the systemd readiness protocol
// (sd_notify(3)), least privilege after start-up (setresuid(2), capabilities(7)), structured
// logs (key=value or JSON lines) and rate-limited drop reports with the counters' reason names.
// Wiring only: no packet logic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ofld/daemon/config.hpp"
#include "ofld/io/result.hpp"

namespace ofld::daemon {

/// Send `state` ("READY=1", "STOPPING=1", "STATUS=...", several joined by '\n') to the service
/// manager: sd_notify(3) over the AF_UNIX datagram socket named by $NOTIFY_SOCKET (a path, or
/// '@' for the abstract namespace). Returns true when a message was sent; false when
/// NOTIFY_SOCKET is unset (not run by systemd) or the send failed (never fatal).
bool notify(std::string_view state) noexcept;

/// Capability numbers (linux/capability.h) as a mask bit: cap_bit(CAP_NET_ADMIN) = 1 << 12.
constexpr std::uint64_t cap_bit(unsigned cap) noexcept { return std::uint64_t(1) << cap; }

/// The capabilities a running endpoint still uses after start-up (devices, sockets, address
/// and link settings done): VXLAN with offloads opens a transmit socket per UDP source port on
/// demand (udp_flow_src_port) and sizes it past wmem_max with SO_SNDBUFFORCE, which needs
/// CAP_NET_ADMIN; every other mode opens everything at start and keeps no capability
/// (setting IP_TOS/IP_TTL per send needs none; the GRE raw socket needs CAP_NET_RAW only to
/// be opened).
std::uint64_t caps_after_start(const DaemonConfig& cfg) noexcept;

/// Become `user` (a name or a numeric uid from the passwd database; its primary group, and
/// its supplementary groups) keeping only `keep` (a cap_bit mask; those of them it has) in the permitted and
/// effective sets: prctl(PR_SET_KEEPCAPS), setgroups/setresgid/setresuid, capset; the
/// bounding set is reduced to `keep` first, the ambient set cleared, and
/// PR_SET_NO_NEW_PRIVS set so that no exec regains anything. With `user` empty only the
/// capabilities are reduced (a process already unprivileged, e.g. systemd's DynamicUser with
/// AmbientCapabilities). Affects the calling thread and the threads it creates afterwards
/// (call before starting any). Errors name the step ("user nobody: setresuid: ...").
io::Status drop_privileges(const std::string& user, std::uint64_t keep);

/// "0x0000000000001000"-style reading of /proc/self/status CapEff (tests, logs); 0 on error.
std::uint64_t effective_caps() noexcept;

/// Log line format of the endpoint (`--log-format`).
enum class LogFormat : std::uint8_t {
  Text,  ///< logfmt: `ts=2026-12-03T12:00:00.123Z level=info msg="..." key=value ...`
  Json,  ///< one JSON object per line: {"ts":...,"level":...,"msg":...,"key":"value",...}
};
/// "text" or "json"; nullopt otherwise.
std::optional<LogFormat> parse_log_format(std::string_view s) noexcept;
/// Install the format on spdlog's default logger (stderr). A message's trailing `key=value`
/// words (key: [a-z0-9_.]+, value: a word or a "quoted string") become fields of their own;
/// the words before them are `msg`.
void set_log_format(LogFormat f);

/// Rate-limited drop reports from the endpoint's counters (per-packet events are never
/// logged one by one): feed it the stats document (TunnelDaemon::stats_json shape: "drops"
/// {reason: n}, "socket".rx_queue_drops, tap_write/tun_write.failed: those two logged under
/// their dotted names) at most once a second;
/// for each reason whose count grew it logs one warning
/// `drop reason=REASON count=DELTA total=N` — at most `max_lines` lines per call, the rest
/// summed into one `drop reason=other count=...` line.
class DropReporter {
 public:
  explicit DropReporter(unsigned max_lines = 8) : max_lines_(max_lines) {}
  /// Lines logged by this call.
  unsigned report(const nlohmann::json& stats);

 private:
  unsigned max_lines_;
  std::map<std::string, std::uint64_t> last_;
};

}  // namespace ofld::daemon

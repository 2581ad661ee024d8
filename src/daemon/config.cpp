// `ofld tunnel` configuration parsing (words and TOML).
#include "ofld/daemon/config.hpp"
#include "ofld/daemon/metrics.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

// toml++ header-only, unless the build defines TOML_SHARED_LIB=1 (the DPDK flags pulled in by
// CMake do, and link libtomlplusplus with it).
#ifndef TOML_HEADER_ONLY
#define TOML_HEADER_ONLY 1
#endif
#include <toml++/toml.h>

namespace ofld::daemon {

std::string default_control_path(const std::string& dev) { return "/run/ofld/" + dev + ".sock"; }

std::optional<tunnel::Mac> parse_mac(const std::string& s) {
  tunnel::Mac m{};
  unsigned v[6];
  char tail;
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &tail) != 6)
    return std::nullopt;
  for (int i = 0; i < 6; ++i) {
    if (v[i] > 255) return std::nullopt;
    m[i] = std::uint8_t(v[i]);
  }
  return m;
}

namespace {

using tunnel::conf::addr_arg;
using tunnel::conf::num_arg;
using tunnel::conf::number;

/// A remote must be a unicast address other than local (a VXLAN multicast group is given
/// with `group`, not as a remote), and a tunnel to itself loops.
std::optional<std::string> check_remote(const tunnel::IpAddr& r, const tunnel::IpAddr& local) {
  const auto& b = r.bytes;
  const bool v4_bad = !r.is_v6() && (b[0] >= 224 || (b[0] | b[1] | b[2] | b[3]) == 0);
  bool v6_zero = true;
  for (int i = 0; i < 16; ++i) v6_zero &= b[std::size_t(i)] == 0;
  const bool v6_bad = r.is_v6() && (b[0] == 0xFF || v6_zero);
  if (v4_bad || v6_bad)
    return "remote: " + r.to_string() + " is not a unicast address (multicast, broadcast and "
           "unspecified remotes are not supported)";
  if (!local.empty() && r == local)
    return "remote: " + r.to_string() + " is the local address; a tunnel needs another endpoint";
  return std::nullopt;
}

}  // namespace

Parsed<unsigned> parse_queues(const std::string& s) {
  if (s == "auto") return kQueuesAuto;
  auto n = number(s, 1, kMaxQueues);
  if (!n) return "queues: '" + s + "' is not auto or a number in 1.." + std::to_string(kMaxQueues);
  return unsigned(*n);
}

std::string queues_text(unsigned queues) {
  return queues == kQueuesAuto ? "auto" : std::to_string(queues);
}

unsigned auto_queue_cpus(const std::vector<unsigned>& cpus, std::size_t allowed) {
  if (cpus.empty()) return unsigned(std::min<std::size_t>(allowed, kMaxQueues));
  std::set<unsigned> seen;
  for (unsigned c : cpus)
    if (!seen.insert(c).second) break;
  return unsigned(std::min<std::size_t>(seen.size(), kMaxQueues));
}

Parsed<QueuePlan> plan_queues(unsigned configured, unsigned cpus, bool flow_spread,
                              std::optional<bool> existing_multi_queue) {
  QueuePlan p;
  const bool single_exists = existing_multi_queue && !*existing_multi_queue;
  if (configured != kQueuesAuto) {
    if (configured > 1 && single_exists)
      return "queues: " + std::to_string(configured) +
             " needs a multi-queue device; the existing one is single-queue (make it with "
             "`ip tuntap add ... multi_queue`, or use queues 1)";
    p.count = configured;
  } else if (single_exists) {
    p.count = 1;
    p.why = "auto: 1 (the existing device is single-queue)";
  } else if (!flow_spread) {
    p.count = 1;
    p.why = "auto: 1 (the underlay delivers every flow to one socket)";
  } else {
    p.count = std::clamp(cpus, 1u, kAutoQueuesMax);
    p.why = "auto: " + std::to_string(p.count) + " (" + std::to_string(cpus) + " CPU" +
            (cpus == 1 ? "" : "s") + ", at most " + std::to_string(kAutoQueuesMax) + ")";
  }
  p.multi_queue = p.count > 1 || existing_multi_queue.value_or(false);
  return p;
}

std::vector<unsigned> allowed_cpus() {
  std::vector<unsigned> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return std::nullopt;
  std::string out;
  char buf[4096];
  std::size_t n;
  // bounded: a host with thousands of mounts has a mountinfo of a few hundred KiB
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && out.size() < (16u << 20)) out.append(buf, n);
  std::fclose(f);
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0;;) {
    const std::size_t j = s.find(sep, i);
    out.push_back(s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) return out;
    i = j + 1;
  }
}

/// A positive decimal in a cgroup file ("100000\n"); nullopt for anything else ("max", -1).
std::optional<std::uint64_t> positive(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return number(std::string(s), 1, std::uint64_t(1) << 62);
}

/// One level's limit in CPUs: v2 `cpu.max`, else v1's quota and period; nullopt for none.
std::optional<double> level_limit(const std::string& dir, bool v2) {
  if (v2) {
    const auto t = read_text(dir + "/cpu.max");
    if (!t) return std::nullopt;
    const auto f = split(*t, ' ');
    if (f.size() != 2) return std::nullopt;
    const auto quota = positive(f[0]), period = positive(f[1]);  // "max": no limit
    if (!quota || !period) return std::nullopt;
    return double(*quota) / double(*period);
  }
  const auto q = read_text(dir + "/cpu.cfs_quota_us"), p = read_text(dir + "/cpu.cfs_period_us");
  if (!q || !p) return std::nullopt;
  const auto quota = positive(*q), period = positive(*p);
  if (!quota || !period) return std::nullopt;  // -1: no limit
  return double(*quota) / double(*period);
}

}  // namespace

std::optional<double> cgroup_cpu_limit(const std::string& root) {
  // The thread's cgroup on the hierarchy that has the cpu controller: v1 "N:cpu,cpuacct:/path",
  // else the v2 line "0::/path".
  const auto cg = read_text(root + "/proc/thread-self/cgroup");
  if (!cg) return std::nullopt;
  std::optional<std::string> v1_path, v2_path;
  for (std::string_view line : split(*cg, '\n')) {
    const std::size_t a = line.find(':'), b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view ctl = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (ctl.empty() && line.substr(0, a) == "0") v2_path = std::string(path);
    for (std::string_view c : split(ctl, ','))
      if (c == "cpu") v1_path = std::string(path);
  }
  const bool v2 = !v1_path;
  const std::optional<std::string>& cg_path = v2 ? v2_path : v1_path;
  if (!cg_path || cg_path->empty() || (*cg_path)[0] != '/') return std::nullopt;
  // Its mount: mountinfo's fields 4 (the mount's root in the hierarchy) and 5 (the mount
  // point); after " - ", the file system type and its options (v1: ...,cpu,...).
  const auto mi = read_text(root + "/proc/self/mountinfo");
  if (!mi) return std::nullopt;
  std::string mount_point, mount_root;
  for (std::string_view line : split(*mi, '\n')) {
    const std::size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const auto pre = split(line.substr(0, dash), ' '), post = split(line.substr(dash + 3), ' ');
    if (pre.size() < 5 || post.size() < 3) continue;
    bool match = false;
    if (v2) {
      match = post[0] == "cgroup2";
    } else if (post[0] == "cgroup") {
      for (std::string_view o : split(post[2], ','))
        if (o == "cpu") match = true;
    }
    if (match) {
      mount_root = std::string(pre[3]);
      mount_point = std::string(pre[4]);
      break;
    }
  }
  if (mount_point.empty()) return std::nullopt;
  // The path below the mount: inside a container the mount's root is the container's own
  // cgroup and the thread's path starts with it.
  std::string rel = *cg_path;
  if (mount_root != "/" && rel.compare(0, mount_root.size(), mount_root) == 0 &&
      (rel.size() == mount_root.size() || rel[mount_root.size()] == '/'))
    rel = rel.substr(mount_root.size());
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  std::optional<double> best;
  for (;;) {  // this cgroup and every ancestor up to the mount point, the smallest limit
    if (auto l = level_limit(root + mount_point + rel, v2); l && (!best || *l < *best)) best = l;
    if (rel.empty()) break;
    const std::size_t slash = rel.rfind('/');
    rel = slash == std::string::npos ? std::string() : rel.substr(0, slash);
  }
  return best;
}

unsigned cpus_of_limit(double limit) {
  if (!(limit >= 1.0)) return 1;  // also NaN
  return limit >= double(kMaxQueues) ? kMaxQueues : unsigned(limit);
}

namespace {
std::string ranges_text(const std::vector<unsigned>& sorted) {
  std::string t;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    t += (t.empty() ? "" : ",") + std::to_string(sorted[i]) + (j > i ? "-" + std::to_string(sorted[j]) : "");
    i = j + 1;
  }
  return t;
}
}  // namespace

Parsed<std::vector<unsigned>> parse_cpus(const std::string& s, const std::vector<unsigned>& allowed) {
  constexpr unsigned kMax = CPU_SETSIZE - 1;
  const std::string range = "0.." + std::to_string(kMax);
  if (s.empty()) return std::string("cpus: expected a list of CPU numbers (0,1 or 0-3)");
  std::vector<unsigned> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = s.find(',', pos);
    const std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty()) return "cpus: '" + s + "' has an empty element (expected CPU numbers separated by commas)";
    const std::size_t dash = item.find('-');
    const std::string a = item.substr(0, dash), b = dash == std::string::npos ? a : item.substr(dash + 1);
    const auto lo = number(a, 0, kMax), hi = number(b, 0, kMax);
    if (!lo || !hi) {
      const std::string& bad = (!lo ? a : b).empty() ? item : !lo ? a : b;
      const bool digits = !bad.empty() && bad.find_first_not_of("0123456789") == std::string::npos;
      return "cpus: '" + bad + "' is not " + (digits ? "a CPU number in " + range : "a number (CPU " + range + ")");
    }
    if (*lo > *hi) return "cpus: range '" + item + "' runs backwards";
    for (auto c = *lo; c <= *hi; ++c) out.push_back(unsigned(c));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  for (unsigned c : out)
    if (!std::binary_search(allowed.begin(), allowed.end(), c))
      return "cpus: CPU " + std::to_string(c) + " is not one this process may run on (allowed: " +
             (allowed.empty() ? std::string("unknown") : ranges_text(allowed)) + ")";
  return out;
}

Parsed<std::vector<unsigned>> parse_cpus(const std::string& s) { return parse_cpus(s, allowed_cpus()); }

std::string cpus_text(const std::vector<unsigned>& cpus) {
  std::string t;
  for (unsigned c : cpus) t += (t.empty() ? "" : ",") + std::to_string(c);
  return t;
}

// ---------------------------------------------------------------------------------------------
// The settings: one description of each, read by both front ends. The command line gives a
// setting as a word followed by its values (`dstport 4789`, `srcport 1000 2000`, a flag alone:
// `udpcsum`, `noudpcsum`), or as an option (`--dev ofld0`, `--no-gro`: apply_setting); a TOML
// file as `key = value` in its tunnel table or at the top level. Both turn the value into the
// same words and call the same `apply`, so every rule, range and message is the setting's own.

namespace {

/// Which tables a daemon setting belongs to: the top level (host side, options on the command
/// line), every tunnel table, or the tables of the encapsulations with a capability
/// (tunnel::conf::Caps). The encapsulations' own settings are their rows (EncapKind::rows).
enum Where : unsigned { kTop = 1, kTunnel = 2, kEthernet = 4, kGroup = 8, kEncap = 16 };

using tunnel::conf::Arity;
using tunnel::conf::Value;

struct Ctx {
  DaemonConfig& cfg;
  const tunnel::EncapKind* kind;  // the tunnel table's encapsulation; null: the top level
  tunnel::conf::ReadState st{};   // its mode word, id and remote seen
  std::string mode_name() const { return std::string(st.mode); }
};

using Args = tunnel::conf::Args;
using Apply = std::function<std::optional<std::string>(Ctx&, const std::string& word, bool on, const Args& v)>;

struct Setting {
  const char* name;             ///< the setting: messages, TOML key, first word spelling
  std::vector<const char*> alt; ///< other spellings (words and TOML keys): vni, dstport, ...
  const char* off_word;         ///< a flag's "off" word (noudpcsum, nolearning); else null
  Arity arity;
  Value value;
  unsigned where;               ///< Where bits
  /// "Given once" groups it sets (a second setting of a group is an error naming both);
  /// empty: may repeat. `key` sets ikey and okey.
  std::vector<const char*> once;
  Apply apply;
};

std::optional<std::string> check_dev(const std::string& dev) {
  // IFNAMSIZ 16 with the NUL; the kernel refuses '/', ':' and white space in names.
  if (dev.empty() || dev.size() > 15 || dev == "." || dev == ".." ||
      dev.find_first_of("/: \t\n") != std::string::npos)
    return "dev: '" + dev + "' is not an interface name (1..15 characters, no '/', ':' or spaces)";
  return std::nullopt;
}
std::optional<std::string> check_address(const std::string& a) {
  const auto slash = a.find('/');
  const auto ip = tunnel::IpAddr::parse(a.substr(0, slash));
  const unsigned max = ip && ip->is_v6() ? 128 : 32;
  const bool prefix_ok = slash == std::string::npos || number(a.substr(slash + 1), 0, max).has_value();
  if (!ip || !prefix_ok)
    return "address: '" + a + "' is not an address with an optional prefix (192.0.2.1/24, fd00::1/64)";
  return std::nullopt;
}

#define SET(...) [](Ctx& c, const std::string& k, bool on, const Args& v) -> std::optional<std::string> { \
    (void)c; (void)k; (void)on; (void)v; __VA_ARGS__; return std::nullopt; }

const std::vector<Setting>& settings() {
  static const std::vector<Setting> kSettings = {
      // ---- top level: the host side (command-line options; TOML keys outside the tables)
      {"dev", {}, nullptr, Arity::One, Value::Str, kTop, {"dev"},
       SET(if (auto e = check_dev(v[0])) return e; c.cfg.dev = v[0])},
      {"address", {}, nullptr, Arity::One, Value::Str, kTop, {"address"},
       SET(if (auto e = check_address(v[0])) return e; c.cfg.address = v[0])},
      {"control", {}, nullptr, Arity::One, Value::Str, kTop, {"control"},
       SET(if (v[0].empty()) return std::string("control: expected a path"); c.cfg.control = v[0])},
      {"control-group", {}, nullptr, Arity::One, Value::Str, kTop, {"control-group"},
       SET(if (v[0].empty()) return std::string("control-group: expected a group name");
           c.cfg.control_group = v[0])},
      {"queues", {}, nullptr, Arity::One, Value::Any, kTop, {"queues"},
       SET(auto q = parse_queues(v[0]); if (auto* e = std::get_if<std::string>(&q)) return *e;
           c.cfg.queues = std::get<unsigned>(q))},
      {"cpus", {}, nullptr, Arity::List, Value::Any, kTop, {"cpus"},
       SET(auto l = parse_cpus(v[0]); if (auto* e = std::get_if<std::string>(&l)) return *e;
           c.cfg.cpus = std::get<std::vector<unsigned>>(l))},
      {"user", {}, nullptr, Arity::One, Value::Str, kTop, {"user"},
       SET(if (v[0].empty() || v[0].find_first_of(": \t\n/") != std::string::npos)
             return "user: '" + v[0] + "' is not a user name or uid";
           c.cfg.user = v[0])},
      {"log-format", {"log_format"}, nullptr, Arity::One, Value::Str, kTop, {"log-format"},
       SET(if (v[0] != "text" && v[0] != "json")
             return "log-format: '" + v[0] + "' is not text or json";
           c.cfg.log_format = v[0])},
      {"log-level", {"log_level"}, nullptr, Arity::One, Value::Str, kTop, {"log-level"},
       SET(static const std::set<std::string> kLevels = {"trace", "debug", "info", "warning", "error", "critical", "off"};
           if (!kLevels.count(v[0]))
             return "log-level: '" + v[0] + "' is not trace, debug, info, warning, error, critical or off";
           c.cfg.log_level = v[0])},
      {"metrics", {}, nullptr, Arity::One, Value::Any, kTop, {"metrics"},
       SET(auto l = parse_metrics_listen(v[0]); if (auto* e = std::get_if<std::string>(&l)) return *e;
           c.cfg.metrics = v[0])},
      {"offload", {}, "no-offload", Arity::Flag, Value::Any, kTop, {"offload"}, SET(c.cfg.offload = on)},
      {"gro", {}, "no-gro", Arity::Flag, Value::Any, kTop, {"gro"}, SET(c.cfg.gro = on)},
      // ---- every tunnel (the encapsulation's own rows: EncapKind::rows)
      // integrity mode (inner checksums elided toward peers that have it too)
      {"integrity", {}, nullptr, Arity::Flag, Value::Any, kTunnel, {"integrity"}, SET(c.cfg.integrity = on)},
      // peer sessions authenticated with a pre-shared key (HMAC-SHA-256; docs/peer-protocol.md)
      {"peer-key", {}, nullptr, Arity::One, Value::Str, kTunnel, {"peer-key"},
       SET(if (v[0].empty()) return std::string("peer-key: needs a FILE"); c.cfg.peer_key = v[0])},
      // underlay multicast group for flooding: `group ADDR dev IF` (iproute2 vxlan; Caps::group)
      {"group", {}, nullptr, Arity::One, Value::Str, kGroup, {"group"},
       SET(if (auto e = addr_arg(k, v[0], c.cfg.group)) return e;
           const auto& b = c.cfg.group.bytes;
           const bool mc = c.cfg.group.is_v6() ? b[0] == 0xFF : (b[0] & 0xF0) == 0xE0;
           if (!mc) return "group: " + v[0] + " is not a multicast address (224.0.0.0/4, ff00::/8)")},
      {"dev", {}, nullptr, Arity::One, Value::Str, kGroup, {"group-dev"},
       SET(if (auto e = check_dev(v[0])) return e; c.cfg.group_dev = v[0])},
      // ---- the Ethernet encapsulations (Caps::ethernet)
      // BGP EVPN through gobgpd (docs/evpn.md)
      {"evpn", {}, "noevpn", Arity::Flag, Value::Any, kEthernet, {"evpn"}, SET(c.cfg.evpn = on)},
      {"evpn-server", {"evpn_server"}, nullptr, Arity::One, Value::Str, kEthernet, {"evpn-server"},
       SET(if (v[0].empty() || v[0].find(':') == std::string::npos)
             return "evpn-server: '" + v[0] + "' is not HOST:PORT";
           c.cfg.evpn_server = v[0]; c.cfg.evpn = true)},
      // EVPN: the RD's router ID and duplicate MAC detection, spelled as FRR spells them
      // (`bgp router-id`, `dup-addr-detection [max-moves N time S]`, `... freeze S|permanent`)
      {"router-id", {"router_id"}, nullptr, Arity::One, Value::Str, kEthernet, {"router-id"},
       SET(auto ip = tunnel::IpAddr::parse(v[0]);
           if (!ip || ip->family != 4) return "router-id: '" + v[0] + "' is not an IPv4 address (A.B.C.D)";
           c.cfg.evpn_router_id = *ip)},
      {"dup-addr-detection", {}, "no-dup-addr-detection", Arity::Flag, Value::Any, kEthernet, {"dup-addr-detection"},
       SET(c.cfg.dup_addr_detection = on)},
      {"dup-addr-detection-max-moves", {"dup_addr_detection_max_moves"}, nullptr, Arity::One, Value::Any, kEthernet,
       {"dup-addr-detection-max-moves"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 2, 1000, n)) return e;
           c.cfg.dad_max_moves = std::uint32_t(n))},
      {"dup-addr-detection-time", {"dup_addr_detection_time"}, nullptr, Arity::One, Value::Any, kEthernet,
       {"dup-addr-detection-time"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 2, 1800, n)) return e;
           c.cfg.dad_time_s = std::uint32_t(n))},
      {"dup-addr-detection-freeze", {"dup_addr_detection_freeze"}, nullptr, Arity::One, Value::Any, kEthernet,
       {"dup-addr-detection-freeze"},
       SET(if (v[0] == "permanent") { c.cfg.dad_freeze_permanent = true; return std::nullopt; }
           std::uint64_t n = 0; if (auto e = num_arg(k, v, 30, 3600, n)) return e;
           c.cfg.dad_freeze_s = std::uint32_t(n))},
      // static forwarding entries: `fdb MAC ADDR` (TOML: [[fdb]] tables with mac and remote)
      {"fdb", {}, nullptr, Arity::Two, Value::Str, kEthernet, {},
       SET(auto mac = parse_mac(v[0]); if (!mac) return "fdb: '" + v[0] + "' is not a MAC address";
           tunnel::IpAddr ip; if (auto e = addr_arg("fdb", v[1], ip)) return e;
           c.cfg.static_fdb.emplace_back(*mac, ip))},
  };
  return kSettings;
}
#undef SET

/// The top level's settings (host side).
const std::vector<Setting>& top_settings() {
  static const std::vector<Setting> k = [] {
    std::vector<Setting> v;
    for (const auto& s : settings())
      if (s.where & kTop) v.push_back(s);
    return v;
  }();
  return k;
}

/// The settings of each encapsulation's table, in encap_kinds() order: its own rows, then the
/// daemon's for every tunnel and for the capabilities it has.
const std::vector<std::vector<Setting>>& mode_settings() {
  static const std::vector<std::vector<Setting>> k = [] {
    std::vector<std::vector<Setting>> all;
    for (const tunnel::EncapKind* kind : tunnel::encap_kinds()) {
      std::vector<Setting> v;
      for (const auto& r : kind->rows)
        v.push_back({r.name, r.alt, r.off_word, r.arity, r.value, kEncap, r.once,
                     [apply = r.apply](Ctx& c, const std::string& w, bool on, const Args& a) {
                       return apply(c.cfg.tunnel, c.st, w, on, a);
                     }});
      const unsigned want = kTunnel | (kind->caps.ethernet ? unsigned(kEthernet) : 0u) |
                            (kind->caps.group ? unsigned(kGroup) : 0u);
      for (const auto& s : settings())
        if (s.where & want) v.push_back(s);
      all.push_back(std::move(v));
    }
    return all;
  }();
  return k;
}

/// The settings of ctx's table (the top level or its encapsulation's).
const std::vector<Setting>& table_of(const Ctx& c) {
  if (!c.kind) return top_settings();
  const auto kinds = tunnel::encap_kinds();
  const auto i = std::size_t(std::find(kinds.begin(), kinds.end(), c.kind) - kinds.begin());
  return mode_settings()[i];
}

/// The setting `word` spells in `table`; `on` gets a flag's value. Null when none.
const Setting* find_setting(const std::string& word, const std::vector<Setting>& table, bool& on) {
  for (const auto& s : table) {
    on = true;
    if (word == s.name) return &s;
    for (const char* a : s.alt)
      if (word == a) return &s;
    if (s.off_word && word == s.off_word) {
      on = false;
      return &s;
    }
  }
  return nullptr;
}

/// "Given once": records the groups a setting sets; an error naming it when one is set already.
class Once {
 public:
  std::optional<std::string> mark(const Setting& s, const std::string& word) {
    for (const char* g : s.once)
      for (const auto& [seen, by] : seen_)
        if (seen == g) return word + ": " + g + " is already set (by '" + by + "'); give it once";
    for (const char* g : s.once) seen_.emplace_back(g, word);
    return std::nullopt;
  }

 private:
  std::vector<std::pair<std::string, std::string>> seen_;
};

/// The error for a word that is no setting of ctx's mode.
std::string unknown(const std::string& k, const Ctx& c) {
  bool on = false;
  const auto kinds = tunnel::encap_kinds();
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i] != c.kind && find_setting(k, mode_settings()[i], on)) {
      if (k == "id" || k == "vni") {
        const auto vni = std::find_if(kinds.begin(), kinds.end(), [](const auto* x) { return x->caps.vni; });
        return k + ": " + c.mode_name() + " has no VNI (that is a " + std::string((*vni)->words[0]) + " setting)";
      }
      return k + ": not a " + c.mode_name() + " setting (it is one of " + std::string(kinds[i]->words[0]) + ")";
    }
  return k + ": unknown setting";
}

/// Apply one setting with its values (arity already checked), honouring "given once".
std::optional<std::string> apply(Ctx& c, Once& once, const Setting& s, const std::string& word, bool on,
                                 const Args& v) {
  if (auto e = once.mark(s, word)) return e;
  return s.apply(c, word, on, v);
}

/// The command-line front end: words after the mode word.
std::optional<std::string> parse_words(const std::vector<std::string>& w, Ctx& c) {
  Once once;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::string& k = w[i];
    bool on = true;
    const Setting* s = find_setting(k, table_of(c), on);
    if (!s) return unknown(k, c);
    const std::size_t want = s->arity == Arity::Flag ? 0 : s->arity == Arity::Two ? 2 : 1;
    if (want && i + want >= w.size()) {
      if (want == 1) return k + ": missing value";
      if (std::string(s->name) == "srcport") return std::string("srcport: needs MIN and MAX");
      return k + ": needs two values";
    }
    Args v(w.begin() + std::ptrdiff_t(i + 1), w.begin() + std::ptrdiff_t(i + 1 + want));
    if (auto e = apply(c, once, *s, k, on, v)) return e;
    i += want;
  }
  return std::nullopt;
}

/// Checks after every setting was read (the same for both front ends).
std::optional<std::string> finish(Ctx& c) {
  auto& cfg = c.cfg;
  const tunnel::EncapKind& kind = *c.kind;
  const auto enc = tunnel::make_encapsulation(cfg.tunnel);
  const auto& local = cfg.tunnel.common().local;
  if (kind.caps.vni && !c.st.have_id) return std::string("id: the VNI is required (id VNI)");
  for (const auto& r : enc->configured_remotes())
    if (!r.empty())
      if (auto e = check_remote(r, local)) return e;
  if (kind.caps.group) {
    if (!cfg.group_dev.empty() && cfg.group.empty())
      return std::string("dev: the underlay interface of a multicast group; give group ADDR too");
    if (!cfg.group.empty() && !local.empty() && cfg.group.is_v6() != local.is_v6())
      return "group: " + cfg.group.to_string() + " and local " + local.to_string() +
             " are of different families";
  }
  if (kind.caps.ethernet && cfg.evpn && local.empty())
    return std::string("evpn: needs local ADDR (the VTEP address the routes carry)");
  if (kind.read_check)
    if (auto e = kind.read_check(cfg.tunnel, c.st.mode)) return e;
  // A multicast group or EVPN supplies the remotes; else the configuration must name one.
  if (auto e = kind.validate(cfg.tunnel, cfg.group.empty() && !cfg.evpn)) return e;
  // Integrity mode: the outer checksum protects the inner packet once its own checksum is
  // elided (each encapsulation says what that takes).
  if (cfg.integrity)
    if (auto e = enc->integrity_error()) return e;
  return std::nullopt;
}

/// Start a mode in cfg (its table reset to the defaults); `mode` is a word of
/// tunnel::encap_kinds().
Ctx begin_mode(DaemonConfig& cfg, const std::string& mode) {
  const tunnel::EncapKind* kind = tunnel::find_kind(mode);
  Ctx c{cfg, kind};
  kind->reset(cfg.tunnel);
  c.st.mode = *std::find(kind->words.begin(), kind->words.end(), mode);  // the kind's own storage
  return c;
}

std::optional<std::string> parse_mode_words(const std::string& mode, const std::vector<std::string>& w,
                                            DaemonConfig& cfg) {
  Ctx c = begin_mode(cfg, mode);
  if (auto e = parse_words(w, c)) return e;
  return finish(c);
}

/// The TOML front end: one node → the setting's value words, by its arity and value type;
/// an error naming `key` (the caller prefixes the table) when the type does not fit.
std::optional<std::string> toml_values(const Setting& s, const std::string& key, const toml::node& n,
                                       bool& on, std::vector<Args>& out) {
  auto scalar = [&](const toml::node& x, std::string& w) -> std::optional<std::string> {
    const bool ok_int = s.value != Value::Str && x.is_integer();
    const bool ok_str = s.value != Value::Int && x.is_string();
    if (ok_int && s.value == Value::AnyHex) {
      const auto i = *x.value<std::int64_t>();  // its own value: 0x.. for the hexadecimal word
      char h[24];
      std::snprintf(h, sizeof h, "0x%llx", static_cast<unsigned long long>(i));
      w = i < 0 ? std::to_string(i) : h;
    } else if (ok_int) w = std::to_string(*x.value<std::int64_t>());
    else if (ok_str) w = *x.value<std::string>();
    else
      return key + ": expected " +
             (s.value == Value::Int ? "an integer" : s.value == Value::Str ? "a string" : "an integer or a string");
    return std::nullopt;
  };
  switch (s.arity) {
    case Arity::Flag:
      if (!n.is_boolean()) return key + ": expected true or false";
      on = *n.value<bool>();
      out.push_back({});
      return std::nullopt;
    case Arity::One: {
      std::string w;
      if (auto e = scalar(n, w)) return e;
      out.push_back({w});
      return std::nullopt;
    }
    case Arity::Two: {
      const auto* a = n.as_array();
      if (!a || a->size() != 2) return key + ": expected [" + (key == "srcport" ? "MIN, MAX" : "A, B") + "]";
      Args v(2);
      for (std::size_t i = 0; i < 2; ++i)
        if (auto e = scalar(*a->get(i), v[i])) return e;
      out.push_back(v);
      return std::nullopt;
    }
    case Arity::List: {
      if (const auto* a = n.as_array()) {
        std::string all;
        for (auto&& e : *a) {
          std::string w;
          if (auto err = scalar(e, w)) return err;
          all += (all.empty() ? "" : ",") + w;
        }
        out.push_back({all});
        return std::nullopt;
      }
      std::string w;
      if (auto e = scalar(n, w)) return e;
      out.push_back({w});
      return std::nullopt;
    }
    case Arity::Many: {
      if (const auto* a = n.as_array()) {
        for (auto&& e : *a) {
          std::string w;
          if (auto err = scalar(e, w)) return err;
          out.push_back({w});
        }
        return std::nullopt;
      }
      std::string w;
      if (auto e = scalar(n, w)) return e;
      out.push_back({w});
      return std::nullopt;
    }
  }
  return std::nullopt;
}

/// Apply the keys of one TOML table (the top level: kTop, with the tunnel tables skipped).
std::optional<std::string> apply_table(const toml::table& t, Ctx& c, Once& once, const std::string& prefix) {
  for (auto&& [k, node] : t) {
    const std::string key(k.str());
    if (!c.kind && (tunnel::find_kind(key) || key == "fdb")) continue;  // the tunnel tables
    bool on = true;
    const Setting* s = find_setting(key, table_of(c), on);
    // a TOML key is the setting's name or alias, never its "off" word
    if (!s || (s->off_word && key == s->off_word)) {
      if (!c.kind) return key + ": unknown setting";
      return prefix + unknown(key, c);
    }
    std::vector<Args> vals;
    if (auto e = toml_values(*s, key, node, on, vals)) return prefix + *e;
    for (const auto& v : vals)
      if (auto e = apply(c, once, *s, key, on, v)) return prefix + *e;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> apply_setting(DaemonConfig& cfg, const std::string& name,
                                         const std::vector<std::string>& values) {
  bool on = true;
  const Setting* s = find_setting(name, top_settings(), on);
  if (!s) return name + ": unknown setting";
  const std::size_t want = s->arity == Arity::Flag ? 0 : s->arity == Arity::Two ? 2 : 1;
  if (values.size() != want) return name + ": expected " + std::to_string(want) + " value(s)";
  Ctx c{cfg, nullptr};
  return s->apply(c, name, on, values);
}

std::optional<std::string> parse_vxlan_words(const std::vector<std::string>& w, DaemonConfig& cfg) {
  return parse_mode_words("vxlan", w, cfg);
}

std::optional<std::string> parse_gue_words(const std::vector<std::string>& w, DaemonConfig& cfg) {
  return parse_mode_words("gue", w, cfg);
}

std::optional<std::string> parse_gre_words(const std::vector<std::string>& w, bool ip6,
                                           DaemonConfig& cfg) {
  return parse_mode_words(ip6 ? "ip6gre" : "gre", w, cfg);
}

std::optional<std::string> parse_tunnel_words(const std::vector<std::string>& w, DaemonConfig& cfg) {
  if (w.empty()) return "expected a tunnel mode: " + tunnel::mode_words_text() + ", then its settings";
  const std::string& m = w[0];
  if (!tunnel::find_kind(m)) return "unknown tunnel mode '" + m + "' (expected " + tunnel::mode_words_text() + ")";
  return parse_mode_words(m, std::vector<std::string>(w.begin() + 1, w.end()), cfg);
}

Parsed<DaemonConfig> parse_toml(const std::string& text, const std::string& origin) {
  DaemonConfig cfg;
  toml::table t;
  try {
    t = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return origin + ": " + std::string(e.description()) + " (line " +
           std::to_string(e.source().begin.line) + ")";
  }
  // the top level: host settings
  {
    Ctx top{cfg, nullptr};
    Once once;
    if (auto e = apply_table(t, top, once, "")) return *e;
  }
  // the tunnel table: exactly one, named by a mode word of tunnel::encap_kinds(); without one
  // the first encapsulation's (the errors then name its missing settings)
  const std::string first(tunnel::encap_kinds().front()->words.front());
  std::string mode;
  std::vector<std::string> fdb_modes;  // the encapsulations [[fdb]] entries belong to
  for (const tunnel::EncapKind* kind : tunnel::encap_kinds()) {
    if (kind->caps.ethernet) fdb_modes.insert(fdb_modes.end(), kind->words.begin(), kind->words.end());
    for (std::string_view w : kind->words) {
      const std::string m(w);
      if (!t.contains(m)) continue;
      if (!t[m].is_table()) return m + ": expected a table";
      if (!mode.empty())
        return m + ": only one tunnel table per file (already have " + mode + ")" +
               (mode == first || m == first ? "; a file configures one tunnel" : "");
      mode = m;
    }
  }
  if (t.contains("fdb") && std::find(fdb_modes.begin(), fdb_modes.end(), mode) == fdb_modes.end()) {
    std::string tables, names;
    for (std::size_t i = 0; i < fdb_modes.size(); ++i) {
      const char* sep = i == 0 ? "" : i + 1 == fdb_modes.size() ? " or " : ", ";
      tables += sep + ("[" + fdb_modes[i] + "]");
      names += sep + fdb_modes[i];
    }
    return mode.empty() ? "fdb: static entries need a " + tables + " table"
                        : mode + ": a file configures one tunnel; [[fdb]] entries belong to " + names;
  }
  if (mode.empty()) mode = first;
  Ctx c = begin_mode(cfg, mode);
  Once once;
  const std::string prefix = mode + ".";
  if (const auto* tt = t[mode].as_table())
    if (auto e = apply_table(*tt, c, once, prefix)) return *e;
  if (t.contains("fdb")) {
    const auto* arr = t["fdb"].as_array();
    if (!arr) return std::string("fdb: expected [[fdb]] tables with mac and remote");
    bool on = true;
    const Setting* s = find_setting("fdb", table_of(c), on);
    for (auto&& e : *arr) {
      const auto* et = e.as_table();
      auto mac = et ? (*et)["mac"].value<std::string>() : std::nullopt;
      auto rem = et ? (*et)["remote"].value<std::string>() : std::nullopt;
      if (!mac || !rem) return std::string("fdb: each entry needs mac = \"..\" and remote = \"..\"");
      if (auto err = apply(c, once, *s, "fdb", true, {*mac, *rem})) return *err;
    }
  }
  if (auto e = finish(c)) return prefix + *e;
  return cfg;
}

std::optional<std::string> validate_local(const DaemonConfig& cfg) {
  if (auto e = check_dev(cfg.dev)) return e;
  if (!cfg.address.empty())
    if (auto e = check_address(cfg.address)) return e;
  return std::nullopt;
}

Parsed<DaemonConfig> parse_toml_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "--config: cannot open " + path;
  std::string text;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return parse_toml(text, path);
}

}  // namespace ofld::daemon

// `ofld tunnel` configuration parsing (words and TOML).
#include "ofld/daemon/config.hpp"

#include <charconv>
#include <cstdio>

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

std::optional<std::uint64_t> number(const std::string& s, std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::string bad_number(const std::string& key, const std::string& val, std::uint64_t lo,
                       std::uint64_t hi) {
  return key + ": '" + val + "' is not a number in " + std::to_string(lo) + ".." +
         std::to_string(hi);
}

/// Settings that take one value or pick one side of a pair: each may be given once. `words`
/// are the spellings that set the same thing (udpcsum/noudpcsum; id/vni; key/ikey/okey).
class Once {
 public:
  /// Records `setting` (the group's name, used in the message); an error when given before.
  std::optional<std::string> mark(const std::string& setting, const std::string& word) {
    for (const auto& [s, w] : seen_)
      if (s == setting)
        return word + ": " + setting + " is already set (by '" + w + "'); give it once";
    seen_.emplace_back(setting, word);
    return std::nullopt;
  }

 private:
  std::vector<std::pair<std::string, std::string>> seen_;
};

/// A remote must be a unicast address other than local: VXLAN/GUE/GRE endpoints here send
/// unicast only (no multicast groups), and a tunnel to itself loops.
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
  auto n = number(s, 1, kMaxQueues);
  if (!n) return bad_number("queues", s, 1, kMaxQueues);
  return unsigned(*n);
}

std::optional<std::string> parse_vxlan_words(const std::vector<std::string>& w, DaemonConfig& cfg) {
  auto& v = cfg.vxlan;
  bool have_id = false;
  Once once;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::string& k = w[i];
    static const std::vector<std::pair<std::string, std::vector<std::string>>> kSingle = {
        {"id", {"id", "vni"}}, {"local", {"local"}}, {"dstport", {"dstport"}},
        {"srcport", {"srcport"}}, {"udpcsum", {"udpcsum", "noudpcsum"}}, {"ttl", {"ttl"}},
        {"tos", {"tos"}}, {"mtu", {"mtu"}}, {"ageing", {"ageing"}},
        {"learning", {"learning", "nolearning"}}};
    for (const auto& [setting, spellings] : kSingle)
      for (const auto& sp : spellings)
        if (k == sp)
          if (auto e = once.mark(setting, k)) return e;
    auto arg = [&](std::size_t n) -> const std::string* {
      return i + n < w.size() ? &w[i + n] : nullptr;
    };
    auto num = [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t& out) -> std::optional<std::string> {
      const std::string* a = arg(1);
      if (!a) return k + ": missing value";
      auto n = number(*a, lo, hi);
      if (!n) return bad_number(k, *a, lo, hi);
      out = *n;
      ++i;
      return std::nullopt;
    };
    std::uint64_t n = 0;
    if (k == "id" || k == "vni") {
      if (auto e = num(0, 0xFFFFFF, n)) return e;
      v.vni = std::uint32_t(n);
      have_id = true;
    } else if (k == "local" || k == "remote") {
      const std::string* a = arg(1);
      if (!a) return k + ": missing address";
      auto ip = tunnel::IpAddr::parse(*a);
      if (!ip) return k + ": '" + *a + "' is not an IPv4 or IPv6 address";
      if (k == "local") {
        v.local = *ip;
      } else {
        for (const auto& r : v.remotes)
          if (r == *ip) return "remote: " + ip->to_string() + " is given twice";
        v.remotes.push_back(*ip);
      }
      ++i;
    } else if (k == "dstport") {
      if (auto e = num(1, 65535, n)) return e;
      v.dstport = std::uint16_t(n);
    } else if (k == "srcport") {
      const std::string *a = arg(1), *b = arg(2);
      if (!a || !b) return std::string("srcport: needs MIN and MAX");
      auto lo = number(*a, 1, 65535), hi = number(*b, 1, 65535);
      if (!lo) return bad_number("srcport MIN", *a, 1, 65535);
      if (!hi) return bad_number("srcport MAX", *b, 1, 65535);
      v.port_min = std::uint16_t(*lo);
      v.port_max = std::uint16_t(*hi);
      i += 2;
    } else if (k == "udpcsum") {
      v.udp_csum = true;
    } else if (k == "noudpcsum") {
      v.udp_csum = false;
    } else if (k == "udp6zerocsumtx") {
      v.udp6_zero_csum_tx = true;
    } else if (k == "udp6zerocsumrx") {
      v.udp6_zero_csum_rx = true;
    } else if (k == "remcsumtx") {
      v.remcsum_tx = true;
    } else if (k == "remcsumrx") {
      v.remcsum_rx = true;
    } else if (k == "remcsum-nopartial" || k == "remcsum_nopartial") {
      v.remcsum_nopartial = true;
    } else if (k == "ttl") {
      if (auto e = num(1, 255, n)) return e;
      v.ttl = std::uint8_t(n);
    } else if (k == "tos") {
      // iproute2's `tos inherit` is the kernel's tos 1 (vxlan_xmit_one: outer DSCP from the
      // inner header); the ECN bits come from the inner packet either way (RFC 6040 §4.1).
      if (const std::string* a = arg(1); a && *a == "inherit") {
        v.tos_inherit = true;
        ++i;
      } else {
        if (auto e = num(0, 255, n)) return e;
        v.tos = std::uint8_t(n);
        v.tos_inherit = n == 1;
      }
    } else if (k == "mtu") {
      if (auto e = num(68, 65521, n)) return e;
      v.mtu = int(n);
    } else if (k == "ageing") {
      if (auto e = num(0, 1000000, n)) return e;
      v.ageing_s = std::uint32_t(n);
    } else if (k == "nolearning") {
      v.learning = false;
    } else if (k == "learning") {
      v.learning = true;
    } else if (k == "fdb") {
      const std::string *a = arg(1), *b = arg(2);
      if (!a || !b) return std::string("fdb: needs MAC and ADDR");
      auto mac = parse_mac(*a);
      if (!mac) return "fdb: '" + *a + "' is not a MAC address";
      auto ip = tunnel::IpAddr::parse(*b);
      if (!ip) return "fdb: '" + *b + "' is not an IPv4 or IPv6 address";
      cfg.static_fdb.emplace_back(*mac, *ip);
      i += 2;
    } else {
      return k + ": unknown setting";
    }
  }
  if (!have_id) return std::string("id: the VNI is required (id VNI)");
  for (const auto& r : v.remotes)
    if (auto e = check_remote(r, v.local)) return e;
  return tunnel::validate(v);
}

namespace {

/// GRE key: a 32-bit number or a dotted quad (iproute2 `key 1.2.3.4`).
std::optional<std::uint32_t> gre_key(const std::string& s) {
  if (auto n = number(s, 0, 0xFFFFFFFFull)) return std::uint32_t(*n);
  unsigned a, b, c, d;
  char tail;
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a < 256 && b < 256 &&
      c < 256 && d < 256)
    return (a << 24) | (b << 16) | (c << 8) | d;
  return std::nullopt;
}

/// Words shared by gue and gre/ip6gre; `mode` names the tunnel in messages.
std::optional<std::string> parse_l3_words(const std::vector<std::string>& w, const std::string& mode,
                                          tunnel::IpTunnelConfig& v) {
  const bool gue = mode == "gue";
  bool have_remote = false;
  Once once;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::string& k = w[i];
    // key sets ikey and okey, csum sets icsum and ocsum: each direction may be set once.
    static const std::vector<std::pair<std::string, std::vector<std::string>>> kSingle = {
        {"local", {"local"}}, {"ttl", {"ttl"}}, {"tos", {"tos"}}, {"mtu", {"mtu"}},
        {"port", {"port", "dstport", "encap-dport"}}, {"udpcsum", {"udpcsum", "noudpcsum"}},
        {"ikey", {"key", "ikey"}}, {"okey", {"key", "okey"}}};
    for (const auto& [setting, spellings] : kSingle)
      for (const auto& sp : spellings)
        if (k == sp)
          if (auto e = once.mark(setting, k)) return e;
    const std::string* a = i + 1 < w.size() ? &w[i + 1] : nullptr;
    auto num = [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t& out) -> std::optional<std::string> {
      if (!a) return k + ": missing value";
      auto n = number(*a, lo, hi);
      if (!n) return bad_number(k, *a, lo, hi);
      out = *n;
      ++i;
      return std::nullopt;
    };
    std::uint64_t n = 0;
    if (k == "local" || k == "remote") {
      if (!a) return k + ": missing address";
      auto ip = tunnel::IpAddr::parse(*a);
      if (!ip) return k + ": '" + *a + "' is not an IPv4 or IPv6 address";
      if (k == "remote") {
        if (have_remote) return "remote: a " + mode + " tunnel has exactly one remote";
        have_remote = true;
        v.remote = *ip;
      } else {
        v.local = *ip;
      }
      ++i;
    } else if (k == "ttl") {
      if (auto e = num(1, 255, n)) return e;
      v.ttl = std::uint8_t(n);
    } else if (k == "tos") {
      // `tos inherit` (= tos 1): outer DSCP from the inner header; ECN from the inner
      // packet either way (RFC 6040 §4.1).
      if (a && *a == "inherit") {
        v.tos_inherit = true;
        ++i;
      } else {
        if (auto e = num(0, 255, n)) return e;
        v.tos = std::uint8_t(n);
        v.tos_inherit = n == 1;
      }
    } else if (k == "mtu") {
      if (auto e = num(68, 65535, n)) return e;
      v.mtu = int(n);
    } else if (gue && (k == "port" || k == "dstport" || k == "encap-dport")) {
      if (auto e = num(1, 65535, n)) return e;
      v.port = std::uint16_t(n);
    } else if (gue && k == "udpcsum") {
      v.udp_csum = true;
    } else if (gue && k == "noudpcsum") {
      v.udp_csum = false;
    } else if (gue && k == "udp6zerocsumtx") {
      v.udp6_zero_csum_tx = true;
    } else if (gue && k == "udp6zerocsumrx") {
      v.udp6_zero_csum_rx = true;
    } else if (gue && k == "remcsumtx") {
      v.remcsum_tx = true;
    } else if (gue && k == "remcsumrx") {
      v.remcsum_rx = true;
    } else if (gue && (k == "remcsum-nopartial" || k == "remcsum_nopartial")) {
      v.remcsum_nopartial = true;
    } else if (!gue && (k == "key" || k == "ikey" || k == "okey")) {
      if (!a) return k + ": missing value (a number or a dotted quad)";
      auto key = gre_key(*a);
      if (!key) return k + ": '" + *a + "' is not a number in 0..4294967295 or a dotted quad";
      if (k != "okey") v.ikey = *key;
      if (k != "ikey") v.okey = *key;
      ++i;
    } else if (!gue && (k == "csum" || k == "icsum" || k == "ocsum")) {
      if (k != "ocsum") v.icsum = true;
      if (k != "icsum") v.ocsum = true;
    } else if (k == "id" || k == "vni") {
      return k + ": " + mode + " has no VNI (that is a vxlan setting)";
    } else {
      return k + ": unknown " + mode + " setting";
    }
  }
  if (!v.remote.empty())
    if (auto e = check_remote(v.remote, v.local)) return e;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> parse_gue_words(const std::vector<std::string>& w, DaemonConfig& cfg) {
  cfg.mode = TunnelMode::Gue;
  cfg.ip = tunnel::IpTunnelConfig{};
  cfg.ip.kind = tunnel::IpTunnelKind::Gue;
  if (auto e = parse_l3_words(w, "gue", cfg.ip)) return e;
  return tunnel::validate(cfg.ip);
}

std::optional<std::string> parse_gre_words(const std::vector<std::string>& w, bool ip6,
                                           DaemonConfig& cfg) {
  const std::string mode = ip6 ? "ip6gre" : "gre";
  cfg.mode = TunnelMode::Gre;
  cfg.ip = tunnel::IpTunnelConfig{};
  cfg.ip.kind = tunnel::IpTunnelKind::Gre;
  if (auto e = parse_l3_words(w, mode, cfg.ip)) return e;
  for (const auto* a : {&cfg.ip.local, &cfg.ip.remote}) {
    if (a->empty()) continue;
    const char* which = a == &cfg.ip.local ? "local" : "remote";
    if (ip6 && !a->is_v6())
      return std::string(which) + ": " + a->to_string() + " is IPv4; ip6gre needs IPv6 addresses (use gre)";
    if (!ip6 && a->is_v6())
      return std::string(which) + ": " + a->to_string() + " is IPv6; gre needs IPv4 addresses (use ip6gre)";
  }
  return tunnel::validate(cfg.ip);
}

std::optional<std::string> parse_tunnel_words(const std::vector<std::string>& w, DaemonConfig& cfg) {
  if (w.empty())
    return std::string("expected a tunnel mode: vxlan, gue, gre or ip6gre, then its settings");
  std::vector<std::string> rest(w.begin() + 1, w.end());
  const std::string& m = w[0];
  if (m == "vxlan") {
    cfg.mode = TunnelMode::Vxlan;
    return parse_vxlan_words(rest, cfg);
  }
  if (m == "gue") return parse_gue_words(rest, cfg);
  if (m == "gre" || m == "ip6gre") return parse_gre_words(rest, m == "ip6gre", cfg);
  return "unknown tunnel mode '" + m + "' (expected vxlan, gue, gre or ip6gre)";
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
  // Convert the TOML into the words form so that both share one set of rules and messages.
  std::vector<std::string> w, l3w;
  std::string l3_mode;
  bool have_vxlan = false;
  std::optional<std::string> err;
  auto scalar = [&](const toml::node& n, const std::string& key) -> std::optional<std::string> {
    if (n.is_string()) return *n.value<std::string>();
    if (n.is_integer()) return std::to_string(*n.value<std::int64_t>());
    err = key + ": expected a string or an integer";
    return std::nullopt;
  };
  for (auto&& [k, node] : t) {
    std::string key(k.str());
    if (key == "dev") {
      auto s = node.is_string() ? node.value<std::string>() : std::nullopt;
      if (!s || s->empty() || s->size() > 15) return std::string("dev: expected an interface name of 1..15 characters");
      cfg.dev = *s;
    } else if (key == "address") {
      auto s = node.is_string() ? node.value<std::string>() : std::nullopt;
      if (!s) return std::string("address: expected a string like \"192.0.2.1/24\"");
      cfg.address = *s;
    } else if (key == "control") {
      auto s = node.is_string() ? node.value<std::string>() : std::nullopt;
      if (!s) return std::string("control: expected a path");
      cfg.control = *s;
    } else if (key == "queues") {
      if (!node.is_integer()) return std::string("queues: expected an integer in 1..") + std::to_string(kMaxQueues);
      auto q = parse_queues(std::to_string(*node.value<std::int64_t>()));
      if (auto* e = std::get_if<std::string>(&q)) return *e;
      cfg.queues = std::get<unsigned>(q);
    } else if (key == "offload" || key == "gro") {
      if (!node.is_boolean()) return key + ": expected true or false";
      (key == "gro" ? cfg.gro : cfg.offload) = *node.value<bool>();
    } else if (key == "vxlan") {
      auto* vt = node.as_table();
      if (!vt) return std::string("vxlan: expected a table");
      have_vxlan = true;
      for (auto&& [vk, vn] : *vt) {
        std::string name(vk.str());
        if (vn.is_boolean()) {
          auto b = vn.value<bool>();
          if (name == "udpcsum") w.push_back(*b ? "udpcsum" : "noudpcsum");
          else if (name == "learning") w.push_back(*b ? "learning" : "nolearning");
          else if (name == "udp6zerocsumtx" || name == "udp6zerocsumrx" || name == "remcsumtx" ||
                   name == "remcsumrx" || name == "remcsum_nopartial" ||
                   name == "remcsum-nopartial") {
            if (*b) w.push_back(name);
          } else {
            return "vxlan." + name + ": unknown setting or not a boolean setting";
          }
        } else if (auto* arr = vn.as_array()) {
          if (name != "remote" && name != "srcport") return "vxlan." + name + ": unexpected array";
          if (name == "srcport") {
            if (arr->size() != 2) return std::string("vxlan.srcport: expected [MIN, MAX]");
            w.push_back("srcport");
          }
          for (auto&& e : *arr) {
            if (name == "remote") w.push_back("remote");
            auto s = scalar(e, "vxlan." + name);
            if (!s) return *err;
            w.push_back(*s);
          }
        } else {
          auto s = scalar(vn, "vxlan." + name);
          if (!s) return *err;
          w.push_back(name);
          w.push_back(*s);
        }
      }
    } else if (key == "gue" || key == "gre" || key == "ip6gre") {
      auto* tt = node.as_table();
      if (!tt) return key + ": expected a table";
      if (!l3_mode.empty()) return key + ": only one tunnel table per file (already have " + l3_mode + ")";
      l3_mode = key;
      for (auto&& [vk, vn] : *tt) {
        std::string name(vk.str());
        const std::string full = key + "." + name;
        if (vn.is_boolean()) {
          bool b = *vn.value<bool>();
          if (name == "udpcsum") l3w.push_back(b ? "udpcsum" : "noudpcsum");
          else if (name == "udp6zerocsumtx" || name == "udp6zerocsumrx" || name == "remcsumtx" ||
                   name == "remcsumrx" || name == "remcsum_nopartial" || name == "remcsum-nopartial" ||
                   name == "csum" || name == "icsum" || name == "ocsum") {
            if (b) l3w.push_back(name);
          } else {
            return full + ": unknown setting or not a boolean setting";
          }
        } else if (vn.is_string() || vn.is_integer()) {
          if (name == "udpcsum" || name == "csum" || name == "icsum" || name == "ocsum" ||
              name == "remcsumtx" || name == "remcsumrx" || name == "remcsum_nopartial" ||
              name == "udp6zerocsumtx" || name == "udp6zerocsumrx")
            return full + ": expected true or false";
          auto sv = scalar(vn, full);
          if (!sv) return *err;
          l3w.push_back(name);
          l3w.push_back(*sv);
        } else {
          return full + ": expected a string, an integer or a boolean";
        }
      }
    } else if (key == "fdb") {
      auto* arr = node.as_array();
      if (!arr) return std::string("fdb: expected [[fdb]] tables with mac and remote");
      for (auto&& e : *arr) {
        auto* et = e.as_table();
        auto mac = et ? (*et)["mac"].value<std::string>() : std::nullopt;
        auto rem = et ? (*et)["remote"].value<std::string>() : std::nullopt;
        if (!mac || !rem) return std::string("fdb: each entry needs mac = \"..\" and remote = \"..\"");
        w.insert(w.end(), {"fdb", *mac, *rem});
      }
    } else {
      return key + ": unknown setting";
    }
  }
  if (!l3_mode.empty()) {
    if (have_vxlan || !w.empty())
      return l3_mode + ": a file configures one tunnel; remove the [vxlan] table and [[fdb]] entries";
    auto e = l3_mode == "gue" ? parse_gue_words(l3w, cfg)
                              : parse_gre_words(l3w, l3_mode == "ip6gre", cfg);
    if (e) return l3_mode + "." + *e;
    return cfg;
  }
  if (auto e = parse_vxlan_words(w, cfg)) return "vxlan." + *e;
  return cfg;
}

std::optional<std::string> validate_local(const DaemonConfig& cfg) {
  // IFNAMSIZ 16 with the NUL; the kernel refuses '/', ':' and white space in names.
  if (cfg.dev.empty() || cfg.dev.size() > 15 || cfg.dev == "." || cfg.dev == ".." ||
      cfg.dev.find_first_of("/: \t\n") != std::string::npos)
    return "dev: '" + cfg.dev + "' is not an interface name (1..15 characters, no '/', ':' or spaces)";
  if (!cfg.address.empty()) {
    const auto slash = cfg.address.find('/');
    const auto ip = tunnel::IpAddr::parse(cfg.address.substr(0, slash));
    const unsigned max = ip && ip->is_v6() ? 128 : 32;
    const bool prefix_ok =
        slash == std::string::npos ||
        number(cfg.address.substr(slash + 1), 0, max).has_value();
    if (!ip || !prefix_ok)
      return "address: '" + cfg.address + "' is not an address with an optional prefix (192.0.2.1/24, fd00::1/64)";
  }
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

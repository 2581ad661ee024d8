// `ofld tunnel` configuration parsing (words and TOML).
#include "ofld/daemon/config.hpp"
#include "ofld/daemon/metrics.hpp"

#include <charconv>
#include <cstdio>
#include <set>
#include <string_view>

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
  auto n = number(s, 1, kMaxQueues);
  if (!n) return bad_number("queues", s, 1, kMaxQueues);
  return unsigned(*n);
}

// ---------------------------------------------------------------------------------------------
// The settings: one description of each, read by both front ends. The command line gives a
// setting as a word followed by its values (`dstport 4789`, `srcport 1000 2000`, a flag alone:
// `udpcsum`, `noudpcsum`), or as an option (`--dev ofld0`, `--no-gro`: apply_setting); a TOML
// file as `key = value` in its tunnel table or at the top level. Both turn the value into the
// same words and call the same `apply`, so every rule, range and message is the setting's own.

namespace {

/// Which tables a setting belongs to: the top level (host side, options on the command line)
/// or a tunnel mode.
enum ModeBit : unsigned { kTop = 1, kVx = 2, kGue = 4, kGre = 8, kGen = 16 };
constexpr unsigned kL3 = kGue | kGre;

/// How a setting takes its value: after its word on the command line; its TOML type.
enum class Arity : std::uint8_t {
  Flag,  ///< no value: the word says on (`udpcsum`) or off (`noudpcsum`); TOML true / false
  One,   ///< one value; TOML per Value below
  Two,   ///< two values (`srcport MIN MAX`, `fdb MAC ADDR`); TOML [A, B]
  Many,  ///< one value, the word may repeat (`remote A remote B`); TOML a value or a list
};
/// The TOML type of a value: an integer, a string, or either (the tunnel table's numbers may be
/// written as strings, like the words; a GRE key; `tos inherit`). AnyHex: either, where the
/// word is read in hexadecimal (`tos`, as iproute2): a TOML integer keeps its own value (it is
/// handed to the setting as 0x..), a TOML string is read as the word is.
enum class Value : std::uint8_t { Int, Str, Any, AnyHex };

struct Ctx {
  DaemonConfig& cfg;
  unsigned mode;            // kTop, kVx, kGue, kGre or kGen
  bool ip6gre = false;
  bool have_id = false, have_remote = false;
  std::string mode_name() const {
    return mode == kVx ? "vxlan" : mode == kGue ? "gue" : mode == kGre ? (ip6gre ? "ip6gre" : "gre")
           : mode == kGen ? "geneve" : "";
  }
  // The tunnel table's configuration (begin_mode set the encapsulation of `mode`).
  tunnel::TunnelCommon& common() { return cfg.tunnel.common(); }
  tunnel::UdpTunnelSettings& udp() { return *cfg.tunnel.udp(); }
  tunnel::VxlanConfig& vx() { return *cfg.tunnel.get<tunnel::VxlanConfig>(); }
  tunnel::GueConfig& gue() { return *cfg.tunnel.get<tunnel::GueConfig>(); }
  tunnel::GreConfig& gre() { return *cfg.tunnel.get<tunnel::GreConfig>(); }
  /// Geneve's configuration; null in another mode.
  tunnel::GeneveConfig* gen() { return cfg.tunnel.get<tunnel::GeneveConfig>(); }
  /// The one remote of a point-to-point tunnel (GUE, GRE); null for VXLAN and Geneve.
  tunnel::IpAddr* one_remote() {
    if (auto* g = cfg.tunnel.get<tunnel::GueConfig>()) return &g->remote;
    if (auto* g = cfg.tunnel.get<tunnel::GreConfig>()) return &g->remote;
    return nullptr;
  }
  // The FDB settings of the Ethernet encapsulations (VXLAN, Geneve: the same rows).
  std::vector<tunnel::IpAddr>& remotes() { return gen() ? gen()->remotes : vx().remotes; }
  std::uint32_t& ageing() { return gen() ? gen()->ageing_s : vx().ageing_s; }
  bool& learning() { return gen() ? gen()->learning : vx().learning; }
  tunnel::FdbLimits& fdb_limits() { return gen() ? gen()->fdb_limits : vx().fdb_limits; }
};

using Args = std::vector<std::string>;
using Apply = std::optional<std::string> (*)(Ctx&, const std::string& word, bool on, const Args& v);

struct Setting {
  const char* name;             ///< the setting: messages, TOML key, first word spelling
  std::vector<const char*> alt; ///< other spellings (words and TOML keys): vni, dstport, ...
  const char* off_word;         ///< a flag's "off" word (noudpcsum, nolearning); else null
  Arity arity;
  Value value;
  unsigned modes;
  /// "Given once" groups it sets (a second setting of a group is an error naming both);
  /// empty: may repeat. `key` sets ikey and okey.
  std::vector<const char*> once;
  Apply apply;
};

std::optional<std::string> num_arg(const std::string& k, const Args& v, std::uint64_t lo, std::uint64_t hi,
                                   std::uint64_t& out) {
  auto n = number(v[0], lo, hi);
  if (!n) return bad_number(k, v[0], lo, hi);
  out = *n;
  return std::nullopt;
}
std::optional<std::string> addr_arg(const std::string& k, const std::string& a, tunnel::IpAddr& out) {
  auto ip = tunnel::IpAddr::parse(a);
  if (!ip) return k + ": '" + a + "' is not an IPv4 or IPv6 address";
  out = *ip;
  return std::nullopt;
}
/// An unsigned number as C's strtoul reads it in `base` (16: an optional 0x; 0: 0x.. hex, 0..
/// octal, else decimal), the whole word, no sign or space; nullopt past `hi`.
std::optional<std::uint64_t> c_number(const std::string& s, int base, std::uint64_t hi) {
  std::string_view d = s;
  if ((base == 16 || base == 0) && d.size() > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
    d.remove_prefix(2);
    base = 16;
  } else if (base == 0) {
    base = d.size() > 1 && d[0] == '0' ? 8 : 10;
  }
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v, base);
  if (d.empty() || ec != std::errc() || p != d.data() + d.size() || v > hi) return std::nullopt;
  return v;
}
/// `tos N` or `tos inherit` as iproute2 reads them (rtnl_dsfield_a2n: N in hexadecimal,
/// `tos 10` is 0x10; names of /etc/iproute2/rt_dsfield are not read); the kernel's tos 1 is
/// inherit: outer DSCP from the inner header. The ECN bits come from the inner packet either
/// way (RFC 6040 §4.1).
std::optional<std::string> tos_arg(const std::string& k, const Args& v, std::uint8_t& tos, bool& inherit) {
  if (v[0] == "inherit") {
    inherit = true;
    return std::nullopt;
  }
  if (auto n = c_number(v[0], 16, 255)) {
    tos = std::uint8_t(*n);
    inherit = *n == 1;
    return std::nullopt;
  }
  return k + ": '" + v[0] + "' is not a hexadecimal number in 0..ff (as iproute2 reads it: tos 10 is 0x10) or 'inherit'";
}
/// `ttl N|auto|inherit` as iproute2's vxlan and geneve read it (get_unsigned base 0: decimal,
/// 0x.. hex, 0.. octal; `auto` and 0: the route's default; `inherit`: from the inner header,
/// IFLA_VXLAN_TTL_INHERIT / IFLA_GENEVE_TTL_INHERIT). GUE and GRE take 1..255 only (the
/// kernel's gre reads ttl 0 as inherit, which ofld does not do there).
std::optional<std::string> ttl_arg(const std::string& k, const Args& v, bool ethernet, std::uint8_t& ttl,
                                   bool& inherit) {
  if (!ethernet) {
    auto n = c_number(v[0], 0, 255);
    if (!n || *n == 0)
      return k + ": '" + v[0] + "' is not a number in 1..255 (ttl auto and inherit are vxlan and geneve settings)";
    ttl = std::uint8_t(*n);
    return std::nullopt;
  }
  if (v[0] == "inherit") {
    inherit = true, ttl = 0;
    return std::nullopt;
  }
  if (v[0] == "auto") {
    inherit = false, ttl = 0;
    return std::nullopt;
  }
  if (auto n = c_number(v[0], 0, 255)) {
    inherit = false, ttl = std::uint8_t(*n);
    return std::nullopt;
  }
  return k + ": '" + v[0] + "' is not a number in 0..255, auto or inherit";
}
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
      {"queues", {}, nullptr, Arity::One, Value::Int, kTop, {"queues"},
       SET(auto q = parse_queues(v[0]); if (auto* e = std::get_if<std::string>(&q)) return *e;
           c.cfg.queues = std::get<unsigned>(q))},
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
      // ---- the tunnel
      {"id", {"vni"}, nullptr, Arity::One, Value::Any, kVx | kGen, {"id"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 0xFFFFFF, n)) return e;
           (c.gen() ? c.gen()->vni : c.vx().vni) = std::uint32_t(n); c.have_id = true)},
      {"local", {}, nullptr, Arity::One, Value::Str, kVx | kL3 | kGen, {"local"},
       SET(return addr_arg(k, v[0], c.common().local))},
      {"remote", {}, nullptr, Arity::Many, Value::Str, kVx | kL3 | kGen, {},
       SET(tunnel::IpAddr ip; if (auto e = addr_arg(k, v[0], ip)) return e;
           if (auto* one = c.one_remote()) {
             if (c.have_remote) return "remote: a " + c.mode_name() + " tunnel has exactly one remote";
             c.have_remote = true;
             *one = ip;
             return std::nullopt;
           }
           for (const auto& r : c.remotes())
             if (r == ip) return "remote: " + ip.to_string() + " is given twice";
           c.remotes().push_back(ip))},
      {"dstport", {}, nullptr, Arity::One, Value::Any, kVx | kGen, {"dstport"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 1, 65535, n)) return e;
           (c.gen() ? c.gen()->dstport : c.vx().dstport) = std::uint16_t(n))},
      {"port", {"dstport", "encap-dport"}, nullptr, Arity::One, Value::Any, kGue, {"port"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 1, 65535, n)) return e;
           c.gue().port = std::uint16_t(n))},
      {"srcport", {}, nullptr, Arity::Two, Value::Any, kVx | kGen, {"srcport"},
       SET(auto lo = number(v[0], 1, 65535), hi = number(v[1], 1, 65535);
           if (!lo) return bad_number("srcport MIN", v[0], 1, 65535);
           if (!hi) return bad_number("srcport MAX", v[1], 1, 65535);
           (c.gen() ? c.gen()->port_min : c.vx().port_min) = std::uint16_t(*lo);
           (c.gen() ? c.gen()->port_max : c.vx().port_max) = std::uint16_t(*hi))},
      {"udpcsum", {}, "noudpcsum", Arity::Flag, Value::Any, kVx | kGue | kGen, {"udpcsum"},
       SET(c.udp().udp_csum = on)},
      {"udp6zerocsumtx", {}, nullptr, Arity::Flag, Value::Any, kVx | kGue | kGen, {},
       SET(c.udp().udp6_zero_csum_tx = on)},
      {"udp6zerocsumrx", {}, nullptr, Arity::Flag, Value::Any, kVx | kGue | kGen, {},
       SET(c.udp().udp6_zero_csum_rx = on)},
      // Geneve options sent in every header (tc's geneve_opts spelling; the word may repeat)
      {"options", {"geneve_opts"}, nullptr, Arity::Many, Value::Str, kGen, {},
       SET(std::vector<tunnel::GeneveOption> o;
           if (auto e = tunnel::parse_geneve_options(v[0], o)) return e;
           auto& all = c.gen()->options; all.insert(all.end(), o.begin(), o.end());
           if (c.gen()->options_len() > 252)
             return std::string("options: more than 252 bytes of options (Opt Len is 6 bits of 4-byte words)"))},
      {"remcsumtx", {}, nullptr, Arity::Flag, Value::Any, kVx | kGue, {},
       SET(c.udp().remcsum_tx = on)},
      {"remcsumrx", {}, nullptr, Arity::Flag, Value::Any, kVx | kGue, {},
       SET(c.udp().remcsum_rx = on)},
      {"remcsum-nopartial", {"remcsum_nopartial"}, nullptr, Arity::Flag, Value::Any, kVx | kGue, {},
       SET(c.udp().remcsum_nopartial = on)},
      {"key", {}, nullptr, Arity::One, Value::Any, kGre, {"ikey", "okey"},
       SET(auto key = gre_key(v[0]);
           if (!key) return k + ": '" + v[0] + "' is not a number in 0..4294967295 or a dotted quad";
           c.gre().ikey = *key; c.gre().okey = *key)},
      {"ikey", {}, nullptr, Arity::One, Value::Any, kGre, {"ikey"},
       SET(auto key = gre_key(v[0]);
           if (!key) return k + ": '" + v[0] + "' is not a number in 0..4294967295 or a dotted quad";
           c.gre().ikey = *key)},
      {"okey", {}, nullptr, Arity::One, Value::Any, kGre, {"okey"},
       SET(auto key = gre_key(v[0]);
           if (!key) return k + ": '" + v[0] + "' is not a number in 0..4294967295 or a dotted quad";
           c.gre().okey = *key)},
      {"csum", {}, nullptr, Arity::Flag, Value::Any, kGre, {}, SET(c.gre().icsum = on; c.gre().ocsum = on)},
      {"icsum", {}, nullptr, Arity::Flag, Value::Any, kGre, {}, SET(c.gre().icsum = on)},
      {"ocsum", {}, nullptr, Arity::Flag, Value::Any, kGre, {}, SET(c.gre().ocsum = on)},
      {"ttl", {"hoplimit"}, nullptr, Arity::One, Value::Any, kVx | kL3 | kGen, {"ttl"},
       SET(return ttl_arg(k, v, c.mode & (kVx | kGen), c.common().ttl, c.common().ttl_inherit))},
      {"tos", {"dsfield"}, nullptr, Arity::One, Value::AnyHex, kVx | kL3 | kGen, {"tos"},
       SET(return tos_arg(k, v, c.common().tos, c.common().tos_inherit))},
      // the outer IPv4 DF bit (iproute2 vxlan/geneve `df`; no effect over IPv6, as the kernel)
      {"df", {}, nullptr, Arity::One, Value::Str, kVx | kGen, {"df"},
       SET(if (v[0] == "unset") c.common().df = tunnel::OuterDf::Unset;
           else if (v[0] == "set") c.common().df = tunnel::OuterDf::Set;
           else if (v[0] == "inherit") c.common().df = tunnel::OuterDf::Inherit;
           else return "df: '" + v[0] + "' is not unset, set or inherit")},
      {"mtu", {}, nullptr, Arity::One, Value::Any, kVx | kL3 | kGen, {"mtu"},
       SET(std::uint64_t n = 0;
           if (auto e = num_arg(k, v, 68, c.mode & (kVx | kGen) ? 65521 : 65535, n)) return e;
           c.common().mtu = int(n))},
      {"ageing", {}, nullptr, Arity::One, Value::Any, kVx | kGen, {"ageing"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 1000000, n)) return e;
           c.ageing() = std::uint32_t(n))},
      {"learning", {}, "nolearning", Arity::Flag, Value::Any, kVx | kGen, {"learning"},
       SET(c.learning() = on)},
      // bounded learning (docs/fdb.md): `maxaddress N` (iproute2; 0 = unbounded), per remote,
      // which sources may teach entries, MACs behind our own TAP (advertised by EVPN)
      {"maxaddress", {}, nullptr, Arity::One, Value::Any, kVx | kGen, {"maxaddress"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 16777216, n)) return e;
           c.fdb_limits().maxaddress = std::uint32_t(n))},
      {"maxaddress-per-remote", {"maxaddress_per_remote"}, nullptr, Arity::One, Value::Any, kVx | kGen,
       {"maxaddress-per-remote"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 16777216, n)) return e;
           c.fdb_limits().per_remote = std::uint32_t(n))},
      {"learning-from", {"learning_from"}, nullptr, Arity::One, Value::Str, kVx | kGen, {"learning-from"},
       SET(if (v[0] == "remotes") c.fdb_limits().from = tunnel::LearnFrom::Remotes;
           else if (v[0] == "any") c.fdb_limits().from = tunnel::LearnFrom::Any;
           else return "learning-from: '" + v[0] + "' is not 'remotes' or 'any'")},
      {"local-maxaddress", {"local_maxaddress"}, nullptr, Arity::One, Value::Any, kVx | kGen, {"local-maxaddress"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 16777216, n)) return e;
           c.fdb_limits().local_max = std::uint32_t(n))},
      // integrity mode (inner checksums elided toward peers that have it too)
      {"integrity", {}, nullptr, Arity::Flag, Value::Any, kVx | kL3 | kGen, {"integrity"}, SET(c.cfg.integrity = on)},
      // peer sessions authenticated with a pre-shared key (HMAC-SHA-256; docs/peer-protocol.md)
      {"peer-key", {}, nullptr, Arity::One, Value::Str, kVx | kL3 | kGen, {"peer-key"},
       SET(if (v[0].empty()) return std::string("peer-key: needs a FILE"); c.cfg.peer_key = v[0])},
      // underlay multicast group for flooding: `group ADDR dev IF` (iproute2 vxlan)
      {"group", {}, nullptr, Arity::One, Value::Str, kVx, {"group"},
       SET(if (auto e = addr_arg(k, v[0], c.cfg.group)) return e;
           const auto& b = c.cfg.group.bytes;
           const bool mc = c.cfg.group.is_v6() ? b[0] == 0xFF : (b[0] & 0xF0) == 0xE0;
           if (!mc) return "group: " + v[0] + " is not a multicast address (224.0.0.0/4, ff00::/8)")},
      {"dev", {}, nullptr, Arity::One, Value::Str, kVx, {"group-dev"},
       SET(if (auto e = check_dev(v[0])) return e; c.cfg.group_dev = v[0])},
      // BGP EVPN through gobgpd (docs/evpn.md)
      {"evpn", {}, "noevpn", Arity::Flag, Value::Any, kVx | kGen, {"evpn"}, SET(c.cfg.evpn = on)},
      {"evpn-server", {"evpn_server"}, nullptr, Arity::One, Value::Str, kVx | kGen, {"evpn-server"},
       SET(if (v[0].empty() || v[0].find(':') == std::string::npos)
             return "evpn-server: '" + v[0] + "' is not HOST:PORT";
           c.cfg.evpn_server = v[0]; c.cfg.evpn = true)},
      // EVPN: the RD's router ID and duplicate MAC detection, spelled as FRR spells them
      // (`bgp router-id`, `dup-addr-detection [max-moves N time S]`, `... freeze S|permanent`)
      {"router-id", {"router_id"}, nullptr, Arity::One, Value::Str, kVx | kGen, {"router-id"},
       SET(auto ip = tunnel::IpAddr::parse(v[0]);
           if (!ip || ip->family != 4) return "router-id: '" + v[0] + "' is not an IPv4 address (A.B.C.D)";
           c.cfg.evpn_router_id = *ip)},
      {"dup-addr-detection", {}, "no-dup-addr-detection", Arity::Flag, Value::Any, kVx | kGen, {"dup-addr-detection"},
       SET(c.cfg.dup_addr_detection = on)},
      {"dup-addr-detection-max-moves", {"dup_addr_detection_max_moves"}, nullptr, Arity::One, Value::Any, kVx | kGen,
       {"dup-addr-detection-max-moves"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 2, 1000, n)) return e;
           c.cfg.dad_max_moves = std::uint32_t(n))},
      {"dup-addr-detection-time", {"dup_addr_detection_time"}, nullptr, Arity::One, Value::Any, kVx | kGen,
       {"dup-addr-detection-time"},
       SET(std::uint64_t n = 0; if (auto e = num_arg(k, v, 2, 1800, n)) return e;
           c.cfg.dad_time_s = std::uint32_t(n))},
      {"dup-addr-detection-freeze", {"dup_addr_detection_freeze"}, nullptr, Arity::One, Value::Any, kVx | kGen,
       {"dup-addr-detection-freeze"},
       SET(if (v[0] == "permanent") { c.cfg.dad_freeze_permanent = true; return std::nullopt; }
           std::uint64_t n = 0; if (auto e = num_arg(k, v, 30, 3600, n)) return e;
           c.cfg.dad_freeze_s = std::uint32_t(n))},
      // static forwarding entries: `fdb MAC ADDR` (TOML: [[fdb]] tables with mac and remote)
      {"fdb", {}, nullptr, Arity::Two, Value::Str, kVx | kGen, {},
       SET(auto mac = parse_mac(v[0]); if (!mac) return "fdb: '" + v[0] + "' is not a MAC address";
           tunnel::IpAddr ip; if (auto e = addr_arg("fdb", v[1], ip)) return e;
           c.cfg.static_fdb.emplace_back(*mac, ip))},
  };
  return kSettings;
}
#undef SET

/// The setting `word` spells in `mode`; `on` gets a flag's value. Null when none.
const Setting* find_setting(const std::string& word, unsigned mode, bool& on) {
  for (const auto& s : settings()) {
    if (!(s.modes & mode)) continue;
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
  for (unsigned m : {kVx, kGue, kGre, kGen})
    if (m != c.mode && find_setting(k, m, on)) {
      if (k == "id" || k == "vni")
        return k + ": " + c.mode_name() + " has no VNI (that is a vxlan setting)";
      return k + ": not a " + c.mode_name() + " setting (it is one of " +
             (m == kVx ? "vxlan" : m == kGue ? "gue" : m == kGre ? "gre" : "geneve") + ")";
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
    const Setting* s = find_setting(k, c.mode, on);
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
  const auto enc = tunnel::make_encapsulation(cfg.tunnel);
  const auto& local = cfg.tunnel.common().local;
  if ((c.mode == kVx || c.mode == kGen) && !c.have_id) return std::string("id: the VNI is required (id VNI)");
  for (const auto& r : enc->configured_remotes())
    if (!r.empty())
      if (auto e = check_remote(r, local)) return e;
  if (const auto* v = cfg.tunnel.get<tunnel::VxlanConfig>()) {
    if (!cfg.group_dev.empty() && cfg.group.empty())
      return std::string("dev: the underlay interface of a multicast group; give group ADDR too");
    if (!cfg.group.empty() && !local.empty() && cfg.group.is_v6() != local.is_v6())
      return "group: " + cfg.group.to_string() + " and local " + local.to_string() +
             " are of different families";
    if (cfg.evpn && local.empty())
      return std::string("evpn: needs local ADDR (the VTEP address the routes carry)");
    if (auto e = tunnel::validate(*v, cfg.group.empty() && !cfg.evpn)) return e;
  } else if (const auto* g = cfg.tunnel.get<tunnel::GreConfig>()) {
    for (const auto* a : {&g->local, &g->remote}) {
      if (a->empty()) continue;
      const char* which = a == &g->local ? "local" : "remote";
      if (c.ip6gre && !a->is_v6())
        return std::string(which) + ": " + a->to_string() + " is IPv4; ip6gre needs IPv6 addresses (use gre)";
      if (!c.ip6gre && a->is_v6())
        return std::string(which) + ": " + a->to_string() + " is IPv6; gre needs IPv4 addresses (use ip6gre)";
    }
    if (auto e = tunnel::validate(*g)) return e;
  } else if (const auto* u = cfg.tunnel.get<tunnel::GueConfig>()) {
    if (auto e = tunnel::validate(*u)) return e;
  } else if (const auto* g = cfg.tunnel.get<tunnel::GeneveConfig>()) {
    if (cfg.evpn && local.empty())
      return std::string("evpn: needs local ADDR (the VTEP address the routes carry)");
    if (auto e = tunnel::validate(*g, !cfg.evpn)) return e;
  }
  // Integrity mode: the outer checksum protects the inner packet once its own checksum is
  // elided (each encapsulation says what that takes).
  if (cfg.integrity)
    if (auto e = enc->integrity_error()) return e;
  return std::nullopt;
}

/// Start a mode in cfg (its table reset to the defaults).
Ctx begin_mode(DaemonConfig& cfg, const std::string& mode) {
  Ctx c{cfg, kVx};
  if (mode == "vxlan") {
    cfg.tunnel = tunnel::VxlanConfig{};
  } else if (mode == "gue") {
    cfg.tunnel = tunnel::GueConfig{};
    c.mode = kGue;
  } else if (mode == "geneve") {
    cfg.tunnel = tunnel::GeneveConfig{};
    c.mode = kGen;
  } else {
    cfg.tunnel = tunnel::GreConfig{};
    c.mode = kGre;
    c.ip6gre = mode == "ip6gre";
  }
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
    if (c.mode == kTop && (key == "vxlan" || key == "gue" || key == "gre" || key == "ip6gre" ||
                           key == "geneve" || key == "fdb"))
      continue;
    bool on = true;
    const Setting* s = find_setting(key, c.mode, on);
    // a TOML key is the setting's name or alias, never its "off" word
    if (!s || (s->off_word && key == s->off_word)) {
      if (c.mode == kTop) return key + ": unknown setting";
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
  const Setting* s = find_setting(name, kTop, on);
  if (!s) return name + ": unknown setting";
  const std::size_t want = s->arity == Arity::Flag ? 0 : s->arity == Arity::Two ? 2 : 1;
  if (values.size() != want) return name + ": expected " + std::to_string(want) + " value(s)";
  Ctx c{cfg, kTop};
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
  if (w.empty())
    return std::string("expected a tunnel mode: vxlan, gue, gre, ip6gre or geneve, then its settings");
  const std::string& m = w[0];
  if (m != "vxlan" && m != "gue" && m != "gre" && m != "ip6gre" && m != "geneve")
    return "unknown tunnel mode '" + m + "' (expected vxlan, gue, gre, ip6gre or geneve)";
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
    Ctx top{cfg, kTop};
    Once once;
    if (auto e = apply_table(t, top, once, "")) return *e;
  }
  // the tunnel table: exactly one of vxlan, gue, gre, ip6gre, geneve
  std::string mode;
  for (const char* m : {"vxlan", "gue", "gre", "ip6gre", "geneve"}) {
    if (!t.contains(m)) continue;
    if (!t[m].is_table()) return std::string(m) + ": expected a table";
    if (!mode.empty())
      return std::string(m) + ": only one tunnel table per file (already have " + mode + ")" +
             (mode == "vxlan" || std::string(m) == "vxlan" ? "; a file configures one tunnel" : "");
    mode = m;
  }
  if (t.contains("fdb") && mode != "vxlan" && mode != "geneve")
    return mode.empty() ? std::string("fdb: static entries need a [vxlan] or [geneve] table")
                        : mode + ": a file configures one tunnel; [[fdb]] entries belong to vxlan or geneve";
  if (mode.empty()) mode = "vxlan";  // the errors then name the missing vxlan settings
  Ctx c = begin_mode(cfg, mode);
  Once once;
  const std::string prefix = mode + ".";
  if (const auto* tt = t[mode].as_table())
    if (auto e = apply_table(*tt, c, once, prefix)) return *e;
  if (t.contains("fdb")) {
    const auto* arr = t["fdb"].as_array();
    if (!arr) return std::string("fdb: expected [[fdb]] tables with mac and remote");
    bool on = true;
    const Setting* s = find_setting("fdb", c.mode, on);
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

// The settings rows several encapsulations share (internal to src/tunnel): every
// encapsulation's (local, ttl, tos, mtu), the UDP ones' (udpcsum, udp6zerocsum*), RCO
// (remcsum*), the Ethernet-over-UDP ones' (VXLAN, Geneve: id, the remote list, dstport,
// srcport, df, the FDB settings) and the point-to-point remote (GUE, GRE). Each
// encapsulation's EncapKind (ofld/tunnel/encap_kind.hpp) joins the parts it has with its own
// rows. Words, ranges and messages are those of iproute2's `ip link add ... type X`.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "ofld/tunnel/encap_kind.hpp"
#include "ofld/tunnel/encapsulation.hpp"

namespace ofld::tunnel::conf {

/// A row's apply function over `c`, a T& got from the tunnel configuration `t_` by `get`.
#define OFLD_ROW_AS(T, get, ...)                                                                   \
  [](TunnelConfig& t_, ReadState& st, const std::string& k, bool on, const Args& v)                \
      -> std::optional<std::string> {                                                              \
    T& c = get;                                                                                    \
    (void)c; (void)st; (void)k; (void)on; (void)v;                                                 \
    __VA_ARGS__;                                                                                   \
    return std::nullopt;                                                                           \
  }
/// Over the encapsulation's own configuration (of type C).
#define OFLD_ROW(C, ...) OFLD_ROW_AS(C, *t_.get<C>(), __VA_ARGS__)
/// Over the common settings (TunnelCommon) of any encapsulation.
#define OFLD_ROW_COMMON(...) OFLD_ROW_AS(TunnelCommon, t_.common(), __VA_ARGS__)
/// Over the UDP settings (UdpTunnelSettings).
#define OFLD_ROW_UDP(...) OFLD_ROW_AS(UdpTunnelSettings, *t_.udp(), __VA_ARGS__)
/// A reload row's text of the encapsulation's own configuration `c` (of type C).
#define OFLD_FIXED(C, name, ...) \
  FixedRow { name, [](const TunnelConfig& t_) -> std::string { const C& c = *t_.get<C>(); return __VA_ARGS__; } }

inline std::string on_off(bool v) { return v ? "on" : "off"; }
inline std::string num_text(std::uint64_t v) { return std::to_string(v); }

/// Rows in order: the parts joined.
template <class R>
std::vector<R> join(std::initializer_list<std::vector<R>> parts) {
  std::vector<R> k;
  for (const auto& p : parts) k.insert(k.end(), p.begin(), p.end());
  return k;
}

/// `tos N` or `tos inherit` as iproute2 reads them (rtnl_dsfield_a2n: N in hexadecimal,
/// `tos 10` is 0x10; names of /etc/iproute2/rt_dsfield are not read); the kernel's tos 1 is
/// inherit: outer DSCP from the inner header. The ECN bits come from the inner packet either
/// way (RFC 6040 §4.1).
inline std::optional<std::string> tos_arg(const std::string& k, const Args& v, std::uint8_t& tos, bool& inherit) {
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
inline std::optional<std::string> ttl_arg(const std::string& k, const Args& v, bool ethernet, std::uint8_t& ttl,
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

/// Every encapsulation's rows: local, ttl, tos, mtu (Ethernet: ttl auto|inherit, MTU up to
/// 65521, the largest a TAP frame of 65535 bytes leaves).
template <bool Ethernet>
std::vector<Row> common_rows() {
  return {
      {{"local", {}, nullptr, Arity::One, Value::Str, {"local"}},
       OFLD_ROW_COMMON(return addr_arg(k, v[0], c.local))},
      {{"ttl", {"hoplimit"}, nullptr, Arity::One, Value::Any, {"ttl"}},
       OFLD_ROW_COMMON(return ttl_arg(k, v, Ethernet, c.ttl, c.ttl_inherit))},
      {{"tos", {"dsfield"}, nullptr, Arity::One, Value::AnyHex, {"tos"}},
       OFLD_ROW_COMMON(return tos_arg(k, v, c.tos, c.tos_inherit))},
      {{"mtu", {}, nullptr, Arity::One, Value::Any, {"mtu"}},
       OFLD_ROW_COMMON(std::uint64_t n = 0;
                       if (auto e = num_arg(k, v, 68, Ethernet ? 65521 : 65535, n)) return e;
                       c.mtu = int(n))},
  };
}

/// The UDP encapsulations' outer checksum rows.
inline std::vector<Row> udp_rows() {
  return {
      {{"udpcsum", {}, "noudpcsum", Arity::Flag, Value::Any, {"udpcsum"}}, OFLD_ROW_UDP(c.udp_csum = on)},
      {{"udp6zerocsumtx", {}, nullptr, Arity::Flag, Value::Any, {}}, OFLD_ROW_UDP(c.udp6_zero_csum_tx = on)},
      {{"udp6zerocsumrx", {}, nullptr, Arity::Flag, Value::Any, {}}, OFLD_ROW_UDP(c.udp6_zero_csum_rx = on)},
  };
}

/// Remote checksum offload rows (VXLAN, GUE).
inline std::vector<Row> rco_rows() {
  return {
      {{"remcsumtx", {}, nullptr, Arity::Flag, Value::Any, {}}, OFLD_ROW_UDP(c.remcsum_tx = on)},
      {{"remcsumrx", {}, nullptr, Arity::Flag, Value::Any, {}}, OFLD_ROW_UDP(c.remcsum_rx = on)},
      {{"remcsum-nopartial", {"remcsum_nopartial"}, nullptr, Arity::Flag, Value::Any, {}},
       OFLD_ROW_UDP(c.remcsum_nopartial = on)},
  };
}

/// The one remote of a point-to-point tunnel (GUE, GRE: C::remote).
template <class C>
std::vector<Row> one_remote_rows() {
  return {
      {{"remote", {}, nullptr, Arity::Many, Value::Str, {}},
       OFLD_ROW(C, IpAddr ip; if (auto e = addr_arg(k, v[0], ip)) return e;
                if (st.have_remote) return "remote: a " + std::string(st.mode) + " tunnel has exactly one remote";
                st.have_remote = true;
                c.remote = ip)},
  };
}

/// The Ethernet-over-UDP encapsulations' rows (VXLAN, Geneve: C has vni, remotes, dstport,
/// port_min/max, ageing_s, learning, fdb_limits): id, the remote list, dstport, srcport, df
/// and the FDB's (bounded learning, docs/fdb.md).
template <class C>
std::vector<Row> ethernet_rows() {
  return {
      {{"id", {"vni"}, nullptr, Arity::One, Value::Any, {"id"}},
       OFLD_ROW(C, std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 0xFFFFFF, n)) return e;
                c.vni = std::uint32_t(n); st.have_id = true)},
      {{"remote", {}, nullptr, Arity::Many, Value::Str, {}},
       OFLD_ROW(C, IpAddr ip; if (auto e = addr_arg(k, v[0], ip)) return e;
                for (const auto& r : c.remotes)
                  if (r == ip) return "remote: " + ip.to_string() + " is given twice";
                c.remotes.push_back(ip))},
      {{"dstport", {}, nullptr, Arity::One, Value::Any, {"dstport"}},
       OFLD_ROW(C, std::uint64_t n = 0; if (auto e = num_arg(k, v, 1, 65535, n)) return e;
                c.dstport = std::uint16_t(n))},
      {{"srcport", {}, nullptr, Arity::Two, Value::Any, {"srcport"}},
       OFLD_ROW(C, auto lo = number(v[0], 1, 65535), hi = number(v[1], 1, 65535);
                if (!lo) return bad_number("srcport MIN", v[0], 1, 65535);
                if (!hi) return bad_number("srcport MAX", v[1], 1, 65535);
                c.port_min = std::uint16_t(*lo);
                c.port_max = std::uint16_t(*hi))},
      // the outer IPv4 DF bit (iproute2 vxlan/geneve `df`; no effect over IPv6, as the kernel)
      {{"df", {}, nullptr, Arity::One, Value::Str, {"df"}},
       OFLD_ROW(C, if (v[0] == "unset") c.df = OuterDf::Unset;
                else if (v[0] == "set") c.df = OuterDf::Set;
                else if (v[0] == "inherit") c.df = OuterDf::Inherit;
                else return "df: '" + v[0] + "' is not unset, set or inherit")},
      {{"ageing", {}, nullptr, Arity::One, Value::Any, {"ageing"}},
       OFLD_ROW(C, std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 1000000, n)) return e;
                c.ageing_s = std::uint32_t(n))},
      {{"learning", {}, "nolearning", Arity::Flag, Value::Any, {"learning"}}, OFLD_ROW(C, c.learning = on)},
      // bounded learning (docs/fdb.md): `maxaddress N` (iproute2; 0 = unbounded), per remote,
      // which sources may teach entries, MACs behind our own TAP (advertised by EVPN)
      {{"maxaddress", {}, nullptr, Arity::One, Value::Any, {"maxaddress"}},
       OFLD_ROW(C, std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 16777216, n)) return e;
                c.fdb_limits.maxaddress = std::uint32_t(n))},
      {{"maxaddress-per-remote", {"maxaddress_per_remote"}, nullptr, Arity::One, Value::Any, {"maxaddress-per-remote"}},
       OFLD_ROW(C, std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 16777216, n)) return e;
                c.fdb_limits.per_remote = std::uint32_t(n))},
      {{"learning-from", {"learning_from"}, nullptr, Arity::One, Value::Str, {"learning-from"}},
       OFLD_ROW(C, if (v[0] == "remotes") c.fdb_limits.from = LearnFrom::Remotes;
                else if (v[0] == "any") c.fdb_limits.from = LearnFrom::Any;
                else return "learning-from: '" + v[0] + "' is not 'remotes' or 'any'")},
      {{"local-maxaddress", {"local_maxaddress"}, nullptr, Arity::One, Value::Any, {"local-maxaddress"}},
       OFLD_ROW(C, std::uint64_t n = 0; if (auto e = num_arg(k, v, 0, 16777216, n)) return e;
                c.fdb_limits.local_max = std::uint32_t(n))},
  };
}

/// The Ethernet encapsulations' fixed settings before their own: id, dstport, srcport.
template <class C>
std::vector<FixedRow> ethernet_fixed_head() {
  return {
      OFLD_FIXED(C, "id", num_text(c.vni)),
      OFLD_FIXED(C, "dstport", num_text(c.dstport)),
      OFLD_FIXED(C, "srcport", num_text(c.port_min) + " " + num_text(c.port_max)),
  };
}
/// Their FDB's fixed settings (after their own).
template <class C>
std::vector<FixedRow> ethernet_fixed_fdb() {
  return {
      OFLD_FIXED(C, "ageing", num_text(c.ageing_s)),
      OFLD_FIXED(C, "learning", on_off(c.learning)),
      OFLD_FIXED(C, "maxaddress", num_text(c.fdb_limits.maxaddress)),
      OFLD_FIXED(C, "maxaddress-per-remote", num_text(c.fdb_limits.per_remote)),
      OFLD_FIXED(C, "learning-from", num_text(unsigned(c.fdb_limits.from))),
      OFLD_FIXED(C, "local-maxaddress", num_text(c.fdb_limits.local_max)),
  };
}

/// reset() of C: its default configuration.
template <class C>
void reset_to(TunnelConfig& t) {
  t = C{};
}
/// validate() of C taking need_remote (VXLAN, Geneve) or not (GUE, GRE).
template <class C>
std::optional<std::string> validate_as(const TunnelConfig& t, bool need_remote) {
  const C& c = *t.get<C>();
  if constexpr (requires { validate(c, need_remote); }) return validate(c, need_remote);
  else return validate(c);
}
template <class C>
std::vector<IpAddr>* flood_remotes_of(TunnelConfig& t) {
  return &t.get<C>()->remotes;
}
template <class C>
std::uint32_t vni_of(const TunnelConfig& t) {
  return t.get<C>()->vni;
}

}  // namespace ofld::tunnel::conf

// L3 tunnel modes (GUE, GRE, ip6gre): configuration checks, drop names, counters.
#include "ofld/tunnel/ip_tunnel.hpp"

namespace ofld::tunnel {

int GueConfig::overhead() const noexcept { return (ipv6() ? 40 : 20) + 8 + 4 + (remcsum_tx ? 8 : 0); }

int GreConfig::overhead() const noexcept {
  return (ipv6() ? 40 : 20) + 4 + (ocsum ? 4 : 0) + (okey ? 4 : 0);
}

namespace {

/// The checks GUE and GRE share: both addresses, one family, the MTU range.
template <class Cfg>
std::optional<std::string> validate_ends(const Cfg& cfg) {
  const std::string n(cfg.name());
  if (cfg.local.empty()) return "local: an underlay address is required (" + n + " local ADDR)";
  if (cfg.remote.empty()) return "remote: the remote address is required (" + n + " remote ADDR)";
  if (cfg.remote.family != cfg.local.family)
    return "remote: " + cfg.remote.to_string() + " is not the address family of local " +
           cfg.local.to_string();
  return std::nullopt;
}

template <class Cfg>
std::optional<std::string> validate_mtu(const Cfg& cfg) {
  if (cfg.mtu != 0 && (cfg.mtu < 68 || cfg.mtu > 65535 - cfg.overhead()))
    return "mtu: " + std::to_string(cfg.mtu) + " outside 68.." +
           std::to_string(65535 - cfg.overhead());
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate(const GueConfig& cfg) {
  if (auto e = validate_ends(cfg)) return e;
  if (cfg.port == 0)
    return std::string(
        "port: GUE has no default port (no IANA assignment); give `port P`, the same UDP port "
        "on both ends (Linux examples use 5555)");
  if (!cfg.ipv6() && (cfg.udp6_zero_csum_tx || cfg.udp6_zero_csum_rx))
    return std::string("udp6zerocsumtx/udp6zerocsumrx: only valid with an IPv6 underlay");
  if (cfg.remcsum_tx && !cfg.tx_outer_csum())
    return std::string(
               "remcsumtx: remote checksum offload needs an outer UDP checksum (spec K-2: "
               "without it the inner checksum cannot be recovered); drop ") +
           (cfg.ipv6() ? "udp6zerocsumtx" : "noudpcsum") + " or remcsumtx";
  if (cfg.remcsum_nopartial && !cfg.remcsum_rx)
    return std::string("remcsum-nopartial: only meaningful with remcsumrx");
  return validate_mtu(cfg);
}

std::optional<std::string> validate(const GreConfig& cfg) {
  if (auto e = validate_ends(cfg)) return e;
  return validate_mtu(cfg);
}

std::uint8_t ip_outer_tos(const TunnelCommon& cfg, std::span<const std::uint8_t> ip) noexcept {
  // ip_tunnel_get_dsfield: IPv4 TOS or IPv6 traffic class (version nibble decides).
  std::uint8_t in = 0;
  if (ip.size() >= 2) {
    const unsigned ver = ip[0] >> 4;
    if (ver == 4) in = ip[1];
    else if (ver == 6) in = std::uint8_t((ip[0] << 4) | (ip[1] >> 4));
  }
  return ecn_encapsulate(cfg.tos_inherit ? in : cfg.tos, in);
}

}  // namespace ofld::tunnel

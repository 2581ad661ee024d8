// The GRE / ip6gre encapsulation: IP over GRE over IPv4/IPv6 (RFC 2784/2890; ip_gre.c,
// ip6_gre.c): a TUN device and a raw IP socket of protocol 47, the one remote, the GRE
// checksum over the whole datagram (V-13).
#include "encap_ip.hpp"
#include "encap_rows.hpp"

#include "ofld/wire/ethernet.hpp"

namespace ofld::tunnel {

namespace {

class GreEncap final : public Encapsulation {
 public:
  explicit GreEncap(const GreConfig& c) : c_(c) {}
  Encap kind() const noexcept override { return c_.ipv6() ? Encap::Ip6gre : Encap::Gre; }
  const TunnelCommon& common() const noexcept override { return c_; }

  wire::LinkType link() const noexcept override { return wire::LinkType::RawIp; }
  SocketKind socket() const noexcept override { return SocketKind::RawIp; }
  std::uint16_t dst_port() const noexcept override { return 0; }
  int overhead() const noexcept override { return c_.overhead(); }
  std::size_t default_gro_backlog() const noexcept override { return 64; }

  std::optional<Drop> tx_check(std::span<const std::uint8_t> p) const noexcept override {
    if (!detail::is_ip(p)) return Drop::TxNotIp;
    return std::nullopt;
  }
  std::uint8_t outer_tos(std::span<const std::uint8_t> p) const noexcept override {
    return ip_outer_tos(c_, p);
  }
  std::uint16_t src_port(std::span<const std::uint8_t>) const noexcept override { return 0; }
  // Raw IP sockets offload nothing: no RCO, inner checksums in software.
  bool remotes(std::span<const std::uint8_t>, std::uint64_t, std::vector<IpAddr>& out,
               Counters&) override {
    out.assign(1, c_.remote);
    return false;
  }
  EncapInfo encap(const core::Packet& seg, bool /*rco: never, X-33*/,
                  std::span<std::uint8_t, kMaxTunnelHdr> hdr) const override {
    EncapInfo i;
    if (seg.headlen() < 1) {
      i.reason = Drop::TxNotIp;
      return i;
    }
    const bool v4 = wire::ip_version(seg.head()) == 4;
    i.hdr_len = gre_build_header(v4 ? wire::ethertype::kIpv4 : wire::ethertype::kIpv6, c_, hdr);
    i.ok = i.hdr_len != 0;
    return i;
  }
  bool finish(std::span<std::uint8_t> d) const noexcept override {
    if (!c_.ocsum) return false;
    gre_fill_checksum(d);  // V-13: over the GRE header and payload
    return true;
  }

  bool accepts(const IpAddr& from) const noexcept override { return from == c_.remote; }
  DecapResult decap(std::span<const std::uint8_t> payload, OuterCsum, Counters& c,
                    const core::BufferRef*, int outer_tos) const override {
    return gre_decap(payload, c_, c, outer_tos);
  }

  std::vector<IpAddr> configured_remotes() const override { return {c_.remote}; }
  wire::peer::Encap peer_encap() const noexcept override { return wire::peer::Encap::Gre; }
  wire::peer::GreOptions peer_gre() const override { return {c_.ocsum, c_.okey}; }
  std::string describe() const override {
    std::string s = detail::describe_ends(c_.local, c_.remote);
    if (c_.ikey) s += " ikey " + std::to_string(*c_.ikey);
    if (c_.okey) s += " okey " + std::to_string(*c_.okey);
    if (c_.icsum) s += " icsum";
    if (c_.ocsum) s += " ocsum";
    return s;
  }
  std::optional<std::string> integrity_error() const override {
    // GRE's own checksum (V-13) protects the inner packet once its checksum is elided.
    if (c_.icsum && c_.ocsum) return std::nullopt;
    return std::string("integrity needs csum: the GRE checksum is what protects the inner packet "
                       "once the inner checksum is elided (add csum, or ") +
           (c_.icsum ? "ocsum" : c_.ocsum ? "icsum" : "icsum and ocsum") + ")";
  }

 private:
  GreConfig c_;
};

}  // namespace

std::unique_ptr<Encapsulation> make_encapsulation(const GreConfig& cfg) {
  return std::make_unique<GreEncap>(cfg);
}

namespace {
/// GRE key: a 32-bit number or a dotted quad (iproute2 `key 1.2.3.4`).
std::optional<std::uint32_t> gre_key(const std::string& s) {
  if (auto n = conf::number(s, 0, 0xFFFFFFFFull)) return std::uint32_t(*n);
  unsigned a, b, c, d;
  char tail;
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a < 256 && b < 256 &&
      c < 256 && d < 256)
    return (a << 24) | (b << 16) | (c << 8) | d;
  return std::nullopt;
}
std::string key_text(const std::optional<std::uint32_t>& k) { return k ? std::to_string(*k) : "none"; }
/// `gre` takes IPv4 addresses, `ip6gre` IPv6 ones.
std::optional<std::string> gre_families(const TunnelConfig& t, std::string_view mode) {
  const GreConfig& g = *t.get<GreConfig>();
  const bool ip6 = mode == "ip6gre";
  for (const auto* a : {&g.local, &g.remote}) {
    if (a->empty()) continue;
    const char* which = a == &g.local ? "local" : "remote";
    if (ip6 && !a->is_v6())
      return std::string(which) + ": " + a->to_string() + " is IPv4; ip6gre needs IPv6 addresses (use gre)";
    if (!ip6 && a->is_v6())
      return std::string(which) + ": " + a->to_string() + " is IPv6; gre needs IPv4 addresses (use ip6gre)";
  }
  return std::nullopt;
}
}  // namespace

// `gre ...` / `ip6gre ...`, [gre] / [ip6gre]: iproute2's `type gre|ip6gre` words.
const EncapKind& GreConfig::kind() {
  using namespace conf;
  static const EncapKind k{
      .words = {"gre", "ip6gre"},
      .caps = {},
      .usage = "gre|ip6gre local ADDR remote ADDR [key K] [ikey K] [okey K] [csum] [icsum] [ocsum] "
               "[ttl N] [tos N] [mtu N]",
      .reset = reset_to<GreConfig>,
      .rows = join<Row>({
          one_remote_rows<GreConfig>(),
          {
              {{"key", {}, nullptr, Arity::One, Value::Any, {"ikey", "okey"}},
               OFLD_ROW(GreConfig, auto key = gre_key(v[0]);
                        if (!key) return k + ": '" + v[0] + "' is not a number in 0..4294967295 or a dotted quad";
                        c.ikey = *key; c.okey = *key)},
              {{"ikey", {}, nullptr, Arity::One, Value::Any, {"ikey"}},
               OFLD_ROW(GreConfig, auto key = gre_key(v[0]);
                        if (!key) return k + ": '" + v[0] + "' is not a number in 0..4294967295 or a dotted quad";
                        c.ikey = *key)},
              {{"okey", {}, nullptr, Arity::One, Value::Any, {"okey"}},
               OFLD_ROW(GreConfig, auto key = gre_key(v[0]);
                        if (!key) return k + ": '" + v[0] + "' is not a number in 0..4294967295 or a dotted quad";
                        c.okey = *key)},
              {{"csum", {}, nullptr, Arity::Flag, Value::Any, {}}, OFLD_ROW(GreConfig, c.icsum = on; c.ocsum = on)},
              {{"icsum", {}, nullptr, Arity::Flag, Value::Any, {}}, OFLD_ROW(GreConfig, c.icsum = on)},
              {{"ocsum", {}, nullptr, Arity::Flag, Value::Any, {}}, OFLD_ROW(GreConfig, c.ocsum = on)},
          },
          common_rows<false>(),
      }),
      .read_check = gre_families,
      .validate = validate_as<GreConfig>,
      .fixed = {OFLD_FIXED(GreConfig, "remote", c.remote.to_string()),
                OFLD_FIXED(GreConfig, "ikey", key_text(c.ikey)),
                OFLD_FIXED(GreConfig, "okey", key_text(c.okey)),
                OFLD_FIXED(GreConfig, "icsum", on_off(c.icsum)),
                OFLD_FIXED(GreConfig, "ocsum", on_off(c.ocsum))},
  };
  return k;
}

}  // namespace ofld::tunnel

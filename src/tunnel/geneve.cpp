// Geneve configuration, header and decapsulation (RFC 8926; geneve_build_header,
// geneve_udp_encap_recv, geneve_rx).
#include "ofld/tunnel/geneve.hpp"

#include <cstdio>
#include <cstring>

#include "ofld/wire/bytes.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::tunnel {

namespace gn = wire::geneve;

namespace {

/// Largest option data: the 5-bit Length field counts 4-byte words (RFC 8926 §3.5).
constexpr std::size_t kMaxOptData = 31 * 4;
/// Largest option list: the 6-bit Opt Len field counts 4-byte words.
constexpr std::size_t kMaxOptions = gn::kMaxLen - gn::kBaseLen;
/// Protocol type of an inner Ethernet frame (Transparent Ethernet Bridging).
constexpr std::uint16_t kProtoTeb = 0x6558;

int hex_digit(char ch) noexcept {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}
/// A hexadecimal number of 1..max_digits digits.
std::optional<std::uint32_t> hex_number(std::string_view s, std::size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  std::uint32_t v = 0;
  for (char ch : s) {
    const int d = hex_digit(ch);
    if (d < 0) return std::nullopt;
    v = v << 4 | std::uint32_t(d);
  }
  return v;
}

DecapResult fail(Drop d, Counters& c) {
  DecapResult r;
  r.reason = d;
  c.drop(d);
  return r;
}

}  // namespace

std::optional<std::string> parse_geneve_options(std::string_view text, std::vector<GeneveOption>& out) {
  out.clear();
  std::size_t total = 0;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty())
      return std::string("options: a ',' must be followed by another CLASS:TYPE:DATA");
    const std::string shown(item);
    const std::size_t c1 = item.find(':');
    const std::size_t c2 = c1 == std::string_view::npos ? c1 : item.find(':', c1 + 1);
    if (c2 == std::string_view::npos || item.find(':', c2 + 1) != std::string_view::npos)
      return "options: '" + shown + "' is not CLASS:TYPE:DATA (hexadecimal, e.g. 0102:80:00c0ffee)";
    const auto cls = hex_number(item.substr(0, c1), 4);
    const auto type = hex_number(item.substr(c1 + 1, c2 - c1 - 1), 2);
    if (!cls) return "options: class '" + std::string(item.substr(0, c1)) + "' is not 1..4 hex digits";
    if (!type) return "options: type '" + std::string(item.substr(c1 + 1, c2 - c1 - 1)) + "' is not 1..2 hex digits";
    const std::string_view data = item.substr(c2 + 1);
    if (data.size() % 8 != 0 || data.size() / 2 > kMaxOptData)
      return "options: data of '" + shown + "' must be a multiple of 4 bytes (8 hex digits), at most " +
             std::to_string(kMaxOptData) + " bytes";
    GeneveOption o;
    o.opt_class = std::uint16_t(*cls);
    o.type = std::uint8_t(*type);
    for (std::size_t i = 0; i < data.size(); i += 2) {
      const int hi = hex_digit(data[i]), lo = hex_digit(data[i + 1]);
      if (hi < 0 || lo < 0) return "options: data of '" + shown + "' is not hexadecimal";
      o.data.push_back(std::uint8_t(hi << 4 | lo));
    }
    total += gn::kOptHdrLen + o.data.size();
    if (total > kMaxOptions)
      return "options: " + std::to_string(total) + " bytes of options exceed Geneve's " +
             std::to_string(kMaxOptions) + " (Opt Len is 6 bits of 4-byte words)";
    out.push_back(std::move(o));
  }
  return std::nullopt;
}

std::string geneve_options_text(const std::vector<GeneveOption>& opts) {
  std::string s;
  char b[16];
  for (const auto& o : opts) {
    if (!s.empty()) s += ',';
    std::snprintf(b, sizeof b, "%04x:%02x:", o.opt_class, o.type);
    s += b;
    for (auto x : o.data) {
      std::snprintf(b, sizeof b, "%02x", x);
      s += b;
    }
  }
  return s;
}

std::size_t GeneveConfig::options_len() const noexcept {
  std::size_t n = 0;
  for (const auto& o : options) n += gn::kOptHdrLen + o.data.size();
  return n;
}

std::optional<std::string> validate(const GeneveConfig& cfg, bool need_remote) {
  if (cfg.vni > 0xFFFFFF) return "id: VNI " + std::to_string(cfg.vni) + " exceeds 24 bits";
  if (cfg.local.empty()) return std::string("local: an underlay address is required");
  if (need_remote && cfg.remotes.empty())
    return std::string("remote: the remote address is required (or evpn)");
  for (const auto& r : cfg.remotes) {
    if (r.empty()) return std::string("remote: the remote address is required");
    if (r.family != cfg.local.family)
      return "remote: " + r.to_string() + " is not the address family of local " + cfg.local.to_string();
  }
  if (cfg.dstport == 0) return std::string("dstport: must not be 0");
  if ((cfg.port_min || cfg.port_max) && cfg.port_max <= cfg.port_min)
    return "srcport: MAX " + std::to_string(cfg.port_max) + " must be greater than MIN " +
           std::to_string(cfg.port_min);
  std::size_t total = 0;
  for (const auto& o : cfg.options) {
    if (o.data.size() % 4 != 0 || o.data.size() > kMaxOptData)
      return std::string("options: option data must be a multiple of 4 bytes, at most 124");
    total += gn::kOptHdrLen + o.data.size();
  }
  if (total > kMaxOptions) return std::string("options: more than 252 bytes of options");
  if (!cfg.ipv6() && (cfg.udp6_zero_csum_tx || cfg.udp6_zero_csum_rx))
    return std::string("udp6zerocsumtx/udp6zerocsumrx: only valid with an IPv6 underlay");
  if (cfg.remcsum_tx || cfg.remcsum_rx)
    return std::string("remcsumtx/remcsumrx: Geneve has no remote checksum offload");
  if (cfg.mtu != 0 && (cfg.mtu < 68 || cfg.mtu > 65535 - 14))
    return "mtu: " + std::to_string(cfg.mtu) + " outside 68..65521";
  return std::nullopt;
}

std::size_t geneve_build_header(const GeneveConfig& cfg, std::span<std::uint8_t> out) noexcept {
  const std::size_t opts = cfg.options_len();
  const std::size_t n = gn::kBaseLen + opts;
  if (out.size() < n || opts > kMaxOptions || opts % 4 != 0) return 0;
  bool critical = false;
  for (const auto& o : cfg.options) critical = critical || o.critical();
  out[0] = std::uint8_t(gn::kVersion << 6 | opts / 4);
  out[1] = critical ? gn::kFlagCritical : 0;
  wire::store_be16(&out[2], kProtoTeb);
  wire::store_be24(&out[4], cfg.vni);
  out[7] = 0;
  std::size_t at = gn::kBaseLen;
  for (const auto& o : cfg.options) {
    wire::store_be16(&out[at], o.opt_class);
    out[at + 2] = o.type;
    out[at + 3] = std::uint8_t(o.data.size() / 4);  // the three reserved bits stay 0
    if (!o.data.empty()) std::memcpy(&out[at + gn::kOptHdrLen], o.data.data(), o.data.size());
    at += gn::kOptHdrLen + o.data.size();
  }
  return n;
}

DecapResult geneve_decap(std::span<const std::uint8_t> payload, const GeneveConfig& cfg,
                         OuterCsum outer, Counters& c, const core::BufferRef* owner, int outer_tos) {
  // RFC 6935 §5 / UDP_NO_CHECK6_RX, as for VXLAN.
  if (outer == OuterCsum::Zero && cfg.ipv6() && !cfg.udp6_zero_csum_rx)
    return fail(Drop::RxUdp6ZeroCsum, c);
  if (payload.size() < gn::kBaseLen) return fail(Drop::RxTruncated, c);
  // geneve_udp_encap_recv: version first ("return packets with reserved bits set")
  if ((payload[0] >> 6) != gn::kVersion) return fail(Drop::RxBadHeader, c);
  const auto h = wire::GeneveHeader<>::parse(payload);
  if (!h.ok()) return fail(Drop::RxTruncated, c);  // Opt Len past the datagram
  const auto& g = h.value();
  // without inner_proto_inherit only Ethernet is carried (rx_dropped)
  if (g.protocol() != kProtoTeb) return fail(Drop::RxBadProtocol, c);
  if (g.vni() != cfg.vni) return fail(Drop::RxWrongVni, c);
  // The option list: every option inside Opt Len; critical ones understood (GN-10).
  bool any_critical = false, unknown_critical = false;
  const bool well_formed = g.for_each_option(
      [&](std::uint16_t cls, std::uint8_t type, std::span<const std::uint8_t>) {
        if (!(type & gn::kOptTypeCritical)) return;
        any_critical = true;
        bool known = false;
        for (const auto& o : cfg.options) known = known || (o.opt_class == cls && o.type == type);
        unknown_critical = unknown_critical || !known;
      });
  if (!well_formed) return fail(Drop::RxBadHeader, c);
  if (g.oam()) return fail(Drop::RxOam, c);  // RFC 8926 §3.4: not forwarded
  if (unknown_critical || (g.critical() && !any_critical)) return fail(Drop::RxCriticalOption, c);
  return decap_ethernet(payload.subspan(g.header().size()), outer, c, owner, outer_tos);
}

}  // namespace ofld::tunnel

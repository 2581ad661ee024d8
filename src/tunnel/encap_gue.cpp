// The GUE encapsulation: IP over UDP (draft-ietf-intarea-gue; fou_core.c, `ipip/sit encap
// gue`): a TUN device and a UDP socket on `port`, the one remote, every flow from `port`.
#include "encap_ip.hpp"
#include "encap_rows.hpp"

#include "ofld/wire/tunnel.hpp"

namespace ofld::tunnel {

namespace {

class GueEncap final : public Encapsulation {
 public:
  explicit GueEncap(const GueConfig& c) : c_(c) {}
  Encap kind() const noexcept override { return Encap::Gue; }
  const TunnelCommon& common() const noexcept override { return c_; }
  const UdpTunnelSettings* udp() const noexcept override { return &c_; }

  wire::LinkType link() const noexcept override { return wire::LinkType::RawIp; }
  SocketKind socket() const noexcept override { return SocketKind::Udp; }
  std::uint16_t dst_port() const noexcept override { return c_.port; }
  int overhead() const noexcept override { return c_.overhead(); }
  // Datagrams are copied into each packet: the NAPI weight, so that GRO merges them while
  // they are cache-hot (bench/tunnel-profile.md, the GRO batch measurements).
  std::size_t default_gro_backlog() const noexcept override { return 64; }

  std::optional<Drop> tx_check(std::span<const std::uint8_t> p) const noexcept override {
    if (!detail::is_ip(p)) return Drop::TxNotIp;
    return std::nullopt;
  }
  std::uint8_t outer_tos(std::span<const std::uint8_t> p) const noexcept override {
    return ip_outer_tos(c_, p);
  }
  std::uint16_t src_port(std::span<const std::uint8_t>) const noexcept override { return c_.port; }
  bool rco_tx() const noexcept override { return c_.remcsum_tx && c_.tx_outer_csum(); }
  bool remotes(std::span<const std::uint8_t>, std::uint64_t, std::vector<IpAddr>& out,
               Counters&) override {
    out.assign(1, c_.remote);
    return false;
  }
  bool rco_encodable(const core::Packet& seg) const noexcept override {
    const int start = seg.csum_start_offset();
    return start >= 0 && start + std::get<core::CsumPartial>(seg.csum).csum_offset <= 0xFFFF;
  }
  EncapInfo encap(const core::Packet& seg, bool rco,
                  std::span<std::uint8_t, kMaxTunnelHdr> hdr) const override {
    EncapInfo i;
    const unsigned ver = seg.headlen() ? wire::ip_version(seg.head()) : 0;
    if (ver != 4 && ver != 6) {
      i.reason = Drop::TxNotIp;
      return i;
    }
    wire::GueRepr h;
    h.proto = ver == 4 ? wire::ipproto::kIpip : wire::ipproto::kIpv6;
    if (rco) {
      // W-27: start counted from the end of the GUE header (= the inner IP header here);
      // offset = start + csum_offset.
      const auto start = std::uint16_t(seg.csum_start_offset());
      h.remcsum = wire::GueHeader<>::Remcsum{
          start, std::uint16_t(start + std::get<core::CsumPartial>(seg.csum).csum_offset)};
      i.rco = true;
    }
    i.hdr_len = h.emit(hdr);
    i.ok = i.hdr_len != 0;
    return i;
  }

  bool accepts(const IpAddr& from) const noexcept override { return from == c_.remote; }
  DecapResult decap(std::span<const std::uint8_t> payload, OuterCsum outer, Counters& c,
                    const core::BufferRef*, int outer_tos) const override {
    return gue_decap(payload, c_, outer, c, outer_tos);
  }

  std::vector<IpAddr> configured_remotes() const override { return {c_.remote}; }
  wire::peer::Encap peer_encap() const noexcept override { return wire::peer::Encap::Gue; }
  std::string describe() const override {
    return detail::describe_ends(c_.local, c_.remote) + " port " + std::to_string(c_.port) +
           (c_.remcsum_tx ? " remcsumtx" : "") + (c_.remcsum_rx ? " remcsumrx" : "") +
           (c_.tx_outer_csum() ? "" : " (no outer UDP checksum)");
  }
  std::optional<std::string> integrity_error() const override {
    // The outer UDP checksum protects the inner packet once its own checksum is elided.
    if (c_.tx_outer_csum() && !c_.udp6_zero_csum_rx) return std::nullopt;
    return std::string("integrity: needs the outer UDP checksum in both directions (it is "
                       "what protects the inner packet once the inner checksum is elided); "
                       "remove ") +
           (!c_.tx_outer_csum() ? (c_.ipv6() ? "udp6zerocsumtx" : "noudpcsum") : "udp6zerocsumrx");
  }

 private:
  GueConfig c_;
};

}  // namespace

std::unique_ptr<Encapsulation> make_encapsulation(const GueConfig& cfg) {
  return std::make_unique<GueEncap>(cfg);
}

// `gue ...` / [gue]: iproute2's `ipip/sit ... encap gue` words.
const EncapKind& GueConfig::kind() {
  using namespace conf;
  static const EncapKind k{
      .words = {"gue"},
      .caps = {},
      .usage = "gue local ADDR remote ADDR port P [udpcsum|noudpcsum] [udp6zerocsumtx] "
               "[udp6zerocsumrx] [remcsumtx] [remcsumrx] [remcsum-nopartial] [ttl N] [tos N] [mtu N]",
      .reset = reset_to<GueConfig>,
      .rows = join<Row>({
          one_remote_rows<GueConfig>(),
          {{{"port", {"dstport", "encap-dport"}, nullptr, Arity::One, Value::Any, {"port"}},
            OFLD_ROW(GueConfig, std::uint64_t n = 0; if (auto e = num_arg(k, v, 1, 65535, n)) return e;
                     c.port = std::uint16_t(n))}},
          common_rows<false>(), udp_rows(), rco_rows(),
      }),
      .validate = validate_as<GueConfig>,
      .fixed = {OFLD_FIXED(GueConfig, "remote", c.remote.to_string()),
                OFLD_FIXED(GueConfig, "port", num_text(c.port))},
  };
  return k;
}

}  // namespace ofld::tunnel

// TunnelConfig's views of its encapsulation's configuration, and the Encapsulation of a
// configuration (each encapsulation's make_encapsulation, in its own encap_*.cpp).
#include "ofld/tunnel/encapsulation.hpp"

namespace ofld::tunnel {

std::string_view to_string(Encap e) noexcept {
  switch (e) {
    case Encap::Vxlan: return "vxlan";
    case Encap::Gue: return "gue";
    case Encap::Gre: return "gre";
    case Encap::Ip6gre: return "ip6gre";
    case Encap::Geneve: return "geneve";
  }
  return "unknown";
}

const TunnelCommon& TunnelConfig::common() const noexcept {
  return std::visit([](const auto& c) -> const TunnelCommon& { return c; }, encap);
}
TunnelCommon& TunnelConfig::common() noexcept {
  return std::visit([](auto& c) -> TunnelCommon& { return c; }, encap);
}

OuterTtlDf Encapsulation::outer_ttl_df(std::span<const std::uint8_t> frame) const noexcept {
  if (link() == wire::LinkType::Ethernet && socket() == SocketKind::Udp) return tunnel::outer_ttl_df(common(), frame);
  return OuterTtlDf{common().ttl, -1};  // GUE, GRE: the socket's TTL and DF (no ttl inherit, no df)
}

namespace {
template <class C>
constexpr bool kOverUdp = std::is_base_of_v<UdpTunnelSettings, std::remove_cvref_t<C>>;
}  // namespace

const UdpTunnelSettings* TunnelConfig::udp() const noexcept {
  return std::visit(
      [](const auto& c) -> const UdpTunnelSettings* {
        if constexpr (kOverUdp<decltype(c)>) return &c;
        else return nullptr;
      },
      encap);
}
UdpTunnelSettings* TunnelConfig::udp() noexcept {
  return std::visit(
      [](auto& c) -> UdpTunnelSettings* {
        if constexpr (kOverUdp<decltype(c)>) return &c;
        else return nullptr;
      },
      encap);
}

std::string_view TunnelConfig::name() const noexcept {
  return std::visit([](const auto& c) { return c.name(); }, encap);
}

int TunnelConfig::overhead() const noexcept {
  return std::visit([](const auto& c) { return c.overhead(); }, encap);
}

std::unique_ptr<Encapsulation> make_encapsulation(const TunnelConfig& cfg) {
  return std::visit([](const auto& c) { return make_encapsulation(c); }, cfg.encap);
}

}  // namespace ofld::tunnel

namespace ofld::tunnel {

namespace {
/// skb_checksum_help on a segment the decision said to finish before its header.
bool sum_now(core::Packet& seg, EncapInfo& info) {
  if (core::checksum_help(seg) != core::PacketError::Ok) {
    info.reason = Drop::TxCsumFailed;
    return false;
  }
  info.csum_sw = true;
  return true;
}
}  // namespace

InnerCsumFacts inner_csum_facts(const Encapsulation& enc, const core::Packet& seg, bool elide) noexcept {
  InnerCsumFacts f;
  f.partial = seg.ip_summed() == core::IpSummed::Partial;
  f.elide = elide;
  f.rco_tx = enc.rco_tx();
  if (f.partial) {
    f.inet = !std::get<core::CsumPartial>(seg.csum).not_inet;
    f.start_known = seg.csum_start_offset() >= 0;
    f.rco_encodable = f.rco_tx && f.start_known && enc.rco_encodable(seg);
  }
  return f;
}

EncapInfo encap_one(const Encapsulation& enc, core::Packet& seg,
                    std::span<std::uint8_t, kMaxTunnelHdr> hdr) {
  const InnerCsum how = inner_csum_plan(inner_csum_facts(enc, seg, false));
  EncapInfo pre;
  if ((how == InnerCsum::SumInTrain || how == InnerCsum::SumInEncap) && !sum_now(seg, pre)) return pre;
  EncapInfo i = enc.encap(seg, how == InnerCsum::Rco, hdr);
  i.csum_sw = pre.csum_sw;
  return i;
}

}  // namespace ofld::tunnel

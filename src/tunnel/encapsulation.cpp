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
  }
  return "unknown";
}

const TunnelCommon& TunnelConfig::common() const noexcept {
  return std::visit([](const auto& c) -> const TunnelCommon& { return c; }, encap);
}
TunnelCommon& TunnelConfig::common() noexcept {
  return std::visit([](auto& c) -> TunnelCommon& { return c; }, encap);
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

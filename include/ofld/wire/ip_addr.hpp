// ofld/wire/ip_addr.hpp — an IPv4 or IPv6 address as a wire-format value.
//
// `bytes` hold the address exactly as it appears in the IP header (network order): 4 bytes
// for IPv4 (RFC 791 §3.1, the rest zero), 16 for IPv6 (RFC 8200 §3). Text forms: dotted quad
// and RFC 4291 §2.2 / RFC 5952 (inet_pton / inet_ntop). Used by the tunnel endpoint (underlay
// remotes, FDB) and the io sockets; tunnel::IpAddr names this type.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ofld::wire {

/// An IP address (IPv4 or IPv6), bytes in network order.
struct IpAddr {
  std::uint8_t family = 0;  ///< 4 or 6; 0 = unset
  std::array<std::uint8_t, 16> bytes{};
  bool is_v6() const noexcept { return family == 6; }
  bool empty() const noexcept { return family == 0; }
  /// Parse dotted-quad or RFC 4291 text (inet_pton). nullopt when neither.
  static std::optional<IpAddr> parse(std::string_view text);
  /// inet_ntop text (RFC 5952 canonical for IPv6); "unset" when empty.
  std::string to_string() const;
  friend bool operator==(const IpAddr&, const IpAddr&) = default;
  friend auto operator<=>(const IpAddr&, const IpAddr&) = default;
};

}  // namespace ofld::wire

// ofld/io/link.hpp — link attributes set over rtnetlink (RTM_NEWLINK on an existing link, the
// request `ip link set dev NAME ...` sends; rtnetlink(7), do_setlink in net/core/rtnetlink.c).
#pragma once

#include <cstdint>
#include <string_view>

#include "ofld/io/result.hpp"

namespace ofld::io {

/// `ip link set dev IFNAME gso_max_segs SEGS`: the most segments the kernel puts in one GSO
/// packet toward this device (IFLA_GSO_MAX_SEGS; TCP reads it as sk_gso_max_segs when it
/// builds a TSO frame). 1..65535 (GSO_MAX_SEGS). Errors: no such device, the kernel's refusal
/// (EPERM without CAP_NET_ADMIN, EINVAL out of range), each named in the message.
Status set_link_gso_max_segs(std::string_view ifname, std::uint32_t segs);

/// GSO_MAX_SIZE / GRO_MAX_SIZE: the largest BIG TCP limit the kernel accepts (8 × 65535).
inline constexpr std::uint32_t kLinkMaxSize = 8 * 65535;

/// The four BIG TCP size limits of a link, bytes; 0 leaves that one unchanged.
struct LinkSizeLimits {
  std::uint32_t gso_max_size = 0;       ///< IFLA_GSO_MAX_SIZE (`ip link set … gso_max_size`)
  std::uint32_t gso_ipv4_max_size = 0;  ///< IFLA_GSO_IPV4_MAX_SIZE (Linux 6.3)
  std::uint32_t gro_max_size = 0;       ///< IFLA_GRO_MAX_SIZE (Linux 5.19)
  std::uint32_t gro_ipv4_max_size = 0;  ///< IFLA_GRO_IPV4_MAX_SIZE (Linux 6.3)
};

/// Set the non-zero limits of `l` on IFNAME, one RTM_NEWLINK each (the IPv4 ones over
/// netlink: Debian 12's iproute2 cannot set them). Errors: a value above kLinkMaxSize, no
/// such device, the kernel's refusal (EPERM, EINVAL, or an unknown attribute on a kernel
/// before 6.3), each named with the attribute.
Status set_link_size_limits(std::string_view ifname, const LinkSizeLimits& l);

}  // namespace ofld::io

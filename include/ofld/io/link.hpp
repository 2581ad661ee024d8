// ofld/io/link.hpp — link attributes set over rtnetlink (RTM_NEWLINK on an existing link, the
// request `ip link set dev NAME ...` sends; rtnetlink(7), do_setlink in net/core/rtnetlink.c).
#pragma once

#include <cstdint>
#include <string>
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

/// What the kernel says of a link by that name in the caller's network namespace
/// (RTM_GETLINK: IFLA_LINKINFO, and for a TUN/TAP its IFLA_INFO_DATA as tun_fill_info in
/// drivers/net/tun.c fills it; what `ip -d link show` prints).
struct TunLinkInfo {
  bool exists = false;         ///< a link of that name exists
  std::string kind;            ///< IFLA_INFO_KIND: "tun" for TUN/TAP, "veth", "dummy", ...; "" for none
  bool tap = false;            ///< IFLA_TUN_TYPE is IFF_TAP (Ethernet), else IFF_TUN (raw IP)
  bool multi_queue = false;    ///< IFLA_TUN_MULTI_QUEUE: made with IFF_MULTI_QUEUE
  std::uint32_t queues = 0;    ///< IFLA_TUN_NUM_QUEUES: queues attached now (multi-queue devices)
  bool is_tun() const noexcept { return kind == "tun"; }
};

/// The link IFNAME as TunLinkInfo; `exists` false when there is none. Errors: the netlink
/// request failed (socket, send, receive, or the kernel's error other than ENODEV), named.
Result<TunLinkInfo> tun_link_info(std::string_view ifname);

}  // namespace ofld::io

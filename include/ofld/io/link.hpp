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

}  // namespace ofld::io

// SKB_GSO_* bit names (see include/ofld/core/gso_info.hpp).
#include "ofld/core/gso_info.hpp"

namespace ofld::core {

namespace skb_gso {
std::string_view name(std::uint32_t bit) noexcept {
  static constexpr std::string_view kNames[32] = {
      "TCPV4", "DODGY", "TCP_ECN", "TCP_FIXEDID", "TCPV6", "FCOE", "GRE", "GRE_CSUM",
      "IPXIP4", "IPXIP6", "UDP_TUNNEL", "UDP_TUNNEL_CSUM", "PARTIAL", "TUNNEL_REMCSUM",
      "SCTP", "ESP", "UDP", "UDP_L4", "FRAGLIST", "TCP_ACCECN", "", "", "", "", "", "", "",
      "", "", "", "TCP_FIXEDID_OUTER", "TCP_FIXEDID_INNER"};
  if (bit == 0 || (bit & (bit - 1)) != 0) return "";
  return kNames[__builtin_ctz(bit)];
}
}  // namespace skb_gso

}  // namespace ofld::core

// Private to src/tunnel: the common inner frame of a VXLAN datagram read in one pass (issue
// 16, receive side). decap checks the inner IP lengths (check_inner_frame), splits the frame
// into linear headers and a payload fragment (inner_header_len) and looks for a pseudo-header
// seed in the TCP checksum field (seed_partial_ip, spec K-9); each of those parses the
// Ethernet, IPv4 and TCP headers again. For the frame a TCP stream sends — untagged Ethernet,
// IPv4 without options, TCP, not a fragment, lengths that hold — fast_inner_tcp4 finds all
// three answers in one pass over the same bytes; for every other frame it answers nullopt and
// decap takes the general path, so what it decides never differs from the three functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "ofld/core/csum.hpp"
#include "ofld/core/csum_short.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::tunnel::detail {

/// What check_inner_frame, inner_header_len and seed_partial_ip say about an untagged
/// Ethernet / IPv4 (IHL 5) / TCP frame.
struct FastInner {
  /// check_inner_frame's len (verdict Ok): 14 + the IPv4 tot_len, padding after it excluded.
  std::size_t len = 0;
  /// inner_header_len of the frame trimmed to `len`: 14 + 20 + the TCP data offset, or `len`
  /// when the TCP header does not fit in the IP packet (the frame is then kept linear).
  std::size_t hdr_len = 0;
  /// seed_partial_ip of the trimmed IP packet found the seed: TCP header 34 bytes into the
  /// frame, field at csum_offset 16 holding the folded pseudo-header sum.
  bool seed = false;
};

/// The one-pass reading of `frame` (the inner Ethernet frame as received, padding
/// included), or nullopt when it is not untagged Ethernet + IPv4 without options + TCP, not
/// a fragment (MF or offset), with 20 <= tot_len <= the bytes after the Ethernet header:
/// then the general functions decide (drops included).
inline std::optional<FastInner> fast_inner_tcp4(std::span<const std::uint8_t> frame) noexcept {
  namespace eth = wire::eth;
  namespace v4 = wire::ipv4;
  namespace tcp = wire::tcp;
  constexpr std::size_t ip = eth::kHdrLen, th = ip + v4::kMinLen;
  const std::uint8_t* f = frame.data();
  const std::size_t n = frame.size();
  if (n < th || wire::load_be16(f + eth::kTypeOffset) != wire::ethertype::kIpv4 ||
      f[ip + v4::kVerIhlOffset] != v4::kVerIhl5 || f[ip + v4::kProtocolOffset] != wire::ipproto::kTcp ||
      (wire::load_be16(f + ip + v4::kFragOffOffset) & (v4::kMF | v4::kOffsetMask)) != 0)
    return std::nullopt;
  const std::size_t tot = wire::load_be16(f + ip + v4::kTotLenOffset);
  if (tot < v4::kMinLen || tot > n - ip) return std::nullopt;
  FastInner r;
  r.len = ip + tot;
  const std::size_t l4len = tot - v4::kMinLen;
  if (l4len < tcp::kMinLen) {
    r.hdr_len = r.len;
    return r;
  }
  const std::size_t doff = std::size_t(f[th + tcp::kDoffOffset] >> 4) * 4;
  if (doff < tcp::kMinLen || doff > l4len) {
    r.hdr_len = r.len;
    return r;
  }
  r.hdr_len = th + doff;
  const csum::wsum ps = csum::csum_tcpudp_nofold_inline(
      f + ip + v4::kSaddrOffset, f + ip + v4::kDaddrOffset, std::uint32_t(l4len), wire::ipproto::kTcp);
  r.seed = wire::load_be16(f + th + tcp::kCheckOffset) == csum::csum_fold16(ps);
  return r;
}

}  // namespace ofld::tunnel::detail

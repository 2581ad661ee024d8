// Helpers for the GSO tests. Frames come from the one test frame builder
// (tests/common/frame_builder.hpp, preset fb::gso: RFC layouts with complete, valid
// checksums); its names are brought in here. Tests check outputs against the spec's rules and
// against the RFC checksum definition (the sum over pseudo-header + L4 region must fold to
// 0xFFFF) with the checkers below.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"
#include "../common/frame_builder.hpp"

namespace gso_test {

using Bytes = std::vector<std::uint8_t>;
using ofld::fb::gso::encap;
using ofld::fb::gso::ipip_encap;
using ofld::fb::gso::Outer;
using ofld::fb::gso::TcpSpec;
using ofld::fb::gso::tcp_frame;
using ofld::fb::gso::udp_frame;

inline void put16(Bytes& b, std::size_t o, std::uint16_t v) { ofld::wire::store_be16(&b[o], v); }

inline Bytes payload_bytes(std::size_t n, std::uint8_t seed) { return ofld::fb::pattern(n, seed); }

// L4 checksum per RFC 793/768/8200: ~fold(pseudo + sum(L4 region with field zero)).
inline std::uint16_t l4_checksum(const std::uint8_t* ip, bool v6, const std::uint8_t* l4,
                                 std::size_t l4len, std::uint8_t proto) {
  using namespace ofld::csum;
  wsum s = csum_partial(l4, l4len, 0);
  return v6 ? csum_ipv6_magic(ip + 8, ip + 24, std::uint32_t(l4len), proto, s)
            : csum_tcpudp_magic(ip + 12, ip + 16, std::uint32_t(l4len), proto, s);
}

// True when the L4 checksum of the L4 region is valid (RFC 1071: sum incl. field == 0xFFFF).
inline bool l4_valid(const std::uint8_t* ip, bool v6, const std::uint8_t* l4, std::size_t l4len,
                     std::uint8_t proto) {
  using namespace ofld::csum;
  wsum s = csum_partial(l4, l4len, 0);
  wsum ps = v6 ? csum_ipv6_nofold(ip + 8, ip + 24, std::uint32_t(l4len), proto, s)
               : csum_tcpudp_nofold(ip + 12, ip + 16, std::uint32_t(l4len), proto, s);
  return csum_fold16(ps) == 0xffff;
}

inline std::uint16_t pseudo_only(const std::uint8_t* ip, bool v6, std::size_t l4len,
                                 std::uint8_t proto) {
  using namespace ofld::csum;
  return v6 ? csum_fold16(csum_ipv6_nofold(ip + 8, ip + 24, std::uint32_t(l4len), proto))
            : csum_fold16(csum_tcpudp_nofold(ip + 12, ip + 16, std::uint32_t(l4len), proto));
}

/// Parse + prepare for GSO (PARTIAL with seed), as the stack would hand it.
inline ofld::core::Packet prepare(const Bytes& f, std::uint16_t mss,
                                  std::uint16_t gue_port = 0) {
  ofld::wire::ParseOptions po;
  po.gue_port = gue_port;
  auto l = ofld::wire::parse_frame(f, ofld::wire::LinkType::Ethernet, po);
  if (!l) return ofld::core::Packet::from_bytes(f);
  ofld::gso::PrepareOptions o;
  o.gso_size = mss;
  return ofld::gso::prepare_frame(f, l.value(), o).pkt;
}

/// A TCPv4 super-packet as a socket builds it: headers linear, the payload in fragments of
/// `frag` bytes (the first `big` payload bytes in 4000-byte ones), each in its own buffer
/// (appended to `bufs`, which keep one reference each).
inline ofld::core::Packet socket_packet(std::size_t payload, std::uint16_t mss, std::size_t frag,
                                        std::vector<ofld::core::BufferRef>& bufs,
                                        std::size_t big = 0) {
  TcpSpec s;
  s.payload = payload;
  ofld::core::Packet p = prepare(tcp_frame(s), mss);
  const Bytes b = p.to_bytes();
  const std::size_t hdr = b.size() - payload;
  ofld::core::Packet q = ofld::core::Packet::from_bytes({b.data(), hdr});
  q.meta() = p.meta();
  for (std::size_t off = hdr; off < b.size();) {
    const std::size_t n = std::min(off - hdr < big ? std::size_t(4000) : frag, b.size() - off);
    bufs.push_back(ofld::core::Buffer::make({b.data() + off, n}));
    if (q.add_frag(bufs.back(), 0, n) != ofld::core::PacketError::Ok) std::abort();
    off += n;
  }
  return q;
}

/// The innermost payload's first byte of a PARTIAL GSO packet: its innermost L4 header
/// (csum_start) plus that header's length (UDP 8, TCP its data offset); 0 when not PARTIAL.
inline std::size_t payload_offset(const ofld::core::Packet& p) {
  const auto* cp = std::get_if<ofld::core::CsumPartial>(&p.csum);
  if (!cp) return 0;
  const Bytes b = p.to_bytes();
  const std::size_t th = std::size_t(cp->csum_start - p.data_pos());
  if (p.gso.type & ofld::core::skb_gso::UDP_L4) return th + 8;
  return th + std::size_t(b[th + 12] >> 4) * 4;
}

/// A device with exactly these features (and the same for encapsulated packets).
inline ofld::core::Device device(ofld::core::Features f) {
  return ofld::core::Device::with_features(f);
}

/// A device for GSO_PARTIAL tests: `features` (GSO_PARTIAL added) with the tunnel bits in
/// `partial_only` usable only for GSO_PARTIAL packets (dev->gso_partial_features, F-6);
/// hw_enc_features = features (F-9 adds SG and GSO_PARTIAL).
inline ofld::core::Device partial_device(ofld::core::Features features,
                                         ofld::core::Features partial_only) {
  namespace nf = ofld::core::netif_f;
  ofld::core::Device d;
  d.features = features | partial_only | nf::GSO_PARTIAL;
  d.gso_partial_features = partial_only;
  d.hw_enc_features = features | partial_only | nf::GSO_PARTIAL | nf::SG;
  return d;
}

}  // namespace gso_test

// virtio_net_hdr ⇄ packet metadata. Spec S-1..S-8 (include/linux/virtio_net.h, 6.12 with the
// 2024 csum_start/csum_offset tightening; public bugs B1, B2, B5).
#include "ofld/offload/virtio_net.hpp"

#include <algorithm>

#include "ofld/wire/l4.hpp"

namespace ofld::offload::virtio {

namespace vn = wire::virtio_net;
namespace sg = core::skb_gso;

std::string_view to_string(VnetReject r) noexcept {
  switch (r) {
    case VnetReject::Ok: return "ok";
    case VnetReject::UnknownGsoType: return "unknown-gso-type";
    case VnetReject::GsoSizeZero: return "gso-size-zero";
    case VnetReject::CsumOutsideFrame: return "csum-outside-frame";
    case VnetReject::CsumStartTooSmall: return "csum-start-too-small";
    case VnetReject::L4HeaderMissing: return "l4-header-missing";
    case VnetReject::Unparseable: return "unparseable";
    case VnetReject::L4ProtoMismatch: return "l4-proto-mismatch";
    case VnetReject::UsoWithoutNeedsCsum: return "uso-without-needs-csum";
    case VnetReject::UsoBadCsumOffset: return "uso-bad-csum-offset";
    case VnetReject::UsoTooManySegments: return "uso-too-many-segments";
    case VnetReject::UsoWithEcn: return "uso-with-ecn";
    case VnetReject::TcpBadCsumOffset: return "tcp-bad-csum-offset";
    case VnetReject::GsoByFrags: return "gso-by-frags";
    case VnetReject::kCount: break;
  }
  return "?";
}

ToPacket to_packet(const VnetHdr& h, std::span<const std::uint8_t> frame, wire::LinkType link,
                   VnetCounters* counters, const core::BufferRef* owner) {
  ToPacket r;
  auto reject = [&](VnetReject why) {
    r.reason = why;
    if (counters) ++counters->rejected[std::size_t(why)];
    return std::move(r);
  };
  const std::size_t len = frame.size();
  std::uint32_t gso_type = 0, thlen = 0, nh_min_len = 20;
  std::uint8_t ip_proto = 0;
  const bool gso = h.gso_type != vn::kGsoNone;
  if (gso) {  // S-1
    switch (h.gso_type & ~vn::kGsoEcn) {
      case vn::kGsoTcpv4: gso_type = sg::TCPV4, ip_proto = 6, thlen = 20; break;
      case vn::kGsoTcpv6: gso_type = sg::TCPV6, ip_proto = 6, thlen = 20, nh_min_len = 40; break;
      case vn::kGsoUdp: gso_type = sg::UDP, ip_proto = 17, thlen = 8; break;
      case vn::kGsoUdpL4: gso_type = sg::UDP_L4, ip_proto = 17, thlen = 8; break;
      default: return reject(VnetReject::UnknownGsoType);
    }
    if (h.gso_type & vn::kGsoEcn) gso_type |= sg::TCP_ECN;
    if (h.gso_size == 0) return reject(VnetReject::GsoSizeZero);
  }

  // Dissect the frame once; the kernel's flow dissector plays this part for S-3.
  wire::ParseOptions po;
  po.follow_tunnels = false;
  po.allow_clipped = false;
  auto parsed = wire::parse_frame(frame, link, po);
  const wire::Layout* lay = parsed ? &parsed.value() : nullptr;

  std::size_t p_off = 0;
  bool partial = false;
  if (h.flags & vn::kFlagNeedsCsum) {  // S-2
    const std::size_t start = h.csum_start, off = h.csum_offset;
    const std::size_t needed = start + std::max<std::size_t>(thlen, off + 2);
    if (needed > len) return reject(VnetReject::CsumOutsideFrame);
    // skb_partial_csum_set: start and start+off+2 inside the (linear) frame.
    if (start > len || start + off + 2 > len) return reject(VnetReject::CsumOutsideFrame);
    if (start < nh_min_len) return reject(VnetReject::CsumStartTooSmall);
    p_off = start + thlen;
    if (p_off > len) return reject(VnetReject::L4HeaderMissing);
    partial = true;
  } else if (gso) {  // S-3: dissect and require the gso_type's protocol
    if (!lay || lay->transport_header == wire::kNoOffset) return reject(VnetReject::Unparseable);
    const wire::HeaderRef* l4 = nullptr;
    for (const auto& hr : lay->headers())
      if (hr.offset == lay->transport_header) { l4 = &hr; break; }
    const std::uint8_t proto = l4 && l4->kind == wire::HeaderKind::Tcp   ? 6
                               : l4 && l4->kind == wire::HeaderKind::Udp ? 17
                                                                         : 0;
    if (proto != ip_proto) return reject(VnetReject::L4ProtoMismatch);
    p_off = lay->transport_header + thlen;
    if (p_off > len) return reject(VnetReject::L4HeaderMissing);
  }

  std::uint16_t gso_size = h.gso_size;
  if (gso) {  // S-4
    std::size_t nh_off = p_off;
    switch (gso_type & ~sg::TCP_ECN) {
      case sg::UDP:
        nh_off -= thlen;  // UFO counts the UDP header as payload
        break;
      case sg::UDP_L4:
        if (!partial) return reject(VnetReject::UsoWithoutNeedsCsum);
        if (h.csum_offset != 6) return reject(VnetReject::UsoBadCsumOffset);
        if (len - p_off > std::size_t(gso_size) * kUdpMaxSegments)
          return reject(VnetReject::UsoTooManySegments);
        if (gso_type != sg::UDP_L4) return reject(VnetReject::UsoWithEcn);
        break;
      default:  // TCPV4 / TCPV6
        if (partial && h.csum_offset != 16) return reject(VnetReject::TcpBadCsumOffset);
        gso_size = std::max<std::uint16_t>(gso_size, 8);  // TCP_MIN_GSO_SIZE
        break;
    }
    if (gso_size == core::kGsoByFrags) return reject(VnetReject::GsoByFrags);
    // With the read buffer's owner: every header in the head (TCP with its options), the
    // payload a reference into the buffer (no copy).
    std::size_t head = 0;
    const std::uint8_t* const base = owner && *owner ? (*owner)->bytes.data() : nullptr;
    if (base && frame.data() >= base && frame.data() + len <= base + (*owner)->bytes.size()) {
      head = p_off;
      if (ip_proto == 6) {
        auto th = wire::TcpHeader<const std::uint8_t>::parse(frame.subspan(p_off - thlen));
        head = th.ok() ? p_off - thlen + th.value().header().size() : 0;
      }
      if (head >= len) head = 0;
    }
    if (head) {
      r.pkt = core::Packet::from_bytes(frame.first(head));
      r.pkt.add_frag_unchecked(*owner, std::uint32_t(frame.data() - base + head), std::uint32_t(len - head));
    } else {
      r.pkt = core::Packet::from_bytes(frame);
    }
    if (len - nh_off > gso_size) {  // S-5: only then is it a GSO packet
      r.pkt.gso.size = gso_size;
      r.pkt.gso.type = gso_type | sg::DODGY;
      r.pkt.gso.segs = 0;
    }
  } else {
    r.pkt = core::Packet::from_bytes(frame);
  }
  core::Packet& p = r.pkt;
  if (lay) {
    p.mac_header = lay->mac_header == wire::kNoOffset ? core::pos_t(lay->network_header)
                                                      : core::pos_t(lay->mac_header);
    if (lay->network_header != wire::kNoOffset) p.network_header = core::pos_t(lay->network_header);
    if (lay->transport_header != wire::kNoOffset)
      p.transport_header = core::pos_t(lay->transport_header);
    p.protocol = lay->protocol;
  } else {
    p.mac_header = 0;
  }
  if (partial) {
    p.set_partial(int(h.csum_start), h.csum_offset);
    p.transport_header = core::pos_t(h.csum_start);
  }
  if (counters) {
    ++counters->accepted;
    if (p.is_gso()) ++counters->accepted_gso;
  }
  return r;
}

std::optional<VnetHdr> from_packet(const core::Packet& p, bool has_data_valid,
                                   int vlan_hlen) noexcept {
  return from_meta(p.meta(), p.headlen(), p.data_pos(), has_data_valid, vlan_hlen);
}

std::optional<VnetHdr> from_meta(const core::PacketMeta& p, std::size_t headlen,
                                 core::pos_t data_pos, bool has_data_valid,
                                 int vlan_hlen) noexcept {
  VnetHdr h{};
  if (p.gso.size != 0) {  // S-7
    const std::uint32_t t = p.gso.type;
    h.hdr_len = std::uint16_t(headlen);
    h.gso_size = p.gso.size;
    if (t & sg::TCPV4) h.gso_type = vn::kGsoTcpv4;
    else if (t & sg::TCPV6) h.gso_type = vn::kGsoTcpv6;
    else if (t & sg::UDP_L4) h.gso_type = vn::kGsoUdpL4;
    else return std::nullopt;
    if (t & sg::TCP_ECN) h.gso_type |= vn::kGsoEcn;
  }
  if (auto* cp = std::get_if<core::CsumPartial>(&p.csum)) {  // S-8
    h.flags = vn::kFlagNeedsCsum;
    h.csum_start = std::uint16_t(int(cp->csum_start - data_pos) + vlan_hlen);
    h.csum_offset = cp->csum_offset;
  } else if (has_data_valid && core::ip_summed_of(p.csum) == core::IpSummed::Unnecessary) {
    h.flags = vn::kFlagDataValid;
  }
  return h;
}

namespace {

void packet_pieces(const core::Packet& p, std::vector<std::span<const std::uint8_t>>& out) {
  if (p.headlen()) out.push_back(p.head());
  for (const auto& f : p.frags())
    if (f.len) out.push_back(f.bytes());
  for (const auto& m : p.frag_list()) packet_pieces(m, out);
}

}  // namespace

std::size_t tap_pieces(const TapFrame& f, std::vector<std::span<const std::uint8_t>>& out) {
  std::size_t n = out.size();
  if (f.pkt) packet_pieces(*f.pkt, out);
  return out.size() - n;
}

}  // namespace ofld::offload::virtio

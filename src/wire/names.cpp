// Human-readable names and messages for ofld::wire enums and errors.
#include <fmt/format.h>

#include "ofld/wire/error.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::wire {

std::string_view to_string(HeaderKind k) noexcept {
  switch (k) {
    case HeaderKind::Ethernet: return "ethernet";
    case HeaderKind::Vlan: return "vlan";
    case HeaderKind::QinQ: return "qinq";
    case HeaderKind::LinuxSll: return "sll";
    case HeaderKind::LinuxSll2: return "sll2";
    case HeaderKind::Ipv4: return "ipv4";
    case HeaderKind::Ipv6: return "ipv6";
    case HeaderKind::Ipv6HopByHop: return "ipv6-hopopts";
    case HeaderKind::Ipv6Routing: return "ipv6-routing";
    case HeaderKind::Ipv6Fragment: return "ipv6-fragment";
    case HeaderKind::Ipv6DestOpts: return "ipv6-dstopts";
    case HeaderKind::Ah: return "ah";
    case HeaderKind::Tcp: return "tcp";
    case HeaderKind::Udp: return "udp";
    case HeaderKind::Icmp: return "icmp";
    case HeaderKind::Icmpv6: return "icmpv6";
    case HeaderKind::Vxlan: return "vxlan";
    case HeaderKind::Gue: return "gue";
    case HeaderKind::Gre: return "gre";
    case HeaderKind::ErspanII: return "erspan2";
    case HeaderKind::ErspanIII: return "erspan3";
    case HeaderKind::Geneve: return "geneve";
    case HeaderKind::VirtioNet: return "virtio_net_hdr";
    case HeaderKind::Frame: return "frame";
  }
  return "?";
}

std::string_view to_string(Errc e) noexcept {
  switch (e) {
    case Errc::Truncated: return "truncated";
    case Errc::BadVersion: return "bad version";
    case Errc::BadHeaderLen: return "bad header length";
    case Errc::HeaderPastEnd: return "header past end";
    case Errc::BadTotalLen: return "bad total length";
    case Errc::LengthPastEnd: return "length past end";
    case Errc::BadFlags: return "bad flags";
    case Errc::BadOption: return "bad option";
    case Errc::BadRcoOffset: return "bad rco offset";
    case Errc::Unsupported: return "unsupported";
    case Errc::TooDeep: return "too deep";
    case Errc::ZeroLength: return "zero length";
  }
  return "?";
}

std::string ParseError::to_string() const {
  const auto L = wire::to_string(layer);
  std::string msg;
  switch (code) {
    case Errc::Truncated:
      msg = fmt::format("{}: truncated at {} header ({} bytes needed, {} available)", L, L, limit,
                        value);
      break;
    case Errc::BadVersion:
      msg = fmt::format("{}: version {} != {}", L, value, limit);
      break;
    case Errc::BadHeaderLen:
      if (layer == HeaderKind::Ipv4)
        msg = fmt::format("ipv4: ihl {} < {}", value, limit);
      else if (layer == HeaderKind::Tcp)
        msg = fmt::format("tcp: data offset {} < {}", value, limit);
      else
        msg = fmt::format("{}: header length {} < {}", L, value, limit);
      break;
    case Errc::HeaderPastEnd:
      if (layer == HeaderKind::Tcp)
        msg = fmt::format("tcp: data offset {} past end ({} available)", value, limit);
      else
        msg = fmt::format("{}: header length {} past end ({} available)", L, value, limit);
      break;
    case Errc::BadTotalLen:
      msg = fmt::format("{}: length field {} < header length {}", L, value, limit);
      break;
    case Errc::LengthPastEnd:
      msg = fmt::format("{}: length field {} past end ({} available)", L, value, limit);
      break;
    case Errc::BadFlags:
      msg = fmt::format("{}: unknown flags 0x{:x}", L, value);
      break;
    case Errc::BadOption:
      msg = fmt::format("{}: bad option ({} > {})", L, value, limit);
      break;
    case Errc::BadRcoOffset:
      msg = fmt::format("{}: rco offset {} < start {}", L, value, limit);
      break;
    case Errc::Unsupported:
      msg = fmt::format("{}: unsupported (0x{:x})", L, value);
      break;
    case Errc::TooDeep:
      msg = fmt::format("{}: nesting limit {} reached", L, limit);
      break;
    case Errc::ZeroLength:
      if (layer == HeaderKind::Ipv6HopByHop)
        msg = fmt::format("ipv6: payload length 0 and no valid Jumbo Payload option in the "
                          "hop-by-hop header ({} bytes)", limit);
      else
        msg = fmt::format("{}: payload length 0, next header {}, {} bytes: not BIG TCP (TCP or "
                          "UDP over 65535 bytes without extension headers)", L, value, limit);
      break;
  }
  return fmt::format("{} at offset {}", msg, offset);
}

std::string_view to_string(LinkType t) noexcept {
  switch (t) {
    case LinkType::Ethernet: return "ethernet";
    case LinkType::RawIp: return "raw-ip";
    case LinkType::LinuxSll: return "linux-sll";
    case LinkType::LinuxSll2: return "linux-sll2";
  }
  return "?";
}

std::string_view to_string(TunnelKind k) noexcept {
  switch (k) {
    case TunnelKind::None: return "none";
    case TunnelKind::Vxlan: return "vxlan";
    case TunnelKind::Gue: return "gue";
    case TunnelKind::Fou: return "fou";
    case TunnelKind::Gre: return "gre";
    case TunnelKind::GreInUdp: return "gre-in-udp";
    case TunnelKind::Geneve: return "geneve";
    case TunnelKind::Erspan: return "erspan";
    case TunnelKind::Ipip: return "ipip";
    case TunnelKind::Sit: return "sit";
  }
  return "?";
}

std::string_view to_string(StopReason r) noexcept {
  switch (r) {
    case StopReason::EndOfHeaders: return "end of headers";
    case StopReason::UnknownEthertype: return "unknown ethertype";
    case StopReason::UnknownIpProto: return "unknown ip protocol";
    case StopReason::NoNextHeader: return "no next header";
    case StopReason::LaterFragment: return "non-first fragment";
    case StopReason::UnknownGreProto: return "unknown gre protocol";
    case StopReason::GreRouting: return "gre routing present (refused)";
    case StopReason::GreVersion: return "gre version not 0";
    case StopReason::GueControl: return "gue control message";
    case StopReason::TunnelDepth: return "tunnel depth limit";
    case StopReason::HeaderLimit: return "header count limit";
    case StopReason::TunnelsDisabled: return "tunnels disabled";
    case StopReason::NonIpLink: return "non-ethertype link protocol";
    case StopReason::UnknownFrameType: return "unknown erspan frame type";
    case StopReason::HeaderInNextFragment: return "header continues in the next fragment";
  }
  return "?";
}

std::string describe(const Layout& l) {
  std::string s;
  for (const auto& h : l.headers()) {
    if (!s.empty()) s += ' ';
    s += to_string(h.kind);
  }
  if (l.encapsulation) s += fmt::format(" ({} x{})", to_string(l.tunnel), l.tunnel_depth);
  if (l.stop != StopReason::EndOfHeaders)
    s += fmt::format(" [stop: {} 0x{:x} at {}]", to_string(l.stop), l.stop_value, l.stop_offset);
  return s;
}

}  // namespace ofld::wire

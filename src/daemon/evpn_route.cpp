// EVPN route → FDB action; see evpn_route.hpp.
#ifdef OFLD_HAVE_EVPN

#include "evpn_route.hpp"

#include <algorithm>
#include <set>
#include <string>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "attribute.pb.h"

namespace ofld::daemon {

namespace {

using tunnel::IpAddr;
using tunnel::Mac;

/// What the path attributes say: next hop text, MAC Mobility sequence number, route target
/// local admins, PMSI tunnel. `malformed` when an attribute (or extended community) of a type
/// we read has bytes that do not parse as that type.
struct Attrs {
  std::optional<std::string> next_hop;  ///< first NextHopAttribute or MP_REACH next hop
  std::uint32_t seq = 0;
  std::set<std::uint32_t> rts;
  std::optional<apipb::PmsiTunnelAttribute> pmsi;
  std::set<std::uint32_t> encaps;  ///< tunnel types of BGP Encapsulation communities
  bool malformed = false;
};

/// The first next hop of an MpReachNLRIAttribute's bytes into `nh` (when it holds none yet),
/// its NLRIs skipped unparsed: gobgpd repeats the UPDATE's every NLRI in each path's
/// attribute (100 NLRIs an UPDATE: 10,000 parsed for one WatchEvent message otherwise).
/// false: bytes that are no such message (a truncated or malformed field).
bool mp_reach_next_hop(const std::string& bytes, std::optional<std::string>& nh) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                            int(bytes.size()));
  constexpr std::uint32_t kNextHopsTag = 2 << 3 | WireFormatLite::WIRETYPE_LENGTH_DELIMITED;  // next_hops = 2
  while (const std::uint32_t tag = in.ReadTag()) {
    if (tag == kNextHopsTag) {
      std::uint32_t len;
      std::string s;
      if (!in.ReadVarint32(&len) || !in.ReadString(&s, int(len))) return false;
      if (!nh) nh = std::move(s);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

Attrs attrs(const apipb::Path& p) {
  Attrs r;
  for (const auto& a : p.pattrs()) {
    if (a.Is<apipb::NextHopAttribute>()) {
      apipb::NextHopAttribute nh;
      if (!a.UnpackTo(&nh)) r.malformed = true;
      else if (!r.next_hop) r.next_hop = nh.next_hop();
    } else if (a.Is<apipb::MpReachNLRIAttribute>()) {
      if (!mp_reach_next_hop(a.value(), r.next_hop)) r.malformed = true;
    } else if (a.Is<apipb::ExtendedCommunitiesAttribute>()) {
      apipb::ExtendedCommunitiesAttribute ec;
      if (!a.UnpackTo(&ec)) {
        r.malformed = true;
        continue;
      }
      for (const auto& c : ec.communities()) {
        if (c.Is<apipb::MacMobilityExtended>()) {
          apipb::MacMobilityExtended mm;
          if (!c.UnpackTo(&mm)) r.malformed = true;
          r.seq = mm.sequence_num();
        } else if (c.Is<apipb::TwoOctetAsSpecificExtended>()) {
          apipb::TwoOctetAsSpecificExtended t;
          if (!c.UnpackTo(&t)) r.malformed = true;
          else if (t.sub_type() == 0x02) r.rts.insert(t.local_admin());
        } else if (c.Is<apipb::EncapExtended>()) {
          apipb::EncapExtended t;  // RFC 9012 §4.1 (RFC 8365 §5.1.3)
          if (!c.UnpackTo(&t)) r.malformed = true;
          else r.encaps.insert(t.tunnel_type());
        } else if (c.Is<apipb::FourOctetAsSpecificExtended>()) {
          apipb::FourOctetAsSpecificExtended t;
          if (!c.UnpackTo(&t)) r.malformed = true;
          else if (t.sub_type() == 0x02) r.rts.insert(t.local_admin());
        }
      }
    } else if (a.Is<apipb::PmsiTunnelAttribute>()) {
      apipb::PmsiTunnelAttribute pm;
      if (!a.UnpackTo(&pm)) r.malformed = true;
      else r.pmsi = std::move(pm);
    }
  }
  return r;
}

/// A textual address exactly (no NUL cut short by the C parser).
std::optional<IpAddr> parse_addr(const std::string& s) {
  if (s.find('\0') != std::string::npos) return std::nullopt;
  return IpAddr::parse(s);
}

std::uint32_t be(const unsigned char* b, std::size_t n) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v << 8 | b[i];
  return v;
}

IpAddr addr_from(const unsigned char* b, std::size_t n) {
  IpAddr a;
  a.family = n == 4 ? 4 : 6;
  std::copy(b, b + n, a.bytes.begin());
  return a;
}

/// One extended community in its 8 octets (RFC 4360 §2), read as gobgpd reads it into the
/// Any messages attrs() takes: route target of a two-octet (types 0x00/0x40) or four-octet
/// AS (0x02/0x42, RFC 5668) with sub-type 0x02; BGP Encapsulation (opaque 0x03/0x43, sub-type
/// 0x0C, RFC 9012 §4.1: tunnel type in the last two octets); MAC Mobility (EVPN 0x06, sub-type
/// 0x00, RFC 7432 §7.7: sequence number in the last four). Others are not ours to read.
void ext_community(const unsigned char* c, Attrs& r) {
  const unsigned type = c[0] & 0xBF, sub = c[1];  // 0x40: the non-transitive twin
  if (type == 0x00 && sub == 0x02) r.rts.insert(be(c + 4, 4));
  else if (type == 0x02 && sub == 0x02) r.rts.insert(be(c + 6, 2));
  else if (type == 0x03 && sub == 0x0C) r.encaps.insert(be(c + 6, 2));
  else if (c[0] == 0x06 && sub == 0x00) r.seq = be(c + 4, 4);
}

/// What the path attributes say, from ListPath's `pattrs_binary`: each attribute as in an
/// UPDATE (RFC 4271 §4.3: flags, type, one or — Extended Length — two length octets, value).
/// Read: NEXT_HOP (3), MP_REACH_NLRI (14: RFC 4760 §3, only the next hop — its NLRIs, which
/// gobgpd repeats in every path of an UPDATE, are skipped), EXTENDED COMMUNITIES (16),
/// PMSI_TUNNEL (22, RFC 6514 §5). `malformed` when a length does not add up.
Attrs attrs_binary(const apipb::Path& p) {
  Attrs r;
  for (const std::string& a : p.pattrs_binary()) {
    const auto* b = reinterpret_cast<const unsigned char*>(a.data());
    const std::size_t head = a.size() >= 1 && (b[0] & 0x10) ? 4 : 3;
    if (a.size() < head || (head == 4 ? be(b + 2, 2) : b[2]) != a.size() - head) {
      r.malformed = true;
      continue;
    }
    const unsigned char* v = b + head;
    const std::size_t len = a.size() - head;
    switch (b[1]) {
      case 3:  // NEXT_HOP: an IPv4 address
        if (len != 4) r.malformed = true;
        else if (!r.next_hop) r.next_hop = addr_from(v, 4).to_string();
        break;
      case 14: {  // MP_REACH_NLRI: AFI (2), SAFI (1), next hop length (1), next hop, ...
        const std::size_t nh = len >= 4 ? v[3] : 0;
        if (len < 5 || len < 5 + nh || (nh != 0 && nh != 4 && nh != 16 && nh != 32)) {
          r.malformed = true;  // 32: global and link-local IPv6 (RFC 2545 §3): the global one
        } else if (!r.next_hop && nh != 0) {
          r.next_hop = addr_from(v + 4, nh == 4 ? 4 : 16).to_string();
        }
        break;
      }
      case 16:  // EXTENDED COMMUNITIES: 8 octets each
        if (len % 8) r.malformed = true;
        else
          for (std::size_t i = 0; i < len; i += 8) ext_community(v + i, r);
        break;
      case 22: {  // PMSI_TUNNEL: flags (1), tunnel type (1), label (3), tunnel identifier
        if (len < 5) {
          r.malformed = true;
          break;
        }
        apipb::PmsiTunnelAttribute pm;
        pm.set_flags(v[0]);
        pm.set_type(v[1]);
        pm.set_label(be(v + 2, 3));  // the 24-bit field as gobgpd gives it (RFC 8365 §5.1.3)
        pm.set_id(std::string(reinterpret_cast<const char*>(v + 5), len - 5));
        r.pmsi = std::move(pm);
        break;
      }
      default:
        break;
    }
  }
  return r;
}

/// An address as a key: its family and octets (the text forms of one address key alike).
std::string addr_key(const IpAddr& a) {
  std::string k(1, char(a.family));
  k.append(reinterpret_cast<const char*>(a.bytes.data()), a.is_v6() ? 16 : 4);
  return k;
}

/// The NLRI's IP address field as a key: none ("" or Go's "<nil>") is empty, an address its
/// addr_key, anything else its text behind '?' (never equal to an address's key).
std::string ip_key(const std::string& s) {
  if (s.empty() || s == "<nil>") return {};
  if (auto a = parse_addr(s)) return addr_key(*a);
  return "?" + s;
}

/// The route distinguisher as its 8 octets on the wire (RFC 4364 §4.2, RFC 7432 §7.9: type
/// 0 AS2:number32, type 1 IPv4:number16, type 2 AS4:number16), so that a route read from
/// ListPath's binary NLRI and its withdrawal on WatchEvent (an Any) have one identity. An
/// RD gobgpd has no message for keeps its type URL and bytes behind '?' (not 8 octets long).
std::string rd_key(const google::protobuf::Any& rd) {
  std::string k(8, '\0');
  auto put = [&k](std::size_t at, std::uint32_t v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) k[at + i] = char(v >> (8 * (n - 1 - i)));
  };
  if (rd.Is<apipb::RouteDistinguisherTwoOctetASN>()) {
    apipb::RouteDistinguisherTwoOctetASN r;
    if (rd.UnpackTo(&r)) {
      put(0, 0, 2), put(2, r.admin(), 2), put(4, r.assigned(), 4);
      return k;
    }
  } else if (rd.Is<apipb::RouteDistinguisherIPAddress>()) {
    apipb::RouteDistinguisherIPAddress r;
    auto a = rd.UnpackTo(&r) ? parse_addr(r.admin()) : std::nullopt;
    if (a && a->family == 4) {
      put(0, 1, 2), put(6, r.assigned(), 2);
      std::copy(a->bytes.begin(), a->bytes.begin() + 4, k.begin() + 2);
      return k;
    }
  } else if (rd.Is<apipb::RouteDistinguisherFourOctetASN>()) {
    apipb::RouteDistinguisherFourOctetASN r;
    if (rd.UnpackTo(&r)) {
      put(0, 2, 2), put(2, r.admin(), 4), put(6, r.assigned(), 2);
      return k;
    }
  }
  return "?" + rd.type_url() + "/" + rd.value();
}

/// The NLRI's fields the mapping reads, from either form gobgpd sends.
struct Nlri {
  enum class Type : std::uint8_t { Other, MacIp, Imet } type = Type::Other;
  bool malformed = false;                 ///< bytes that do not parse as the route type
  std::string rd;                         ///< rd_key
  std::uint32_t etag = 0;                 ///< Ethernet Tag ID
  std::optional<std::uint32_t> label;     ///< type-2: the first label field (24 bits)
  std::optional<Mac> mac;                 ///< type-2: nullopt for a malformed MAC
  std::string ip;                         ///< the IP address field as a key (ip_key, addr_key)
  std::optional<IpAddr> originator;       ///< type-3: the originating router's IP address
};

Nlri nlri_any(const google::protobuf::Any& a) {
  Nlri n;
  if (a.Is<apipb::EVPNMACIPAdvertisementRoute>()) {
    n.type = Nlri::Type::MacIp;
    apipb::EVPNMACIPAdvertisementRoute r;
    if (!a.UnpackTo(&r)) {
      n.malformed = true;
      return n;
    }
    n.rd = rd_key(r.rd());
    n.etag = r.ethernet_tag();
    if (r.labels_size() > 0) n.label = r.labels(0);
    n.mac = parse_evpn_mac(r.mac_address());
    n.ip = ip_key(r.ip_address());
  } else if (a.Is<apipb::EVPNInclusiveMulticastEthernetTagRoute>()) {
    n.type = Nlri::Type::Imet;
    apipb::EVPNInclusiveMulticastEthernetTagRoute r;
    if (!a.UnpackTo(&r)) {
      n.malformed = true;
      return n;
    }
    n.rd = rd_key(r.rd());
    n.etag = r.ethernet_tag();
    n.ip = ip_key(r.ip_address());
    n.originator = parse_addr(r.ip_address());
  }
  return n;
}

/// ListPath's `nlri_binary`: the EVPN NLRI as in MP_REACH_NLRI (RFC 7432 §7: route type,
/// length, route); type-2 (§7.2): RD (8), ESI (10), Ethernet Tag (4), MAC length in bits (48),
/// MAC (6), IP length in bits (0, 32, 128), IP, one or two 3-octet labels; type-3 (§7.3): RD
/// (8), Ethernet Tag (4), IP length (32, 128), originating router's IP.
Nlri nlri_binary(const std::string& s) {
  Nlri n;
  const auto* b = reinterpret_cast<const unsigned char*>(s.data());
  if (s.size() < 2) {
    n.type = Nlri::Type::MacIp;  // no route type to name: malformed whatever it was
    n.malformed = true;
    return n;
  }
  const unsigned char* d = b + 2;
  const std::size_t len = s.size() - 2;
  auto ip_len = [](unsigned bits) -> std::optional<std::size_t> {
    if (bits == 0 || bits == 32 || bits == 128) return bits / 8;
    return std::nullopt;
  };
  if (b[0] == 2) {
    n.type = Nlri::Type::MacIp;
    std::optional<std::size_t> il;
    if (b[1] != len || len < 30 || d[22] != 48 || !(il = ip_len(d[29])) ||
        (len != 30 + *il + 3 && len != 30 + *il + 6)) {
      n.malformed = true;
      return n;
    }
    n.rd.assign(reinterpret_cast<const char*>(d), 8);
    n.etag = be(d + 18, 4);
    Mac m;
    std::copy(d + 23, d + 29, m.begin());
    n.mac = m;
    if (*il) n.ip = addr_key(addr_from(d + 30, *il));
    n.label = be(d + 30 + *il, 3);
  } else if (b[0] == 3) {
    n.type = Nlri::Type::Imet;
    std::optional<std::size_t> il;
    if (b[1] != len || len < 13 || !(il = ip_len(d[12])) || *il == 0 || len != 13 + *il) {
      n.malformed = true;
      return n;
    }
    n.rd.assign(reinterpret_cast<const char*>(d), 8);
    n.etag = be(d + 8, 4);
    n.originator = addr_from(d + 13, *il);
    n.ip = addr_key(*n.originator);
  }
  return n;
}

/// The rule of a configured remote (config.cpp check_remote): unicast, not unspecified.
bool unicast(const IpAddr& a) {
  const auto& b = a.bytes;
  if (a.family == 4) return b[0] < 224 && (b[0] | b[1] | b[2] | b[3]) != 0;
  if (b[0] == 0xFF) return false;
  return std::any_of(b.begin(), b.end(), [](std::uint8_t x) { return x != 0; });
}

/// Why `v` cannot be a VTEP of ours (family, unicast, own), or nothing.
std::optional<RouteIgnored> vtep_unusable(const IpAddr& v, const EvpnRouteContext& ctx) {
  if (v.family != ctx.vtep.family) return RouteIgnored::NextHopFamily;
  if (!unicast(v)) return RouteIgnored::NextHopNotUnicast;
  if (v == ctx.vtep) return RouteIgnored::Own;
  return std::nullopt;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

EvpnRouteDecision ignored(RouteIgnored why) { return {std::nullopt, why}; }

/// GN-15: a route of our VNI is for us when one of its BGP Encapsulation communities names
/// our tunnel type; one without any is VXLAN's (RFC 8365 §5.1.3's "statically configured").
std::optional<RouteIgnored> other_encap(const Attrs& at, const EvpnRouteContext& ctx) {
  if (at.encaps.empty())
    return ctx.tunnel_type == kTunnelTypeVxlan ? std::nullopt : std::optional(RouteIgnored::NoEncapsulation);
  if (at.encaps.count(ctx.tunnel_type)) return std::nullopt;
  return RouteIgnored::OtherEncapsulation;
}

/// FNV-1a 64 over the key fields, each length-prefixed (no two field lists hash alike by
/// concatenation).
struct KeyHash {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void bytes(std::string_view s) {
    num(s.size());
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  }
  void num(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xFF)) * 0x100000001b3ull;
  }
};


}  // namespace

std::optional<Mac> parse_evpn_mac(std::string_view s) noexcept {
  if (s.size() != 17) return std::nullopt;
  Mac m{};
  for (std::size_t i = 0; i < 6; ++i) {
    const int hi = hex(s[3 * i]), lo = hex(s[3 * i + 1]);
    if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':')) return std::nullopt;
    m[i] = std::uint8_t(hi << 4 | lo);
  }
  return m;
}

std::string_view to_string(RouteIgnored r) noexcept {
  switch (r) {
    case RouteIgnored::NotEvpn: return "not-evpn";
    case RouteIgnored::OtherRouteType: return "other-route-type";
    case RouteIgnored::NlriMalformed: return "nlri-malformed";
    case RouteIgnored::AttrMalformed: return "attr-malformed";
    case RouteIgnored::NoNextHop: return "no-next-hop";
    case RouteIgnored::NextHopNotAddress: return "next-hop-not-address";
    case RouteIgnored::NextHopFamily: return "next-hop-family";
    case RouteIgnored::NextHopNotUnicast: return "next-hop-not-unicast";
    case RouteIgnored::Own: return "own";
    case RouteIgnored::OtherVni: return "other-vni";
    case RouteIgnored::MacMalformed: return "mac-malformed";
    case RouteIgnored::MacNotUnicast: return "mac-not-unicast";
    case RouteIgnored::OtherEncapsulation: return "other-encapsulation";
    case RouteIgnored::NoEncapsulation: return "no-encapsulation";
  }
  return "unknown";
}

EvpnRouteDecision map_evpn_route(const apipb::Path& p, const EvpnRouteContext& ctx) {
  if (p.family().afi() != apipb::Family::AFI_L2VPN || p.family().safi() != apipb::Family::SAFI_EVPN)
    return ignored(RouteIgnored::NotEvpn);
  // ListPath with enable_only_binary: the NLRI and attributes as in the UPDATE, no Any
  const bool binary = !p.has_nlri() && !p.nlri_binary().empty();
  const Attrs at = binary ? attrs_binary(p) : attrs(p);
  if (at.malformed) return ignored(RouteIgnored::AttrMalformed);
  if (!at.next_hop || at.next_hop->empty()) return ignored(RouteIgnored::NoNextHop);
  const auto nh = parse_addr(*at.next_hop);
  if (!nh) return ignored(RouteIgnored::NextHopNotAddress);
  if (*nh == ctx.vtep) return ignored(RouteIgnored::Own);
  const Nlri n = binary ? nlri_binary(p.nlri_binary()) : nlri_any(p.nlri());
  EvpnRouteAction act;
  act.withdraw = p.is_withdraw();
  if (n.type == Nlri::Type::MacIp) {
    if (n.malformed) return ignored(RouteIgnored::NlriMalformed);
    // RFC 8365 §5.1.3: the VNI in the label; §5.1.2 Ethernet Tag; §5.1.2.1 route target AS:VNI
    const bool ours = (n.label && *n.label == ctx.vni) || n.etag == ctx.vni || at.rts.count(ctx.vni);
    if (!ours) return ignored(RouteIgnored::OtherVni);
    if (auto why = other_encap(at, ctx)) return ignored(*why);
    if (!n.mac) return ignored(RouteIgnored::MacMalformed);
    if (tunnel::Fdb::is_group(*n.mac) || *n.mac == Mac{}) return ignored(RouteIgnored::MacNotUnicast);
    if (auto why = vtep_unusable(*nh, ctx)) return ignored(*why);
    act.kind = EvpnRouteAction::Kind::MacIp;
    KeyHash k;
    k.num(2);
    k.bytes(n.rd);
    k.num(n.etag);
    k.bytes(std::string_view(reinterpret_cast<const char*>(n.mac->data()), n.mac->size()));
    k.bytes(n.ip);
    act.route_id = k.h;
    act.mac = *n.mac;
    act.vtep = *nh;
    act.seq = at.seq;  // RFC 7432 §7.7 (0 without the community)
    return {act, {}};
  }
  if (n.type == Nlri::Type::Imet) {
    if (n.malformed) return ignored(RouteIgnored::NlriMalformed);
    const bool ours = (at.pmsi && at.pmsi->label() == ctx.vni) || n.etag == ctx.vni ||
                      at.rts.count(ctx.vni);
    if (!ours) return ignored(RouteIgnored::OtherVni);
    if (auto why = other_encap(at, ctx)) return ignored(*why);
    // The replication target (RFC 6514 §5, RFC 7432 §11.2): with ingress replication (tunnel
    // type 6) the PMSI tunnel identifier, the endpoint's address; otherwise (or without an
    // identifier) the originating router's IP address, else the next hop.
    constexpr std::uint32_t kIngressReplication = 6;
    IpAddr vtep = *nh;
    if (at.pmsi && at.pmsi->type() == kIngressReplication && !at.pmsi->id().empty()) {
      const std::string& id = at.pmsi->id();
      if (id.size() != 4 && id.size() != 16) return ignored(RouteIgnored::NextHopNotAddress);
      vtep.family = id.size() == 4 ? 4 : 6;
      vtep.bytes = {};
      std::copy(id.begin(), id.end(), vtep.bytes.begin());
    } else if (n.originator) {
      vtep = *n.originator;
    }
    if (auto why = vtep_unusable(vtep, ctx)) return ignored(*why);
    act.kind = EvpnRouteAction::Kind::InclusiveMulticast;
    KeyHash k;
    k.num(3);
    k.bytes(n.rd);
    k.num(n.etag);
    k.bytes(n.ip);
    act.route_id = k.h;
    act.vtep = vtep;
    return {act, {}};
  }
  return ignored(RouteIgnored::OtherRouteType);
}

}  // namespace ofld::daemon

#endif  // OFLD_HAVE_EVPN

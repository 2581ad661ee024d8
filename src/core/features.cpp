// Device features: names, fix-ups, per-packet resolution (spec §3). See features.hpp.
#include "ofld/core/features.hpp"

#include <array>
#include <bit>
#include <cctype>

namespace ofld::core {
namespace {

using namespace netif_f;

constexpr std::uint16_t kEthIp = 0x0800, kEthIpv6 = 0x86DD, kEthFcoe = 0x8906,
                        kEth8021Q = 0x8100, kEth8021AD = 0x88A8, kEthMplsUc = 0x8847,
                        kEthMplsMc = 0x8848;

// ethtool strings, net/ethtool/common.c:netdev_features_strings (6.12).
constexpr std::array<std::string_view, 64> kNames = [] {
  std::array<std::string_view, 64> n{};
  n[0] = "tx-scatter-gather";
  n[1] = "tx-checksum-ipv4";
  n[3] = "tx-checksum-ip-generic";
  n[4] = "tx-checksum-ipv6";
  n[5] = "highdma";
  n[6] = "tx-scatter-gather-fraglist";
  n[7] = "tx-vlan-hw-insert";
  n[8] = "rx-vlan-hw-parse";
  n[9] = "rx-vlan-filter";
  n[10] = "vlan-challenged";
  n[11] = "tx-generic-segmentation";
  n[14] = "rx-gro";
  n[15] = "rx-lro";
  n[16] = "tx-tcp-segmentation";
  n[17] = "tx-gso-robust";
  n[18] = "tx-tcp-ecn-segmentation";
  n[19] = "tx-tcp-mangleid-segmentation";
  n[20] = "tx-tcp6-segmentation";
  n[21] = "tx-fcoe-segmentation";
  n[22] = "tx-gre-segmentation";
  n[23] = "tx-gre-csum-segmentation";
  n[24] = "tx-ipxip4-segmentation";
  n[25] = "tx-ipxip6-segmentation";
  n[26] = "tx-udp_tnl-segmentation";
  n[27] = "tx-udp_tnl-csum-segmentation";
  n[28] = "tx-gso-partial";
  n[29] = "tx-tunnel-remcsum-segmentation";
  n[30] = "tx-sctp-segmentation";
  n[31] = "tx-esp-segmentation";
  // 32 (GSO_UDP) has no ethtool string in 6.12
  n[33] = "tx-udp-segmentation";
  n[34] = "tx-gso-list";
  n[35] = "tx-checksum-fcoe-crc";
  n[36] = "tx-checksum-sctp";
  n[38] = "rx-ntuple-filter";
  n[39] = "rx-hashing";
  n[40] = "rx-checksum";
  n[41] = "tx-nocache-copy";
  n[42] = "loopback";
  n[43] = "rx-fcs";
  n[44] = "rx-all";
  n[45] = "tx-vlan-stag-hw-insert";
  n[46] = "rx-vlan-stag-hw-parse";
  n[47] = "rx-vlan-stag-filter";
  n[48] = "l2-fwd-offload";
  n[49] = "hw-tc-offload";
  n[50] = "esp-hw-offload";
  n[51] = "esp-tx-csum-hw-offload";
  n[52] = "rx-udp_tunnel-port-offload";
  n[53] = "tls-hw-tx-offload";
  n[54] = "tls-hw-rx-offload";
  n[55] = "rx-gro-hw";
  n[56] = "tls-hw-record";
  n[57] = "rx-gro-list";
  n[58] = "macsec-hw-offload";
  n[59] = "rx-udp-gro-forwarding";
  n[60] = "hsr-tag-ins-offload";
  n[61] = "hsr-tag-rm-offload";
  n[62] = "hsr-fwd-offload";
  n[63] = "hsr-dup-offload";
  return n;
}();

// `ethtool -k` legacy groups (ethtool's off_flag_def), in its print order.
struct Group {
  std::string_view name;
  Features members;
};
constexpr std::array<Group, 11> kGroups = {{
    {"rx-checksumming", RXCSUM},
    {"tx-checksumming", IP_CSUM | HW_CSUM | IPV6_CSUM | FCOE_CRC | SCTP_CRC},
    {"scatter-gather", SG | FRAGLIST},
    {"tcp-segmentation-offload", TSO | TSO_ECN | TSO_MANGLEID | TSO6},
    {"generic-segmentation-offload", GSO},
    {"generic-receive-offload", GRO},
    {"large-receive-offload", LRO},
    {"rx-vlan-offload", HW_VLAN_CTAG_RX},
    {"tx-vlan-offload", HW_VLAN_CTAG_TX},
    {"ntuple-filters", NTUPLE},
    {"receive-hashing", RXHASH},
}};

// net_gso_ok mapping: gso bit k → feature mask. Data-driven so that [newer] bits slot in.
struct GsoMap {
  std::uint32_t gso_bit;
  std::optional<Features> feature;  // nullopt: no device can offload it
};
constexpr std::array<GsoMap, 22> kGsoMap = [] {
  std::array<GsoMap, 22> m{};
  for (unsigned k = 0; k <= 18; ++k) m[k] = {1u << k, Features::bit(GSO_SHIFT + k)};
  m[19] = {skb_gso::TCP_ACCECN, std::nullopt};
  m[20] = {skb_gso::TCP_FIXEDID_OUTER, TSO_MANGLEID};
  m[21] = {skb_gso::TCP_FIXEDID_INNER, TSO_MANGLEID};
  return m;
}();

// kGsoMap indexed by bit position, for gso_type_features' walk over the set bits.
struct GsoBitFeature {
  bool known = false;
  std::optional<Features> feature;
};
constexpr std::array<GsoBitFeature, 32> kGsoByBit = [] {
  std::array<GsoBitFeature, 32> t{};
  for (const auto& m : kGsoMap) t[std::size_t(std::countr_zero(m.gso_bit))] = {true, m.feature};
  return t;
}();

bool is_vlan_proto(std::uint16_t t) noexcept { return t == kEth8021Q || t == kEth8021AD; }

std::optional<std::uint16_t> read_be16(const Packet& p, std::size_t off) noexcept {
  std::uint8_t b[2];
  if (p.copy_bits(off, b) != PacketError::Ok) return std::nullopt;
  return std::uint16_t((b[0] << 8) | b[1]);
}

// vlan_get_protocol / skb_network_protocol: walk in-band VLAN tags (TX: data() at the MAC
// header) to the network ethertype. 0 if a tag cannot be read.
std::uint16_t network_protocol(const Packet& p) noexcept {
  std::uint16_t type = p.protocol;
  std::size_t off = 12;  // ETH_HLEN - 2: the ethertype of an untagged frame
  int depth = 0;
  while (is_vlan_proto(type)) {
    if (++depth > 8) return 0;
    auto t = read_be16(p, off + 4);  // encapsulated proto of this tag
    if (!t) return 0;
    type = *t;
    off += 4;
  }
  return type;
}

bool vlan_tagged(const Packet& p) noexcept {
  return p.vlan_present || is_vlan_proto(p.protocol);
}

// skb_vlan_tagged_multi
bool vlan_tagged_multi(const Packet& p) noexcept {
  std::uint16_t proto = p.protocol;
  if (!p.vlan_present) {
    if (!is_vlan_proto(proto)) return false;
    auto inner = read_be16(p, 16);  // h_vlan_encapsulated_proto of the first tag
    if (!inner) return false;
    proto = *inner;
  }
  return is_vlan_proto(proto);
}

// ipv6_ext_hdr(): next-header values the kernel treats as extension headers.
bool ipv6_ext_nexthdr(std::uint8_t nh) noexcept {
  return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 59 || nh == 60;
}

// __skb_has_ipv6_ext_hdr: an IPv6 header at `pos` whose next header is an extension header.
bool ipv6_hdr_has_ext(const Packet& p, pos_t pos) noexcept {
  if (pos == kNoHeader) return false;
  long off = long(pos) - p.data_pos();
  if (off < 0) return false;
  std::uint8_t h[7];
  if (p.copy_bits(std::size_t(off), h) != PacketError::Ok) return false;
  return (h[0] >> 4) == 6 && ipv6_ext_nexthdr(h[6]);
}

// skb_has_ipv6_extension_hdr, with the transport position as given.
bool has_ipv6_ext(const Packet& p, pos_t transport) noexcept {
  if (network_protocol(p) == kEthIpv6) {
    if (ipv6_hdr_has_ext(p, p.network_header)) return true;
    if (!p.encapsulation && transport != kNoHeader && p.network_header != kNoHeader &&
        transport - p.network_header != 40)
      return true;
  }
  if (p.encapsulation && p.inner_network_header != kNoHeader &&
      ipv6_hdr_has_ext(p, p.inner_network_header))
    return true;
  return false;
}

// netdev_intersect_features
Features intersect(Features f1, Features f2) noexcept {
  if (((f1.bits ^ f2.bits) & HW_CSUM.bits) != 0) {
    if (f1.any(HW_CSUM))
      f1 |= IP_CSUM | IPV6_CSUM;
    else
      f2 |= IP_CSUM | IPV6_CSUM;
  }
  return f1 & f2;
}

bool has_ip_or_hw_csum(Features f) noexcept {
  return f.has(IP_CSUM | IPV6_CSUM) || f.any(HW_CSUM);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<Features> gso_type_features(std::uint32_t gso_type) noexcept {
  Features need{};
  while (gso_type != 0) {  // the set bits only, lowest first
    const GsoBitFeature& m = kGsoByBit[std::countr_zero(gso_type)];
    if (!m.known || !m.feature) return std::nullopt;  // unknown bit or nothing offloads it
    need |= *m.feature;
    gso_type &= gso_type - 1;
  }
  return need;
}

std::string_view feature_name(unsigned bit) noexcept { return bit < 64 ? kNames[bit] : ""; }

std::optional<unsigned> feature_bit(std::string_view name) noexcept {
  if (name.empty()) return std::nullopt;
  for (unsigned i = 0; i < 64; ++i)
    if (kNames[i] == name) return i;
  return std::nullopt;
}

FeatureParse parse_features(std::string_view list) {
  FeatureParse r;
  std::size_t i = 0;
  while (i < list.size()) {
    std::size_t j = list.find_first_of(", \t\n", i);
    if (j == std::string_view::npos) j = list.size();
    std::string_view tok = trim(list.substr(i, j - i));
    i = j + 1;
    if (tok.empty() || tok == "none") continue;
    if (auto b = feature_bit(tok)) {
      r.features |= Features::bit(*b);
      continue;
    }
    bool found = false;
    for (const auto& g : kGroups)
      if (g.name == tok) {
        r.features |= g.members;
        found = true;
      }
    if (!found) {
      r.error = "unknown feature '" + std::string(tok) + "'";
      r.features = {};
      return r;
    }
  }
  return r;
}

std::string format_features(Features f) {
  std::string out;
  auto line = [&](std::string_view indent, std::string_view name, bool on) {
    out += indent;
    out += name;
    out += on ? ": on\n" : ": off\n";
  };
  Features grouped{};
  for (const auto& g : kGroups) {
    grouped |= g.members;
    line("", g.name, f.any(g.members));
    if (__builtin_popcountll(g.members.bits) > 1)
      for (unsigned b = 0; b < 64; ++b)
        if (g.members.any(Features::bit(b))) line("\t", kNames[b], f.any(Features::bit(b)));
  }
  for (unsigned b = 0; b < 64; ++b)
    if (!kNames[b].empty() && !grouped.any(Features::bit(b)))
      line("", kNames[b], f.any(Features::bit(b)));
  return out;
}

// ---- F-1..F-9 ------------------------------------------------------------------------------

Features fix_features(Features f, const Device& dev) noexcept {
  if (f.any(HW_CSUM) && f.any(IP_CSUM | IPV6_CSUM)) f = f.without(IP_CSUM | IPV6_CSUM);  // F-1
  if (f.any(ALL_TSO) && !f.any(SG)) f = f.without(ALL_TSO);                              // F-2
  if (f.any(TSO) && !f.any(HW_CSUM) && !f.any(IP_CSUM)) f = f.without(TSO | TSO_ECN);    // F-3
  if (f.any(TSO6) && !f.any(HW_CSUM) && !f.any(IPV6_CSUM)) f = f.without(TSO6);
  if (f.any(TSO_MANGLEID) && !f.any(TSO)) f = f.without(TSO_MANGLEID);                   // F-4
  if ((f & ALL_TSO) == TSO_ECN) f = f.without(TSO_ECN);
  if (f.any(GSO) && !f.any(SG)) f = f.without(GSO);                                      // F-5
  if (f.any(dev.gso_partial_features) && !f.any(GSO_PARTIAL))                            // F-6
    f = f.without(dev.gso_partial_features);
  if (!f.any(RXCSUM) && f.any(GRO_HW)) f = f.without(GRO_HW);                            // F-7
  if (f.any(RXFCS)) f = f.without(LRO | GRO_HW);
  if (f.any(GRO_HW) && f.any(LRO)) f = f.without(LRO);
  // F-8: 6.12 netdev_has_ip_or_hw_csum requires HW_CSUM, or BOTH IP_CSUM and IPV6_CSUM.
  if (f.any(HW_TLS_TX) && !has_ip_or_hw_csum(f)) f = f.without(HW_TLS_TX);
  if (f.any(HW_TLS_RX) && !f.any(RXCSUM)) f = f.without(HW_TLS_RX);
  if (f.any(GSO_UDP_L4) && !has_ip_or_hw_csum(f)) f = f.without(GSO_UDP_L4);
  return f;
}

Device register_device(Device dev) noexcept {
  dev.hw_features |= SOFT_FEATURES | SOFT_FEATURES_OFF;
  dev.features |= SOFT_FEATURES;
  dev.wanted_features = dev.features & dev.hw_features;
  if (dev.hw_features.any(TSO)) dev.hw_features |= TSO_MANGLEID;
  if (dev.vlan_features.any(TSO)) dev.vlan_features |= TSO_MANGLEID;
  if (dev.mpls_features.any(TSO)) dev.mpls_features |= TSO_MANGLEID;
  if (dev.hw_enc_features.any(TSO)) dev.hw_enc_features |= TSO_MANGLEID;
  dev.mangleid_features |= TSO_MANGLEID;
  dev.vlan_features |= HIGHDMA;
  dev.hw_enc_features |= SG | GSO_PARTIAL;
  dev.mpls_features |= SG;
  // __netdev_update_features: wanted = (features & ~hw_features) | wanted_features
  Features wanted = dev.features.without(dev.hw_features) | dev.wanted_features;
  dev.features = fix_features(wanted, dev);
  return dev;
}

// ---- F-10..F-20 ----------------------------------------------------------------------------

bool can_checksum_protocol(Features f, std::uint16_t ethertype) noexcept {
  if (ethertype == kEthFcoe) return f.any(FCOE_CRC);
  if (f.any(HW_CSUM)) return true;
  if (ethertype == kEthIp) return f.any(IP_CSUM);
  if (ethertype == kEthIpv6) return f.any(IPV6_CSUM);
  return false;
}

bool gso_ok(const Packet& p, Features f) noexcept {
  auto need = gso_type_features(p.gso.type);
  if (!need || !f.has(*need)) return false;
  return p.frag_list().empty() || f.any(FRAGLIST);
}

bool needs_gso(const Packet& p, Features f) noexcept {
  if (!p.is_gso()) return false;
  IpSummed s = p.ip_summed();
  return !gso_ok(p, f) || (s != IpSummed::Partial && s != IpSummed::Unnecessary);
}

bool has_ipv6_ext_headers(const Packet& p) noexcept { return has_ipv6_ext(p, p.transport_header); }

Features netif_skb_features(const Packet& p, const Device& dev, bool jumbo_hbh) noexcept {
  Features f = dev.features;  // F-10
  if (p.is_gso()) {           // F-11 gso_features_check
    std::uint32_t limit =
        p.protocol == kEthIpv6 ? dev.gso_max_size : dev.gso_ipv4_max_size;  // skb->protocol
    if (p.gso.segs > dev.gso_max_segs || p.len() >= limit || p.gso.type == 0) {
      f = f.without(GSO_MASK);
    } else {
      if (!(p.gso.type & skb_gso::PARTIAL)) f = f.without(dev.gso_partial_features);
      if (p.gso.type & skb_gso::TCPV4) {
        pos_t nh = p.encapsulation ? p.inner_network_header : p.network_header;
        bool df = false;
        if (nh != kNoHeader && nh >= p.data_pos()) {
          auto frag_off = read_be16(p, std::size_t(nh - p.data_pos()) + 6);
          df = frag_off && (*frag_off & 0x4000);
        }
        if (!df) f = f.without(dev.mangleid_features);
      }
      if (f.any(IPV6_CSUM) && has_ipv6_ext_headers(p) && !jumbo_hbh)
        f = f.without(IPV6_CSUM | TSO6 | GSO_UDP_L4);
    }
  }
  if (p.encapsulation) f &= dev.hw_enc_features;  // F-12
  if (vlan_tagged(p))                             // F-13
    f = intersect(f, dev.vlan_features | HW_VLAN_CTAG_TX | HW_VLAN_STAG_TX);
  if (vlan_tagged_multi(p))  // F-14 default ndo_features_check = vlan_features_check
    f &= SG | HIGHDMA | HW_CSUM | FRAGLIST | HW_VLAN_CTAG_TX | HW_VLAN_STAG_TX;
  // F-15 harmonize_features
  std::uint16_t type = network_protocol(p);
  if (type == kEthMplsUc || type == kEthMplsMc) f = intersect(f, dev.mpls_features);
  if (p.ip_summed() != IpSummed::None && !can_checksum_protocol(f, type))
    f = f.without(CSUM_MASK | GSO_MASK);
  if (!dev.highdma_ok) f = f.without(SG);
  return f;
}

namespace {
bool hwoffload_ok(const Packet& p, Features f, bool jumbo_hbh, pos_t transport) noexcept {
  const auto* pc = std::get_if<CsumPartial>(&p.csum);
  if (!pc) return true;
  if (pc->not_inet) return f.any(SCTP_CRC);
  if (f.any(HW_CSUM)) return true;
  if (f.any(IP_CSUM | IPV6_CSUM)) {
    if (has_ipv6_ext(p, transport) && !jumbo_hbh) return false;
    return pc->csum_offset == 16 || pc->csum_offset == 6;  // tcphdr.check / udphdr.check
  }
  return false;
}
}  // namespace

bool csum_hw_offload_ok(const Packet& p, Features f, bool jumbo_hbh) noexcept {
  // validate_xmit_skb sets the (inner) transport header to csum_start first.
  pos_t transport = p.transport_header;
  if (const auto* pc = std::get_if<CsumPartial>(&p.csum); pc && !p.encapsulation)
    transport = pc->csum_start;
  return hwoffload_ok(p, f, jumbo_hbh, transport);
}

TxAction resolve_tx(const Packet& p, const Device& dev, bool jumbo_hbh) noexcept {
  TxAction a;
  a.features = netif_skb_features(p, dev, jumbo_hbh);
  if (needs_gso(p, a.features)) {  // F-17/F-19
    a.software_gso = true;
    a.gso_features = a.features;
    return a;
  }
  // F-20 skb_needs_linearize
  a.linearize = (!p.frag_list().empty() && !a.features.any(FRAGLIST)) ||
                (p.nr_frags() != 0 && !a.features.any(SG));
  if (const auto* pc = std::get_if<CsumPartial>(&p.csum)) {
    if (!csum_hw_offload_ok(p, a.features, jumbo_hbh)) {
      if (pc->not_inet)
        a.crc32c_help = true;
      else
        a.checksum_help = true;
    }
  }
  return a;
}

std::optional<Features> tun_offload_features(unsigned long arg) noexcept {
  Features f{};
  if (arg & tun_f::CSUM) {
    f |= HW_CSUM;
    arg &= ~static_cast<unsigned long>(tun_f::CSUM);
    if (arg & (tun_f::TSO4 | tun_f::TSO6)) {
      if (arg & tun_f::TSO_ECN) {
        f |= TSO_ECN;
        arg &= ~static_cast<unsigned long>(tun_f::TSO_ECN);
      }
      if (arg & tun_f::TSO4) f |= TSO;
      if (arg & tun_f::TSO6) f |= TSO6;
      arg &= ~static_cast<unsigned long>(tun_f::TSO4 | tun_f::TSO6);
    }
    arg &= ~static_cast<unsigned long>(tun_f::UFO);
    if ((arg & tun_f::USO4) && (arg & tun_f::USO6)) {
      f |= GSO_UDP_L4;
      arg &= ~static_cast<unsigned long>(tun_f::USO4 | tun_f::USO6);
    }
  }
  if (arg) return std::nullopt;  // -EINVAL
  return f;
}

}  // namespace ofld::core

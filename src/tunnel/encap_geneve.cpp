// The Geneve encapsulation: Ethernet over UDP with options (RFC 8926; the Linux geneve
// driver's geneve_xmit_skb / geneve_rx): what the Ethernet-over-UDP encapsulations share
// (encap_ethernet_udp.hpp: TAP and UDP socket, a source port per inner flow, the FDB and its
// flooding, the loop check of geneve_rx, learning when configured) plus the Geneve header
// with the configured options and geneve_decap. Which sources are taken (GN-13): the known
// remotes only — configured remotes, remotes of static FDB entries, EVPN VTEPs; with one
// remote exactly the kernel's classic device (geneve_lookup) — or any source with `learning`
// or EVPN (EndpointOptions::any_source).
#include <algorithm>

#include "encap_ethernet_udp.hpp"
#include "encap_rows.hpp"
#include "ofld/tunnel/geneve.hpp"

namespace ofld::tunnel {

namespace {

class GeneveEncap final : public detail::EthernetUdpEncap<GeneveConfig> {
 public:
  explicit GeneveEncap(const GeneveConfig& c) : EthernetUdpEncap(c) {
    hdr_len_ = geneve_build_header(c_, std::span<std::uint8_t>(hdr_));
  }
  Encap kind() const noexcept override { return Encap::Geneve; }

  // No RCO (rco_tx false): Linux has none for Geneve (GN-6).
  EncapInfo encap(const core::Packet& seg, bool /*rco*/,
                  std::span<std::uint8_t, kMaxTunnelHdr> hdr) const override {
    EncapInfo i;
    if (seg.len() < wire::eth::kHdrLen) {
      i.reason = Drop::TxNotEthernet;
      return i;
    }
    std::copy_n(hdr_.begin(), hdr_len_, hdr.begin());
    i.hdr_len = hdr_len_;
    i.ok = hdr_len_ != 0;
    return i;
  }

  bool accepts(const IpAddr& from) const noexcept override {
    if (any_source_) return true;
    // A known remote stays known (SharedFdb::is_known): the last one accepted is remembered;
    // an unknown source is asked again only once the set of known remotes changed.
    if (detail::same_ip(from, last_ok_) && !last_ok_.empty()) return true;
    const std::uint32_t gen = fdb_->known_generation();
    if (detail::same_ip(from, last_bad_) && gen == last_bad_gen_) return false;
    if (fdb_->is_known(from)) {
      last_ok_ = from;
      return true;
    }
    last_bad_ = from, last_bad_gen_ = gen;
    return false;
  }
  bool learns_peers() const noexcept override { return any_source_; }
  DecapResult decap(std::span<const std::uint8_t> payload, OuterCsum outer, Counters& c,
                    const core::BufferRef* owner, int outer_tos) const override {
    return geneve_decap(payload, c_, outer, c, owner, outer_tos);
  }
  void bind(const EncapBinding& b) override {
    EthernetUdpEncap::bind(b);
    any_source_ = b.any_source || c_.learning;
  }

  wire::peer::Encap peer_encap() const noexcept override { return wire::peer::Encap::Geneve; }
  std::string describe() const override {
    std::string r = " id " + std::to_string(c_.vni) + " local " + c_.local.to_string();
    if (c_.remotes.size() == 1) r += " remote " + c_.remotes[0].to_string();
    else r += " remotes " + std::to_string(c_.remotes.size());
    return r + " dstport " + std::to_string(c_.dstport) +
           (c_.options.empty() ? "" : " options " + geneve_options_text(c_.options)) +
           (c_.learning ? " learning" : "") + (c_.tx_outer_csum() ? "" : " (no outer UDP checksum)");
  }

 private:
  std::array<std::uint8_t, kMaxTunnelHdr> hdr_{};  ///< the header of every datagram
  std::size_t hdr_len_ = 0;
  bool any_source_ = false;
  // accepts()'s memory (one Endpoint, one thread: see Encapsulation)
  mutable IpAddr last_ok_{}, last_bad_{};
  mutable std::uint32_t last_bad_gen_ = 0;
};

}  // namespace

std::unique_ptr<Encapsulation> make_encapsulation(const GeneveConfig& cfg) {
  return std::make_unique<GeneveEncap>(cfg);
}

// `geneve ...` / [geneve]: iproute2's `type geneve` words, options as tc's geneve_opts.
const EncapKind& GeneveConfig::kind() {
  using namespace conf;
  static const EncapKind k{
      .words = {"geneve"},
      .caps = {.ethernet = true, .vni = true, .group = false, .evpn_tunnel_type = 19},
      .usage = "geneve id VNI local ADDR remote ADDR [dstport 6081] [srcport MIN MAX] "
               "[options CLASS:TYPE:DATA[,...]] [udpcsum|noudpcsum] [udp6zerocsumtx] [udp6zerocsumrx] "
               "[ttl N] [tos N|inherit] [mtu N]",
      .reset = reset_to<GeneveConfig>,
      .rows = join<Row>({
          ethernet_rows<GeneveConfig>(), common_rows<true>(), udp_rows(),
          // options sent in every header (tc's geneve_opts spelling; the word may repeat)
          {{{"options", {"geneve_opts"}, nullptr, Arity::Many, Value::Str, {}},
            OFLD_ROW(GeneveConfig, std::vector<GeneveOption> o;
                     if (auto e = parse_geneve_options(v[0], o)) return e;
                     c.options.insert(c.options.end(), o.begin(), o.end());
                     if (c.options_len() > 252)
                       return std::string("options: more than 252 bytes of options (Opt Len is 6 bits of 4-byte words)"))}},
      }),
      .validate = validate_as<GeneveConfig>,
      .fixed = join<FixedRow>({ethernet_fixed_head<GeneveConfig>(),
                               {OFLD_FIXED(GeneveConfig, "options", geneve_options_text(c.options))},
                               ethernet_fixed_fdb<GeneveConfig>()}),
      .flood_remotes = flood_remotes_of<GeneveConfig>,
      .vni = vni_of<GeneveConfig>,
  };
  return k;
}

}  // namespace ofld::tunnel

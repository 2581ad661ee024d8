// ofld/tunnel/encapsulation.hpp — the encapsulation plug-in of a tunnel::Endpoint and the one
// configuration of an endpoint (TunnelConfig: a variant with one type per encapsulation).
//
// Everything that differs between VXLAN, GUE and GRE/ip6gre is one Encapsulation, one file
// each (src/tunnel/encap_vxlan.cpp, encap_gue.cpp, encap_gre.cpp): the device and socket it
// needs, its transmit check, outer TOS and source port, the tunnel header of one datagram,
// the remotes of a frame (VXLAN: FDB lookup and flooding; GUE/GRE: the remote), decapsulation
// and what follows it (VXLAN: loop check and FDB learning; GUE/GRE: the source check of
// ip_tunnel_lookup), and how it describes itself to the peer sessions and the log. The
// Endpoint and the daemon ask the Encapsulation and branch on nothing else.
//
// Adding an encapsulation: its configuration type (deriving from TunnelCommon or
// UdpTunnelSettings, with `static const EncapKind& kind()`) and its make_encapsulation
// overload declared in its header, one src/tunnel/encap_<name>.cpp with its Encapsulation and
// its EncapKind (words, settings rows, checks, fixed reload settings: encap_kind.hpp), and its
// type added to EncapConfig below with a value in Encap (docs/ARCHITECTURE.md, "Adding an
// encapsulation"). The daemon, the CLI and the peer sessions follow from the list.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ofld/core/features.hpp"
#include "ofld/tunnel/common_config.hpp"
#include "ofld/tunnel/encap_kind.hpp"
#include "ofld/tunnel/fdb.hpp"
#include "ofld/tunnel/geneve.hpp"
#include "ofld/tunnel/inner_csum.hpp"
#include "ofld/tunnel/ip_tunnel.hpp"
#include "ofld/tunnel/types.hpp"
#include "ofld/tunnel/vxlan.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/peer_hello.hpp"

namespace ofld::tunnel {

/// Longest tunnel header an encapsulation writes (Geneve with 63 words of options: 260; GRE
/// with checksum and key: 12; GUE with the RCO option: 12; VXLAN: 8).
inline constexpr std::size_t kMaxTunnelHdr = 260;

/// The encapsulations (iproute2 link types: vxlan, ipip/sit `encap gue`, gre, ip6gre, geneve).
enum class Encap : std::uint8_t { Vxlan, Gue, Gre, Ip6gre, Geneve };
/// "vxlan", "gue", "gre", "ip6gre", "geneve".
std::string_view to_string(Encap e) noexcept;

/// The socket an encapsulation's datagrams travel on: UDP (the kernel adds IP + UDP; sent
/// with UDP_SEGMENT, received with UDP_GRO) or raw IP of protocol 47 (the kernel adds IP).
enum class SocketKind : std::uint8_t { Udp, RawIp };

/// The configuration of one encapsulation: one alternative per encapsulation (the list).
using EncapConfig = std::variant<VxlanConfig, GueConfig, GreConfig, GeneveConfig>;

/// An endpoint's tunnel configuration: the common settings (common(); those of the UDP
/// encapsulations: udp()) and the encapsulation's own (encap). Implicitly made from any one
/// encapsulation's configuration.
struct TunnelConfig {
  EncapConfig encap;

  TunnelConfig() = default;
  template <class C>
    requires std::is_constructible_v<EncapConfig, C&&> && (!std::is_same_v<std::remove_cvref_t<C>, TunnelConfig>)
  TunnelConfig(C&& c) : encap(std::forward<C>(c)) {}  // NOLINT: implicit by design

  /// The settings every encapsulation has.
  const TunnelCommon& common() const noexcept;
  TunnelCommon& common() noexcept;
  /// The UDP settings (VXLAN, GUE, Geneve); null for an encapsulation not over UDP.
  const UdpTunnelSettings* udp() const noexcept;
  UdpTunnelSettings* udp() noexcept;
  /// The encapsulation's configuration when it is a C; else null.
  template <class C> const C* get() const noexcept { return std::get_if<C>(&encap); }
  template <class C> C* get() noexcept { return std::get_if<C>(&encap); }
  /// "vxlan", "gue", "gre", "ip6gre" or "geneve".
  std::string_view name() const noexcept;
  /// Bytes added on the underlay (outer IP [+ UDP] + tunnel header [+ inner Ethernet]).
  int overhead() const noexcept;
  /// The device MTU: configured, else 1500 − overhead().
  int device_mtu() const noexcept { return common().mtu ? common().mtu : 1500 - overhead(); }
};

/// Per-peer counters (a subset of Counters, attributed to one remote).
struct PeerCounters {
  std::uint64_t tx_datagrams = 0, tx_bytes = 0;  ///< datagrams handed to the socket for it
  std::uint64_t rx_datagrams = 0, rx_bytes = 0;  ///< datagrams received from it
  std::uint64_t rx_dropped = 0;                  ///< of those, dropped (reason in Counters::drops)
  std::uint64_t fdb_learned = 0;                 ///< FDB entries learned or moved to it (VXLAN)
  /// Integrity mode: datagrams sent to it with the inner checksum elided (left the
  /// pseudo-header seed) / with full inner checksums; datagrams received from it whose inner
  /// checksum field was the seed, delivered NEEDS_CSUM without summing.
  std::uint64_t tx_csum_elided = 0, tx_csum_full = 0, rx_csum_seed = 0;
};

/// One remote endpoint, owned by the Endpoint: its underlay address, whether it came from
/// the configuration (`remote` / `remotes`) or was learned (a VXLAN datagram that decapsulated
/// from it, or a static FDB entry sent to) and its counters. Its FDB entries are the FDB's
/// entries whose remote is `addr` (Endpoint::fdb_entries()); its negotiated session state is
/// in the PeerTable (EndpointOptions::peer_sessions, `ofld peers`).
struct Peer {
  IpAddr addr;
  bool configured = false;
  PeerCounters ctr;
  /// VXLAN: its id in the FDB's interned-remote table (SharedFdb::remote_id), cached; a
  /// kNoRemote / kRemotesFull answer is asked again when SharedFdb::known_generation moves.
  RemoteId fdb_remote = kNoRemote;
  std::uint32_t fdb_gen = ~0u;
};

/// What an Endpoint hands its encapsulation when it is bound (Encapsulation::bind).
struct EncapBinding {
  std::shared_ptr<SharedFdb> fdb;  ///< a forwarding database shared by workers; null: own one
  Mac own_mac{};                   ///< the device's MAC (Ethernet encapsulations: loop check)
  bool any_source = false;         ///< EndpointOptions::any_source (Geneve with EVPN)
};

/// The per-encapsulation part of an Endpoint (made by make_encapsulation; one per Endpoint,
/// not thread-safe). Const members read the configuration only; bind, remotes, after_decap
/// and tick may use the state the encapsulation keeps (VXLAN: its FDB and the last sighting).
class Encapsulation {
 public:
  virtual ~Encapsulation() = default;
  virtual Encap kind() const noexcept = 0;
  /// The configuration's common settings and (VXLAN, GUE) its UDP ones; null when not UDP.
  virtual const TunnelCommon& common() const noexcept = 0;
  virtual const UdpTunnelSettings* udp() const noexcept { return nullptr; }
  /// A reload: the outer TTL, TOS and DF settings (`ttl N|inherit`, `tos N|inherit`, `df`) of
  /// the datagrams built from now on. Call from the thread that runs the endpoint.
  void set_outer(const TunnelCommon& o) noexcept {
    const_cast<TunnelCommon&>(common()).set_outer(o);  // every encapsulation's own (non-const) copy
  }

  // ---- device and socket
  /// Device link layer: Ethernet (TAP) for VXLAN, raw IP (TUN) for GUE/GRE.
  virtual wire::LinkType link() const noexcept = 0;
  virtual SocketKind socket() const noexcept = 0;
  /// UDP destination port (host order; 0 for raw IP).
  virtual std::uint16_t dst_port() const noexcept = 0;
  /// Bytes added on the underlay (outer IP [+ UDP] + tunnel header [+ inner Ethernet]): the
  /// device MTU is 1500 minus this unless configured.
  virtual int overhead() const noexcept = 0;
  /// True when each inner flow leaves from its own UDP source port (VXLAN's
  /// udp_flow_src_port: the daemon opens a transmit socket per port); false: one port.
  virtual bool flow_src_ports() const noexcept { return false; }
  /// What a datagram's socket tells of its outer UDP checksum (VXLAN over IPv6 without
  /// udp6zerocsumrx: the kernel drops zero checksums, so every datagram had one: Present).
  virtual OuterCsum socket_outer_csum() const noexcept { return OuterCsum::Unknown; }
  /// Frames queued in gro_cells before its poll runs (EndpointOptions::gro_backlog 0).
  virtual std::size_t default_gro_backlog() const noexcept = 0;

  // ---- transmit
  /// Transmit check of a device frame before anything else: TxNotEthernet / TxNotIp.
  virtual std::optional<Drop> tx_check(std::span<const std::uint8_t> frame) const noexcept = 0;
  /// Outer TOS / traffic class for the frame (vxlan_xmit_one / ip_tunnel_xmit, RFC 6040 §4.1).
  virtual std::uint8_t outer_tos(std::span<const std::uint8_t> frame) const noexcept = 0;
  /// Outer TTL and DF for the frame (TxTrain::ttl / TxTrain::df): `ttl` and `ttl inherit`,
  /// `df unset|set|inherit` of an Ethernet encapsulation over UDP/IPv4 (outer_ttl_df in
  /// ofld/tunnel/vxlan.hpp); df -1 (the socket's own) for IP encapsulations and IPv6.
  OuterTtlDf outer_ttl_df(std::span<const std::uint8_t> frame) const noexcept;
  /// UDP source port for the frame (host order): udp_flow_src_port of the inner flow
  /// (VXLAN), the configured port (GUE), 0 (GRE).
  virtual std::uint16_t src_port(std::span<const std::uint8_t> frame) const noexcept = 0;
  /// Whether a segment left CHECKSUM_PARTIAL may travel as RCO (remcsumtx with an outer
  /// checksum: the segment keeps its seed, W-28/X-31). False for GRE.
  virtual bool rco_tx() const noexcept { return false; }
  /// Whether the tunnel header can encode this CHECKSUM_PARTIAL segment's checksum start and
  /// offset (VXLAN W-26: start ≤ 254, even, offset 6 or 16; GUE W-27: start + offset ≤ 65535).
  virtual bool rco_encodable(const core::Packet& /*seg*/) const noexcept { return false; }
  /// The remotes of a frame into `out` (cleared first): VXLAN and Geneve the FDB lookup
  /// (flooding when unknown), the others the configured remote. Returns true when the frame is flooded.
  /// Counts what it refuses into `c` (fdb_local_refused).
  virtual bool remotes(std::span<const std::uint8_t> frame, std::uint64_t now_ns,
                       std::vector<IpAddr>& out, Counters& c) = 0;
  /// The tunnel header for one datagram carrying `seg` (one frame, not GSO; data() at its
  /// first header), written to hdr[0..info.hdr_len); with `rco` (the inner checksum decision,
  /// inner_csum_plan, said Rco) the header carries RCO for seg's csum_start/csum_offset.
  /// Checks only that `seg` can be carried (TxNotEthernet, TxNotIp); the inner checksum is
  /// not touched here.
  virtual EncapInfo encap(const core::Packet& seg, bool rco,
                          std::span<std::uint8_t, kMaxTunnelHdr> hdr) const = 0;
  /// After the datagram (header + segment) is laid out contiguously: anything computed over
  /// the whole datagram (the GRE checksum, V-13). Returns true when it wrote something.
  virtual bool finish(std::span<std::uint8_t> /*datagram*/) const noexcept { return false; }

  // ---- receive
  /// Whether datagrams from `from` belong to this tunnel (GUE/GRE: only the remote, as
  /// ip_tunnel_lookup; Geneve: known remotes unless learning/EVPN, GN-13; else RxWrongSource).
  virtual bool accepts(const IpAddr& /*from*/) const noexcept { return true; }
  /// Whether an unknown source becomes a (learned) Peer (VXLAN; Geneve with learning or EVPN).
  virtual bool learns_peers() const noexcept { return false; }
  /// Decapsulate one datagram (from its tunnel header on); counts its drop into `c`.
  /// `owner`: zero-copy receive buffer holding `payload` (VXLAN; others copy).
  virtual DecapResult decap(std::span<const std::uint8_t> payload, OuterCsum outer, Counters& c,
                            const core::BufferRef* owner, int outer_tos) const = 0;
  /// After a successful decapsulation: VXLAN's/Geneve's loop check and learning (vxlan_snoop).
  /// False: the frame is dropped (counted into `c` here; the caller counts the peer's drop).
  virtual bool after_decap(const core::Packet& /*inner*/, const IpAddr& /*from*/, Peer* /*peer*/,
                           std::uint64_t /*now_ns*/, Counters& /*c*/) {
    return true;
  }

  // ---- state, peers, description
  /// Called once by the Endpoint before use (VXLAN, Geneve: takes or makes the FDB, adds the
  /// configured remotes to it).
  virtual void bind(const EncapBinding& /*b*/) {}
  /// About once a second (VXLAN, Geneve: FDB ageing).
  virtual void tick(std::uint64_t /*now_ns*/, Counters& /*c*/) {}
  /// The forwarding database (VXLAN, Geneve, after bind); null for the others.
  virtual SharedFdb* fdb() const noexcept { return nullptr; }
  /// A forwarding database for the workers of a multi-queue endpoint to share (VXLAN, Geneve,
  /// with its ageing); null when the encapsulation has none.
  virtual std::shared_ptr<SharedFdb> make_shared_fdb() const { return nullptr; }
  /// The configured remotes (they become configured Peers and peer sessions).
  virtual std::vector<IpAddr> configured_remotes() const = 0;
  /// What the peer sessions carry of this encapsulation (wire::peer::Encap, GRE options).
  virtual wire::peer::Encap peer_encap() const noexcept = 0;
  virtual wire::peer::GreOptions peer_gre() const { return {}; }
  /// The settings worth a log line (" id 42 local … dstport 4789 remotes 1 …").
  virtual std::string describe() const = 0;
  /// Checks for integrity mode (inner checksums elided): the outer checksum must protect the
  /// inner packet in both directions. An error naming the setting to change, or none.
  virtual std::optional<std::string> integrity_error() const = 0;
};

/// The facts of inner_csum_plan for `seg` through `enc` (`elide`: the frame's integrity-mode
/// verdict, Endpoint::tx_elide).
InnerCsumFacts inner_csum_facts(const Encapsulation& enc, const core::Packet& seg, bool elide) noexcept;

/// One datagram's inner checksum made ready and its tunnel header written, outside a train
/// (the C API's ofld_tunnel_encap): inner_csum_plan without integrity mode, SumInTrain done
/// as SumInEncap (skb_checksum_help), then Encapsulation::encap. `seg` may be modified.
EncapInfo encap_one(const Encapsulation& enc, core::Packet& seg,
                    std::span<std::uint8_t, kMaxTunnelHdr> hdr);

/// The Encapsulation of a configuration (one overload per encapsulation, each in its file).
std::unique_ptr<Encapsulation> make_encapsulation(const TunnelConfig& cfg);
std::unique_ptr<Encapsulation> make_encapsulation(const VxlanConfig& cfg);
std::unique_ptr<Encapsulation> make_encapsulation(const GueConfig& cfg);
std::unique_ptr<Encapsulation> make_encapsulation(const GreConfig& cfg);
std::unique_ptr<Encapsulation> make_encapsulation(const GeneveConfig& cfg);

}  // namespace ofld::tunnel

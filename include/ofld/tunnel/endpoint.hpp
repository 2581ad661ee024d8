// ofld/tunnel/endpoint.hpp — the tunnel endpoint: one packet path for VXLAN, GUE, GRE and
// ip6gre without I/O (docs/ARCHITECTURE.md, "Tunnel endpoint"). The daemon reads frames from
// the device (io::Tap for VXLAN, io::Tun for GUE/GRE), hands them to transmit(), sends the
// trains it gets back through the socket the encapsulation names (UDP or raw IP), hands what
// the socket received to receive_train(), and writes what rx_flush() returns to the device.
// Everything in between happens here, counted in one Counters with one list of drop reasons,
// and reported by stats() as one JSON document.
//
// What differs between the encapsulations is its plug-in (Encapsulation, one file each:
// ofld/tunnel/encapsulation.hpp): the device kind (TAP/Ethernet or TUN/raw IP), the socket
// kind (UDP or raw IP protocol 47), the transmit checks, the remotes of a frame, the outer
// TOS and source port, the tunnel header of one datagram (VXLAN 8 bytes, GUE 4 or 12 with
// RCO, GRE 4..12), decapsulation (vxlan_rcv / gue_udp_recv / gre_parse_header + ip_tunnel_rcv
// checks) and what follows it (VXLAN: loop check, FDB learning).
//
// Transmit (one shape): virtio_net_hdr + frame → offload::virtio::to_packet (S-1..S-5) →
// remotes (VXLAN: FDB lookup, flooding; GUE/GRE: the configured remote) → GSO of the INNER
// super-packet (gso::gso_segment with the encapsulation's features: with RCO the segments
// stay CHECKSUM_PARTIAL with their pseudo-header seed, W-28/X-31; otherwise the inner checksum
// is summed while copying, X-8) → per segment the tunnel header (Encapsulation::encap) + the
// segment, laid end to end into trains of equal-size datagrams (the last may be shorter; at
// most kMaxTrainSegs / kMaxTrainBytes): one sendmsg with UDP_SEGMENT per train (udp(7)), or
// one sendmmsg of the datagrams on a raw IP socket (GRE). The outer IP [+ UDP] header is the
// kernel's: the socket builds it (and, for UDP_SEGMENT, replicates it per datagram — the
// outer level of the kernel's own tunnel GSO, skb_udp_tunnel_segment, whose inner level is
// what gso_segment does here). Nothing in user space writes an outer IP or UDP header.
//
// Receive (one shape): datagram(s) from a peer → Encapsulation::decap (V-4, V-9, V-12/13,
// C-33, K-2, RFC 6040) → VXLAN: loop check and FDB learning → gro::GroCells (gro_cells_receive
// / the cell's NAPI poll at rx_flush(): GRO after decapsulation, W-12/W-19; off: plain
// netif_rx) → virtio_net_hdr from offload::virtio::from_packet (S-7, S-8) → TapFrame for the
// device write.
//
// Threading: one Endpoint per worker (not thread-safe); the VXLAN FDB may be shared between
// the workers of a multi-queue endpoint (EndpointOptions::fdb).
//
// For the daemon loop (one worker per device queue), the whole contract is:
//   make:    Endpoint(cfg.tunnel, EndpointOptions{gro, vnet_hdr, mtu,
//            own_mac, fdb = the workers' SharedFdb (VXLAN)});
//            encapsulation().link() / socket() / dst_port() say which device (TAP or TUN)
//            and which socket (UDP on dst_port(), or raw IP protocol 47) to open.
//   device readable: transmit(vnet, frame, now, trains) per frame; per train set the socket's
//            TOS to t.tos, send t.buf as t.count datagrams of t.seg_size (UDP: from source
//            port t.src_port, to t.remote:dst_port(); raw IP: to t.remote), then
//            sent(t, ok, sent_as_udp_segment); finally recycle(trains).
//   socket readable: receive_train(owner, off, len, gso_size (UDP_GRO; 0 = one datagram),
//            from, OuterCsum, now, outer tos or -1) per received buffer; at the end of the
//            batch rx_flush(now, frames), write the frames (io::VnetWriter), written(frames,
//            bytes, failed), release the frames before reusing the receive buffers.
//   ~1/s:    tick(now) on one worker (FDB ageing).
//   stats:   stats() per worker (under the worker's lock); add the device writer's and the
//            socket's counters; the documents of several workers add up key by key.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/core/features.hpp"
#include "ofld/offload/virtio_net.hpp"  // TapFrame
#include "ofld/gro/gro_cells.hpp"
#include "ofld/tunnel/encapsulation.hpp"
#include "ofld/tunnel/fdb.hpp"
#include "ofld/tunnel/ip_tunnel.hpp"
#include "ofld/tunnel/types.hpp"
#include "ofld/tunnel/vxlan.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::core { struct GsoCounters; }

namespace ofld::tunnel {

class PeerTable;  // ofld/tunnel/peer.hpp: per-remote sessions

/// UDP_MAX_SEGMENTS of older kernels (64); 6.12 allows 128 — 64 works on both.
inline constexpr std::size_t kMaxTrainSegs = 64;
/// Largest payload of one train (IPv4 total length ≤ 65535 with 20 + 8 header bytes).
inline constexpr std::size_t kMaxTrainBytes = 65535 - 20 - 8;
/// A train for one send: `count` datagrams (each from its tunnel header on) of `seg_size`
/// bytes laid end to end in `buf`, the last one possibly shorter; seg_size == buf.size()
/// for a single datagram. One representation only: the scattered form, measured
/// (headers + the segments' own pieces over an iovec), was no faster than this copying form
/// (bench/tunnel-profile.md, "Train representation: copying builder vs scattered").
struct TxTrain {
  IpAddr remote;
  std::uint16_t src_port = 0;  ///< UDP source port (host order; VXLAN: flow_src_port; GUE: port; GRE: 0)
  std::uint16_t seg_size = 0;  ///< bytes per datagram (the last may be shorter)
  std::uint32_t count = 0;     ///< datagrams in the train
  std::vector<std::uint8_t> buf;
  /// Outer IPv4 TOS / IPv6 traffic class of every datagram (configured tos or tos inherit,
  /// ECN bits from the inner header per RFC 6040 §4.1).
  std::uint8_t tos = 0;
  /// Outer TTL / hop limit (`ttl N`, or the inner's with `ttl inherit`); 0: the socket's default.
  std::uint8_t ttl = 0;
  /// Outer IPv4 DF (`df`): 1 set, 0 clear, -1 the socket's own setting (IPv6, GUE, GRE).
  std::int8_t df = -1;
  std::size_t size() const noexcept { return buf.size(); }
};

/// The device frames rx_flush() hands over: offload::virtio::TapFrame (ofld/offload/virtio_net.hpp),
/// named here as part of the Endpoint's interface.
using offload::virtio::TapFrame;

/// Settings of an Endpoint that are not the tunnel's configuration (documented settings,
/// no environment variables).
struct EndpointOptions {
  bool gro = true;         ///< GRO after decapsulation (gro_cells; off: every frame written alone)
  /// The device carries a virtio_net_hdr. Without one, received CHECKSUM_PARTIAL frames (RCO
  /// partial mode, K-9 seeds) get their checksum finished in software before the write.
  bool vnet_hdr = true;
  /// Device MTU (bytes of L3). Without a vnet header a frame longer than mtu + link header is
  /// dropped (TxTooBig; public bug B4: a GSO super-frame reaching a non-vnet reader); 0 = no check.
  int mtu = 0;
  Mac own_mac{};           ///< VXLAN: the TAP's MAC (frames from it coming back are loops)
  /// VXLAN: forwarding database shared with other Endpoints (the workers of a multi-queue
  /// endpoint); null → a database of its own. The config's remotes are added either way.
  std::shared_ptr<SharedFdb> fdb;
  /// Geneve: take datagrams from any source, not only known remotes (EVPN: the VTEPs come and
  /// go with the routes; GN-13). VXLAN takes any source anyway; GUE/GRE never.
  bool any_source = false;
  /// Frames queued in gro_cells before its poll runs within a receive batch (the backlog
  /// is never over-filled: it is polled, not dropped). 0 = the encapsulation's default:
  /// 1000 (netdev_max_backlog) for VXLAN, whose zero-copy receive leaves the payload in the
  /// receive slot; 64 (the NAPI weight) for GUE/GRE, whose datagrams are copied into each
  /// packet, so that GRO merges them while they are cache-hot (measured: bench/tunnel-profile.md,
  /// "GUE, GRE, ip6gre").
  std::size_t gro_backlog = 0;
  /// Peer sessions (docs/peer-protocol.md; shared by the workers): HELLO / HELLO-ACK datagrams received are
  /// handed to it instead of decapsulation, and with integrity mode inner checksums are
  /// elided toward peers it says have it too. Null: no sessions, full checksums.
  std::shared_ptr<PeerTable> peer_sessions;
};

/// Most peers one Endpoint keeps (configured ones always; learned ones up to this bound —
/// beyond it datagrams are counted in Counters only).
inline constexpr std::size_t kMaxPeers = 1024;

class Endpoint {
 public:
  /// An endpoint of any encapsulation (TunnelConfig is made implicitly from a VxlanConfig,
  /// GueConfig or GreConfig). `cfg` should pass validation; its remotes become peers.
  Endpoint(TunnelConfig cfg, EndpointOptions opts = {});
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  const Encapsulation& encapsulation() const noexcept { return *enc_; }
  Encap encap() const noexcept { return enc_->kind(); }
  /// The tunnel configuration (cfg.get<VxlanConfig>() etc. for an encapsulation's own).
  const TunnelConfig& config() const noexcept { return cfg_; }

  /// One frame read from the device (its virtio_net_hdr decoded). Appends trains to `out`
  /// (buffers taken from recycle()d ones when there are any, so a steady stream does not
  /// allocate). Drops are counted (Counters::drops), never thrown. `owner`: the device read
  /// buffer holding `frame`, when there is one: a TSO frame's payload is then segmented from
  /// it in place instead of being copied first (offload::virtio::to_packet); no reference to
  /// it outlives the call. Frames handed one after the other into the same `out` (one device
  /// read batch) share a train where the previous frame's last train is still open (same
  /// remote, source port and TOS, no shorter datagram yet, within kMaxTrainSegs and
  /// kMaxTrainBytes): a batch of pure ACKs of one flow leaves as one UDP_SEGMENT send instead
  /// of one send each; the datagrams are the same bytes in the same order.
  void transmit(const wire::virtio_net::Hdr& vnet, std::span<const std::uint8_t> frame,
                std::uint64_t now_ns, std::vector<TxTrain>& out, const core::BufferRef* owner = nullptr);
  /// The daemon's report of one train's send: `ok` false → every datagram counted as
  /// TxSendFailed; `udp_segment` true when it went out as one UDP_SEGMENT sendmsg;
  /// `gso_fallback` true when the socket refused UDP_SEGMENT at run time (EINVAL/EIO), turned
  /// it off and resent the train datagram by datagram (counted as gso_fallbacks).
  void sent(const TxTrain& t, bool ok, bool udp_segment, bool gso_fallback = false) noexcept;
  /// Give sent trains' buffers back for reuse by transmit() and clear `sent`.
  void recycle(std::vector<TxTrain>& sent);

  /// One received datagram (from its tunnel header on) from `from`. `outer`: what is known
  /// of its outer UDP checksum; `outer_tos`: outer TOS / traffic class (IP_RECVTOS /
  /// IPV6_RECVTCLASS or the raw socket's IP header), -1 when unknown (no RFC 6040 decap).
  void receive(std::span<const std::uint8_t> payload, const IpAddr& from, OuterCsum outer,
               std::uint64_t now_ns, int outer_tos = -1);
  /// A receive buffer of datagrams laid end to end, `gso_size` bytes each (last may be
  /// shorter) as UDP_GRO delivers them; gso_size 0 = one datagram. Each datagram is
  /// decapsulated on its own before GRO sees the inner frames (public bug E1).
  void receive_train(std::span<const std::uint8_t> buf, std::uint16_t gso_size,
                     const IpAddr& from, OuterCsum outer, std::uint64_t now_ns,
                     int outer_tos = -1);
  /// As receive_train, for a buffer inside `owner` (bytes [off, off + len) of owner->bytes):
  /// VXLAN TCP frames keep their payload in `owner` as a fragment (no copy; GRO steals it).
  /// The caller must not overwrite `owner` before rx_flush() output is written and released
  /// (owner.use_count() == 1 again).
  void receive_train(const core::BufferRef& owner, std::size_t off, std::size_t len,
                     std::uint16_t gso_size, const IpAddr& from, OuterCsum outer,
                     std::uint64_t now_ns, int outer_tos = -1);
  /// End of a receive batch (the gro_cells NAPI poll): GRO flows completed, device frames
  /// with their virtio_net_hdr appended to `out`.
  void rx_flush(std::uint64_t now_ns, std::vector<TapFrame>& out);
  /// The daemon's report of device writes (io::VnetWriter): frames/bytes written, frames lost.
  void written(std::uint64_t frames, std::uint64_t bytes, std::uint64_t failed) noexcept;
  /// Age the FDB (VXLAN; call about once a second).
  void tick(std::uint64_t now_ns);
  /// A reload: the outer header's TTL and TOS (`ttl`, `tos N|inherit`) for the trains built
  /// from now on (the socket's TTL is the caller's). Call from the thread that runs this
  /// endpoint.
  void set_outer(const TunnelCommon& outer) noexcept;
  /// Peer session messages to send now (docs/peer-protocol.md), one single-datagram train each (count 1,
  /// src_port = dst_port(): they leave from the tunnel's own port): ACKs queued by received
  /// HELLOs, and with `hellos` the HELLOs that are due (first contact, retries, refresh).
  /// Not counted as data (tx counters); nothing when EndpointOptions::peer_sessions is null.
  void control_out(std::uint64_t now_ns, bool hellos, std::vector<TxTrain>& out);

  Counters& counters() noexcept { return ctr_; }
  const Counters& counters() const noexcept { return ctr_; }
  /// Peers by address (std::map: references stay valid while the Endpoint lives).
  const std::map<IpAddr, Peer>& peers() const noexcept { return peers_; }
  const Peer* peer(const IpAddr& a) const noexcept;
  /// The most segments one GSO frame from the device may hold so that its datagrams, each at
  /// most `mtu` bytes of inner L3 plus link and tunnel headers, fit one UDP_SEGMENT train
  /// (kMaxTrainBytes, kMaxTrainSegs): the value for the device's gso_max_segs, so that one
  /// TSO frame leaves in one send. 0 for encapsulations not sent in trains (GRE, ip6gre).
  std::uint32_t segs_per_train(int mtu) const noexcept;
  /// The VXLAN FDB (null for GUE/GRE).
  SharedFdb* fdb() noexcept { return enc_->fdb(); }
  const SharedFdb* fdb() const noexcept { return enc_->fdb(); }
  /// FDB entries whose remote is p.addr (0 for GUE/GRE).
  std::size_t fdb_entries(const Peer& p) const;
  const gro::GroCells& gro_cells() const noexcept { return *cells_; }
  const core::GsoCounters& gso_counters() const noexcept { return *gso_ctr_; }

  /// The endpoint's stats document: {"encap", "tx": {...}, "rx": {...}, "fdb": {...},
  /// "drops": {reason: n, ... only non-zero}, "drops_total", "gso": {...}, "gro": {...}
  /// (when GRO is on), "gro_cells": {...}, "peers": {addr: {...}}}. Numbers only below the
  /// top level, so the documents of several workers add up key by key.
  nlohmann::json stats() const;

 private:
  void init();
  // Integrity mode (endpoint_peer.cpp): whether every remote of this frame takes elided inner
  // checksums; a received control message.
  bool tx_elide(std::uint64_t now_ns);
  // transmit(), in four steps: the inner GSO into segs_ (false: dropped); each segment's
  // inner checksum decided (inner_csum_plan) and its datagram packed into trains for
  // remotes_[0]; the trains copied for the other remotes (flooding); the counters.
  struct TxBinding {
    std::uint16_t sport = 0;
    std::uint8_t tos = 0;
    OuterTtlDf ttl_df{};
  };
  struct Packed {
    std::size_t first = 0, last = 0;  // this frame's trains in `out` (first may be continued)
    std::uint32_t joined_count = 0;   // datagrams the continued train held before
    std::size_t joined_bytes = 0;
  };
  bool segment(core::Packet&& pkt);
  Packed pack(const TxBinding& bind, bool elide, bool gso, bool zero_as_ffff, std::vector<TxTrain>& out);
  void flood(std::size_t first, std::vector<TxTrain>& out);
  void count(const Packed& pk, bool elide, const std::vector<TxTrain>& out);
  bool rx_control(std::span<const std::uint8_t> payload, const IpAddr& from, std::uint64_t now_ns);
  Peer* find_peer(const IpAddr& a, bool create);
  void receive_one(std::span<const std::uint8_t> payload, const IpAddr& from, Peer* peer,
                   OuterCsum outer, std::uint64_t now_ns, const core::BufferRef* owner,
                   int outer_tos);
  void to_dev(core::Packet&& p, std::vector<TapFrame>& out);
  std::vector<std::uint8_t> take_buf();
  void recycle_one(std::vector<std::uint8_t>& b);

  TunnelConfig cfg_;
  std::unique_ptr<Encapsulation> enc_;
  EndpointOptions opts_;
  Counters ctr_;
  std::map<IpAddr, Peer> peers_;
  Peer* last_peer_ = nullptr;                     // lookup cache
  std::size_t queued_ = 0;                        // frames handed to gro_cells since its last poll
  // The last train transmit() left open in its caller's vector (to continue with the next
  // frame of the same batch): valid only while that vector still ends with it (same length,
  // same buffer); recycle() ends it.
  bool tx_open_ = false;
  std::size_t tx_open_n_ = 0;
  const std::uint8_t* tx_open_buf_ = nullptr;
  std::unique_ptr<gro::GroCells> cells_;
  std::unique_ptr<core::GsoCounters> gso_ctr_;
  std::vector<IpAddr> remotes_;                   // transmit scratch
  std::vector<core::Packet> segs_;                // transmit scratch
  std::vector<std::vector<std::uint8_t>> buf_pool_;  // recycled train buffers
  static constexpr std::size_t kBufPoolMax = 256;
};

}  // namespace ofld::tunnel

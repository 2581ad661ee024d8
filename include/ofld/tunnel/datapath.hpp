// ofld/tunnel/datapath.hpp — the VXLAN endpoint's packet path without I/O
// (docs/ARCHITECTURE.md, "Data paths of ofld tunnel"). The daemon feeds it TAP frames and UDP
// payloads and performs the system calls it asks for; everything in between (virtio_net_hdr
// gate, FDB, GSO, encapsulation, train building, decapsulation, RCO, GRO after
// decapsulation, the virtio_net_hdr for the TAP write) happens here, counted.
//
// Transmit: virtio_net_hdr + frame → offload::virtio::to_packet (S-1..S-5) → FDB lookup →
// software GSO of a super-packet (gso::gso_segment; with RCO the segments stay
// CHECKSUM_PARTIAL with the seed, else the checksum is summed while copying) → encap_frame →
// trains of equal-size datagrams (the last may be shorter), at most kMaxTrainSegs datagrams
// and kMaxTrainBytes bytes each: one sendmsg with UDP_SEGMENT per train (spec U-*, udp(7)).
//
// Receive: UDP payload → decap (V-4, C-33) → FDB learning → GRO engine (gro_cells
// analogue) → output frames with the virtio_net_hdr from offload::virtio::from_packet (S-7,
// S-8): aggregates NEEDS_CSUM + gso_type/gso_size; validated singles DATA_VALID.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ofld/tunnel/fdb.hpp"
#include "ofld/tunnel/vxlan.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::gro { class Engine; }
namespace ofld::core { struct GsoCounters; }
namespace ofld::offload { using core::GsoCounters; }

namespace ofld::tunnel {

/// UDP_MAX_SEGMENTS of older kernels (64); 6.12 allows 128 — 64 works on both.
inline constexpr std::size_t kMaxTrainSegs = 64;
/// Largest UDP payload of one train (IPv4 total length ≤ 65535 with 20 + 8 header bytes).
inline constexpr std::size_t kMaxTrainBytes = 65535 - 20 - 8;

/// A train of UDP payloads for one sendmsg: `count` datagrams of `seg_size` bytes laid end
/// to end in `buf`, the last one possibly shorter. seg_size == buf.size() for one datagram.
///
/// With DatapathOptions::tx_pieces the train is scattered instead (buf stays empty):
/// datagram i is hdrs[i] (its VXLAN header) followed by the bytes of segs[i] (head, frags,
/// frag_list), for one sendmsg(UDP_SEGMENT) over an iovec (train_pieces()).
struct TxTrain {
  IpAddr remote;
  std::uint16_t src_port = 0;  ///< flow_src_port of the inner flow (host order)
  std::uint16_t seg_size = 0;
  std::uint32_t count = 0;
  std::vector<std::uint8_t> buf;
  std::vector<std::array<std::uint8_t, 8>> hdrs;  ///< scattered form: one per datagram
  std::vector<core::Packet> segs;                 ///< scattered form: one per datagram
  std::size_t pieces_bytes = 0;                   ///< scattered form: UDP payload bytes
  std::size_t npieces = 0;                        ///< scattered form: iovec entries
  /// Outer IPv4 TOS / IPv6 traffic class for every datagram of the train (outer_tos(): the
  /// configured tos or the inner DSCP with tos inherit, ECN from the inner header).
  std::uint8_t tos = 0;
  bool scattered() const noexcept { return !segs.empty(); }
  /// UDP payload bytes of the whole train (either form).
  std::size_t size() const noexcept { return scattered() ? pieces_bytes : buf.size(); }
};

/// Most iovec entries the data path puts in one scattered train (UIO_MAXIOV).
inline constexpr std::size_t kMaxTrainIov = 1024;

/// The byte pieces of a train in order, appended to `pieces`; `first` gets the index (in
/// `pieces`) where each datagram starts, then the end index (one more entry than datagrams).
/// Works for both forms (buf: one piece per datagram).
void train_pieces(const TxTrain& t, std::vector<std::span<const std::uint8_t>>& pieces,
                  std::vector<std::size_t>& first);
/// The train's datagrams laid end to end (a copy; for flooding and fallbacks).
std::vector<std::uint8_t> flatten(const TxTrain& t);

/// A frame for the TAP: virtio_net_hdr (host-order values) + Ethernet frame bytes. With
/// DatapathOptions::tap_frame_packets the bytes stay in `pkt` (head, frags, frag_list: write
/// them with one writev over tap_pieces(), no flattening copy) and `data` is empty.
struct TapFrame {
  TapFrame() = default;
  TapFrame(const wire::virtio_net::Hdr& h, std::vector<std::uint8_t> bytes)
      : vnet(h), data(std::move(bytes)) {}
  TapFrame(const wire::virtio_net::Hdr& h, core::Packet p) : vnet(h), pkt(std::move(p)) {}
  wire::virtio_net::Hdr vnet{};
  std::vector<std::uint8_t> data;
  std::optional<core::Packet> pkt;
  /// Frame length in bytes (data or pkt).
  std::size_t size() const noexcept { return pkt ? pkt->len() : data.size(); }
};

/// The byte pieces of a TAP frame in order (data, or pkt's head, frags and frag_list members),
/// appended to `out`; for a writev. Returns the number of pieces appended.
std::size_t tap_pieces(const TapFrame& f, std::vector<std::span<const std::uint8_t>>& out);

struct DatapathOptions {
  bool gro = true;        ///< GRO after decapsulation (off: every frame written alone)
  Mac own_mac{};          ///< the TAP's MAC: frames from it coming back are loops
  /// The TAP carries a virtio_net_hdr. Without one, received CHECKSUM_PARTIAL frames (RCO
  /// partial mode) get their checksum finished in software before the write.
  bool tap_vnet_hdr = true;
  /// TAP MTU (bytes of L3). Without a vnet header a frame longer than mtu + 14 is an error
  /// (public bug B4: a GSO super-frame reaching a non-vnet reader); 0 = no check.
  int tap_mtu = 0;
  /// Receive: hand TapFrames over with the packet in TapFrame::pkt instead of flattening it
  /// into TapFrame::data (saves a copy of every received byte; the daemon writes the pieces).
  bool tap_frame_packets = false;
  /// Forwarding database shared with other Datapaths (the workers of a multi-queue
  /// endpoint); null → a database of its own. The config's remotes are added either way.
  std::shared_ptr<SharedFdb> fdb;
  /// Transmit: build scattered trains (TxTrain::hdrs/segs, no copy of the segments into a
  /// train buffer); the daemon sends them with UdpSocket::send_train_pieces.
  bool tx_pieces = false;
};

class Datapath {
 public:
  Datapath(VxlanConfig cfg, DatapathOptions opts);
  ~Datapath();
  Datapath(const Datapath&) = delete;
  Datapath& operator=(const Datapath&) = delete;

  /// One frame read from the TAP (its virtio_net_hdr decoded). Appends trains to `out`; the
  /// datagrams are encapsulated straight into the trains' buffers (taken from recycle()d
  /// ones when there are any, so a steady stream does not allocate).
  void transmit(const wire::virtio_net::Hdr& vnet, std::span<const std::uint8_t> frame,
                std::uint64_t now_ns, std::vector<TxTrain>& out);
  /// One received UDP payload from `from`. Frames ready for the TAP are appended by rx_flush().
  /// `outer_tos`: the datagram's outer TOS / traffic class (IP_RECVTOS / IPV6_RECVTCLASS),
  /// -1 when unknown (decap()).
  void receive(std::span<const std::uint8_t> payload, const IpAddr& from, OuterCsum outer,
               std::uint64_t now_ns, int outer_tos = -1);
  /// A receive buffer of datagrams laid end to end, `gso_size` bytes each (last may be
  /// shorter) as UDP_GRO delivers them; gso_size 0 = one datagram. Each datagram is
  /// decapsulated on its own before GRO sees the inner frames (public bug E1: never hand a
  /// UDP-coalesced train of tunnel datagrams to anything but the decapsulator).
  void receive_train(std::span<const std::uint8_t> buf, std::uint16_t gso_size,
                     const IpAddr& from, OuterCsum outer, std::uint64_t now_ns,
                     int outer_tos = -1);
  /// As receive_train, for a buffer inside `owner` (bytes [off, off + len) of owner->bytes):
  /// TCP frames keep their payload in `owner` as a fragment (no copy; GRO steals it). The
  /// caller must not overwrite `owner` before rx_flush() output is written and released
  /// (owner.use_count() == 1 again).
  void receive_train(const core::BufferRef& owner, std::size_t off, std::size_t len,
                     std::uint16_t gso_size, const IpAddr& from, OuterCsum outer,
                     std::uint64_t now_ns, int outer_tos = -1);
  /// End of a receive batch (NAPI poll end): complete GRO flows and append TAP frames.
  void rx_flush(std::uint64_t now_ns, std::vector<TapFrame>& out);
  /// Give sent trains' buffers back for reuse by transmit() and clear `sent`.
  void recycle(std::vector<TxTrain>& sent);
  /// Age the FDB (call about once a second).
  void tick(std::uint64_t now_ns);

  const VxlanConfig& config() const noexcept { return cfg_; }
  Counters& counters() noexcept { return ctr_; }
  const Counters& counters() const noexcept { return ctr_; }
  SharedFdb& fdb() noexcept { return *fdb_; }
  /// GRO engine counters (merges, per-reason not-merged); null when GRO is off.
  const gro::Engine* gro() const noexcept { return gro_.get(); }
  const offload::GsoCounters& gso_counters() const noexcept { return *gso_ctr_; }

 private:
  std::vector<std::uint8_t> take_buf();
  void recycle_one(std::vector<std::uint8_t>& b);
  void take_scatter(TxTrain& t);
  static constexpr std::size_t kBufPoolMax = 256;
  void to_tap(core::Packet&& p, std::vector<TapFrame>& out);
  void receive_one(std::span<const std::uint8_t> payload, const IpAddr& from, OuterCsum outer,
                   std::uint64_t now_ns, const core::BufferRef* owner, int outer_tos);

  VxlanConfig cfg_;
  DatapathOptions opts_;
  Counters ctr_;
  std::shared_ptr<SharedFdb> fdb_;
  std::vector<IpAddr> remotes_;                     // lookup scratch
  std::unique_ptr<gro::Engine> gro_;
  std::unique_ptr<offload::GsoCounters> gso_ctr_;
  std::vector<core::Packet> rx_nogro_;
  std::vector<core::Packet> segs_;                  // transmit scratch (reused)
  std::vector<std::vector<std::uint8_t>> buf_pool_;  // recycled train buffers
  std::vector<std::vector<core::Packet>> seg_pool_;  // recycled scattered-train vectors
  std::vector<std::vector<std::array<std::uint8_t, 8>>> hdr_pool_;
};

}  // namespace ofld::tunnel

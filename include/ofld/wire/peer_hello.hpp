// ofld/wire/peer_hello.hpp — the peer session messages HELLO / HELLO-ACK that two ofld tunnel
// endpoints exchange on the tunnel's own port (issue 15; docs/peer-protocol.md).
//
// A message is an encapsulation-specific prefix that every kernel receiver of that
// encapsulation drops before anything is delivered, followed by one fixed body:
//   VXLAN  8 bytes, all zero: the I flag is clear, so vxlan_rcv drops the datagram
//          (SKB_DROP_REASON_VXLAN_INVALID_HDR) before it looks the VNI up — no device
//          counter moves, nothing reaches a bridge.
//   GUE    4 bytes: version 0, C (control) bit set, hlen 0, ctype kGueCtype, flags 0:
//          gue_udp_recv hands control messages to gue_control_message, which frees them.
//   GRE    4..12 bytes: version 0, protocol type kGreProto (IEEE 802 Local Experimental
//          EtherType 1), with the tunnel's own checksum (C) and key (K) options like its data
//          packets (RFC 2784/2890); a kernel GRE device has no handler for the protocol. The
//          GRE checksum, when present, must verify (else Verdict::BadChecksum).
// Body (all fields big-endian, offsets from the body's first byte):
//   0  magic "ofld" (0x6f666c64)        4  version (1)          5  type (1 HELLO, 2 ACK)
//   6  body length (>= 28; bytes past 28 are ignored, for later versions)
//   8  epoch: the sender's session epoch (non-zero, new each start)
//   12 peer_epoch: HELLO: the receiver's epoch the sender last saw (0: none);
//      ACK: the epoch of the HELLO being answered (the receiver's own)
//   16 seq: HELLO: sender's sequence number; ACK: the seq of the HELLO answered
//   20 caps: capability bits (kCapIntegrity, kCapRcoRx; others reserved: sent 0, ignored)
//   24 gso_size: largest inner GSO packet the sender takes (bytes of inner L3, 0 = unknown)
//   26 mtu: the sender's device MTU (bytes of inner L3, 0 = unknown)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ofld::wire::peer {

inline constexpr std::uint32_t kMagic = 0x6f666c64u;  ///< "ofld"
inline constexpr std::uint8_t kVersion = 1;
inline constexpr std::size_t kBodyLen = 28;
inline constexpr std::uint8_t kGueCtype = 0x6f;       ///< GUE control type of our messages
inline constexpr std::uint16_t kGreProto = 0x88b5;    ///< IEEE 802 Local Experimental EtherType 1
/// Longest prefix + body (VXLAN 8, GUE 4, GRE 4 + checksum 4 + key 4).
inline constexpr std::size_t kMaxMsgLen = 12 + kBodyLen;

/// Capability bits.
inline constexpr std::uint32_t kCapIntegrity = 1u << 0;  ///< takes datagrams with inner checksums elided
inline constexpr std::uint32_t kCapRcoRx = 1u << 1;      ///< remcsumrx configured
inline constexpr std::uint32_t kCapsKnown = kCapIntegrity | kCapRcoRx;

enum class MsgType : std::uint8_t { Hello = 1, HelloAck = 2 };
enum class Encap : std::uint8_t { Vxlan, Gue, Gre };

struct Msg {
  MsgType type = MsgType::Hello;
  std::uint32_t epoch = 0;
  std::uint32_t peer_epoch = 0;
  std::uint32_t seq = 0;
  std::uint32_t caps = 0;
  std::uint16_t gso_size = 0;
  std::uint16_t mtu = 0;
  friend bool operator==(const Msg&, const Msg&) = default;
};

/// GRE options of a message (the tunnel's ocsum / okey): C bit with the checksum over the
/// whole message (RFC 2784 §2.5), K bit with the key (RFC 2890 §2.1).
struct GreOptions {
  bool csum = false;
  std::optional<std::uint32_t> key;  ///< no value: no K bit (as IpTunnelConfig::okey)
};

/// Bytes of the encapsulation's prefix (VXLAN 8, GUE 4, GRE 4 + 4 per option).
std::size_t prefix_len(Encap e, GreOptions g = {}) noexcept;

/// Writes prefix + body into `out`. Returns the bytes written, 0 when `out` is too small or
/// msg.epoch is 0 (not a valid epoch). `g` only for Encap::Gre.
std::size_t encode(const Msg& msg, Encap e, std::span<std::uint8_t> out, GreOptions g = {}) noexcept;

/// What a received datagram (from its tunnel header on) is.
enum class Verdict : std::uint8_t {
  NotControl,  ///< not one of ours: a data datagram (or another control message) for decap
  Ok,          ///< a valid message, in `msg`
  // Malformed (prefix and magic match, the rest does not): named reasons
  Truncated,   ///< shorter than prefix + kBodyLen, or than its length field
  BadVersion,  ///< version other than kVersion
  BadType,     ///< type neither HELLO nor HELLO-ACK
  BadLength,   ///< length field < kBodyLen
  ZeroEpoch,   ///< epoch 0
  BadChecksum, ///< GRE: the C bit is set and the GRE checksum does not verify
};
std::string_view to_string(Verdict v) noexcept;

struct Parsed {
  Verdict verdict = Verdict::NotControl;
  Msg msg;
};

/// Classify and decode one datagram. Reads only inside `d`. A datagram is taken as ours when
/// its prefix is the encapsulation's control prefix (GRE: protocol kGreProto, version 0, no
/// routing or sequence bit, any of C/K) and the magic follows (NotControl otherwise, even when
/// shorter); then every field is checked.
Parsed parse(std::span<const std::uint8_t> d, Encap e) noexcept;

/// Cheap pre-check for the receive hot path: could `d` be a control message of `e`? (VXLAN:
/// I flag clear; GUE: C bit set; GRE: protocol type kGreProto.) False means NotControl.
inline bool maybe_control(std::span<const std::uint8_t> d, Encap e) noexcept {
  if (d.size() < 4) return false;
  switch (e) {
    case Encap::Vxlan: return (d[0] & 0x08) == 0;
    case Encap::Gue: return (d[0] & 0x20) != 0;
    case Encap::Gre: return d[2] == (kGreProto >> 8) && d[3] == (kGreProto & 0xff);
  }
  return false;
}

}  // namespace ofld::wire::peer

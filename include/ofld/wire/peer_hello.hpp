// ofld/wire/peer_hello.hpp — the peer session messages HELLO / HELLO-ACK that two ofld tunnel
// endpoints exchange on the tunnel's own port (docs/peer-protocol.md).
//
// A message is an encapsulation-specific prefix that every kernel receiver of that
// encapsulation drops before anything is delivered, followed by one body:
//   VXLAN  8 bytes, all zero: the I flag is clear, so vxlan_rcv drops the datagram
//          (SKB_DROP_REASON_VXLAN_INVALID_HDR) before it looks the VNI up — no device
//          counter moves, nothing reaches a bridge.
//   GUE    4 bytes: version 0, C (control) bit set, hlen 0, ctype kGueCtype, flags 0:
//          gue_udp_recv hands control messages to gue_control_message, which frees them.
//   GRE    4..12 bytes: version 0, protocol type kGreProto (IEEE 802 Local Experimental
//          EtherType 1), with the tunnel's own checksum (C) and key (K) options like its data
//          packets (RFC 2784/2890); a kernel GRE device has no handler for the protocol. The
//          GRE checksum, when present, must verify (else Verdict::BadChecksum).
//   Geneve 8 bytes: version 1 (0x40), no options, flags 0, protocol type kGreProto, VNI 0:
//          geneve_udp_encap_recv drops a version other than 0 before it looks the VNI up,
//          as does Open vSwitch's userspace Geneve receive.
//
// Body, version 2 (all fields big-endian, offsets from the body's first byte):
//   0  magic "ofld" (0x6f666c64)        4  version (2)          5  type (1 HELLO, 2 ACK)
//   6  body length: 44, or 76 with a MAC (bytes past it are ignored, for later versions)
//   8  epoch: the sender's session epoch (random, non-zero, new each start)
//   12 peer_epoch: the receiver's epoch as the sender last heard it (0: none)
//   16 nonce (8 bytes): random, non-zero, new for every message sent (a cookie)
//   24 echo (8 bytes): ACK: the nonce of the HELLO answered; HELLO: the nonce of the last
//      message heard from the receiver (0: none). A message whose peer_epoch and echo match
//      what the receiver sent recently proves a round trip (docs/peer-protocol.md).
//   32 caps: capability bits (kCapIntegrity, kCapRcoRx; others reserved: sent 0, ignored)
//   36 gso_size: largest inner GSO packet the sender takes (bytes of inner L3, 0 = unknown)
//   38 mtu: the sender's device MTU (bytes of inner L3, 0 = unknown)
//   40 flags: bit 0 kFlagMac (a MAC follows at 44); other bits reserved, sent 0, ignored
//   41 3 bytes reserved, sent 0, ignored
//   44 MAC (32 bytes, only with kFlagMac): HMAC-SHA-256 (RFC 2104, FIPS 180-4) under the
//      pre-shared key over body bytes 0..43. Computed and checked above this layer (Signer).
// Body, version 1 (the previous protocol, still parsed and written for legacy peers):
//   0 magic, 4 version (1), 5 type, 6 length (>= 28), 8 epoch, 12 peer_epoch,
//   16 seq (4 bytes; ACK: the seq answered), 20 caps, 24 gso_size, 26 mtu.
//   Msg::nonce carries the seq of a HELLO, Msg::echo the seq an ACK answers.
// A version-1 parser rejects a version-2 message (its version byte), counted as malformed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>

namespace ofld::wire::peer {

inline constexpr std::uint32_t kMagic = 0x6f666c64u;  ///< "ofld"
inline constexpr std::uint8_t kVersion = 2;           ///< the version this code speaks
inline constexpr std::uint8_t kVersionLegacy = 1;     ///< the previous one (no nonce, no MAC)
inline constexpr std::size_t kBodyLenV1 = 28;
inline constexpr std::size_t kBodyLen = 44;           ///< version 2 without a MAC
inline constexpr std::size_t kMacLen = 32;            ///< HMAC-SHA-256
inline constexpr std::size_t kBodyLenMac = kBodyLen + kMacLen;
inline constexpr std::uint8_t kFlagMac = 0x01;
inline constexpr std::uint8_t kGueCtype = 0x6f;       ///< GUE control type of our messages
inline constexpr std::uint16_t kGreProto = 0x88b5;    ///< IEEE 802 Local Experimental EtherType 1
/// Longest prefix + body (VXLAN 8, Geneve 8, GUE 4, GRE 4 + checksum 4 + key 4; body with a MAC).
inline constexpr std::size_t kMaxMsgLen = 12 + kBodyLenMac;

/// Capability bits.
inline constexpr std::uint32_t kCapIntegrity = 1u << 0;  ///< takes datagrams with inner checksums elided
inline constexpr std::uint32_t kCapRcoRx = 1u << 1;      ///< remcsumrx configured
inline constexpr std::uint32_t kCapsKnown = kCapIntegrity | kCapRcoRx;

enum class MsgType : std::uint8_t { Hello = 1, HelloAck = 2 };
/// An encapsulation's control prefix, as a description (each encapsulation picks its own,
/// Encapsulation::peer_encap; the wire layer knows only the layout): the fixed bytes, the
/// cheap test of maybe_control, and whether GRE's options follow. Encap::Vxlan, ::Gue, ::Gre
/// and ::Geneve are the prefixes described at the top of this file.
struct Encap {
  std::array<std::uint8_t, 8> bytes{};  ///< the prefix (GRE: the 4-byte base, without options)
  std::uint8_t len = 0;                 ///< bytes of it (≤ 8)
  std::uint8_t test_at = 0;             ///< maybe_control: the big-endian 16-bit word here, ...
  std::uint16_t test_mask = 0;          ///< ... masked with this, ...
  std::uint16_t test_value = 0;         ///< ... equals this
  /// GRE: the base may carry the C (checksum) and K (key) options of GreOptions (RFC 2784
  /// §2.5, RFC 2890 §2.1); encode sets and fills them, parse accepts either and verifies the
  /// checksum.
  bool gre_options = false;
  friend constexpr bool operator==(const Encap&, const Encap&) = default;

  static const Encap Vxlan, Gue, Gre, Geneve;
};
/// 8 zero bytes; control when the I flag (0x08 of byte 0) is clear.
inline constexpr Encap Encap::Vxlan{{0, 0, 0, 0, 0, 0, 0, 0}, 8, 0, 0x0800, 0x0000, false};
/// Version 0, C = 1, hlen 0, ctype kGueCtype, flags 0; control when the C bit is set.
inline constexpr Encap Encap::Gue{{0x20, kGueCtype, 0, 0}, 4, 0, 0x2000, 0x2000, false};
/// No C/K/S, version 0, protocol kGreProto (+ options); control when the protocol is ours.
inline constexpr Encap Encap::Gre{{0, 0, kGreProto >> 8, kGreProto & 0xff}, 4, 2, 0xffff, kGreProto, true};
/// Version 1 (0x40), Opt Len 0, flags 0, protocol kGreProto, VNI 0; control when the version is 1.
inline constexpr Encap Encap::Geneve{{0x40, 0, kGreProto >> 8, kGreProto & 0xff, 0, 0, 0, 0}, 8, 0, 0xc000, 0x4000, false};

struct Msg {
  std::uint8_t version = kVersion;  ///< kVersion or kVersionLegacy (layout of the body)
  MsgType type = MsgType::Hello;
  std::uint32_t epoch = 0;
  std::uint32_t peer_epoch = 0;
  std::uint64_t nonce = 0;  ///< v2: this message's nonce; v1: a HELLO's seq (32 bits)
  std::uint64_t echo = 0;   ///< v2: the nonce echoed; v1: the seq an ACK answers (32 bits)
  std::uint32_t caps = 0;
  std::uint16_t gso_size = 0;
  std::uint16_t mtu = 0;
  bool mac = false;         ///< parse: the message carries a MAC (v2, kFlagMac)
  friend bool operator==(const Msg&, const Msg&) = default;
};

/// GRE options of a message (the tunnel's ocsum / okey): C bit with the checksum over the
/// whole message (RFC 2784 §2.5), K bit with the key (RFC 2890 §2.1).
struct GreOptions {
  bool csum = false;
  std::optional<std::uint32_t> key;  ///< no value: no K bit (as GreConfig::okey)
};

/// Writes the MAC of `authed` (body bytes 0..43) into `mac` (kMacLen bytes).
using Signer = std::function<void(std::span<const std::uint8_t> authed, std::span<std::uint8_t> mac)>;

/// Bytes of the encapsulation's prefix (VXLAN 8, GUE 4, GRE 4 + 4 per option, Geneve 8).
std::size_t prefix_len(Encap e, GreOptions g = {}) noexcept;

/// Writes prefix + body of msg.version into `out`; with a `sign` (version 2 only) the body
/// carries kFlagMac and the MAC it writes (msg.mac is ignored). Returns the bytes written,
/// 0 when `out` is too small, msg.epoch is 0, msg.version is neither 1 nor 2, or a version-2
/// msg.nonce is 0. `g` only for a prefix with gre_options (Encap::Gre).
std::size_t encode(const Msg& msg, Encap e, std::span<std::uint8_t> out, GreOptions g = {},
                   const Signer* sign = nullptr);

/// What a received datagram (from its tunnel header on) is.
enum class Verdict : std::uint8_t {
  NotControl,  ///< not one of ours: a data datagram (or another control message) for decap
  Ok,          ///< a valid message, in `msg`
  // Malformed (prefix and magic match, the rest does not): named reasons
  Truncated,   ///< shorter than prefix + the version's body, or than its length field
  BadVersion,  ///< version other than 1 or 2
  BadType,     ///< type neither HELLO nor HELLO-ACK
  BadLength,   ///< length field below the version's body (v2 with kFlagMac: below 76)
  ZeroEpoch,   ///< epoch 0
  BadChecksum, ///< GRE: the C bit is set and the GRE checksum does not verify
  ZeroNonce,   ///< version 2: nonce 0
};
std::string_view to_string(Verdict v) noexcept;

struct Parsed {
  Verdict verdict = Verdict::NotControl;
  Msg msg;
  std::span<const std::uint8_t> authed;  ///< Ok, v2: the bytes the MAC covers (body 0..43)
  std::span<const std::uint8_t> mac;     ///< Ok, v2 with kFlagMac: the MAC (kMacLen bytes)
};

/// Classify and decode one datagram. Reads only inside `d`. A datagram is taken as ours when
/// its prefix is the encapsulation's control prefix (GRE: protocol kGreProto, version 0, no
/// routing or sequence bit, any of C/K) and the magic follows (NotControl otherwise, even when
/// shorter); then every field is checked. The MAC is returned, not checked.
Parsed parse(std::span<const std::uint8_t> d, Encap e) noexcept;

/// Cheap pre-check for the receive hot path: could `d` be a control message of `e`? (VXLAN:
/// I flag clear; GUE: C bit set; GRE: protocol type kGreProto; Geneve: version 1.) False means
/// NotControl.
inline bool maybe_control(std::span<const std::uint8_t> d, const Encap& e) noexcept {
  if (d.size() < 4 || d.size() < e.test_at + 2u) return false;
  const std::uint16_t w = std::uint16_t(d[e.test_at] << 8 | d[e.test_at + 1u]);
  return (w & e.test_mask) == e.test_value;
}

}  // namespace ofld::wire::peer

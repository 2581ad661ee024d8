// ofld/tools/csum_check.hpp — verify and repair every checksum of a captured frame.
//
// One call parses the frame with wire::parse_frame (outer and inner layers) and looks at each
// checksum it carries: the IPv4 header checksum (RFC 791 §3.1), TCP (RFC 9293 §3.1) and UDP
// (RFC 768) with the IPv4 (C-10) or IPv6 (C-11, RFC 8200 §8.1: the final destination of a
// routing header) pseudo-header, GRE when the C bit is set (RFC 2784 §2.5), ICMP (RFC 792)
// and ICMPv6 (RFC 4443 §2.3, with pseudo-header).
//
// Verdicts:
//  * good    — the receiver's test passes: the ones'-complement sum over the covered bytes
//              (checksum field included, plus pseudo-header) folds to 0xFFFF. 0x0000 and
//              0xFFFF are therefore both accepted where they are equivalent (public bug A1).
//  * partial — TCP/UDP field holds the non-complemented pseudo-header seed fold16(pseudo)
//              with the L4 length, as left by CHECKSUM_PARTIAL on a host with offloads
//              (C-12, C-6); the device would have completed it.
//  * none    — UDP over IPv4 with field 0: no checksum (RFC 768, C-14).
//  * bad     — anything else; `expected` holds the value a sender writes. A zero UDP
//              checksum over IPv6 is bad (RFC 8200 §8.1; Linux accepts it only on tunnel
//              sockets configured for it, C-14).
//  * skipped — cannot be verified from this frame (`reason` says why): the covered bytes were
//              not all captured (caplen < len, or an IP/UDP length field beyond the frame),
//              or the datagram is an IP fragment (the L4 checksum covers the reassembled
//              datagram).
//
// Lengths: the L4 length is taken from the IP header (datagram end minus L4 offset; for UDP
// the UDP length field), never from the frame size, so Ethernet padding never enters a sum
// (public bug A8). BIG TCP captures whose IP length field is 0 take the length from the frame
// (wire layer_flag::kLenFromFrame).
//
// fix: rewrites bad and partial fields with the expected value, innermost first (an outer UDP
// or GRE checksum covers the inner bytes, so it is recomputed after them). TCP keeps a computed
// 0x0000; UDP writes 0xFFFF instead (C-14, public bug A2). The IPv4 header checksum is computed
// with the field taken as zero, whatever it held (public bug A7). A UDP/IPv4 zero ("none") is
// kept unless FixOptions::fill_udp4_zero. Frames with any skipped field or a parse error are
// never modified.
//
// No exceptions, no reads outside the span; malformed frames yield a parse_error, not a crash.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofld/wire/error.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::tools {

/// Which checksum a field is.
enum class CsumKind : std::uint8_t { Ipv4Header, Tcp, Udp, Gre, Icmp, Icmpv6 };
inline constexpr std::size_t kNumCsumKinds = 6;
/// "ipv4", "tcp", "udp", "gre", "icmp", "icmpv6".
std::string_view to_string(CsumKind k) noexcept;

enum class Verdict : std::uint8_t { Good, Bad, Partial, None, Skipped };
inline constexpr std::size_t kNumVerdicts = 5;
/// "good", "bad", "partial", "none", "skipped".
std::string_view to_string(Verdict v) noexcept;

/// Why a field was skipped.
enum class SkipReason : std::uint8_t {
  NotSkipped,
  Truncated,     ///< capture cut by snaplen (caplen < len): covered bytes missing
  LengthPastEnd, ///< an IP/UDP length field reaches past the frame although it is complete
  Fragment,      ///< L4 inside an IP fragment (first or later): covers the reassembled datagram
};
/// "", "truncated", "length-past-end", "fragment".
std::string_view to_string(SkipReason r) noexcept;

/// One checksum field of a frame.
struct CsumField {
  CsumKind kind{};
  std::uint8_t level = 0;         ///< encapsulation level (0 = outermost)
  bool ipv6 = false;              ///< TCP/UDP/ICMPv6: pseudo-header is IPv6
  std::uint32_t header_offset = 0;  ///< start of the header holding the field (bytes)
  std::uint32_t field_offset = 0;   ///< absolute offset of the 16-bit field
  std::uint32_t covered_len = 0;    ///< bytes summed from header_offset (L4 length for TCP/UDP)
  std::uint16_t found = 0;          ///< field value (host order)
  /// Value a sender writes (host order): complemented sum computed with the field as zero,
  /// UDP 0 → 0xFFFF. Valid unless verdict is Skipped.
  std::uint16_t expected = 0;
  /// TCP/UDP: the CHECKSUM_PARTIAL seed fold16(pseudo-header) (C-12); 0 for other kinds.
  std::uint16_t seed = 0;
  Verdict verdict = Verdict::Skipped;
  SkipReason reason = SkipReason::NotSkipped;
  /// Outer UDP/GRE checksum that is Good only for the packet as it will be once the inner
  /// CHECKSUM_PARTIAL field(s) it covers are completed: local checksum offload (LCO,
  /// lco_csum), what the stack writes when a device will fill the inner checksum. Not Bad.
  bool lco = false;
};

/// Everything found in one frame.
struct FrameReport {
  std::vector<CsumField> fields;          ///< outer to inner, in header order
  std::optional<wire::ParseError> parse_error;  ///< the frame could not be parsed at all
  /// The full parse failed, and only the outer layers (tunnels not followed) were checked.
  bool inner_unparsed = false;
  std::optional<wire::ParseError> inner_error;  ///< why, when inner_unparsed
  bool truncated = false;                 ///< caplen < original length
  std::uint32_t rewritten = 0;            ///< fix only: fields written

  std::size_t count(Verdict v) const noexcept;
  bool any(Verdict v) const noexcept { return count(v) != 0; }
};

struct CheckOptions {
  wire::ParseOptions parse{};  ///< tunnel ports etc.
};

struct FixOptions {
  CheckOptions check{};
  bool fix_bad = true;          ///< rewrite bad fields
  bool fix_partial = true;      ///< complete CHECKSUM_PARTIAL seeds
  bool fill_udp4_zero = false;  ///< also compute a UDP/IPv4 checksum that is 0 ("none")
};

/// Verify every checksum of `frame` (caplen bytes). `orig_len` is the original frame length
/// (pcap len; pass frame.size() when unknown).
FrameReport verify_frame(std::span<const std::uint8_t> frame, wire::LinkType link,
                         std::uint32_t orig_len, const CheckOptions& opt = {});

/// Outcome of fix_frame: the verification before and after the repair.
struct FixResult {
  FrameReport before;
  FrameReport after;  ///< after.rewritten = number of fields written
};

/// Repair the checksums of `frame` in place (see the file comment). A frame with a parse
/// error or any skipped field is left unchanged (after == before, rewritten 0).
FixResult fix_frame(std::span<std::uint8_t> frame, wire::LinkType link, std::uint32_t orig_len,
                    const FixOptions& opt = {});

/// Counters over many frames.
struct Summary {
  std::uint64_t frames = 0;
  std::uint64_t frames_with_bad = 0;
  std::uint64_t frames_with_partial = 0;
  std::uint64_t frames_skipped = 0;      ///< frames with at least one skipped field
  std::uint64_t parse_errors = 0;        ///< frames that could not be parsed at all
  std::uint64_t inner_unparsed = 0;      ///< frames checked only down to the first tunnel
  std::uint64_t rewritten = 0;           ///< fix: fields written
  std::uint64_t frames_modified = 0;     ///< fix: frames with at least one field written
  /// per kind × verdict
  std::array<std::array<std::uint64_t, kNumVerdicts>, kNumCsumKinds> fields{};

  void add(const FrameReport& r) noexcept;
  std::uint64_t total(Verdict v) const noexcept;
};

/// Human one-field text, e.g. "ipv4 good", "tcp bad (0x1234, expected 0xbeef)",
/// "udp skipped (fragment)", "L1 tcp partial". Level prefix only when level > 0.
std::string describe(const CsumField& f);

}  // namespace ofld::tools

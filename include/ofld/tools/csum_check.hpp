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
// Depth: every encapsulation wire::parse_frame recognises is followed, up to
// wire::kMaxTunnelDepth (8) nested tunnels and wire::kMaxHeaders (64) headers per frame; past
// that the frame says so (FrameReport::limit, "tunnel-depth-limit" / "header-limit") and the
// layers inside are not checked. A malformed inner header stops the walk there: every layer
// before it is still checked and FrameReport::inner_error names what stopped it.
//
// Reassembly (CaptureVerifier, not verify_frame): IPv4 and IPv6 fragments are collected per
// datagram (RFC 791 §3.2 key: source, destination, protocol, identification; RFC 8200 §4.5
// key: source, destination, identification; plus the encapsulation level and where the
// fragments came from: every enclosing IP header's addresses, VXLAN/Geneve VNI and GRE key,
// so equal inner keys in two tunnels are two datagrams), and when a
// datagram is complete its L4 checksum — and every layer inside it, tunnels included — is
// verified over the whole datagram (DatagramReport, with the frame numbers that made it).
// Fragments are not trusted (RFC 5722 §4 and its erratum 3089, applied to IPv4 as well, as
// Linux does since 4.19 in inet_frag_queue_insert): a fragment whose bytes all lie in data
// already held and are identical is a `duplicate` (ignored, the datagram is kept); one that
// overlaps held data in any other way (partly, or with different bytes) discards the whole
// datagram (`overlap`), and later fragments of it are `discarded` until it ages out; a fragment
// past the end set by the last fragment, or a second last fragment with another end, discards
// it too (`excess`, Linux's discard_qp); so does a datagram longer than 65535 bytes
// (`too-big`) or with more than max_fragments fragments (`too-many-fragments`). Memory and
// time are bounded (ReassemblyLimits): datagrams in flight, bytes held, fragments per
// datagram, and age in capture time (IPv4 30 s, IPv6 60 s: Linux's ipfrag_time and
// ip6frag_time); the oldest datagram is evicted (`evicted`) when a limit would be exceeded.
// A first fragment may end inside its L4 (or any inner) header: IPv4 allows it (RFC 791, any
// 8-octet boundary) and it is reassembled like any other (the parser stops there with
// StopReason::HeaderInNextFragment); an IPv6 first fragment must hold the whole header chain
// (RFC 7112 §5): one that does not is ignored (`incomplete-header-chain`).
//
// Length 0 (tcpdump's rules): IPv4 total length 0 is a TSO/BIG TCP capture only for TCP and
// UDP; IPv6 payload length 0 without a Jumbo option only for TCP/UDP right after the fixed
// header in a packet over 65535 bytes. Anything else is a malformed frame (parse_error:
// wire::Errc::BadTotalLen, wire::Errc::ZeroLength), not a checksum verdict.
//
// No exceptions, no reads outside the span; malformed frames yield a parse_error, not a crash.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
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
  /// The field lies inside an IP fragment's payload (or is the L4 of a first fragment): with
  /// reassembly it is judged again in the reassembled datagram (DatagramReport).
  bool in_fragment = false;
  /// Outer UDP/GRE checksum that is Good only for the packet as it will be once the inner
  /// CHECKSUM_PARTIAL field(s) it covers are completed: local checksum offload (LCO,
  /// lco_csum), what the stack writes when a device will fill the inner checksum. Not Bad.
  bool lco = false;
};

/// What happened to a fragment or a datagram in reassembly (CaptureVerifier).
enum class FragFault : std::uint8_t {
  None,              ///< reassembled: DatagramReport::fields hold its checks
  Duplicate,         ///< fragment wholly inside held data, same bytes: ignored, datagram kept
  Overlap,           ///< fragment overlaps held data otherwise: datagram discarded (RFC 5722)
  Excess,            ///< bytes past the datagram end / a second last fragment: discarded
  TooBig,            ///< datagram would exceed 65535 bytes (IPv4 total / IPv6 payload length)
  TooManyFragments,  ///< more than ReassemblyLimits::max_fragments fragments: discarded
  BadLength,         ///< non-last fragment not a multiple of 8 bytes, or empty: fragment ignored
  Truncated,         ///< fragment not wholly captured (snaplen) or length past the frame: discarded
  Discarded,         ///< fragment of a datagram discarded earlier: ignored until it ages out
  Timeout,           ///< incomplete after the age limit (capture time)
  Evicted,           ///< incomplete, dropped (oldest first) to stay within a memory limit
  Incomplete,        ///< still incomplete at the end of the capture (CaptureVerifier::finish)
  Late,              ///< fragment of a datagram already reassembled (within its age): ignored
  /// IPv6 first fragment without the whole header chain through the upper-layer header
  /// (RFC 7112 §5, ICMPv6 Parameter Problem code 3): fragment ignored, datagram kept.
  IncompleteHeaderChain,
};
inline constexpr std::size_t kNumFragFaults = 14;
/// "reassembled", "duplicate", "overlap", "excess", "too-big", "too-many-fragments",
/// "bad-length", "truncated", "discarded", "timeout", "evicted", "incomplete", "late",
/// "incomplete-header-chain".
std::string_view to_string(FragFault f) noexcept;

/// One IP datagram seen through its fragments: reassembled (fault None), or an event that
/// stopped or touched its reassembly.
struct DatagramReport {
  FragFault fault = FragFault::None;
  bool ipv6 = false;
  std::uint8_t level = 0;            ///< encapsulation level of the fragmented IP header
  std::uint32_t id = 0;              ///< IPv4 identification / IPv6 fragment identification
  std::uint32_t length = 0;          ///< reassembled: bytes from the IP header to the end
  /// Frame numbers (as given to CaptureVerifier::verify) of the fragments: reassembled — those
  /// that made it, in offset order; otherwise the frames held so far plus the current one.
  std::vector<std::uint64_t> frames;
  /// Reassembled only: frames whose fragment was an identical duplicate of held data (ignored;
  /// tshark lists them among the datagram's fragments).
  std::vector<std::uint64_t> duplicates;
  /// Reassembled only: the checks of the datagram from its L4 inward (tunnels included; the
  /// rebuilt IP header itself is not judged — each fragment's header is, in its frame).
  /// Levels are absolute; offsets are within the reassembled datagram.
  std::vector<CsumField> fields;
  std::optional<wire::ParseError> inner_error;  ///< the datagram's inner walk stopped on this
  std::string limit;  ///< as FrameReport::limit, for the datagram's inner walk
};

/// Everything found in one frame.
struct FrameReport {
  std::vector<CsumField> fields;          ///< outer to inner, in header order
  std::optional<wire::ParseError> parse_error;  ///< the frame could not be parsed at all
  /// The full parse failed at an inner layer: the layers before it were checked.
  bool inner_unparsed = false;
  std::optional<wire::ParseError> inner_error;  ///< why, when inner_unparsed
  /// Non-empty when a stated limit stopped the walk: "tunnel-depth-limit" (more than
  /// wire::kMaxTunnelDepth nested encapsulations) or "header-limit" (wire::kMaxHeaders).
  std::string limit;
  bool truncated = false;                 ///< caplen < original length
  std::uint32_t rewritten = 0;            ///< fix only: fields written
  /// CaptureVerifier only: datagrams this frame completed, and reassembly events of its
  /// fragments (duplicate, overlap, ...), including datagrams timed out or evicted now.
  std::vector<DatagramReport> datagrams;

  /// Fields of the frame itself (not of its datagrams) with verdict v.
  std::size_t count(Verdict v) const noexcept;
  bool any(Verdict v) const noexcept { return count(v) != 0; }
  /// Fields of the frame and of its reassembled datagrams with verdict v.
  std::size_t count_all(Verdict v) const noexcept;
};

struct CheckOptions {
  /// Tunnel ports etc. The capture tools recognise a UDP tunnel on either port, lower port
  /// first, as tshark does (ParseOptions::tunnel_src_port, on by default here).
  wire::ParseOptions parse = [] {
    wire::ParseOptions p;
    p.tunnel_src_port = true;
    return p;
  }();
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

/// Bounds of CaptureVerifier's reassembly (memory and time).
struct ReassemblyLimits {
  std::size_t max_datagrams = 1024;       ///< datagrams in flight (incomplete or discarded)
  std::size_t max_bytes = 4u << 20;       ///< fragment bytes held, all datagrams (4 MiB, as
                                          ///< Linux's ipfrag_high_thresh default)
  std::size_t max_fragments = 256;        ///< fragments held per datagram
  std::uint64_t timeout_ns_ipv4 = 30'000'000'000ull;  ///< capture time (Linux ipfrag_time)
  std::uint64_t timeout_ns_ipv6 = 60'000'000'000ull;  ///< capture time (Linux ip6frag_time)
};

/// Verify a capture frame by frame, with IPv4/IPv6 reassembly (see the file comment). One
/// object per capture; not thread-safe.
class CaptureVerifier {
 public:
  CaptureVerifier(wire::LinkType link, const CheckOptions& opt = {},
                  const ReassemblyLimits& lim = {});
  ~CaptureVerifier();
  CaptureVerifier(const CaptureVerifier&) = delete;
  CaptureVerifier& operator=(const CaptureVerifier&) = delete;

  /// verify_frame(frame) plus reassembly. `frame_no` is the number reported in
  /// DatagramReport::frames (1-based in the CLI); `ts_ns` the capture time in nanoseconds.
  FrameReport verify(std::span<const std::uint8_t> frame, std::uint32_t orig_len,
                     std::uint64_t frame_no, std::uint64_t ts_ns);
  /// End of capture: every datagram still held, as Incomplete (those discarded earlier are
  /// not repeated); the state is cleared.
  std::vector<DatagramReport> finish();
  std::size_t datagrams_held() const noexcept;  ///< incomplete and discarded, in flight
  std::size_t bytes_held() const noexcept;      ///< fragment bytes held

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Counters over many frames.
struct Summary {
  std::uint64_t frames = 0;
  std::uint64_t frames_with_bad = 0;
  std::uint64_t frames_with_partial = 0;
  std::uint64_t frames_skipped = 0;      ///< frames with at least one skipped field
  std::uint64_t parse_errors = 0;        ///< frames that could not be parsed at all
  std::uint64_t inner_unparsed = 0;      ///< frames whose inner walk stopped on a parse error
  std::uint64_t limited = 0;             ///< frames (or datagrams) stopped by a stated limit
  std::uint64_t datagrams = 0;           ///< datagrams reassembled and checked
  /// reassembly events per FragFault (index 0 = reassembled)
  std::array<std::uint64_t, kNumFragFaults> frag{};
  std::uint64_t rewritten = 0;           ///< fix: fields written
  std::uint64_t frames_modified = 0;     ///< fix: frames with at least one field written
  /// per kind × verdict
  std::array<std::array<std::uint64_t, kNumVerdicts>, kNumCsumKinds> fields{};

  void add(const FrameReport& r) noexcept;
  /// A datagram reported outside a frame (CaptureVerifier::finish).
  void add(const DatagramReport& d) noexcept;
  std::uint64_t total(Verdict v) const noexcept;
};

/// Human one-field text, e.g. "ipv4 good", "tcp bad (0x1234, expected 0xbeef)",
/// "udp skipped (fragment)", "L1 tcp partial". Level prefix only when level > 0.
std::string describe(const CsumField& f);
/// Human one-datagram text, e.g. "ipv4 datagram id 0x1234 of frames 1,2,3 (1480 bytes): udp
/// good" or "ipv6 datagram id 0x9 overlap: discarded (frames 4,5)".
std::string describe(const DatagramReport& d);

}  // namespace ofld::tools

// Per-frame checksum verification and repair (see include/ofld/tools/csum_check.hpp).
#include "ofld/tools/csum_check.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <list>
#include <map>

#include "ofld/core/csum.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::tools {

using csum::wsum;
using wire::HeaderKind;
using wire::HeaderRef;
using wire::Layout;

std::string_view to_string(CsumKind k) noexcept {
  switch (k) {
    case CsumKind::Ipv4Header: return "ipv4";
    case CsumKind::Tcp: return "tcp";
    case CsumKind::Udp: return "udp";
    case CsumKind::Gre: return "gre";
    case CsumKind::Icmp: return "icmp";
    case CsumKind::Icmpv6: return "icmpv6";
  }
  return "?";
}

std::string_view to_string(Verdict v) noexcept {
  switch (v) {
    case Verdict::Good: return "good";
    case Verdict::Bad: return "bad";
    case Verdict::Partial: return "partial";
    case Verdict::None: return "none";
    case Verdict::Skipped: return "skipped";
  }
  return "?";
}

std::string_view to_string(SkipReason r) noexcept {
  switch (r) {
    case SkipReason::NotSkipped: return "";
    case SkipReason::Truncated: return "truncated";
    case SkipReason::LengthPastEnd: return "length-past-end";
    case SkipReason::Fragment: return "fragment";
  }
  return "?";
}

std::size_t FrameReport::count(Verdict v) const noexcept {
  std::size_t n = 0;
  for (const auto& f : fields) n += f.verdict == v;
  return n;
}

std::size_t FrameReport::count_all(Verdict v) const noexcept {
  std::size_t n = count(v);
  for (const auto& d : datagrams)
    for (const auto& f : d.fields) n += f.verdict == v;
  return n;
}

void Summary::add(const FrameReport& r) noexcept {
  ++frames;
  frames_with_bad += r.count_all(Verdict::Bad) != 0;
  frames_with_partial += r.count_all(Verdict::Partial) != 0;
  frames_skipped += r.any(Verdict::Skipped);
  parse_errors += r.parse_error.has_value();
  inner_unparsed += r.inner_unparsed;
  limited += !r.limit.empty();
  rewritten += r.rewritten;
  frames_modified += r.rewritten != 0;
  for (const auto& f : r.fields) ++fields[std::size_t(f.kind)][std::size_t(f.verdict)];
  for (const auto& d : r.datagrams) add(d);
}

void Summary::add(const DatagramReport& d) noexcept {
  ++frag[std::size_t(d.fault)];
  datagrams += d.fault == FragFault::None;
  limited += !d.limit.empty();
  inner_unparsed += d.inner_error.has_value();
  for (const auto& f : d.fields) ++fields[std::size_t(f.kind)][std::size_t(f.verdict)];
}

std::uint64_t Summary::total(Verdict v) const noexcept {
  std::uint64_t n = 0;
  for (const auto& k : fields) n += k[std::size_t(v)];
  return n;
}

std::string describe(const CsumField& f) {
  std::string s;
  if (f.level > 0) s += "L" + std::to_string(f.level) + " ";
  s += to_string(f.kind);
  s += ' ';
  s += to_string(f.verdict);
  char buf[64];
  if (f.verdict == Verdict::Bad) {
    std::snprintf(buf, sizeof buf, " (0x%04x, expected 0x%04x)", f.found, f.expected);
    s += buf;
  } else if (f.lco) {
    s += " (LCO: once the inner partial checksum is filled)";
  } else if (f.verdict == Verdict::Skipped) {
    s += " (";
    s += to_string(f.reason);
    s += ')';
  }
  return s;
}

std::string_view to_string(FragFault f) noexcept {
  switch (f) {
    case FragFault::None: return "reassembled";
    case FragFault::Duplicate: return "duplicate";
    case FragFault::Overlap: return "overlap";
    case FragFault::Excess: return "excess";
    case FragFault::TooBig: return "too-big";
    case FragFault::TooManyFragments: return "too-many-fragments";
    case FragFault::BadLength: return "bad-length";
    case FragFault::Truncated: return "truncated";
    case FragFault::Discarded: return "discarded";
    case FragFault::Timeout: return "timeout";
    case FragFault::Evicted: return "evicted";
    case FragFault::Incomplete: return "incomplete";
    case FragFault::Late: return "late";
    case FragFault::IncompleteHeaderChain: return "incomplete-header-chain";
  }
  return "?";
}

std::string describe(const DatagramReport& d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s datagram id 0x%x", d.ipv6 ? "ipv6" : "ipv4", d.id);
  std::string s = buf;
  if (d.level > 0) s = "L" + std::to_string(d.level) + " " + s;
  std::string frames;
  for (auto n : d.frames) frames += (frames.empty() ? "" : ",") + std::to_string(n);
  if (d.fault == FragFault::None) {
    s += " of frames " + frames;
    if (!d.duplicates.empty()) {
      std::string dups;
      for (auto n : d.duplicates) dups += (dups.empty() ? "" : ",") + std::to_string(n);
      s += " (duplicates ignored: " + dups + ")";
    }
    s += " (" + std::to_string(d.length) + " bytes):";
    std::string f;
    for (const auto& x : d.fields) f += (f.empty() ? " " : ", ") + describe(x);
    s += f.empty() ? " no checksums" : f;
    if (d.inner_error) s += " [inner layers not parsed: " + d.inner_error->to_string() + "]";
    if (!d.limit.empty()) s += " [stopped: " + d.limit + "]";
    return s;
  }
  s += ' ';
  s += to_string(d.fault);
  switch (d.fault) {
    case FragFault::Duplicate:
    case FragFault::Late:
    case FragFault::IncompleteHeaderChain:
    case FragFault::BadLength:
    case FragFault::Discarded: s += ": fragment ignored"; break;
    case FragFault::Timeout:
    case FragFault::Evicted:
    case FragFault::Incomplete: s += ": never complete"; break;
    default: s += ": datagram discarded"; break;
  }
  s += " (frames " + frames + ")";
  return s;
}

namespace {

constexpr std::uint16_t kFragFlags =
    wire::layer_flag::kFirstFragment | wire::layer_flag::kLaterFragment;

bool is_ip(HeaderKind k) noexcept { return k == HeaderKind::Ipv4 || k == HeaderKind::Ipv6; }

/// Where a checksum lives and what it covers, derived from one HeaderRef.
struct Site {
  CsumKind kind{};
  const HeaderRef* hdr = nullptr;
  const HeaderRef* ip = nullptr;  ///< pseudo-header source (TCP/UDP/ICMPv6)
  std::uint32_t field_rel = 0;    ///< field offset from hdr->offset
  std::uint64_t cover_end = 0;    ///< end of the covered bytes (absolute)
};

/// Recognise a checksum-carrying header. False for headers without a checksum (and GRE
/// without the C bit).
bool site_of(std::span<const std::uint8_t> frame, const Layout& lay, const HeaderRef& h,
             Site& out) noexcept {
  out = Site{};
  out.hdr = &h;
  switch (h.kind) {
    case HeaderKind::Ipv4:
      out.kind = CsumKind::Ipv4Header;
      out.field_rel = wire::ipv4::kCheckOffset;
      out.cover_end = std::uint64_t(h.offset) + h.length;
      return true;
    case HeaderKind::Tcp:
    case HeaderKind::Udp:
    case HeaderKind::Icmpv6: {
      out.ip = lay.ip_of(h);
      if (!out.ip || !is_ip(out.ip->kind)) return false;
      if (h.kind == HeaderKind::Tcp) {
        out.kind = CsumKind::Tcp;
        out.field_rel = wire::tcp::kCheckOffset;
        out.cover_end = out.ip->end;
      } else if (h.kind == HeaderKind::Udp) {
        out.kind = CsumKind::Udp;
        out.field_rel = wire::udp::kCheckOffset;
        // The UDP length field bounds the sum (RFC 768); a UDP length of 0 (RFC 2675
        // jumbogram) or one the parser did not record falls back to the IP datagram end.
        std::uint16_t ulen = h.offset + wire::udp::kHdrLen <= frame.size()
                                 ? wire::load_be16(&frame[h.offset + wire::udp::kLenOffset])
                                 : 0;
        out.cover_end = ulen >= wire::udp::kHdrLen ? std::uint64_t(h.offset) + ulen : out.ip->end;
      } else {
        out.kind = CsumKind::Icmpv6;
        out.field_rel = wire::IcmpHeader<>::kCheckOffset;
        out.cover_end = out.ip->end;
      }
      return true;
    }
    case HeaderKind::Icmp:
      out.ip = lay.ip_of(h);
      if (!out.ip || !is_ip(out.ip->kind)) return false;
      out.kind = CsumKind::Icmp;
      out.field_rel = wire::IcmpHeader<>::kCheckOffset;
      out.cover_end = out.ip->end;
      return true;
    case HeaderKind::Gre:
      // RFC 2784 §2.5: C bit = MSB of the first byte; checksum at bytes 4..5, covering the
      // GRE header and payload (to the end of the enclosing datagram, HeaderRef::end).
      if (h.length < wire::gre::kBaseLen + wire::gre::kSectionLen ||
          std::uint64_t(h.offset) + wire::gre::kCsumOffset + 2 > frame.size())
        return false;
      if (!(wire::load_be16(&frame[h.offset]) & wire::gre::kCsum)) return false;
      out.kind = CsumKind::Gre;
      out.field_rel = wire::gre::kCsumOffset;
      out.cover_end = h.end;
      return true;
    default:
      return false;
  }
}

/// IPv4 (C-10) or IPv6 (C-11) pseudo-header sum for an L4 of `len` bytes.
wsum pseudo_sum(std::span<const std::uint8_t> frame, const HeaderRef& ip, std::uint32_t len,
                std::uint8_t proto) noexcept {
  const std::uint8_t* p = frame.data();
  if (ip.kind == HeaderKind::Ipv4) {
    std::uint32_t daddr = ip.pseudo_daddr != wire::kNoOffset ? ip.pseudo_daddr : ip.offset + 16;
    return csum::csum_tcpudp_nofold(p + ip.offset + 12, p + daddr, len, proto);
  }
  std::uint32_t daddr = ip.pseudo_daddr != wire::kNoOffset ? ip.pseudo_daddr : ip.offset + 24;
  return csum::csum_ipv6_nofold(p + ip.offset + 8, p + daddr, len, proto);
}

/// Evaluate one checksum site on the current bytes. `under_fragment`: an enclosing IP
/// datagram (or this L4's own) is a fragment; `under_clipped`: an enclosing (or its own)
/// length field was clamped to the captured bytes.
CsumField evaluate(std::span<const std::uint8_t> frame, const Site& s, bool under_fragment,
                   bool under_clipped, bool truncated) noexcept {
  const HeaderRef& h = *s.hdr;
  CsumField f;
  f.kind = s.kind;
  f.level = h.level;
  f.ipv6 = s.ip && s.ip->kind == HeaderKind::Ipv6;
  f.header_offset = h.offset;
  f.field_offset = h.offset + s.field_rel;
  if (std::uint64_t(f.field_offset) + 2 <= frame.size())
    f.found = wire::load_be16(&frame[f.field_offset]);

  auto skip = [&](SkipReason r) {
    f.verdict = Verdict::Skipped;
    f.reason = r;
    return f;
  };
  if (s.kind != CsumKind::Ipv4Header && under_fragment) return skip(SkipReason::Fragment);
  // An enclosing length field reaches past the captured bytes: the parser clamped the
  // datagram end (layer_flag::kClipped), so the covered bytes are not all here.
  if (s.kind != CsumKind::Ipv4Header && under_clipped)
    return skip(truncated ? SkipReason::Truncated : SkipReason::LengthPastEnd);
  const std::uint64_t field_end = std::uint64_t(h.offset) + s.field_rel + 2;
  if (s.cover_end < field_end) return skip(SkipReason::LengthPastEnd);
  if (s.cover_end > frame.size() || field_end > frame.size())
    return skip(truncated ? SkipReason::Truncated : SkipReason::LengthPastEnd);
  // A length taken from the frame (BIG TCP, IP length 0) is only right for a full capture.
  if (truncated && s.ip && (s.ip->flags & wire::layer_flag::kLenFromFrame))
    return skip(SkipReason::Truncated);
  f.covered_len = std::uint32_t(s.cover_end - h.offset);

  // Sum of the covered bytes with the field taken as zero (public bug A7): two chained spans;
  // the first has even length (every field offset is even), so chaining is valid.
  const std::uint8_t* base = frame.data() + h.offset;
  wsum data = csum::csum_partial(base, s.field_rel, 0);
  data = csum::csum_partial(base + s.field_rel + 2, f.covered_len - s.field_rel - 2, data);

  wsum pseudo = 0;
  switch (s.kind) {
    case CsumKind::Tcp: pseudo = pseudo_sum(frame, *s.ip, f.covered_len, wire::ipproto::kTcp); break;
    case CsumKind::Udp: pseudo = pseudo_sum(frame, *s.ip, f.covered_len, wire::ipproto::kUdp); break;
    case CsumKind::Icmpv6: pseudo = pseudo_sum(frame, *s.ip, f.covered_len, 58); break;
    default: break;
  }
  const wsum without_field = csum::csum_add(pseudo, data);
  f.expected = csum::csum_fold(without_field);
  if (s.kind == CsumKind::Udp) f.expected = csum::udp_csum_mangle(f.expected);  // C-14
  if (s.kind == CsumKind::Tcp || s.kind == CsumKind::Udp) f.seed = csum::csum_fold16(pseudo);

  if (s.kind == CsumKind::Udp && f.found == 0) {
    // RFC 768: 0 = no checksum over IPv4. Over IPv6 it is not allowed (RFC 8200 §8.1; Linux
    // accepts it only on tunnel sockets configured for zero-checksum RX, C-14): bad, even
    // when the computed value is 0 (a sender writes 0xFFFF then).
    f.verdict = f.ipv6 ? Verdict::Bad : Verdict::None;
    return f;
  }
  // Receiver test: the sum including the field (and pseudo-header) folds to 0xFFFF (-0).
  const wsum with_field = csum::csum_add(without_field, csum::csum_unfold(f.found));
  if (csum::csum_fold16(with_field) == 0xffff) {
    f.verdict = Verdict::Good;
  } else if ((s.kind == CsumKind::Tcp || s.kind == CsumKind::Udp) && f.found == f.seed) {
    f.verdict = Verdict::Partial;  // C-12 seed left by CHECKSUM_PARTIAL
  } else {
    f.verdict = Verdict::Bad;
  }
  return f;
}

struct Parsed {
  std::optional<Layout> layout;
  FrameReport report;
};

Parsed parse(std::span<const std::uint8_t> frame, wire::LinkType link, std::uint32_t orig_len,
             const CheckOptions& opt) {
  Parsed p;
  p.report.truncated = orig_len > frame.size();
  wire::ParseOptions po = opt.parse;
  po.allow_clipped = true;  // lengths past the captured bytes are reported per field
  po.wire_len = orig_len;   // the IPv6 BIG TCP rule judges the length on the wire
  wire::Layout lay;
  auto err = wire::parse_frame_prefix(frame, link, po, lay);
  if (err && lay.tunnel_depth == 0) {
    // Failed before any tunnel: the frame itself is malformed.
    p.report.parse_error = *err;
    return p;
  }
  if (err) {
    // A malformed inner packet does not hide the layers before it (tshark also reports
    // those): every header recorded before the failing one is checked.
    p.report.inner_unparsed = true;
    p.report.inner_error = *err;
  } else if (lay.stop == wire::StopReason::TunnelDepth) {
    p.report.limit = "tunnel-depth-limit";
  } else if (lay.stop == wire::StopReason::HeaderLimit) {
    p.report.limit = "header-limit";
  }
  p.layout = lay;
  return p;
}

/// Collect the sites of a layout, outer to inner, with their fragment context.
struct SiteCtx {
  Site site;
  bool under_fragment = false;
  bool under_clipped = false;
  bool in_fragment = false;  ///< inside a fragment's payload (CsumField::in_fragment)
};

std::vector<SiteCtx> collect(std::span<const std::uint8_t> frame, const Layout& lay) {
  std::vector<SiteCtx> out;
  bool frag = false, clipped = false;
  for (const HeaderRef& h : lay.headers()) {
    const bool frag_before = frag;  // an enclosing IP datagram is a fragment
    if ((is_ip(h.kind) || h.kind == HeaderKind::Ipv6Fragment) && (h.flags & kFragFlags))
      frag = true;
    if (h.flags & wire::layer_flag::kClipped) clipped = true;
    Site s;
    if (site_of(frame, lay, h, s)) {
      bool f = frag, c = clipped;
      if (s.ip && (s.ip->flags & kFragFlags)) f = true;
      if (s.ip && (s.ip->flags & wire::layer_flag::kClipped)) c = true;
      const bool in = s.kind == CsumKind::Ipv4Header ? frag_before : f;
      out.push_back({s, f, c, in});
    }
  }
  return out;
}

/// Local checksum offload (LCO, Documentation/networking/checksum-offloads.rst; lco_csum in
/// udp_set_csum / gre_build_header / GSO): when the innermost L4 checksum is left
/// CHECKSUM_PARTIAL for the device, the stack computes the outer UDP/GRE checksum over the
/// packet as it will be after the device fills the inner field. Such an outer checksum fails
/// the receiver test on the bytes as handed to the device (or captured before it) and is
/// right once the inner field is completed: true when `f` (site i, Bad) is Good on a copy
/// of the frame whose Partial fields inside its coverage are completed, innermost first.
bool lco_good(std::span<const std::uint8_t> frame, const std::vector<SiteCtx>& sites,
              std::size_t i, const CsumField& f, bool truncated) {
  const Site& o = sites[i].site;
  if (f.verdict != Verdict::Bad || (o.kind != CsumKind::Udp && o.kind != CsumKind::Gre))
    return false;
  if (o.kind == CsumKind::Udp && f.found == 0) return false;  // IPv6 zero: no checksum at all
  std::vector<std::uint8_t> scratch(frame.begin(), frame.end());
  bool any = false;
  for (std::size_t j = sites.size(); j-- > i + 1;) {
    const SiteCtx& c = sites[j];
    if (c.site.kind != CsumKind::Tcp && c.site.kind != CsumKind::Udp) continue;
    CsumField g = evaluate(scratch, c.site, c.under_fragment, c.under_clipped, truncated);
    if (g.verdict != Verdict::Partial) continue;
    if (g.field_offset < o.hdr->offset || std::uint64_t(g.field_offset) + 2 > o.cover_end) continue;
    wire::store_be16(&scratch[g.field_offset], g.expected);
    any = true;
  }
  if (!any) return false;
  const SiteCtx& oc = sites[i];
  return evaluate(scratch, o, oc.under_fragment, oc.under_clipped, truncated).verdict ==
         Verdict::Good;
}

void mark_lco(std::span<const std::uint8_t> frame, const std::vector<SiteCtx>& sites,
              std::size_t i, CsumField& f, bool truncated) {
  if (lco_good(frame, sites, i, f, truncated)) {
    f.verdict = Verdict::Good;
    f.lco = true;
  }
}

/// Parse and judge one buffer; the layout is kept for reassembly.
Parsed walk(std::span<const std::uint8_t> frame, wire::LinkType link, std::uint32_t orig_len,
            const CheckOptions& opt) {
  Parsed p = parse(frame, link, orig_len, opt);
  if (!p.layout) return p;
  const std::vector<SiteCtx> sites = collect(frame, *p.layout);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const SiteCtx& c = sites[i];
    CsumField f = evaluate(frame, c.site, c.under_fragment, c.under_clipped, p.report.truncated);
    f.in_fragment = c.in_fragment;
    mark_lco(frame, sites, i, f, p.report.truncated);
    p.report.fields.push_back(f);
  }
  return p;
}

}  // namespace

FrameReport verify_frame(std::span<const std::uint8_t> frame, wire::LinkType link,
                         std::uint32_t orig_len, const CheckOptions& opt) {
  return std::move(walk(frame, link, orig_len, opt).report);
}

FixResult fix_frame(std::span<std::uint8_t> frame, wire::LinkType link, std::uint32_t orig_len,
                    const FixOptions& opt) {
  FixResult res;
  std::span<const std::uint8_t> cframe(frame.data(), frame.size());
  res.before = verify_frame(cframe, link, orig_len, opt.check);
  if (res.before.parse_error || res.before.any(Verdict::Skipped)) {
    res.after = res.before;
    return res;
  }
  Parsed p = parse(cframe, link, orig_len, opt.check);
  if (!p.layout) {  // cannot happen (same input as above); stay safe
    res.after = res.before;
    return res;
  }
  std::vector<SiteCtx> sites = collect(cframe, *p.layout);
  std::uint32_t written = 0;
  // Innermost first: an outer UDP/GRE checksum covers the inner headers (and an inner
  // IPv4 header checksum covers nothing outside itself), so each field is re-evaluated on
  // the bytes as already repaired.
  // An outer checksum that is right by LCO (inner fields left partial, --keep-partial) is
  // kept: rewriting it would break it for the device that completes the inner field.
  for (std::size_t i = sites.size(); i-- > 0;) {
    const SiteCtx* it = &sites[i];
    CsumField f = evaluate(cframe, it->site, it->under_fragment, it->under_clipped,
                           p.report.truncated);
    mark_lco(cframe, sites, i, f, p.report.truncated);
    bool write = (f.verdict == Verdict::Bad && opt.fix_bad) ||
                 (f.verdict == Verdict::Partial && opt.fix_partial) ||
                 (f.verdict == Verdict::None && opt.fill_udp4_zero);
    if (!write || f.found == f.expected) continue;
    wire::store_be16(&frame[f.field_offset], f.expected);
    ++written;
  }
  res.after = verify_frame(cframe, link, orig_len, opt.check);
  res.after.rewritten = written;
  return res;
}

// ---- reassembly (CaptureVerifier) -----------------------------------------------------------

namespace {

constexpr std::size_t kMaxIpDatagram = 65535;  ///< IPv4 total length / IPv6 payload length

struct FragKey {
  bool v6 = false;
  std::uint8_t level = 0;
  std::uint8_t proto = 0;  ///< IPv4 only (RFC 791 §3.2); 0 for IPv6 (RFC 8200 §4.5)
  std::uint32_t id = 0;
  std::array<std::uint8_t, 16> src{}, dst{};
  /// Where the fragments came from: for every enclosing layer its kind and identity (outer
  /// IP addresses, VXLAN/Geneve VNI, GRE key), so that equal inner keys inside two different
  /// tunnels are two datagrams. Empty for a datagram that is not encapsulated.
  std::string outer;
  auto operator<=>(const FragKey&) const = default;
};

/// The enclosing-layer identity of FragKey::outer for the headers before index `upto`.
void append_outer(std::span<const std::uint8_t> buf, std::span<const HeaderRef> hs,
                  std::size_t upto, std::string& out) {
  auto bytes = [&](std::size_t at, std::size_t n) {
    if (at + n <= buf.size()) out.append(reinterpret_cast<const char*>(buf.data() + at), n);
  };
  for (std::size_t i = 0; i < upto && i < hs.size(); ++i) {
    const HeaderRef& h = hs[i];
    switch (h.kind) {
      case HeaderKind::Ipv4:
        out += 'v';
        bytes(h.offset + 12, 8);  // source and destination address
        break;
      case HeaderKind::Ipv6:
        out += 'w';
        bytes(h.offset + 8, 32);
        break;
      case HeaderKind::Vxlan:
      case HeaderKind::Geneve:
        out += h.kind == HeaderKind::Vxlan ? 'x' : 'g';
        bytes(h.offset + 4, 3);  // VNI (RFC 7348 §5, RFC 8926 §3.4)
        break;
      case HeaderKind::Gre: {
        out += 'r';
        if (h.offset >= buf.size()) break;
        auto g = wire::GreHeader<>::parse(
            buf.subspan(h.offset, std::min<std::size_t>(h.length, buf.size() - h.offset)));
        if (g && g->key()) bytes(h.offset + g->key_offset(), 4);  // RFC 2890 key
        break;
      }
      default:
        break;
    }
  }
}

/// RFC 7112 §5 (RFC 8200 §4.5): an IPv6 first fragment must hold the whole header chain, up
/// to and including the upper-layer header. As Linux (ipv6_frag_rcv) counts the upper-layer
/// header: TCP 20 bytes, UDP 8, ICMPv6 8, any other protocol 1 byte; No Next Header none.
/// `nh` is the Fragment header's next header, `payload` the bytes after it.
bool ipv6_first_fragment_chain_complete(std::uint8_t nh, std::span<const std::uint8_t> payload) {
  std::size_t at = 0;
  for (std::size_t count = 0; count < wire::kMaxIpv6ExtHeaders; ++count) {
    switch (nh) {
      case wire::ipproto::kHopOpts:
      case wire::ipproto::kRouting:
      case wire::ipproto::kDstOpts:
      case wire::ipproto::kAh: {
        if (at + 2 > payload.size()) return false;
        const std::size_t len = nh == wire::ipproto::kAh ? (std::size_t(payload[at + 1]) + 2) * 4
                                                          : (std::size_t(payload[at + 1]) + 1) * 8;
        nh = payload[at];
        at += len;
        continue;
      }
      case wire::ipproto::kFragment:
        if (at + 8 > payload.size()) return false;
        nh = payload[at];
        at += 8;
        continue;
      case wire::ipproto::kNone: return at <= payload.size();
      case wire::ipproto::kTcp: return at + 20 <= payload.size();
      case wire::ipproto::kUdp: return at + 8 <= payload.size();
      case wire::ipproto::kIcmpv6: return at + 8 <= payload.size();
      default: return at + 1 <= payload.size();
    }
  }
  return true;  // longer chains are the parser's TooDeep, judged in the datagram
}

/// One fragment as seen in a buffer.
struct FragIn {
  FragKey key;
  std::uint32_t off = 0;  ///< bytes into the fragmentable part
  bool more = false;
  std::span<const std::uint8_t> payload;
  /// The unfragmentable part (IPv4 header; IPv6 fixed + extension headers before the fragment
  /// header), and where its "next header" byte is (IPv6).
  std::span<const std::uint8_t> unfrag;
  std::size_t nh_at = 0;
  std::uint8_t frag_nh = 0;
  bool truncated = false;
};

struct Piece {
  std::uint32_t off = 0;
  std::vector<std::uint8_t> bytes;
  std::uint64_t frame = 0;
  std::uint32_t end() const noexcept { return off + std::uint32_t(bytes.size()); }
};

struct Held {
  FragKey key;
  std::uint64_t seq = 0;    ///< creation order (eviction: oldest first)
  std::uint64_t first_ts = 0;
  std::vector<Piece> pieces;  ///< sorted by offset, disjoint
  std::vector<std::uint8_t> unfrag;
  std::size_t nh_at = 0;
  std::uint8_t frag_nh = 0;
  bool have_first = false, have_last = false;
  std::uint32_t end = 0;
  bool discarded = false;
  std::size_t bytes = 0;
  std::vector<std::uint64_t> frames;  ///< every frame that brought a fragment (reports)
  std::vector<std::uint64_t> dups;    ///< frames whose fragment was an identical duplicate
};

/// A datagram reassembled recently: a late copy of one of its fragments is named, not
/// started afresh (kept until its age limit, at most max_datagrams of them; no bytes).
struct Recent {
  std::uint64_t first_ts = 0;
  std::uint32_t end = 0;
  std::vector<std::uint64_t> frames;
};

/// The outermost fragmented IP header of a walked buffer, if any.
std::optional<FragIn> find_fragment(std::span<const std::uint8_t> buf, const Layout& lay,
                                    std::uint8_t base_level, const std::string& base_outer) {
  auto hs = lay.headers();
  for (std::size_t i = 0; i < hs.size(); ++i) {
    const HeaderRef& h = hs[i];
    if (!is_ip(h.kind) || !(h.flags & kFragFlags)) continue;
    FragIn f;
    f.key.level = std::uint8_t(base_level + h.level);
    f.key.outer = base_outer;
    append_outer(buf, hs, i, f.key.outer);
    f.truncated = (h.flags & (wire::layer_flag::kClipped | wire::layer_flag::kLenFromFrame)) != 0;
    if (h.end > buf.size() || h.header_end() > h.end) return std::nullopt;
    if (h.kind == HeaderKind::Ipv4) {
      auto v = wire::Ipv4Header<>::parse(buf.subspan(h.offset, h.end - h.offset));
      if (!v) return std::nullopt;
      f.key.v6 = false;
      f.key.proto = v->protocol();
      f.key.id = v->id();
      wire::store_be32(f.key.src.data(), v->saddr());
      wire::store_be32(f.key.dst.data(), v->daddr());
      f.off = v->frag_offset();
      f.more = v->mf();
      f.unfrag = buf.subspan(h.offset, h.length);
      f.payload = buf.subspan(h.header_end(), h.end - h.header_end());
      return f;
    }
    // IPv6: the fragment header follows the fixed header and any extension headers before it.
    const HeaderRef* prev = &h;
    for (std::size_t j = i + 1; j < hs.size() && hs[j].level == h.level; ++j) {
      if (hs[j].kind != HeaderKind::Ipv6Fragment) {
        prev = &hs[j];
        continue;
      }
      const HeaderRef& fh = hs[j];
      auto v6 = wire::Ipv6Header<>::parse(buf.subspan(h.offset, h.end - h.offset));
      auto fv = wire::Ipv6FragHeader<>::parse(buf.subspan(fh.offset, h.end - fh.offset));
      if (!v6 || !fv) return std::nullopt;
      f.key.v6 = true;
      f.key.id = fv->identification();
      f.key.src = v6->saddr();
      f.key.dst = v6->daddr();
      f.off = fv->frag_offset();
      f.more = fv->more();
      f.frag_nh = fv->next_header();
      f.unfrag = buf.subspan(h.offset, fh.offset - h.offset);
      // the "next header" byte naming the fragment header: fixed header byte 6, or byte 0 of
      // the extension header before it
      f.nh_at = prev == &h ? wire::ipv6::kNextHeaderOffset : prev->offset - h.offset;
      const std::size_t pay = fh.offset + wire::Ipv6FragHeader<>::kLen;
      f.payload = buf.subspan(pay, h.end - pay);
      return f;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

struct CaptureVerifier::Impl {
  wire::LinkType link;
  CheckOptions opt;
  ReassemblyLimits lim;
  std::array<std::list<Held>, 2> order;  ///< per family, in creation order (same timeout)
  std::map<FragKey, std::list<Held>::iterator> index;
  std::map<FragKey, Recent> recent;
  std::list<FragKey> recent_order;  ///< oldest first
  std::size_t bytes = 0;
  std::uint64_t seq = 0;

  std::uint64_t timeout(bool v6) const { return v6 ? lim.timeout_ns_ipv6 : lim.timeout_ns_ipv4; }

  static DatagramReport report(const Held& h, FragFault f) {
    DatagramReport d;
    d.fault = f;
    d.ipv6 = h.key.v6;
    d.level = h.key.level;
    d.id = h.key.id;
    d.frames = h.frames;
    return d;
  }
  void free_bytes(Held& h) {
    bytes -= h.bytes;
    h.bytes = 0;
    h.pieces.clear();
    h.pieces.shrink_to_fit();
    h.unfrag.clear();
  }
  void erase(std::list<Held>::iterator it) {
    bytes -= it->bytes;
    index.erase(it->key);
    order[it->key.v6].erase(it);
  }
  /// Discard: the bytes go, a tombstone stays until it ages out (RFC 5722: later fragments
  /// of the datagram are discarded too).
  void discard(Held& h) {
    free_bytes(h);
    h.discarded = true;
  }

  void remember(const Held& h) {
    if (recent.count(h.key)) return;
    while (recent.size() >= lim.max_datagrams && !recent_order.empty()) {
      recent.erase(recent_order.front());
      recent_order.pop_front();
    }
    recent[h.key] = Recent{h.first_ts, h.end, h.frames};
    recent_order.push_back(h.key);
  }

  void expire(std::uint64_t now, std::vector<DatagramReport>& out) {
    while (!recent_order.empty()) {
      auto it = recent.find(recent_order.front());
      if (it != recent.end() && !(now > it->second.first_ts &&
                                  now - it->second.first_ts >= timeout(it->first.v6)))
        break;
      if (it != recent.end()) recent.erase(it);
      recent_order.pop_front();
    }
    for (bool v6 : {false, true}) {
      auto& l = order[v6];
      while (!l.empty() && now > l.front().first_ts &&
             now - l.front().first_ts >= timeout(v6)) {
        if (!l.front().discarded) out.push_back(report(l.front(), FragFault::Timeout));
        erase(l.begin());
      }
    }
  }
  /// Evict the oldest datagram other than `keep`; false when there is none.
  bool evict_oldest(const Held* keep, std::vector<DatagramReport>& out) {
    std::list<Held>::iterator best;
    bool found = false;
    for (auto& l : order)
      for (auto it = l.begin(); it != l.end(); ++it) {
        if (&*it == keep) continue;
        if (!found || it->seq < best->seq) best = it, found = true;
        break;  // lists are in creation order: the first non-kept one is the oldest
      }
    if (!found) return false;
    if (!best->discarded) out.push_back(report(*best, FragFault::Evicted));
    erase(best);
    return true;
  }

/// Reassemble, report, and walk what comes out (recursively: a datagram may carry a tunnel
/// whose inner packet is itself a fragment). Bounded by wire::kMaxTunnelDepth levels.
struct Feeder {
  Impl& S;
  std::uint64_t frame_no;
  std::uint64_t now;
  std::vector<DatagramReport>& out;
  std::vector<std::uint64_t> frames_;  ///< frames of the datagram just completed
  std::vector<std::uint64_t> dups_;    ///< its ignored duplicates

  void buffer(std::span<const std::uint8_t> buf, const Layout& lay, std::uint8_t base_level,
              const std::string& base_outer, std::size_t depth) {
    auto f = find_fragment(buf, lay, base_level, base_outer);
    if (!f) return;
    std::vector<std::uint8_t> dgram;
    if (!insert(*f, dgram)) return;
    // Walk the rebuilt datagram as a raw IP packet.
    const std::uint8_t level = f->key.level;
    DatagramReport d;
    d.fault = FragFault::None;
    d.ipv6 = f->key.v6;
    d.level = level;
    d.id = f->key.id;
    d.length = std::uint32_t(dgram.size());
    d.frames = frames_;
    d.duplicates = dups_;
    if (depth >= wire::kMaxTunnelDepth) {
      d.limit = "tunnel-depth-limit";
      out.push_back(std::move(d));
      return;
    }
    Parsed p = walk(dgram, wire::LinkType::RawIp, std::uint32_t(dgram.size()), S.opt);
    d.inner_error = p.report.parse_error ? p.report.parse_error : p.report.inner_error;
    d.limit = p.report.limit;
    for (auto& x : p.report.fields) {
      // the rebuilt IPv4 header is not judged (each fragment's own header was, in its frame)
      if (x.kind == CsumKind::Ipv4Header && x.header_offset == 0) continue;
      x.level = std::uint8_t(x.level + level);
      d.fields.push_back(x);
    }
    out.push_back(std::move(d));
    if (p.layout) buffer(dgram, *p.layout, level, f->key.outer, depth + 1);
  }


  void event(const Held& h, FragFault f, bool with_this = true) {
    DatagramReport d = Impl::report(h, f);
    if (with_this && (d.frames.empty() || d.frames.back() != frame_no)) d.frames.push_back(frame_no);
    out.push_back(std::move(d));
  }
  void event(const FragKey& k, FragFault f) {
    Held tmp;
    tmp.key = k;
    event(tmp, f);
  }

  /// Insert one fragment; true with the rebuilt datagram in `dgram` when it completes it.
  bool insert(const FragIn& f, std::vector<std::uint8_t>& dgram) {
    const std::uint64_t len = f.payload.size();
    const std::uint64_t fend = std::uint64_t(f.off) + len;
    auto found = S.index.find(f.key);
    Held* h = found != S.index.end() ? &*found->second : nullptr;
    if (h && h->discarded) {
      event(*h, FragFault::Discarded);
      return false;
    }
    if (!h) {
      auto rc = S.recent.find(f.key);
      if (rc != S.recent.end() && fend <= rc->second.end) {
        Held tmp;
        tmp.key = f.key;
        tmp.frames = rc->second.frames;
        event(tmp, FragFault::Late);
        return false;
      }
    }
    // A fragment must be wholly present to be used at all.
    auto fail = [&](FragFault why) {
      if (!h) h = create(f.key);
      if (!h) return false;
      h->frames.push_back(frame_no);
      event(*h, why, false);
      S.discard(*h);
      return false;
    };
    if (f.truncated) return fail(FragFault::Truncated);
    if (len == 0 || (f.more && (len % 8) != 0)) {  // RFC 8200 §4.5; RFC 791 (8-octet units)
      if (h) event(*h, FragFault::BadLength);
      else event(f.key, FragFault::BadLength);
      return false;
    }
    // IPv6 only: a first fragment without the whole header chain is dropped (RFC 7112 §5;
    // Linux answers with ICMPv6 Parameter Problem code 3 and keeps the queue). IPv4 has no
    // such rule (RFC 791): its first fragment may end inside the L4 header.
    if (f.key.v6 && f.off == 0 && !ipv6_first_fragment_chain_complete(f.frag_nh, f.payload)) {
      if (h) event(*h, FragFault::IncompleteHeaderChain);
      else event(f.key, FragFault::IncompleteHeaderChain);
      return false;
    }
    const std::uint64_t extra = f.key.v6 ? f.unfrag.size() - wire::Ipv6Header<>::kLen
                                         : f.unfrag.size();
    if (fend + extra > kMaxIpDatagram) return fail(FragFault::TooBig);
    if (h) {
      if (!f.more && h->have_last && fend != h->end) return fail(FragFault::Excess);
      if (h->have_last && fend > h->end) return fail(FragFault::Excess);
      if (!f.more && !h->pieces.empty() && h->pieces.back().end() > fend)
        return fail(FragFault::Excess);
      // Overlap (RFC 5722 §4): covered wholly by held data with the same bytes → duplicate.
      bool overlaps = false, same = true;
      std::uint64_t covered = 0;
      for (const Piece& p : h->pieces) {
        const std::uint64_t lo = std::max<std::uint64_t>(p.off, f.off);
        const std::uint64_t hi = std::min<std::uint64_t>(p.end(), fend);
        if (lo >= hi) continue;
        overlaps = true;
        covered += hi - lo;
        if (!std::equal(f.payload.begin() + long(lo - f.off), f.payload.begin() + long(hi - f.off),
                        p.bytes.begin() + long(lo - p.off)))
          same = false;
      }
      if (overlaps) {
        if (same && covered == len) {
          event(*h, FragFault::Duplicate);  // erratum 3089: ignored, datagram kept
          h->dups.push_back(frame_no);
          return false;
        }
        return fail(FragFault::Overlap);
      }
      if (h->pieces.size() >= S.lim.max_fragments) return fail(FragFault::TooManyFragments);
    } else {
      h = create(f.key);
      if (!h) return false;
    }
    // memory: make room by evicting the oldest other datagrams
    while (S.bytes + len + f.unfrag.size() > S.lim.max_bytes)
      if (!S.evict_oldest(h, out)) break;
    if (S.bytes + len + f.unfrag.size() > S.lim.max_bytes) {
      h->frames.push_back(frame_no);
      event(*h, FragFault::Evicted, false);
      auto it = S.index.find(f.key);
      S.erase(it->second);
      return false;
    }
    Piece p{f.off, std::vector<std::uint8_t>(f.payload.begin(), f.payload.end()), frame_no};
    auto pos = std::lower_bound(h->pieces.begin(), h->pieces.end(), p.off,
                                [](const Piece& a, std::uint32_t o) { return a.off < o; });
    h->pieces.insert(pos, std::move(p));
    h->bytes += len;
    S.bytes += len;
    h->frames.push_back(frame_no);
    if (f.off == 0) {
      h->have_first = true;
      h->unfrag.assign(f.unfrag.begin(), f.unfrag.end());
      h->bytes += f.unfrag.size();
      S.bytes += f.unfrag.size();
      h->nh_at = f.nh_at;
      h->frag_nh = f.frag_nh;
    }
    if (!f.more) {
      h->have_last = true;
      h->end = std::uint32_t(fend);
    }
    if (!h->have_first || !h->have_last) return false;
    std::uint32_t at = 0;
    for (const Piece& q : h->pieces) {
      if (q.off != at) return false;  // a hole
      at = q.end();
    }
    if (at != h->end) return false;
    // Complete: rebuild the datagram (unfragmentable part with lengths set, then the data).
    dgram = h->unfrag;
    for (const Piece& q : h->pieces) dgram.insert(dgram.end(), q.bytes.begin(), q.bytes.end());
    frames_.clear();
    for (const Piece& q : h->pieces) frames_.push_back(q.frame);
    dups_ = h->dups;
    std::span<std::uint8_t> w(dgram);
    if (!f.key.v6) {
      auto v = wire::Ipv4Header<std::uint8_t>::parse(w);
      if (v) {
        v->set_total_len(std::uint16_t(dgram.size()));
        v->set_frag_off_field(std::uint16_t(v->frag_off_field() & wire::Ipv4Header<>::kDF));
      }
    } else {
      auto v = wire::Ipv6Header<std::uint8_t>::parse(w);
      if (v) v->set_payload_len(std::uint16_t(dgram.size() - wire::Ipv6Header<>::kLen));
      if (h->nh_at < dgram.size()) dgram[h->nh_at] = h->frag_nh;
    }
    S.remember(*h);
    S.erase(S.index.find(f.key)->second);
    return true;
  }

  Held* create(const FragKey& k) {
    while (S.index.size() >= S.lim.max_datagrams)
      if (!S.evict_oldest(nullptr, out)) break;
    auto& l = S.order[k.v6];
    Held h;
    h.key = k;
    h.seq = S.seq++;
    h.first_ts = now;
    l.push_back(std::move(h));
    auto it = std::prev(l.end());
    S.index[k] = it;
    return &*it;
  }
};

};

CaptureVerifier::CaptureVerifier(wire::LinkType link, const CheckOptions& opt,
                                 const ReassemblyLimits& lim)
    : impl_(std::make_unique<Impl>()) {
  impl_->link = link;
  impl_->opt = opt;
  impl_->lim = lim;
  if (impl_->lim.max_datagrams == 0) impl_->lim.max_datagrams = 1;
  if (impl_->lim.max_fragments == 0) impl_->lim.max_fragments = 1;
}

CaptureVerifier::~CaptureVerifier() = default;

std::size_t CaptureVerifier::datagrams_held() const noexcept { return impl_->index.size(); }
std::size_t CaptureVerifier::bytes_held() const noexcept { return impl_->bytes; }

std::vector<DatagramReport> CaptureVerifier::finish() {
  std::vector<DatagramReport> out;
  for (auto& l : impl_->order)
    for (auto& h : l)
      if (!h.discarded) out.push_back(Impl::report(h, FragFault::Incomplete));
  impl_->order[0].clear();
  impl_->order[1].clear();
  impl_->index.clear();
  impl_->recent.clear();
  impl_->recent_order.clear();
  impl_->bytes = 0;
  return out;
}

FrameReport CaptureVerifier::verify(std::span<const std::uint8_t> frame, std::uint32_t orig_len,
                                    std::uint64_t frame_no, std::uint64_t ts_ns) {
  Impl& S = *impl_;
  std::vector<DatagramReport> events;
  S.expire(ts_ns, events);
  Parsed p = walk(frame, S.link, orig_len, S.opt);
  if (p.layout) {
    Impl::Feeder fd{S, frame_no, ts_ns, events, {}, {}};
    // A snaplen-cut fragment is one whose IP length reaches past the captured bytes: the
    // parser flags it kClipped (allow_clipped), and insert() refuses it as Truncated.
    fd.buffer(frame, *p.layout, 0, {}, 0);
  }
  p.report.datagrams = std::move(events);
  return std::move(p.report);
}

}  // namespace ofld::tools

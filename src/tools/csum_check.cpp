// Per-frame checksum verification and repair (see include/ofld/tools/csum_check.hpp).
#include "ofld/tools/csum_check.hpp"

#include <cstdio>

#include "ofld/core/csum.hpp"
#include "ofld/wire/bytes.hpp"

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

void Summary::add(const FrameReport& r) noexcept {
  ++frames;
  frames_with_bad += r.any(Verdict::Bad);
  frames_with_partial += r.any(Verdict::Partial);
  frames_skipped += r.any(Verdict::Skipped);
  parse_errors += r.parse_error.has_value();
  inner_unparsed += r.inner_unparsed;
  rewritten += r.rewritten;
  frames_modified += r.rewritten != 0;
  for (const auto& f : r.fields) ++fields[std::size_t(f.kind)][std::size_t(f.verdict)];
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
      out.field_rel = 10;
      out.cover_end = std::uint64_t(h.offset) + h.length;
      return true;
    case HeaderKind::Tcp:
    case HeaderKind::Udp:
    case HeaderKind::Icmpv6: {
      out.ip = lay.ip_of(h);
      if (!out.ip || !is_ip(out.ip->kind)) return false;
      if (h.kind == HeaderKind::Tcp) {
        out.kind = CsumKind::Tcp;
        out.field_rel = 16;
        out.cover_end = out.ip->end;
      } else if (h.kind == HeaderKind::Udp) {
        out.kind = CsumKind::Udp;
        out.field_rel = 6;
        // The UDP length field bounds the sum (RFC 768); a UDP length of 0 (RFC 2675
        // jumbogram) or one the parser did not record falls back to the IP datagram end.
        std::uint16_t ulen = h.offset + 8 <= frame.size() ? wire::load_be16(&frame[h.offset + 4]) : 0;
        out.cover_end = ulen >= 8 ? std::uint64_t(h.offset) + ulen : out.ip->end;
      } else {
        out.kind = CsumKind::Icmpv6;
        out.field_rel = 2;
        out.cover_end = out.ip->end;
      }
      return true;
    }
    case HeaderKind::Icmp:
      out.ip = lay.ip_of(h);
      if (!out.ip || !is_ip(out.ip->kind)) return false;
      out.kind = CsumKind::Icmp;
      out.field_rel = 2;
      out.cover_end = out.ip->end;
      return true;
    case HeaderKind::Gre:
      // RFC 2784 §2.5: C bit = MSB of the first byte; checksum at bytes 4..5, covering the
      // GRE header and payload (to the end of the enclosing datagram, HeaderRef::end).
      if (h.length < 8 || std::uint64_t(h.offset) + 6 > frame.size()) return false;
      if (!(frame[h.offset] & 0x80)) return false;
      out.kind = CsumKind::Gre;
      out.field_rel = 4;
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
    case CsumKind::Tcp: pseudo = pseudo_sum(frame, *s.ip, f.covered_len, 6); break;
    case CsumKind::Udp: pseudo = pseudo_sum(frame, *s.ip, f.covered_len, 17); break;
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
  auto r = wire::parse_frame(frame, link, po);
  if (r.ok()) {
    p.layout = std::move(r).value();
    return p;
  }
  // Fall back to the outer layers: a malformed inner packet should not hide the outer
  // checksums (tshark also reports those).
  wire::ParseOptions outer = po;
  outer.follow_tunnels = false;
  auto r2 = wire::parse_frame(frame, link, outer);
  if (r2.ok()) {
    p.layout = std::move(r2).value();
    p.report.inner_unparsed = true;
    p.report.inner_error = r.error();
  } else {
    p.report.parse_error = r.error();
  }
  return p;
}

/// Collect the sites of a layout, outer to inner, with their fragment context.
struct SiteCtx {
  Site site;
  bool under_fragment = false;
  bool under_clipped = false;
};

std::vector<SiteCtx> collect(std::span<const std::uint8_t> frame, const Layout& lay) {
  std::vector<SiteCtx> out;
  bool frag = false, clipped = false;
  for (const HeaderRef& h : lay.headers()) {
    if ((is_ip(h.kind) || h.kind == HeaderKind::Ipv6Fragment) && (h.flags & kFragFlags))
      frag = true;
    if (h.flags & wire::layer_flag::kClipped) clipped = true;
    Site s;
    if (site_of(frame, lay, h, s)) {
      bool f = frag, c = clipped;
      if (s.ip && (s.ip->flags & kFragFlags)) f = true;
      if (s.ip && (s.ip->flags & wire::layer_flag::kClipped)) c = true;
      out.push_back({s, f, c});
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

}  // namespace

FrameReport verify_frame(std::span<const std::uint8_t> frame, wire::LinkType link,
                         std::uint32_t orig_len, const CheckOptions& opt) {
  Parsed p = parse(frame, link, orig_len, opt);
  if (!p.layout) return std::move(p.report);
  const std::vector<SiteCtx> sites = collect(frame, *p.layout);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const SiteCtx& c = sites[i];
    CsumField f = evaluate(frame, c.site, c.under_fragment, c.under_clipped, p.report.truncated);
    mark_lco(frame, sites, i, f, p.report.truncated);
    p.report.fields.push_back(f);
  }
  return std::move(p.report);
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

// ---- reassembly (not yet: stubs) ------------------------------------------------------------

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
  }
  return "?";
}

std::size_t FrameReport::count_all(Verdict v) const noexcept { return count(v); }
void Summary::add(const DatagramReport&) noexcept {}
std::string describe(const DatagramReport&) { return {}; }

struct CaptureVerifier::Impl {
  wire::LinkType link;
  CheckOptions opt;
};
CaptureVerifier::CaptureVerifier(wire::LinkType link, const CheckOptions& opt,
                                 const ReassemblyLimits&)
    : impl_(new Impl{link, opt}) {}
CaptureVerifier::~CaptureVerifier() = default;
FrameReport CaptureVerifier::verify(std::span<const std::uint8_t> frame, std::uint32_t orig_len,
                                    std::uint64_t, std::uint64_t) {
  return verify_frame(frame, impl_->link, orig_len, impl_->opt);
}
std::vector<DatagramReport> CaptureVerifier::finish() { return {}; }
std::size_t CaptureVerifier::datagrams_held() const noexcept { return 0; }
std::size_t CaptureVerifier::bytes_held() const noexcept { return 0; }

}  // namespace ofld::tools

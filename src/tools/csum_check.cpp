// Per-frame checksum verification and repair (see include/ofld/tools/csum_check.hpp).
#include "ofld/tools/csum_check.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "ofld/core/csum.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/tunnel.hpp"
#include "ip_reassembly.hpp"

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

// ---- verification with reassembly (CaptureVerifier) ----------------------------------------

struct CaptureVerifier::Impl {
  Impl(wire::LinkType l, const CheckOptions& o, const ReassemblyLimits& lim)
      : link(l), opt(o), reasm(lim) {}
  wire::LinkType link;
  CheckOptions opt;
  IpReassembler reasm;

  /// Reassemble, report, and walk what comes out (recursively: a datagram may carry a tunnel
  /// whose inner packet is itself a fragment). Bounded by wire::kMaxTunnelDepth levels.
  void reassemble(std::span<const std::uint8_t> buf, const Layout& lay, std::uint8_t base_level,
                  const std::string& base_outer, std::size_t depth, std::uint64_t frame_no,
                  std::uint64_t now, std::vector<DatagramReport>& out) {
    auto r = reasm.feed(buf, lay, base_level, base_outer, frame_no, now, out);
    if (!r) return;
    // Walk the rebuilt datagram as a raw IP packet.
    const std::vector<std::uint8_t>& dgram = r->bytes;
    DatagramReport d = std::move(r->report);
    const std::uint8_t level = d.level;
    if (depth >= wire::kMaxTunnelDepth) {
      d.limit = "tunnel-depth-limit";
      out.push_back(std::move(d));
      return;
    }
    Parsed p = walk(dgram, wire::LinkType::RawIp, std::uint32_t(dgram.size()), opt);
    d.inner_error = p.report.parse_error ? p.report.parse_error : p.report.inner_error;
    d.limit = p.report.limit;
    for (auto& x : p.report.fields) {
      // the rebuilt IPv4 header is not judged (each fragment's own header was, in its frame)
      if (x.kind == CsumKind::Ipv4Header && x.header_offset == 0) continue;
      x.level = std::uint8_t(x.level + level);
      d.fields.push_back(x);
    }
    out.push_back(std::move(d));
    if (p.layout) reassemble(dgram, *p.layout, level, r->outer, depth + 1, frame_no, now, out);
  }
};

CaptureVerifier::CaptureVerifier(wire::LinkType link, const CheckOptions& opt,
                                 const ReassemblyLimits& lim)
    : impl_(std::make_unique<Impl>(link, opt, lim)) {}

CaptureVerifier::~CaptureVerifier() = default;

std::size_t CaptureVerifier::datagrams_held() const noexcept {
  return impl_->reasm.datagrams_held();
}
std::size_t CaptureVerifier::bytes_held() const noexcept { return impl_->reasm.bytes_held(); }

std::vector<DatagramReport> CaptureVerifier::finish() { return impl_->reasm.finish(); }

FrameReport CaptureVerifier::verify(std::span<const std::uint8_t> frame, std::uint32_t orig_len,
                                    std::uint64_t frame_no, std::uint64_t ts_ns) {
  Impl& S = *impl_;
  std::vector<DatagramReport> events;
  S.reasm.expire(ts_ns, events);
  Parsed p = walk(frame, S.link, orig_len, S.opt);
  // A snaplen-cut fragment is one whose IP length reaches past the captured bytes: the
  // parser flags it kClipped (allow_clipped), and the reassembly refuses it as Truncated.
  if (p.layout) S.reassemble(frame, *p.layout, 0, {}, 0, frame_no, ts_ns, events);
  p.report.datagrams = std::move(events);
  return std::move(p.report);
}

}  // namespace ofld::tools

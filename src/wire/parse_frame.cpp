// One-pass frame parser (see include/ofld/wire/layout.hpp for the contract).
//
// Every step works on a window [off, limit) of the buffer, where `limit` is the end of the
// enclosing datagram (frame end at the start, then each IP/UDP length). Header views check
// their own length against the window, so nothing reads outside the buffer.
#include <algorithm>
#include <optional>

#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::wire {

// ---- Layout helpers ---------------------------------------------------------------------------

bool Layout::push(const HeaderRef& h) noexcept {
  if (count_ >= kMaxHeaders) return false;
  hdrs_[count_++] = h;
  return true;
}

const HeaderRef* Layout::find(HeaderKind k, std::size_t nth) const noexcept {
  for (const auto& h : headers())
    if (h.kind == k && nth-- == 0) return &h;
  return nullptr;
}

const HeaderRef* Layout::innermost(HeaderKind k) const noexcept {
  for (std::size_t i = count_; i-- > 0;)
    if (hdrs_[i].kind == k) return &hdrs_[i];
  return nullptr;
}

const HeaderRef* Layout::inner_ip() const noexcept {
  for (std::size_t i = count_; i-- > 0;)
    if (hdrs_[i].kind == HeaderKind::Ipv4 || hdrs_[i].kind == HeaderKind::Ipv6) return &hdrs_[i];
  return nullptr;
}

const HeaderRef* Layout::inner_l4() const noexcept {
  for (std::size_t i = count_; i-- > 0;)
    if (hdrs_[i].kind == HeaderKind::Tcp || hdrs_[i].kind == HeaderKind::Udp) return &hdrs_[i];
  return nullptr;
}

const HeaderRef* Layout::ip_of(const HeaderRef& l4) const noexcept {
  if (l4.kind != HeaderKind::Tcp && l4.kind != HeaderKind::Udp && l4.kind != HeaderKind::Icmp &&
      l4.kind != HeaderKind::Icmpv6)
    return nullptr;
  if (l4.aux >= count_) return nullptr;
  const HeaderRef& ip = hdrs_[l4.aux];
  return (ip.kind == HeaderKind::Ipv4 || ip.kind == HeaderKind::Ipv6) ? &ip : nullptr;
}

std::uint32_t Layout::payload_offset() const noexcept {
  const HeaderRef* l4 = inner_l4();
  return l4 ? l4->header_end() : kNoOffset;
}

// ---- parser ---------------------------------------------------------------------------------

namespace {

using Status = std::optional<ParseError>;

ParseError at_offset(ParseError e, std::size_t off) {
  e.offset += std::uint32_t(off);
  return e;
}

class Parser {
 public:
  Parser(std::span<const std::uint8_t> b, const ParseOptions& o, Layout& l)
      : buf_(b), opt_(o), L_(l) {}

  Status run(LinkType link) {
    Status s = run_link(link);
    // A first fragment may end inside a header (RFC 791: any 8-octet boundary): the header
    // continues in the next fragment. The walk stops there without an error, so the fragment
    // still enters reassembly; every header before it is recorded.
    if (s && in_first_frag_ && (s->code == Errc::Truncated || s->code == Errc::HeaderPastEnd)) {
      stop(StopReason::HeaderInNextFragment, s->offset, std::uint32_t(s->layer));
      return {};
    }
    return s;
  }

 private:
  Status run_link(LinkType link) {
    const std::size_t n = buf_.size();
    switch (link) {
      case LinkType::Ethernet:
        return eth(0, n);
      case LinkType::RawIp: {
        if (n == 0) return truncated(HeaderKind::Frame, 0, 0, 1);
        const unsigned v = buf_[0] >> 4;
        if (v == 4) return ethertype(ethertype::kIpv4, 0, n);
        if (v == 6) return ethertype(ethertype::kIpv6, 0, n);
        return ParseError{HeaderKind::Frame, Errc::BadVersion, 0, v, 4};
      }
      case LinkType::LinuxSll: {
        auto h = SllHeader<>::parse(buf_);
        if (!h) return h.error();
        if (!push({HeaderKind::LinuxSll, 0, 0, 0, SllHeader<>::kLen, std::uint32_t(n)}))
          return {};
        L_.mac_header = 0;
        return link_proto(h->protocol(), SllHeader<>::kLen, n);
      }
      case LinkType::LinuxSll2: {
        auto h = Sll2Header<>::parse(buf_);
        if (!h) return h.error();
        if (!push({HeaderKind::LinuxSll2, 0, 0, 0, Sll2Header<>::kLen, std::uint32_t(n)}))
          return {};
        L_.mac_header = 0;
        return link_proto(h->protocol(), Sll2Header<>::kLen, n);
      }
    }
    return {};
  }

  std::span<const std::uint8_t> win(std::size_t off, std::size_t limit) const {
    return buf_.subspan(off, limit - off);  // callers keep off <= limit <= size
  }
  void stop(StopReason r, std::size_t off, std::uint32_t v = 0) {
    L_.stop = r;
    L_.stop_offset = std::uint32_t(off);
    L_.stop_value = v;
  }
  bool push(const HeaderRef& h) {
    if (L_.push(h)) return true;
    stop(StopReason::HeaderLimit, h.offset, std::uint32_t(kMaxHeaders));
    return false;
  }
  std::uint8_t last_index() const { return std::uint8_t(L_.size() - 1); }

  // Enter a tunnel layer; false (with a stop reason) if the depth limit is reached.
  bool enter_tunnel(TunnelKind k, std::uint16_t inner_proto, std::size_t payload_off) {
    if (tunnels_ >= kMaxTunnelDepth) {
      stop(StopReason::TunnelDepth, payload_off, std::uint32_t(tunnels_));
      return false;
    }
    if (tunnels_ == 0) {
      L_.tunnel = k;
      L_.encapsulation = true;
      L_.inner_protocol = inner_proto;
    }
    ++tunnels_;
    ++level_;
    L_.tunnel_depth = std::uint8_t(tunnels_);
    return true;
  }

  Status link_proto(std::uint16_t proto, std::size_t off, std::size_t limit) {
    if (proto < 0x0600) {
      stop(StopReason::NonIpLink, off, proto);
      return {};
    }
    return ethertype(proto, off, limit);
  }

  // ---- L2 ----
  Status eth(std::size_t off, std::size_t limit) {
    auto h = EthernetHeader<>::parse(win(off, limit));
    if (!h) return at_offset(h.error(), off);
    if (!push({HeaderKind::Ethernet, level_, 0, std::uint32_t(off), EthernetHeader<>::kLen,
               std::uint32_t(limit)}))
      return {};
    if (level_ == 0 && L_.mac_header == kNoOffset) L_.mac_header = std::uint32_t(off);
    if (level_ == 1 && L_.inner_mac_header == kNoOffset) L_.inner_mac_header = std::uint32_t(off);
    return ethertype(h->ethertype(), off + EthernetHeader<>::kLen, limit);
  }

  // Dispatch on an ethertype, consuming any VLAN tags first.
  Status ethertype(std::uint16_t et, std::size_t off, std::size_t limit) {
    std::size_t tags = 0;
    while (is_vlan_tpid(et)) {
      const HeaderKind k = et == ethertype::kVlan ? HeaderKind::Vlan : HeaderKind::QinQ;
      if (tags == kMaxVlanTags)
        return ParseError{k, Errc::TooDeep, std::uint32_t(off), std::uint32_t(tags),
                          std::uint32_t(kMaxVlanTags)};
      auto t = VlanTag<>::parse(win(off, limit));
      if (!t) return at_offset(ParseError{k, Errc::Truncated, 0, t.error().value, t.error().limit}, off);
      if (!push({k, level_, 0, std::uint32_t(off), VlanTag<>::kLen, std::uint32_t(limit)}))
        return {};
      et = t->ethertype();
      off += VlanTag<>::kLen;
      ++tags;
    }
    if (level_ == 0) L_.protocol = et;
    switch (et) {
      case ethertype::kIpv4: return ipv4(off, limit);
      case ethertype::kIpv6: return ipv6(off, limit);
      case ethertype::kTeb: return eth(off, limit);
      default:
        stop(StopReason::UnknownEthertype, off, et);
        return {};
    }
  }

  void note_network(std::size_t off) {
    if (level_ == 0 && L_.network_header == kNoOffset) L_.network_header = std::uint32_t(off);
    if (level_ == 1 && L_.inner_network_header == kNoOffset)
      L_.inner_network_header = std::uint32_t(off);
  }
  void note_transport(std::size_t off) {
    if (level_ == 0 && L_.transport_header == kNoOffset) L_.transport_header = std::uint32_t(off);
    if (level_ == 1 && L_.inner_transport_header == kNoOffset)
      L_.inner_transport_header = std::uint32_t(off);
  }

  // Datagram end from a length field: `len` bytes from `off`, within [off, limit).
  // Returns the end or an error; sets kClipped when allowed to clamp.
  Result<std::size_t> datagram_end(HeaderKind k, std::size_t off, std::size_t len,
                                   std::size_t limit, bool clip_ok, std::uint16_t& flags) {
    if (off + len <= limit) return off + len;
    if (clip_ok || in_first_frag_ || opt_.allow_clipped) {
      flags |= layer_flag::kClipped;
      return limit;
    }
    return ParseError{k, Errc::LengthPastEnd, std::uint32_t(off), std::uint32_t(len),
                      std::uint32_t(limit - off)};
  }

  // ---- IPv4 ----
  Status ipv4(std::size_t off, std::size_t limit) {
    auto h = Ipv4Header<>::parse(win(off, limit));
    if (!h) return at_offset(h.error(), off);
    const std::size_t hl = h->header_len();
    std::uint16_t flags = 0;
    std::size_t end;
    if (h->total_len() == 0 &&
        (h->protocol() == ipproto::kTcp || h->protocol() == ipproto::kUdp)) {
      // TSO / BIG TCP capture: length from the frame (tcpdump's "presumed TSO" / "presumed
      // BIG TCP", TCP and UDP only; any other protocol is BadTotalLen below)
      end = limit;
      flags |= layer_flag::kLenFromFrame;
    } else if (h->total_len() < hl) {
      return ParseError{HeaderKind::Ipv4, Errc::BadTotalLen, std::uint32_t(off), h->total_len(),
                        std::uint32_t(hl)};
    } else {
      auto e = datagram_end(HeaderKind::Ipv4, off, h->total_len(), limit, false, flags);
      if (!e) return e.error();
      end = e.value();
    }
    if (end < limit) flags |= layer_flag::kTrailer;
    const bool later = h->frag_offset() > 0;
    const bool first = !later && h->mf();
    if (later) flags |= layer_flag::kLaterFragment;
    if (first) flags |= layer_flag::kFirstFragment;
    if (!push({HeaderKind::Ipv4, level_, flags, std::uint32_t(off), std::uint32_t(hl),
               std::uint32_t(end), h->protocol(),
               std::uint32_t(off + Ipv4Header<>::kDaddrOffset)}))
      return {};
    note_network(off);
    // Inside an outer first fragment the whole inner datagram is incomplete: the frame stays
    // a first fragment whatever this header says (only a later fragment is more final).
    L_.frag = later                           ? FragStatus::Later
              : (first || in_first_frag_) ? FragStatus::First
                                          : FragStatus::None;
    if (later) {
      stop(StopReason::LaterFragment, off + hl, h->frag_offset());
      return {};
    }
    if (first) in_first_frag_ = true;
    return l4(h->protocol(), off + hl, end, last_index(), first);
  }

  // ---- IPv6 ----
  Status ipv6(std::size_t off, std::size_t limit) {
    auto h = Ipv6Header<>::parse(win(off, limit));
    if (!h) return at_offset(h.error(), off);
    std::uint16_t flags = 0;
    std::size_t end;
    const std::size_t body = off + Ipv6Header<>::kLen;
    if (h->payload_len() == 0) {
      std::uint32_t jumbo = 0;
      if (h->next_header() == ipproto::kHopOpts) {
        auto hbh = Ipv6ExtHeader<>::parse(win(body, limit), HeaderKind::Ipv6HopByHop);
        if (hbh) jumbo = hbh->jumbo_payload_len();
      }
      // Bytes of this packet from the IPv6 header: the original frame length for the
      // outermost datagram of a snaplen-cut capture (tcpdump judges the wire length).
      const std::size_t have = limit == buf_.size() && opt_.wire_len > buf_.size()
                                   ? opt_.wire_len - off
                                   : limit - off;
      const std::uint8_t nh = h->next_header();
      if (jumbo != 0) {
        flags |= layer_flag::kJumbo;
        auto e = datagram_end(HeaderKind::Ipv6, body, jumbo, limit, false, flags);
        if (!e) return at_offset(e.error(), 0);
        end = e.value();
      } else if (nh == ipproto::kHopOpts) {  // a hop-by-hop header without a Jumbo option
        return ParseError{HeaderKind::Ipv6HopByHop, Errc::ZeroLength, std::uint32_t(off), nh,
                          std::uint32_t(have)};
      } else if ((nh == ipproto::kTcp || nh == ipproto::kUdp) && have > 65535) {
        // BIG TCP as current kernels hand it to taps: no Jumbo option, length from the frame
        flags |= layer_flag::kLenFromFrame;
        end = limit;
      } else {  // not BIG TCP: no payload at all, which cannot hold the next header
        return ParseError{HeaderKind::Ipv6, Errc::ZeroLength, std::uint32_t(off), nh,
                          std::uint32_t(have)};
      }
    } else {
      auto e = datagram_end(HeaderKind::Ipv6, body, h->payload_len(), limit, false, flags);
      if (!e) {
        ParseError pe = e.error();
        pe.offset = std::uint32_t(off);
        return pe;
      }
      end = e.value();
    }
    if (end < limit) flags |= layer_flag::kTrailer;
    if (!push({HeaderKind::Ipv6, level_, flags, std::uint32_t(off), Ipv6Header<>::kLen,
               std::uint32_t(end), h->next_header(),
               std::uint32_t(off + Ipv6Header<>::kDaddrOffset)}))
      return {};
    const std::uint8_t ip_idx = last_index();
    note_network(off);
    L_.frag = in_first_frag_ ? FragStatus::First : FragStatus::None;  // see ipv4()

    std::uint8_t nh = h->next_header();
    std::size_t cur = body;
    bool first = false;
    for (std::size_t count = 0; is_ipv6_ext(nh); ++count) {
      if (count == kMaxIpv6ExtHeaders)
        return ParseError{HeaderKind::Ipv6, Errc::TooDeep, std::uint32_t(cur),
                          std::uint32_t(count), std::uint32_t(kMaxIpv6ExtHeaders)};
      HeaderRef& ip = L_.at(ip_idx);
      if (nh == ipproto::kFragment) {
        auto f = Ipv6FragHeader<>::parse(win(cur, end));
        if (!f) return at_offset(f.error(), cur);
        if (!push({HeaderKind::Ipv6Fragment, level_, 0, std::uint32_t(cur),
                   Ipv6FragHeader<>::kLen, std::uint32_t(end)}))
          return {};
        if (f->frag_offset() > 0) {
          L_.at(ip_idx).flags |= layer_flag::kLaterFragment;
          L_.at(ip_idx).aux = f->next_header();
          L_.frag = FragStatus::Later;
          stop(StopReason::LaterFragment, cur + Ipv6FragHeader<>::kLen, f->frag_offset());
          return {};
        }
        if (f->more()) {
          L_.at(ip_idx).flags |= layer_flag::kFirstFragment;
          L_.frag = FragStatus::First;
          first = true;
          in_first_frag_ = true;
        } else {
          L_.at(ip_idx).flags |= layer_flag::kAtomicFragment;
          if (!in_first_frag_) L_.frag = FragStatus::Atomic;
        }
        nh = f->next_header();
        cur += Ipv6FragHeader<>::kLen;
        continue;
      }
      if (nh == ipproto::kAh) {
        auto a = AhHeader<>::parse(win(cur, end));
        if (!a) return at_offset(a.error(), cur);
        if (!push({HeaderKind::Ah, level_, 0, std::uint32_t(cur), std::uint32_t(a->header_len()),
                   std::uint32_t(end)}))
          return {};
        nh = a->next_header();
        cur += a->header_len();
        continue;
      }
      const HeaderKind k = nh == ipproto::kHopOpts   ? HeaderKind::Ipv6HopByHop
                           : nh == ipproto::kRouting ? HeaderKind::Ipv6Routing
                                                     : HeaderKind::Ipv6DestOpts;
      auto x = Ipv6ExtHeader<>::parse(win(cur, end), k);
      if (!x) return at_offset(x.error(), cur);
      if (k == HeaderKind::Ipv6Routing) {
        const std::size_t fd = x->final_dst_offset();
        if (fd != Ipv6ExtHeader<>::kNoRoutedDst) {
          ip.pseudo_daddr = std::uint32_t(cur + fd);
          ip.flags |= layer_flag::kRoutedDst;
        }
      }
      if (!push({k, level_, 0, std::uint32_t(cur), std::uint32_t(x->header_len()),
                 std::uint32_t(end)}))
        return {};
      nh = x->next_header();
      cur += x->header_len();
    }
    L_.at(ip_idx).aux = nh;
    if (nh == ipproto::kNone) {
      stop(StopReason::NoNextHeader, cur);
      return {};
    }
    return l4(nh, cur, end, ip_idx, first);
  }

  // ---- L4 and IP-protocol tunnels ----
  Status l4(std::uint8_t proto, std::size_t off, std::size_t end, std::uint8_t ip_idx,
            bool first_frag) {
    switch (proto) {
      case ipproto::kTcp: {
        auto t = TcpHeader<>::parse(win(off, end));
        if (!t) return at_offset(t.error(), off);
        if (!push({HeaderKind::Tcp, level_, 0, std::uint32_t(off), std::uint32_t(t->header_len()),
                   std::uint32_t(end), ip_idx}))
          return {};
        note_transport(off);
        L_.l4_proto = proto;
        stop(StopReason::EndOfHeaders, off + t->header_len());
        return {};
      }
      case ipproto::kUdp: return udp(off, end, ip_idx, first_frag);
      case ipproto::kIcmp:
      case ipproto::kIcmpv6: {
        const HeaderKind k = proto == ipproto::kIcmp ? HeaderKind::Icmp : HeaderKind::Icmpv6;
        auto c = IcmpHeader<>::parse(win(off, end), k);
        if (!c) return at_offset(c.error(), off);
        if (!push({k, level_, 0, std::uint32_t(off), IcmpHeader<>::kLen, std::uint32_t(end),
                   ip_idx}))
          return {};
        note_transport(off);
        L_.l4_proto = proto;
        stop(StopReason::EndOfHeaders, off + IcmpHeader<>::kLen);
        return {};
      }
      case ipproto::kGre:
        note_transport(off);
        return gre(off, end, TunnelKind::Gre);
      case ipproto::kIpip:
      case ipproto::kIpv6: {
        if (!opt_.follow_tunnels) {
          stop(StopReason::TunnelsDisabled, off, proto);
          return {};
        }
        const bool v4 = proto == ipproto::kIpip;
        if (!enter_tunnel(v4 ? TunnelKind::Ipip : TunnelKind::Sit,
                          v4 ? ethertype::kIpv4 : ethertype::kIpv6, off))
          return {};
        return v4 ? ipv4(off, end) : ipv6(off, end);
      }
      default:
        stop(StopReason::UnknownIpProto, off, proto);
        return {};
    }
  }

  Status udp(std::size_t off, std::size_t end, std::uint8_t ip_idx, bool first_frag) {
    auto u = UdpHeader<>::parse(win(off, end));
    if (!u) return at_offset(u.error(), off);
    std::uint16_t flags = 0;
    std::size_t uend;
    const std::uint16_t ip_flags = L_.at(ip_idx).flags;
    if (u->len() == 0 && (ip_flags & (layer_flag::kLenFromFrame | layer_flag::kJumbo))) {
      uend = end;  // RFC 2675 §4 / BIG TCP: UDP length 0, take the IP payload
      flags |= layer_flag::kLenFromFrame;
    } else if (u->len() < UdpHeader<>::kLen) {
      return ParseError{HeaderKind::Udp, Errc::BadTotalLen, std::uint32_t(off), u->len(),
                        std::uint32_t(UdpHeader<>::kLen)};
    } else {
      const bool clip_ok = first_frag || (ip_flags & layer_flag::kClipped);
      auto e = datagram_end(HeaderKind::Udp, off, u->len(), end, clip_ok, flags);
      if (!e) return e.error();
      uend = e.value();
    }
    if (!push({HeaderKind::Udp, level_, flags, std::uint32_t(off), UdpHeader<>::kLen,
               std::uint32_t(uend), ip_idx}))
      return {};
    note_transport(off);
    L_.l4_proto = ipproto::kUdp;
    const std::size_t pay = off + UdpHeader<>::kLen;
    stop(StopReason::EndOfHeaders, pay);

    // The kernel's rule: the receiving socket's (destination) port. Capture tools may also
    // take the source port, lower port first, as tshark's UDP dissector does.
    std::uint16_t port = u->dest();
    auto tunnel_port = [&](std::uint16_t p) {
      return p != 0 && (p == opt_.vxlan_port || p == opt_.vxlan_legacy_port ||
                        p == opt_.geneve_port || p == opt_.gre_in_udp_port ||
                        p == opt_.gue_port || p == opt_.fou_port);
    };
    if (opt_.tunnel_src_port) {
      const std::uint16_t lo = std::min(u->source(), u->dest());
      const std::uint16_t hi = std::max(u->source(), u->dest());
      port = tunnel_port(lo) ? lo : hi;
    }
    auto is = [&](std::uint16_t p) { return p != 0 && port == p; };
    const bool vx = is(opt_.vxlan_port) || is(opt_.vxlan_legacy_port);
    const bool gen = is(opt_.geneve_port), gre_u = is(opt_.gre_in_udp_port);
    const bool gue = is(opt_.gue_port), fou = is(opt_.fou_port);
    if (!(vx || gen || gre_u || gue || fou)) return {};
    if (!opt_.follow_tunnels) {
      stop(StopReason::TunnelsDisabled, pay, port);
      return {};
    }
    if (vx) return vxlan(pay, uend);
    if (gen) return geneve(pay, uend);
    if (gre_u) return gre(pay, uend, TunnelKind::GreInUdp);
    if (gue) return gue_payload(pay, uend);
    return direct_ip(opt_.fou_proto, pay, uend, TunnelKind::Fou);
  }

  // ---- UDP tunnels ----
  Status vxlan(std::size_t off, std::size_t end) {
    auto v = VxlanHeader<>::parse(win(off, end));
    if (!v) return at_offset(v.error(), off);
    const bool rco_ok = opt_.vxlan_remcsum_rx;
    if (opt_.vxlan_strict) {
      const std::uint32_t allowed = vxlan::kFlagVni | (rco_ok ? vxlan::kFlagRco : 0);
      if ((v->word0() & ~allowed) || (!(rco_ok && v->rco()) && v->low_byte() != 0))
        return ParseError{HeaderKind::Vxlan, Errc::BadFlags, std::uint32_t(off),
                          v->word0() & ~allowed, 0};
    }
    std::uint16_t flags = v->rco() ? layer_flag::kRco : 0;
    if (!push({HeaderKind::Vxlan, level_, flags, std::uint32_t(off), vxlan::kLen,
               std::uint32_t(end)}))
      return {};
    const std::size_t inner = off + vxlan::kLen;
    const bool first_tunnel = tunnels_ == 0;
    if (!enter_tunnel(TunnelKind::Vxlan, ethertype::kTeb, inner)) return {};
    if (first_tunnel && rco_ok && v->rco()) {
      const vxlan::Rco r = v->rco_data();
      L_.rco_start = std::uint32_t(inner + r.start);
      L_.rco_offset = std::uint32_t(inner + r.field());
    }
    return eth(inner, end);
  }

  Status geneve(std::size_t off, std::size_t end) {
    auto g = GeneveHeader<>::parse(win(off, end));
    if (!g) return at_offset(g.error(), off);
    if (!push({HeaderKind::Geneve, level_, 0, std::uint32_t(off), std::uint32_t(g->header_len()),
               std::uint32_t(end)}))
      return {};
    const std::size_t inner = off + g->header_len();
    const std::uint16_t proto = g->protocol();
    if (proto != ethertype::kTeb && proto != ethertype::kIpv4 && proto != ethertype::kIpv6) {
      stop(StopReason::UnknownEthertype, inner, proto);
      return {};
    }
    if (!enter_tunnel(TunnelKind::Geneve, proto, inner)) return {};
    return ethertype(proto, inner, end);
  }

  // GUE on the configured port: version 0 header, or version 1 = direct IPv4/IPv6 (V-7).
  Status gue_payload(std::size_t off, std::size_t end) {
    if (off >= end) return truncated(HeaderKind::Gue, off, 0, 1);
    const unsigned ver = buf_[off] >> 6;
    if (ver == 1) {
      const unsigned nib = buf_[off] >> 4;
      if (nib == 4) return direct_ip(ipproto::kIpip, off, end, TunnelKind::Gue);
      if (nib == 6) return direct_ip(ipproto::kIpv6, off, end, TunnelKind::Gue);
      return ParseError{HeaderKind::Gue, Errc::BadVersion, std::uint32_t(off), nib, 4};
    }
    auto g = GueHeader<>::parse(win(off, end));
    if (!g) return at_offset(g.error(), off);
    if (!push({HeaderKind::Gue, level_, 0, std::uint32_t(off), std::uint32_t(g->header_len()),
               std::uint32_t(end)}))
      return {};
    const std::size_t inner = off + g->header_len();
    if (g->control()) {
      stop(StopReason::GueControl, inner, g->proto_ctype());
      return {};
    }
    const bool first_tunnel = tunnels_ == 0;
    if (auto r = g->remcsum(); r && first_tunnel) {
      L_.rco_start = std::uint32_t(inner + r->start);
      L_.rco_offset = std::uint32_t(inner + r->offset);
    }
    return direct_ip(g->proto_ctype(), inner, end, TunnelKind::Gue);
  }

  // An IP protocol carried directly (FOU, GUE): 4 → IPv4, 41 → IPv6, 47 → GRE.
  Status direct_ip(std::uint8_t proto, std::size_t off, std::size_t end, TunnelKind k) {
    if (proto == ipproto::kGre) return gre(off, end, k);
    if (proto != ipproto::kIpip && proto != ipproto::kIpv6) {
      stop(StopReason::UnknownIpProto, off, proto);
      return {};
    }
    const bool v4 = proto == ipproto::kIpip;
    if (!enter_tunnel(k, v4 ? ethertype::kIpv4 : ethertype::kIpv6, off)) return {};
    return v4 ? ipv4(off, end) : ipv6(off, end);
  }

  // ---- GRE (+ ERSPAN) ----
  Status gre(std::size_t off, std::size_t end, TunnelKind kind) {
    auto g = GreHeader<>::parse(win(off, end));
    if (!g) return at_offset(g.error(), off);
    const std::uint16_t flags = g->routing_present() ? layer_flag::kGreRouting : 0;
    if (!push({HeaderKind::Gre, level_, flags, std::uint32_t(off), std::uint32_t(g->header_len()),
               std::uint32_t(end)}))
      return {};
    const std::size_t pay = off + g->header_len();
    if (g->routing_present()) {
      stop(StopReason::GreRouting, pay, g->flags_word());
      return {};
    }
    if (g->version() != 0) {
      stop(StopReason::GreVersion, pay, g->version());
      return {};
    }
    if (!opt_.follow_tunnels) {
      stop(StopReason::TunnelsDisabled, pay, g->protocol());
      return {};
    }
    const std::uint16_t proto = g->protocol();
    switch (proto) {
      case ethertype::kErspanII: {
        std::size_t inner = pay;
        if (g->seq_present()) {  // type II; without S it is type I: Ethernet follows (V-14)
          auto e = ErspanIIHeader<>::parse(win(pay, end));
          if (!e) return at_offset(e.error(), pay);
          if (!push({HeaderKind::ErspanII, level_, 0, std::uint32_t(pay), erspan::kIILen,
                     std::uint32_t(end)}))
            return {};
          inner += erspan::kIILen;
        }
        if (!enter_tunnel(TunnelKind::Erspan, ethertype::kTeb, inner)) return {};
        return eth(inner, end);
      }
      case ethertype::kErspanIII: {
        auto e = ErspanIIIHeader<>::parse(win(pay, end));
        if (!e) return at_offset(e.error(), pay);
        if (!push({HeaderKind::ErspanIII, level_, 0, std::uint32_t(pay),
                   std::uint32_t(e->header_len()), std::uint32_t(end)}))
          return {};
        const std::size_t inner = pay + e->header_len();
        if (e->ft() != 0) {
          stop(StopReason::UnknownFrameType, inner, e->ft());
          return {};
        }
        if (!enter_tunnel(TunnelKind::Erspan, ethertype::kTeb, inner)) return {};
        return eth(inner, end);
      }
      case ethertype::kTeb:
      case ethertype::kIpv4:
      case ethertype::kIpv6:
        if (!enter_tunnel(kind, proto, pay)) return {};
        return ethertype(proto, pay, end);
      default:
        stop(StopReason::UnknownGreProto, pay, proto);
        return {};
    }
  }

  std::span<const std::uint8_t> buf_;
  const ParseOptions& opt_;
  Layout& L_;
  std::size_t tunnels_ = 0;
  std::uint8_t level_ = 0;
  // Inside a first IP fragment: inner length fields may exceed the bytes present (they are
  // clamped and flagged kClipped instead of failing).
  bool in_first_frag_ = false;
};

}  // namespace

Result<Layout> parse_frame(std::span<const std::uint8_t> frame, LinkType link,
                           const ParseOptions& opt) {
  Layout l;
  l.link = link;
  l.frame_len = std::uint32_t(frame.size());
  Parser p(frame, opt, l);
  if (auto err = p.run(link)) return *err;
  return l;
}

std::optional<ParseError> parse_frame_prefix(std::span<const std::uint8_t> frame, LinkType link,
                                             const ParseOptions& opt, Layout& out) {
  out = Layout{};
  out.link = link;
  out.frame_len = std::uint32_t(frame.size());
  Parser p(frame, opt, out);
  return p.run(link);
}

}  // namespace ofld::wire

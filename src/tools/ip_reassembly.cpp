// IPv4/IPv6 reassembly of a capture's fragments (see ip_reassembly.hpp and the file comment
// of include/ofld/tools/csum_check.hpp).
#include "ip_reassembly.hpp"

#include <algorithm>
#include <array>
#include <list>
#include <map>

#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::tools {

using wire::HeaderKind;
using wire::HeaderRef;
using wire::Layout;

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

struct IpReassembler::Impl {
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

  /// One fragment's way into the state: its events go to `out`; frames_ and dups_ name the
  /// fragments of the datagram it completes.
  struct Feeder {
    Impl& S;
    std::uint64_t frame_no;
    std::uint64_t now;
    std::vector<DatagramReport>& out;
    std::vector<std::uint64_t> frames_;  ///< frames of the datagram just completed
    std::vector<std::uint64_t> dups_;    ///< its ignored duplicates

    void event(const Held& h, FragFault f, bool with_this = true) {
      DatagramReport d = Impl::report(h, f);
      if (with_this && (d.frames.empty() || d.frames.back() != frame_no))
        d.frames.push_back(frame_no);
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
          if (!std::equal(f.payload.begin() + long(lo - f.off),
                          f.payload.begin() + long(hi - f.off),
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

IpReassembler::IpReassembler(const ReassemblyLimits& lim) : impl_(std::make_unique<Impl>()) {
  impl_->lim = lim;
  if (impl_->lim.max_datagrams == 0) impl_->lim.max_datagrams = 1;
  if (impl_->lim.max_fragments == 0) impl_->lim.max_fragments = 1;
}

IpReassembler::~IpReassembler() = default;

void IpReassembler::expire(std::uint64_t now_ns, std::vector<DatagramReport>& out) {
  impl_->expire(now_ns, out);
}

std::optional<IpReassembler::Reassembled> IpReassembler::feed(
    std::span<const std::uint8_t> buf, const Layout& lay, std::uint8_t base_level,
    const std::string& base_outer, std::uint64_t frame_no, std::uint64_t now_ns,
    std::vector<DatagramReport>& out) {
  auto f = find_fragment(buf, lay, base_level, base_outer);
  if (!f) return std::nullopt;
  Impl::Feeder fd{*impl_, frame_no, now_ns, out, {}, {}};
  Reassembled r;
  if (!fd.insert(*f, r.bytes)) return std::nullopt;
  DatagramReport& d = r.report;
  d.fault = FragFault::None;
  d.ipv6 = f->key.v6;
  d.level = f->key.level;
  d.id = f->key.id;
  d.length = std::uint32_t(r.bytes.size());
  d.frames = std::move(fd.frames_);
  d.duplicates = std::move(fd.dups_);
  r.outer = f->key.outer;
  return r;
}

std::size_t IpReassembler::datagrams_held() const noexcept { return impl_->index.size(); }
std::size_t IpReassembler::bytes_held() const noexcept { return impl_->bytes; }

std::vector<DatagramReport> IpReassembler::finish() {
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

}  // namespace ofld::tools

// The GRO engine: dev_gro_receive / napi_gro_complete / napi_gro_flush (net/core/gro.c).
#include "ofld/gro/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "ofld/core/csum_short.hpp"

namespace ofld::gro {

using offload::GroContext;
using offload::GroHeld;
using offload::Key;
namespace cs = ofld::csum;

Counters& Counters::operator+=(const Counters& o) noexcept {
  packets_in += o.packets_in;
  merged += o.merged;
  held += o.held;
  delivered_now += o.delivered_now;
  aggregates += o.aggregates;
  singles += o.singles;
  segments_out += o.segments_out;
  fast_merged += o.fast_merged;
  for (std::size_t i = 0; i < kGroReasonCount; ++i) {
    not_merged[i] += o.not_merged[i];
    completed[i] += o.completed[i];
  }
  return *this;
}

namespace {

inline std::uint16_t ld16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }
inline std::uint32_t ld32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}
inline std::uint64_t mix(std::uint64_t k) {  // murmur3 fmix64: a bijection of 64 bits
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
// Host-order loads: the hash's words, and the fast path's equality tests (equal bytes <=>
// equal words).
inline std::uint64_t raw64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline std::uint32_t raw32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline std::uint32_t fold(std::uint64_t x) { return std::uint32_t(x ^ (x >> 32)); }

// The per-(key, ethertype, protocol) starting state: secret for a secret key, so that the
// whole chain below is (and equal hashes of two flows are) a function of the key.
inline std::uint64_t hash_seed(std::uint64_t key, std::uint16_t type, std::uint8_t proto) {
  return mix(key ^ (std::uint64_t(type) << 8 | proto));
}

std::uint64_t random_key() {
  std::uint64_t k = 0;
  try {
    std::random_device rd;
    k = std::uint64_t(rd()) << 32 | rd();
  } catch (...) {
  }
  if (k == 0)  // no entropy source: still differs between engines and runs
    k = std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        std::uint64_t(reinterpret_cast<std::uintptr_t>(&k));
  return k;
}

}  // namespace

std::uint32_t flow_hash(std::span<const std::uint8_t> f, LinkLayer link, std::uint64_t key) noexcept {
  std::size_t off = 0;
  std::uint16_t type;
  if (link == LinkLayer::Ethernet) {
    if (f.size() < 14) return fold(hash_seed(key, 0, 0));
    type = ld16(f.data() + 12);
    off = 14;
  } else {
    if (f.empty()) return fold(hash_seed(key, 0, 0));
    type = (f[0] >> 4) == 6 ? 0x86DD : 0x0800;
  }
  std::uint64_t h;
  std::uint8_t proto = 0;
  std::size_t l4 = 0;
  if (type == 0x0800 && f.size() >= off + 20) {
    const std::uint8_t* ip = f.data() + off;
    proto = ip[9];
    h = mix(hash_seed(key, type, proto) ^ raw64(ip + 12));  // both addresses in one word
    if ((ld16(ip + 6) & 0x3FFF) == 0) l4 = off + std::size_t(ip[0] & 0x0F) * 4;  // not a fragment
  } else if (type == 0x86DD && f.size() >= off + 40) {
    const std::uint8_t* ip = f.data() + off;
    proto = ip[6];
    h = hash_seed(key, type, proto);
    for (int i = 8; i < 40; i += 8) h = mix(h ^ raw64(ip + i));
    l4 = off + 40;
  } else {
    return fold(hash_seed(key, type, 0));
  }
  if (l4 && (proto == 6 || proto == 17) && f.size() >= l4 + 4) h = mix(h ^ raw32(f.data() + l4));
  return fold(h);
}

Engine::Engine(EngineOptions opts, const offload::Registry& reg)
    : opts_(std::move(opts)),
      key_(opts_.config.flow_hash_key ? *opts_.config.flow_hash_key : random_key()),
      seed_tcp4_(hash_seed(key_, 0x0800, 6)),
      seed_tcp6_(hash_seed(key_, 0x86DD, 6)) {
  if (opts_.batch == 0) opts_.batch = 1;
  reg_ = &reg;
  namespace sg = core::skb_gso;
  const std::uint32_t t = opts_.gso_types;
  auto all = [t](std::uint32_t bits) { return (t & bits) == bits; };
  if (!all(sg::GRE | sg::GRE_CSUM | sg::IPXIP4 | sg::IPXIP6 | sg::UDP_TUNNEL |
           sg::UDP_TUNNEL_CSUM | sg::TCPV4 | sg::TCPV6 | sg::UDP_L4 | sg::FRAGLIST)) {
    // A table of only the protocols whose aggregates the output can carry.
    own_reg_ = std::make_unique<offload::Registry>();
    auto copy = [this, &reg](Key k, std::uint16_t n) {
      if (const auto* e = reg.find(k, n)) own_reg_->add(k, n, *e);
    };
    copy(Key::Ethertype, 0x0800);
    copy(Key::Ethertype, 0x86DD);
    copy(Key::IpProto, 17);  // UDP: the tunnel ports and plain UDP GRO are decided below
    if (all(sg::TCPV4 | sg::TCPV6)) copy(Key::IpProto, 6);
    else opts_.fast_path = false;
    if (all(sg::GRE | sg::GRE_CSUM)) {
      copy(Key::IpProto, 47);
      copy(Key::Ethertype, 0x6558);  // Ethernet over GRE (TEB)
    }
    if (all(sg::IPXIP4 | sg::IPXIP6)) {
      copy(Key::IpProto, 4);
      copy(Key::IpProto, 41);
    }
    if (all(sg::UDP_TUNNEL | sg::UDP_TUNNEL_CSUM)) {
      for (const auto& u : opts_.config.udp_tunnels) copy(Key::UdpPort, u.registry_port);
      copy(Key::Ethertype, 0x6558);  // VXLAN's inner Ethernet
    } else {
      opts_.config.udp_tunnels.clear();
    }
    if (!(t & sg::UDP_L4)) {
      opts_.config.udp_gro_fwd = false;
      opts_.config.udp_gro_socks.clear();
    }
    if (!(t & sg::FRAGLIST)) opts_.config.gro_fraglist = false;
    reg_ = own_reg_.get();
  }
  pool_.reserve(offload::kGroHashBuckets * offload::kMaxGroSkbs + 1);
  for (std::size_t i = 0; i < offload::kGroHashBuckets * offload::kMaxGroSkbs + 1; ++i) {
    pool_.push_back(std::make_unique<GroHeld>());
    free_.push_back(pool_.back().get());
  }
  for (auto& b : buckets_) b.list.reserve(offload::kMaxGroSkbs + 1);
  cand_.reserve(offload::kMaxGroSkbs + 1);
}

Engine::~Engine() = default;

GroHeld* Engine::alloc() {
  if (free_.empty()) {
    pool_.push_back(std::make_unique<GroHeld>());
    return pool_.back().get();
  }
  GroHeld* h = free_.back();
  free_.pop_back();
  return h;
}

void Engine::release(GroHeld* h) {
  h->pkt.discard();  // moved into the output already; no replacement storage needed
  h->agg.reset();
  free_.push_back(h);
}

void Engine::remove(Bucket& b, GroHeld* h) {
  auto it = std::find(b.list.begin(), b.list.end(), h);
  if (it != b.list.end()) b.list.erase(it);
}

std::size_t Engine::held_flows() const noexcept {
  std::size_t n = 0;
  for (const auto& b : buckets_) n += b.list.size();
  return n;
}

std::vector<core::Packet> Engine::take_output() noexcept {
  std::vector<core::Packet> v;
  v.swap(out_);
  return v;
}

// napi_gro_complete (G-8).
void Engine::complete(GroHeld* h, GroReason why) {
  if (h == last_) last_ = nullptr;
  ctr_.completed[std::size_t(why)]++;
  ctr_.segments_out += h->count;
  core::Packet& p = h->pkt;
  if (h->count == 1) {
    ctr_.singles++;
    p.gso.size = 0;
  } else {
    ctr_.aggregates++;
    p.encapsulation = false;
    GroContext ctx;
    ctx.cfg = &opts_.config;
    ctx.reg = reg_;
    ctx.cp = h;
    const std::uint32_t nhoff = opts_.link == LinkLayer::Ethernet ? 14 : 0;
    const std::uint16_t type =
        opts_.link == LinkLayer::Ethernet ? ld16(p.data() + 12)
                                          : ((p.data()[0] >> 4) == 6 ? 0x86DD : 0x0800);
    p.protocol = type;
    if (opts_.link == LinkLayer::Ethernet) p.set_mac_header(0);
    offload::gro_call_complete(ctx, Key::Ethertype, type, nhoff);
  }
  out_.push_back(std::move(p));
  release(h);
}

// ---- the TCP fast path ------------------------------------------------------------------
//
// The overwhelmingly common packet: Ethernet (or raw IP) + IPv4 without options or IPv6
// without extension headers + TCP, not GSO, no frag_list, every header in the linear head,
// arriving for a flow that is already held. fast_receive() checks, in one pass over the
// fixed headers, every condition under which the general chain (eth → inet/ipv6 → tcp
// hooks) would merge this packet into that held flow, and then performs the same merge
// (gro_append_payload, the T-15 flag OR, the N-15 fixed-ID mark, the T-16/T-17 completion
// of the aggregate, the same counters). Whenever a condition is not certain it returns
// false having changed nothing, and the general path runs as if the fast path did not exist.
// The general path stays the reference (tests/unit/gro_fastpath_test.cpp compares the two).
//
// Equality tests use raw native-order loads (equal bytes ⇔ equal words); masks are written
// for little-endian hosts, the only ones this file is built for (static_assert below).
namespace {
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "fast path masks assume little endian");
inline std::uint16_t raw16(const std::uint8_t* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
using offload::V16;
inline V16 ld128(const std::uint8_t* p) {
  V16 v;
  std::memcpy(&v, p, 16);
  return v;
}
// The header template of a held plain TCP flow (GroHeld::fast_mask): which bytes of the
// first `hdrs` must be equal in an arriving packet for the merge rules to pass.
void build_fast_mask(GroHeld& h, std::size_t l2, bool v6, std::size_t hdrs) {
  std::uint8_t m[16 * 8];
  std::memset(m, 0xFF, sizeof m);
  const std::size_t ip = l2, th = l2 + (v6 ? 40 : 20);
  if (v6) {
    m[ip + 4] = m[ip + 5] = 0;  // payload_len (N-6, checked against the length)
  } else {
    m[ip + 2] = m[ip + 3] = 0;    // tot_len (N-2)
    m[ip + 4] = m[ip + 5] = 0;    // ID (N-15, computed)
    m[ip + 10] = m[ip + 11] = 0;  // header checksum (N-1, verified)
  }
  std::memset(m + th + 4, 0, 4);     // sequence number (T-11)
  m[th + 13] = std::uint8_t(~0x09);  // flags but FIN and PSH (T-6)
  std::memset(m + th + 16, 0, 4);    // checksum (T-1) and urgent pointer (not compared)
  const std::size_t n = (hdrs + 15) / 16;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t off = i + 1 < n ? 16 * i : hdrs - 16;
    std::memcpy(&h.fast_mask[i], m + off, 16);
  }
  h.fast_words = std::uint8_t(n);
}
}  // namespace

namespace {
constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kUrg = 0x20,
                       kCwr = 0x80;
}  // namespace

// The arriving packet's fixed headers as fast_receive read them.
struct Engine::FastPkt {
  const std::uint8_t* d;   // data(): the link header (or IP on raw-IP links)
  const std::uint8_t* ip;
  const std::uint8_t* th;
  std::size_t hl, len_all, thoff, hdrs;
  std::uint32_t sig;       // the layout, as GroHeld::fast_sig
  std::uint8_t flags;
  bool v6, eth;
};

namespace {
// The template (GroHeld::fast_mask): every byte that G-2 (MAC header), N-3/N-8 (addresses,
// protocol, IPv6 version and flow label), T-3 (ports), N-12/N-10 (TOS, DF, TTL; traffic
// class, hop limit), T-6 (flags but FIN/PSH, data offset, window), T-7 (ack) and T-8
// (options) require equal, compared 16 bytes at a time; and the same VLAN tag (G-2).
inline bool same_template(const core::Packet& pkt, const std::uint8_t* d, std::size_t hdrs,
                          const GroHeld& c) {
  const std::uint8_t* cd = c.pkt.data();
  const std::size_t n = c.fast_words;
  V16 acc = (ld128(d + hdrs - 16) ^ ld128(cd + hdrs - 16)) & c.fast_mask[n - 1];
  for (std::size_t i = 0; i + 1 < n; ++i) acc |= (ld128(d + 16 * i) ^ ld128(cd + 16 * i)) & c.fast_mask[i];
  std::uint64_t w[2];
  std::memcpy(w, &acc, 16);
  return (w[0] | w[1]) == 0 && c.pkt.vlan_present == pkt.vlan_present &&
         c.pkt.vlan_tci == pkt.vlan_tci;
}
}  // namespace

bool Engine::fast_receive(core::Packet& pkt) {
  FastPkt f;
  f.eth = opts_.link == LinkLayer::Ethernet;
  const std::size_t l2 = f.eth ? 14 : 0;
  f.hl = pkt.headlen();
  if (f.hl < l2 + 40 || pkt.gso.size != 0 || !pkt.frag_list().empty()) return false;  // G-4
  f.d = pkt.data();
  f.ip = f.d + l2;
  f.len_all = pkt.len();
  if (f.eth) {
    const std::uint16_t type = raw16(f.d + 12);
    if (type == 0x0008)  // 0x0800 on the wire
      f.v6 = false;
    else if (type == 0xDD86)
      f.v6 = true;
    else
      return false;
  } else {
    f.v6 = (f.ip[0] >> 4) == 6;
  }
  // N-1 (0x45, no fragment, header checksum), N-2 (tot_len); N-6 (payload_len), N-7 (TCP
  // right after the fixed header: the template compares the next-header byte with the flow's).
  if (!f.v6) {
    if (f.ip[0] != 0x45 || (raw16(f.ip + 6) & 0xFFBF) != 0) return false;
    if (ld16(f.ip + 2) != std::uint16_t(f.len_all - l2)) return false;
    if (!cs::ipv4_header_csum_ok(f.ip)) return false;
    f.thoff = l2 + 20;
  } else {
    if ((f.ip[0] >> 4) != 6 || ld16(f.ip + 4) != f.len_all - (l2 + 40)) return false;
    f.thoff = l2 + 40;
  }
  f.th = f.d + f.thoff;
  if (f.hl < f.thoff + 20) return false;  // the fixed TCP header must be in the head to be read
  const std::size_t thlen = std::size_t(f.th[12] >> 4) * 4;  // T-2
  f.hdrs = f.thoff + thlen;
  if (thlen < 20 || f.hl < f.hdrs) return false;
  f.flags = f.th[13];
  if (f.flags & kCwr) return false;  // T-5 (as on 6.18)
  // The flow's layout (GroHeld::fast_sig): not encapsulated, not fraglist, TCP, this family,
  // L3 at l2, these header lengths.
  f.sig = std::uint32_t(f.hdrs) | (f.v6 ? 1u << 16 : 0) | 1u << 17;

  // The flow the general chain would pick (G-2: the first candidate, newest first, of the
  // bucket, with the same hash, MAC header and VLAN tag; N-3/N-8 and T-3 then require the
  // same addresses, protocol and ports). When the flow of the last fast merge or hold is the
  // newest of its bucket and matches the template, it is that flow: equal keys have equal
  // hashes (flow_hash reads only key bytes, wherever they lie). Otherwise fast_search.
  GroHeld* p = last_;
  if (p && p->fast_sig == f.sig && p->pkt.headlen() >= f.hdrs) {
    Bucket& b = buckets_[p->hash & (offload::kGroHashBuckets - 1)];
    if (b.list.back() == p && same_template(pkt, f.d, f.hdrs, *p)) return fast_merge(pkt, f, p, b);
  }
  return fast_search(pkt, f);
}

__attribute__((noinline)) bool Engine::fast_search(core::Packet& pkt, const FastPkt& f) {
  const std::uint8_t* ip = f.ip;
  // = flow_hash(frame, link, key_) of a TCP packet (another protocol: not for the fast path)
  std::uint64_t h;
  if (!f.v6) {
    if (ip[9] != 6) return false;
    h = mix(seed_tcp4_ ^ raw64(ip + 12));
  } else {
    if (ip[6] != 6) return false;
    h = mix(seed_tcp6_ ^ raw64(ip + 8));
    h = mix(h ^ raw64(ip + 16));
    h = mix(h ^ raw64(ip + 24));
    h = mix(h ^ raw64(ip + 32));
  }
  const std::uint32_t hash = fold(mix(h ^ raw32(f.th))) & opts_.flow_hash_mask;
  Bucket& b = buckets_[hash & (offload::kGroHashBuckets - 1)];
  const std::size_t l2 = f.eth ? 14 : 0;
  const std::uint64_t mac_a = f.eth ? raw64(f.d) : 0, mac_b = f.eth ? raw64(f.d + 6) : 0;
  const std::uint32_t ports = raw32(f.th);
  for (auto it = b.list.rbegin(); it != b.list.rend(); ++it) {
    GroHeld* c = *it;
    if (c->hash != hash) continue;
    const std::uint8_t* cd = c->pkt.data();
    if (c->pkt.headlen() < f.hdrs) return false;  // not a layout the fast path knows
    if (f.eth && ((raw64(cd) ^ mac_a) | (raw64(cd + 6) ^ mac_b))) continue;
    if (c->pkt.vlan_present != pkt.vlan_present || c->pkt.vlan_tci != pkt.vlan_tci) continue;
    const std::uint8_t* cip = cd + l2;
    // The family (IPv4 version/IHL byte; IPv6 version nibble in the masked first word),
    // protocol and addresses, as inet_gro_receive / ipv6_gro_receive compare them (N-3, N-8).
    if (!f.v6) {
      if (cip[0] != 0x45 || cip[9] != 6 || raw64(cip + 12) != raw64(ip + 12)) continue;
    } else {
      if (((raw32(ip) ^ raw32(cip)) & 0xFFFF0FF0u) || cip[6] != 6 || ip[6] != 6 ||
          ((raw64(ip + 8) ^ raw64(cip + 8)) | (raw64(ip + 16) ^ raw64(cip + 16)) |
           (raw64(ip + 24) ^ raw64(cip + 24)) | (raw64(ip + 32) ^ raw64(cip + 32))))
        continue;
    }
    if (raw32(cd + f.thoff) != ports) continue;
    // The chain's p: merge only when it is a fast flow of this layout and the template holds.
    if (c->fast_sig != f.sig || !same_template(pkt, f.d, f.hdrs, *c)) return false;
    return fast_merge(pkt, f, c, b);
  }
  return false;  // a new flow: the general path holds it
}

// The rules that compute (N-15 ID, T-10 size, T-11 sequence, G-16 limit, T-1 checksum),
// then the merge.
inline bool Engine::fast_merge(core::Packet& pkt, const FastPkt& f, GroHeld* p, Bucket& b) {
  const std::size_t l2 = f.eth ? 14 : 0;
  std::uint8_t* pd = p->pkt.data();
  std::uint8_t* th2 = pd + f.thoff;
  bool mark_fixedid = false;
  if (!f.v6) {
    const std::uint16_t delta = std::uint16_t(ld16(f.ip + 4) - ld16(pd + l2 + 4));
    mark_fixedid = p->count == 1 && delta == 0;
    const std::uint16_t want = ((p->ip_fixedid & 1) || mark_fixedid) ? 0 : p->count;
    if (delta != want) return false;
  }
  const std::size_t len = f.len_all - f.hdrs;
  const std::size_t mss = p->pkt.gso.size;
  if (len - 1 >= mss) return false;
  const std::size_t plen_all = p->pkt.len();
  if (ld32(th2 + 4) + std::uint32_t(plen_all - f.hdrs) != ld32(f.th + 4)) return false;
  const std::uint32_t max = f.v6 ? opts_.config.gro_max_size : opts_.config.gro_ipv4_max_size;
  if (plen_all - l2 + len >= max) return false;
  // T-1 (G-11..G-13) after every header check, so that a failure costs nothing;
  // Unnecessary (index 1: csum_cnt > 0) has nothing to validate.
  if (pkt.csum.index() != 1 && !fast_csum_ok(pkt, f)) return false;

  // Commit: the merge (G-19, G-20), T-15, the fixed-ID mark, then T-16..T-18.
  if (mark_fixedid) p->ip_fixedid |= 1;
  if (f.hl == f.hdrs && p->pkt.frag_list().empty()) {
    // No payload in the head: gro_append_payload reduces to taking the fragments over
    // (same fragment list, same storage reservation), done here without the call.
    core::Packet& agg = p->pkt;
    const std::size_t have = agg.nr_frags(), want = have + pkt.nr_frags();
    if (have <= core::detail::FragVec::kInline && want > core::detail::FragVec::kInline)
      agg.reserve_frags(std::max<std::size_t>(want, 64));
    agg.append_frags_from(pkt);
  } else {
    offload::gro_append_payload(pkt, f.hdrs, *p);
  }
  pkt.discard();
  p->count = std::uint16_t(p->count + 1);
  th2[13] |= std::uint8_t(f.flags & (kFin | kPsh));
  ctr_.merged++;
  ctr_.fast_merged++;
  last_ = p;
  if ((len < mss) | ((f.flags & (kUrg | kPsh | kRst | kSyn | kFin)) != 0)) {
    remove(b, p);
    complete(p, (f.flags & (kUrg | kPsh | kRst | kSyn | kFin)) ? GroReason::FinalFlags
                                                               : GroReason::ShortSegment);
  }
  return true;
}

// T-1 for CHECKSUM_NONE, COMPLETE and PARTIAL (G-11..G-13, G-5, G-15).
__attribute__((noinline)) bool Engine::fast_csum_ok(const core::Packet& pkt, const FastPkt& f) const {
  const std::uint8_t* ip = f.ip;
  const std::uint8_t* th = f.th;
  const bool v6 = f.v6;
  const std::uint32_t l4len = std::uint32_t(f.len_all - f.thoff);
  auto pseudo = [&] {
    return v6 ? cs::csum_ipv6_nofold_inline(ip + 8, ip + 24, l4len, 6)
              : cs::csum_tcpudp_nofold_inline(ip + 12, ip + 16, l4len, 6);
  };
  const std::size_t idx = pkt.csum.index();
  if (idx == 0) {  // None: sum [thoff, end) over the head and the fragments
    const std::size_t hn = f.hl - f.thoff;
    cs::wsum w;
    if (hn == 20 || hn == 32) {
      // The usual head (TCP header without options or with timestamps) and the
      // pseudo-header in one 64-bit sum of host-order words (RFC 1071 §2(B): byte-order
      // independent), folded once; the same value as ps + csum_partial(th, hn).
      namespace sd = cs::short_detail;
      std::uint64_t a = v6 ? sd::add64c(sd::add64c(raw64(ip + 8), raw64(ip + 16)),
                                        sd::add64c(raw64(ip + 24), raw64(ip + 32)))
                           : raw64(ip + 12);
      a = sd::add64c(a, raw64(th));
      a = sd::add64c(a, raw64(th + 8));
      a = sd::add64c(a, raw32(th + 16));
      if (hn == 32) a = sd::add64c(sd::add64c(a, raw64(th + 20)), raw32(th + 28));
      // zero + protocol (bytes 00 06) and the length as two 16-bit words, host order
      a = sd::add64c(a, 0x0600u + __builtin_bswap16(std::uint16_t(l4len)) +
                            __builtin_bswap16(std::uint16_t(l4len >> 16)));
      w = sd::finish(a, 0);
    } else {
      w = cs::csum_add(pseudo(), hn <= 64 ? cs::csum_partial_short(th, hn) : cs::csum_partial(th, hn));
    }
    std::size_t done = hn;
    for (const core::Frag& fr : pkt.frags()) {
      w = cs::csum_block_add(w, cs::csum_partial(fr.buf->bytes.data() + fr.off, fr.len), done);
      done += fr.len;
    }
    return cs::csum_fold(w) == 0;
  }
  if (idx == 3) {  // Partial: fine when csum_start is at or after the TCP header
    const auto& part = *std::get_if<core::CsumPartial>(&pkt.csum);
    return std::int64_t(part.csum_start) - pkt.data_pos() >= std::int64_t(f.thoff);
  }
  // Complete: the device sum minus the headers pulled before TCP (G-5, G-15)
  cs::wsum c = std::get_if<core::CsumComplete>(&pkt.csum)->csum;
  if (f.eth) c = cs::csum_sub(c, cs::csum_partial_short(f.d, 14));
  if (v6) c = cs::csum_sub(c, cs::csum_partial_short(ip, 40));
  return cs::csum_fold(cs::csum_add(pseudo(), c)) == 0;
}

void Engine::receive(core::Packet&& pkt, std::uint64_t now_ns) {
  if (opts_.fast_path && opts_.config.gro && fast_receive(pkt)) {
    ctr_.packets_in++;
    if (++in_batch_ >= opts_.batch) poll_end(now_ns);
    return;
  }
  receive_general(pkt, now_ns);
}

void Engine::receive_batch(std::span<core::Packet> pkts, std::uint64_t now_ns) {
  for (core::Packet& p : pkts) receive(std::move(p), now_ns);
}

__attribute__((noinline)) void Engine::receive_general(core::Packet& pkt, std::uint64_t now_ns) {
  ctr_.packets_in++;
  if (!opts_.config.gro) {  // G-1
    ctr_.not_merged[std::size_t(GroReason::GroDisabled)]++;
    ctr_.delivered_now++;
    out_.push_back(std::move(pkt));
    if (++in_batch_ >= opts_.batch) poll_end(now_ns);
    return;
  }
  const bool eth = opts_.link == LinkLayer::Ethernet;
  const std::size_t l2 = eth ? 14 : 0;

  GroContext ctx;
  ctx.cfg = &opts_.config;
  ctx.reg = reg_;
  ctx.skb = &pkt;
  ctx.data_offset = std::uint32_t(l2);

  std::uint16_t type = 0;
  const std::uint8_t* mac = nullptr;
  if (!pkt.may_pull(l2 + 1)) {
    ctx.flush_skb(GroReason::Truncated);
  } else {
    mac = pkt.data();
    type = eth ? ld16(mac + 12) : ((mac[0] >> 4) == 6 ? 0x86DD : 0x0800);
  }
  // The flow hash stands for the device's RSS hash, a function of the packet's bytes: the
  // first 128 are hashed wherever they lie (head or fragments), so that every packet of a
  // flow gets the same hash whatever its geometry.
  std::uint32_t hash;
  if (pkt.headlen() >= 128 || pkt.headlen() == pkt.len()) {
    hash = flow_hash({pkt.data(), std::min<std::size_t>(pkt.headlen(), 128)}, opts_.link, key_);
  } else {
    std::uint8_t first[128];
    const std::size_t n = std::min<std::size_t>(pkt.len(), sizeof first);
    (void)pkt.copy_bits(0, {first, n});
    hash = flow_hash({first, n}, opts_.link, key_);
  }
  hash &= opts_.flow_hash_mask;
  Bucket& b = buckets_[hash & (offload::kGroHashBuckets - 1)];

  // G-2 gro_list_prepare: candidates newest first.
  cand_.clear();
  for (auto it = b.list.rbegin(); it != b.list.rend(); ++it) {
    GroHeld* p = *it;
    bool same = p->hash == hash && mac;
    // The link header: Ethernet's MAC header holds the ethertype (the L3 family); a raw-IP
    // link has none, so the family is the version nibble (G-2, and the engine's dispatch).
    if (same && eth) same = std::memcmp(mac, p->pkt.data(), 14) == 0;
    if (same && !eth) same = ((mac[0] ^ p->pkt.data()[0]) & 0xF0) == 0;
    if (same) same = p->pkt.vlan_present == pkt.vlan_present && p->pkt.vlan_tci == pkt.vlan_tci;
    p->same_flow = same;
    cand_.push_back(p);
  }
  ctx.candidates = cand_;

  // G-4 initial state.
  if (!pkt.frag_list().empty()) ctx.flush_skb(GroReason::HasFragList);
  if (pkt.is_gso()) {
    ctx.count = pkt.gso.segs ? pkt.gso.segs : 1;
    const bool tcp = pkt.gso.type & (core::skb_gso::TCPV4 | core::skb_gso::TCPV6);
    if (!tcp || (pkt.gso.type & core::skb_gso::DODGY)) ctx.flush_skb(GroReason::GsoInput);
  }
  // G-5 checksum state import.
  if (const auto* c = std::get_if<core::CsumComplete>(&pkt.csum)) {
    ctx.csum_valid = true;
    ctx.csum = c->csum;
    // Not when the frame holds no more than its link header (mac is null then: nothing to pull).
    if (l2 && mac && pkt.headlen() >= l2) ctx.csum = cs::csum_sub(ctx.csum, cs::csum_partial(mac, l2, 0));
  } else if (const auto* u = std::get_if<core::CsumUnnecessary>(&pkt.csum)) {
    ctx.csum_cnt = std::uint8_t(u->level.value() + 1);
  }

  if (mac) offload::gro_call_receive(ctx, Key::Ethertype, type);  // G-3, G-6
  if (ctx.skb_reason == GroReason::NoHandler) ctx.flush = true;

  // G-7 outcome.
  if (ctx.pp) {
    GroHeld* pp = ctx.pp;
    remove(b, pp);
    complete(pp, ctx.pp_reason == GroReason::None ? GroReason::Flags : ctx.pp_reason);
  }
  if (ctx.same_flow) {
    ctr_.merged++;
    pkt.discard();  // its payload is in the aggregate (or it joined the frag_list)
  } else if (ctx.flush) {
    ctr_.not_merged[std::size_t(ctx.skb_reason == GroReason::None ? GroReason::NoHandler
                                                                  : ctx.skb_reason)]++;
    ctr_.delivered_now++;
    out_.push_back(std::move(pkt));
  } else {
    if (b.list.size() >= offload::kMaxGroSkbs) {
      GroHeld* oldest = b.list.front();
      b.list.erase(b.list.begin());
      complete(oldest, GroReason::TableFull);
    }
    ctr_.held++;
    ctr_.not_merged[std::size_t(ctx.skb_reason == GroReason::None ? GroReason::NewFlow
                                                                  : ctx.skb_reason)]++;
    GroHeld* h = alloc();
    h->hash = hash;
    h->count = ctx.count;
    h->data_offset = std::uint16_t(ctx.data_offset);
    h->network_offsets = ctx.network_offsets;
    h->transport_offset = ctx.transport_offset;
    h->proto = ctx.proto;
    h->ip_fixedid = 0;
    h->encap_mark = ctx.encap_mark;
    h->is_flist = ctx.is_flist;  // T-4 / U-3 fraglist mode of the new flow
    h->is_ipv6 = eth ? type == 0x86DD : (pkt.data()[0] >> 4) == 6;
    h->same_flow = false;
    h->age_ns = now_ns;
    // The fast path's layout (IPv4 without options or IPv6 without extension headers,
    // then TCP, all in the head) and template; other flows stay on the general path.
    const std::uint8_t* hip = pkt.data() + l2;
    const std::size_t hth = l2 + (h->is_ipv6 ? 40 : 20);
    h->fast_sig = 0;
    if (ctx.proto == 6 && !ctx.encap_mark && !ctx.is_flist && ctx.network_offsets[0] == l2 &&
        ctx.transport_offset == hth && ctx.data_offset >= hth + 20 &&
        ctx.data_offset <= hth + 60 && pkt.headlen() >= ctx.data_offset &&
        (h->is_ipv6 ? hip[6] == 6 : hip[0] == 0x45 && hip[9] == 6)) {
      h->fast_sig = ctx.data_offset | (h->is_ipv6 ? 1u << 16 : 0) | 1u << 17;
      build_fast_mask(*h, l2, h->is_ipv6, ctx.data_offset);
      last_ = h;
    }
    if (!pkt.is_gso()) pkt.gso.size = std::uint16_t(pkt.len() - ctx.data_offset);
    h->pkt = std::move(pkt);
    b.list.push_back(h);
  }
  if (++in_batch_ >= opts_.batch) poll_end(now_ns);
}

void Engine::flush_older(std::uint64_t now_ns, GroReason why) {
  for (auto& b : buckets_) {
    while (!b.list.empty()) {
      GroHeld* h = b.list.front();  // oldest first
      if (now_ns - h->age_ns < opts_.flush_timeout_ns) break;
      b.list.erase(b.list.begin());
      complete(h, why);
    }
  }
}

void Engine::poll_end(std::uint64_t now_ns) {
  in_batch_ = 0;
  if (opts_.flush_timeout_ns == 0) {
    flush_all();
    return;
  }
  flush_older(now_ns, GroReason::Timeout);
}

void Engine::tick(std::uint64_t now_ns) {
  if (opts_.flush_timeout_ns) flush_older(now_ns, GroReason::Timeout);
}

void Engine::flush_all() {
  for (auto& b : buckets_) {
    for (GroHeld* h : b.list) complete(h, GroReason::PollEnd);
    b.list.clear();
  }
}

namespace {
// Ones'-complement finish of a 16-bit field over [start, end) (skb_checksum_help on bytes).
void finish_at(core::Packet& p, std::size_t start, std::size_t field, bool mangle0) {
  const std::uint16_t f = cs::csum_fold(p.checksum(start, p.len() - start, 0));
  std::uint16_t v = (f == 0 && mangle0) ? 0xFFFF : f;
  std::uint8_t* q = p.header(field, 2).data();
  if (!q) return;
  q[0] = std::uint8_t(v >> 8);
  q[1] = std::uint8_t(v);
}
}  // namespace

void finish_checksums(core::Packet& p) {
  const auto* part = std::get_if<core::CsumPartial>(&p.csum);
  if (!part) return;
  const int start = part->csum_start - p.data_pos();
  if (start < 0 || std::size_t(start) + part->csum_offset + 2 > p.len()) return;
  finish_at(p, std::size_t(start), std::size_t(start) + part->csum_offset, true);
  // Outer checksums that complete left as seeds (UDP tunnel with checksum) or stale (GRE C).
  if (p.encapsulation && p.transport_header != core::kNoHeader && p.network_header != core::kNoHeader) {
    const int l3 = p.network_offset(), l4 = p.transport_offset();
    const std::uint8_t* ip = p.header(std::size_t(l3), 40).data();
    if (!ip) ip = p.header(std::size_t(l3), 20).data();
    if (!ip) return;
    const bool v6 = (ip[0] >> 4) == 6;
    if (p.gso.type & core::skb_gso::UDP_TUNNEL_CSUM) {
      std::uint8_t* uh = p.header(std::size_t(l4), 8).data();
      if (!uh) return;
      uh[6] = uh[7] = 0;
      const std::uint32_t ulen = std::uint32_t(p.len() - std::size_t(l4));
      ip = p.data() + l3;
      const cs::wsum ps = v6 ? cs::csum_ipv6_nofold(ip + 8, ip + 24, ulen, 17, 0)
                             : cs::csum_tcpudp_nofold(ip + 12, ip + 16, ulen, 17, 0);
      std::uint16_t v = cs::csum_fold(p.checksum(std::size_t(l4), ulen, ps));
      if (v == 0) v = 0xFFFF;
      uh = p.data() + l4;
      uh[6] = std::uint8_t(v >> 8);
      uh[7] = std::uint8_t(v);
    } else if (p.gso.type & core::skb_gso::GRE) {
      std::uint8_t* gh = p.header(std::size_t(l4), 8).data();
      if (gh && (gh[0] & 0x80)) {
        gh[4] = gh[5] = 0;
        finish_at(p, std::size_t(l4), std::size_t(l4) + 4, false);
      }
    }
  }
}

}  // namespace ofld::gro

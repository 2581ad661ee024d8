// libFuzzer target: Geneve GRO and GSO (docs/geneve.md GN-2..GN-6), with options of every
// length, the O and C bits, other versions, reserved bits, protocol types and truncation.
//
// Input: byte 0 = configuration (bit 0 outer IPv6, bit 1 outer UDP checksum, bits 2-3 inner:
// Ethernet+IPv4, Ethernet+IPv6, bare IPv4, bare IPv6; bit 4 build frames non-linear (54 head
// bytes, fragments of 700); bits 5-7 batch size − 1). Then records of 6 bytes plus options:
//   [flags: byte 1 of the Geneve header, O C rsvd] [ver(2) optlen(6)] [proto selector]
//   [vni low byte] [payload length / 8] [cut: 0 = whole frame, else cut to that many
//   bytes past the Geneve base header] then optlen × 4 option bytes (zeros when the input ends).
// The frames are built with valid checksums (outer UDP, inner IPv4 and TCP) and consecutive
// TCP sequence numbers, so that GRO has real streams to merge and the fuzzer's bytes steer
// the Geneve header: what the rules test.
//
// Properties (any violation aborts):
//  * never crashes, never reads out of bounds (ASan/UBSan);
//  * accounting: every frame is merged, held or delivered at once; completions account for
//    every held or merged frame;
//  * G-7: a frame delivered at once (not aggregated: O bit, other version, unknown protocol
//    type, truncated) is byte-identical to its input; GN-2: such a frame with the O bit or a
//    version other than 0 is never merged;
//  * GN-3: an aggregate's Geneve header is its first frame's, and every frame merged into it
//    had exactly those header bytes;
//  * GN-6 / X-36: GSO of every aggregate (no device features) gives gso_segs segments, each with
//    the aggregate's Geneve header, and their TCP payloads concatenated are the aggregate's.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/core/csum.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;

void put16(Bytes& b, std::size_t at, std::uint16_t v) {
  b[at] = std::uint8_t(v >> 8);
  b[at + 1] = std::uint8_t(v);
}
std::uint16_t ld16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

std::uint16_t fold(std::uint32_t s) {
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return std::uint16_t(s);
}
std::uint32_t sum(const std::uint8_t* p, std::size_t n, std::uint32_t s = 0) {
  for (std::size_t i = 0; i + 1 < n; i += 2) s += ld16(p + i);
  if (n & 1) s += std::uint32_t(p[n - 1]) << 8;
  return fold(s);
}

// L4 checksum (RFC 768 / 793 / 8200 pseudo-header) of l4[0, len) under the IP header at ip.
std::uint16_t l4_csum(const Bytes& b, std::size_t ip, bool v6, std::size_t l4, std::size_t len,
                      std::uint8_t proto) {
  std::uint32_t s = v6 ? sum(&b[ip + 8], 32) : sum(&b[ip + 12], 8);
  s += proto + std::uint32_t(len >> 16) + std::uint32_t(len & 0xffff);
  s = sum(&b[l4], len, s);
  return std::uint16_t(~fold(s));
}

// IP header (no options) at b[at]: version, lengths, protocol, addresses from `salt`.
void ip_header(Bytes& b, std::size_t at, bool v6, std::size_t payload_len, std::uint8_t proto,
               std::uint16_t id, std::uint8_t salt) {
  if (!v6) {
    b[at] = 0x45;
    put16(b, at + 2, std::uint16_t(20 + payload_len));
    put16(b, at + 4, id);
    b[at + 6] = 0x40;  // DF
    b[at + 8] = 64;
    b[at + 9] = proto;
    b[at + 12] = 10, b[at + 13] = salt, b[at + 15] = 1;
    b[at + 16] = 10, b[at + 17] = salt, b[at + 19] = 2;
    put16(b, at + 10, std::uint16_t(~sum(&b[at], 20)));
  } else {
    b[at] = 0x60;
    put16(b, at + 4, std::uint16_t(payload_len));
    b[at + 6] = proto;
    b[at + 7] = 64;
    b[at + 8] = 0xfd, b[at + 9] = salt, b[at + 23] = 1;
    b[at + 24] = 0xfd, b[at + 25] = salt, b[at + 39] = 2;
  }
}

struct Rec {
  Bytes frame;
  std::size_t gh = 0;      ///< Geneve header offset
  std::size_t gh_len = 0;  ///< its full length (may exceed a cut frame)
  bool oam_or_ver = false;
};

Rec build(std::uint8_t cfg, const std::uint8_t* r, const Bytes& opts, std::uint32_t seq,
          std::uint16_t id) {
  const bool ov6 = cfg & 1, ucsum = cfg & 2;
  const unsigned kind = (cfg >> 2) & 3;
  const bool ieth = kind < 2, iv6 = kind & 1;
  static constexpr std::uint16_t kProtos[] = {0x6558, 0x0800, 0x86DD, 0x88B5};
  std::uint16_t proto = (r[2] & 4) ? kProtos[r[2] & 3]
                                   : ieth ? 0x6558 : iv6 ? 0x86DD : 0x0800;
  const std::size_t pay = std::size_t(r[4]) * 8;
  const std::size_t oip = 14, ol4 = oip + (ov6 ? 40 : 20), gh = ol4 + 8;
  const std::size_t gh_len = 8 + opts.size();
  const std::size_t imac = gh + gh_len, iip = imac + (ieth ? 14 : 0), il4 = iip + (iv6 ? 40 : 20);
  Bytes b(il4 + 20 + pay, 0);
  b[12] = ov6 ? 0x86 : 0x08, b[13] = ov6 ? 0xDD : 0x00;
  b[0] = 2, b[6] = 4;
  // Geneve header
  b[gh] = std::uint8_t((r[1] & 0xc0) | (opts.size() / 4));
  b[gh + 1] = r[0];
  put16(b, gh + 2, proto);
  b[gh + 4] = 0, b[gh + 5] = 0, b[gh + 6] = r[3], b[gh + 7] = (r[2] & 8) ? r[2] : 0;
  std::copy(opts.begin(), opts.end(), b.begin() + long(gh + 8));
  // inner
  if (ieth) {
    b[imac] = 2, b[imac + 5] = 1, b[imac + 6] = 2, b[imac + 11] = 2;
    put16(b, imac + 12, iv6 ? 0x86DD : 0x0800);
  }
  ip_header(b, iip, iv6, 20 + pay, 6, std::uint16_t(1000 + id), 1);
  put16(b, il4, 5555), put16(b, il4 + 2, 80);
  b[il4 + 4] = std::uint8_t(seq >> 24), b[il4 + 5] = std::uint8_t(seq >> 16);
  b[il4 + 6] = std::uint8_t(seq >> 8), b[il4 + 7] = std::uint8_t(seq);
  b[il4 + 12] = 0x50, b[il4 + 13] = 0x10;
  put16(b, il4 + 14, 1000);
  for (std::size_t i = 0; i < pay; ++i) b[il4 + 20 + i] = std::uint8_t(seq + i);
  put16(b, il4 + 16, l4_csum(b, iip, iv6, il4, 20 + pay, 6));
  // outer
  ip_header(b, oip, ov6, b.size() - ol4, 17, id, 7);
  put16(b, ol4, 40000), put16(b, ol4 + 2, 6081), put16(b, ol4 + 4, std::uint16_t(b.size() - ol4));
  if (ucsum || ov6) {
    std::uint16_t c = l4_csum(b, oip, ov6, ol4, b.size() - ol4, 17);
    put16(b, ol4 + 6, c == 0 ? 0xffff : c);
  }
  Rec out;
  out.gh = gh;
  out.gh_len = gh_len;
  out.oam_or_ver = (r[0] & 0x80) || (r[1] >> 6) != 0;
  if (r[5] != 0 && gh + 8 + r[5] < b.size()) b.resize(gh + 8 + r[5]);  // truncated record
  out.frame = std::move(b);
  return out;
}

ofld::core::Packet make(const Bytes& b, bool nonlinear) {
  return nonlinear && b.size() > 54 ? ofld::core::Packet::from_bytes_frags(b, 54, 700)
                                    : ofld::core::Packet::from_bytes(b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t cfg = data[0];
  ofld::gro::EngineOptions o;
  o.config.udp_tunnels.push_back({6081, 6081, false, false});
  o.config.flow_hash_key = 0;
  o.batch = std::size_t(1) << 30;
  const std::size_t batch = std::size_t(((cfg >> 5) & 7) + 1);
  ofld::gro::Engine e(o);

  std::vector<Rec> in;
  std::size_t i = 1;
  std::uint32_t seq = 1;
  while (i + 6 <= size && in.size() < 64) {
    const std::uint8_t* r = data + i;
    i += 6;
    Bytes opts(std::size_t(r[1] & 0x3f) * 4, 0);
    for (auto& x : opts) x = i < size ? data[i++] : 0;
    in.push_back(build(cfg, r, opts, seq, std::uint16_t(in.size())));
    seq += std::uint32_t(r[4]) * 8;
  }
  struct Out {
    Bytes bytes;
    long direct = -1;
    ofld::core::Packet pkt;
  };
  std::vector<Out> out;
  auto take = [&](long direct_idx) {
    auto& v = e.output();
    for (std::size_t k = 0; k < v.size(); ++k) {
      Out x;
      x.bytes = v[k].to_bytes();
      if (direct_idx >= 0 && k + 1 == v.size()) x.direct = direct_idx;
      x.pkt = std::move(v[k]);
      out.push_back(std::move(x));
    }
    v.clear();
  };
  for (std::size_t k = 0; k < in.size(); ++k) {
    const auto dn = e.counters().delivered_now;
    const auto mg = e.counters().merged;
    e.receive(make(in[k].frame, cfg & 0x10));
    if (in[k].oam_or_ver && e.counters().merged != mg) std::abort();  // GN-2
    take(e.counters().delivered_now != dn ? long(k) : -1);
    if ((k + 1) % batch == 0) {
      e.poll_end();
      take(-1);
    }
  }
  e.flush_all();
  take(-1);

  const auto& c = e.counters();
  if (c.merged + c.held + c.delivered_now != in.size()) std::abort();
  if (c.segments_out + c.delivered_now != in.size()) std::abort();

  for (auto& x : out) {
    if (x.direct >= 0) {  // G-7
      if (x.bytes != in[std::size_t(x.direct)].frame) std::abort();
      continue;
    }
    const std::uint16_t n = x.pkt.gso.size ? x.pkt.gso.segs : 1;
    if (n < 2) continue;
    // An aggregate: every input is one of ours, so the Geneve header is at the same offset.
    const Rec& r0 = in[0];
    const std::size_t gh = r0.gh;
    if (x.bytes.size() < gh + 8) std::abort();
    const std::size_t gh_len = 8 + std::size_t(x.bytes[gh] & 0x3f) * 4;
    if (x.bytes.size() < gh + gh_len) std::abort();
    const Bytes hdr(x.bytes.begin() + long(gh), x.bytes.begin() + long(gh + gh_len));
    if ((hdr[0] >> 6) != 0 || (hdr[1] & 0x80)) std::abort();  // GN-2
    // GN-3: at least n inputs carry exactly this header.
    std::size_t same = 0;
    for (const auto& r : in)
      if (r.frame.size() >= gh + gh_len && std::equal(hdr.begin(), hdr.end(), r.frame.begin() + long(gh)))
        ++same;
    if (same < n) std::abort();
    // GN-6 / X-36: GSO of the aggregate.
    const int th = x.pkt.inner_transport_header - x.pkt.data_pos();
    if (th <= 0 || std::size_t(th) + 20 > x.bytes.size()) std::abort();
    const std::size_t thl = std::size_t(x.bytes[std::size_t(th) + 12] >> 4) * 4;
    const Bytes agg_payload(x.bytes.begin() + long(std::size_t(th) + thl), x.bytes.end());
    ofld::core::Device dev;
    auto res = ofld::gso::gso_segment(std::move(x.pkt), ofld::core::Features{}, dev);
    if (!res.ok() || res.segs.size() != n) std::abort();
    Bytes cat;
    for (const auto& s : res.segs) {
      const Bytes b = s.to_bytes();
      if (b.size() < std::size_t(th) + thl) std::abort();
      if (!std::equal(hdr.begin(), hdr.end(), b.begin() + long(gh))) std::abort();
      cat.insert(cat.end(), b.begin() + long(std::size_t(th) + thl), b.end());
    }
    if (cat != agg_payload) std::abort();
  }
  return 0;
}

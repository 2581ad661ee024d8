// libFuzzer target: arbitrary frame sequences through the GRO engine.
//
// Input: byte 0 = configuration (bit 0 UDP GRO forwarding, bit 1 VXLAN socket 4789 with RCO,
// bit 2 RCO no-partial, bit 3 GUE socket 6080, bits 4-6 batch size − 1, bit 7 GRO_FRAGLIST
// (T-4, U-3: fraglist flows, members counted by gso_segs like any aggregate), then frames as
// [u16 length][bytes]... (the length's top bit: build that frame non-linear, 54 head bytes then
// fragments of 700, so the fast path's fragment hand-over and geometry-free flow hash are fuzzed)
// and, when one byte is left after the last whole length field, that byte b sets the size
// limit (G-16: gro_max_size and gro_ipv4_max_size = 1024 + 64 × b), so that aggregates of a
// 4 KiB input reach it and the fast path's hold of a flow's next aggregate is fuzzed
//
// Properties checked (any violation aborts):
//  * never crashes (ASan/UBSan);
//  * accounting: every input frame is merged, held or delivered at once, and the completions
//    account for every held or merged frame;
//  * G-7: a packet GRO does not take (flushed: hard reject, bad checksum, flagged ...) is
//    delivered at once and byte-identical to its input (RCO no-partial rewrites undone, W-23);
//  * G-8: a completion of count 1 is byte-identical to the input frame it holds;
//  * in order per flow: for every GRO flow (the identity of spec §5.5: MAC header, IPv4
//    protocol + addresses or IPv6 version/flow label + addresses + next header + extension
//    header bytes, L4 ports) of plain TCP, and of plain UDP (not to a configured tunnel port),
//    the completions, in delivery order, carry the payload bytes of that flow's taken input
//    frames in input order: a completion of count n holds exactly the concatenated payloads
//    of the next n taken frames of its flow. Frames delivered at once (previous bullet) may
//    overtake a held flow (K-5), so they are not part of the sequence.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "ofld/gro/engine.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;

struct Chunk {
  std::string key;  ///< GRO flow identity
  Bytes payload;    ///< L4 payload bytes (up to the IP length: padding excluded)
  bool ok = false;
};

inline std::uint16_t ld16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

// Parse Ethernet / IPv4 (no options) or IPv6 (+ Hop-by-Hop, Routing, Dest-Opts headers) /
// TCP or UDP. UDP to a port in `skip_udp` (tunnel sockets) is not a plain UDP flow.
Chunk l4_payload(const Bytes& f, std::uint16_t skip_a, std::uint16_t skip_b) {
  Chunk c;
  if (f.size() < 14) return c;
  const std::uint16_t type = ld16(f.data() + 12);
  const std::size_t off = 14;
  std::size_t end = 0, l4 = 0;
  std::uint8_t proto = 0;
  c.key.assign(f.begin(), f.begin() + 14);
  if (type == 0x0800) {
    if (f.size() < off + 20) return c;
    const std::size_t ihl = std::size_t(f[off] & 0x0F) * 4;
    const std::size_t tot = ld16(f.data() + off + 2);
    if ((f[off] >> 4) != 4 || ihl < 20 || tot < ihl || off + tot > f.size()) return c;
    proto = f[off + 9];
    c.key.push_back(char(proto));
    c.key.append(f.begin() + long(off) + 12, f.begin() + long(off) + 20);
    end = off + tot;
    l4 = off + ihl;
  } else if (type == 0x86DD) {
    if (f.size() < off + 40) return c;
    end = off + 40 + ld16(f.data() + off + 4);
    if (end > f.size()) return c;
    c.key.push_back(char(f[off] & 0xF0));
    c.key.push_back(char(f[off + 1] & 0x0F));
    c.key.append(f.begin() + long(off) + 2, f.begin() + long(off) + 4);
    c.key.push_back(char(f[off + 6]));
    c.key.append(f.begin() + long(off) + 8, f.begin() + long(off) + 40);
    proto = f[off + 6];
    l4 = off + 40;
    while (proto == 0 || proto == 43 || proto == 60) {
      if (l4 + 2 > end) return c;
      const std::size_t n = (std::size_t(f[l4 + 1]) + 1) * 8;
      if (l4 + n > end) return c;
      proto = f[l4];
      c.key.append(f.begin() + long(l4), f.begin() + long(l4 + n));
      l4 += n;
    }
  } else {
    return c;
  }
  std::size_t hl = 0;
  if (proto == 6) {
    if (l4 + 20 > end) return c;
    hl = std::size_t(f[l4 + 12] >> 4) * 4;
    if (hl < 20 || l4 + hl > end) return c;
  } else if (proto == 17) {
    if (l4 + 8 > end) return c;
    const std::uint16_t dport = ld16(f.data() + l4 + 2);
    if ((skip_a && dport == skip_a) || (skip_b && dport == skip_b)) return c;
    hl = 8;
  } else {
    return c;
  }
  c.key.push_back(char(proto));
  c.key.append(f.begin() + long(l4), f.begin() + long(l4) + 4);
  c.payload.assign(f.begin() + long(l4 + hl), f.begin() + long(end));
  c.ok = true;
  return c;
}

ofld::core::Packet make(const Bytes& b, bool nonlinear) {
  return nonlinear && b.size() > 54 ? ofld::core::Packet::from_bytes_frags(b, 54, 700)
                                    : ofld::core::Packet::from_bytes(b);
}

struct Out {
  Bytes bytes;
  long direct = -1;     ///< input index when delivered at once, else -1 (a completion)
  std::uint16_t count = 1;
};

// The metadata an output carries besides its bytes, as one comparable string.
std::string meta_of(const ofld::core::Packet& p) {
  std::string m;
  auto add = [&](long long v) { m += std::to_string(v) + ","; };
  add(long(p.ip_summed()));
  if (const auto* pc = std::get_if<ofld::core::CsumPartial>(&p.csum)) add(pc->csum_start), add(pc->csum_offset);
  if (const auto* cc = std::get_if<ofld::core::CsumComplete>(&p.csum)) add(cc->csum);
  if (const auto* uc = std::get_if<ofld::core::CsumUnnecessary>(&p.csum)) add(uc->level.value());
  add(p.gso.size), add(p.gso.segs), add(p.gso.type), add(p.data_pos());
  add(p.mac_header), add(p.network_header), add(p.transport_header);
  add(p.inner_mac_header), add(p.inner_network_header), add(p.inner_transport_header);
  add(p.protocol), add(p.inner_protocol), add(p.encapsulation), add(p.remcsum_offload);
  add(p.headlen()), add(long(p.nr_frags())), add(long(p.frag_list().size()));
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t cfg = data[0];
  ofld::gro::EngineOptions o;
  o.config.udp_gro_fwd = cfg & 1;
  if (cfg & 2) o.config.udp_tunnels.push_back({4789, 4789, true, bool(cfg & 4)});
  if (cfg & 8) o.config.udp_tunnels.push_back({6080, 6080, true, bool(cfg & 4)});
  o.config.gro_fraglist = cfg & 0x80;
  o.config.flow_hash_key = 0;  // both engines below hash alike (the fast path compared)
  const std::size_t batch = std::size_t(((cfg >> 4) & 7) + 1);
  // The poll end is driven here (the engine's own batch counter does the same thing) so that
  // each receive's outputs can be told apart: completions first, then the skb itself when it
  // was delivered at once.
  o.batch = std::size_t(1) << 30;
  std::vector<Bytes> in;
  std::vector<bool> split;  // built non-linear: 54 bytes of head, fragments of 700
  std::size_t i = 1;
  while (i + 2 <= size && in.size() < 256) {
    // a 15-bit length; the top bit asks for the non-linear geometry
    split.push_back(data[i] & 0x80);
    std::size_t n = std::size_t((data[i] & 0x7F) << 8 | data[i + 1]);
    i += 2;
    n = std::min(n, size - i);
    in.emplace_back(data + i, data + i + n);
    i += n;
  }
  if (i + 1 == size) o.config.gro_max_size = o.config.gro_ipv4_max_size = 1024 + 64u * data[i];
  ofld::gro::Engine e(o);
  std::vector<Out> out;
  std::vector<std::string> x_meta;  // metadata of each output, for the fast-path comparison
  auto take = [&](long direct_idx) {
    auto& v = e.output();
    for (std::size_t k = 0; k < v.size(); ++k) {
      Out x;
      x.bytes = v[k].to_bytes();
      x_meta.push_back(meta_of(v[k]));
      if (direct_idx >= 0 && k + 1 == v.size())
        x.direct = direct_idx;
      else if (v[k].gso.size != 0)
        x.count = v[k].gso.segs;
      out.push_back(std::move(x));
    }
    v.clear();
  };
  for (std::size_t k = 0; k < in.size(); ++k) {
    const auto dn = e.counters().delivered_now;
    e.receive(make(in[k], split[k]));
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

  // G-7: delivered at once and untouched.
  std::vector<bool> direct(in.size(), false);
  for (const auto& x : out) {
    if (x.direct < 0) continue;
    direct[std::size_t(x.direct)] = true;
    if (x.bytes != in[std::size_t(x.direct)]) std::abort();
  }

  // Per flow, in order.
  const std::uint16_t skip_a = (cfg & 2) ? 4789 : 0, skip_b = (cfg & 8) ? 6080 : 0;
  struct Flow {
    std::vector<std::size_t> taken;  // input indices, in order
    std::size_t next = 0;
  };
  std::map<std::string, Flow> flows;
  for (std::size_t k = 0; k < in.size(); ++k) {
    if (direct[k]) continue;
    auto ch = l4_payload(in[k], skip_a, skip_b);
    if (ch.ok) flows[ch.key].taken.push_back(k);
  }
  for (const auto& x : out) {
    if (x.direct >= 0) continue;
    auto ch = l4_payload(x.bytes, skip_a, skip_b);
    if (!ch.ok) continue;
    Flow& fl = flows[ch.key];
    if (fl.next + x.count > fl.taken.size()) std::abort();  // more segments than were taken
    if (x.count == 1 && x.bytes != in[fl.taken[fl.next]]) std::abort();  // G-8
    Bytes want;
    for (std::size_t s = 0; s < x.count; ++s) {
      auto part = l4_payload(in[fl.taken[fl.next + s]], skip_a, skip_b);
      want.insert(want.end(), part.payload.begin(), part.payload.end());
    }
    if (ch.payload != want) std::abort();
    fl.next += x.count;
  }
  for (const auto& [k, fl] : flows)
    if (fl.next != fl.taken.size()) std::abort();  // a taken frame never came out

  // The TCP fast path changes nothing: the same input through an engine without it (the
  // general chain alone) gives the same outputs, byte for byte and in order, with the same
  // GSO metadata and checksum state, and the same counters.
  ofld::gro::EngineOptions og = o;
  og.fast_path = false;
  ofld::gro::Engine g(og);
  std::vector<ofld::core::Packet> gout;
  for (std::size_t k = 0; k < in.size(); ++k) {
    g.receive(make(in[k], split[k]));
    if ((k + 1) % batch == 0) g.poll_end();
    for (auto& q : g.output()) gout.push_back(std::move(q));
    g.output().clear();
  }
  g.flush_all();
  for (auto& q : g.output()) gout.push_back(std::move(q));
  if (gout.size() != out.size()) std::abort();
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (gout[k].to_bytes() != out[k].bytes) std::abort();
    if (x_meta[k] != meta_of(gout[k])) std::abort();
  }
  auto same_counters = [&c](const ofld::gro::Engine& x) {
    const auto& xc = x.counters();
    return xc.merged == c.merged && xc.held == c.held && xc.delivered_now == c.delivered_now &&
           xc.aggregates == c.aggregates && xc.singles == c.singles &&
           xc.segments_out == c.segments_out && xc.not_merged == c.not_merged &&
           xc.completed == c.completed;
  };
  if (!same_counters(g)) std::abort();

  // receive_batch (the fast path a run of packets at a time) over the whole input in one
  // call, the engine's own poll end every `batch` packets: the same as packet by packet.
  ofld::gro::EngineOptions ob = o;
  ob.batch = batch;
  ofld::gro::Engine b(ob);
  std::vector<ofld::core::Packet> all;
  for (std::size_t k = 0; k < in.size(); ++k) all.push_back(make(in[k], split[k]));
  b.receive_batch(all);
  for (const auto& q : all)
    if (q.len() != 0) std::abort();  // every input is taken (merged, held or delivered)
  b.flush_all();
  if (b.output().size() != out.size()) std::abort();
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (b.output()[k].to_bytes() != out[k].bytes) std::abort();
    if (x_meta[k] != meta_of(b.output()[k])) std::abort();
  }
  if (!same_counters(b)) std::abort();
  return 0;
}

// libFuzzer target: arbitrary frame sequences through the GRO engine.
// Input: byte 0 = configuration (bit 0 UDP GRO forwarding, bit 1 VXLAN socket 4789 with RCO,
// bit 2 RCO no-partial, bit 3 GUE socket 6080, bits 4-7 batch size − 1), then frames as
// [u16 length][bytes]... Properties: never crashes (ASan/UBSan); every input frame is
// accounted for (merged + held + delivered); per TCP flow (Ethernet/IP/TCP frames, addresses
// and ports as the key) the output carries exactly the input payload bytes (same count, same
// byte multiset), and the first bytes of every output frame's payload are the payload start
// of some input frame of that flow.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "ofld/gro/engine.hpp"

namespace {

struct Chunk {
  std::string key;
  std::vector<std::uint8_t> payload;
  bool ok = false;
};

Chunk tcp_payload(const std::vector<std::uint8_t>& f) {
  Chunk c;
  if (f.size() < 14) return c;
  const std::uint16_t type = std::uint16_t(f[12] << 8 | f[13]);
  std::size_t off = 14, end = 0, l4 = 0;
  if (type == 0x0800) {
    if (f.size() < off + 20) return c;
    const std::size_t ihl = std::size_t(f[off] & 0x0F) * 4;
    const std::size_t tot = std::size_t(f[off + 2] << 8 | f[off + 3]);
    if ((f[off] >> 4) != 4 || ihl < 20 || tot < ihl || off + tot > f.size() || f[off + 9] != 6) return c;
    c.key.assign(f.begin() + long(off) + 12, f.begin() + long(off) + 20);
    end = off + tot;
    l4 = off + ihl;
  } else if (type == 0x86DD) {
    if (f.size() < off + 40) return c;
    end = off + 40 + std::size_t(f[off + 4] << 8 | f[off + 5]);
    if (end > f.size()) return c;
    std::uint8_t nh = f[off + 6];
    l4 = off + 40;
    while (nh == 0 || nh == 43 || nh == 60) {
      if (l4 + 2 > end) return c;
      const std::uint8_t n2 = f[l4];
      l4 += (std::size_t(f[l4 + 1]) + 1) * 8;
      nh = n2;
    }
    if (nh != 6) return c;
    c.key.assign(f.begin() + long(off) + 8, f.begin() + long(off) + 40);
  } else {
    return c;
  }
  if (l4 + 20 > end) return c;
  const std::size_t doff = std::size_t(f[l4 + 12] >> 4) * 4;
  if (doff < 20 || l4 + doff > end) return c;
  c.key.append(f.begin() + long(l4), f.begin() + long(l4) + 4);
  c.key.append(f.begin(), f.begin() + 14);
  c.payload.assign(f.begin() + long(l4 + doff), f.begin() + long(end));
  c.ok = true;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t cfg = data[0];
  ofld::gro::EngineOptions o;
  o.config.udp_gro_fwd = cfg & 1;
  if (cfg & 2) o.config.udp_tunnels.push_back({4789, 4789, true, bool(cfg & 4)});
  if (cfg & 8) o.config.udp_tunnels.push_back({6080, 6080, true, bool(cfg & 4)});
  o.batch = std::size_t((cfg >> 4) + 1);
  ofld::gro::Engine e(o);
  std::vector<std::vector<std::uint8_t>> in;
  std::size_t i = 1;
  while (i + 2 <= size && in.size() < 256) {
    std::size_t n = std::size_t(data[i] << 8 | data[i + 1]);
    i += 2;
    n = std::min(n, size - i);
    in.emplace_back(data + i, data + i + n);
    i += n;
  }
  std::vector<std::vector<std::uint8_t>> out;
  for (auto& f : in) {
    e.receive(ofld::core::Packet::from_bytes(f));
    for (auto& p : e.output()) out.push_back(p.to_bytes());
    e.output().clear();
  }
  e.flush_all();
  for (auto& p : e.output()) out.push_back(p.to_bytes());

  const auto& c = e.counters();
  if (c.merged + c.held + c.delivered_now != in.size()) std::abort();
  if (c.segments_out + c.delivered_now != in.size()) std::abort();

  // Payload accounting per TCP flow, only where no tunnel/UDP GRO can rewrite outer frames.
  if (cfg & 0x0F) return 0;
  std::map<std::string, std::vector<std::uint8_t>> a, b;
  std::map<std::string, std::vector<std::vector<std::uint8_t>>> starts;
  for (auto& f : in) {
    auto ch = tcp_payload(f);
    if (!ch.ok) continue;
    a[ch.key].insert(a[ch.key].end(), ch.payload.begin(), ch.payload.end());
    starts[ch.key].push_back(ch.payload);
  }
  for (auto& f : out) {
    auto ch = tcp_payload(f);
    if (!ch.ok) continue;
    b[ch.key].insert(b[ch.key].end(), ch.payload.begin(), ch.payload.end());
    bool found = false;
    for (auto& s : starts[ch.key])
      if (s.size() <= ch.payload.size() && std::equal(s.begin(), s.end(), ch.payload.begin())) {
        found = true;
        break;
      }
    if (!found) std::abort();
  }
  for (auto& [k, v] : a) {
    auto w = b[k];
    if (v.size() != w.size()) std::abort();
    std::sort(v.begin(), v.end());
    std::sort(w.begin(), w.end());
    if (v != w) std::abort();
  }
  return 0;
}

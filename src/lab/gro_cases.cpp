// Built-in GRO cases (spec §13.1 gro.c table, K-7 observations) as Ethernet frames.
#include <algorithm>

#include "ofld/core/csum.hpp"
#include "ofld/lab/gro_conformance.hpp"
#include "ofld/lab/kernel_oracle.hpp"
#include "ofld/lab/kernel_oracle_vxlan_gro.hpp"

namespace ofld::lab {

namespace {

namespace cs = ofld::csum;
using Bytes = std::vector<std::uint8_t>;

struct T {
  bool v6 = false;
  std::size_t payload = 100;
  std::uint32_t seq_off = 0;
  std::uint32_t ack = 100;
  std::uint8_t flags = 0x10;
  std::vector<std::uint8_t> options;
  std::uint8_t ttl = 8, tos = 0;
  std::uint16_t id = 0;
  bool df = true, mf = false;
  std::vector<std::uint8_t> ip_options, v6_ext;
  std::uint8_t v6_ext_type = 60;
  bool bad = false;
  std::uint16_t sport = 1500;
};

void p16(Bytes& v, std::size_t at, std::uint16_t x) {
  v[at] = std::uint8_t(x >> 8);
  v[at + 1] = std::uint8_t(x);
}

Bytes frame(const T& t) {
  Bytes f(14);
  std::copy(KernelGro::kVeth1Mac.begin(), KernelGro::kVeth1Mac.end(), f.begin());
  std::copy(KernelGro::kVeth0Mac.begin(), KernelGro::kVeth0Mac.end(), f.begin() + 6);
  p16(f, 12, t.v6 ? 0x86DD : 0x0800);
  const std::size_t thlen = 20 + t.options.size();
  Bytes th(thlen + t.payload, 'a');
  p16(th, 0, t.sport);
  p16(th, 2, 8000);
  p16(th, 4, std::uint16_t((100 + t.seq_off) >> 16));
  p16(th, 6, std::uint16_t(100 + t.seq_off));
  p16(th, 8, std::uint16_t(t.ack >> 16));
  p16(th, 10, std::uint16_t(t.ack));
  th[12] = std::uint8_t((thlen / 4) << 4);
  th[13] = t.flags;
  p16(th, 14, 65535);
  p16(th, 16, 0);
  p16(th, 18, 0);
  std::copy(t.options.begin(), t.options.end(), th.begin() + 20);
  Bytes ip;
  cs::wsum ps;
  if (!t.v6) {
    const std::size_t ihl = 20 + t.ip_options.size();
    ip.assign(ihl, 0);
    ip[0] = std::uint8_t(0x40 | ihl / 4);
    ip[1] = t.tos;
    p16(ip, 2, std::uint16_t(ihl + th.size()));
    p16(ip, 4, t.id);
    p16(ip, 6, std::uint16_t((t.df ? 0x4000 : 0) | (t.mf ? 0x2000 : 0)));
    ip[8] = t.ttl;
    ip[9] = 6;
    const std::uint8_t s[4] = {192, 168, 1, 200}, d[4] = {192, 168, 1, 100};
    std::copy(s, s + 4, ip.begin() + 12);
    std::copy(d, d + 4, ip.begin() + 16);
    std::copy(t.ip_options.begin(), t.ip_options.end(), ip.begin() + 20);
    p16(ip, 10, cs::ip_compute_csum(ip.data(), ihl));
    ps = cs::csum_tcpudp_nofold(ip.data() + 12, ip.data() + 16, std::uint32_t(th.size()), 6, 0);
  } else {
    ip.assign(40, 0);
    ip[0] = std::uint8_t(0x60 | (t.tos >> 4));
    ip[1] = std::uint8_t(t.tos << 4);
    p16(ip, 4, std::uint16_t(th.size() + t.v6_ext.size()));
    ip[6] = t.v6_ext.empty() ? 6 : t.v6_ext_type;
    ip[7] = t.ttl;
    ip[8] = 0xfd; ip[9] = 0xaa; ip[23] = 2;
    ip[24] = 0xfd; ip[25] = 0xaa; ip[39] = 1;
    ps = cs::csum_ipv6_nofold(ip.data() + 8, ip.data() + 24, std::uint32_t(th.size()), 6, 0);
    if (!t.v6_ext.empty()) {
      Bytes e = t.v6_ext;
      e[0] = 6;
      ip.insert(ip.end(), e.begin(), e.end());
    }
  }
  std::uint16_t c = cs::csum_fold(cs::csum_partial(th.data(), th.size(), ps));
  if (t.bad) c = std::uint16_t(c - 1);
  p16(th, 16, c);
  f.insert(f.end(), ip.begin(), ip.end());
  f.insert(f.end(), th.begin(), th.end());
  return f;
}

T base(bool v6, std::size_t payload, std::uint32_t seq) {
  T t;
  t.v6 = v6;
  t.payload = payload;
  t.seq_off = seq;
  return t;
}

Bytes fin(bool v6) {
  T t = base(v6, 0, 100000);
  t.flags = 0x11;
  return frame(t);
}

std::vector<std::uint8_t> ts(std::uint32_t v, int order) {
  Bytes t{8, 10, std::uint8_t(v >> 24), std::uint8_t(v >> 16), std::uint8_t(v >> 8), std::uint8_t(v), 0, 0, 0, 0};
  Bytes o;
  if (order == 0) { o = {1, 1}; o.insert(o.end(), t.begin(), t.end()); }
  else if (order == 1) { o = {1}; o.insert(o.end(), t.begin(), t.end()); o.push_back(1); }
  else { o = t; o.push_back(1); o.push_back(1); }
  return o;
}

}  // namespace

std::vector<GroCase> builtin_gro_cases() {
  std::vector<GroCase> v;
  for (bool v6 : {false, true}) {
    const std::string fam = v6 ? "ipv6/" : "ipv4/";
    auto add = [&](std::string name, std::vector<Bytes> fr, std::vector<std::size_t> exp) {
      fr.push_back(fin(v6));
      v.push_back({fam + name, std::move(fr), std::move(exp)});
    };
    add("data_same", {frame(base(v6, 100, 0)), frame(base(v6, 100, 100))}, {200});
    add("data_lrg_sml", {frame(base(v6, 100, 0)), frame(base(v6, 50, 100))}, {150});
    add("data_sml_lrg", {frame(base(v6, 50, 0)), frame(base(v6, 100, 50))}, {50, 100});
    {
      T a = base(v6, 0, 0), c = a;
      c.ack = 101;
      add("ack", {frame(a), frame(a), frame(c)}, {0, 0, 0});
    }
    for (auto [name, flag, nopay, exp] :
         std::vector<std::tuple<std::string, std::uint8_t, bool, std::vector<std::size_t>>>{
             {"flags_psh", 0x08, false, {300, 200}},
             {"flags_syn", 0x02, true, {200, 0, 200}},
             {"flags_rst", 0x04, true, {200, 0, 200}},
             {"flags_urg", 0x20, true, {200, 0, 200}}}) {
      std::vector<Bytes> fr;
      for (int i = 0; i < 5; ++i) {
        T t = base(v6, 100, 100u * unsigned(i));
        if (i == 2) {
          t.flags |= flag;
          if (nopay) { t.payload = 0; t.seq_off = 0; }
        }
        fr.push_back(frame(t));
      }
      add(name, fr, exp);
    }
    {
      std::vector<Bytes> fr;
      for (int i = 0; i < 5; ++i) {
        T t = base(v6, 100, 100u * unsigned(i));
        if (i == 1 || i == 2) t.flags |= 0x80;
        fr.push_back(frame(t));
      }
      add("flags_cwr", fr, {100, 100, 100, 200});  // measured on 6.18
    }
    {
      T b = base(v6, 100, 100);
      b.bad = true;
      add("tcp_csum", {frame(base(v6, 100, 0)), frame(b)}, {100, 100});
    }
    add("tcp_seq", {frame(base(v6, 100, 0)), frame(base(v6, 100, 101))}, {100, 100});
    {
      std::vector<Bytes> fr;
      const std::uint32_t tv[5] = {0, 0, 100, 100, 100};
      const int ord[5] = {0, 0, 0, 1, 2};
      for (int i = 0; i < 5; ++i) {
        T t = base(v6, 100, 100u * unsigned(i));
        t.options = ts(tv[i], ord[i]);
        fr.push_back(frame(t));
      }
      add("tcp_ts", fr, {200, 100, 100, 100});
    }
    {
      T a = base(v6, 100, 0), b = base(v6, 100, 100), c = base(v6, 100, 200);
      a.options = b.options = ts(0, 0);
      c.options = {1, 3, 3, 8};
      add("tcp_opt", {frame(a), frame(b), frame(c)}, {200, 100});
    }
    {
      T b = base(v6, 100, 100);
      b.tos = 0x02;
      add("ip_ecn", {frame(base(v6, 100, 0)), frame(b)}, {100, 100});
      b.tos = v6 ? 0xF0 : 1;
      add("ip_tos", {frame(base(v6, 100, 0)), frame(b)}, {100, 100});
      b.tos = 0;
      b.ttl = 7;
      add("ip_ttl", {frame(base(v6, 100, 0)), frame(b)}, {100, 100});
    }
    if (!v6) {
      T b = base(false, 100, 100);
      b.ip_options.assign(40, 0);
      b.ip_options[0] = 68; b.ip_options[1] = 40; b.ip_options[2] = 5;
      add("ip_opt", {frame(base(false, 100, 0)), frame(b), frame(base(false, 100, 200))}, {100, 100, 100});
      T m = base(false, 100, 100);
      m.mf = true;
      add("ip_frag4", {frame(base(false, 100, 0)), frame(m)}, {100, 100});
      auto ids = [&](std::string name, bool df, std::vector<std::uint16_t> id, std::vector<std::size_t> exp) {
        std::vector<Bytes> fr;
        for (std::size_t i = 0; i < id.size(); ++i) {
          T t = base(false, 100, 100u * unsigned(i));
          t.df = df;
          t.id = id[i];
          fr.push_back(frame(t));
        }
        add(name, fr, exp);
      };
      ids("ip_id_df1_inc", true, {8, 9}, {200});
      ids("ip_id_df1_fixed", true, {8, 8}, {200});
      ids("ip_id_df0_inc", false, {8, 9}, {200});
      ids("ip_id_df0_fixed", false, {8, 8}, {200});  // [newer] / K-7
      ids("ip_id_df1_inc_fixed", true, {8, 9, 9}, {200, 100});
      ids("ip_id_df1_fixed_inc", true, {8, 8, 9}, {200, 100});
      ids("k7_id_wrap", true, {65535, 0, 1}, {300});
    } else {
      T a = base(true, 100, 0), b = base(true, 100, 100);
      a.v6_ext = b.v6_ext = Bytes(8, 0);
      a.v6_ext[2] = b.v6_ext[2] = 1;
      a.v6_ext[3] = b.v6_ext[3] = 4;
      add("ip_v6ext_same", {frame(a), frame(b)}, {});
      a.v6_ext = Bytes(8, 0);
      b.v6_ext = Bytes(8, 0x11);
      b.v6_ext[1] = 0;
      add("ip_v6ext_diff", {frame(a), frame(b)}, {});
    }
    {
      const std::size_t mss = 4036;
      for (int plus = 0; plus < 2; ++plus) {
        std::vector<Bytes> fr;
        std::uint32_t seq = 0;
        for (int i = 0; i < 16; ++i) { fr.push_back(frame(base(v6, mss, seq))); seq += mss; }
        const std::size_t rem = (v6 ? 899 : 919) + std::size_t(plus);
        fr.push_back(frame(base(v6, rem, seq)));
        fr.push_back(frame(base(v6, rem, seq + std::uint32_t(rem) + 1000)));
        if (plus)
          add("large_rem", fr, {64576, rem, rem});
        else
          add("large_max", fr, {v6 ? 65475u : 65495u, rem});
      }
    }
    {  // K-7: 45 × 1460 splits 44 + 1
      std::vector<Bytes> fr;
      for (int i = 0; i < 45; ++i) fr.push_back(frame(base(v6, 1460, 1460u * unsigned(i))));
      add("k7_45x1460", fr, {});
    }
    {  // two interleaved flows
      std::vector<Bytes> fr;
      for (int i = 0; i < 6; ++i) {
        T t = base(v6, 100, 100u * unsigned(i / 2));
        t.sport = std::uint16_t(1500 + (i & 1));
        fr.push_back(frame(t));
      }
      add("two_flows", fr, {});
    }
  }
  // BIG TCP (G-16, G-17, N-5): 8000-byte segments of one flow, in one NAPI poll, on a veth
  // whose GRO limits are raised (gro_ipv4_max_size over netlink), and with the defaults.
  // Observed on 6.18.44: IPv4 aggregates to the limit with total length 0; IPv6 stops below
  // 65536 bytes even with gro_max_size 185000 (GroConfig::ipv6_big_tcp off).
  auto big = [](bool v6, std::size_t n) {
    std::vector<Bytes> fr;
    for (std::size_t i = 0; i < n; ++i) fr.push_back(frame(base(v6, 8000, std::uint32_t(8000 * i))));
    return fr;
  };
  auto add_big = [&](std::string name, bool v6, std::size_t n, std::vector<std::size_t> exp,
                     std::uint32_t limit) {
    GroCase c{"big_tcp/" + std::move(name), big(v6, n), std::move(exp)};
    (v6 ? c.gro_max_size : c.gro_ipv4_max_size) = limit;
    v.push_back(std::move(c));
  };
  add_big("ipv4", false, 20, {160000}, 185000);
  add_big("ipv4_limit", false, 18, {72000, 72000}, 80000);  // 10 x 8000 + 40 reaches 80000
  add_big("ipv4_default", false, 20, {64000, 64000, 32000}, 0);
  add_big("ipv6", true, 20, {64000, 64000, 32000}, 185000);
  add_big("ipv6_default", true, 20, {64000, 64000, 32000}, 0);
  return v;
}

namespace {

// Outer Ethernet / IPv4 (DF, TTL 64, `id`) / UDP (sport 50000 → 4789, RFC 768 checksum or 0)
// / VXLAN (I flag, VNI 42) around `inner`, addressed as KernelVxlanGro expects.
Bytes vxlan_outer(Bytes inner, std::uint16_t id, bool udp_csum) {
  using K = KernelVxlanGro;
  std::copy(K::kVxlanMac.begin(), K::kVxlanMac.end(), inner.begin());
  const std::uint8_t src[6] = {0x02, 0x6f, 0x66, 0x6c, 0x02, 0x10};
  std::copy(src, src + 6, inner.begin() + 6);
  Bytes u(16, 0);
  p16(u, 0, 50000);
  p16(u, 2, 4789);
  p16(u, 4, std::uint16_t(16 + inner.size()));
  u[8] = 0x08;
  u[12] = 0; u[13] = 0; u[14] = 42; u[15] = 0;  // VNI 42
  u.insert(u.end(), inner.begin(), inner.end());
  Bytes ip(20, 0);
  ip[0] = 0x45;
  p16(ip, 2, std::uint16_t(20 + u.size()));
  p16(ip, 4, id);
  p16(ip, 6, 0x4000);
  ip[8] = 64;
  ip[9] = 17;
  std::copy(K::kSenderIp.begin(), K::kSenderIp.end(), ip.begin() + 12);
  std::copy(K::kReceiverIp.begin(), K::kReceiverIp.end(), ip.begin() + 16);
  p16(ip, 10, cs::ip_compute_csum(ip.data(), 20));
  if (udp_csum) {
    const cs::wsum ps = cs::csum_tcpudp_nofold(ip.data() + 12, ip.data() + 16, std::uint32_t(u.size()), 17, 0);
    std::uint16_t c = cs::csum_fold(cs::csum_partial(u.data(), u.size(), ps));
    p16(u, 6, c == 0 ? 0xFFFF : c);
  }
  Bytes f(14);
  std::copy(K::kReceiverMac.begin(), K::kReceiverMac.end(), f.begin());
  std::copy(K::kSenderMac.begin(), K::kSenderMac.end(), f.begin() + 6);
  p16(f, 12, 0x0800);
  f.insert(f.end(), ip.begin(), ip.end());
  f.insert(f.end(), u.begin(), u.end());
  return f;
}

}  // namespace

std::vector<GroCase> builtin_vxlan_rx_cases() {
  std::vector<GroCase> v;
  auto add = [&](std::string name, std::vector<Bytes> inner, bool csum,
                 const std::vector<std::uint16_t>& ids = {}) {
    GroCase c;
    c.name = "vxlan-rx/" + name;
    c.path = GroPath::VxlanRx;
    for (std::size_t i = 0; i < inner.size(); ++i)
      c.frames.push_back(vxlan_outer(std::move(inner[i]), ids.empty() ? std::uint16_t(1000 + i) : ids[i], csum));
    v.push_back(std::move(c));
  };
  auto stream = [](bool v6, std::size_t n, std::size_t len) {
    std::vector<Bytes> fr;
    for (std::size_t i = 0; i < n; ++i) {
      T t = base(v6, len, std::uint32_t(i * len));
      t.id = std::uint16_t(i);
      fr.push_back(frame(t));
    }
    return fr;
  };
  for (bool v6 : {false, true}) {
    const std::string fam = v6 ? "ipv6/" : "ipv4/";
    add(fam + "data_10x1000", stream(v6, 10, 1000), true);
    add(fam + "data_10x1000_nocsum", stream(v6, 10, 1000), false);
    {  // PSH in the middle: merged, then the aggregate completes (T-15, T-17)
      auto fr = stream(v6, 6, 500);
      T t = base(v6, 500, 1000);
      t.id = 2;
      t.flags |= 0x08;
      fr[2] = frame(t);
      add(fam + "psh_mid", fr, true);
    }
    {  // bad inner TCP checksum on #2 (T-1, K-5)
      auto fr = stream(v6, 5, 300);
      T t = base(v6, 300, 600);
      t.id = 2;
      t.bad = true;
      fr[2] = frame(t);
      add(fam + "bad_inner_csum", fr, true);
    }
    // 100 segments: the underlay's polls of 64 (K-3) cut the stream; gro_cells may merge again
    add(fam + "100x200_budget", stream(v6, 100, 200), true);
    // the 64 KB limit (G-16) counts outer and inner headers
    add(fam + "50x1400_size_limit", stream(v6, 50, 1400), true);
  }
  {  // outer IDs neither incrementing nor fixed: the underlay does not merge (N-15 on the
     // outer header), the vxlan device's gro_cells does (W-12, W-19)
    std::vector<std::uint16_t> ids{0x1234, 0x9a01, 0x0777, 0xfe00, 0x4242, 0x0101, 0xc0de, 0x5a5a};
    add("ipv4/outer_random_id", stream(false, 8, 700), true, ids);
  }
  {  // two inner flows interleaved
    std::vector<Bytes> fr;
    for (int i = 0; i < 8; ++i) {
      T t = base(false, 400, 400u * unsigned(i / 2));
      t.sport = std::uint16_t(1500 + (i & 1));
      t.id = std::uint16_t(i / 2);
      fr.push_back(frame(t));
    }
    add("ipv4/two_inner_flows", fr, true);
  }
  return v;
}

}  // namespace ofld::lab

// libFuzzer target: arbitrary bytes through every entry point of the C API (include/ofld/ofld.h)
// that takes packet data — virtio_net_hdr validate/build, GSO (one-shot and the engine with
// its zero-copy input buffer, every output read as pieces and copied), GRO (receive, flush,
// take), VXLAN/GUE/GRE encap and decap, frame verification — with arbitrary (including too
// small) output buffers. Each call must return a status code (never crash, hang or read or
// write outside the buffers it was given), and the API's own promises must hold: OFLD_OK
// outputs lie within the buffer, NOSPC reports a size that then succeeds.
//
// Input: byte 0 selects the operation and options, bytes 1..10 a virtio_net_hdr (little-endian),
// bytes 11..12 an output capacity, the rest the frame (GRO: records of a 2-byte length + frame).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ofld/ofld.h"

namespace {

void must(bool ok) {
  if (!ok) std::abort();
}

void gso(const std::uint8_t* f, std::size_t n, const ofld_vnet_hdr* h, std::uint8_t op,
         std::size_t cap) {
  const std::uint64_t feats[4] = {0, OFLD_NETIF_F_SG | OFLD_NETIF_F_HW_CSUM,
                                  OFLD_NETIF_F_SG | OFLD_NETIF_F_IP_CSUM | OFLD_NETIF_F_TSO,
                                  OFLD_NETIF_F_SG | OFLD_NETIF_F_HW_CSUM | OFLD_NETIF_F_GSO_UDP_L4};
  const int link = (op >> 3) & 1;
  ofld_gso* g = ofld_gso_new(feats[(op >> 4) & 3], link);
  must(g != nullptr);
  // Half the time through the engine's zero-copy input buffer.
  const std::uint8_t* frame = f;
  if (op & 0x40 && n) {
    std::uint8_t* in = ofld_gso_input(g, n);
    must(in != nullptr);
    std::memcpy(in, f, n);
    frame = in;
  }
  const int r = ofld_gso_run(g, frame, n, (op & 0x80) ? h : nullptr, std::uint16_t(cap & 0x3fff),
                             0);
  if (r == OFLD_OK) {
    const std::size_t cnt = ofld_gso_count(g);
    for (std::size_t i = 0; i < cnt; ++i) {
      ofld_seg_info info;
      ofld_iovec iov[4];
      std::size_t niov = 0;
      const int o = ofld_gso_output(g, i, &info, iov, 4, &niov);
      must(o == OFLD_OK || o == OFLD_E_NOSPC);
      std::size_t sum = 0;
      if (o == OFLD_OK)
        for (std::size_t k = 0; k < niov; ++k) {
          volatile std::uint8_t x = iov[k].len ? iov[k].base[iov[k].len - 1] : 0;  // readable
          (void)x;
          sum += iov[k].len;
        }
      must(o != OFLD_OK || sum == info.len);
    }
    std::vector<std::uint8_t> out(cap);
    std::vector<ofld_seg_info> segs(cnt ? cnt : 1);
    std::size_t used = 0, ns = 0;
    int c = ofld_gso_copy_all(g, out.data(), out.size(), &used, segs.data(), segs.size(), &ns);
    if (c == OFLD_E_NOSPC) {
      out.resize(used);
      c = ofld_gso_copy_all(g, out.data(), out.size(), &used, segs.data(), segs.size(), &ns);
    }
    must(c == OFLD_OK);
    for (std::size_t i = 0; i < ns; ++i) must(segs[i].offset + segs[i].len <= used);
    ofld_gso_counters gc;
    must(ofld_gso_get_counters(g, &gc) == OFLD_OK);
  }
  ofld_gso_free(g);
}

void gro(const std::uint8_t* f, std::size_t n, std::uint8_t op, std::size_t cap) {
  ofld_gro_config cfg = OFLD_GRO_CONFIG_INIT;
  cfg.link = (op >> 3) & 1;
  cfg.features = OFLD_NETIF_F_GRO | ((op & 0x10) ? OFLD_NETIF_F_GRO_FRAGLIST : 0) |
                 ((op & 0x20) ? OFLD_NETIF_F_GRO_UDP_FWD : 0);
  cfg.fixed_flow_hash_key = 1;
  cfg.vnet_types_only = (op >> 6) & 1;
  ofld_gro* g = ofld_gro_new(&cfg);
  must(g != nullptr);
  // The input as records of a 2-byte big-endian length and that many frame bytes (up to 64
  // frames; a length past the end takes what is left), laid end to end as a batch read.
  std::vector<std::uint64_t> lens;
  std::vector<std::uint8_t> joined;
  std::size_t off = 0;
  while (off + 2 <= n && lens.size() < 64) {
    std::size_t l = std::size_t(f[off]) << 8 | f[off + 1];
    off += 2;
    if (l > n - off) l = n - off;
    lens.push_back(l);
    joined.insert(joined.end(), f + off, f + off + l);
    off += l;
  }
  must(ofld_gro_receive_packed(g, joined.data(), joined.size(), lens.data(), lens.size(),
                               (op >> 7) ? OFLD_CSUM_COMPLETE : OFLD_CSUM_NONE, 0, 1) == OFLD_OK);
  must(ofld_gro_flush(g, 2, 1) == OFLD_OK);
  std::vector<std::uint8_t> out(cap);
  while (ofld_gro_pending(g)) {
    std::size_t len = 0;
    ofld_seg_info info;
    ofld_iovec iov[8];
    std::size_t niov = 0;
    const int pk = ofld_gro_peek(g, &info, iov, 8, &niov);
    must(pk == OFLD_OK || pk == OFLD_E_NOSPC);
    int r = ofld_gro_next(g, out.data(), out.size(), &len, op & 1, &info);
    if (r == OFLD_E_NOSPC) r = ofld_gro_next(g, nullptr, 0, &len, op & 1, &info);  // drop it
    must(r == OFLD_OK && len == info.len);
  }
  ofld_gro_counters c;
  must(ofld_gro_get_counters(g, &c) == OFLD_OK);
  ofld_gro_free(g);
}

void tunnel(const std::uint8_t* f, std::size_t n, const ofld_vnet_hdr* h, std::uint8_t op,
            std::size_t cap) {
  ofld_tunnel_config cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.kind = (op >> 3) % 3;
  cfg.ipv6 = (op >> 5) & 1;
  cfg.vni = 42;
  cfg.port = 6080;
  cfg.udp_csum = 1;
  cfg.remcsum_tx = cfg.remcsum_rx = (op >> 6) & 1;
  cfg.has_ikey = cfg.has_okey = (op >> 7) & 1;
  cfg.ikey = cfg.okey = 7;
  cfg.icsum = cfg.ocsum = (op >> 7) & 1;
  ofld_tunnel* t = ofld_tunnel_new(&cfg);
  if (!t) {  // a configuration the encapsulation refuses (e.g. RCO or a port on GRE): named
    must(ofld_last_reason()[0] != 0);
    return;
  }
  std::vector<std::uint8_t> out(cap);
  std::size_t used = 0;
  ofld_tunnel_info info;
  ofld_seg_info seg;
  int r = ofld_tunnel_encap(t, f, n, (op & 4) ? h : nullptr, out.data(), out.size(), &used, &info);
  if (r == OFLD_OK) {
    must(used <= out.size());
    // What was sent is received again (the decap verdict may still be a drop).
    std::vector<std::uint8_t> back(used + 64);
    std::size_t m = 0;
    const int d = ofld_tunnel_decap(t, out.data(), used, OFLD_OUTER_CSUM_PRESENT, -1, back.data(),
                                    back.size(), &m, &seg, &info);
    must(d == OFLD_OK || d == OFLD_E_DROP);
  }
  r = ofld_tunnel_decap(t, f, n, op & 3 ? (op & 3) - 1 : 0, (op & 2) && n ? f[0] : -1,
                        out.data(), out.size(), &used, &seg, &info);
  must(r == OFLD_OK || r == OFLD_E_DROP || r == OFLD_E_NOSPC);
  ofld_tunnel_free(t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 13) return 0;
  const std::uint8_t op = data[0];
  ofld_vnet_hdr h;
  must(ofld_vnet_hdr_load(data + 1, 10, 1, &h) == OFLD_OK);
  const std::size_t cap = std::size_t(data[11]) << 8 | data[12];
  const std::uint8_t* f = data + 13;
  const std::size_t n = size - 13;
  switch (op & 7) {
    case 0:
    case 1:
      gso(f, n, &h, op, cap);
      break;
    case 2: {
      int rej = 0;
      const int r = ofld_vnet_validate(&h, f, n, (op >> 3) & 1, &rej);
      must(r == OFLD_OK || (r == OFLD_E_VNET && ofld_vnet_reject_name(rej)[0] != 0));
      std::vector<std::uint8_t> copy(f, f + n);
      std::size_t len = n;
      ofld_vnet_hdr b;
      const int br = ofld_vnet_build(copy.data(), &len, (op >> 3) & 1, h.gso_size, (op >> 4) & 1, &b);
      must(len <= n);
      if (br == OFLD_OK) {  // what build produced is what a TAP accepts
        const int v = ofld_vnet_validate(&b, copy.data(), len, (op >> 3) & 1, &rej);
        (void)v;
      }
      break;
    }
    case 3:
    case 4:
      gro(f, n, op, cap);
      break;
    case 5:
    case 6:
      tunnel(f, n, &h, op, cap);
      break;
    default: {
      std::vector<ofld_csum_record> recs(data[11] % 16);
      std::size_t k = 0;
      const int r = ofld_verify_frame(f, n, (op >> 3) & 1, std::uint32_t(n), recs.data(),
                                      recs.size(), &k);
      must(r == OFLD_OK || r == OFLD_E_NOSPC || r == OFLD_E_PARSE);
      must(r != OFLD_OK || k <= recs.size());
      (void)ofld_csum_partial(f, n, 0);
      std::vector<std::uint8_t> dst(n);
      must(ofld_csum_fold16(ofld_csum_partial_copy(dst.data(), f, n, 0)) ==
           ofld_csum_fold16(ofld_csum_partial(f, n, 0)));
      break;
    }
  }
  return 0;
}

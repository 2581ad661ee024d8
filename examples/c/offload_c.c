/* offload_c: a C11 consumer of libofld's C API (include/ofld/ofld.h).
 *
 * Usage: offload_c CAPTURE MSS OUT.pcap
 *   - verifies every checksum of CAPTURE (as `ofld csum verify`) and prints the totals;
 *   - segments CAPTURE's super-packets at MSS into OUT.pcap (as `ofld gso --mss MSS`);
 *   - splits one 64000-byte TCP super-frame given with its virtio_net_hdr (a TAP read) into
 *     segments and coalesces them again with GRO, checking that the payload survives.
 * scripts/test-install builds it against the installed tree (CMake package and pkg-config)
 * and compares the numbers with the installed `ofld` command.
 */
#include <ofld/ofld.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what, int r) {
  fprintf(stderr, "offload_c: %s: %s (%s)\n", what, ofld_strerror(r), ofld_last_reason());
  return 1;
}

/* Ethernet + IPv4 + TCP header + payload with valid checksums, built with the C API. */
static size_t tcp_frame(uint8_t* f, size_t payload) {
  static const uint8_t hdr[54] = {
      2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,               /* Ethernet */
      0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, /* IPv4 */
      0x9c, 0x40, 0x14, 0x51, 0, 0, 0x03, 0xe8, 0, 0, 0, 1, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0};
  memcpy(f, hdr, sizeof hdr);
  for (size_t i = 0; i < payload; ++i) f[54 + i] = (uint8_t)(i * 7 + 3);
  const uint16_t tot = (uint16_t)(40 + payload);
  f[16] = (uint8_t)(tot >> 8), f[17] = (uint8_t)tot;
  const uint16_t ipc = ofld_ip_compute_csum(f + 14, 20);
  f[24] = (uint8_t)(ipc >> 8), f[25] = (uint8_t)ipc;
  const uint32_t l4 = (uint32_t)(20 + payload);
  const uint16_t c = ofld_csum_fold(ofld_csum_partial(f + 34, l4,
                                                      ofld_csum_tcpudp_nofold(f + 26, f + 30, l4, 6, 0)));
  f[50] = (uint8_t)(c >> 8), f[51] = (uint8_t)c;
  return 54 + payload;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: offload_c CAPTURE MSS OUT.pcap\n");
    return 2;
  }
  if (ofld_api_version() / 10000 != OFLD_API_VERSION / 10000) return fail("api version", OFLD_E_INVAL);
  printf("libofld %s api %d\n", ofld_version(), ofld_api_version());

  ofld_verify_summary s;
  int r = ofld_verify_file(argv[1], 0, NULL, NULL, &s);
  if (r != OFLD_OK) return fail("ofld_verify_file", r);
  printf("verify frames %llu bad %llu partial %llu\n", (unsigned long long)s.frames,
         (unsigned long long)s.frames_with_bad, (unsigned long long)s.frames_with_partial);

  uint64_t segs = 0;
  r = ofld_gso_pcap(argv[1], argv[3], (uint16_t)atoi(argv[2]), NULL, &segs);
  if (r != OFLD_OK) return fail("ofld_gso_pcap", r);
  printf("gso_segments %llu\n", (unsigned long long)segs);

  /* A TAP read: virtio_net_hdr + super-frame, split and coalesced again. */
  static uint8_t frame[65536], out[128 * 1024], merged[128 * 1024];
  size_t len = tcp_frame(frame, 64000);
  ofld_vnet_hdr h;
  if ((r = ofld_vnet_build(frame, &len, OFLD_LINK_ETHERNET, 1448, 0, &h)) != OFLD_OK)
    return fail("ofld_vnet_build", r);
  ofld_seg_info info[64];
  size_t used = 0, n = 0;
  r = ofld_gso_segment(frame, len, &h, 0, 0, OFLD_LINK_ETHERNET, out, sizeof out, &used, info, 64, &n);
  if (r != OFLD_OK) return fail("ofld_gso_segment", r);
  ofld_gro_config cfg = OFLD_GRO_CONFIG_INIT;
  ofld_gro* g = ofld_gro_new(&cfg);
  if (!g) return fail("ofld_gro_new", OFLD_E_INVAL);
  ofld_frame fr[64];
  for (size_t i = 0; i < n; ++i) fr[i] = (ofld_frame){out + info[i].offset, info[i].len};
  if ((r = ofld_gro_receive(g, fr, n, OFLD_CSUM_NONE, 0, 0)) != OFLD_OK) return fail("receive", r);
  ofld_gro_flush(g, 0, 1);
  size_t payload = 0, aggs = 0;
  while (ofld_gro_pending(g)) {
    size_t m = 0;
    ofld_seg_info a;
    if ((r = ofld_gro_next(g, merged, sizeof merged, &m, 1, &a)) != OFLD_OK) return fail("next", r);
    if (memcmp(merged + 54, frame + 54 + payload, m - 54) != 0) return fail("payload differs", OFLD_E_INTERNAL);
    payload += m - 54;
    ++aggs;
  }
  ofld_gro_free(g);
  printf("split %zu segments, coalesced into %zu frames, payload %zu bytes intact\n", n, aggs, payload);
  return payload == 64000 ? 0 : 1;
}

/* ofld/ofld.h — the stable C API of libofld (C11; also valid C++).
 *
 * A thin boundary over the C++ engines (checksums, virtio_net_hdr, GSO, GRO, tunnels, the
 * capture verifier): no packet logic lives here, every result is the engines'. No C++ type
 * crosses the boundary; objects are opaque handles made by *_new and freed by *_free.
 *
 * Conventions:
 *  - Functions that can fail return an int status: OFLD_OK (0) or a negative OFLD_E_* code
 *    (ofld_strerror names it). The detailed reason of the last failure on this thread (the
 *    engine's reason name, e.g. "csum-outside-frame") is ofld_last_reason().
 *  - Multi-byte values in structs are host order; bytes in buffers are as on the wire.
 *  - A "wsum" is the kernel's __wsum: an unfolded 32-bit ones'-complement sum with
 *    network-order semantics (see ofld/core/csum.hpp); a 16-bit checksum is a host-order
 *    number to be stored big-endian.
 *  - Caller buffers: the API never writes past `cap` bytes. When a result does not fit,
 *    OFLD_E_NOSPC is returned and the needed size reported where the function says so.
 *  - Handles are not thread-safe; use one per thread. Functions without a handle are.
 *  - Structs with a `struct_size` first member are versioned: set it to sizeof(the struct)
 *    (or use the OFLD_*_INIT macros) so that later minor versions can append fields.
 *
 * Documentation: docs/c-api.md. ABI: checked against abi/ofld-c.abi (tests: CApiAbi*).
 */
#ifndef OFLD_OFLD_H
#define OFLD_OFLD_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define OFLD_API
#elif defined(__GNUC__)
#define OFLD_API __attribute__((visibility("default")))
#else
#define OFLD_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version and errors --------------------------------------------------------------- */

/** API version this header describes: major * 10000 + minor * 100 + patch. A new minor
 *  version only adds; a new major version may break source or binary compatibility. */
#define OFLD_API_VERSION 10000
/** The API version of the loaded library (compare with OFLD_API_VERSION / 10000). */
OFLD_API int ofld_api_version(void);
/** The library's release version, e.g. "0.1.0" (static string). */
OFLD_API const char* ofld_version(void);

enum {
  OFLD_OK = 0,
  OFLD_E_INVAL = -1,    /**< bad argument: null pointer, unknown enum value, bad config */
  OFLD_E_NOSPC = -2,    /**< a caller buffer or array is too small (needed size reported) */
  OFLD_E_VNET = -3,     /**< virtio_net_hdr refused (S-1..S-4); reason: ofld_last_reason() */
  OFLD_E_GSO = -4,      /**< the GSO engine refused the frame (X-rules); reason given */
  OFLD_E_FEATURE = -5,  /**< unknown feature name in a feature list */
  OFLD_E_DROP = -6,     /**< a tunnel dropped the frame; reason given (ofld tunnel's drops) */
  OFLD_E_PARSE = -7,    /**< the frame cannot be parsed (wire::ParseError name given) */
  OFLD_E_IO = -8,       /**< a file cannot be opened or read (message in ofld_last_reason) */
  OFLD_E_NOMEM = -9,    /**< out of memory */
  OFLD_E_STATE = -10,   /**< call out of order (e.g. no current output to take) */
  OFLD_E_INTERNAL = -11 /**< unexpected engine exception (message in ofld_last_reason) */
};
/** Static text for a status code ("ok", "invalid argument", ...); "unknown error" otherwise. */
OFLD_API const char* ofld_strerror(int code);
/** The engine's reason for the last failure on this thread (e.g. "csum-outside-frame",
 *  "rx_wrong_vni"), or "" when the last call succeeded. Valid until the next call. */
OFLD_API const char* ofld_last_reason(void);

/* ---- checksums (RFC 1071, RFC 1624; kernel include/net/checksum.h) ---------------------- */

/** seed + ones'-complement sum of len bytes (any alignment; data may be NULL if len is 0).
 *  Kernel csum_partial. */
OFLD_API uint32_t ofld_csum_partial(const void* data, size_t len, uint32_t seed);
/** Copy len bytes src -> dst (not overlapping) and return seed + their sum in one pass.
 *  Kernel csum_partial_copy_nocheck. */
OFLD_API uint32_t ofld_csum_partial_copy(void* dst, const void* src, size_t len, uint32_t seed);
/** 32-bit add with end-around carry (kernel csum_add). */
OFLD_API uint32_t ofld_csum_add(uint32_t a, uint32_t b);
/** Add the sum of a block that starts at byte `offset` of the summed region (an odd offset
 *  byte-swaps it; kernel csum_block_add). */
OFLD_API uint32_t ofld_csum_block_add(uint32_t total, uint32_t block, size_t offset);
/** Fold to 16 bits and complement: the value a checksum field holds (kernel csum_fold). */
OFLD_API uint16_t ofld_csum_fold(uint32_t wsum);
/** Fold to 16 bits without complementing (a CHECKSUM_PARTIAL seed is this of the pseudo sum). */
OFLD_API uint16_t ofld_csum_fold16(uint32_t wsum);
/** IPv4 pseudo-header sum (saddr, daddr as on the wire; len = L4 length, host order) plus
 *  seed, unfolded (kernel csum_tcpudp_nofold). The CHECKSUM_PARTIAL seed of a TCP/UDP
 *  header is ofld_csum_fold16(this with seed 0). */
OFLD_API uint32_t ofld_csum_tcpudp_nofold(const uint8_t saddr[4], const uint8_t daddr[4],
                                          uint32_t len, uint8_t proto, uint32_t seed);
/** IPv6 pseudo-header sum (RFC 8200 §8.1) plus seed, unfolded (kernel csum_ipv6_magic
 *  without the fold). */
OFLD_API uint32_t ofld_csum_ipv6_nofold(const uint8_t saddr[16], const uint8_t daddr[16],
                                        uint32_t len, uint8_t proto, uint32_t seed);
/** RFC 1624 eqn. 3: the new checksum FIELD value when a 16-bit word of the covered data
 *  changes from old_v to new_v (host order; kernel csum_replace2). */
OFLD_API uint16_t ofld_csum_replace2(uint16_t check, uint16_t old_v, uint16_t new_v);
/** As ofld_csum_replace2 for a 32-bit word, e.g. an IPv4 address (kernel csum_replace4). */
OFLD_API uint16_t ofld_csum_replace4(uint16_t check, uint32_t old_v, uint32_t new_v);
/** Internet checksum of a buffer (e.g. an IPv4 header with its field zeroed): ~fold(sum). */
OFLD_API uint16_t ofld_ip_compute_csum(const void* data, size_t len);

/* ---- link types, features ------------------------------------------------------------- */

/** Framing of a frame's first byte. */
enum { OFLD_LINK_ETHERNET = 0, OFLD_LINK_RAW_IP = 1 };

/** Parse a comma-separated list of ethtool feature names ("tx-checksum-ip-generic,
 *  tx-scatter-gather,tx-tcp-segmentation", the ethtool -K aliases "tso", "sg", "tx", group
 *  names, or "none") into NETIF_F_* bits (6.12 numbering). OFLD_E_FEATURE names the unknown
 *  name in ofld_last_reason(). */
OFLD_API int ofld_features_parse(const char* names, uint64_t* bits);
/** Well-known NETIF_F_* bits (feature bit numbers of the 6.12 enum netdev_features). */
#define OFLD_NETIF_F_SG (1ull << 0)
#define OFLD_NETIF_F_IP_CSUM (1ull << 1)
#define OFLD_NETIF_F_HW_CSUM (1ull << 3)
#define OFLD_NETIF_F_IPV6_CSUM (1ull << 4)
#define OFLD_NETIF_F_GRO (1ull << 14)
#define OFLD_NETIF_F_TSO (1ull << 16)
#define OFLD_NETIF_F_TSO_ECN (1ull << 18)
#define OFLD_NETIF_F_TSO6 (1ull << 20)
#define OFLD_NETIF_F_GSO_UDP_L4 (1ull << 33)
#define OFLD_NETIF_F_GRO_FRAGLIST (1ull << 57)
#define OFLD_NETIF_F_GRO_UDP_FWD (1ull << 59)

/* ---- virtio_net_hdr (include/uapi/linux/virtio_net.h; spec S-1..S-8, V-18..V-21) -------- */

#define OFLD_VNET_HDR_LEN 10
#define OFLD_VNET_F_NEEDS_CSUM 1
#define OFLD_VNET_F_DATA_VALID 2
#define OFLD_VNET_GSO_NONE 0
#define OFLD_VNET_GSO_TCPV4 1
#define OFLD_VNET_GSO_UDP 3
#define OFLD_VNET_GSO_TCPV6 4
#define OFLD_VNET_GSO_UDP_L4 5
#define OFLD_VNET_GSO_ECN 0x80

/** The legacy 10-byte struct virtio_net_hdr, decoded (values host order). */
typedef struct ofld_vnet_hdr {
  uint8_t flags;        /**< OFLD_VNET_F_* */
  uint8_t gso_type;     /**< OFLD_VNET_GSO_* (| OFLD_VNET_GSO_ECN) */
  uint16_t hdr_len;     /**< a hint only; never used to locate anything (public bug B5) */
  uint16_t gso_size;    /**< payload bytes per segment (MSS) */
  uint16_t csum_start;  /**< bytes from the frame start to the L4 header (NEEDS_CSUM) */
  uint16_t csum_offset; /**< bytes from csum_start to the checksum field (NEEDS_CSUM) */
} ofld_vnet_hdr;

/** Decode 10 bytes at `in` (little_endian != 0: TUNSETVNETLE / virtio 1.0; else big-endian). */
OFLD_API int ofld_vnet_hdr_load(const uint8_t* in, size_t len, int little_endian,
                                ofld_vnet_hdr* out);
/** Encode `h` as 10 bytes at `out` (cap >= 10). */
OFLD_API int ofld_vnet_hdr_store(const ofld_vnet_hdr* h, int little_endian, uint8_t* out,
                                 size_t cap);
/** Validate `h` with its frame as a TAP write does (virtio_net_hdr_to_skb, S-1..S-5): OFLD_OK,
 *  or OFLD_E_VNET with the reason's name in ofld_last_reason() and its number in *reject
 *  (when not NULL; see ofld_vnet_reject_name). */
OFLD_API int ofld_vnet_validate(const ofld_vnet_hdr* h, const uint8_t* frame, size_t len,
                                int link, int* reject);
/** Name of a virtio_net_hdr reject reason number ("unknown-gso-type", ...); "" if unknown. */
OFLD_API const char* ofld_vnet_reject_name(int reject);
/** Build the virtio_net_hdr the kernel would give `frame` (virtio_net_hdr_from_skb, S-7/S-8)
 *  after setting it up for GSO with `gso_size` (0: not GSO): gso_type from the frame
 *  (TCPv4/TCPv6/UDP_L4, ECN if CWR), NEEDS_CSUM at the innermost L4 header. The frame's L4
 *  checksum field is rewritten in place to the pseudo-header seed NEEDS_CSUM requires
 *  (`input_seeds` != 0: it holds the seed already); *len may shrink (Ethernet padding
 *  trimmed). OFLD_E_PARSE when the frame has no TCP/UDP to describe. */
OFLD_API int ofld_vnet_build(uint8_t* frame, size_t* len, int link, uint16_t gso_size,
                             int input_seeds, ofld_vnet_hdr* out);

/* ---- checksum state of one frame (the skb's ip_summed) -------------------------------- */

enum {
  OFLD_CSUM_NONE = 0,        /**< CHECKSUM_NONE: nothing known */
  OFLD_CSUM_UNNECESSARY = 1, /**< CHECKSUM_UNNECESSARY: verified (csum_level + 1 checksums) */
  OFLD_CSUM_COMPLETE = 2,    /**< CHECKSUM_COMPLETE: `csum` = sum over the whole frame */
  OFLD_CSUM_PARTIAL = 3      /**< CHECKSUM_PARTIAL: field at csum_start + csum_offset holds the
                                  pseudo-header seed; the sum from csum_start is still due */
};

/** One output frame (a GSO segment, a GRO aggregate, a decapsulated frame). */
typedef struct ofld_seg_info {
  size_t offset;          /**< where the frame starts in the caller's output buffer */
  size_t len;             /**< frame bytes */
  uint8_t ip_summed;      /**< OFLD_CSUM_* */
  uint8_t csum_level;     /**< UNNECESSARY: checksums verified beyond the first */
  uint16_t csum_start;    /**< PARTIAL: bytes from the frame start to the L4 header */
  uint16_t csum_offset;   /**< PARTIAL: from csum_start to the checksum field */
  uint32_t csum;          /**< COMPLETE: the wsum over the frame */
  uint16_t gso_size;      /**< GRO aggregate: segment size (0 = not GSO) */
  uint16_t gso_segs;      /**< GRO aggregate: segments it holds */
  ofld_vnet_hdr vnet;     /**< the header to write it to a TAP/TUN with (S-7/S-8) */
} ofld_seg_info;

/** A piece of an output frame in engine memory (for writev without a copy). */
typedef struct ofld_iovec {
  const uint8_t* base;
  size_t len;
} ofld_iovec;

/* ---- GSO (net/core/gso.c __skb_gso_segment; spec §4, docs/rules.md X-) ------------------ */

typedef struct ofld_gso ofld_gso;

/** A GSO engine for a device with NETIF_F_* `features` (e.g. SG|HW_CSUM: segments keep
 *  NEEDS_CSUM; 0: every checksum is completed while copying) receiving frames of `link`.
 *  NULL on bad arguments or no memory. */
OFLD_API ofld_gso* ofld_gso_new(uint64_t features, int link);
OFLD_API void ofld_gso_free(ofld_gso* g);
/** Zero-copy input: a buffer of at least `cap` bytes owned by the engine, valid until the
 *  next ofld_gso_input / ofld_gso_free. Read a TAP/TUN frame into it and pass it to
 *  ofld_gso_run: the payload is then referenced by the segments, never copied before the
 *  output. NULL when cap is 0 or too big (> 16 MiB) or memory runs out. */
OFLD_API uint8_t* ofld_gso_input(ofld_gso* g, size_t cap);
/** Segment one frame. With `vnet` (a TAP/TUN read): the header is validated as a TAP does
 *  (S-1..S-5; OFLD_E_VNET) and gives gso_type/gso_size/csum_start. Without it: the frame is
 *  set up from its own headers with `gso_size` (TCP or UDP, tunnels followed; L4 fields hold
 *  full checksums, or seeds when `input_seeds`). A frame that needs no segmenting gives one
 *  output. The outputs replace those of the previous run. OFLD_E_GSO: the engine's reason. */
OFLD_API int ofld_gso_run(ofld_gso* g, const uint8_t* frame, size_t len, const ofld_vnet_hdr* vnet,
                          uint16_t gso_size, int input_seeds);
/** Number of outputs of the last run. */
OFLD_API size_t ofld_gso_count(const ofld_gso* g);
/** Output i: its info (offset 0) and, when iov is not NULL, its pieces in engine memory
 *  (valid until the next run); *niov = pieces needed (OFLD_E_NOSPC if iov_cap is less). */
OFLD_API int ofld_gso_output(const ofld_gso* g, size_t i, ofld_seg_info* info, ofld_iovec* iov,
                             size_t iov_cap, size_t* niov);
/** Copy every output end to end into `out`, one info per output in `segs`. *nsegs = outputs,
 *  *used = bytes; OFLD_E_NOSPC when cap or segs_cap is too small (both still reported). */
OFLD_API int ofld_gso_copy_all(const ofld_gso* g, uint8_t* out, size_t cap, size_t* used,
                               ofld_seg_info* segs, size_t segs_cap, size_t* nsegs);
/** One call: ofld_gso_run on a temporary engine + ofld_gso_copy_all. */
OFLD_API int ofld_gso_segment(const uint8_t* frame, size_t len, const ofld_vnet_hdr* vnet,
                              uint16_t gso_size, uint64_t features, int link, uint8_t* out,
                              size_t cap, size_t* used, ofld_seg_info* segs, size_t segs_cap,
                              size_t* nsegs);

/** GSO engine counters (core::GsoCounters). errors[] by reason number: ofld_gso_reason_name. */
#define OFLD_GSO_REASONS 32
typedef struct ofld_gso_counters {
  uint64_t packets_in, packets_segmented, packets_hw, segments_out;
  uint64_t payload_bytes_copied, payload_bytes_referenced, header_bytes_copied;
  uint64_t vnet_rejected; /**< frames whose virtio_net_hdr was refused */
  uint64_t errors[OFLD_GSO_REASONS];
} ofld_gso_counters;
OFLD_API int ofld_gso_get_counters(const ofld_gso* g, ofld_gso_counters* out);
/** "bad-gso-type", ...; "" for an unused number. */
OFLD_API const char* ofld_gso_reason_name(int reason);

/* ---- GRO (net/core/gro.c; spec G-1..G-20, T-*, U-*) ------------------------------------ */

typedef struct ofld_gro ofld_gro;

typedef struct ofld_gro_config {
  size_t struct_size;         /**< sizeof(ofld_gro_config) */
  int link;                   /**< OFLD_LINK_ETHERNET (TAP, NIC) or OFLD_LINK_RAW_IP (TUN) */
  uint64_t features;          /**< NETIF_F_GRO, _GRO_FRAGLIST, _GRO_UDP_FWD of the device */
  uint64_t flush_timeout_ns;  /**< gro_flush_timeout; 0 = every flush completes every flow */
  int fixed_flow_hash_key;    /**< != 0: use flow_hash_key (reproducible order), else random */
  uint64_t flow_hash_key;
  int vnet_types_only;        /**< != 0: only aggregates a virtio_net_hdr can describe (TAP) */
  size_t batch;               /**< packets per poll (NAPI budget); 0 = 64 */
} ofld_gro_config;
#define OFLD_GRO_CONFIG_INIT {sizeof(ofld_gro_config), OFLD_LINK_ETHERNET, OFLD_NETIF_F_GRO, 0, 0, 0, 0, 64}

/** One received frame: bytes (copied into the engine; the caller may reuse them on return). */
typedef struct ofld_frame {
  const uint8_t* data;
  size_t len;
} ofld_frame;

OFLD_API ofld_gro* ofld_gro_new(const ofld_gro_config* cfg);
OFLD_API void ofld_gro_free(ofld_gro* g);
/** napi_gro_receive of n frames at time now_ns, each with the receiving device's checksum
 *  state `ip_summed` (NONE, UNNECESSARY with csum_level, or COMPLETE: the sum is taken over
 *  each frame as such a device would). Outputs (completed flows, packets passed untouched)
 *  queue up for ofld_gro_next. */
OFLD_API int ofld_gro_receive(ofld_gro* g, const ofld_frame* frames, size_t n, int ip_summed,
                              int csum_level, uint64_t now_ns);
/** As ofld_gro_receive for n frames laid end to end in `buf` (frame i is lens[i] bytes), as a
 *  batch read (recvmmsg, a TUN/TAP read loop) leaves them: one call, no per-frame struct. */
OFLD_API int ofld_gro_receive_packed(ofld_gro* g, const uint8_t* buf, size_t buf_len,
                                     const uint64_t* lens, size_t n, int ip_summed,
                                     int csum_level, uint64_t now_ns);
/** End of a poll: complete held flows (all, or with a flush timeout those older than it);
 *  all != 0 completes every held flow (end of input). */
OFLD_API int ofld_gro_flush(ofld_gro* g, uint64_t now_ns, int all);
/** Outputs waiting. */
OFLD_API size_t ofld_gro_pending(const ofld_gro* g);
/** Look at the next output without taking it: info, and its pieces (as ofld_gso_output). */
OFLD_API int ofld_gro_peek(const ofld_gro* g, ofld_seg_info* info, ofld_iovec* iov,
                           size_t iov_cap, size_t* niov);
/** Take the next output into `out` (cap bytes): *len = its length (also on OFLD_E_NOSPC, then
 *  nothing is taken). `finish` != 0: complete a PARTIAL aggregate's checksums (a valid frame
 *  for a device without a vnet header), reported then as UNNECESSARY (vnet DATA_VALID); else
 *  it stays PARTIAL, NEEDS_CSUM as info->vnet says.
 *  OFLD_E_STATE when nothing is pending. out may be NULL to drop the output. */
OFLD_API int ofld_gro_next(ofld_gro* g, uint8_t* out, size_t cap, size_t* len, int finish,
                           ofld_seg_info* info);
/** Take every pending output end to end into out (as ofld_gro_next each). */
OFLD_API int ofld_gro_next_all(ofld_gro* g, uint8_t* out, size_t cap, size_t* used, int finish,
                               ofld_seg_info* segs, size_t segs_cap, size_t* nsegs);

#define OFLD_GRO_REASONS 48
typedef struct ofld_gro_counters {
  uint64_t packets_in, merged, held, delivered_now, aggregates, singles, segments_out;
  uint64_t not_merged[OFLD_GRO_REASONS]; /**< packets delivered at once, by reason */
  uint64_t completed[OFLD_GRO_REASONS];  /**< completions, by reason */
} ofld_gro_counters;
OFLD_API int ofld_gro_get_counters(const ofld_gro* g, ofld_gro_counters* out);
/** "new-flow", "checksum", "seq-gap", ...; "" for an unused number. */
OFLD_API const char* ofld_gro_reason_name(int reason);
/** The engine's flow-hash key (the fixed one, or the random one it drew). */
OFLD_API uint64_t ofld_gro_flow_hash_key(const ofld_gro* g);

/* ---- tunnels: one frame in, one frame out (ofld tunnel's encapsulations) ---------------- */

enum { OFLD_TUNNEL_VXLAN = 0, OFLD_TUNNEL_GUE = 1, OFLD_TUNNEL_GRE = 2 };
enum { OFLD_OUTER_CSUM_UNKNOWN = 0, OFLD_OUTER_CSUM_PRESENT = 1, OFLD_OUTER_CSUM_ZERO = 2 };

typedef struct ofld_tunnel_config {
  size_t struct_size;       /**< sizeof(ofld_tunnel_config) */
  int kind;                 /**< OFLD_TUNNEL_* */
  int ipv6;                 /**< underlay IPv6 (ip6gre; VXLAN/GUE over IPv6) */
  uint32_t vni;             /**< VXLAN network identifier (24 bits) */
  uint16_t port;            /**< GUE UDP port (required for GUE; ignored otherwise) */
  int udp_csum;             /**< outer UDP checksum sent (IPv4; IPv6 always unless zero_csum) */
  int udp6_zero_csum_tx, udp6_zero_csum_rx;
  int remcsum_tx, remcsum_rx, remcsum_nopartial; /**< RCO (W-25..W-28, C-33) */
  int has_ikey, has_okey;   /**< GRE keys */
  uint32_t ikey, okey;
  int icsum, ocsum;         /**< GRE checksums expected / sent */
} ofld_tunnel_config;

typedef struct ofld_tunnel_info {
  int rco;          /**< RCO header written (encap) or processed (decap) */
  int csum_sw;      /**< encap: inner checksum finished in software */
  size_t hdr_len;   /**< encap: tunnel header bytes at the start of the output */
  int drop;         /**< on OFLD_E_DROP: the drop reason number (ofld_tunnel_drop_name) */
} ofld_tunnel_info;

typedef struct ofld_tunnel ofld_tunnel;
/** A tunnel endpoint's encapsulation. NULL (OFLD_E_INVAL reason) on a bad configuration. */
OFLD_API ofld_tunnel* ofld_tunnel_new(const ofld_tunnel_config* cfg);
OFLD_API void ofld_tunnel_free(ofld_tunnel* t);
/** Encapsulate one frame (VXLAN: an Ethernet frame; GUE/GRE: an IP packet; not GSO) into
 *  out: the tunnel header then the frame (the kernel adds the outer IP [+ UDP] header).
 *  `vnet` (may be NULL) gives the frame's checksum state: NEEDS_CSUM → RCO when configured
 *  and encodable (W-26/W-27), else the checksum is finished in software. */
OFLD_API int ofld_tunnel_encap(ofld_tunnel* t, const uint8_t* frame, size_t len,
                               const ofld_vnet_hdr* vnet, uint8_t* out, size_t cap, size_t* used,
                               ofld_tunnel_info* info);
/** Decapsulate one datagram (from the tunnel header on) into out: the inner frame, with its
 *  checksum state and virtio_net_hdr in *seg (RCO partial mode leaves it PARTIAL).
 *  `outer_csum`: OFLD_OUTER_CSUM_*; `outer_tos`: the outer TOS/traffic class or -1.
 *  OFLD_E_DROP with info->drop on a drop (V-4, V-9, V-12, V-13, C-33, RFC 6040...). */
OFLD_API int ofld_tunnel_decap(ofld_tunnel* t, const uint8_t* payload, size_t len,
                               int outer_csum, int outer_tos, uint8_t* out, size_t cap,
                               size_t* used, ofld_seg_info* seg, ofld_tunnel_info* info);
/** "rx_truncated", "rx_wrong_vni", ...; "" for an unused number. */
OFLD_API const char* ofld_tunnel_drop_name(int drop);

/* ---- captures: the verdicts of `ofld csum verify` -------------------------------------- */

enum { OFLD_KIND_IPV4 = 0, OFLD_KIND_TCP, OFLD_KIND_UDP, OFLD_KIND_GRE, OFLD_KIND_ICMP,
       OFLD_KIND_ICMPV6 };
enum { OFLD_VERDICT_GOOD = 0, OFLD_VERDICT_BAD, OFLD_VERDICT_PARTIAL, OFLD_VERDICT_NONE,
       OFLD_VERDICT_SKIPPED };

/** One checksum field (a record of `ofld csum verify --json`). */
typedef struct ofld_csum_record {
  uint64_t frame;          /**< frame number, 1-based (0 for ofld_verify_frame) */
  uint8_t kind;            /**< OFLD_KIND_* (ofld_csum_kind_name) */
  uint8_t level;           /**< encapsulation level, 0 = outermost */
  uint8_t verdict;         /**< OFLD_VERDICT_* (ofld_verdict_name) */
  uint8_t skip_reason;     /**< when skipped: ofld_skip_reason_name */
  uint8_t ipv6;            /**< TCP/UDP/ICMPv6 over IPv6 */
  uint8_t lco;             /**< outer checksum good once the inner partial one is filled */
  uint8_t in_fragment;     /**< inside an IP fragment */
  uint8_t datagram;        /**< from a reassembled datagram (offsets within it) */
  uint32_t field_offset;   /**< absolute offset of the 16-bit field */
  uint16_t found;          /**< field value */
  uint16_t expected;       /**< what a sender writes (unless skipped) */
  uint16_t seed;           /**< TCP/UDP: the CHECKSUM_PARTIAL seed */
} ofld_csum_record;

/** Verify every checksum of one frame (orig_len: the length on the wire, or len). The records
 *  go to recs[0..*n); OFLD_E_NOSPC with *n = needed; OFLD_E_PARSE when nothing parses. */
OFLD_API int ofld_verify_frame(const uint8_t* frame, size_t len, int link, uint32_t orig_len,
                               ofld_csum_record* recs, size_t cap, size_t* n);

typedef struct ofld_verify_summary {
  uint64_t frames, frames_with_bad, frames_with_partial, frames_skipped, parse_errors;
  uint64_t datagrams;               /**< datagrams reassembled and checked */
  uint64_t fields[6][5];            /**< per kind x verdict */
} ofld_verify_summary;
/** Called per record; return non-zero to stop (ofld_verify_file then returns OFLD_OK). */
typedef int (*ofld_record_fn)(const ofld_csum_record* rec, void* user);
/** `ofld csum verify FILE` (pcap/pcapng; reassembly as the command, unless no_reassembly):
 *  every record through fn (may be NULL), the totals into *sum (may be NULL). */
OFLD_API int ofld_verify_file(const char* path, int no_reassembly, ofld_record_fn fn, void* user,
                              ofld_verify_summary* sum);
OFLD_API const char* ofld_csum_kind_name(int kind);
OFLD_API const char* ofld_verdict_name(int verdict);
OFLD_API const char* ofld_skip_reason_name(int reason);

/* ---- the pcap tools as functions (`ofld gso`, `ofld gro`) ------------------------------ */

/** `ofld gso IN -o OUT --mss MSS [--features LIST]` (features NULL: none). *segments = written
 *  segments (may be NULL). */
OFLD_API int ofld_gso_pcap(const char* in, const char* out, uint16_t mss, const char* features,
                           uint64_t* segments);
/** `ofld gro IN -o OUT [--features LIST]`; *frames_out (may be NULL). */
OFLD_API int ofld_gro_pcap(const char* in, const char* out, const char* features,
                           uint64_t* frames_out);

#ifdef __cplusplus
}
#endif
#endif /* OFLD_OFLD_H */

// src/capi/capi.cpp — the C API (include/ofld/ofld.h) over the C++ engines. Glue only: every
// packet decision is the engines' (core, offload, gso, gro, tunnel, tools); this file converts
// between C structs and C++ types, catches exceptions and copies results into caller memory.
#include "ofld/ofld.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/features.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/io/pcap.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/tools/csum_check.hpp"
#include "ofld/tools/gro_tool.hpp"
#include "ofld/tools/gso_tool.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/ip_tunnel.hpp"
#include "ofld/tunnel/vxlan.hpp"
#include "ofld/version.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace ofld::capi {
namespace {

namespace cs = ofld::csum;
using core::Packet;
using VnetHdr = wire::virtio_net::Hdr;

thread_local std::string t_reason;

int fail(int code, std::string_view why) {
  t_reason.assign(why);
  return code;
}
int ok() {
  t_reason.clear();
  return OFLD_OK;
}
// A static name as a C string: the engines' to_string() return views of string literals.
const char* cstr(std::string_view v) noexcept { return v.empty() ? "" : v.data(); }

// Run `f`, turning exceptions into codes (never across the C boundary).
template <class F>
int guard(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(OFLD_E_NOMEM, "out of memory");
  } catch (const io::PcapError& e) {
    return fail(OFLD_E_IO, e.what());
  } catch (const std::exception& e) {
    return fail(OFLD_E_INTERNAL, e.what());
  } catch (...) {
    return fail(OFLD_E_INTERNAL, "unknown exception");
  }
}

bool link_ok(int link) { return link == OFLD_LINK_ETHERNET || link == OFLD_LINK_RAW_IP; }
wire::LinkType wire_link(int link) {
  return link == OFLD_LINK_RAW_IP ? wire::LinkType::RawIp : wire::LinkType::Ethernet;
}
std::span<const std::uint8_t> bytes(const std::uint8_t* p, std::size_t n) {
  return n ? std::span<const std::uint8_t>(p, n) : std::span<const std::uint8_t>();
}

VnetHdr to_hdr(const ofld_vnet_hdr& h) {
  VnetHdr v;
  v.flags = h.flags;
  v.gso_type = h.gso_type;
  v.hdr_len = h.hdr_len;
  v.gso_size = h.gso_size;
  v.csum_start = h.csum_start;
  v.csum_offset = h.csum_offset;
  return v;
}
ofld_vnet_hdr from_hdr(const VnetHdr& v) {
  ofld_vnet_hdr h{};
  h.flags = v.flags;
  h.gso_type = v.gso_type;
  h.hdr_len = v.hdr_len;
  h.gso_size = v.gso_size;
  h.csum_start = v.csum_start;
  h.csum_offset = v.csum_offset;
  return h;
}

// Everything a caller needs to know of an output packet: checksum state and its vnet header.
// The info of a frame of `len` bytes (`headlen` linear) described by `m`, its first byte at
// position `data_pos`.
ofld_seg_info info_of(const core::PacketMeta& m, std::size_t len, std::size_t headlen,
                      core::pos_t data_pos, std::size_t offset) {
  ofld_seg_info s{};
  s.offset = offset;
  s.len = len;
  s.ip_summed = std::uint8_t(core::ip_summed_of(m.csum));
  if (auto* u = std::get_if<core::CsumUnnecessary>(&m.csum)) s.csum_level = u->level.value();
  if (auto* c = std::get_if<core::CsumComplete>(&m.csum)) s.csum = c->csum;
  if (auto* pp = std::get_if<core::CsumPartial>(&m.csum)) {
    s.csum_start = std::uint16_t(pp->csum_start - data_pos);
    s.csum_offset = pp->csum_offset;
  }
  s.gso_size = m.gso.size;
  s.gso_segs = std::uint16_t(m.gso.segs);
  if (auto h = offload::virtio::from_meta(m, headlen, data_pos, true)) s.vnet = from_hdr(*h);
  return s;
}
ofld_seg_info info_of(const Packet& p, std::size_t offset) {
  return info_of(p.meta(), p.len(), p.headlen(), p.data_pos(), offset);
}
ofld_seg_info info_of(const core::SegmentBatch& b, std::size_t i, std::size_t offset) {
  if (!b.is_slab()) return info_of(b.packets()[i], offset);
  return info_of(b.meta(i), b.len(i), b.header_len(), 0, offset);
}

void pieces_of(const Packet& p, std::vector<ofld_iovec>& out) {
  if (p.headlen()) out.push_back({p.head().data(), p.headlen()});
  for (const auto& f : p.frags())
    if (f.len) out.push_back({f.bytes().data(), f.len});
  for (const auto& m : p.frag_list()) pieces_of(m, out);
}

int give_pieces(std::vector<ofld_iovec>& v, ofld_iovec* iov, std::size_t cap, std::size_t* niov) {
  if (niov) *niov = v.size();
  if (!iov) return ok();
  if (v.size() > cap) return fail(OFLD_E_NOSPC, "iovec array too small");
  std::copy(v.begin(), v.end(), iov);
  return ok();
}
int give_pieces(const Packet& p, ofld_iovec* iov, std::size_t cap, std::size_t* niov) {
  std::vector<ofld_iovec> v;
  pieces_of(p, v);
  return give_pieces(v, iov, cap, niov);
}
int give_pieces(const core::SegmentBatch& b, std::size_t i, ofld_iovec* iov, std::size_t cap,
                std::size_t* niov) {
  std::vector<ofld_iovec> v;
  b.for_each_piece(i, [&](std::span<const std::uint8_t> x) { v.push_back({x.data(), x.size()}); });
  return give_pieces(v, iov, cap, niov);
}

// Outputs [first, count) end to end into `out`: len(i) their sizes, put(i, dst) copies one
// (false on an internal error), info(i, offset) its info.
template <class Len, class Put, class Info>
int copy_out(std::size_t count, std::size_t first, Len&& len, Put&& put, Info&& info,
             uint8_t* out, size_t cap, size_t* used, ofld_seg_info* segs, size_t segs_cap,
             size_t* nsegs) {
  std::size_t total = 0;
  for (std::size_t i = first; i < count; ++i) total += len(i);
  const std::size_t n = count - first;
  if (used) *used = total;
  if (nsegs) *nsegs = n;
  if (total > cap || (total && !out)) return fail(OFLD_E_NOSPC, "output buffer too small");
  if (segs && n > segs_cap) return fail(OFLD_E_NOSPC, "segment info array too small");
  std::size_t off = 0;
  for (std::size_t i = first; i < count; ++i) {
    if (!put(i, out + off)) return fail(OFLD_E_INTERNAL, "copy_bits");
    if (segs) segs[i - first] = info(i, off);
    off += len(i);
  }
  return ok();
}
int copy_out(const std::vector<Packet>& outs, std::size_t first, uint8_t* out, size_t cap,
             size_t* used, ofld_seg_info* segs, size_t segs_cap, size_t* nsegs) {
  return copy_out(
      outs.size(), first, [&](std::size_t i) { return outs[i].len(); },
      [&](std::size_t i, std::uint8_t* dst) {
        return outs[i].copy_bits(0, std::span<std::uint8_t>(dst, outs[i].len())) ==
               ofld::core::PacketError::Ok;
      },
      [&](std::size_t i, std::size_t off) { return info_of(outs[i], off); }, out, cap, used, segs,
      segs_cap, nsegs);
}
int copy_out(const ofld::core::SegmentBatch& b, uint8_t* out, size_t cap, size_t* used,
             ofld_seg_info* segs, size_t segs_cap, size_t* nsegs) {
  return copy_out(
      b.size(), 0, [&](std::size_t i) { return b.len(i); },
      [&](std::size_t i, std::uint8_t* dst) {
        b.for_each_piece(i, [&](std::span<const std::uint8_t> x) {
          std::memcpy(dst, x.data(), x.size());
          dst += x.size();
        });
        return true;
      },
      [&](std::size_t i, std::size_t off) { return info_of(b, i, off); }, out, cap, used, segs,
      segs_cap, nsegs);
}

}  // namespace
}  // namespace ofld::capi

// ---- the engines' handles ----------------------------------------------------------------------

struct GsoHandle {
  ofld::core::Features features;
  ofld::core::Device dev;
  int link = OFLD_LINK_ETHERNET;
  ofld::core::BufferRef in;  // the zero-copy input buffer
  ofld::core::SegmentBatch outs;  // the last run's outputs (a slab for plain TCP TSO)
  ofld::gso::GsoCounters ctr;
  ofld::offload::virtio::VnetCounters vctr;
};

struct GroHandle {
  explicit GroHandle(ofld::gro::EngineOptions o) : engine(std::move(o)) {}
  ofld::gro::Engine engine;
  std::size_t next = 0;                      // first output not yet taken
  std::vector<ofld::core::Packet> scratch;   // the batch being received
};

struct TunnelHandle {
  std::unique_ptr<ofld::tunnel::Endpoint> ep;
  ofld::tunnel::Counters ctr;
};

// The C handles are never defined (ofld.h declares them incomplete): the library's debug
// information, and so its ABI baseline, shows them as opaque; these are what they point to.
GsoHandle* impl(ofld_gso* p) { return reinterpret_cast<GsoHandle*>(p); }
const GsoHandle* impl(const ofld_gso* p) { return reinterpret_cast<const GsoHandle*>(p); }
GroHandle* impl(ofld_gro* p) { return reinterpret_cast<GroHandle*>(p); }
const GroHandle* impl(const ofld_gro* p) { return reinterpret_cast<const GroHandle*>(p); }
TunnelHandle* impl(ofld_tunnel* p) { return reinterpret_cast<TunnelHandle*>(p); }

using namespace ofld::capi;  // NOLINT: the C entry points below are glue for this namespace

// ---- version, errors ---------------------------------------------------------------------------

extern "C" {

int ofld_api_version(void) { return OFLD_API_VERSION; }
const char* ofld_version(void) { return ofld::version(); }

const char* ofld_strerror(int code) {
  switch (code) {
    case OFLD_OK: return "ok";
    case OFLD_E_INVAL: return "invalid argument";
    case OFLD_E_NOSPC: return "buffer too small";
    case OFLD_E_VNET: return "virtio_net_hdr refused";
    case OFLD_E_GSO: return "GSO refused the frame";
    case OFLD_E_FEATURE: return "unknown feature name";
    case OFLD_E_DROP: return "tunnel dropped the frame";
    case OFLD_E_PARSE: return "frame cannot be parsed";
    case OFLD_E_IO: return "file error";
    case OFLD_E_NOMEM: return "out of memory";
    case OFLD_E_STATE: return "nothing to take";
    case OFLD_E_INTERNAL: return "internal error";
    default: return "unknown error";
  }
}
const char* ofld_last_reason(void) { return t_reason.c_str(); }

// ---- checksums -----------------------------------------------------------------------------------

uint32_t ofld_csum_partial(const void* data, size_t len, uint32_t seed) {
  if (!data) return seed;
  return cs::csum_partial(data, len, seed);
}
uint32_t ofld_csum_partial_copy(void* dst, const void* src, size_t len, uint32_t seed) {
  if (!dst || !src) return seed;
  return cs::csum_partial_copy(dst, src, len, seed);
}
uint32_t ofld_csum_add(uint32_t a, uint32_t b) { return cs::csum_add(a, b); }
uint32_t ofld_csum_block_add(uint32_t total, uint32_t block, size_t offset) {
  return cs::csum_block_add(total, block, offset);
}
uint16_t ofld_csum_fold(uint32_t w) { return cs::csum_fold(w); }
uint16_t ofld_csum_fold16(uint32_t w) { return cs::csum_fold16(w); }
uint32_t ofld_csum_tcpudp_nofold(const uint8_t saddr[4], const uint8_t daddr[4], uint32_t len,
                                 uint8_t proto, uint32_t seed) {
  if (!saddr || !daddr) return seed;
  return cs::csum_tcpudp_nofold(saddr, daddr, len, proto, seed);
}
uint32_t ofld_csum_ipv6_nofold(const uint8_t saddr[16], const uint8_t daddr[16], uint32_t len,
                               uint8_t proto, uint32_t seed) {
  if (!saddr || !daddr) return seed;
  return cs::csum_ipv6_nofold(saddr, daddr, len, proto, seed);
}
uint16_t ofld_csum_replace2(uint16_t check, uint16_t old_v, uint16_t new_v) {
  return cs::csum_replace2(check, old_v, new_v);
}
uint16_t ofld_csum_replace4(uint16_t check, uint32_t old_v, uint32_t new_v) {
  return cs::csum_replace4(check, old_v, new_v);
}
uint16_t ofld_ip_compute_csum(const void* data, size_t len) {
  if (!data) return cs::csum_fold(0);
  return cs::ip_compute_csum(data, len);
}

// ---- features ------------------------------------------------------------------------------------

int ofld_features_parse(const char* names, uint64_t* bits) {
  return guard([&] {
    if (!names || !bits) return fail(OFLD_E_INVAL, "null argument");
    auto r = ofld::core::parse_features(ofld::tools::expand_ethtool_aliases(names));
    if (!r.ok()) return fail(OFLD_E_FEATURE, r.error);
    *bits = r.features.bits;
    return ok();
  });
}

// ---- virtio_net_hdr ------------------------------------------------------------------------------

int ofld_vnet_hdr_load(const uint8_t* in, size_t len, int little_endian, ofld_vnet_hdr* out) {
  if (!in || !out) return fail(OFLD_E_INVAL, "null argument");
  if (len < OFLD_VNET_HDR_LEN) return fail(OFLD_E_INVAL, "virtio_net_hdr: fewer than 10 bytes");
  *out = from_hdr(VnetHdr::load(in, little_endian != 0));
  return ok();
}
int ofld_vnet_hdr_store(const ofld_vnet_hdr* h, int little_endian, uint8_t* out, size_t cap) {
  if (!h || !out) return fail(OFLD_E_INVAL, "null argument");
  if (cap < OFLD_VNET_HDR_LEN) return fail(OFLD_E_NOSPC, "virtio_net_hdr: 10 bytes needed");
  to_hdr(*h).store(out, little_endian != 0);
  return ok();
}
const char* ofld_vnet_reject_name(int r) {
  if (r < 0 || r >= int(ofld::offload::virtio::VnetReject::kCount)) return "";
  return cstr(ofld::offload::virtio::to_string(ofld::offload::virtio::VnetReject(r)));
}
int ofld_vnet_validate(const ofld_vnet_hdr* h, const uint8_t* frame, size_t len, int link,
                       int* reject) {
  return guard([&] {
    if (reject) *reject = 0;
    if (!h || (!frame && len) || !link_ok(link)) return fail(OFLD_E_INVAL, "bad argument");
    auto r = ofld::offload::virtio::to_packet(to_hdr(*h), bytes(frame, len), wire_link(link));
    if (r.ok()) return ok();
    if (reject) *reject = int(r.reason);
    return fail(OFLD_E_VNET, ofld::offload::virtio::to_string(r.reason));
  });
}
int ofld_vnet_build(uint8_t* frame, size_t* len, int link, uint16_t gso_size, int input_seeds,
                    ofld_vnet_hdr* out) {
  return guard([&] {
    if (!frame || !len || !out || !link_ok(link)) return fail(OFLD_E_INVAL, "bad argument");
    const auto in = bytes(frame, *len);
    auto layout = ofld::wire::parse_frame(in, wire_link(link), {});
    if (!layout.ok()) return fail(OFLD_E_PARSE, layout.error().to_string());
    ofld::gso::PrepareOptions po;
    po.gso_size = gso_size;
    po.input = input_seeds ? ofld::gso::InputCsum::Seeds : ofld::gso::InputCsum::Complete;
    auto pr = ofld::gso::prepare_frame(in, layout.value(), po);
    if (pr.status == ofld::gso::PrepareStatus::PassThrough &&
        pr.pkt.ip_summed() != ofld::core::IpSummed::Partial)
      return fail(OFLD_E_PARSE, pr.why.empty() ? std::string("no TCP/UDP checksum to offload")
                                               : pr.why);
    auto h = ofld::offload::virtio::from_packet(pr.pkt, true);
    if (!h) return fail(OFLD_E_PARSE, "no virtio_net_hdr describes this frame");
    const std::size_t n = pr.pkt.len();
    if (n > *len) return fail(OFLD_E_INTERNAL, "prepared frame longer than the input");
    if (pr.pkt.copy_bits(0, std::span<std::uint8_t>(frame, n)) != ofld::core::PacketError::Ok)
      return fail(OFLD_E_INTERNAL, "copy_bits");
    *len = n;
    *out = from_hdr(*h);
    return ok();
  });
}

// ---- GSO -----------------------------------------------------------------------------------------

ofld_gso* ofld_gso_new(uint64_t features, int link) {
  if (!link_ok(link)) {
    fail(OFLD_E_INVAL, "unknown link type");
    return nullptr;
  }
  try {
    auto* g = new GsoHandle;
    g->features = ofld::core::Features{features};
    g->dev.features = g->features;
    g->link = link;
    ok();
    return reinterpret_cast<ofld_gso*>(g);
  } catch (...) {
    fail(OFLD_E_NOMEM, "out of memory");
    return nullptr;
  }
}
void ofld_gso_free(ofld_gso* g_) {
  auto* g = impl(g_);
  delete g;
}

uint8_t* ofld_gso_input(ofld_gso* g_, size_t cap) {
  auto* g = impl(g_);
  if (!g || cap == 0 || cap > (16u << 20)) {
    fail(OFLD_E_INVAL, "bad argument");
    return nullptr;
  }
  try {
    g->outs.clear();  // the previous segments may reference the old buffer
    if (!g->in || g->in.use_count() != 1 || g->in->bytes.size() < cap)
      g->in = ofld::core::Buffer::create(cap);
    ok();
    return g->in->bytes.data();
  } catch (...) {
    fail(OFLD_E_NOMEM, "out of memory");
    return nullptr;
  }
}

int ofld_gso_run(ofld_gso* g_, const uint8_t* frame, size_t len, const ofld_vnet_hdr* vnet,
                 uint16_t gso_size, int input_seeds) {
  auto* g = impl(g_);
  return guard([&] {
    if (!g || (!frame && len)) return fail(OFLD_E_INVAL, "bad argument");
    const auto in = bytes(frame, len);
    // The frame lies in the engine's input buffer: its payload is referenced, not copied.
    const ofld::core::BufferRef* owner = nullptr;
    std::optional<ofld::core::BufferRef> keep;
    if (g->in && len && frame >= g->in->bytes.data() &&
        frame + len <= g->in->bytes.data() + g->in->bytes.size()) {
      keep = g->in;
      owner = &*keep;
    }
    g->outs.clear();
    Packet p;
    if (vnet) {
      auto r = ofld::offload::virtio::to_packet(to_hdr(*vnet), in, wire_link(g->link), &g->vctr,
                                                owner);
      if (!r.ok()) return fail(OFLD_E_VNET, ofld::offload::virtio::to_string(r.reason));
      p = std::move(r.pkt);
    } else {
      auto layout = ofld::wire::parse_frame(in, wire_link(g->link), {});
      if (!layout.ok()) return fail(OFLD_E_PARSE, layout.error().to_string());
      ofld::gso::PrepareOptions po;
      po.gso_size = gso_size;
      po.input = input_seeds ? ofld::gso::InputCsum::Seeds : ofld::gso::InputCsum::Complete;
      auto pr = ofld::gso::prepare_frame(in, layout.value(), po);
      p = std::move(pr.pkt);
    }
    // validate_xmit_skb for the device: software GSO and checksums as its features need.
    auto tx = ofld::gso::tx_prepare_batch(std::move(p), g->dev, g->outs, &g->ctr);
    if (tx.gso_reason != ofld::gso::GsoReason::Ok)
      return fail(OFLD_E_GSO, ofld::core::to_string(tx.gso_reason));
    if (tx.csum_error != ofld::core::PacketError::Ok) {
      g->outs.clear();
      return fail(OFLD_E_GSO, ofld::core::to_string(tx.csum_error));
    }
    return ok();
  });
}

size_t ofld_gso_count(const ofld_gso* g_) {
  auto* g = impl(g_); return g ? g->outs.size() : 0; }

int ofld_gso_output(const ofld_gso* g_, size_t i, ofld_seg_info* info, ofld_iovec* iov,
                    size_t iov_cap, size_t* niov) {
  auto* g = impl(g_);
  return guard([&] {
    if (!g) return fail(OFLD_E_INVAL, "null handle");
    if (i >= g->outs.size()) return fail(OFLD_E_INVAL, "no such output");
    if (info) *info = info_of(g->outs, i, 0);
    return give_pieces(g->outs, i, iov, iov_cap, niov);
  });
}


int ofld_gso_copy_all(const ofld_gso* g_, uint8_t* out, size_t cap, size_t* used,
                      ofld_seg_info* segs, size_t segs_cap, size_t* nsegs) {
  auto* g = impl(g_);
  return guard([&] {
    if (!g) return fail(OFLD_E_INVAL, "null handle");
    return copy_out(g->outs, out, cap, used, segs, segs_cap, nsegs);
  });
}

int ofld_gso_segment(const uint8_t* frame, size_t len, const ofld_vnet_hdr* vnet,
                     uint16_t gso_size, uint64_t features, int link, uint8_t* out, size_t cap,
                     size_t* used, ofld_seg_info* segs, size_t segs_cap, size_t* nsegs) {
  std::unique_ptr<ofld_gso, void (*)(ofld_gso*)> g(ofld_gso_new(features, link), ofld_gso_free);
  if (!g) return link_ok(link) ? OFLD_E_NOMEM : OFLD_E_INVAL;
  const int r = ofld_gso_run(g.get(), frame, len, vnet, gso_size, 0);
  if (r != OFLD_OK) return r;
  return ofld_gso_copy_all(g.get(), out, cap, used, segs, segs_cap, nsegs);
}

int ofld_gso_get_counters(const ofld_gso* g_, ofld_gso_counters* out) {
  auto* g = impl(g_);
  if (!g || !out) return fail(OFLD_E_INVAL, "null argument");
  *out = ofld_gso_counters{};
  out->packets_in = g->ctr.packets_in;
  out->packets_segmented = g->ctr.packets_segmented;
  out->packets_hw = g->ctr.packets_hw;
  out->segments_out = g->ctr.segments_out;
  out->payload_bytes_copied = g->ctr.payload_bytes_copied;
  out->payload_bytes_referenced = g->ctr.payload_bytes_referenced;
  out->header_bytes_copied = g->ctr.header_bytes_copied;
  for (auto v : g->vctr.rejected) out->vnet_rejected += v;
  static_assert(std::size_t(ofld::core::GsoReason::kCount) <= OFLD_GSO_REASONS);
  for (std::size_t i = 0; i < g->ctr.errors.size(); ++i) out->errors[i] = g->ctr.errors[i];
  return ok();
}
const char* ofld_gso_reason_name(int r) {
  if (r < 0 || r >= int(ofld::core::GsoReason::kCount)) return "";
  return cstr(ofld::core::to_string(ofld::core::GsoReason(r)));
}

// ---- GRO -----------------------------------------------------------------------------------------

ofld_gro* ofld_gro_new(const ofld_gro_config* cfg) {
  ofld_gro_config c = OFLD_GRO_CONFIG_INIT;
  if (cfg) {
    if (cfg->struct_size < sizeof(size_t) || cfg->struct_size > sizeof(ofld_gro_config)) {
      fail(OFLD_E_INVAL, "ofld_gro_config: bad struct_size");
      return nullptr;
    }
    std::memcpy(&c, cfg, cfg->struct_size);
  }
  if (!link_ok(c.link)) {
    fail(OFLD_E_INVAL, "unknown link type");
    return nullptr;
  }
  try {
    ofld::gro::EngineOptions o;
    o.link = c.link == OFLD_LINK_RAW_IP ? ofld::gro::LinkLayer::RawIp : ofld::gro::LinkLayer::Ethernet;
    const ofld::core::Features f{c.features};
    o.config.gro = f.has(ofld::core::netif_f::GRO);
    o.config.gro_fraglist = f.has(ofld::core::netif_f::GRO_FRAGLIST);
    o.config.udp_gro_fwd = f.has(ofld::core::netif_f::GRO_UDP_FWD);
    if (c.fixed_flow_hash_key) o.config.flow_hash_key = c.flow_hash_key;
    o.flush_timeout_ns = c.flush_timeout_ns;
    o.batch = c.batch ? c.batch : 64;
    if (c.vnet_types_only) o.gso_types = ofld::offload::virtio::kGsoTypes;
    auto* g = new GroHandle(std::move(o));
    ok();
    return reinterpret_cast<ofld_gro*>(g);
  } catch (...) {
    fail(OFLD_E_NOMEM, "out of memory");
    return nullptr;
  }
}
void ofld_gro_free(ofld_gro* g_) {
  auto* g = impl(g_);
  delete g;
}

int ofld_gro_receive(ofld_gro* g_, const ofld_frame* frames, size_t n, int ip_summed,
                     int csum_level, uint64_t now_ns) {
  auto* g = impl(g_);
  return guard([&] {
    if (!g || (!frames && n)) return fail(OFLD_E_INVAL, "bad argument");
    if (ip_summed != OFLD_CSUM_NONE && ip_summed != OFLD_CSUM_UNNECESSARY &&
        ip_summed != OFLD_CSUM_COMPLETE)
      return fail(OFLD_E_INVAL, "ip_summed: a receiving device reports NONE, UNNECESSARY or COMPLETE");
    if (csum_level < 0 || csum_level > 3) return fail(OFLD_E_INVAL, "csum_level: 0..3");
    for (std::size_t i = 0; i < n; ++i)
      if (!frames[i].data && frames[i].len) return fail(OFLD_E_INVAL, "frame without data");
    auto& s = g->scratch;
    s.clear();
    s.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto b = bytes(frames[i].data, frames[i].len);
      Packet p = Packet::from_bytes(b);
      if (ip_summed == OFLD_CSUM_UNNECESSARY)
        p.csum = ofld::core::CsumUnnecessary{ofld::core::CsumLevel(unsigned(csum_level))};
      else if (ip_summed == OFLD_CSUM_COMPLETE)
        p.csum = ofld::core::CsumComplete{cs::csum_partial(b.data(), b.size(), 0)};
      p.tstamp = now_ns;
      s.push_back(std::move(p));
    }
    g->engine.receive_batch(s, now_ns);
    s.clear();
    return ok();
  });
}

int ofld_gro_receive_packed(ofld_gro* g_, const uint8_t* buf, size_t buf_len,
                            const uint64_t* lens, size_t n, int ip_summed, int csum_level,
                            uint64_t now_ns) {
  auto* g = impl(g_);
  return guard([&] {
    if (!g || (!buf && buf_len) || (!lens && n)) return fail(OFLD_E_INVAL, "bad argument");
    std::vector<ofld_frame> fr(n);
    std::size_t off = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (lens[i] > buf_len - off) return fail(OFLD_E_INVAL, "lengths exceed the buffer");
      fr[i] = {buf + off, std::size_t(lens[i])};
      off += std::size_t(lens[i]);
    }
    return ofld_gro_receive(g_, fr.data(), n, ip_summed, csum_level, now_ns);
  });
}

int ofld_gro_flush(ofld_gro* g_, uint64_t now_ns, int all) {
  auto* g = impl(g_);
  return guard([&] {
    if (!g) return fail(OFLD_E_INVAL, "null handle");
    g->engine.poll_end(now_ns);
    if (all) g->engine.flush_all();
    return ok();
  });
}

size_t ofld_gro_pending(const ofld_gro* g_) {
  auto* g = impl(g_);
  if (!g) return 0;
  return const_cast<GroHandle*>(g)->engine.output().size() - g->next;
}

int ofld_gro_peek(const ofld_gro* g_, ofld_seg_info* info, ofld_iovec* iov, size_t iov_cap,
                  size_t* niov) {
  auto* g = impl(g_);
  return guard([&] {
    if (!g) return fail(OFLD_E_INVAL, "null handle");
    auto& outs = const_cast<GroHandle*>(g)->engine.output();
    if (g->next >= outs.size()) return fail(OFLD_E_STATE, "no output pending");
    if (info) *info = info_of(outs[g->next], 0);
    return give_pieces(outs[g->next], iov, iov_cap, niov);
  });
}

namespace {
// `finish`: complete a PARTIAL output's checksums in software (gro::finish_checksums, which
// keeps the packet's metadata). The frame is then valid as it stands, so it is reported as
// verified (CHECKSUM_UNNECESSARY: its virtio_net_hdr says DATA_VALID, not NEEDS_CSUM, which
// would make a TAP sum it again over the completed field).
void finish_output(Packet& p) {
  if (p.ip_summed() != ofld::core::IpSummed::Partial) return;
  ofld::gro::finish_checksums(p);
  p.csum = ofld::core::CsumUnnecessary{};
}
void gro_taken(GroHandle* g) {
  auto& outs = g->engine.output();
  if (++g->next >= outs.size()) {
    outs.clear();
    g->next = 0;
  }
}
}  // namespace

int ofld_gro_next(ofld_gro* g_, uint8_t* out, size_t cap, size_t* len, int finish,
                  ofld_seg_info* info) {
  auto* g = impl(g_);
  return guard([&] {
    if (!g) return fail(OFLD_E_INVAL, "null handle");
    auto& outs = g->engine.output();
    if (g->next >= outs.size()) return fail(OFLD_E_STATE, "no output pending");
    Packet& p = outs[g->next];
    if (len) *len = p.len();
    if (out && p.len() > cap) return fail(OFLD_E_NOSPC, "output buffer too small");
    if (finish) finish_output(p);
    if (info) *info = info_of(p, 0);
    if (out && p.copy_bits(0, std::span<std::uint8_t>(out, p.len())) != ofld::core::PacketError::Ok)
      return fail(OFLD_E_INTERNAL, "copy_bits");
    gro_taken(g);
    return ok();
  });
}

int ofld_gro_next_all(ofld_gro* g_, uint8_t* out, size_t cap, size_t* used, int finish,
                      ofld_seg_info* segs, size_t segs_cap, size_t* nsegs) {
  auto* g = impl(g_);
  return guard([&] {
    if (!g) return fail(OFLD_E_INVAL, "null handle");
    auto& outs = g->engine.output();
    std::size_t total = 0;
    for (std::size_t i = g->next; i < outs.size(); ++i) total += outs[i].len();
    if (finish && total <= cap && (out || !total) && (!segs || outs.size() - g->next <= segs_cap))
      for (std::size_t i = g->next; i < outs.size(); ++i) finish_output(outs[i]);
    const int r = copy_out(outs, g->next, out, cap, used, segs, segs_cap, nsegs);
    if (r != OFLD_OK) return r;
    outs.clear();
    g->next = 0;
    return ok();
  });
}

int ofld_gro_get_counters(const ofld_gro* g_, ofld_gro_counters* out) {
  auto* g = impl(g_);
  if (!g || !out) return fail(OFLD_E_INVAL, "null argument");
  const auto& c = g->engine.counters();
  *out = ofld_gro_counters{};
  out->packets_in = c.packets_in;
  out->merged = c.merged;
  out->held = c.held;
  out->delivered_now = c.delivered_now;
  out->aggregates = c.aggregates;
  out->singles = c.singles;
  out->segments_out = c.segments_out;
  static_assert(ofld::gro::kGroReasonCount <= OFLD_GRO_REASONS);
  for (std::size_t i = 0; i < ofld::gro::kGroReasonCount; ++i) {
    out->not_merged[i] = c.not_merged[i];
    out->completed[i] = c.completed[i];
  }
  return ok();
}
const char* ofld_gro_reason_name(int r) {
  if (r < 0 || r >= int(ofld::gro::kGroReasonCount)) return "";
  return cstr(ofld::offload::to_string(ofld::gro::GroReason(r)));
}
uint64_t ofld_gro_flow_hash_key(const ofld_gro* g_) {
  auto* g = impl(g_); return g ? g->engine.flow_hash_key() : 0; }

// ---- tunnels -------------------------------------------------------------------------------------

ofld_tunnel* ofld_tunnel_new(const ofld_tunnel_config* cfg) {
  if (!cfg || cfg->struct_size != sizeof(ofld_tunnel_config)) {
    fail(OFLD_E_INVAL, "ofld_tunnel_config: null or bad struct_size");
    return nullptr;
  }
  try {
    using ofld::tunnel::IpAddr;
    // The addresses only choose the underlay family here (the kernel builds the outer header).
    const IpAddr local = *IpAddr::parse(cfg->ipv6 ? "2001:db8::1" : "192.0.2.1");
    const IpAddr remote = *IpAddr::parse(cfg->ipv6 ? "2001:db8::2" : "192.0.2.2");
    auto t = std::make_unique<TunnelHandle>();
    if (cfg->kind == OFLD_TUNNEL_VXLAN) {
      ofld::tunnel::VxlanConfig v;
      v.vni = cfg->vni;
      v.local = local;
      v.remotes = {remote};
      v.udp_csum = cfg->udp_csum != 0;
      v.udp6_zero_csum_tx = cfg->udp6_zero_csum_tx != 0;
      v.udp6_zero_csum_rx = cfg->udp6_zero_csum_rx != 0;
      v.remcsum_tx = cfg->remcsum_tx != 0;
      v.remcsum_rx = cfg->remcsum_rx != 0;
      v.remcsum_nopartial = cfg->remcsum_nopartial != 0;
      v.learning = false;
      if (auto e = ofld::tunnel::validate(v)) {
        fail(OFLD_E_INVAL, *e);
        return nullptr;
      }
      t->ep = std::make_unique<ofld::tunnel::Endpoint>(std::move(v));
    } else if (cfg->kind == OFLD_TUNNEL_GUE || cfg->kind == OFLD_TUNNEL_GRE) {
      // The C struct holds every mode's fields: a field of the other mode is refused.
      const bool gue = cfg->kind == OFLD_TUNNEL_GUE;
      const bool gre_fields = cfg->has_ikey || cfg->has_okey || cfg->icsum || cfg->ocsum;
      const bool udp_fields = cfg->remcsum_tx || cfg->remcsum_rx || cfg->remcsum_nopartial ||
                              !cfg->udp_csum || cfg->udp6_zero_csum_tx || cfg->udp6_zero_csum_rx;
      ofld::tunnel::TunnelConfig tc;
      if (gue) {
        if (gre_fields) {
          fail(OFLD_E_INVAL, "key/csum: GRE settings, not valid for gue");
          return nullptr;
        }
        ofld::tunnel::GueConfig c;
        c.local = local;
        c.remote = remote;
        c.port = cfg->port;
        c.udp_csum = cfg->udp_csum != 0;
        c.udp6_zero_csum_tx = cfg->udp6_zero_csum_tx != 0;
        c.udp6_zero_csum_rx = cfg->udp6_zero_csum_rx != 0;
        c.remcsum_tx = cfg->remcsum_tx != 0;
        c.remcsum_rx = cfg->remcsum_rx != 0;
        c.remcsum_nopartial = cfg->remcsum_nopartial != 0;
        if (auto e = ofld::tunnel::validate(c)) {
          fail(OFLD_E_INVAL, *e);
          return nullptr;
        }
        tc = std::move(c);
      } else {
        if (udp_fields) {
          fail(OFLD_E_INVAL, "udpcsum/remcsum*: not a gre setting (GRE has no UDP header)");
          return nullptr;
        }
        ofld::tunnel::GreConfig c;
        c.local = local;
        c.remote = remote;
        if (cfg->has_ikey) c.ikey = cfg->ikey;
        if (cfg->has_okey) c.okey = cfg->okey;
        c.icsum = cfg->icsum != 0;
        c.ocsum = cfg->ocsum != 0;
        if (auto e = ofld::tunnel::validate(c)) {
          fail(OFLD_E_INVAL, *e);
          return nullptr;
        }
        tc = std::move(c);
      }
      t->ep = std::make_unique<ofld::tunnel::Endpoint>(std::move(tc));
    } else {
      fail(OFLD_E_INVAL, "unknown tunnel kind");
      return nullptr;
    }
    ok();
    return reinterpret_cast<ofld_tunnel*>(t.release());
  } catch (const std::bad_alloc&) {
    fail(OFLD_E_NOMEM, "out of memory");
  } catch (const std::exception& e) {
    fail(OFLD_E_INVAL, e.what());
  }
  return nullptr;
}
void ofld_tunnel_free(ofld_tunnel* t_) {
  auto* t = impl(t_);
  delete t;
}

const char* ofld_tunnel_drop_name(int d) {
  if (d < 0 || d >= int(ofld::tunnel::kDropCount)) return "";
  return cstr(ofld::tunnel::to_string(ofld::tunnel::Drop(d)));
}

int ofld_tunnel_encap(ofld_tunnel* t_, const uint8_t* frame, size_t len, const ofld_vnet_hdr* vnet,
                      uint8_t* out, size_t cap, size_t* used, ofld_tunnel_info* info) {
  auto* t = impl(t_);
  return guard([&] {
    if (info) *info = ofld_tunnel_info{};
    if (!t || (!frame && len)) return fail(OFLD_E_INVAL, "bad argument");
    if (vnet && (vnet->gso_type & ~OFLD_VNET_GSO_ECN) != OFLD_VNET_GSO_NONE)
      return fail(OFLD_E_INVAL, "a GSO frame: segment it first (ofld_gso_run)");
    const auto& enc = t->ep->encapsulation();
    const auto in = bytes(frame, len);
    auto drop = [&](ofld::tunnel::Drop d) {
      if (info) info->drop = int(d);
      return fail(OFLD_E_DROP, ofld::tunnel::to_string(d));
    };
    if (auto d = enc.tx_check(in)) return drop(*d);
    Packet p = Packet::from_bytes(in);
    if (vnet && (vnet->flags & OFLD_VNET_F_NEEDS_CSUM)) {
      // The checksum state a TAP write gives the frame (virtio_net_hdr_to_skb, S-1..S-5).
      auto r = ofld::offload::virtio::to_packet(to_hdr(*vnet), in, enc.link());
      if (!r.ok()) return fail(OFLD_E_VNET, ofld::offload::virtio::to_string(r.reason));
      p = std::move(r.pkt);
    }
    std::array<std::uint8_t, ofld::tunnel::kMaxTunnelHdr> hdr{};
    auto ei = ofld::tunnel::encap_one(enc, p, hdr);
    if (!ei.ok) return drop(ei.reason);
    const std::size_t n = ei.hdr_len + p.len();
    if (used) *used = n;
    if (info) {
      info->rco = ei.rco;
      info->csum_sw = ei.csum_sw;
      info->hdr_len = ei.hdr_len;
    }
    if (!out || n > cap) return fail(OFLD_E_NOSPC, "output buffer too small");
    std::memcpy(out, hdr.data(), ei.hdr_len);
    if (p.copy_bits(0, std::span<std::uint8_t>(out + ei.hdr_len, p.len())) !=
        ofld::core::PacketError::Ok)
      return fail(OFLD_E_INTERNAL, "copy_bits");
    enc.finish(std::span<std::uint8_t>(out, n));
    return ok();
  });
}

int ofld_tunnel_decap(ofld_tunnel* t_, const uint8_t* payload, size_t len, int outer_csum,
                      int outer_tos, uint8_t* out, size_t cap, size_t* used, ofld_seg_info* seg,
                      ofld_tunnel_info* info) {
  auto* t = impl(t_);
  return guard([&] {
    if (info) *info = ofld_tunnel_info{};
    if (!t || (!payload && len)) return fail(OFLD_E_INVAL, "bad argument");
    if (outer_csum < OFLD_OUTER_CSUM_UNKNOWN || outer_csum > OFLD_OUTER_CSUM_ZERO)
      return fail(OFLD_E_INVAL, "outer_csum: OFLD_OUTER_CSUM_*");
    if (outer_tos < -1 || outer_tos > 255) return fail(OFLD_E_INVAL, "outer_tos: -1 or 0..255");
    auto r = t->ep->encapsulation().decap(bytes(payload, len),
                                          ofld::tunnel::OuterCsum(outer_csum), t->ctr, nullptr,
                                          outer_tos);
    if (!r.ok) {
      if (info) info->drop = int(r.reason);
      return fail(OFLD_E_DROP, ofld::tunnel::to_string(r.reason));
    }
    if (info) info->rco = r.rco;
    const std::size_t n = r.pkt.len();
    if (used) *used = n;
    if (seg) *seg = info_of(r.pkt, 0);
    if (!out || n > cap) return fail(OFLD_E_NOSPC, "output buffer too small");
    if (r.pkt.copy_bits(0, std::span<std::uint8_t>(out, n)) != ofld::core::PacketError::Ok)
      return fail(OFLD_E_INTERNAL, "copy_bits");
    return ok();
  });
}

// ---- captures ------------------------------------------------------------------------------------

namespace {
ofld_csum_record record_of(const ofld::tools::CsumField& f, std::uint64_t frame, bool datagram) {
  ofld_csum_record r{};
  r.frame = frame;
  r.kind = std::uint8_t(f.kind);
  r.level = f.level;
  r.verdict = std::uint8_t(f.verdict);
  r.skip_reason = std::uint8_t(f.reason);
  r.ipv6 = f.ipv6;
  r.lco = f.lco;
  r.in_fragment = f.in_fragment;
  r.datagram = datagram;
  r.field_offset = f.field_offset;
  r.found = f.found;
  r.expected = f.expected;
  r.seed = f.seed;
  return r;
}
}  // namespace

int ofld_verify_frame(const uint8_t* frame, size_t len, int link, uint32_t orig_len,
                      ofld_csum_record* recs, size_t cap, size_t* n) {
  return guard([&] {
    if ((!frame && len) || !link_ok(link) || !n) return fail(OFLD_E_INVAL, "bad argument");
    auto rep = ofld::tools::verify_frame(bytes(frame, len), wire_link(link),
                                         orig_len ? orig_len : std::uint32_t(len));
    *n = rep.fields.size();
    if (rep.parse_error) return fail(OFLD_E_PARSE, rep.parse_error->to_string());
    if (rep.fields.size() > cap || (!recs && !rep.fields.empty()))
      return fail(OFLD_E_NOSPC, "record array too small");
    for (std::size_t i = 0; i < rep.fields.size(); ++i) recs[i] = record_of(rep.fields[i], 0, false);
    return ok();
  });
}

int ofld_verify_file(const char* path, int no_reassembly, ofld_record_fn fn, void* user,
                     ofld_verify_summary* sum) {
  return guard([&] {
    if (!path) return fail(OFLD_E_INVAL, "null path");
    ofld::io::PcapReader reader(path);
    const auto link = ofld::io::to_wire_link(reader.link());
    ofld::tools::CaptureVerifier cv(link);
    ofld::tools::Summary s;
    ofld::io::PcapRecord rec;
    std::uint64_t no = 0;
    bool stop = false;
    while (!stop && reader.next(rec)) {
      ++no;
      const std::uint64_t ts = std::uint64_t(rec.ts_sec) * 1000000000ull + rec.ts_nsec;
      auto r = no_reassembly ? ofld::tools::verify_frame(rec.bytes(), link, rec.len)
                             : cv.verify(rec.bytes(), rec.len, no, ts);
      s.add(r);
      if (!fn) continue;
      for (const auto& f : r.fields) {
        const ofld_csum_record c = record_of(f, no, false);
        if (!stop && fn(&c, user)) stop = true;
      }
      for (const auto& d : r.datagrams)
        for (const auto& f : d.fields) {
          const ofld_csum_record c = record_of(f, no, true);
          if (!stop && fn(&c, user)) stop = true;
        }
    }
    if (!stop && !no_reassembly)
      for (const auto& d : cv.finish()) s.add(d);
    if (sum) {
      *sum = ofld_verify_summary{};
      sum->frames = s.frames;
      sum->frames_with_bad = s.frames_with_bad;
      sum->frames_with_partial = s.frames_with_partial;
      sum->frames_skipped = s.frames_skipped;
      sum->parse_errors = s.parse_errors;
      sum->datagrams = s.datagrams;
      for (std::size_t k = 0; k < 6; ++k)
        for (std::size_t v = 0; v < 5; ++v) sum->fields[k][v] = s.fields[k][v];
    }
    if (!reader.cut_short().empty()) return fail(OFLD_E_IO, reader.cut_short());
    return ok();
  });
}

const char* ofld_csum_kind_name(int k) {
  if (k < 0 || k >= int(ofld::tools::kNumCsumKinds)) return "";
  return cstr(ofld::tools::to_string(ofld::tools::CsumKind(k)));
}
const char* ofld_verdict_name(int v) {
  if (v < 0 || v >= int(ofld::tools::kNumVerdicts)) return "";
  return cstr(ofld::tools::to_string(ofld::tools::Verdict(v)));
}
const char* ofld_skip_reason_name(int r) {
  if (r < 0 || r > int(ofld::tools::SkipReason::Fragment)) return "";
  return cstr(ofld::tools::to_string(ofld::tools::SkipReason(r)));
}

// ---- pcap tools ----------------------------------------------------------------------------------

int ofld_gso_pcap(const char* in, const char* out, uint16_t mss, const char* features,
                  uint64_t* segments) {
  return guard([&] {
    if (!in || !out) return fail(OFLD_E_INVAL, "null path");
    ofld::tools::GsoToolOptions o;
    o.in = in;
    o.out = out;
    o.mss = mss;
    if (features) {
      uint64_t bits = 0;
      if (int r = ofld_features_parse(features, &bits); r != OFLD_OK) return r;
      o.features = ofld::tools::expand_ethtool_aliases(features);
      o.have_features = true;
    }
    auto s = ofld::tools::run_gso_pcap(o);
    if (segments) *segments = s.segments;
    return ok();
  });
}

int ofld_gro_pcap(const char* in, const char* out, const char* features, uint64_t* frames_out) {
  return guard([&] {
    if (!in || !out) return fail(OFLD_E_INVAL, "null path");
    ofld::tools::GroPcapOptions o;
    if (features) {
      try {
        ofld::tools::apply_gro_features(features, o.config);
      } catch (const std::invalid_argument& e) {
        return fail(OFLD_E_FEATURE, e.what());
      }
    }
    auto r = ofld::tools::run_gro_pcap(in, out, o);
    if (frames_out) *frames_out = r.frames_out;
    return ok();
  });
}

}  // extern "C"

// GSO engine entry (net/core/gso.c __skb_gso_segment, skb_mac_gso_segment) and transmit
// preparation (net/core/dev.c validate_xmit_skb). Spec X-1..X-4, F-17..F-20.
#include "ofld/gso/gso.hpp"

#include "ofld/offload/registry.hpp"
#include "ofld/wire/bytes.hpp"

namespace ofld::offload {

std::string_view to_string(GsoReason r) noexcept {
  switch (r) {
    case GsoReason::Ok: return "ok";
    case GsoReason::NotGso: return "not-gso";
    case GsoReason::BadGsoType: return "bad-gso-type";
    case GsoReason::HeaderTruncated: return "header-truncated";
    case GsoReason::BadIpHeader: return "bad-ip-header";
    case GsoReason::BadTcpHeader: return "bad-tcp-header";
    case GsoReason::CsumStartMismatch: return "csum-start-mismatch";
    case GsoReason::NothingToSegment: return "nothing-to-segment";
    case GsoReason::FixedIdWithoutDf: return "fixedid-without-df";
    case GsoReason::UnknownEthertype: return "unknown-ethertype";
    case GsoReason::UnknownIpProto: return "unknown-ip-proto";
    case GsoReason::BadTunnel: return "bad-tunnel";
    case GsoReason::TooManyFrags: return "too-many-frags";
    case GsoReason::UfoUnsupported: return "ufo-unsupported";
    case GsoReason::RecursionLimit: return "recursion-limit";
    case GsoReason::SegmentTooLong: return "segment-too-long";
    case GsoReason::NestedTunnel: return "nested-tunnel";
    case GsoReason::kCount: break;
  }
  return "?";
}

std::string_view to_string(SegMode m) noexcept {
  switch (m) {
    case SegMode::SgRef: return "sg-ref";
    case SegMode::Copy: return "copy";
    case SegMode::CopySum: return "copy-sum";
    case SegMode::kCount: break;
  }
  return "?";
}

std::uint64_t GsoCounters::errors_total() const noexcept {
  std::uint64_t t = 0;
  for (auto e : errors) t += e;
  return t;
}

}  // namespace ofld::offload

namespace ofld::offload::detail {
void gso_hooks_anchor();  // src/offload/gso_hooks.cpp
}

namespace ofld::gso {

using core::Packet;
using core::pos_t;

int mac_gso_segment(GsoContext& ctx, std::uint16_t protocol) {
  if (++ctx.depth > offload::kMaxGsoRecursion) return ctx.fail(GsoReason::RecursionLimit);
  const auto* e = ctx.reg->find(offload::Key::Ethertype, protocol);
  int rc = (e && e->segment) ? e->segment(ctx) : ctx.fail(GsoReason::UnknownEthertype);
  --ctx.depth;
  return rc;
}

int ipproto_gso_segment(GsoContext& ctx, std::uint8_t proto) {
  if (++ctx.depth > offload::kMaxGsoRecursion) return ctx.fail(GsoReason::RecursionLimit);
  const auto* e = ctx.reg->find(offload::Key::IpProto, proto);
  int rc = (e && e->segment) ? e->segment(ctx) : ctx.fail(GsoReason::UnknownIpProto);
  --ctx.depth;
  return rc;
}

std::uint16_t pseudo_seed(const Packet& p, pos_t ip_pos, std::uint32_t len,
                          std::uint8_t proto) noexcept {
  const std::uint8_t* ip = const_cast<Packet&>(p).at_pos(ip_pos, 40);
  if (!ip) ip = const_cast<Packet&>(p).at_pos(ip_pos, 20);
  if (!ip) return 0;
  if ((ip[0] >> 4) == 6)
    return csum::csum_fold16(csum::csum_ipv6_nofold(ip + 8, ip + 24, len, proto));
  return csum::csum_fold16(csum::csum_tcpudp_nofold(ip + 12, ip + 16, len, proto));
}

GsoResult gso_segment(Packet&& p, core::Features features, const core::Device& dev,
                      GsoCounters* counters, const GsoOptions& opts) {
  GsoResult res;
  if (counters) ++counters->packets_in;
  auto fail = [&](GsoReason r) {
    res.reason = r;
    if (counters) ++counters->errors[std::size_t(r)];
    return std::move(res);
  };
  if (!p.is_gso()) return fail(GsoReason::NotGso);

  // keep GSO_PARTIAL only if the device can take the whole gso_type (FRAGLIST too when
  // there is a frag_list) with the features it offers only for partial packets.
  if (features.has(core::netif_f::GSO_PARTIAL)) {
    const core::Features partial_features =
        core::netif_f::GSO_ROBUST | (dev.features & dev.gso_partial_features);
    if (!core::gso_ok(p, features | partial_features))
      features = features.without(core::netif_f::GSO_PARTIAL);
  }

  offload::detail::gso_hooks_anchor();
  GsoContext ctx;
  ctx.skb = &p;
  ctx.features = features;
  ctx.dev = &dev;
  ctx.reg = &offload::registry();
  ctx.counters = counters;
  ctx.fast_path = opts.fast_path;
  ctx.frame_start = p.data_pos();
  ctx.protocol = p.protocol;
  // dispatch on the link type. An Ethernet header in front → the TEB hook walks it
  // (VLAN tags skipped); a raw IP frame goes straight to the L3 hook.
  const bool has_mac = p.mac_header != core::kNoHeader && p.network_header != core::kNoHeader &&
                       p.mac_header != p.network_header;
  const std::uint64_t payload_before = counters ? counters->payload_bytes_copied : 0;
  const std::uint64_t referenced_before = counters ? counters->payload_bytes_referenced : 0;
  int rc = mac_gso_segment(ctx, has_mac ? wire::ethertype::kTeb : p.protocol);
  if (rc != 0) return fail(ctx.reason == GsoReason::Ok ? GsoReason::BadGsoType : ctx.reason);

  if (ctx.hw_segments) {  // the device will segment; hand the packet back unchanged
    p.push(std::size_t(p.data_pos() - ctx.frame_start));
    res.hw = true;
    res.segs.push_back(std::move(p));
    if (counters) ++counters->packets_hw;
    return res;
  }
  // The segments were built in place in ctx.out: hand the container over (no Packet moves).
  std::uint64_t out_bytes = 0;
  if (counters)
    for (const auto& s : ctx.out) out_bytes += s.len();
  ctx.segs.clear();
  res.segs = std::move(ctx.out);
  if (counters) {
    ++counters->packets_segmented;
    counters->segments_out += res.segs.size();
    // Header bytes: what the segments hold beyond the payload the builders accounted for
    // (skb_segment's doffset copies; for list segmentation also the members' own headers).
    const std::uint64_t payload = (counters->payload_bytes_copied - payload_before) +
                                  (counters->payload_bytes_referenced - referenced_before);
    if (out_bytes >= payload) counters->header_bytes_copied += out_bytes - payload;
  }
  return res;
}

TxResult tx_prepare(Packet&& p, const core::Device& dev, GsoCounters* counters) {
  TxResult r;
  r.action = core::resolve_tx(p, dev);
  if (r.action.software_gso) {  // F-19
    GsoResult g = gso_segment(std::move(p), r.action.gso_features, dev, counters);
    r.gso_reason = g.reason;
    if (!g.ok()) return r;
    r.out = std::move(g.segs);
    return r;
  }
  if (r.action.linearize) p.linearize();  // F-20 skb_needs_linearize
  if (r.action.checksum_help) {
    r.csum_error = core::checksum_help(p);
    if (r.csum_error != core::PacketError::Ok) return r;
  }
  r.out.push_back(std::move(p));
  return r;
}

}  // namespace ofld::gso

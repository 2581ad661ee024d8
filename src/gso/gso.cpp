// GSO engine entry (net/core/gso.c __skb_gso_segment, skb_mac_gso_segment) and transmit
// preparation (net/core/dev.c validate_xmit_skb). Spec, F-17..F-20.
#include "ofld/gso/gso.hpp"

#include "ofld/offload/registry.hpp"
#include "ofld/wire/bytes.hpp"

namespace ofld::gso {

using core::Packet;
using core::pos_t;

namespace {

// The GSO run of both entry points: segments into `res.segs`, or into `batch`'s slab when one
// is offered and skb_segment's fast SG loop takes it (ctx.batch_used).
GsoResult run_gso(Packet&& p, core::Features features, const core::Device& dev,
                  GsoCounters* counters, const GsoOptions& opts, core::SegmentBatch* batch) {
  const offload::Registry& reg = opts.registry ? *opts.registry : offload::builtin_registry();
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

  GsoContext ctx;
  ctx.skb = &p;
  ctx.features = features;
  ctx.dev = &dev;
  ctx.reg = &reg;
  ctx.counters = counters;
  ctx.fast_path = opts.fast_path;
  ctx.frame_start = p.data_pos();
  ctx.protocol = p.protocol;
  ctx.batch = batch;
  // dispatch on the link type. An Ethernet header in front → the TEB hook walks it
  // (VLAN tags skipped); a raw IP frame goes straight to the L3 hook.
  const bool has_mac = p.mac_header != core::kNoHeader && p.network_header != core::kNoHeader &&
                       p.mac_header != p.network_header;
  const std::uint64_t payload_before = counters ? counters->payload_bytes_copied : 0;
  const std::uint64_t referenced_before = counters ? counters->payload_bytes_referenced : 0;
  int rc = offload::mac_gso_segment(ctx, has_mac ? wire::ethertype::kTeb : p.protocol);
  if (rc != 0) {
    if (batch) batch->clear();
    return fail(ctx.reason == GsoReason::Ok ? GsoReason::BadGsoType : ctx.reason);
  }

  if (ctx.hw_segments) {  // the device will segment; hand the packet back unchanged
    p.push(std::size_t(p.data_pos() - ctx.frame_start));
    res.hw = true;
    res.segs.push_back(std::move(p));
    if (counters) ++counters->packets_hw;
    return res;
  }
  // The segments were built in place in ctx.out (or the slab): hand the container over (no
  // Packet moves).
  std::uint64_t out_bytes = 0;
  std::size_t nsegs = 0;
  if (ctx.batch_used) {
    nsegs = batch->size();
    if (counters)
      out_bytes = batch->len(0) * (nsegs - 1) + batch->len(nsegs - 1);
  } else {
    if (counters)
      for (const auto& s : ctx.out) out_bytes += s.len();
    ctx.segs.clear();
    res.segs = std::move(ctx.out);
    nsegs = res.segs.size();
  }
  if (counters) {
    ++counters->packets_segmented;
    counters->segments_out += nsegs;
    // Header bytes: what the segments hold beyond the payload the builders accounted for
    // (skb_segment's doffset copies; for list segmentation also the members' own headers).
    const std::uint64_t payload = (counters->payload_bytes_copied - payload_before) +
                                  (counters->payload_bytes_referenced - referenced_before);
    if (out_bytes >= payload) counters->header_bytes_copied += out_bytes - payload;
  }
  return res;
}

// validate_xmit_skb's steps for a packet the device takes whole: F-20 linearize, then the
// checksum in software where the device cannot (skb_checksum_help).
core::PacketError finish_tx(Packet& p, const core::TxAction& action) {
  if (action.linearize) p.linearize();  // F-20 skb_needs_linearize
  if (action.checksum_help) return core::checksum_help(p);
  return core::PacketError::Ok;
}

}  // namespace

GsoResult gso_segment(Packet&& p, core::Features features, const core::Device& dev,
                      GsoCounters* counters, const GsoOptions& opts) {
  return run_gso(std::move(p), features, dev, counters, opts, nullptr);
}

GsoBatchResult gso_segment_batch(Packet&& p, core::Features features, const core::Device& dev,
                                 core::SegmentBatch& out, GsoCounters* counters,
                                 const GsoOptions& opts) {
  // A slab is offered only where every hook on the way back up is one that handles it
  // (Ethernet/VLAN, IPv4, IPv6, TCP, IP-in-IP, the UDP tunnel level: the built-in ones): a
  // TCP super-packet, plain or in one tunnel (VXLAN, Geneve, GUE, IP-in-IP). Any other
  // gso_type bit names a hook that does not (USO, GRE, remcsum, GSO-partial) or a split by
  // frag_list members.
  namespace g = core::skb_gso;
  constexpr std::uint32_t kPlainTcp = g::TCPV4 | g::TCPV6 | g::TCP_ECN | g::TCP_FIXEDID |
                                      g::TCP_FIXEDID_INNER | g::TCP_FIXEDID_OUTER | g::DODGY;
  constexpr std::uint32_t kTunnel = g::UDP_TUNNEL | g::UDP_TUNNEL_CSUM | g::IPXIP4 | g::IPXIP6;
  const bool tcp_type = (p.gso.type & ~(kPlainTcp | kTunnel)) == 0;
  const bool tunnel = (p.gso.type & kTunnel) != 0;
  const bool slab = (opts.registry == nullptr || opts.registry == &offload::builtin_registry()) &&
                    opts.fast_path && tcp_type && p.encapsulation == tunnel &&
                    !p.has_frag_list();
  out.clear();
  try {
    GsoResult r = run_gso(std::move(p), features, dev, counters, opts, slab ? &out : nullptr);
    if (!out.is_slab() && r.ok()) out.adopt_packets(std::move(r.segs));
    return GsoBatchResult{r.reason, r.hw};
  } catch (...) {  // bad_alloc: nothing half-built is left behind
    out.clear();
    throw;
  }
}

TxResult tx_prepare(Packet&& p, const core::Device& dev, GsoCounters* counters,
                    const offload::Registry& reg) {
  TxResult r;
  r.action = core::resolve_tx(p, dev);
  if (r.action.software_gso) {  // F-19
    GsoResult g = gso_segment(std::move(p), r.action.gso_features, dev, counters,
                              GsoOptions{.registry = &reg});
    r.gso_reason = g.reason;
    if (!g.ok()) return r;
    r.out = std::move(g.segs);
    return r;
  }
  r.csum_error = finish_tx(p, r.action);
  if (r.csum_error != core::PacketError::Ok) return r;
  r.out.push_back(std::move(p));
  return r;
}

TxBatchResult tx_prepare_batch(Packet&& p, const core::Device& dev, core::SegmentBatch& out,
                               GsoCounters* counters, const offload::Registry& reg) {
  TxBatchResult r;
  r.action = core::resolve_tx(p, dev);
  if (r.action.software_gso) {  // F-19
    const GsoBatchResult g = gso_segment_batch(std::move(p), r.action.gso_features, dev, out,
                                               counters, GsoOptions{.registry = &reg});
    r.gso_reason = g.reason;
    return r;
  }
  out.clear();  // (gso_segment_batch clears it itself)
  r.csum_error = finish_tx(p, r.action);
  if (r.csum_error != core::PacketError::Ok) return r;
  std::vector<Packet> one;
  one.push_back(std::move(p));
  out.adopt_packets(std::move(one));
  return r;
}

}  // namespace ofld::gso

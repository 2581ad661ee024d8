// libFuzzer target: arbitrary frame + virtio_net_hdr + device features → segments.
// Input layout: byte 0 = feature selector bits (SG, HW_CSUM, IP_CSUM, IPV6_CSUM, TSO, TSO6,
// GSO_UDP_L4, GSO_ROBUST; odd input size adds GSO_PARTIAL, see below; input size bit 1 puts
// the frame in a read buffer, see below), bytes 1..10 = virtio_net_hdr (little-endian), rest =
// Ethernet frame (input size bit 2 cuts a read buffer's payload into many fragments, below;
// input size bit 3 runs the frame a second time as gso::prepare_frame sets it up: tunnels).
// Properties: never crashes or over-reads (ASan); when GSO succeeds, the payload bytes of the
// segments, in order, equal the input payload bytes (headers are the first `doffset` bytes of
// each segment, where doffset = transport offset + L4 header length); the fast paths
// (GsoOptions::fast_path: skb_segment's fast loops and the hooks' rewrite loops) give what the
// general path gives for the same input: the same result, and every segment the same bytes,
// byte layout and metadata; and so does gso_segment_batch (a header slab and payload slices
// where it takes the slab form); all three count alike.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "ofld/gso/gso.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/wire/bytes.hpp"

using namespace ofld;

namespace {
bool same_meta(const core::PacketMeta& a, const core::PacketMeta& b) {
  return a.mac_header == b.mac_header && a.network_header == b.network_header &&
         a.transport_header == b.transport_header && a.inner_mac_header == b.inner_mac_header &&
         a.inner_network_header == b.inner_network_header &&
         a.inner_transport_header == b.inner_transport_header && a.protocol == b.protocol &&
         a.inner_protocol == b.inner_protocol && a.inner_protocol_type == b.inner_protocol_type &&
         a.inner_ipproto == b.inner_ipproto && a.vlan_tci == b.vlan_tci &&
         a.vlan_present == b.vlan_present && a.vlan_proto == b.vlan_proto &&
         a.encapsulation == b.encapsulation && a.encap_hdr_csum == b.encap_hdr_csum &&
         a.remcsum_offload == b.remcsum_offload && a.csum_valid == b.csum_valid &&
         a.csum_complete_sw == b.csum_complete_sw && a.csum == b.csum &&
         a.pending_csum == b.pending_csum && a.gso.size == b.gso.size &&
         a.gso.segs == b.gso.segs && a.gso.type == b.gso.type && a.tstamp == b.tstamp;
}

// The input's buffers: a segment's fragment that references one of them must reference the
// same one in both paths; a buffer made during segmentation (X-10's one-byte tail) is each
// path's own, and its bytes are compared through to_bytes(). References are held, so no input
// buffer is freed (and its address reused) before the comparison.
void input_buffers(const core::Packet& p, std::vector<core::BufferRef>& out) {
  for (const auto& f : p.frags()) out.push_back(f.buf);
  for (const auto& m : p.frag_list()) input_buffers(m, out);
}

bool same_segment(const core::Packet& a, const core::Packet& b,
                  const std::vector<core::BufferRef>& in) {
  if (a.to_bytes() != b.to_bytes() || a.data_pos() != b.data_pos() ||
      a.headroom() != b.headroom() || a.headlen() != b.headlen() ||
      a.nr_frags() != b.nr_frags() || a.frag_list().size() != b.frag_list().size())
    return false;
  const auto from_input = [&](const core::Buffer* x) {
    return std::any_of(in.begin(), in.end(), [x](const core::BufferRef& r) { return r.get() == x; });
  };
  for (std::size_t k = 0; k < a.nr_frags(); ++k) {
    const core::Frag& fa = a.frags()[k];
    const core::Frag& fb = b.frags()[k];
    const bool ia = from_input(fa.buf.get()), ib = from_input(fb.buf.get());
    if (ia != ib || (ia && fa.buf.get() != fb.buf.get()) || fa.off != fb.off || fa.len != fb.len)
      return false;
  }
  return same_meta(a.meta(), b.meta());
}

bool same_counters(const gso::GsoCounters& a, const gso::GsoCounters& b) {
  return a.packets_in == b.packets_in && a.packets_segmented == b.packets_segmented &&
         a.packets_hw == b.packets_hw && a.segments_out == b.segments_out &&
         a.seg_mode == b.seg_mode && a.sg_sum == b.sg_sum &&
         a.payload_bytes_copied == b.payload_bytes_copied &&
         a.payload_bytes_referenced == b.payload_bytes_referenced &&
         a.header_bytes_copied == b.header_bytes_copied && a.packets_partial == b.packets_partial &&
         a.packets_fraglist == b.packets_fraglist && a.errors == b.errors;
}

// Segment i of a batch against the general path's packet: in the packet form as
// same_segment(); in the slab form the same bytes and metadata, the slab's headers as the
// packet's head, the slices as its fragments.
bool same_batch_segment(const core::SegmentBatch& bt, std::size_t i, const core::Packet& b,
                        const std::vector<core::BufferRef>& in) {
  if (!bt.is_slab()) return same_segment(bt.packets()[i], b, in);
  if (bt.len(i) != b.len() || bt.to_bytes(i) != b.to_bytes() || bt.header_len() != b.headlen() ||
      bt.slices(i).size() != b.nr_frags() || b.data_pos() != 0 || !same_meta(bt.meta(i), b.meta()))
    return false;
  for (std::size_t k = 0; k < b.nr_frags(); ++k) {
    const core::BatchSlice& sa = bt.slices(i)[k];
    const core::Frag& fb = b.frags()[k];
    if (sa.buf != fb.buf.get() || sa.off != fb.off || sa.len != fb.len) return false;
  }
  return true;
}
}  // namespace

// The three runs (general path, fast path, batch) on `pkt` and their comparison; the payload
// property where it applies. `f`: the features from byte 0; odd `size`: GSO_PARTIAL too.
int run(core::Packet&& pkt, core::Features f, std::size_t size) {
  namespace nf = core::netif_f;
  const core::Packet& in = pkt;
  // The packet's own bytes (prepare_frame drops an Ethernet frame's padding after the IP
  // datagram): the payload property holds against these.
  const std::vector<std::uint8_t> frame = in.to_bytes();
  const bool encap = in.encapsulation;
  std::size_t doffset = 0;
  if (in.transport_header != core::kNoHeader) {
    const std::size_t th = std::size_t(in.transport_header);
    const bool tcp = (in.gso.type & (core::skb_gso::TCPV4 | core::skb_gso::TCPV6)) != 0;
    if (tcp && th + 13 <= frame.size()) doffset = th + std::size_t(frame[th + 12] >> 4) * 4;
    else if (!tcp) doffset = th + 8;
  }
  core::Device dev;
  dev.features = dev.hw_enc_features = f;
  // Odd input sizes: the device also offers GSO_PARTIAL with TSO/TSO6/USO usable only for
  // partial packets (F-6), so the GSO-partial split runs; the payload property
  // holds for its mss-multiple chunks too.
  if ((size & 1) && f.has(nf::SG)) {
    const core::Features po = nf::TSO | nf::TSO6 | nf::GSO_UDP_L4;
    dev.gso_partial_features = po;
    dev.features = dev.hw_enc_features = f | po | nf::GSO_PARTIAL;
    f |= nf::GSO_PARTIAL;
  }
  std::vector<core::BufferRef> in_bufs;
  input_buffers(pkt, in_bufs);
  gso::GsoCounters cref, cbatch, cfast;
  auto ref = gso::gso_segment(pkt.clone(), f, dev, &cref, gso::GsoOptions{.fast_path = false});
  static core::SegmentBatch batch;  // kept across inputs, as a caller keeps one
  const auto gb = gso::gso_segment_batch(pkt.clone(), f, dev, batch, &cbatch);
  auto g = gso::gso_segment(std::move(pkt), f, dev, &cfast);
  if (!same_counters(cfast, cref) || !same_counters(cbatch, cref)) std::abort();
  if (g.reason != ref.reason || g.hw != ref.hw || g.segs.size() != ref.segs.size()) std::abort();
  for (std::size_t i = 0; i < g.segs.size(); ++i)
    if (!same_segment(g.segs[i], ref.segs[i], in_bufs)) std::abort();
  if (gb.reason != ref.reason || gb.hw != ref.hw || batch.size() != ref.segs.size()) std::abort();
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (!same_batch_segment(batch, i, ref.segs[i], in_bufs)) std::abort();
  batch.clear();  // before the input's buffers go
  // The payload property for packets without a tunnel (a tunnel's segments carry inner
  // headers at that offset).
  if (!g.ok() || g.hw || doffset == 0 || doffset > frame.size() || encap) return 0;
  std::size_t pos = doffset;
  for (auto& s : g.segs) {
    auto b = s.to_bytes();
    if (b.size() < doffset) std::abort();
    for (std::size_t j = doffset; j < b.size(); ++j, ++pos)
      if (pos >= frame.size() || b[j] != frame[pos]) std::abort();
  }
  if (pos != frame.size()) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 11) return 0;
  namespace nf = core::netif_f;
  const core::Features table[8] = {nf::SG, nf::HW_CSUM, nf::IP_CSUM, nf::IPV6_CSUM,
                                   nf::TSO, nf::TSO6, nf::GSO_UDP_L4, nf::GSO_ROBUST};
  core::Features f{};
  for (int i = 0; i < 8; ++i)
    if (data[0] & (1u << i)) f |= table[i];
  auto hdr = wire::virtio_net::parse({data + 1, 10});
  if (!hdr) return 0;
  std::span<const std::uint8_t> frame(data + 11, size - 11);
  // Input sizes with bit 1 set: the frame lies in a read buffer (a TAP read's): a GSO
  // packet's payload stays there as one fragment, so skb_segment references it (the
  // all-in-fragments sg-ref loop) instead of copying from a linear head.
  core::BufferRef owner;
  if (size & 2) owner = core::Buffer::make(frame);
  auto tp = owner ? offload::virtio::to_packet(hdr.value(), {owner->bytes.data(), frame.size()},
                                               wire::LinkType::Ethernet, nullptr, &owner)
                  : offload::virtio::to_packet(hdr.value(), frame);
  const bool virtio_ok = tp.ok() && tp.pkt.is_gso();
  // Input sizes with bits 1 and 2 set: that payload fragment is cut into pieces of 1..256
  // bytes (the frame's last byte + 1), every other one copied into a buffer of its own:
  // segments of several slices, runs of one buffer, and X-13's MAX_SKB_FRAGS limit.
  if (virtio_ok && owner && (size & 4) && tp.pkt.nr_frags() == 1 && tp.pkt.data_pos() == 0) {
    const core::Frag whole = tp.pkt.frags()[0];
    core::Packet q = core::Packet::from_bytes(tp.pkt.head());
    q.meta() = tp.pkt.meta();
    const std::uint32_t piece = std::uint32_t(frame.back()) + 1;
    bool own = false;
    for (std::uint32_t off = 0; off < whole.len; off += piece, own = !own) {
      const std::uint32_t n = std::min(piece, whole.len - off);
      if (own) {
        auto b = core::Buffer::make(whole.bytes().subspan(off, n));
        if (q.add_frag(b, 0, n) != core::PacketError::Ok) std::abort();
      } else if (q.add_frag(whole.buf, whole.off + off, n) != core::PacketError::Ok) {
        std::abort();
      }
    }
    if (q.to_bytes() != tp.pkt.to_bytes()) std::abort();
    tp.pkt = std::move(q);
  }
  const int rc = virtio_ok ? run(std::move(tp.pkt), f, size) : 0;
  // Input sizes with bit 3 set: the frame again, set up as the stack hands a socket's packet
  // to GSO (gso::prepare_frame, as the pcap tool does: UDP tunnels followed — VXLAN, Geneve,
  // GUE on port 6080 — and IP-in-IP; the payload in page fragments of 256..2048 bytes), the
  // virtio_net_hdr giving only gso_size. The virtio gate never makes a tunnel GSO packet;
  // this reaches the tunnel levels and their slab form.
  if (!(size & 8)) return rc;
  wire::ParseOptions po;
  po.gue_port = 6080;
  auto l = wire::parse_frame(frame, wire::LinkType::Ethernet, po);
  if (!l) return rc;
  gso::PrepareOptions o;
  o.gso_size = hdr.value().gso_size;
  o.frag_size = std::size_t(256) << (frame.back() & 3);
  auto pr = gso::prepare_frame(frame, l.value(), o);
  if (pr.status != gso::PrepareStatus::Gso || !pr.pkt.is_gso()) return rc;
  return run(std::move(pr.pkt), f, size);
}

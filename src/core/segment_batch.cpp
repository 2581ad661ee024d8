// SegmentBatch: GSO segments as a header slab plus payload slices, or as packets
// (ofld/core/segment_batch.hpp).
#include "ofld/core/segment_batch.hpp"

#include <cstring>

namespace ofld::core {

SegmentBatch::SegmentBatch(SegmentBatch&& o) noexcept
    : slab_(o.slab_),
      meta_(o.meta_),
      headers_(std::move(o.headers_)),
      headers_cap_(o.headers_cap_),
      hdr_len_(o.hdr_len_),
      slices_(std::move(o.slices_)),
      nslices_(o.nslices_),
      slices_cap_(o.slices_cap_),
      seg_end_(std::move(o.seg_end_)),
      seg_end_cap_(o.seg_end_cap_),
      nsegs_(o.nsegs_),
      seg_payload_(o.seg_payload_),
      last_payload_(o.last_payload_),
      packets_(std::move(o.packets_)) {
  o.slab_ = false;
  o.headers_cap_ = o.seg_end_cap_ = 0;
  o.nsegs_ = o.nslices_ = o.slices_cap_ = 0;
  o.packets_.clear();
}

SegmentBatch& SegmentBatch::operator=(SegmentBatch&& o) noexcept {
  if (this != &o) {
    this->~SegmentBatch();
    new (this) SegmentBatch(std::move(o));
  }
  return *this;
}

void SegmentBatch::clear() noexcept {
  // One release per run of consecutive slices of the same buffer (the segments of one page).
  Buffer* run = nullptr;
  std::uint32_t n = 0;
  const BatchSlice* const sl = slices_.get();
  const std::size_t ns = nslices_;
  for (std::size_t i = 0; i < ns; ++i) {
    const BatchSlice& s = sl[i];
    if (s.buf == run) {
      ++n;
    } else {
      if (run) BufferRef::release(run, n);
      run = s.buf;
      n = 1;
    }
  }
  if (run) BufferRef::release(run, n);
  nslices_ = 0;
  slab_ = false;
  nsegs_ = 0;
  if (!packets_.empty()) destroy_packets(packets_);
}

void SegmentBatch::start_slab(const PacketMeta& meta, std::size_t header_len, std::size_t nsegs,
                              std::size_t seg_payload, std::size_t last_payload) {
  clear();
  const std::size_t bytes = nsegs * header_len;
  if (bytes > headers_cap_) {
    headers_.reset(new std::uint8_t[bytes]);
    headers_cap_ = bytes;
  }
  if (nsegs > seg_end_cap_) {
    seg_end_.reset(new std::uint32_t[nsegs]);
    seg_end_cap_ = nsegs;
  }
  meta_ = meta;
  hdr_len_ = header_len;
  nsegs_ = nsegs;
  seg_payload_ = seg_payload;
  last_payload_ = last_payload;
  slab_ = true;
}

BatchSlice* SegmentBatch::slice_room(std::size_t max) {
  if (max > slices_cap_) {
    slices_.reset(new BatchSlice[max]);
    slices_cap_ = max;
  }
  return slices_.get();
}

void SegmentBatch::adopt_packets(std::vector<Packet>&& pkts) noexcept {
  clear();
  packets_.swap(pkts);
  pkts.clear();
}

std::size_t SegmentBatch::piece_count(std::size_t i) const noexcept {
  std::size_t n = 0;
  for_each_piece(i, [&](std::span<const std::uint8_t>) { ++n; });
  return n;
}

Packet SegmentBatch::to_packet(std::size_t i) const {
  if (!slab_) return packets_[i].clone();
  Packet p(meta_, header(i), kDefaultHeadroom, 0, slices(i).size());
  for (const BatchSlice& s : slices(i)) {
    BufferRef held = BufferRef::adopt(s.buf);  // the batch's own reference, lent
    p.add_frag_unchecked(held, s.off, s.len);  // a new counted reference for the packet
    held.disown();
  }
  return p;
}

std::vector<std::uint8_t> SegmentBatch::to_bytes(std::size_t i) const {
  std::vector<std::uint8_t> out;
  out.reserve(len(i));
  for_each_piece(i, [&](std::span<const std::uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); });
  return out;
}

}  // namespace ofld::core

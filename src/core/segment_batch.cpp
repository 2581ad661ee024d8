// SegmentBatch: GSO segments as a header slab plus payload slices, or as packets
// (ofld/core/segment_batch.hpp).
#include "ofld/core/segment_batch.hpp"

#include <utility>

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
  if (this == &o) return *this;
  clear();
  slab_ = std::exchange(o.slab_, false);
  meta_ = o.meta_;
  headers_ = std::move(o.headers_);
  headers_cap_ = std::exchange(o.headers_cap_, 0);
  hdr_len_ = o.hdr_len_;
  slices_ = std::move(o.slices_);
  nslices_ = std::exchange(o.nslices_, 0);
  slices_cap_ = std::exchange(o.slices_cap_, 0);
  seg_end_ = std::move(o.seg_end_);
  seg_end_cap_ = std::exchange(o.seg_end_cap_, 0);
  nsegs_ = std::exchange(o.nsegs_, 0);
  seg_payload_ = o.seg_payload_;
  last_payload_ = o.last_payload_;
  packets_ = std::move(o.packets_);
  o.packets_.clear();
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

namespace detail {

namespace {
// At least `need` elements in `a` (contents not kept); on bad_alloc `a` is empty, `cap` 0.
template <class T>
void grow(std::unique_ptr<T[]>& a, std::size_t& cap, std::size_t need) {
  if (need <= cap) return;
  a.reset();
  cap = 0;
  a.reset(new T[need]);
  cap = need;
}
}  // namespace

BatchSlice* SlabBuilder::start(SegmentBatch& b, const PacketMeta& meta, std::size_t header_len,
                               std::size_t nsegs, std::size_t seg_payload,
                               std::size_t last_payload, std::size_t max_slices) {
  b.clear();
  // Every allocation before any state changes: a bad_alloc leaves the batch empty.
  grow(b.headers_, b.headers_cap_, nsegs * header_len);
  grow(b.seg_end_, b.seg_end_cap_, nsegs);
  grow(b.slices_, b.slices_cap_, max_slices);
  b.meta_ = meta;
  b.hdr_len_ = header_len;
  b.nsegs_ = nsegs;
  b.seg_payload_ = seg_payload;
  b.last_payload_ = last_payload;
  b.slab_ = true;
  return b.slices_.get();
}

std::uint8_t* SlabBuilder::slab(SegmentBatch& b) noexcept { return b.headers_.get(); }
PacketMeta& SlabBuilder::meta(SegmentBatch& b) noexcept { return b.meta_; }
std::uint32_t* SlabBuilder::ends(SegmentBatch& b) noexcept { return b.seg_end_.get(); }
void SlabBuilder::slices_built(SegmentBatch& b, std::size_t n) noexcept { b.nslices_ = n; }

}  // namespace detail

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
    BufferRef lent = BufferRef::adopt(s.buf);  // the batch's own reference, looked at
    BufferRef mine(lent);                      // a counted reference of the packet's own
    lent.disown();                             // the batch's stays the batch's
    p.add_frag_slice(std::move(mine), s.off, s.len);
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

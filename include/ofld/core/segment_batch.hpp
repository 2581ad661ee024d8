// ofld/core/segment_batch.hpp — GSO output as one header slab plus payload slices: the
// segments skb_segment would build as packets (X-7: headers copied, page fragments referenced),
// without a Packet per segment.
//
// Two forms, one interface:
//  * the slab form, built by skb_segment's fast SG loop when the caller asked for a batch
//    (ofld::gso::gso_segment_batch): every segment has the same header length; segment i's
//    headers are bytes [i*header_len, (i+1)*header_len) of one slab, its payload is a run of
//    slices of the input's buffers, and one PacketMeta describes every segment;
//  * the packet form, for every other GSO run (GRE, USO, remcsum, copy modes, GSO-partial
//    outputs, frag_list, a device that segments itself): the segments as packets.
// Either way segment i is `len(i)` bytes made of its pieces (for_each_piece), with metadata
// meta(i); positions in the metadata are relative to the segment's first byte (position 0),
// as for gso_segment's packets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ofld/core/buffer.hpp"
#include "ofld/core/packet.hpp"

namespace ofld::core {

/// One payload slice of a slab segment: bytes [off, off + len) of *buf. The batch holds one
/// counted reference to `buf` per slice (skb_frag_t with its page reference).
struct BatchSlice {
  Buffer* buf;
  std::uint32_t off;
  std::uint32_t len;
  std::span<const std::uint8_t> bytes() const noexcept { return {buf->bytes.data() + off, len}; }
};

class SegmentBatch;
namespace detail {
/// Building the slab form: skb_segment's batch output (the slab, the slices) and the GSO
/// hooks' rewrite loops (the headers, the metadata template). For the engine only; a batch
/// is consistent again once the builder's run ends (SegmentBatch::clear() on failure).
struct SlabBuilder {
  /// Make `b` a slab of `nsegs` segments of `header_len` header bytes each, every payload
  /// `seg_payload` bytes but the last's `last_payload`, all described by `meta`, with room for
  /// `max_slices` slices; returns that room. What `b` held is dropped first; the headers are
  /// left unwritten. On bad_alloc `b` is left empty.
  static BatchSlice* start(SegmentBatch& b, const PacketMeta& meta, std::size_t header_len,
                           std::size_t nsegs, std::size_t seg_payload, std::size_t last_payload,
                           std::size_t max_slices);
  /// The slab's first byte (segment i's headers at i * header_len).
  static std::uint8_t* slab(SegmentBatch& b) noexcept;
  /// The metadata template of every segment.
  static PacketMeta& meta(SegmentBatch& b) noexcept;
  /// The builder writes slices into start()'s room in order (each adopting one reference
  /// counted with BufferRef::acquire(); [off, off + len) inside buf, len > 0), sets ends(b)[i]
  /// to the number written when segment i is complete, and calls slices_built() with the
  /// total, failure or not: from then on the batch owns those slices' references.
  static std::uint32_t* ends(SegmentBatch& b) noexcept;
  static void slices_built(SegmentBatch& b, std::size_t n) noexcept;
};
}  // namespace detail

/// The segments of one GSO run (gso_segment_batch, tx_prepare_batch), in either form.
/// Move-only; keep one across runs so that its storage is reused. Bytes are wire bytes as
/// they are; the headers are the batch's, the payload bytes the input's buffers (shared, not
/// copied: write to neither while the batch holds them). One thread at a time may change a
/// batch; const members may run concurrently.
class SegmentBatch {
 public:
  SegmentBatch() = default;
  SegmentBatch(SegmentBatch&& o) noexcept;
  SegmentBatch& operator=(SegmentBatch&& o) noexcept;
  SegmentBatch(const SegmentBatch&) = delete;
  SegmentBatch& operator=(const SegmentBatch&) = delete;
  ~SegmentBatch() { clear(); }

  /// Number of segments.
  std::size_t size() const noexcept { return slab_ ? nsegs_ : packets_.size(); }
  bool empty() const noexcept { return size() == 0; }
  /// True in the slab form (one header slab, payload slices); false in the packet form.
  bool is_slab() const noexcept { return slab_; }
  /// Metadata of segment i (header positions from its first byte, checksum state, gso info).
  const PacketMeta& meta(std::size_t i) const noexcept { return slab_ ? meta_ : packets_[i].meta(); }
  /// Bytes in segment i.
  std::size_t len(std::size_t i) const noexcept {
    return slab_ ? hdr_len_ + (i + 1 == nsegs_ ? last_payload_ : seg_payload_) : packets_[i].len();
  }
  /// Calls f(std::span<const std::uint8_t>) for each piece of segment i in byte order (the
  /// headers, then each payload slice; in the packet form: head, fragments, frag_list
  /// members'). Pieces are never empty.
  template <class F>
  void for_each_piece(std::size_t i, F&& f) const;
  /// Number of pieces for_each_piece(i) gives (iovec entries for a writev of segment i).
  std::size_t piece_count(std::size_t i) const noexcept;
  /// Segment i as a packet: the same bytes and metadata; the headers (the head, in the packet
  /// form) copied, payload buffers shared. data() at the segment's first byte.
  Packet to_packet(std::size_t i) const;
  /// Segment i's bytes, flattened.
  std::vector<std::uint8_t> to_bytes(std::size_t i) const;
  /// The packets of the packet form (empty in the slab form).
  std::span<const Packet> packets() const noexcept { return packets_; }
  /// Drop every segment (the slices' references run by run, as destroy_packets does); the
  /// storage is kept for the next run.
  void clear() noexcept;

  // ---- the slab form's geometry ----
  /// Header bytes at the front of every segment (slab form; 0 otherwise).
  std::size_t header_len() const noexcept { return slab_ ? hdr_len_ : 0; }
  /// Segment i's headers in the slab (empty in the packet form).
  std::span<const std::uint8_t> header(std::size_t i) const noexcept {
    if (!slab_) return {};
    return {headers_.get() + i * hdr_len_, hdr_len_};
  }
  /// Segment i's payload slices (empty in the packet form).
  std::span<const BatchSlice> slices(std::size_t i) const noexcept {
    if (!slab_) return {};
    const std::uint32_t b = i ? seg_end_[i - 1] : 0;
    return {slices_.get() + b, seg_end_[i] - b};
  }

  /// Take the packet form: these packets become the segments (what the batch held is
  /// dropped first).
  void adopt_packets(std::vector<Packet>&& pkts) noexcept;

 private:
  friend struct detail::SlabBuilder;
  bool slab_ = false;
  PacketMeta meta_{};
  std::unique_ptr<std::uint8_t[]> headers_;  // nsegs_ * hdr_len_ bytes (not zeroed)
  std::size_t headers_cap_ = 0;
  std::size_t hdr_len_ = 0;
  std::unique_ptr<BatchSlice[]> slices_;  // nslices_ used of slices_cap_
  std::size_t nslices_ = 0, slices_cap_ = 0;
  std::unique_ptr<std::uint32_t[]> seg_end_;  // slices of segment i end at seg_end_[i]
  std::size_t seg_end_cap_ = 0;
  std::size_t nsegs_ = 0;
  std::size_t seg_payload_ = 0, last_payload_ = 0;
  std::vector<Packet> packets_;
};

template <class F>
void SegmentBatch::for_each_piece(std::size_t i, F&& f) const {
  if (slab_) {
    if (hdr_len_) f(header(i));
    for (const BatchSlice& s : slices(i)) f(s.bytes());
    return;
  }
  struct Walk {
    static void run(const Packet& p, F& f) {
      if (p.headlen()) f(p.head());
      for (const Frag& fr : p.frags())
        if (fr.len) f(fr.bytes());
      for (const Packet& m : p.frag_list()) run(m, f);
    }
  };
  Walk::run(packets_[i], f);
}

}  // namespace ofld::core

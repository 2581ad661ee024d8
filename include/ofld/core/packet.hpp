// ofld/core/packet.hpp — the sk_buff analogue: bytes (headroom + linear head + fragments)
// plus the offload metadata the kernel keeps in struct sk_buff / skb_shared_info.
//
// POSITION CONVENTION (read once):
//  * Every packet has a fixed ORIGIN: the byte where data() started when the packet was built.
//    A *position* (type `pos_t`, signed) is a byte index relative to that origin. Positions do
//    not change when bytes are pushed/pulled or when headroom is reallocated; only data_pos()
//    moves (push → data_pos() decreases, possibly below 0; pull → increases).
//    This mirrors the kernel's "offset from skb->head" (mac_header, csum_start, ...) without
//    tying values to an allocation.
//  * An *offset* (kernel skb_*_offset(), skb_checksum_start_offset()) is a position minus
//    data_pos(): bytes from the current data start; negative = already pulled past.
//  * Byte ranges for copy_bits()/header() are offsets from data() over head then fragments
//    then frag_list, exactly like skb_copy_bits().
//  * Checksum values follow ofld/core/csum.hpp: wsum in network-order semantics, 16-bit field
//    values host-order numbers stored big-endian.
//
// Ownership: Packet is move-only (like Seastar's net::packet). Fragments reference slices of
// refcounted Buffers; clone() shares them (skb_clone), copy() deep-copies (skb_copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ofld/core/buffer.hpp"      // Buffer, BufferRef, Frag
#include "ofld/core/csum.hpp"
#include "ofld/core/csum_state.hpp"  // pos_t, IpSummed, CsumState and its alternatives
#include "ofld/core/frag_vec.hpp"    // detail::FragVec
#include "ofld/core/gso_info.hpp"    // skb_gso::*, GsoInfo, kGsoByFrags
#include "ofld/core/head_buf.hpp"    // detail::HeadBuf

namespace ofld::core {

using csum::wsum;
/// "Header not set" marker for header positions (kernel: (typeof(skb->mac_header))~0U).
inline constexpr pos_t kNoHeader = INT32_MIN;

/// Default headroom reserved by Packet::from_bytes (bytes). Enough for Eth+IPv6+UDP+VXLAN+slack.
inline constexpr std::size_t kDefaultHeadroom = 128;
/// MAX_SKB_FRAGS on 4 KiB pages (spec §1.3). Informational: add_frag does not enforce it;
/// engines that emulate the kernel's geometry limits check nr_frags() against it.
inline constexpr std::size_t kMaxSkbFrags = 17;
/// CHECKSUM_BREAK (spec §1.3): packets up to this length are summed at validation time.
inline constexpr std::size_t kChecksumBreak = 76;
// ---- errors -------------------------------------------------------------------------------

/// Error values of packet operations (Ok == 0). Never thrown.
enum class PacketError : std::uint8_t {
  Ok = 0,
  OutOfRange,       ///< offset/length beyond the packet (or negative)
  NotInHead,        ///< the bytes must be in the linear head but are not (e.g. csum field)
  HasFrags,         ///< operation needs a packet without fragments (e.g. put())
  IsGso,            ///< checksum_help on a GSO packet (kernel: -EINVAL + warn)
  BadCsumState,     ///< operation requires a different checksum state
  BadArgument,      ///< e.g. a null buffer
};
std::string_view to_string(PacketError e) noexcept;

/// inner_protocol_type (ENCAP_TYPE_ETHER / ENCAP_TYPE_IPPROTO).
enum class InnerProtoType : std::uint8_t { Ether = 0, IpProto = 1 };

// ---- the packet ----------------------------------------------------------------------------

/// The plain metadata of a packet (the sk_buff fields outside the byte storage): header
/// positions, protocol and tunnel metadata, checksum state, GSO info. Trivially copyable, so a
/// packet's metadata can be copied in one go (Packet::meta(), the segment constructor).
struct PacketMeta {
  // -- header positions (origin-relative; kNoHeader when unset) --
  pos_t mac_header = kNoHeader;
  pos_t network_header = kNoHeader;
  pos_t transport_header = kNoHeader;
  pos_t inner_mac_header = kNoHeader;
  pos_t inner_network_header = kNoHeader;
  pos_t inner_transport_header = kNoHeader;

  // -- protocol metadata --
  std::uint16_t protocol = 0;        ///< skb->protocol: outer ethertype, host order
  std::uint16_t inner_protocol = 0;  ///< ethertype or IP proto, see inner_protocol_type
  InnerProtoType inner_protocol_type = InnerProtoType::Ether;
  std::uint8_t inner_ipproto = 0;    ///< inner L4 protocol number (IPPROTO_*)
  std::uint16_t vlan_tci = 0;        ///< hw-accelerated VLAN tag (when vlan_present)
  bool vlan_present = false;
  std::uint16_t vlan_proto = 0;      ///< 0x8100 / 0x88A8 when vlan_present

  bool encapsulation = false;    ///< inner_* positions valid
  bool encap_hdr_csum = false;   ///< outer csum to be done in software during GSO
  bool remcsum_offload = false;  ///< RCO in effect
  bool csum_valid = false;       ///< software validated (C-23)
  bool csum_complete_sw = false; ///< COMPLETE value computed by software (C-24)

  // -- checksum state --
  CsumState csum{CsumNone{}};
  /// The kernel's skb->csum while ip_summed is not COMPLETE: the pseudo-header sum stored by
  /// a deferred validation (C-24) and consumed by checksum_complete(). Otherwise unused.
  wsum pending_csum = 0;

  // -- GSO --
  GsoInfo gso{};

  /// skb->tstamp: when the packet was received, in nanoseconds on the caller's clock (0 =
  /// unset). A GRO aggregate is its first packet, so it keeps that packet's time; GSO segments
  /// copy it from the super-packet (__copy_skb_header).
  std::uint64_t tstamp = 0;
};
static_assert(std::is_trivially_copyable_v<PacketMeta>);

class Packet;
namespace detail {
/// Deletes a frag_list out of line: ~Packet stays small and inlinable (the list's own
/// ~Packet calls, the recursion, happen behind this call).
struct FragListDelete {
  void operator()(std::vector<Packet>* v) const noexcept;
};
}  // namespace detail

class Packet : public PacketMeta {
 public:
  Packet();  ///< empty packet with kDefaultHeadroom headroom
  /// Moves leave the source empty (len() 0, no storage), as discard() does.
  Packet(Packet&& o) noexcept
      : PacketMeta(o),
        store_(std::move(o.store_)),
        base_(o.base_),
        data_(o.data_),
        tail_(o.tail_),
        frags_(std::move(o.frags_)),
        frag_list_(std::move(o.frag_list_)),
        frag_list_len_(o.frag_list_len_) {
    o.tail_ = o.data_;
    o.frag_list_len_ = 0;
  }
  Packet& operator=(Packet&& o) noexcept {
    if (this != &o) {
      static_cast<PacketMeta&>(*this) = o;
      store_ = std::move(o.store_);
      base_ = o.base_;
      data_ = o.data_;
      tail_ = o.tail_;
      frags_ = std::move(o.frags_);
      frag_list_ = std::move(o.frag_list_);
      frag_list_len_ = o.frag_list_len_;
      o.tail_ = o.data_;
      o.frag_list_len_ = 0;
    }
    return *this;
  }
  Packet(const Packet&) = delete;
  Packet& operator=(const Packet&) = delete;
  ~Packet() = default;

  /// Build a packet whose linear head holds `bytes`, with `headroom` bytes reserved in front
  /// and `tailroom` spare bytes behind (for put()/put_uninit() without a reallocation).
  static Packet from_bytes(std::span<const std::uint8_t> bytes,
                           std::size_t headroom = kDefaultHeadroom, std::size_t tailroom = 0);
  /// GSO segment constructor (skb_segment's alloc + __copy_skb_header in one step): metadata
  /// copied from `meta`; the linear head holds `hdr` with `headroom` bytes reserved in front
  /// and `tailroom` spare bytes behind; room for `nfrags` fragments. data() is at position 0.
  Packet(const PacketMeta& meta, std::span<const std::uint8_t> hdr, std::size_t headroom,
         std::size_t tailroom = 0, std::size_t nfrags = 0)
      : PacketMeta(meta),
        store_(headroom + hdr.size() + tailroom),
        base_(std::ptrdiff_t(headroom)),
        tail_(pos_t(hdr.size())) {
    copy_header(store_.data() + headroom, hdr.data(), hdr.size());
    if (nfrags > detail::FragVec::kInline) frags_.reserve(nfrags);
  }
  /// The same segment constructor with the linear area taken from `heads` (prepared for at
  /// least headroom + hdr.size() bytes): it holds `hdr` after `headroom` bytes; no tailroom
  /// is asked for and the fragments start inline.
  Packet(const PacketMeta& meta, detail::HeadBufTake& heads, std::span<const std::uint8_t> hdr,
         std::size_t headroom)
      : PacketMeta(meta),
        store_(heads.take()),
        base_(std::ptrdiff_t(headroom)),
        tail_(pos_t(hdr.size())) {
    copy_header(store_.data() + headroom, hdr.data(), hdr.size());
  }
  /// The metadata fields (see PacketMeta).
  const PacketMeta& meta() const noexcept { return *this; }
  PacketMeta& meta() noexcept { return *this; }
  /// add_frag() for engines that have checked the slice already: `buf` non-null, [off,
  /// off+len) inside it, len > 0, and the packet has no frag_list (else use add_frag()).
  void add_frag_unchecked(const BufferRef& buf, std::uint32_t off, std::uint32_t len) {
    frags_.push_ref(buf, off, len);
  }
  /// As add_frag_unchecked, adopting a reference taken with BufferRef::acquire().
  void add_frag_adopted(Buffer* buf, std::uint32_t off, std::uint32_t len) {
    frags_.push_adopted(buf, off, len);
  }
  /// Build a non-linear packet: the first `headlen` bytes in the head, the rest in fragments of
  /// at most `frag_size` bytes, each in its own Buffer (frag_size 0 = one fragment).
  static Packet from_bytes_frags(std::span<const std::uint8_t> bytes, std::size_t headlen,
                                 std::size_t frag_size = 0,
                                 std::size_t headroom = kDefaultHeadroom);
  /// All bytes [data, end) over head, frags, frag_list, flattened.
  std::vector<std::uint8_t> to_bytes() const;
  /// Give back the head storage, every fragment reference and the frag_list now, leaving an
  /// empty packet (len() 0) with no storage: to be destroyed or assigned, not written to.
  /// What a consumer does to a packet whose payload it took over (GRO after a merge, the
  /// kernel's napi_skb_free_stolen_head), without building a replacement (Packet() allocates).
  [[gnu::always_inline]] void discard() noexcept {
    store_ = detail::HeadBuf();
    if (!frags_.empty()) frags_.clear();
    if (frag_list_) frag_list_.reset();
    frag_list_len_ = 0;
    tail_ = data_;
  }
  /// discard(), the head's storage returned through `r` (one of many packets discarded in a
  /// loop: GRO's merged packets).
  [[gnu::always_inline]] void discard(detail::HeadBufReturn& r) noexcept {
    r.put(store_);
    if (!frags_.empty()) frags_.clear();
    if (frag_list_) frag_list_.reset();
    frag_list_len_ = 0;
    tail_ = data_;
  }

  /// For destroy_packets: hand each fragment's buffer to `drop` (which takes over its one
  /// counted reference), the head's storage to `r`, and the frag_list's members to their own
  /// destructors. After it the packet holds nothing and may only be destroyed (its sizes are
  /// not kept up to date).
  template <class Drop>
  [[gnu::always_inline]] void release_for_destroy(detail::HeadBufReturn& r, Drop&& drop) noexcept {
    for (const Frag& f : frags()) drop(f.buf.get());
    frags_.forget_before_destroy();  // the references went to `drop`: not dropped again
    r.put(store_);
    if (frag_list_) frag_list_.reset();
  }

  // -- sizes (bytes) --
  std::size_t len() const noexcept {  ///< skb->len: head + frags + frag_list
    return headlen() + frags_.bytes() + frag_list_len_;
  }
  std::size_t headlen() const noexcept { return std::size_t(tail_ - data_); }  ///< skb_headlen
  std::size_t data_len() const noexcept { return len() - headlen(); }  ///< skb->data_len
  std::size_t headroom() const noexcept { return std::size_t(base_ + data_); }  ///< before data()
  std::size_t nr_frags() const noexcept { return frags_.size(); }
  /// Make room for n fragments without changing the packet (an aggregate about to grow).
  void reserve_frags(std::size_t n) { frags_.reserve(n); }
  bool is_linear() const noexcept { return frags_.empty() && !frag_list_; }
  /// !frag_list().empty(), without forming the reference.
  bool has_frag_list() const noexcept { return frag_list_ && !frag_list_->empty(); }

  // -- head access --
  std::uint8_t* data() noexcept { return store_.data() + base_ + data_; }
  const std::uint8_t* data() const noexcept { return store_.data() + base_ + data_; }
  std::span<std::uint8_t> head() noexcept { return {data(), headlen()}; }
  std::span<const std::uint8_t> head() const noexcept { return {data(), headlen()}; }
  /// Position of data() relative to the origin.
  pos_t data_pos() const noexcept { return data_; }
  /// Pointer into the head for a position; nullptr unless [pos, pos+n) lies within the
  /// storage from the start of headroom to the end of the head (pulled bytes stay addressable
  /// until the head is reallocated, as in the kernel).
  std::uint8_t* at_pos(pos_t pos, std::size_t n = 1) noexcept {
    if (pos == kNoHeader) return nullptr;
    const std::ptrdiff_t idx = base_ + pos;
    if (idx < 0 || idx + std::ptrdiff_t(n) > base_ + tail_) return nullptr;
    return store_.data() + idx;
  }

  // -- moving data --
  /// Prepend n bytes into the headroom (skb_push); reallocates headroom when short (never
  /// fails). Returns the new data(). Positions stay valid. Contents of new bytes undefined
  /// (zero on reallocation).
  std::uint8_t* push(std::size_t n);
  /// Remove n bytes from the front of the head (__skb_pull). n > headlen() → nullptr, no change.
  std::uint8_t* pull(std::size_t n) noexcept;
  /// pskb_pull: as pull() but first moves fragment bytes into the head if needed.
  /// n > len() → nullptr, no change.
  std::uint8_t* pskb_pull(std::size_t n);
  /// Extend the head at the tail by n bytes (skb_put). Requires no frags/frag_list → else
  /// nullptr. New bytes are zero.
  std::uint8_t* put(std::size_t n);
  /// As put() but the new bytes are left unwritten (the kernel's skb_put); for callers that
  /// fill them at once. nullptr when the packet has fragments.
  std::uint8_t* put_uninit(std::size_t n);
  /// Append bytes at the end of the packet: into the head if linear, else as a new fragment.
  void append(std::span<const std::uint8_t> bytes);
  /// Add fragment bytes [off, off+len) of buf at the end (skb_add_rx_frag without truesize).
  /// len 0 → Ok, nothing added. Errors: BadArgument (null buf), OutOfRange (slice outside buf).
  PacketError add_frag(BufferRef buf, std::size_t off, std::size_t len);
  /// add_frag(std::move(buf), off, len) for a slice known to lie inside *buf (e.g. a fragment
  /// taken over from another packet), inline; the result is the same.
  void add_frag_slice(BufferRef&& buf, std::uint32_t off, std::uint32_t len) {
    if (len == 0 || !buf) return;
    if (frag_list_ && !frag_list_->empty()) {
      add_frag(std::move(buf), off, len);
      return;
    }
    frags_.push_back(Frag{std::move(buf), off, len});
  }
  /// Move all of `o`'s fragments to the end of this packet's, in order (empty slices dropped),
  /// as add_frag_slice() of each would; `o` keeps its head and has no fragments after. Both
  /// packets must have an empty frag_list (GRO's merge of page fragments, G-19).
  [[gnu::always_inline]] void append_frags_from(Packet& o) { frags_.append_from(o.frags_); }
  /// append_frags_from(o) when `o` has exactly one fragment and this packet's fragment array
  /// has room for one more; false (nothing changed) otherwise.
  [[gnu::always_inline]] bool append_one_frag_from(Packet& o) noexcept {
    return frags_.append_one_from(o.frags_);
  }
  /// Keep the first `new_len` bytes (pskb_trim). new_len >= len() → no-op. Never fails.
  /// Does NOT adjust checksum state (see trim_rcsum).
  void trim(std::size_t new_len);
  /// Move all fragment and frag_list bytes into the head (skb_linearize).
  void linearize();
  /// pskb_may_pull: make the first n bytes linear. false (and no change) if n > len().
  bool may_pull(std::size_t n);
  /// Contiguous writable view of bytes [off, off+n) from data(), linearizing on demand.
  /// Empty span if the range is outside the packet.
  std::span<std::uint8_t> header(std::size_t off, std::size_t n);
  /// skb_copy_bits: copy dst.size() bytes starting at `offset` from data() into dst.
  /// Errors: OutOfRange.
  PacketError copy_bits(std::size_t offset, std::span<std::uint8_t> dst) const;
  /// Ones'-complement sum of [offset, offset+len) from data() over head+frags+frag_list
  /// (skb_checksum), with seed. Caller guarantees the range (OutOfRange → returns seed).
  wsum checksum(std::size_t offset, std::size_t len, wsum seed = 0) const noexcept;

  // -- sharing --
  /// skb_clone-like: copies the head bytes and metadata, SHARES fragment buffers
  /// (frags_shared() becomes true on both) and clones frag_list members.
  Packet clone() const;
  /// skb_copy-like: deep copy of all bytes and metadata; nothing shared.
  Packet copy() const;
  /// True if any fragment buffer is referenced by someone else (skb_has_shared_frag).
  bool frags_shared() const noexcept;

  std::span<const Frag> frags() const noexcept { return {frags_.data(), frags_.size()}; }
  /// Mutable view for the bytes and buffers of the fragments. Do not change a fragment's
  /// len or off through it (len() is cached); use extend_last_frag().
  std::span<Frag> frags() noexcept { return {frags_.data(), frags_.size()}; }
  /// Grow the last fragment by n bytes that follow it in its buffer (skb_gro_receive's
  /// "same page" case). Returns false when there is no fragment or the buffer is too short.
  bool extend_last_frag(std::size_t n) noexcept;
  /// frag_list (skb_shinfo->frag_list): chained packets whose bytes follow the frags.
  const std::vector<Packet>& frag_list() const noexcept {
    return frag_list_ ? *frag_list_ : kNoFragList;
  }
  /// Append a packet to frag_list (its bytes [data,end) become part of this packet's len()).
  void add_to_frag_list(Packet p);
  /// Remove and return the frag_list (len() shrinks accordingly).
  std::vector<Packet> take_frag_list();


  /// skb_set_*_header(skb, offset): position = data_pos() + offset.
  void set_mac_header(int off) noexcept { mac_header = data_ + off; }
  void set_network_header(int off) noexcept { network_header = data_ + off; }
  void set_transport_header(int off) noexcept { transport_header = data_ + off; }
  void set_inner_mac_header(int off) noexcept { inner_mac_header = data_ + off; }
  void set_inner_network_header(int off) noexcept { inner_network_header = data_ + off; }
  void set_inner_transport_header(int off) noexcept { inner_transport_header = data_ + off; }
  /// skb_*_offset(): header position minus data_pos() (meaningless if unset).
  int mac_offset() const noexcept { return mac_header - data_; }
  int network_offset() const noexcept { return network_header - data_; }
  int transport_offset() const noexcept { return transport_header - data_; }
  int inner_network_offset() const noexcept { return inner_network_header - data_; }
  int inner_transport_offset() const noexcept { return inner_transport_header - data_; }


  // -- checksum state (fields in PacketMeta) --
  IpSummed ip_summed() const noexcept { return ip_summed_of(csum); }
  /// skb_checksum_start_offset: csum_start − data_pos() (PARTIAL only; 0 otherwise).
  int csum_start_offset() const noexcept;
  /// Make PARTIAL with csum_start at `start_off` bytes from data() (skb_partial_csum_set).
  void set_partial(int start_off, std::uint16_t csum_offset, bool not_inet = false) noexcept {
    csum = CsumPartial{data_ + start_off, csum_offset, not_inet};
  }

  // -- GSO (field in PacketMeta) --
  bool is_gso() const noexcept { return gso.size != 0; }  ///< skb_is_gso

 private:
  void ensure_headroom(std::size_t n);
  void ensure_tailroom(std::size_t n);
  void pull_tail(std::size_t n);  // move n bytes from frags/frag_list into the head
  void absorb_frag_list();        // turn frag_list members into frags (len unchanged)
  Packet clone_impl(bool deep) const;

  // Header-sized copies as two overlapping fixed-size moves (no call, no loop).
  [[gnu::always_inline]] static void copy_header(std::uint8_t* d, const std::uint8_t* s,
                                                 std::size_t n) noexcept {
    if (n > 32 && n <= 64) {
      __builtin_memcpy(d, s, 32);
      __builtin_memcpy(d + n - 32, s + n - 32, 32);
    } else if (n > 64 && n <= 128) {
      __builtin_memcpy(d, s, 64);
      __builtin_memcpy(d + n - 64, s + n - 64, 64);
    } else if (n >= 16 && n <= 32) {
      __builtin_memcpy(d, s, 16);
      __builtin_memcpy(d + n - 16, s + n - 16, 16);
    } else if (n) {
      __builtin_memcpy(d, s, n);
    }
  }
  struct Uninit {};
  Packet(Uninit, std::size_t store_bytes, std::size_t headroom);
  template <class F>
  bool for_each_piece(F&& f) const;  // head, frags, frag_list in byte order; f returns false to stop

  detail::HeadBuf store_;            // [headroom | head | slack]
  std::ptrdiff_t base_ = 0;          // index in store_ of the origin (position 0)
  pos_t data_ = 0;                   // position of data()
  pos_t tail_ = 0;                   // position one past the head
  detail::FragVec frags_;
  // frag_list members; allocated only while there are some (most packets have none, and an
  // absent list costs nothing to destroy)
  std::unique_ptr<std::vector<Packet>, detail::FragListDelete> frag_list_;
  static const std::vector<Packet> kNoFragList;
  std::size_t frag_list_len_ = 0;
};

// ---- checksum bookkeeping (include/linux/skbuff.h, net/core/skbuff.c, net/core/dev.c) -------

/// C-16/C-17 (__skb_postpull_rcsum): `removed` are the bytes just removed from the front (or
/// from block offset `off` of the summed region). COMPLETE: csum −= block sum rotated for odd
/// `off`. PARTIAL: if csum_start now lies before data(), downgrade to NONE.
void postpull_rcsum(Packet& p, std::span<const std::uint8_t> removed, std::size_t off = 0) noexcept;
/// C-18 (__skb_postpush_rcsum): `pushed` bytes now at block offset `off`; COMPLETE: csum += them.
void postpush_rcsum(Packet& p, std::span<const std::uint8_t> pushed, std::size_t off = 0) noexcept;
/// C-19 skb_pull_rcsum: pskb_pull(n) then postpull over the removed bytes. nullptr if n > len().
/// COMPLETE stays the sum over [data, end) for any n (odd n re-aligned; the kernel only pulls
/// even lengths, where the result is identical to skb_pull_rcsum).
std::uint8_t* pull_rcsum(Packet& p, std::size_t n);
/// skb_push_rcsum (odd n re-aligned as for pull_rcsum): push(n) and add the sum of the n bytes now in front (the bytes that were
/// in the headroom, e.g. a header pulled earlier) to a COMPLETE csum. Returns data().
std::uint8_t* push_rcsum(Packet& p, std::size_t n);
/// Convenience: push bytes.size(), copy `bytes` there, then postpush_rcsum over them.
std::uint8_t* push_rcsum(Packet& p, std::span<const std::uint8_t> bytes);
/// C-20 pskb_trim_rcsum: COMPLETE → subtract the trimmed tail (block-sub at new_len);
/// PARTIAL → NotInHead if csum_start+csum_offset+2 would exceed min(new_len, headlen).
PacketError trim_rcsum(Packet& p, std::size_t new_len);
/// C-21 skb_forward_csum: COMPLETE → NONE.
void forward_csum(Packet& p) noexcept;
/// C-5/C-23 skb_csum_unnecessary: UNNECESSARY, or csum_valid, or PARTIAL with
/// csum_start_offset() >= 0.
bool csum_unnecessary(const Packet& p) noexcept;
/// C-23 __skb_decr_checksum_unnecessary: UNNECESSARY level 0 → NONE, else level−1.
void decr_checksum_unnecessary(Packet& p) noexcept;
/// C-26 __skb_incr_checksum_unnecessary: UNNECESSARY → level+1 (saturating at 3);
/// NONE → UNNECESSARY level 0; others unchanged.
void incr_checksum_unnecessary(Packet& p) noexcept;
/// __skb_checksum_complete: sum the whole packet, fold-and-complement it with the stored
/// csum (COMPLETE's csum, else pending_csum — the pseudo sum left by validation); set
/// COMPLETE{whole-packet sum}, csum_complete_sw, csum_valid = (result == 0).
/// Returns the folded checksum result (0 = valid).
std::uint16_t checksum_complete(Packet& p) noexcept;
/// C-23..C-24 __skb_checksum_validate(zero_okay, check, complete, pseudo): returns 0 when
/// validated (or deferred), else the non-zero folded value of the bad checksum. `check` is the
/// checksum field value (host order) for zero_okay. `pseudo` is the unfolded pseudo-header sum
/// (0 for "simple" validation).
std::uint16_t checksum_validate(Packet& p, wsum pseudo, bool complete, bool zero_okay = false,
                                std::uint16_t check = 0) noexcept;
/// C-25 skb_checksum_try_convert: NONE && csum_valid → COMPLETE{~pseudo}.
void checksum_try_convert(Packet& p, wsum pseudo) noexcept;
/// C-28/C-29 skb_checksum_help: finish a PARTIAL in software. COMPLETE → NONE. NONE and
/// UNNECESSARY → Ok, unchanged. Errors: IsGso; NotInHead when csum_start is not inside the
/// head or the 16-bit field does not fit in the head; OutOfRange when csum_start is before
/// data(). Shared fragments are linearized first. A folded result of 0 is written as 0xFFFF
/// for every protocol, as 6.12 dev.c does (CSUM_MANGLED_0 unconditionally).
PacketError checksum_help(Packet& p);
/// checksum_help on a packet's bytes laid out flat elsewhere (`bytes`: [data, end) of a
/// PARTIAL packet, e.g. its copy in a train buffer — the sum runs over bytes just written,
/// as a device that sums after its DMA read): the sum from `csum_start` (offset from the
/// first byte) to the end, the field holding the pseudo-header seed included, folded into
/// the 16-bit field at csum_start + csum_offset (big-endian). A folded 0 is written as 0xFFFF
/// when `zero_as_ffff` (skb_checksum_help, C-29; UDP segments, __udp_gso_segment), as 0 when
/// not (TCP segments: tcp_gso_segment's gso_make_checksum does not mangle).
/// Errors: OutOfRange when the field does not fit in `bytes`.
PacketError checksum_help_bytes(std::span<std::uint8_t> bytes, std::size_t csum_start,
                                std::size_t csum_offset, bool zero_as_ffff = true) noexcept;

/// C-31 remcsum_adjust over raw bytes: `region` starts at ptr (the encapsulated payload);
/// `csum` = COMPLETE sum beginning at ptr. Writes fold(csum − sum(region[0,start))) at
/// region[offset] (big-endian) and returns the wsum delta new−old. Requires
/// offset+2 <= region.size() and start <= region.size() (else returns 0, no write).
wsum remcsum_adjust(std::span<std::uint8_t> region, wsum csum, std::size_t start,
                    std::size_t offset) noexcept;
/// C-32 remcsum_unadjust: field := csum_fold(delta − field). `field` points at 2 bytes (BE).
void remcsum_unadjust(std::uint8_t* field, wsum delta) noexcept;

/// Destroy every packet of `pkts` and leave it empty. The fragment references are dropped
/// with one BufferRef::release per run of consecutive fragments in the same buffer, across
/// packets (GSO's segments hold one reference each to the same few pages: one atomic step
/// per page instead of one per fragment, none for the page's last references). Fragments of
/// frag_list members are dropped one by one as usual.
void destroy_packets(std::vector<Packet>& pkts) noexcept;
/// C-33 skb_remcsum_process. `ptr_off` = offset of ptr from data(); start/offset relative to
/// ptr. !nopartial → PARTIAL{csum_start = ptr+start, csum_offset = offset−start}.
/// nopartial → ensure COMPLETE (computing it and postpulling [data, ptr) if needed), then
/// remcsum_adjust and csum += delta. Errors: OutOfRange/NotInHead when the ranges are not in
/// the head.
PacketError remcsum_process(Packet& p, std::size_t ptr_off, std::size_t start,
                            std::size_t offset, bool nopartial);

}  // namespace ofld::core

// ofld/core/frag_vec.hpp — a packet's fragment array (skb_shared_info.frags): fragments in
// byte order, a few inline, the rest on the heap, with their total length kept up to date.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "ofld/core/buffer.hpp"

namespace ofld::core::detail {

/// The fragment array (skb_shared_info.frags): up to kInline fragments live inside the
/// Packet, more spill to the heap. Order is byte order.
class FragVec {
 public:
  static constexpr std::uint32_t kInline = 4;
  FragVec() noexcept = default;
  FragVec(FragVec&& o) noexcept : bytes_(o.bytes_), n_(o.n_), cap_(o.cap_) {
    if (o.heap_) {
      heap_ = o.heap_;
      o.heap_ = nullptr, o.cap_ = kInline;
    } else {
      for (std::uint32_t i = 0; i < n_; ++i) {
        new (inline_ptr() + i) Frag(std::move(o.inline_ptr()[i]));
        o.inline_ptr()[i].~Frag();
      }
    }
    o.n_ = 0;
    o.bytes_ = 0;
  }
  FragVec& operator=(FragVec&& o) noexcept;
  FragVec(const FragVec&) = delete;
  FragVec& operator=(const FragVec&) = delete;
  ~FragVec() {
    Frag* d = data();
    for (std::uint32_t i = 0; i < n_; ++i) d[i].~Frag();
    if (heap_) ::operator delete(heap_);
  }

  std::size_t size() const noexcept { return n_; }
  /// Sum of the fragments' lengths (skb->data_len without frag_list), kept up to date by
  /// every member; a caller that changes a Frag's len in place reports it with add_bytes().
  std::size_t bytes() const noexcept { return bytes_; }
  void add_bytes(std::ptrdiff_t d) noexcept { bytes_ = std::size_t(std::ptrdiff_t(bytes_) + d); }
  bool empty() const noexcept { return n_ == 0; }
  Frag* data() noexcept { return heap_ ? heap_ : inline_ptr(); }
  const Frag* data() const noexcept { return heap_ ? heap_ : inline_ptr(); }
  Frag* begin() noexcept { return data(); }
  Frag* end() noexcept { return data() + n_; }
  const Frag* begin() const noexcept { return data(); }
  const Frag* end() const noexcept { return data() + n_; }
  Frag& operator[](std::size_t i) noexcept { return data()[i]; }
  const Frag& operator[](std::size_t i) const noexcept { return data()[i]; }
  void push_back(Frag&& f) {  // inline: GRO appends one fragment per merged packet
    if (n_ == cap_) reserve(std::size_t(cap_) + 1);
    bytes_ += f.len;
    new (data() + n_) Frag(std::move(f));
    ++n_;
  }
  void push_back(const Frag& f) { push_back(Frag(f)); }
  /// Append a reference to bytes [off, off+len) of `buf` (one reference-count increment);
  /// the caller guarantees the slice lies inside the buffer.
  void push_ref(const BufferRef& buf, std::uint32_t off, std::uint32_t len) {
    if (n_ == cap_) reserve(std::size_t(cap_) + 1);
    new (data() + n_) Frag{buf, off, len};
    bytes_ += len;
    ++n_;
  }
  /// As push_ref, but the fragment adopts a reference taken with BufferRef::acquire().
  void push_adopted(Buffer* buf, std::uint32_t off, std::uint32_t len) {
    if (n_ == cap_) reserve(std::size_t(cap_) + 1);
    new (data() + n_) Frag{BufferRef::adopt(buf), off, len};
    bytes_ += len;
    ++n_;
  }
  /// Move every fragment of `o` with a non-empty slice to the end of this array, in order,
  /// and leave `o` empty (one capacity check for the lot; empty slices are dropped, as
  /// Packet::add_frag_slice drops them).
  [[gnu::always_inline]] void append_from(FragVec& o) {
    const std::uint32_t k = o.n_;
    if (n_ + k > cap_) reserve(std::size_t(n_) + k);
    Frag* d = data();
    Frag* s = o.data();
    std::uint32_t n = n_;
    std::size_t add = 0;
    for (std::uint32_t i = 0; i < k; ++i) {
      if (s[i].len != 0 && s[i].buf) {
        add += s[i].len;
        new (d + n) Frag(std::move(s[i]));  // leaves s[i] a null reference: nothing to end
        ++n;
      } else {
        s[i].~Frag();
      }
    }
    n_ = n;
    bytes_ += add;
    o.n_ = 0;
    o.bytes_ = 0;
  }
  /// append_from(o) for the common case of GRO's merge: `o` holds one fragment and this
  /// array has room for it. Returns false, changing nothing, in any other case.
  [[gnu::always_inline]] bool append_one_from(FragVec& o) noexcept {
    if (o.n_ != 1 || n_ == cap_) return false;
    Frag& s = *o.data();
    if (s.len != 0 && s.buf) {
      bytes_ += s.len;
      new (data() + n_) Frag(std::move(s));  // leaves s a null reference: nothing to end
      ++n_;
    } else {
      s.~Frag();
    }
    o.n_ = 0;
    o.bytes_ = 0;
    return true;
  }
  void reserve(std::size_t n);
  /// Forget every fragment without ending its reference, for a caller that has taken over
  /// their counts (and drops them itself) and destroys the array next: the Frags' references
  /// are not cleared (no destructor runs for them) and bytes() is not kept; a heap array's
  /// storage stays for the destructor to free.
  void forget_before_destroy() noexcept { n_ = 0; }
  void clear() noexcept { truncate(0); }
  void truncate(std::size_t n) noexcept {   ///< keep the first n (n <= size)
    Frag* d = data();
    while (n_ > n) {
      bytes_ -= d[--n_].len;
      d[n_].~Frag();
    }
  }
  void erase_front(std::size_t n) noexcept;  ///< drop the first n (n <= size)

 private:
  Frag* inline_ptr() noexcept { return reinterpret_cast<Frag*>(inline_); }
  const Frag* inline_ptr() const noexcept { return reinterpret_cast<const Frag*>(inline_); }
  alignas(Frag) unsigned char inline_[kInline * sizeof(Frag)];
  Frag* heap_ = nullptr;  // when set, all fragments live here
  std::size_t bytes_ = 0;
  std::uint32_t n_ = 0;
  std::uint32_t cap_ = kInline;
};

}  // namespace ofld::core::detail

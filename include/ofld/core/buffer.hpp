// ofld/core/buffer.hpp — refcounted byte storage for packet fragments (the kernel's pages /
// page_frag), the counted reference to it, and one fragment slice of it (skb_frag_t).
// Byte order: buffers hold wire bytes as they are; nothing here interprets them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace ofld::core {

struct Buffer;

/// A counted reference to a Buffer (the kernel's page reference): the subset of
/// std::shared_ptr's interface ofld uses (copy, move, get, ->, *, bool, use_count, reset,
/// ==), with the count inside the Buffer (one atomic operation per copy or release, no
/// control block). Thread-safe like shared_ptr: references to one Buffer may be copied and
/// dropped on different threads (the tunnel daemon hands packets between threads).
class BufferRef {
 public:
  constexpr BufferRef() noexcept = default;
  constexpr BufferRef(std::nullptr_t) noexcept {}
  inline BufferRef(const BufferRef& o) noexcept;
  BufferRef(BufferRef&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  BufferRef& operator=(const BufferRef& o) noexcept {
    BufferRef t(o);
    swap(t);
    return *this;
  }
  BufferRef& operator=(BufferRef&& o) noexcept {
    BufferRef t(std::move(o));
    swap(t);
    return *this;
  }
  inline ~BufferRef();

  Buffer* get() const noexcept { return p_; }
  Buffer* operator->() const noexcept { return p_; }
  Buffer& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  /// References to the buffer (0 for a null reference), like shared_ptr::use_count.
  inline long use_count() const noexcept;
  void reset() noexcept { BufferRef().swap(*this); }
  void swap(BufferRef& o) noexcept {
    Buffer* t = p_;
    p_ = o.p_;
    o.p_ = t;
  }
  friend bool operator==(const BufferRef& a, const BufferRef& b) noexcept { return a.p_ == b.p_; }
  friend bool operator==(const BufferRef& a, std::nullptr_t) noexcept { return a.p_ == nullptr; }

  /// For engines that hand out many references to one buffer at once: take `n` more
  /// references in one atomic step (none when the caller's is the only reference), then give
  /// each away with adopt(). The caller must hold a reference itself while the taken ones are
  /// not yet adopted.
  inline static void acquire(Buffer* b, std::uint32_t n) noexcept;
  /// A BufferRef that owns one reference already counted by acquire().
  static BufferRef adopt(Buffer* b) noexcept {
    BufferRef r;
    r.p_ = b;
    return r;
  }
  /// The opposite of adopt(): leave this reference null and hand its count to the caller,
  /// who must drop it with release() (so that many can be dropped in one step).
  Buffer* disown() noexcept {
    Buffer* b = p_;
    p_ = nullptr;
    return b;
  }
  /// Drop `n` >= 1 references to `b` that the caller owns (disowned ones) in one atomic
  /// step, or with none when they are all that is left; frees the buffer after the last.
  inline static void release(Buffer* b, std::uint32_t n) noexcept;

 private:
  Buffer* p_ = nullptr;
};

/// Refcounted byte storage referenced by fragments (the kernel's page/page_frag). Mutable;
/// whoever shares it (clone()) sees writes — check Packet::frags_shared() before writing.
/// Made by make()/create(), which return the first reference; not copyable.
struct Buffer {
  std::vector<std::uint8_t> bytes;
  Buffer() = default;
  explicit Buffer(std::size_t n) : bytes(n) {}
  explicit Buffer(std::span<const std::uint8_t> b) : bytes(b.begin(), b.end()) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  /// A new buffer holding a copy of `b`.
  static BufferRef make(std::span<const std::uint8_t> b) { return create(b); }
  /// A new buffer constructed from `a` (Buffer's constructors), like std::make_shared.
  template <class... A>
  static BufferRef create(A&&... a) {
    return BufferRef::adopt(new Buffer(static_cast<A&&>(a)...));
  }

 private:
  friend class BufferRef;
  std::atomic<std::uint32_t> refs_{1};
};

inline BufferRef::BufferRef(const BufferRef& o) noexcept : p_(o.p_) {
  if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
}
inline BufferRef::~BufferRef() {
  if (p_) release(p_, 1);
}
inline long BufferRef::use_count() const noexcept {
  return p_ ? long(p_->refs_.load(std::memory_order_relaxed)) : 0;
}
inline void BufferRef::acquire(Buffer* b, std::uint32_t n) noexcept {
  // When the caller's reference is the only one, no other thread holds one, so none can
  // change the count (taking a reference needs one): the new count is stored without a
  // locked instruction (as release() frees). The acquire load orders every earlier holder's
  // writes, published by its own release, before this thread's later ones.
  if (b->refs_.load(std::memory_order_acquire) == 1)
    b->refs_.store(1 + n, std::memory_order_relaxed);
  else
    b->refs_.fetch_add(n, std::memory_order_relaxed);
}
inline void BufferRef::release(Buffer* b, std::uint32_t n) noexcept {
  // When the caller's n are all the references there are, no other thread holds one, so
  // none can change the count (taking a reference needs one): the buffer is freed without a
  // locked instruction. The acquire load (like acq_rel below) orders every earlier holder's
  // writes, published by its own release, before the free.
  if (b->refs_.load(std::memory_order_acquire) == n ||
      b->refs_.fetch_sub(n, std::memory_order_acq_rel) == n)
    delete b;
}

/// One scatter-gather fragment: bytes [off, off+len) of *buf (skb_frag_t).
struct Frag {
  BufferRef buf;
  std::uint32_t off = 0;
  std::uint32_t len = 0;
  std::span<const std::uint8_t> bytes() const noexcept {
    return {buf->bytes.data() + off, len};
  }
  std::span<std::uint8_t> mutable_bytes() noexcept { return {buf->bytes.data() + off, len}; }
};

}  // namespace ofld::core

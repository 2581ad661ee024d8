// ofld/core/head_buf.hpp — the pooled byte storage of a packet's linear area (skb->head and
// its kmalloc size classes): per-thread free lists of power-of-two blocks. Sizes in bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ofld::core::detail {

/// Byte storage for a packet's linear area (headroom + head + tailroom), the skb->head
/// analogue. Move-only; capacity is rounded up to a size class and blocks are recycled through
/// a per-thread free list (bounded), so building and freeing packets on the hot path does not
/// reach malloc. Contents are not zeroed. Builds with AddressSanitizer bypass the pool.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kHeadBufPool = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kHeadBufPool = false;
#else
inline constexpr bool kHeadBufPool = true;
#endif
#else
inline constexpr bool kHeadBufPool = true;
#endif

/// Size classes of the pool: 256 B .. 64 KiB (powers of two); larger blocks go straight to
/// the allocator. At most kHeadBufMaxCached[c] free blocks of class c are kept per thread.
inline constexpr unsigned kHeadBufMinShift = 8, kHeadBufClasses = 9;
inline constexpr std::uint32_t kHeadBufMaxCached[kHeadBufClasses] = {1024, 1024, 512, 512, 256,
                                                                     64,   32,   16,  16};
/// One thread's free lists, threaded through the free blocks themselves (a cached block's
/// first 8 bytes hold the next pointer). Plain data with constant initialisation, so the hot
/// paths reach it without a TLS guard; packet.cpp defines it and frees the blocks at thread
/// exit.
struct HeadBufFreeList {
  std::uint8_t* head;
  std::uint32_t count;
};
struct HeadBufPool {
  HeadBufFreeList lists[kHeadBufClasses];
  bool cleanup_armed;  ///< the thread-exit cleanup of this thread is registered
};
extern thread_local constinit HeadBufPool t_headbuf_pool;

class HeadBufReturn;
class HeadBufTake;

/// The size class of a block of at least min_bytes: blocks of class c hold
/// 2^(c + kHeadBufMinShift) bytes. kHeadBufClasses or more: beyond every class (the allocator
/// serves it).
constexpr unsigned headbuf_class(std::size_t min_bytes) noexcept {
  return min_bytes <= (std::size_t(1) << kHeadBufMinShift)
             ? 0
             : unsigned(64 - __builtin_clzll(min_bytes - 1)) - kHeadBufMinShift;
}

class HeadBuf {
 public:
  HeadBuf() noexcept = default;
  /// Capacity >= min_bytes (throws bad_alloc). A block of the size class is taken from this
  /// thread's free list when there is one.
  explicit HeadBuf(std::size_t min_bytes) {
    const unsigned c = headbuf_class(min_bytes);
    if (kHeadBufPool && c < kHeadBufClasses) {
      HeadBufFreeList& l = t_headbuf_pool.lists[c];
      if (l.head) {
        p_ = l.head;
        __builtin_memcpy(&l.head, p_, sizeof(l.head));
        --l.count;
        cap_ = std::size_t(1) << (c + kHeadBufMinShift);
        return;
      }
    }
    allocate(min_bytes, c);
  }
  HeadBuf(HeadBuf&& o) noexcept : p_(o.p_), cap_(o.cap_) { o.p_ = nullptr, o.cap_ = 0; }
  HeadBuf& operator=(HeadBuf&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_, cap_ = o.cap_;
      o.p_ = nullptr, o.cap_ = 0;
    }
    return *this;
  }
  HeadBuf(const HeadBuf&) = delete;
  HeadBuf& operator=(const HeadBuf&) = delete;
  ~HeadBuf() {
    if (p_) release();
  }

  std::uint8_t* data() noexcept { return p_; }
  const std::uint8_t* data() const noexcept { return p_; }
  std::size_t size() const noexcept { return cap_; }  ///< capacity in bytes

 private:
  friend class HeadBufReturn;
  friend class HeadBufTake;
  HeadBuf(std::uint8_t* p, std::size_t cap) noexcept : p_(p), cap_(cap) {}
  void release() noexcept {
    if (!p_) return;
    // Blocks up to the largest class have a class size (larger ones are bigger than it).
    if (kHeadBufPool && cap_ <= (std::size_t(1) << (kHeadBufMinShift + kHeadBufClasses - 1))) {
      const unsigned c = unsigned(__builtin_ctzll(cap_)) - kHeadBufMinShift;
      if (t_headbuf_pool.cleanup_armed) {
        HeadBufFreeList& l = t_headbuf_pool.lists[c];
        if (l.count < kHeadBufMaxCached[c]) {
          __builtin_memcpy(p_, &l.head, sizeof(l.head));
          l.head = p_;
          ++l.count;
          p_ = nullptr;
          return;
        }
      }
    }
    release_slow();
  }
  void allocate(std::size_t min_bytes, unsigned c);  // the pool had no block
  void release_slow() noexcept;                       // arm the cleanup, cache or free
  std::uint8_t* p_ = nullptr;
  std::size_t cap_ = 0;
};

/// Releases many heads in a row (GRO's merged packets, one per merge), as HeadBuf's own
/// release does, with the free list of the last size class kept at hand: the thread's pool,
/// the class and its bound are looked up when the class changes, not for every block. The
/// list itself is read and written through on every put, so other allocations and releases
/// of the thread may interleave. Lives on one thread, for the span of one loop.
class HeadBufReturn {
 public:
  /// Leaves `h` empty; its block goes to this thread's free list, or to the allocator when
  /// the list is full or the block is of no class.
  [[gnu::always_inline]] void put(HeadBuf& h) noexcept {
    if (h.cap_ == cap_ && l_->count < bound_) {
      __builtin_memcpy(h.p_, &l_->head, sizeof(l_->head));
      l_->head = h.p_;
      ++l_->count;
      h.p_ = nullptr;
      h.cap_ = 0;
      return;
    }
    put_class(h);
  }

 private:
  [[gnu::noinline]] void put_class(HeadBuf& h) noexcept {
    constexpr std::size_t kLargest = std::size_t(1) << (kHeadBufMinShift + kHeadBufClasses - 1);
    if (kHeadBufPool && h.p_ && h.cap_ <= kLargest && t_headbuf_pool.cleanup_armed) {
      const unsigned c = unsigned(__builtin_ctzll(h.cap_)) - kHeadBufMinShift;
      l_ = &t_headbuf_pool.lists[c];
      cap_ = h.cap_;
      bound_ = kHeadBufMaxCached[c];
    }
    h = HeadBuf();  // HeadBuf's own release (which also arms the thread's cleanup)
  }
  HeadBufFreeList* l_ = nullptr;
  std::size_t cap_ = ~std::size_t(0);  ///< the class of l_ (~0: none yet; no HeadBuf has it)
  std::uint32_t bound_ = 0;
};

/// Takes many heads of one size in a row (GSO's segments, one per segment), as
/// HeadBuf(min_bytes) does, with the size class and its free list looked up once: the list
/// itself is read and written through on every take, so other allocations and releases of the
/// thread may interleave. Lives on one thread, for the span of one loop.
class HeadBufTake {
 public:
  explicit HeadBufTake(std::size_t min_bytes) noexcept : min_(min_bytes) {
    const unsigned c = headbuf_class(min_bytes);
    if (kHeadBufPool && c < kHeadBufClasses) {
      l_ = &t_headbuf_pool.lists[c];
      cap_ = std::size_t(1) << (c + kHeadBufMinShift);
    }
  }
  /// A block of at least min_bytes: this thread's cached one of the class, else a new one
  /// (throws bad_alloc).
  [[gnu::always_inline]] HeadBuf take() {
    if (l_ && l_->head) {
      std::uint8_t* p = l_->head;
      __builtin_memcpy(&l_->head, p, sizeof(l_->head));
      --l_->count;
      return HeadBuf(p, cap_);
    }
    return HeadBuf(min_);
  }

 private:
  HeadBufFreeList* l_ = nullptr;
  std::size_t cap_ = 0;
  std::size_t min_;
};

}  // namespace ofld::core::detail

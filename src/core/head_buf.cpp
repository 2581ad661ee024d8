// Pooled head storage: the slow paths of HeadBuf and the per-thread free lists (see
// include/ofld/core/head_buf.hpp).
#include "ofld/core/head_buf.hpp"

#include <cstring>
#include <new>

namespace ofld::core::detail {
namespace {

constexpr bool kPool = kHeadBufPool;
constexpr unsigned kMinShift = kHeadBufMinShift, kClasses = kHeadBufClasses;

// Frees the cached blocks of a thread when it exits. Touched (constructed, its destructor
// registered) once per thread, when the thread first caches a block.
struct FreeListsCleanup {
  ~FreeListsCleanup() {
    for (auto& l : t_headbuf_pool.lists) {
      while (l.head) {
        std::uint8_t* b = l.head;
        std::memcpy(&l.head, b, sizeof(l.head));
        ::operator delete(b);
      }
    }
    // Blocks released later in thread exit (other thread-locals' packets) are freed, not cached.
    for (unsigned c = 0; c < kClasses; ++c) t_headbuf_pool.lists[c].count = kHeadBufMaxCached[c];
  }
};
thread_local FreeListsCleanup t_free_cleanup;

}  // namespace

thread_local constinit HeadBufPool t_headbuf_pool{};

void HeadBuf::allocate(std::size_t min_bytes, unsigned c) {
  if (c >= kClasses) {
    p_ = static_cast<std::uint8_t*>(::operator new(min_bytes));
    cap_ = min_bytes;
    return;
  }
  cap_ = std::size_t(1) << (c + kMinShift);
  p_ = static_cast<std::uint8_t*>(::operator new(cap_));
}

void HeadBuf::release_slow() noexcept {
  if (!p_) return;
  if (kPool && (cap_ & (cap_ - 1)) == 0 && cap_ >= (std::size_t(1) << kMinShift)) {
    const unsigned c = unsigned(__builtin_ctzll(cap_)) - kMinShift;
    if (c < kClasses) {
      if (!t_headbuf_pool.cleanup_armed) {
        t_headbuf_pool.cleanup_armed = true;
        // odr-use through a volatile: constructs it and registers its destructor
        FreeListsCleanup* volatile sink = &t_free_cleanup;
        (void)sink;
      }
      HeadBufFreeList& l = t_headbuf_pool.lists[c];
      if (l.count < kHeadBufMaxCached[c]) {
        std::memcpy(p_, &l.head, sizeof(l.head));
        l.head = p_;
        ++l.count;
        p_ = nullptr;
        return;
      }
    }
  }
  ::operator delete(p_);
  p_ = nullptr;
}

}  // namespace ofld::core::detail

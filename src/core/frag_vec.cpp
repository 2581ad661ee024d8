// The fragment array's out-of-line members (see include/ofld/core/frag_vec.hpp).
#include "ofld/core/frag_vec.hpp"

#include <algorithm>
#include <new>
#include <utility>

namespace ofld::core::detail {


FragVec& FragVec::operator=(FragVec&& o) noexcept {
  if (this == &o) return *this;
  clear();
  if (heap_) {
    ::operator delete(heap_);
    heap_ = nullptr;
    cap_ = kInline;
  }
  bytes_ = o.bytes_;
  o.bytes_ = 0;
  if (o.heap_) {  // steal the heap array
    heap_ = o.heap_, n_ = o.n_, cap_ = o.cap_;
    o.heap_ = nullptr, o.n_ = 0, o.cap_ = kInline;
    return *this;
  }
  for (std::uint32_t i = 0; i < o.n_; ++i) {
    new (inline_ptr() + i) Frag(std::move(o.inline_ptr()[i]));
    o.inline_ptr()[i].~Frag();
  }
  n_ = o.n_;
  o.n_ = 0;
  return *this;
}

void FragVec::reserve(std::size_t n) {
  if (n <= cap_) return;
  std::size_t cap = std::max<std::size_t>(n, std::size_t(cap_) * 2);
  Frag* nh = static_cast<Frag*>(::operator new(cap * sizeof(Frag)));
  Frag* old = data();
  for (std::uint32_t i = 0; i < n_; ++i) {
    new (nh + i) Frag(std::move(old[i]));
    old[i].~Frag();
  }
  if (heap_) ::operator delete(heap_);
  heap_ = nh;
  cap_ = std::uint32_t(cap);
}



void FragVec::erase_front(std::size_t n) noexcept {
  if (n == 0) return;
  Frag* d = data();
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < n; ++i) dropped += d[i].len;
  for (std::size_t i = n; i < n_; ++i) d[i - n] = std::move(d[i]);
  bytes_ -= dropped;  // the moved-to slots now hold the survivors' lengths
  const std::size_t keep = n_ - n;
  while (n_ > keep) d[--n_].~Frag();  // moved-from tail: its lengths are already counted out
}

}  // namespace ofld::core::detail

// Packet storage operations (see include/ofld/core/packet.hpp for the position convention).
#include "ofld/core/packet.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace ofld::core {

std::string_view to_string(PacketError e) noexcept {
  switch (e) {
    case PacketError::Ok: return "ok";
    case PacketError::OutOfRange: return "offset or length outside the packet";
    case PacketError::NotInHead: return "bytes not in the linear head";
    case PacketError::HasFrags: return "operation needs a packet without fragments";
    case PacketError::IsGso: return "packet is GSO";
    case PacketError::BadCsumState: return "wrong checksum state for this operation";
    case PacketError::BadArgument: return "bad argument";
  }
  return "unknown packet error";
}

// ---- pooled head storage (head_buf.hpp) and fragment array (frag_vec.hpp) -------------------
// Their out-of-line members stay in this file: Packet's constructors and storage operations
// below inline them (allocate, release_slow, reserve, erase_front), as they did before the
// headers were split; in a file of their own they would be calls.

namespace detail {
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

// ---- fragment array ----------------------------------------------------------------------------


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

}  // namespace detail

// ---- Packet ------------------------------------------------------------------------------------

const std::vector<Packet> Packet::kNoFragList{};

void detail::FragListDelete::operator()(std::vector<Packet>* v) const noexcept { delete v; }

Packet::Packet() : store_(kDefaultHeadroom), base_(std::ptrdiff_t(kDefaultHeadroom)) {}

Packet::Packet(Uninit, std::size_t store_bytes, std::size_t headroom)
    : store_(store_bytes), base_(std::ptrdiff_t(headroom)) {}

Packet Packet::from_bytes(std::span<const std::uint8_t> bytes, std::size_t headroom,
                          std::size_t tailroom) {
  Packet p(Uninit{}, headroom + bytes.size() + tailroom, headroom);
  if (!bytes.empty()) std::memcpy(p.store_.data() + headroom, bytes.data(), bytes.size());
  p.data_ = 0;
  p.tail_ = pos_t(bytes.size());
  return p;
}

Packet Packet::from_bytes_frags(std::span<const std::uint8_t> bytes, std::size_t headlen,
                                std::size_t frag_size, std::size_t headroom) {
  headlen = std::min(headlen, bytes.size());
  Packet p = from_bytes(bytes.first(headlen), headroom);
  auto rest = bytes.subspan(headlen);
  if (frag_size == 0) frag_size = rest.size();
  while (!rest.empty()) {
    std::size_t n = std::min(frag_size, rest.size());
    p.frags_.push_back(Frag{Buffer::make(rest.first(n)), 0, std::uint32_t(n)});
    rest = rest.subspan(n);
  }
  return p;
}

std::vector<std::uint8_t> Packet::to_bytes() const {
  std::vector<std::uint8_t> out(len());
  (void)copy_bits(0, out);
  return out;
}


int Packet::csum_start_offset() const noexcept {
  if (auto* pc = std::get_if<CsumPartial>(&csum)) return pc->csum_start - data_;
  return 0;
}

void Packet::ensure_headroom(std::size_t n) {
  if (headroom() >= n) return;
  std::size_t front = n + kDefaultHeadroom;
  std::size_t hl = headlen();
  detail::HeadBuf ns(front + hl + 64);
  if (hl) std::memcpy(ns.data() + front, data(), hl);
  store_ = std::move(ns);
  base_ = std::ptrdiff_t(front) - data_;
}

void Packet::ensure_tailroom(std::size_t n) {
  const std::size_t used = std::size_t(base_ + tail_);
  const std::size_t need = used + n;
  if (store_.size() >= need) return;
  detail::HeadBuf ns(std::max(need, store_.size() * 3 / 2));
  if (used) std::memcpy(ns.data(), store_.data(), used);
  store_ = std::move(ns);
}

std::uint8_t* Packet::push(std::size_t n) {
  ensure_headroom(n);
  data_ -= pos_t(n);
  return data();
}

std::uint8_t* Packet::pull(std::size_t n) noexcept {
  if (n > headlen()) return nullptr;
  data_ += pos_t(n);
  return data();
}

std::uint8_t* Packet::pskb_pull(std::size_t n) {
  if (!may_pull(n)) return nullptr;
  return pull(n);
}

std::uint8_t* Packet::put_uninit(std::size_t n) {
  if (!is_linear()) return nullptr;
  ensure_tailroom(n);
  std::uint8_t* p = store_.data() + base_ + tail_;
  tail_ += pos_t(n);
  return p;
}

std::uint8_t* Packet::put(std::size_t n) {
  std::uint8_t* p = put_uninit(n);
  if (p && n) std::memset(p, 0, n);
  return p;
}

void Packet::append(std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return;
  if (is_linear()) {
    std::uint8_t* p = put_uninit(bytes.size());
    std::memcpy(p, bytes.data(), bytes.size());
  } else {
    frags_.push_back(Frag{Buffer::make(bytes), 0, std::uint32_t(bytes.size())});
  }
}

PacketError Packet::add_frag(BufferRef buf, std::size_t off, std::size_t len) {
  if (!buf) return PacketError::BadArgument;
  if (off > buf->bytes.size() || len > buf->bytes.size() - off || len > UINT32_MAX)
    return PacketError::OutOfRange;
  if (len == 0) return PacketError::Ok;  // nothing to reference
  if (frag_list_) absorb_frag_list();  // keep byte order: frags precede frag_list
  frags_.push_back(Frag{std::move(buf), std::uint32_t(off), std::uint32_t(len)});
  return PacketError::Ok;
}

bool Packet::extend_last_frag(std::size_t n) noexcept {
  if (frags_.empty()) return false;
  Frag& f = frags_[frags_.size() - 1];
  if (!f.buf || std::size_t(f.off) + f.len + n > f.buf->bytes.size()) return false;
  f.len += std::uint32_t(n);
  frags_.add_bytes(std::ptrdiff_t(n));
  return true;
}

void Packet::add_to_frag_list(Packet p) {
  frag_list_len_ += p.len();
  if (!frag_list_) frag_list_.reset(new std::vector<Packet>());
  frag_list_->push_back(std::move(p));
}

std::vector<Packet> Packet::take_frag_list() {
  frag_list_len_ = 0;
  if (!frag_list_) return {};
  std::vector<Packet> v = std::move(*frag_list_);
  frag_list_.reset();
  return v;
}

void Packet::absorb_frag_list() {
  if (!frag_list_) return;
  for (auto& m : *frag_list_) {
    if (m.headlen())
      frags_.push_back(Frag{Buffer::make(m.head()), 0, std::uint32_t(m.headlen())});
    for (auto& f : m.frags_) frags_.push_back(std::move(f));
    m.frags_.clear();
    if (m.frag_list_) {
      // nested frag_list: flatten the member's own chain recursively
      Packet tmp;
      for (auto& mm : *m.frag_list_) tmp.add_to_frag_list(std::move(mm));
      tmp.absorb_frag_list();
      for (auto& f : tmp.frags_) frags_.push_back(std::move(f));
    }
  }
  frag_list_.reset();
  frag_list_len_ = 0;
}

void Packet::pull_tail(std::size_t n) {
  if (n == 0) return;
  if (frag_list_) {
    std::size_t in_frags = 0;
    for (const auto& f : frags_) in_frags += f.len;
    if (n > in_frags) absorb_frag_list();
  }
  ensure_tailroom(n);
  std::uint8_t* dst = store_.data() + base_ + tail_;
  std::size_t left = n;
  std::size_t consumed = 0;  // whole frags consumed
  for (auto& f : frags_) {
    if (left == 0) break;
    std::size_t take = std::min<std::size_t>(f.len, left);
    std::memcpy(dst, f.buf->bytes.data() + f.off, take);
    dst += take;
    left -= take;
    f.off += std::uint32_t(take);
    f.len -= std::uint32_t(take);
    frags_.add_bytes(-std::ptrdiff_t(take));
    if (f.len == 0) ++consumed;
  }
  frags_.erase_front(consumed);
  tail_ += pos_t(n - left);
}

void Packet::trim(std::size_t new_len) {
  if (new_len >= len()) return;
  std::size_t hl = headlen();
  if (new_len <= hl) {
    tail_ = data_ + pos_t(new_len);
    frags_.clear();
    frag_list_.reset();
    frag_list_len_ = 0;
    return;
  }
  if (frag_list_) absorb_frag_list();
  std::size_t left = new_len - hl;
  std::size_t keep = 0;
  for (auto& f : frags_) {
    if (left == 0) break;
    if (f.len > left) {
      frags_.add_bytes(std::ptrdiff_t(left) - std::ptrdiff_t(f.len));
      f.len = std::uint32_t(left);
    }
    left -= f.len;
    ++keep;
  }
  frags_.truncate(keep);
}

void Packet::linearize() {
  pull_tail(data_len());
  frags_.clear();  // all consumed (drops empty fragments too)
  frag_list_.reset();
  frag_list_len_ = 0;
}

bool Packet::may_pull(std::size_t n) {
  if (n <= headlen()) return true;
  if (n > len()) return false;
  pull_tail(n - headlen());
  return true;
}

std::span<std::uint8_t> Packet::header(std::size_t off, std::size_t n) {
  if (off > len() || n > len() - off) return {};
  if (!may_pull(off + n)) return {};
  return {data() + off, n};
}

template <class F>
bool Packet::for_each_piece(F&& f) const {
  if (headlen() && !f(head())) return false;
  for (const auto& fr : frags_)
    if (fr.len && !f(fr.bytes())) return false;
  for (const auto& m : frag_list())
    if (!m.for_each_piece(f)) return false;
  return true;
}

PacketError Packet::copy_bits(std::size_t offset, std::span<std::uint8_t> dst) const {
  std::size_t total = len();
  if (offset > total || dst.size() > total - offset) return PacketError::OutOfRange;
  std::size_t pos = 0, w = 0;
  for_each_piece([&](std::span<const std::uint8_t> s) {
    if (w == dst.size()) return false;
    std::size_t end = pos + s.size();
    if (end > offset) {
      std::size_t from = offset > pos ? offset - pos : 0;
      std::size_t take = std::min(s.size() - from, dst.size() - w);
      std::memcpy(dst.data() + w, s.data() + from, take);
      w += take;
    }
    pos = end;
    return true;
  });
  return PacketError::Ok;
}

wsum Packet::checksum(std::size_t offset, std::size_t n, wsum seed) const noexcept {
  std::size_t total = len();
  if (offset > total || n > total - offset) return seed;
  // Fast path: the range lies in the head.
  if (offset + n <= headlen()) return csum::csum_partial(data() + offset, n, seed);
  std::size_t pos = 0, done = 0;
  wsum sum = seed;
  for_each_piece([&](std::span<const std::uint8_t> s) {
    if (done == n) return false;
    std::size_t end = pos + s.size();
    if (end > offset) {
      std::size_t from = offset > pos ? offset - pos : 0;
      std::size_t take = std::min(s.size() - from, n - done);
      sum = csum::csum_block_add(sum, csum::csum_partial(s.data() + from, take, 0), done);
      done += take;
    }
    pos = end;
    return true;
  });
  return sum;
}

Packet Packet::clone_impl(bool deep) const {
  const std::size_t used = std::size_t(base_ + tail_);
  Packet p(Uninit{}, store_.size(), std::size_t(base_));
  if (used) std::memcpy(p.store_.data(), store_.data(), used);
  p.data_ = data_;
  p.tail_ = tail_;
  p.frags_.reserve(frags_.size());
  for (const auto& f : frags_) {
    if (deep)
      p.frags_.push_back(Frag{Buffer::make(f.bytes()), 0, f.len});
    else
      p.frags_.push_back(f);
  }
  for (const auto& m : frag_list()) p.add_to_frag_list(m.clone_impl(deep));
  p.meta() = meta();  // every PacketMeta field
  return p;
}

Packet Packet::clone() const { return clone_impl(false); }
Packet Packet::copy() const { return clone_impl(true); }

bool Packet::frags_shared() const noexcept {
  for (std::size_t i = 0; i < frags_.size(); ++i) {
    long own = 0;
    for (const auto& g : frags_)
      if (g.buf == frags_[i].buf) ++own;
    if (frags_[i].buf.use_count() > own) return true;
  }
  for (const auto& m : frag_list())
    if (m.frags_shared()) return true;
  return false;
}

void destroy_packets(std::vector<Packet>& pkts) noexcept {
  Buffer* run = nullptr;
  std::uint32_t n = 0;
  detail::HeadBufReturn heads;
  for (Packet& p : pkts) {
    p.release_for_destroy(heads, [&](Buffer* b) {
      if (b == run) {
        ++n;
      } else if (b) {
        if (run) BufferRef::release(run, n);
        run = b;
        n = 1;
      }
    });
  }
  if (run) BufferRef::release(run, n);
  pkts.clear();  // empty packets: nothing left to drop
}

}  // namespace ofld::core

// The GRO engine: dev_gro_receive / napi_gro_complete / napi_gro_flush (net/core/gro.c).
#include "ofld/gro/engine.hpp"

#include <algorithm>
#include <chrono>
#include <random>

namespace ofld::gro {

using offload::GroContext;
using offload::GroHeld;

Counters& Counters::operator+=(const Counters& o) noexcept {
  packets_in += o.packets_in;
  merged += o.merged;
  held += o.held;
  delivered_now += o.delivered_now;
  aggregates += o.aggregates;
  singles += o.singles;
  segments_out += o.segments_out;
  fast_merged += o.fast_merged;
  fast_held += o.fast_held;
  fast_held_next += o.fast_held_next;
  for (std::size_t i = 0; i < kGroReasonCount; ++i) {
    not_merged[i] += o.not_merged[i];
    completed[i] += o.completed[i];
  }
  return *this;
}

namespace {

/// Bytes from the start of a frame the flow hash may read (the RSS hash's window).
constexpr std::size_t kHashWindow = 128;

std::uint64_t random_key() {
  std::uint64_t k = 0;
  try {
    std::random_device rd;
    k = std::uint64_t(rd()) << 32 | rd();
  } catch (...) {
  }
  if (k == 0)  // no entropy source: still differs between engines and runs
    k = std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        std::uint64_t(reinterpret_cast<std::uintptr_t>(&k));
  return k;
}

}  // namespace

std::uint32_t flow_hash(std::span<const std::uint8_t> f, LinkLayer link, std::uint64_t key) noexcept {
  return offload::gro_flow_hash(f, link, key);
}

Engine::Engine(EngineOptions opts, const offload::Registry& reg)
    : opts_(std::move(opts)),
      key_(opts_.config.flow_hash_key ? *opts_.config.flow_hash_key : random_key()) {
  if (opts_.batch == 0) opts_.batch = 1;
  reg_ = &reg;
  // A table of only the protocols whose aggregates the output can carry (gso_types).
  own_reg_ = offload::gro_registry_for(*reg_, opts_.gso_types, opts_.config);
  if (own_reg_) reg_ = own_reg_.get();
  fast_ = offload::gro_fast_hook(*reg_);
  if (!fast_) opts_.fast_path = false;
  fast_state_.cfg = &opts_.config;
  fast_state_.link = opts_.link;
  fast_state_.hash_mask = opts_.flow_hash_mask;
  fast_state_.key = key_;
  fast_state_.buckets = buckets_.data();
  if (fast_) fast_->init(fast_state_);
  pool_.reserve(offload::kGroHashBuckets * offload::kMaxGroSkbs + 1);
  for (std::size_t i = 0; i < offload::kGroHashBuckets * offload::kMaxGroSkbs + 1; ++i) {
    pool_.push_back(std::make_unique<GroHeld>());
    free_.push_back(pool_.back().get());
  }
  for (auto& b : buckets_) b.reserve(offload::kMaxGroSkbs + 1);
  cand_.reserve(offload::kMaxGroSkbs + 1);
}

Engine::~Engine() = default;

GroHeld* Engine::alloc() {
  if (free_.empty()) {
    pool_.push_back(std::make_unique<GroHeld>());
    return pool_.back().get();
  }
  GroHeld* h = free_.back();
  free_.pop_back();
  return h;
}

void Engine::release(GroHeld* h) {
  h->pkt.discard();  // moved into the output already; no replacement storage needed
  h->agg.reset();
  free_.push_back(h);
}

void Engine::remove(Bucket& b, GroHeld* h) {
  auto it = std::find(b.begin(), b.end(), h);
  if (it != b.end()) b.erase(it);
}

std::size_t Engine::held_flows() const noexcept {
  std::size_t n = 0;
  for (const auto& b : buckets_) n += b.size();
  return n;
}

std::vector<core::Packet> Engine::take_output() noexcept {
  std::vector<core::Packet> v;
  v.swap(out_);
  return v;
}

// napi_gro_complete (G-8).
void Engine::complete(GroHeld* h, GroReason why) {
  if (h == fast_state_.last) fast_state_.last = nullptr;
  ctr_.completed[std::size_t(why)]++;
  ctr_.segments_out += h->count;
  core::Packet& p = h->pkt;
  if (h->count == 1) {
    ctr_.singles++;
    p.gso.size = 0;
  } else {
    ctr_.aggregates++;
    p.encapsulation = false;
    GroContext ctx;
    ctx.cfg = &opts_.config;
    ctx.reg = reg_;
    ctx.cp = h;
    offload::gro_link_complete(ctx, opts_.link);
  }
  out_.push_back(std::move(p));
  release(h);
}

void Engine::receive(core::Packet&& pkt, std::uint64_t now_ns) {
  if (opts_.fast_path && opts_.config.gro) {
    const offload::GroFastResult r = fast_->receive(fast_state_, pkt);
    if (r.hold) {
      hold_new(pkt, r.hash, now_ns);
      if (++in_batch_ >= opts_.batch) poll_end(now_ns);
      return;
    }
    if (r.p) {  // merged by the fast hook
      pkt.discard();
      ctr_.packets_in++;
      ctr_.merged++;
      ctr_.fast_merged++;
      if (r.complete != GroReason::None) {
        remove(buckets_[r.p->hash & (offload::kGroHashBuckets - 1)], r.p);
        complete(r.p, r.complete);
      }
      if (++in_batch_ >= opts_.batch) poll_end(now_ns);
      return;
    }
  }
  receive_general(pkt, now_ns);
}

// receive() of each packet in order, with the fast path taken a run at a time: the fast hook
// merges consecutive packets of one flow in one call (GroFastHook::receive_run, at most up to
// the poll end), each counted and handled as receive() would; a packet the hook marks as the
// flow's next aggregate (its size limit reached) is held as the chain would hold it
// (hold_next); any other packet the hook does not take goes to the chain, as receive() sends
// it there.
void Engine::receive_batch(std::span<core::Packet> pkts, std::uint64_t now_ns) {
  const std::size_t n = pkts.size();
  std::size_t i = 0;
  while (i < n) {
    if (opts_.fast_path && opts_.config.gro) {
      const std::size_t room = opts_.batch - in_batch_;  // >= 1: a full batch polls at once
      offload::GroFastResult r;
      const std::size_t k =
          fast_->receive_run(fast_state_, pkts.subspan(i, std::min(n - i, room)), r);
      if (k) {
        ctr_.packets_in += k;
        ctr_.merged += k;
        ctr_.fast_merged += k;
        if (r.complete != GroReason::None) {
          remove(buckets_[r.p->hash & (offload::kGroHashBuckets - 1)], r.p);
          complete(r.p, r.complete);
        }
        i += k;
        in_batch_ += k;
        if (r.restart) {  // k < room: pkts[i] belongs to this poll
          hold_next(r.p, pkts[i++], now_ns);
          in_batch_++;
        }
        if (in_batch_ >= opts_.batch) poll_end(now_ns);
        continue;
      }
      if (r.hold) {
        hold_new(pkts[i++], r.hash, now_ns);
        if (++in_batch_ >= opts_.batch) poll_end(now_ns);
        continue;
      }
    }
    receive_general(pkts[i++], now_ns);
  }
}

// What receive_general does for a packet that p's size limit alone refuses (G-16), in the
// same order: p (the newest of its bucket) completed with reason SizeLimit, then the packet
// held as the flow's next aggregate, the newest of that bucket, with p's hash and layout.
void Engine::hold_next(GroHeld* p, core::Packet& pkt, std::uint64_t now_ns) {
  ctr_.packets_in++;
  Bucket& b = buckets_[p->hash & (offload::kGroHashBuckets - 1)];
  GroHeld* h = alloc();
  offload::gro_hold_next(*h, *p);
  b.pop_back();  // p
  complete(p, GroReason::SizeLimit);
  ctr_.held++;
  ctr_.fast_held++;
  ctr_.fast_held_next++;
  ctr_.not_merged[std::size_t(GroReason::SizeLimit)]++;
  h->age_ns = now_ns;
  pkt.gso.size = std::uint16_t(pkt.len() - h->data_offset);
  h->pkt = std::move(pkt);
  fast_state_.last = h;
  b.push_back(h);
}

// What receive_general does for a packet the fast hook marked GroFastResult::hold (a new
// flow, no completion but the full bucket's oldest): G-7's hold, in the same order.
void Engine::hold_new(core::Packet& pkt, std::uint32_t hash, std::uint64_t now_ns) {
  ctr_.packets_in++;
  Bucket& b = buckets_[hash & (offload::kGroHashBuckets - 1)];
  if (b.size() >= offload::kMaxGroSkbs) {
    GroHeld* oldest = b.front();
    b.erase(b.begin());
    complete(oldest, GroReason::TableFull);
  }
  ctr_.held++;
  ctr_.fast_held++;
  ctr_.not_merged[std::size_t(GroReason::NewFlow)]++;
  GroHeld* h = alloc();
  h->hash = hash;
  h->age_ns = now_ns;
  h->pkt = std::move(pkt);
  fast_->hold_new(fast_state_, *h);
  h->pkt.gso.size = std::uint16_t(h->pkt.len() - h->data_offset);
  fast_state_.last = h;
  b.push_back(h);
}

__attribute__((noinline)) void Engine::receive_general(core::Packet& pkt, std::uint64_t now_ns) {
  ctr_.packets_in++;
  if (!opts_.config.gro) {  // G-1
    ctr_.not_merged[std::size_t(GroReason::GroDisabled)]++;
    ctr_.delivered_now++;
    out_.push_back(std::move(pkt));
    if (++in_batch_ >= opts_.batch) poll_end(now_ns);
    return;
  }
  GroContext ctx;
  ctx.cfg = &opts_.config;
  ctx.reg = reg_;
  ctx.skb = &pkt;

  // The flow hash stands for the device's RSS hash, a function of the packet's bytes: the
  // first kHashWindow are hashed wherever they lie (head or fragments), so that every packet of a
  // flow gets the same hash whatever its geometry.
  std::uint32_t hash;
  if (pkt.headlen() >= kHashWindow || pkt.headlen() == pkt.len()) {
    hash = offload::gro_flow_hash({pkt.data(), std::min<std::size_t>(pkt.headlen(), kHashWindow)},
                                  opts_.link, key_);
  } else {
    std::uint8_t first[kHashWindow];
    const std::size_t n = std::min<std::size_t>(pkt.len(), sizeof first);
    (void)pkt.copy_bits(0, {first, n});
    hash = offload::gro_flow_hash({first, n}, opts_.link, key_);
  }
  hash &= opts_.flow_hash_mask;
  Bucket& b = buckets_[hash & (offload::kGroHashBuckets - 1)];

  // G-2 gro_list_prepare: candidates newest first, with the same hash and VLAN tag; the link
  // layer then compares the link headers.
  cand_.clear();
  for (auto it = b.rbegin(); it != b.rend(); ++it) {
    GroHeld* p = *it;
    p->same_flow = p->hash == hash && p->pkt.vlan_present == pkt.vlan_present &&
                   p->pkt.vlan_tci == pkt.vlan_tci;
    cand_.push_back(p);
  }
  ctx.candidates = cand_;
  const bool have_link = offload::gro_link_prepare(ctx, opts_.link);

  // G-4 initial state.
  if (!pkt.frag_list().empty()) ctx.flush_skb(GroReason::HasFragList);
  if (pkt.is_gso()) {
    ctx.count = pkt.gso.segs ? pkt.gso.segs : 1;
    const bool tcp = pkt.gso.type & (core::skb_gso::TCPV4 | core::skb_gso::TCPV6);
    if (!tcp || (pkt.gso.type & core::skb_gso::DODGY)) ctx.flush_skb(GroReason::GsoInput);
  }
  // G-5 checksum state import.
  if (const auto* c = std::get_if<core::CsumComplete>(&pkt.csum)) {
    ctx.csum_valid = true;
    ctx.csum = c->csum;
  } else if (const auto* u = std::get_if<core::CsumUnnecessary>(&pkt.csum)) {
    ctx.csum_cnt = std::uint8_t(u->level.value() + 1);
  }

  if (have_link) offload::gro_link_receive(ctx, opts_.link);  // G-5 (link header), G-3, G-6
  if (ctx.skb_reason == GroReason::NoHandler) ctx.flush = true;

  // G-7 outcome.
  if (ctx.pp) {
    GroHeld* pp = ctx.pp;
    remove(b, pp);
    complete(pp, ctx.pp_reason == GroReason::None ? GroReason::Flags : ctx.pp_reason);
  }
  if (ctx.same_flow) {
    ctr_.merged++;
    pkt.discard();  // its payload is in the aggregate (or it joined the frag_list)
  } else if (ctx.flush) {
    ctr_.not_merged[std::size_t(ctx.skb_reason == GroReason::None ? GroReason::NoHandler
                                                                  : ctx.skb_reason)]++;
    ctr_.delivered_now++;
    out_.push_back(std::move(pkt));
  } else {
    if (b.size() >= offload::kMaxGroSkbs) {
      GroHeld* oldest = b.front();
      b.erase(b.begin());
      complete(oldest, GroReason::TableFull);
    }
    ctr_.held++;
    ctr_.not_merged[std::size_t(ctx.skb_reason == GroReason::None ? GroReason::NewFlow
                                                                  : ctx.skb_reason)]++;
    GroHeld* h = alloc();
    h->hash = hash;
    offload::gro_hold_init(*h, ctx);
    h->age_ns = now_ns;
    if (!pkt.is_gso()) pkt.gso.size = std::uint16_t(pkt.len() - ctx.data_offset);
    h->pkt = std::move(pkt);
    // The fast hook's per-flow state (its template); eligible flows become the hint.
    if (fast_ && fast_->hold(fast_state_, *h, ctx)) fast_state_.last = h;
    b.push_back(h);
  }
  if (++in_batch_ >= opts_.batch) poll_end(now_ns);
}

void Engine::flush_older(std::uint64_t now_ns, GroReason why) {
  for (auto& b : buckets_) {
    while (!b.empty()) {
      GroHeld* h = b.front();  // oldest first
      if (now_ns - h->age_ns < opts_.flush_timeout_ns) break;
      b.erase(b.begin());
      complete(h, why);
    }
  }
}

void Engine::poll_end(std::uint64_t now_ns) {
  in_batch_ = 0;
  if (opts_.flush_timeout_ns == 0) {
    flush_all();
    return;
  }
  flush_older(now_ns, GroReason::Timeout);
}

void Engine::tick(std::uint64_t now_ns) {
  if (opts_.flush_timeout_ns) flush_older(now_ns, GroReason::Timeout);
}

void Engine::flush_all() {
  for (auto& b : buckets_) {
    for (GroHeld* h : b) complete(h, GroReason::PollEnd);
    b.clear();
  }
}

void finish_checksums(core::Packet& p) { offload::gro_finish_checksums(p); }

}  // namespace ofld::gro

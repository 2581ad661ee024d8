// gro_cells analogue (net/core/gro_cells.c, W-12).
#include "ofld/gro/gro_cells.hpp"

namespace ofld::gro {

GroCells::GroCells(GroCellsOptions o) : opts_(o), engine_([&] {
  EngineOptions e = o.engine;
  e.batch = SIZE_MAX;  // poll() ends batches itself
  return e;
}()) {}

GroCells::Admit GroCells::admit(core::Packet& inner) {
  if (!up_) {
    ctr_.dropped_down++;
    return Admit::Dropped;
  }
  // Plain netif_rx only without GRO. The kernel also bypasses a cloned skb (shared header
  // data); a Packet's head is never shared (clone() copies it), and fragments shared with a
  // receive buffer are the normal page-frag case that GRO steals from (W-12).
  if (!opts_.engine.config.gro) {
    ctr_.bypassed++;
    out_.push_back(std::move(inner));
    return Admit::Bypassed;
  }
  return Admit::Gro;
}

bool GroCells::receive(core::Packet inner, std::uint64_t) {
  const Admit a = admit(inner);
  if (a != Admit::Gro) return a == Admit::Bypassed;
  if (backlog_.size() >= opts_.max_backlog) {
    ctr_.dropped_backlog++;
    return false;
  }
  ctr_.queued++;
  backlog_.push_back(std::move(inner));
  return true;
}

bool GroCells::receive_polled(core::Packet&& inner, std::uint64_t now_ns) {
  const Admit a = admit(inner);
  if (a != Admit::Gro) return a == Admit::Bypassed;
  ctr_.queued++;
  if (!backlog_.empty()) {  // keep the order: what waits goes through GRO first
    engine_.receive_batch({backlog_.data(), backlog_.size()}, now_ns);
    backlog_.clear();
  }
  engine_.receive(std::move(inner), now_ns);
  return true;
}

std::size_t GroCells::poll(std::size_t budget, std::uint64_t now_ns) {
  const std::size_t n = std::min(budget, backlog_.size());
  engine_.receive_batch({backlog_.data(), n}, now_ns);
  backlog_.erase(backlog_.begin(), backlog_.begin() + long(n));
  engine_.poll_end(now_ns);
  auto& eo = engine_.output();
  if (out_.empty()) {
    out_.swap(eo);  // no per-frame move; both vectors keep their capacity
  } else {
    for (auto& p : eo) out_.push_back(std::move(p));
  }
  eo.clear();
  return n;
}

std::vector<core::Packet> GroCells::take_output() {
  std::vector<core::Packet> v;
  v.swap(out_);
  return v;
}

}  // namespace ofld::gro

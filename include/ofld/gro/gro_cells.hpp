// ofld/gro/gro_cells.hpp — GRO after decapsulation on a tunnel device (the kernel's gro_cells,
// net/core/gro_cells.c; spec W-12, W-19): a tunnel endpoint hands each decapsulated inner
// frame to receive(); frames queue in a bounded backlog and poll() runs them through a GRO
// engine in batches (the cell's NAPI), delivering merged aggregates. This is what lets IPv6
// GRE (ip6gre / ip6gretap) traffic aggregate when the underlay did not (Ben Elisha 2018).
#pragma once

#include <cstdint>
#include <vector>

#include "ofld/gro/engine.hpp"

namespace ofld::gro {

struct GroCellsOptions {
  EngineOptions engine{};          ///< link: Ethernet (gretap/erspan/vxlan) or RawIp (ip6gre)
  std::size_t max_backlog = 1000;  ///< netdev_max_backlog
};

struct GroCellsCounters {
  std::uint64_t queued = 0;
  std::uint64_t dropped_down = 0;     ///< device down
  std::uint64_t dropped_backlog = 0;  ///< backlog full
  std::uint64_t bypassed = 0;         ///< no GRO on the device (plain netif_rx)
};

class GroCells {
 public:
  explicit GroCells(GroCellsOptions o = {});
  /// gro_cells_receive. Returns false when the frame was dropped (counted).
  bool receive(core::Packet inner, std::uint64_t now_ns = 0);
  /// gro_cells_receive when the caller is the cell's NAPI context itself (a single-threaded
  /// endpoint that will poll before it returns): the frame is counted as queued and goes
  /// through GRO at once (napi_gro_receive inside the running poll), while its headers are
  /// still in cache, instead of waiting in the backlog. The next poll() ends the batch (poll
  /// end, output). Same aggregates as receive() + poll(): GRO flushes only at poll end.
  /// Frames already in the backlog go first, so delivery order is kept. Returns false when
  /// the frame was dropped (device down; counted; `inner` is then left as it was). Taken by
  /// reference: no per-frame move of the packet on the way in.
  bool receive_polled(core::Packet&& inner, std::uint64_t now_ns = 0);
  /// The cell's NAPI poll: up to `budget` queued frames through GRO, then poll end.
  /// Returns the number of frames processed.
  std::size_t poll(std::size_t budget = 64, std::uint64_t now_ns = 0);
  void set_up(bool up) noexcept { up_ = up; }
  std::vector<core::Packet> take_output();
  /// The delivered frames in place (the caller consumes and clears them; the vector keeps
  /// its capacity across polls, take_output() does not).
  std::vector<core::Packet>& output() noexcept { return out_; }
  const GroCellsCounters& counters() const noexcept { return ctr_; }
  const Engine& engine() const noexcept { return engine_; }

 private:
  enum class Admit { Dropped, Bypassed, Gro };
  /// The checks both receive forms share: device down (dropped, counted), GRO off (handed on
  /// alone, counted), or on to GRO.
  Admit admit(core::Packet& inner);
  GroCellsOptions opts_;
  Engine engine_;
  std::vector<core::Packet> backlog_;
  std::vector<core::Packet> out_;
  GroCellsCounters ctr_;
  bool up_ = true;
};

}  // namespace ofld::gro

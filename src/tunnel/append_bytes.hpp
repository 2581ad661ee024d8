// Private to src/tunnel: a packet's bytes (head, page fragments, frag_list members in order)
// appended to a byte vector — how a segment is laid into a train buffer or an encapsulated
// frame. One definition for endpoint.cpp and vxlan.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "ofld/core/packet.hpp"

namespace ofld::tunnel::detail {

inline void append_bytes(const core::Packet& p, std::vector<std::uint8_t>& out) {
  auto h = p.head();
  out.insert(out.end(), h.begin(), h.end());
  for (const auto& f : p.frags()) {
    auto b = f.bytes();
    out.insert(out.end(), b.begin(), b.end());
  }
  for (const auto& m : p.frag_list()) append_bytes(m, out);
}

}  // namespace ofld::tunnel::detail

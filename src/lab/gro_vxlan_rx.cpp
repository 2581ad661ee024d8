// The kernel's VXLAN receive path in ofld (see gro_conformance.hpp, vxlan_rx_gro): underlay GRO with
// a VXLAN socket, vxlan_rcv's decapsulation, and the vxlan device's gro_cells.
#include <optional>

#include "ofld/gro/gro_cells.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/lab/gro_conformance.hpp"
#include "ofld/tools/gro_tool.hpp"
#include "ofld/wire/ip.hpp"

namespace ofld::lab {

namespace {

inline std::uint16_t ld16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

constexpr std::uint16_t kVxlanPort = 4789;

// vxlan_rcv for one frame the underlay delivered: Ethernet / IPv4 / UDP to 4789 / VXLAN with
// only the I flag (V-4: any other flag or reserved bit → drop) and our VNI → the inner
// Ethernet frame. __iptunnel_pull_header → iptunnel_pull_offloads (W-3c): a GSO aggregate
// keeps its inner gso_type and CHECKSUM_PARTIAL but loses the tunnel bits and encapsulation.
// A frame GRO did not aggregate is validated again by gro_cells (CHECKSUM_NONE here).
std::optional<core::Packet> vxlan_decap(core::Packet&& p, std::uint32_t vni) {
  const std::size_t need = 14 + 20 + 8 + 8;
  if (p.len() < need || !p.may_pull(need)) return std::nullopt;
  const std::uint8_t* d = p.data();
  if (ld16(d + 12) != 0x0800 || wire::ip_version(d + 14) != 4) return std::nullopt;
  const std::size_t ihl = std::size_t(d[14] & 0x0F) * 4;
  if (ihl < 20 || d[14 + 9] != 17) return std::nullopt;
  const std::size_t hl = 14 + ihl + 8 + 8;
  if (!p.may_pull(hl)) return std::nullopt;
  d = p.data();
  const std::uint8_t* uh = d + 14 + ihl;
  if (ld16(uh + 2) != kVxlanPort) return std::nullopt;
  const std::uint8_t* vx = uh + 8;
  if (vx[0] != 0x08 || vx[1] || vx[2] || vx[3] || vx[7]) return std::nullopt;
  if ((std::uint32_t(vx[4]) << 16 | std::uint32_t(vx[5]) << 8 | vx[6]) != vni) return std::nullopt;
  if (!p.pull(hl)) return std::nullopt;
  if (p.is_gso()) {
    p.gso.type &= ~core::skb_gso::ENCAP_ALL;
  } else {
    p.csum = core::CsumNone{};
  }
  p.encapsulation = false;
  p.set_mac_header(0);
  p.protocol = ld16(p.data() + 12);
  return p;
}

}  // namespace

std::vector<core::Packet> vxlan_rx_gro(const std::vector<std::vector<std::uint8_t>>& frames,
                                       std::uint32_t vni) {
  gro::EngineOptions uo;
  uo.config.udp_tunnels.push_back({kVxlanPort, kVxlanPort, false, false});
  uo.batch = SIZE_MAX;  // poll ends are driven below
  uo.config.flow_hash_key = tools::kGroPcapFlowHashKey;
  gro::Engine underlay(uo);
  gro::GroCellsOptions co;
  co.engine.config.flow_hash_key = tools::kGroPcapFlowHashKey;
  gro::GroCells cells{co};
  std::vector<core::Packet> out;
  auto pump = [&] {
    for (auto& p : underlay.output())
      if (auto inner = vxlan_decap(std::move(p), vni)) cells.receive(std::move(*inner));
    underlay.output().clear();
    while (cells.poll(64) == 64) {
    }
    for (auto& p : cells.take_output()) out.push_back(std::move(p));
  };
  std::size_t n = 0;
  for (const auto& f : frames) {
    underlay.receive(core::Packet::from_bytes(f));
    if (++n % 64 == 0) {  // K-3: a poll that used its budget of 64 flushes everything
      underlay.poll_end();
      pump();
    }
  }
  underlay.flush_all();
  pump();
  return out;
}

}  // namespace ofld::lab

// libFuzzer target: arbitrary bytes × every link type → parse_frame, then re-parse every
// recorded header with its view and touch its accessors (ASan catches any over-read).
#include <cstddef>
#include <cstdint>
#include <span>

#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"
#include "ofld/wire/virtio_net.hpp"

using namespace ofld::wire;

namespace {
volatile std::uint64_t sink;

void touch(std::span<const std::uint8_t> f, const HeaderRef& h) {
  auto s = f.subspan(h.offset);
  std::uint64_t x = h.end + h.length;
  switch (h.kind) {
    case HeaderKind::Ethernet: if (auto v = EthernetHeader<>::parse(s)) x += v->ethertype() + v->dst()[0] + v->src()[5]; break;
    case HeaderKind::Vlan: case HeaderKind::QinQ: if (auto v = VlanTag<>::parse(s)) x += v->vid() + v->pcp() + v->ethertype(); break;
    case HeaderKind::LinuxSll: if (auto v = SllHeader<>::parse(s)) x += v->protocol() + v->hatype(); break;
    case HeaderKind::LinuxSll2: if (auto v = Sll2Header<>::parse(s)) x += v->protocol() + v->ifindex(); break;
    case HeaderKind::Ipv4: if (auto v = Ipv4Header<>::parse(s)) x += v->total_len() + v->frag_offset() + v->check() + v->saddr() + v->daddr() + v->options().size(); break;
    case HeaderKind::Ipv6: if (auto v = Ipv6Header<>::parse(s)) x += v->payload_len() + v->flow_label() + v->saddr()[0] + v->daddr()[15]; break;
    case HeaderKind::Ipv6HopByHop: case HeaderKind::Ipv6Routing: case HeaderKind::Ipv6DestOpts:
      if (auto v = Ipv6ExtHeader<>::parse(s)) x += v->jumbo_payload_len() + v->final_dst_offset() + v->segments_left(); break;
    case HeaderKind::Ipv6Fragment: if (auto v = Ipv6FragHeader<>::parse(s)) x += v->frag_offset() + v->identification(); break;
    case HeaderKind::Ah: if (auto v = AhHeader<>::parse(s)) x += v->spi() + v->seq(); break;
    case HeaderKind::Tcp: if (auto v = TcpHeader<>::parse(s)) { x += v->seq() + v->ack_seq() + v->window() + v->flags(); if (auto t = v->timestamp()) x += t->tsval; } break;
    case HeaderKind::Udp: if (auto v = UdpHeader<>::parse(s)) x += v->len() + v->check(); break;
    case HeaderKind::Icmp: case HeaderKind::Icmpv6: if (auto v = IcmpHeader<>::parse(s)) x += v->type() + v->check(); break;
    case HeaderKind::Vxlan: if (auto v = VxlanHeader<>::parse(s)) x += v->vni() + v->rco_data().field(); break;
    case HeaderKind::Gue: if (auto v = GueHeader<>::parse(s)) { x += v->proto_ctype(); if (auto r = v->remcsum()) x += r->start + r->offset; } break;
    case HeaderKind::Gre: if (auto v = GreHeader<>::parse(s)) x += v->protocol() + v->key().value_or(0) + v->seq().value_or(0) + v->checksum().value_or(0) + v->ack().value_or(0); break;
    case HeaderKind::ErspanII: if (auto v = ErspanIIHeader<>::parse(s)) x += v->session_id() + v->index(); break;
    case HeaderKind::ErspanIII: if (auto v = ErspanIIIHeader<>::parse(s)) x += v->timestamp() + v->hw_id() + v->platform_id(); break;
    case HeaderKind::Geneve: if (auto v = GeneveHeader<>::parse(s)) { x += v->vni(); v->for_each_option([&](std::uint16_t c, std::uint8_t t, auto d) { x += c + t + d.size(); }); } break;
    case HeaderKind::VirtioNet: case HeaderKind::Frame: break;
  }
  if (h.pseudo_daddr != kNoOffset)  // the address must be inside the frame: 4 or 16 bytes
    x += f[h.pseudo_daddr + (h.kind == HeaderKind::Ipv4 ? 3 : 15)];
  sink = x;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> f(data, size);
  ParseOptions opts[2];
  opts[1].gue_port = 6080;
  opts[1].fou_port = 5555;
  opts[1].vxlan_remcsum_rx = true;
  opts[1].allow_clipped = true;
  for (const auto& o : opts)
    for (auto lt : {LinkType::Ethernet, LinkType::RawIp, LinkType::LinuxSll, LinkType::LinuxSll2}) {
      auto r = parse_frame(f, lt, o);
      if (!r) {
        sink = r.error().to_string().size();
        continue;
      }
      for (const auto& h : r->headers()) touch(f, h);
      sink = describe(*r).size() + r->payload_offset();
    }
  for (std::size_t sz : {10u, 12u, 20u})
    if (auto h = virtio_net::parse(f, sz)) sink = h->gso_size;
  return 0;
}

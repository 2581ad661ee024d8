// libFuzzer target: arbitrary device frames with arbitrary virtio_net_hdrs (what a TAP/TUN
// hands over; in a VM back end the guest writes both) → tunnel::Endpoint::transmit for every
// encapsulation (VXLAN, GUE, GRE, ip6gre; RCO, GRE key/csum, tos inherit) never crashes or
// over-reads, and every train it builds is one a UDP_SEGMENT send can carry (udp(7): every
// datagram gso_size bytes but the last, which may be shorter; at most 64 datagrams and
// 65535 - 20 - 8 bytes). Issue 16: the frames are handed one after the other into one train
// vector, as the daemon does for a device read batch (a frame may continue the previous
// frame's open train); that must give exactly the datagrams, in order, and the counters that
// one frame per call (trains sent and recycled after each) gives. The trains then go through
// a receiving endpoint of the same mode (no crash; every datagram counted).
// Byte 0 selects the mode and options; then records: 2 bytes frame length (big-endian,
// modulo 4096), a 10-byte virtio_net_hdr (little-endian, as a TAP with IFF_VNET_HDR), frame.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "ofld/tunnel/endpoint.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace {

using namespace ofld::tunnel;

IpAddr a(const char* s) { return *IpAddr::parse(s); }

std::unique_ptr<Endpoint> make(std::uint8_t sel, bool sender, const EndpointOptions& o) {
  const unsigned mode = sel % 8;
  const bool v6 = mode == 1 || mode == 6 || mode == 7;
  const auto l = a(v6 ? (sender ? "fd00::1" : "fd00::2") : (sender ? "10.0.0.1" : "10.0.0.2"));
  const auto r = a(v6 ? (sender ? "fd00::2" : "fd00::1") : (sender ? "10.0.0.2" : "10.0.0.1"));
  const bool opt = sel & 8;  // RCO (VXLAN, GUE) or key + csum (GRE)
  if (mode <= 2) {
    VxlanConfig c;
    c.vni = 42;
    c.local = l;
    c.remotes = {r};
    c.remcsum_tx = c.remcsum_rx = opt;
    c.tos_inherit = sel & 16;
    if (mode == 2) c.remotes.push_back(a("10.0.0.3"));  // flooding to two remotes
    return std::make_unique<Endpoint>(c, o);
  }
  if (mode <= 4) {
    GueConfig c;
    c.local = l;
    c.remote = r;
    c.port = 5555;
    c.remcsum_tx = c.remcsum_rx = opt;
    return std::make_unique<Endpoint>(c, o);
  }
  GreConfig c;
  c.local = l;
  c.remote = r;
  if (opt) {
    c.ikey = c.okey = 42;
    c.icsum = c.ocsum = true;
  }
  return std::make_unique<Endpoint>(c, o);
}

bool udp_segment_shape(const TxTrain& t) {
  if (t.count == 0 || t.count > kMaxTrainSegs || t.seg_size == 0 || t.buf.size() > kMaxTrainBytes)
    return false;
  // count datagrams of seg_size, the last one 1..seg_size bytes
  const std::size_t n = (t.buf.size() + t.seg_size - 1) / t.seg_size;
  return n == t.count && t.buf.size() > (t.count - 1) * std::size_t(t.seg_size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t sel = data[0];
  EndpointOptions o;
  o.vnet_hdr = !(sel & 32);
  o.mtu = (sel & 64) ? 1450 : 0;
  auto A = make(sel, true, o), R = make(sel, true, o);
  std::vector<TxTrain> joined, one;
  std::vector<std::uint8_t> by_frame;
  std::size_t at = 1;
  while (at + 2 + ofld::wire::virtio_net::kHdrLen <= size) {
    const std::size_t len = (std::size_t(data[at]) << 8 | data[at + 1]) % 4096;
    at += 2;
    const auto h = ofld::wire::virtio_net::Hdr::load(data + at, true);
    at += ofld::wire::virtio_net::kHdrLen;
    const std::size_t n = std::min(len, size - at);
    // a copy of its own, so that an over-read is ASan's to see
    const std::vector<std::uint8_t> frame(data + at, data + at + n);
    at += n;
    A->transmit(h, frame, 1, joined);
    R->transmit(h, frame, 1, one);
    for (const auto& t : one) {
      if (!udp_segment_shape(t)) std::abort();
      by_frame.insert(by_frame.end(), t.buf.begin(), t.buf.end());
    }
    R->recycle(one);
  }
  std::vector<std::uint8_t> all;
  for (const auto& t : joined) {
    if (!udp_segment_shape(t)) std::abort();
    all.insert(all.end(), t.buf.begin(), t.buf.end());
  }
  if (all != by_frame) std::abort();
  const auto &ca = A->counters(), &cr = R->counters();
  if (ca.tx_frames != cr.tx_frames || ca.tx_datagrams != cr.tx_datagrams ||
      ca.tx_dgram_bytes != cr.tx_dgram_bytes || ca.drops_total() != cr.drops_total())
    std::abort();
  std::uint64_t in_trains = 0;
  for (const auto& t : joined) in_trains += t.count;
  if (in_trains != ca.tx_datagrams) std::abort();

  // The receiving side of the same mode takes every train as it arrives (UDP_GRO: one buffer
  // with its gso_size); every datagram is counted.
  auto B = make(sel, false, o);
  const auto from = B->encapsulation().configured_remotes().front();
  for (const auto& t : joined)
    B->receive_train(t.buf, t.count > 1 ? t.seg_size : 0, from, OuterCsum::Present, 2);
  std::vector<TapFrame> frames;
  B->rx_flush(3, frames);
  if (B->counters().rx_datagrams > in_trains) std::abort();
  A->recycle(joined);
  return 0;
}

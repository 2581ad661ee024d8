// One virtio_net header codec: io::VnetHdr (TAP, TUN, AF_PACKET) is wire's
// virtio_net::Hdr, so the layout lives in one place (include/uapi/linux/virtio_net.h,
// spec V-18). Golden bytes from that struct layout: flags u8, gso_type u8, then hdr_len,
// gso_size, csum_start, csum_offset as u16, little-endian under TUNSETVNETLE / virtio 1.0.
#include <gtest/gtest.h>

#include <type_traits>

#include "ofld/io/tap.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/wire/virtio_net.hpp"

namespace {
using Bytes = std::vector<std::uint8_t>;
}

TEST(OneVirtioNetCodec, IoAndOffloadUseTheWireType) {
  EXPECT_TRUE((std::is_same_v<ofld::io::VnetHdr, ofld::wire::virtio_net::Hdr>));
  EXPECT_TRUE((std::is_same_v<ofld::offload::virtio::VnetHdr, ofld::wire::virtio_net::Hdr>));
}

TEST(OneVirtioNetCodec, IoStoreLoadIsTheV18Layout) {
  ofld::io::VnetHdr h;
  h.flags = ofld::io::VnetHdr::kNeedsCsum;
  h.gso_type = ofld::io::VnetHdr::kGsoTcpv4 | ofld::io::VnetHdr::kGsoEcn;
  h.hdr_len = 66;
  h.gso_size = 1448;
  h.csum_start = 34;
  h.csum_offset = 16;
  Bytes le(10), be(10);
  h.store(le.data(), true);
  h.store(be.data(), false);
  EXPECT_EQ(le, (Bytes{0x01, 0x81, 0x42, 0x00, 0xa8, 0x05, 0x22, 0x00, 0x10, 0x00}));
  EXPECT_EQ(be, (Bytes{0x01, 0x81, 0x00, 0x42, 0x05, 0xa8, 0x00, 0x22, 0x00, 0x10}));
  EXPECT_EQ(ofld::io::VnetHdr::load(le.data(), true), h);
  EXPECT_EQ(ofld::io::VnetHdr::load(be.data(), false), h);
  // The same bytes through wire's codec.
  Bytes w(10);
  ASSERT_EQ(ofld::wire::virtio_net::emit(h, w, 10), 10u);
  EXPECT_EQ(w, le);
}

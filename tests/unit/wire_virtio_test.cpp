// virtio_net_hdr codec (V-18..V-21). Golden bytes from the struct layout in
// include/uapi/linux/virtio_net.h (spec V-18): flags u8, gso_type u8, hdr_len, gso_size,
// csum_start, csum_offset (u16 each), [num_buffers u16], [hash_value u32, hash_report u16, pad].
#include <gtest/gtest.h>

#include "ofld/wire/virtio_net.hpp"
#include "wire_test_util.hpp"

using namespace ofld::wire;
namespace vn = ofld::wire::virtio_net;
using wire_test::Bytes;
using wire_test::hex;

TEST(WireVirtio, V19_V20_V21_Constants) {
  EXPECT_EQ(vn::kFlagNeedsCsum, 1);
  EXPECT_EQ(vn::kFlagDataValid, 2);
  EXPECT_EQ(vn::kFlagRscInfo, 4);
  EXPECT_EQ(vn::kGsoNone, 0);
  EXPECT_EQ(vn::kGsoTcpv4, 1);
  EXPECT_EQ(vn::kGsoUdp, 3);
  EXPECT_EQ(vn::kGsoTcpv6, 4);
  EXPECT_EQ(vn::kGsoUdpL4, 5);
  EXPECT_EQ(vn::kGsoEcn, 0x80);
  EXPECT_EQ(vn::kIffVnetHdr, 0x4000u);
  EXPECT_EQ(vn::kTapDefaultVnetHdrSz, 10u);
}

TEST(WireVirtio, V18_LegacyGoldenLittleEndian) {
  // NEEDS_CSUM, TCPV4|ECN, hdr_len 66 (0x0042), gso_size 1448 (0x05a8), csum_start 34 (0x22),
  // csum_offset 16 (0x10); little-endian → low byte first.
  const Bytes b = hex("01 81 42 00 a8 05 22 00 10 00");
  auto h = vn::parse(b, 10);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->flags, vn::kFlagNeedsCsum);
  EXPECT_EQ(h->gso_type, vn::kGsoTcpv4 | vn::kGsoEcn);
  EXPECT_EQ(h->hdr_len, 66);
  EXPECT_EQ(h->gso_size, 1448);
  EXPECT_EQ(h->csum_start, 34);
  EXPECT_EQ(h->csum_offset, 16);
  EXPECT_EQ(h->num_buffers, 0);
  // the same header in big-endian (legacy header on a BE host / TUNSETVNETBE)
  auto be = vn::parse(hex("01 81 00 42 05 a8 00 22 00 10"), 10, vn::ByteOrder::Big);
  EXPECT_EQ(*be, *h);
}

TEST(WireVirtio, V18_MrgRxbufAndHashGolden) {
  // 12-byte: ... num_buffers 3; 20-byte: + hash_value 0x11223344, hash_report 2 (IPv4 TCP), pad.
  const Bytes b12 = hex("02 00 00 00 00 00 00 00 00 00 03 00");
  auto h12 = vn::parse(b12, 12);
  ASSERT_TRUE(h12.ok());
  EXPECT_EQ(h12->flags, vn::kFlagDataValid);
  EXPECT_EQ(h12->num_buffers, 3);
  const Bytes b20 = hex("00 05 36 00 c8 05 22 00 06 00 01 00 44 33 22 11 02 00 00 00");
  auto h20 = vn::parse(b20, 20);
  ASSERT_TRUE(h20.ok());
  EXPECT_EQ(h20->gso_type, vn::kGsoUdpL4);
  EXPECT_EQ(h20->hdr_len, 0x36);
  EXPECT_EQ(h20->gso_size, 1480);
  EXPECT_EQ(h20->csum_offset, 6);
  EXPECT_EQ(h20->num_buffers, 1);
  EXPECT_EQ(h20->hash_value, 0x11223344u);
  EXPECT_EQ(h20->hash_report, 2);
}

TEST(WireVirtio, V18_RoundTripEveryFieldDistinct) {
  // Every field gets a distinct value so that a getter/setter reading the wrong offset (the
  // gVisor bug class noted in STYLE.md) cannot round-trip.
  vn::Hdr h{0x05, 0x84, 0x1122, 0x3344, 0x5566, 0x7788, 0x99aa, 0xbbccddee, 0xff01};
  for (auto order : {vn::ByteOrder::Little, vn::ByteOrder::Big}) {
    for (std::size_t size : {std::size_t(10), std::size_t(12), std::size_t(20)}) {
      Bytes out(size, 0xee);
      ASSERT_EQ(vn::emit(h, out, size, order), size);
      auto back = vn::parse(out, size, order);
      ASSERT_TRUE(back.ok());
      vn::Hdr want = h;
      if (size < 12) want.num_buffers = 0;
      if (size < 20) want.hash_value = 0, want.hash_report = 0;
      EXPECT_EQ(*back, want) << size;
    }
  }
  Bytes le(20);
  vn::emit(h, le, 20);
  EXPECT_EQ(le, hex("05 84 22 11 44 33 66 55 88 77 aa 99 ee dd cc bb 01 ff 00 00"));
}

TEST(WireVirtio, V18_SizeAndTruncationErrors) {
  Bytes b(20, 0);
  EXPECT_EQ(vn::parse(b, 11).error().code, Errc::BadHeaderLen);
  EXPECT_EQ(vn::emit(vn::Hdr{}, b, 16), 0u);
  for (std::size_t size : {std::size_t(10), std::size_t(12), std::size_t(20)})
    for (std::size_t n = 0; n < size; ++n) {
      Bytes cut(n, 0);
      auto r = vn::parse(cut, size);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error().code, Errc::Truncated);
      EXPECT_EQ(vn::emit(vn::Hdr{}, cut, size), 0u);
    }
}

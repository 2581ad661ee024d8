// N-7 (ipv6_gro_receive walking the GSO extension headers): the walk reads each extension
// header's first two bytes (next header, length) and then makes the whole header available
// in the head, which may pull bytes from the fragments into a new, larger head block. The
// next-header byte must be taken before that pull, or it is read from the freed block
// (heap-use-after-free, found by gro_fuzz with non-linear frames). The head block is made
// exactly headroom + headlen bytes with the head ending two bytes into a 16-byte destination
// options header, so the pull has to reallocate; the ASan build reports the stale read.
// Expected (N-7, N-8, T-10/T-11; the GroTable N8_V6ExtSame case): the packet is held as a new
// TCP flow and the next segment with the same extension header merges with it.
#include <gtest/gtest.h>

#include "gro_test_util.hpp"

using namespace ofld;
using namespace ofld::grotest;

TEST(GroIpv6ExtHdr, N7_ExtensionHeaderSplitByTheHeadIsWalkedAfterThePull) {
  for (bool fast : {false, true}) {
    Tcp t = tcp_seg(true, 0, 1000);
    t.v6_ext = {0, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // 16 bytes: PadN of 12
    t.v6_ext_type = 60;                                            // destination options
    const std::vector<std::uint8_t> f0 = tcp_frame(t);
    t.seq_off = 1000;
    const std::vector<std::uint8_t> f1 = tcp_frame(t);
    gro::EngineOptions o;
    o.batch = 1000;
    o.fast_path = fast;
    gro::Engine e(o);
    const std::size_t head = 14 + 40 + 2;  // two bytes of the extension header in the head
    e.receive(core::Packet::from_bytes_frags(f0, head, 0, 256 - head));
    EXPECT_EQ(e.counters().held, 1u) << "fast " << fast;
    e.receive(core::Packet::from_bytes_frags(f1, head, 0, 256 - head));
    e.flush_all();
    auto out = e.take_output();
    ASSERT_EQ(out.size(), 1u) << "fast " << fast;
    EXPECT_EQ(out[0].gso.segs, 2u) << "fast " << fast;
    std::vector<std::uint8_t> want = f0;
    want.insert(want.end(), f1.begin() + 14 + 40 + 16 + 20, f1.end());
    const auto got = out[0].to_bytes();
    ASSERT_EQ(got.size(), want.size());
    // the payload bytes (headers are rewritten at completion, N-11/T-20)
    EXPECT_TRUE(std::equal(got.begin() + 90, got.end(), want.begin() + 90)) << "fast " << fast;
  }
}

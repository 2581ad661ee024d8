// copy_and_csum_bits / copy_and_checksum_help (skb_copy_and_csum_bits, skb_copy_and_csum_dev):
// copy a packet's pieces out and sum them in the same pass. Expected values: the RFC 1071 §3
// example (hand-derived sums shown), and independent computations — the flattened bytes
// (Packet::to_bytes) summed by the byte-wise reference kernel, the field written by the
// two-pass copy_bits + checksum_help_bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/core/skb_copy_csum.hpp"

using namespace ofld;
using core::Packet;
using core::PacketError;
using csum::wsum;
using Bytes = std::vector<std::uint8_t>;

namespace {

/// A packet holding `b` as: head of `cuts[0]` bytes, fragments of the next cut lengths, and
/// what is left as a frag_list member (head 1 byte + one fragment when longer than 1).
Packet pieced(const Bytes& b, const std::vector<std::size_t>& cuts, bool tail_in_frag_list) {
  std::size_t at = std::min(cuts.empty() ? b.size() : cuts[0], b.size());
  Packet p = Packet::from_bytes({b.data(), at});
  for (std::size_t i = 1; i < cuts.size() && at < b.size(); ++i) {
    const std::size_t n = std::min(cuts[i], b.size() - at);
    if (n == 0) continue;
    // Each fragment in its own buffer at a varying offset (alignment of the source).
    const std::size_t off = i % 7;
    Bytes store(off + n + 3, 0xEE);
    std::memcpy(store.data() + off, b.data() + at, n);
    EXPECT_EQ(p.add_frag(core::Buffer::make(store), off, n), PacketError::Ok);
    at += n;
  }
  if (at < b.size()) {
    Bytes rest(b.begin() + long(at), b.end());
    if (tail_in_frag_list) p.add_to_frag_list(Packet::from_bytes_frags(rest, 1, 0));
    else EXPECT_EQ(p.add_frag(core::Buffer::make(rest), 0, rest.size()), PacketError::Ok);
  }
  return p;
}

wsum reference_sum(const std::uint8_t* p, std::size_t n) {
  return csum::csum_partial_with(csum::Kernel::Reference, p, n, 0);
}

}  // namespace

// RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2 (0001 + f203 + f4f5 + f6f7 =
// 0x2ddf0, folded 0xddf2). Split at odd boundaries (head "00", frag "01 f2 03", frag "f4",
// frag_list "f5 f6 f7"): pieces at odd offsets must be byte-swapped into the sum (§2(B)).
TEST(CsumCopyPacket, Rfc1071ExampleAcrossOddPieces) {
  const Bytes b = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  Packet p = pieced(b, {1, 3, 1}, true);
  ASSERT_EQ(p.len(), 8u);
  ASSERT_EQ(p.frag_list().size(), 1u);
  Bytes to(8, 0xAA);
  wsum s = 1;
  ASSERT_EQ(core::copy_and_csum_bits(p, 0, to, s), PacketError::Ok);
  EXPECT_EQ(to, b);
  EXPECT_EQ(csum::csum_fold16(s), 0xddf2);
  EXPECT_EQ(csum::csum_fold(s), 0x220d);  // the checksum RFC 1071 §3 gives
  // From offset 1: 01f2 + 03f4 + f5f6 + f700 (odd tail = high byte) = 0x1f2dc → 0xf2dd.
  Bytes to7(7);
  ASSERT_EQ(core::copy_and_csum_bits(p, 1, to7, s), PacketError::Ok);
  EXPECT_EQ(to7, Bytes(b.begin() + 1, b.end()));
  EXPECT_EQ(csum::csum_fold16(s), 0xf2dd);
  // From offset 3 to 6: 03f4 + f500 = 0xf8f4 (the range ends inside the frag_list member).
  Bytes to3(3);
  ASSERT_EQ(core::copy_and_csum_bits(p, 3, to3, s), PacketError::Ok);
  EXPECT_EQ(to3, (Bytes{0x03, 0xf4, 0xf5}));
  EXPECT_EQ(csum::csum_fold16(s), 0xf8f4);
}

// The same example as the L4 region of a "device" copy: the field (2 zero bytes after the 8
// example bytes, csum_start 3, csum_offset 8) gets ~0xddf2 = 0x220d; the 3 bytes before
// csum_start are copied, not summed.
TEST(CsumCopyPacket, CopyAndChecksumHelpRfc1071Example) {
  Bytes b = {0xde, 0xad, 0xbe, 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7, 0x00, 0x00};
  Packet p = pieced(b, {4, 2, 5}, true);
  Bytes to(b.size(), 0xAA);
  ASSERT_EQ(core::copy_and_checksum_help(p, to, 3, 8), PacketError::Ok);
  Bytes want = b;
  want[11] = 0x22;
  want[12] = 0x0d;
  EXPECT_EQ(to, want);
}

// A region whose sum folds to 0xffff (ff ff + field 00 00): the checksum is 0. TCP segments
// keep 0x0000 (tcp_gso_segment), UDP and skb_checksum_help write 0xFFFF (RFC 768, C-14).
TEST(CsumCopyPacket, SumFoldingToZeroZeroAsFfffOrNot) {
  const Bytes b = {0x45, 0xff, 0xff, 0x00, 0x00};
  for (bool ffff : {true, false}) {
    Packet p = pieced(b, {2, 1}, false);
    Bytes to(b.size());
    ASSERT_EQ(core::copy_and_checksum_help(p, to, 1, 2, ffff), PacketError::Ok);
    const std::uint8_t v = ffff ? 0xff : 0x00;
    EXPECT_EQ(to, (Bytes{0x45, 0xff, 0xff, v, v})) << ffff;
  }
}

// Nothing is written when the range or the field does not fit (same bounds as
// checksum_help_bytes / copy_bits).
TEST(CsumCopyPacket, OutOfRangeWritesNothing) {
  const Bytes b = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  Packet p = pieced(b, {3, 3}, true);
  Bytes to(10, 0xAA);
  const Bytes untouched = to;
  EXPECT_EQ(core::copy_and_checksum_help(p, to, 10, 0), PacketError::OutOfRange);  // start at end
  EXPECT_EQ(core::copy_and_checksum_help(p, to, 8, 1), PacketError::OutOfRange);   // field past end
  EXPECT_EQ(core::copy_and_checksum_help(p, to, 2, 9), PacketError::OutOfRange);
  Bytes shorter(9, 0xAA);
  EXPECT_EQ(core::copy_and_checksum_help(p, shorter, 0, 0), PacketError::OutOfRange);  // != len
  EXPECT_EQ(to, untouched);
  EXPECT_EQ(shorter, Bytes(9, 0xAA));
  wsum s = 7;
  Bytes three(3, 0xAA);
  EXPECT_EQ(core::copy_and_csum_bits(p, 8, three, s), PacketError::OutOfRange);
  EXPECT_EQ(s, 0u);
  EXPECT_EQ(three, Bytes(3, 0xAA));
  EXPECT_EQ(core::copy_and_csum_bits(p, 11, {}, s), PacketError::OutOfRange);
  EXPECT_EQ(core::copy_and_csum_bits(p, 10, {}, s), PacketError::Ok);
  EXPECT_EQ(s, 0u);
  EXPECT_EQ(core::copy_and_checksum_help(p, to, 8, 0), PacketError::Ok);  // the last 2 bytes
}

// Random packets up to 9000 bytes, random piece cuts (odd and even, 1-byte pieces, fragments
// at varying source alignment, frag_list tails), random destination alignment, random copy
// ranges and checksum positions: the copy equals the flattened bytes, the sum (and
// Packet::checksum's over the same range) equals the byte-wise reference over them, and
// copy_and_checksum_help writes exactly what copy_bits + checksum_help_bytes write.
TEST(CsumCopyPacket, RandomPiecesMatchFlattenedReferenceAndTwoPass) {
  std::mt19937 rng(0x16c0);
  for (int iter = 0; iter < 3000; ++iter) {
    const std::size_t len = iter < 64 ? std::size_t(iter) + 2 : 2 + rng() % 8999;
    Bytes b(len);
    const int pattern = iter % 3;
    for (auto& x : b) x = pattern == 0 ? std::uint8_t(rng()) : pattern == 1 ? 0xff
                          : (rng() % 4 ? 0xff : std::uint8_t(rng()));
    std::vector<std::size_t> cuts;
    std::size_t left = len;
    while (left && cuts.size() < 17) {
      const std::size_t c = rng() % 3 == 0 ? 1 + rng() % 3 : 1 + rng() % std::min<std::size_t>(left, 1500);
      cuts.push_back(c);
      left -= std::min(c, left);
    }
    Packet p = pieced(b, cuts, rng() % 2);
    ASSERT_EQ(p.len(), len);
    const Bytes flat = p.to_bytes();
    ASSERT_EQ(flat, b);

    // copy_and_csum_bits over a random range into a buffer at a random alignment.
    const std::size_t off = rng() % (len + 1);
    const std::size_t n = rng() % (len - off + 1);
    const std::size_t dalign = rng() % 64;
    Bytes dst(dalign + n + 64, 0xA5);
    wsum s = 0;
    ASSERT_EQ(core::copy_and_csum_bits(p, off, {dst.data() + dalign, n}, s), PacketError::Ok);
    ASSERT_EQ(std::memcmp(dst.data() + dalign, b.data() + off, n), 0) << iter;
    ASSERT_EQ(csum::csum_fold16(s), csum::csum_fold16(reference_sum(b.data() + off, n)))
        << "iter " << iter << " off " << off << " n " << n;
    // Packet::checksum (skb_checksum) over the same range: its head-only fast path (the range
    // inside the head) and its walk over the pieces give the reference sum too.
    ASSERT_EQ(csum::csum_fold16(p.checksum(off, n)), csum::csum_fold16(reference_sum(b.data() + off, n)))
        << "Packet::checksum, iter " << iter << " off " << off << " n " << n << " headlen " << p.headlen();
    for (std::size_t i = 0; i < dalign; ++i) ASSERT_EQ(dst[i], 0xA5);
    for (std::size_t i = dalign + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xA5);

    // copy_and_checksum_help vs the two-pass path, odd and even csum_start.
    const std::size_t start = rng() % (len - 1);
    const std::size_t field = (rng() % ((len - start - 2) / 2 + 1)) * 2 + (rng() % 8 == 0 && len - start > 2 ? 1 : 0);
    const bool ffff = rng() % 2;
    Bytes one(dalign + len, 0x5A), two(len, 0x5A);
    const std::span<std::uint8_t> one_s(one.data() + dalign, len);
    ASSERT_EQ(core::copy_and_checksum_help(p, one_s, start, std::min(field, len - start - 2), ffff),
              PacketError::Ok);
    ASSERT_EQ(p.copy_bits(0, two), PacketError::Ok);
    ASSERT_EQ(core::checksum_help_bytes(two, start, std::min(field, len - start - 2), ffff),
              PacketError::Ok);
    ASSERT_TRUE(std::equal(one_s.begin(), one_s.end(), two.begin()))
        << "iter " << iter << " len " << len << " start " << start;
  }
}

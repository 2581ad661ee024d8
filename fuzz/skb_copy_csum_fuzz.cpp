// Fuzz: copy-and-checksum in one pass (copy_and_csum_bits, copy_and_checksum_help, and
// csum_partial_copy chained over pieces at odd/even offsets with csum_block_add) must equal
// the two-pass result — copy_bits / memcpy followed by a sum (byte-wise reference kernel) or
// checksum_help_bytes over the copy. Aborts on any mismatch; exact-size heap blocks let ASan
// catch a read or write past a piece.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/core/skb_copy_csum.hpp"

using namespace ofld;
using csum::wsum;

namespace {
[[noreturn]] void fail(const char* what, std::size_t len) {
  std::fprintf(stderr, "skb_copy_csum mismatch: %s (len %zu)\n", what, len);
  std::abort();
}
}  // namespace

// Input: 8 control bytes (piece cuts, offsets, flags), then the packet bytes.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  std::uint8_t c[8];
  std::memcpy(c, data, 8);
  data += 8;
  size -= 8;
  const std::vector<std::uint8_t> bytes(data, data + size);

  // 1. csum_partial_copy over consecutive pieces (lengths from the control bytes, odd ones
  //    included), each placed at its offset with csum_block_add, into a dst at alignment c[7].
  {
    std::vector<std::uint8_t> dst((c[7] & 63) + size);
    std::uint8_t* d = dst.data() + (c[7] & 63);
    wsum sum = 0;
    std::size_t at = 0, k = 0;
    while (at < size) {
      const std::size_t n = std::min<std::size_t>(size - at, 1 + c[k++ % 6] % 97);
      sum = csum::csum_block_add(sum, csum::csum_partial_copy(d + at, data + at, n), at);
      at += n;
    }
    const wsum ref = csum::csum_partial_with(csum::Kernel::Reference, data, size, 0);
    if (csum::csum_fold16(sum) != csum::csum_fold16(ref)) fail("pieces fold16", size);
    if (size && std::memcmp(d, data, size) != 0) fail("pieces bytes", size);
  }
  if (size < 2) return 0;

  // 2. A packet: head, fragments each in its own exactly sized buffer, a frag_list tail.
  std::size_t at = std::min<std::size_t>(size, c[0] % 80);
  core::Packet p = core::Packet::from_bytes({data, at});
  for (int i = 1; i < 5 && at < size; ++i) {
    const std::size_t n = std::min<std::size_t>(size - at, 1 + c[i] * 7u % 1501u);
    std::vector<std::uint8_t> piece(data + at, data + at + n);
    if (p.add_frag(core::Buffer::make(piece), 0, n) != core::PacketError::Ok) std::abort();
    at += n;
  }
  if (at < size) p.add_to_frag_list(core::Packet::from_bytes_frags({data + at, size - at}, c[5] & 1, 0));
  if (p.len() != size) std::abort();

  const std::size_t off = (c[5] * 131u + c[6]) % (size + 1);
  const std::size_t n = (c[6] * 257u + c[1]) % (size - off + 1);
  std::vector<std::uint8_t> to(n), flat(size);
  wsum s = 0;
  if (core::copy_and_csum_bits(p, off, to, s) != core::PacketError::Ok) fail("bits error", size);
  if (n && std::memcmp(to.data(), data + off, n) != 0) fail("bits bytes", size);
  if (csum::csum_fold16(s) !=
      csum::csum_fold16(csum::csum_partial_with(csum::Kernel::Reference, data + off, n, 0)))
    fail("bits fold16", size);

  const std::size_t start = (c[2] * 53u + c[3]) % (size - 1);
  const std::size_t field = (c[4] * 3u) % (size - start - 1);  // field + 2 <= size - start
  const bool ffff = c[7] & 0x80;
  std::vector<std::uint8_t> one(size), two(size);
  if (core::copy_and_checksum_help(p, one, start, field, ffff) != core::PacketError::Ok)
    fail("help error", size);
  if (p.copy_bits(0, two) != core::PacketError::Ok ||
      core::checksum_help_bytes(two, start, field, ffff) != core::PacketError::Ok)
    std::abort();
  if (one != two) fail("help bytes", size);
  return 0;
}

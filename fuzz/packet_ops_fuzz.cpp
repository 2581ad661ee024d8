// libFuzzer target: random sequences of Packet operations (push/pull/trim/add_frag/linearize/
// header/copy_bits/clone/checksum_help) on a random non-linear packet.
// Invariants: no crash or over-read (run under ASan); the packet's bytes always equal a plain
// std::vector model; while the state is CHECKSUM_COMPLETE its sum equals a recomputation over
// the bytes (independent RFC 1071 loop below), i.e. the C-16..C-20 bookkeeping is exact.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ofld/core/packet.hpp"

using namespace ofld::core;
using Bytes = std::vector<std::uint8_t>;

namespace {

struct Input {
  const std::uint8_t* d;
  std::size_t n;
  std::size_t i = 0;
  bool empty() const { return i >= n; }
  std::uint8_t u8() { return i < n ? d[i++] : 0; }
  std::uint16_t u16() { return std::uint16_t(u8() | (u8() << 8)); }
};

std::uint16_t ref16(const Bytes& b) {
  std::uint64_t acc = 0;
  for (std::size_t i = 0; i + 1 < b.size(); i += 2) acc += (std::uint32_t(b[i]) << 8) | b[i + 1];
  if (b.size() & 1) acc += std::uint32_t(b.back()) << 8;
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return std::uint16_t(acc);
}
std::uint16_t fold(std::uint32_t w) {
  std::uint64_t a = w;
  while (a >> 16) a = (a & 0xffff) + (a >> 16);
  return std::uint16_t(a);
}
bool ones_eq(std::uint16_t a, std::uint16_t b) {
  return (a == 0xffff ? 0 : a) == (b == 0xffff ? 0 : b);
}
[[noreturn]] void fail() { std::abort(); }
void check(bool ok) {
  if (!ok) fail();
}

Bytes take(Input& in, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = in.u8();
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in{data, size};
  std::size_t total = in.u16() % 1500;
  std::size_t headlen = total ? in.u16() % (total + 1) : 0;
  std::size_t fragsz = in.u8();
  Bytes model = take(in, total);
  Packet p = Packet::from_bytes_frags(model, headlen, fragsz, in.u8() % 64);
  p.csum = CsumComplete{ref16(model)};

  for (int step = 0; step < 64 && !in.empty(); ++step) {
    std::uint8_t op = in.u8() % 10;
    switch (op) {
      case 0: {  // push with bytes, COMPLETE-aware
        Bytes b = take(in, in.u8() % 200);
        push_rcsum(p, b);
        model.insert(model.begin(), b.begin(), b.end());
        break;
      }
      case 1: {  // pull with rcsum (may cross into fragments)
        std::size_t n = in.u16() % 400;
        std::uint8_t* r = pull_rcsum(p, n);
        if (n <= model.size()) {
          check(r != nullptr);
          model.erase(model.begin(), model.begin() + std::ptrdiff_t(n));
        } else {
          check(r == nullptr);
        }
        break;
      }
      case 2: {  // trim with rcsum
        std::size_t n = in.u16() % 2000;
        if (trim_rcsum(p, n) == PacketError::Ok && n < model.size()) model.resize(n);
        break;
      }
      case 3: {  // add a fragment (a slice of a fresh buffer)
        Bytes b = take(in, in.u8());
        std::size_t off = b.empty() ? 0 : in.u8() % b.size();
        std::size_t len = b.size() - off;
        auto buf = Buffer::make(b);
        if (p.is_linear() || p.frag_list().empty()) {
          std::size_t at = model.size();
          check(p.add_frag(buf, off, len) == PacketError::Ok);
          if (auto* c = std::get_if<CsumComplete>(&p.csum))
            c->csum = ofld::csum::csum_block_add(
                c->csum, ofld::csum::csum_partial(b.data() + off, len), at);
          model.insert(model.end(), b.begin() + std::ptrdiff_t(off), b.end());
        }
        check(p.add_frag(buf, b.size() + 1, 0) == PacketError::OutOfRange);
        break;
      }
      case 4:
        p.linearize();
        check(p.is_linear());
        break;
      case 5: {  // header view
        std::size_t off = in.u16() % 1600, n = in.u8();
        auto h = p.header(off, n);
        if (off + n <= model.size()) {
          check(h.size() == n);
          for (std::size_t k = 0; k < n; ++k) check(h[k] == model[off + k]);
        } else {
          check(h.empty());
        }
        break;
      }
      case 6: {  // copy_bits
        std::size_t off = in.u16() % 1600;
        Bytes dst(in.u8());
        PacketError e = p.copy_bits(off, dst);
        if (off + dst.size() <= model.size()) {
          check(e == PacketError::Ok);
          for (std::size_t k = 0; k < dst.size(); ++k) check(dst[k] == model[off + k]);
        } else {
          check(e == PacketError::OutOfRange);
        }
        break;
      }
      case 7: {  // clone / copy, then keep one
        Packet c = (in.u8() & 1) ? p.clone() : p.copy();
        check(c.to_bytes() == model);
        if (in.u8() & 1) p = std::move(c);
        break;
      }
      case 8: {  // checksum_help on a random PARTIAL
        int start = int(in.u16() % 1600);
        std::uint16_t coff = std::uint16_t(in.u16() % 1600);
        p.set_partial(start, coff);
        if (in.u8() & 1) p.gso.size = 100;
        PacketError e = checksum_help(p);
        if (p.is_gso()) {
          check(e == PacketError::IsGso);
          p.gso.size = 0;
        } else if (e == PacketError::Ok) {
          Bytes now = p.to_bytes();
          std::size_t field = std::size_t(start) + coff;
          check(field + 2 <= now.size());
          for (std::size_t k = 0; k < now.size(); ++k)
            if (k != field && k != field + 1) check(now[k] == model[k]);
          // C-6/C-29: with the old field value f0 acting as the seed, a receiver's
          // sum seed + region(after) is -0 (checked for an even field position in the region)
          if (((field - std::size_t(start)) & 1) == 0) {
            std::uint16_t f0 = std::uint16_t((model[field] << 8) | model[field + 1]);
            Bytes region(now.begin() + start, now.end());
            check(ones_eq(fold(std::uint32_t(ref16(region)) + f0), 0xffff));
          }
          model = now;
        }
        p.csum = CsumComplete{ref16(model)};  // continue with a fresh COMPLETE
        break;
      }
      case 9: {  // push/pull with odd sizes via the plain ops, then re-establish COMPLETE
        std::size_t n = in.u8() % 33;
        p.push(n);
        Bytes b = take(in, n);
        for (std::size_t k = 0; k < n; ++k) p.data()[k] = b[k];
        model.insert(model.begin(), b.begin(), b.end());
        p.csum = CsumComplete{ref16(model)};
        break;
      }
    }
    check(p.len() == model.size());
    check(p.to_bytes() == model);
    if (auto* c = std::get_if<CsumComplete>(&p.csum)) check(ones_eq(fold(c->csum), ref16(model)));
  }
  return 0;
}

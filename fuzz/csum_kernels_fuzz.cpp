// Fuzz: arbitrary bytes, seed and start offset → every supported kernel and copy variant
// must equal the byte-wise reference; abort on any mismatch (A3, A4, C-13).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ofld/core/csum.hpp"

using namespace ofld::csum;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  wsum seed;
  std::memcpy(&seed, data, 4);
  std::size_t off = data[4] & 63;  // start offset in the working buffer (alignment)
  data += 5;
  size -= 5;
  // Copy into an exactly sized heap block at the chosen offset so ASan catches over-reads.
  std::vector<std::uint8_t> src(off + size), dst(off + size);
  if (size) std::memcpy(src.data() + off, data, size);
  const std::uint8_t* p = src.data() + off;
  wsum ref = csum_partial_with(Kernel::Reference, p, size, seed);
  for (Kernel k : {Kernel::Scalar64, Kernel::SSE, Kernel::AVX2, Kernel::AVX512}) {
    if (!kernel_supported(k)) continue;
    if (csum_partial_with(k, p, size, seed) != ref) {
      std::fprintf(stderr, "csum mismatch: kernel %d len %zu off %zu\n", int(k), size, off);
      std::abort();
    }
  }
  for (Kernel k : {Kernel::Reference, Kernel::Scalar64, Kernel::SSE, Kernel::AVX2,
                   Kernel::AVX512}) {
    if (!kernel_supported(k)) continue;
    if (!dst.empty()) std::memset(dst.data(), 0, dst.size());
    std::size_t doff = (off * 5) % (off + 1);  // a different alignment for dst, <= off
    wsum got = csum_partial_copy_with(k, dst.data() + doff, p, size, seed);
    if (got != ref || (size && std::memcmp(dst.data() + doff, p, size) != 0)) {
      std::fprintf(stderr, "copy+csum mismatch: kernel %d len %zu off %zu\n", int(k), size, off);
      std::abort();
    }
  }
  // The dispatched entry points promise the very same wsum as every kernel (csum.hpp).
  if (csum_partial(p, size, seed) != ref) std::abort();
  if (!dst.empty()) std::memset(dst.data(), 0, dst.size());
  if (csum_partial_copy(dst.data(), p, size, seed) != ref ||
      (size && std::memcmp(dst.data(), p, size) != 0))
    std::abort();
  return 0;
}

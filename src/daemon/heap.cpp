#include "ofld/daemon/heap.hpp"

#include <cstddef>  // <features.h>: __GLIBC__

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ofld::daemon {

void tune_process_heap() noexcept {
#if defined(__GLIBC__)
  ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 10);
  ::mallopt(M_MXFAST, 0);
#endif
}

}  // namespace ofld::daemon

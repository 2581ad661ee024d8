// ofld/daemon/heap.hpp — process-wide glibc malloc settings of the endpoint (docs/evpn.md
// "Scale"). A program sets them once, before it starts a thread; a library never does.
#pragma once

namespace ofld::daemon {

/// Sets glibc malloc for a long-running endpoint whose control threads (gRPC's, the EVPN
/// route reader's, the control socket's) take and free megabytes in bursts while the data path
/// reuses its buffers. What each setting is for:
/// - M_MMAP_THRESHOLD 4 MiB: packet buffers (64 KiB and up) come from the heap, never from an
///   mmap/munmap of their own.
/// - M_TRIM_THRESHOLD 256 KiB: a thread arena's free top goes back to the kernel at the free
///   that leaves it above this. Setting it also stops glibc from raising it after a large free.
/// - M_MXFAST 0 (no fastbins): a free merges with its free neighbours at once. malloc_trim
///   gives back the free pages in every arena's bins, but it first merges the fastbins, and a
///   free region that only fastbin chunks kept apart from a thread arena's top becomes that top,
///   which malloc_trim never trims (glibc trims the main arena's top only): measured, 3.9 MB
///   of an 8 MB burst stayed resident after the frees and after malloc_trim; none without
///   fastbins. The per-thread cache (tcache) still serves repeated small sizes.
/// No-op without glibc.
void tune_process_heap() noexcept;

}  // namespace ofld::daemon

// The endpoint's heap settings (ofld/daemon/heap.hpp, docs/evpn.md "Scale"): the memory a
// control thread took in a burst of small allocations is no longer resident once the burst is
// freed and malloc_trim has run, as the EVPN client runs it after a mass withdrawal. The burst
// frees its last few small chunks first (the per-thread cache takes 7, the rest would go to
// fastbins), then the rest, which merges into one free region below them: with fastbins that
// region joins the thread arena's top when malloc_trim merges them, and glibc never trims a
// thread arena's top there. Each case runs in a child process, the settings being process-wide.
// The same burst with fastbins turned back on is measured beside it and reported.
#include <gtest/gtest.h>

#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../kernel/proc_util.hpp"
#include "ofld/daemon/heap.hpp"

namespace {

// kB of a control thread's 8 MB burst still resident after its frees and a malloc_trim, in a
// child process with tune_process_heap(), and with fastbins turned back on after it (glibc's
// default M_MXFAST, 64 * sizeof(size_t) / 4 bytes) when `fastbins`; nullopt when the child failed.
std::optional<long> burst_residue_kb(bool fastbins) {
  int fd[2];
  if (::pipe(fd) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fd[0]);
    ofld::daemon::tune_process_heap();
    if (fastbins) ::mallopt(M_MXFAST, 64 * int(sizeof(std::size_t)) / 4);
    const long before = ofld::ktest::rss_anon_kb(::getpid());
    std::thread t([] {
      std::vector<void*> burst, last;
      for (int i = 0; i < 40000; ++i) burst.push_back(std::malloc(200));
      for (int i = 0; i < 16; ++i) last.push_back(std::malloc(48));
      for (void* p : last) std::free(p);
      for (void* p : burst) std::free(p);
    });
    t.join();
    malloc_trim(0);
    const long residue = ofld::ktest::rss_anon_kb(::getpid()) - before;
    const bool ok = ::write(fd[1], &residue, sizeof residue) == sizeof residue;
    ::_exit(ok ? 0 : 1);
  }
  ::close(fd[1]);
  long residue = 0;
  const bool got = pid > 0 && ::read(fd[0], &residue, sizeof residue) == sizeof residue;
  ::close(fd[0]);
  int status = 0;
  if (pid > 0) ::waitpid(pid, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return residue;
}

TEST(HeapSettings, BurstOfAControlThreadIsNotResidentAfterItsFreesAndATrim) {
  if (ofld::ktest::kSanitized) GTEST_SKIP() << "the sanitizer's allocator replaces glibc malloc";
  const auto tuned = burst_residue_kb(false), with_fastbins = burst_residue_kb(true);
  ASSERT_TRUE(tuned && with_fastbins) << "a child process failed";
  RecordProperty("residue_kb", int(*tuned));
  RecordProperty("residue_kb_with_fastbins", int(*with_fastbins));
  // 8 MB taken (40,000 chunks of 208 bytes); at most 1 MiB (an arena's first heap, partial
  // pages, the thread's stack) may stay. With fastbins (measured: 3,860 kB) it is reported,
  // not asserted: that is glibc's behaviour, not ours.
  EXPECT_LE(*tuned, 1024) << "with fastbins: " << *with_fastbins << " kB";
}

}  // namespace

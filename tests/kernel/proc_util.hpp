// Child processes for the kernel tests: start a command with its output in a log file, stop it
// with a signal (bounded wait, then SIGKILL), read a log back, wait for what it should do.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace ofld::ktest {

/// True in an AddressSanitizer build (GCC defines __SANITIZE_ADDRESS__; clang has the feature
/// test): endpoints run several times slower, and freed memory stays in the sanitizer's
/// quarantine, so timing and RSS bounds are not asserted there.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

/// RssAnon of a process (kB, /proc/PID/status): its heap, thread arenas and stacks, not the
/// mapped binary; -1 when it cannot be read.
inline long rss_anon_kb(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("RssAnon:", 0) == 0) return std::atol(line.c_str() + 8);
  return -1;
}

/// fork + execvp `argv`, stdout and stderr to `log`. Returns the child's pid (exit 127 when
/// the program cannot be run).
inline pid_t spawn(const std::vector<std::string>& argv, const std::string& log) {
  pid_t pid = ::fork();
  if (pid == 0) {
    FILE* f = std::fopen(log.c_str(), "w");
    if (f) ::dup2(fileno(f), 1), ::dup2(fileno(f), 2);
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execvp(a[0], a.data());
    ::_exit(127);
  }
  return pid;
}

/// Send `sig`, wait up to 5 s for the exit, then SIGKILL. Returns the exit status, or -1 when
/// it did not exit by itself (or pid <= 0). pid becomes -1.
inline int stop(pid_t& pid, int sig = SIGTERM) {
  if (pid <= 0) return -1;
  ::kill(pid, sig);
  int st = 0;
  for (int i = 0; i < 500; ++i) {
    if (::waitpid(pid, &st, WNOHANG) == pid) {
      pid = -1;
      return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &st, 0);
  pid = -1;
  return -1;
}

/// The whole file (empty when it cannot be read).
inline std::string slurp(const std::string& p) {
  std::ifstream f(p);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

/// Call `f` every `poll` until it returns true or `limit` has passed, then once more; true
/// when it did.
template <class F>
bool wait_for(F&& f, std::chrono::milliseconds limit,
              std::chrono::milliseconds poll = std::chrono::milliseconds(50)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(poll);
  }
  return f();
}

}  // namespace ofld::ktest

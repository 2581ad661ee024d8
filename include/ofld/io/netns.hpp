// ofld/io/netns.hpp — RAII Linux network namespaces, running code and commands inside them.
//
// A Netns is created with `ip netns add <name>` (so `ip netns exec` works and sysfs is
// remounted for commands run inside) and deleted with `ip netns del <name>` by the
// destructor. Interfaces that live in it (veth, bridge, vxlan) die with it; sockets and TAP
// fds opened inside keep the namespace alive until they are closed, so close them first.
//
// Code runs inside with Netns::run(fn): fn executes on a dedicated std::thread that calls
// setns(CLONE_NEWNET) first (setns changes only the calling thread). File descriptors that
// fn opens (TAP, AF_PACKET, ioctl sockets) stay bound to the namespace and may be used from
// any thread afterwards.
//
// Errors are values (Result / Status, ofld/io/result.hpp): `error` names the failing step,
// including a failed command's argv and stderr; `skipped` says the facility is not available
// here (not root, `ip` missing, a kernel feature missing) so tests can GTEST_SKIP() with it.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ofld/io/result.hpp"
#include "ofld/io/unique_fd.hpp"

namespace ofld::io {

/// Output of a finished command.
struct CmdResult {
  int exit_code = -1;  ///< exit status, or 128+signal if killed
  std::string out;     ///< captured stdout
  std::string err;     ///< captured stderr
};

/// Run argv[0] (searched in PATH) with stdin = /dev/null, capture stdout/stderr, wait at most
/// `timeout` (then SIGKILL). Error if it cannot be spawned or times out; a non-zero exit is
/// NOT an error here (see check_command). Uses posix_spawn, safe in threaded programs.
Result<CmdResult> run_command(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// As run_command, but a non-zero exit becomes an error "`argv...` exited N: <stderr>".
Result<CmdResult> check_command(const std::vector<std::string>& argv,
                                std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// "skipped: ..." if the process is not root or `ip` cannot be run; ok otherwise.
Status netns_available();

/// An owned network namespace. Move-only; the destructor deletes it.
class Netns {
 public:
  /// Create a namespace named "<prefix>-<pid>-<n>" (n counts per process). Skipped when
  /// not root or `ip netns` is unavailable (or creation is refused). The first call in a
  /// process also deletes "ofld*-<pid>-<n>" namespaces whose <pid> no longer exists.
  static Result<Netns> create(std::string_view prefix = "ofld");

  Netns(Netns&& o) noexcept;
  Netns& operator=(Netns&& o) noexcept;
  Netns(const Netns&) = delete;
  Netns& operator=(const Netns&) = delete;
  ~Netns();

  const std::string& name() const noexcept { return name_; }
  /// fd of /run/netns/<name> (for setns), -1 after move.
  int fd() const noexcept { return fd_.get(); }

  /// Run `fn` on a new thread that first enters this namespace; returns fn's value. An
  /// exception thrown by fn, or a failed setns, becomes an error. fn returning Result<U> or
  /// Status is flattened (the Result is returned as is).
  template <class F>
  auto run(F&& fn) const;

  /// Run `ip netns exec <name> argv...`; non-zero exit → error with the command's stderr.
  Result<CmdResult> exec(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  /// exec({"ip", args...}).
  Status ip(const std::vector<std::string>& args) const;
  /// Write `value` into a file inside the namespace's view (/proc/sys/net/..., or
  /// /sys/class/net/<dev>/... — `ip netns exec` remounts /sys for the namespace).
  Status write_file(const std::string& path, const std::string& value) const;
  /// Read a file as seen inside the namespace (trailing newline stripped).
  Result<std::string> read_file(const std::string& path) const;
  /// sysctl -w key=value inside the namespace.
  Status sysctl(const std::string& key, const std::string& value) const;

 private:
  Netns(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
  Status enter() const;  // setns on the calling thread
  void destroy() noexcept;

  std::string name_;
  UniqueFd fd_;
};

namespace detail {
template <class T>
struct is_result : std::false_type {};
template <class U>
struct is_result<Result<U>> : std::true_type {};
}  // namespace detail

template <class F>
auto Netns::run(F&& fn) const {
  using R = std::invoke_result_t<F&>;
  if constexpr (detail::is_result<R>::value) {
    std::optional<R> out;
    std::string err;
    std::thread t([&] {
      Status s = enter();
      if (!s) {
        err = s.message();
        return;
      }
      try {
        out.emplace(fn());
      } catch (const std::exception& e) {
        err = std::string("exception in namespace ") + name_ + ": " + e.what();
      } catch (...) {
        err = "unknown exception in namespace " + name_;
      }
    });
    t.join();
    if (!out) return R::error(err);
    return std::move(*out);
  } else if constexpr (std::is_void_v<R>) {
    return run([&] {
      fn();
      return ok_status();
    });
  } else {
    return run([&]() -> Result<R> { return Result<R>(fn()); });
  }
}

}  // namespace ofld::io

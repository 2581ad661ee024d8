// ofld/io/unique_fd.hpp — a move-only owner of one file descriptor.
//
// Owns at most one descriptor (a negative value means none) and close(2)s it when destroyed,
// reset or overwritten by a move. Classes that hold descriptors keep a UniqueFd member and
// default their moves, so the moved-from object owns nothing and closes nothing. close(2)'s
// result is ignored (Linux releases the descriptor even when close reports an error).
#pragma once

#include <unistd.h>

#include <utility>

namespace ofld::io {

class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  /// Takes ownership of `fd` (negative: owns nothing).
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  /// The descriptor, or -1 when none is owned; ownership stays here.
  int get() const noexcept { return fd_; }
  /// True when a descriptor is owned.
  explicit operator bool() const noexcept { return fd_ >= 0; }
  /// Gives up ownership without closing; returns the descriptor (or -1).
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  /// Closes the owned descriptor, if any, and takes ownership of `fd` (default: none).
  void reset(int fd = -1) noexcept {
    const int old = std::exchange(fd_, fd);
    if (old >= 0 && old != fd) ::close(old);
  }

 private:
  int fd_ = -1;
};

}  // namespace ofld::io

// ofld/io/result.hpp — the I/O layer's outcome type: a value, an error, or "skipped".
//
// Used by every io facility (TAP/TUN, sockets, pcap, netns) and the kernel oracles above it.
// `error` names the failing step (e.g. the errno text of a refused ioctl, a failed command's
// argv and stderr); `skipped` says the facility is not available here (not root, `ip`
// missing, a kernel feature missing) so tests can GTEST_SKIP() with the message.
// (Moved out of ofld/io/netns.hpp, which includes this header, so existing users compile.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ofld::io {

/// Outcome of an io / oracle operation: a value, an error, or "skipped: <reason>".
template <class T>
class Result {
 public:
  enum class Kind : std::uint8_t { Ok, Error, Skipped };

  Result(T value) : kind_(Kind::Ok), value_(std::move(value)) {}  // NOLINT(implicit)
  static Result error(std::string msg) { return Result(Kind::Error, std::move(msg)); }
  static Result skipped(std::string reason) { return Result(Kind::Skipped, std::move(reason)); }
  /// Carry an error/skip of another Result type over (must not be ok()).
  template <class U>
  static Result from(const Result<U>& other) {
    return Result(other.is_skipped() ? Kind::Skipped : Kind::Error, other.message());
  }

  bool ok() const noexcept { return kind_ == Kind::Ok; }
  bool is_error() const noexcept { return kind_ == Kind::Error; }
  bool is_skipped() const noexcept { return kind_ == Kind::Skipped; }
  explicit operator bool() const noexcept { return ok(); }
  Kind kind() const noexcept { return kind_; }
  /// Error text, or the skip reason (without the "skipped: " prefix); empty when ok().
  const std::string& message() const noexcept { return msg_; }
  /// "error: <msg>" / "skipped: <msg>" / "ok".
  std::string describe() const {
    return ok() ? std::string("ok") : (is_skipped() ? "skipped: " : "error: ") + msg_;
  }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Result(Kind k, std::string msg) : kind_(k), msg_(std::move(msg)) {}
  Kind kind_;
  std::optional<T> value_;
  std::string msg_;
};

/// Result without a value.
using Status = Result<std::monostate>;
inline Status ok_status() { return Status(std::monostate{}); }

}  // namespace ofld::io

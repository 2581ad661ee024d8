// ofld/wire/view.hpp — common base of the header views.
//
// A view is a (pointer, length) pair over a header's bytes. `B` is `const std::uint8_t`
// (read-only view) or `std::uint8_t` (mutable view: setters are enabled). A view is only
// obtained from the header's static parse(), which checks that every accessor stays inside the
// span; after that no accessor can fail or read past the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "ofld/wire/bytes.hpp"

namespace ofld::wire {

template <class B>
concept ByteT = std::is_same_v<std::remove_const_t<B>, std::uint8_t>;

template <ByteT B>
class ViewBase {
 public:
  static constexpr bool kMutable = !std::is_const_v<B>;
  /// The header bytes (exactly header length).
  constexpr std::span<B> header() const noexcept { return {p_, len_}; }
  /// Header length in bytes.
  constexpr std::size_t header_len() const noexcept { return len_; }
  constexpr B* data() const noexcept { return p_; }

 protected:
  constexpr ViewBase(B* p, std::size_t len) noexcept : p_(p), len_(len) {}
  constexpr std::uint8_t u8(std::size_t o) const noexcept { return p_[o]; }
  constexpr std::uint16_t be16(std::size_t o) const noexcept { return load_be16(p_ + o); }
  constexpr std::uint32_t be24(std::size_t o) const noexcept { return load_be24(p_ + o); }
  constexpr std::uint32_t be32(std::size_t o) const noexcept { return load_be32(p_ + o); }
  constexpr void w8(std::size_t o, std::uint8_t v) const noexcept requires kMutable { p_[o] = v; }
  constexpr void w16(std::size_t o, std::uint16_t v) const noexcept requires kMutable {
    store_be16(p_ + o, v);
  }
  constexpr void w24(std::size_t o, std::uint32_t v) const noexcept requires kMutable {
    store_be24(p_ + o, v);
  }
  constexpr void w32(std::size_t o, std::uint32_t v) const noexcept requires kMutable {
    store_be32(p_ + o, v);
  }
  B* p_;
  std::size_t len_;
};

}  // namespace ofld::wire

// The list of encapsulations (EncapConfig's alternatives, each described in its own
// encap_*.cpp) and the value helpers their settings rows share with the daemon's.
#include "ofld/tunnel/encap_kind.hpp"

#include <array>
#include <charconv>
#include <utility>

#include "ofld/tunnel/encapsulation.hpp"

namespace ofld::tunnel {

namespace {
template <std::size_t... I>
std::array<const EncapKind*, sizeof...(I)> kinds_of(std::index_sequence<I...>) {
  return {&std::variant_alternative_t<I, EncapConfig>::kind()...};
}
}  // namespace

std::span<const EncapKind* const> encap_kinds() noexcept {
  static const auto k = kinds_of(std::make_index_sequence<std::variant_size_v<EncapConfig>>());
  return k;
}

const EncapKind& kind_of(const TunnelConfig& t) noexcept { return *encap_kinds()[t.encap.index()]; }

const EncapKind* find_kind(std::string_view word) noexcept {
  for (const EncapKind* k : encap_kinds())
    for (std::string_view w : k->words)
      if (w == word) return k;
  return nullptr;
}

std::string mode_words_text(std::string_view last_sep) {
  std::vector<std::string_view> all;
  for (const EncapKind* k : encap_kinds()) all.insert(all.end(), k->words.begin(), k->words.end());
  std::string s;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i) s += i + 1 == all.size() ? std::string(last_sep) : std::string(", ");
    s += all[i];
  }
  return s;
}

namespace conf {

std::optional<std::uint64_t> number(const std::string& s, std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::string bad_number(const std::string& key, const std::string& val, std::uint64_t lo, std::uint64_t hi) {
  return key + ": '" + val + "' is not a number in " + std::to_string(lo) + ".." + std::to_string(hi);
}

std::optional<std::string> num_arg(const std::string& k, const Args& v, std::uint64_t lo, std::uint64_t hi,
                                   std::uint64_t& out) {
  auto n = number(v[0], lo, hi);
  if (!n) return bad_number(k, v[0], lo, hi);
  out = *n;
  return std::nullopt;
}

std::optional<std::string> addr_arg(const std::string& k, const std::string& a, IpAddr& out) {
  auto ip = IpAddr::parse(a);
  if (!ip) return k + ": '" + a + "' is not an IPv4 or IPv6 address";
  out = *ip;
  return std::nullopt;
}

std::optional<std::uint64_t> c_number(const std::string& s, int base, std::uint64_t hi) {
  std::string_view d = s;
  if ((base == 16 || base == 0) && d.size() > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
    d.remove_prefix(2);
    base = 16;
  } else if (base == 0) {
    base = d.size() > 1 && d[0] == '0' ? 8 : 10;
  }
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v, base);
  if (d.empty() || ec != std::errc() || p != d.data() + d.size() || v > hi) return std::nullopt;
  return v;
}

}  // namespace conf
}  // namespace ofld::tunnel

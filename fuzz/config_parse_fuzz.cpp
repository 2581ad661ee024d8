// libFuzzer target: the `ofld tunnel` configuration parsers. The first byte picks the form:
// even → the bytes are TOML text (parse_toml: toml++ syntax, then ofld's validation of every
// key); odd → the bytes are split at spaces, tabs, newlines and NULs into words (parse_tunnel_words,
// the iproute2-style form). Every input must end in a DaemonConfig or a non-empty error message,
// never a crash, a hang or an uncaught exception.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "ofld/daemon/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) == 0) {
    auto p = ofld::daemon::parse_toml(text, "fuzz");
    if (const auto* e = std::get_if<std::string>(&p); e && e->empty()) std::abort();
    return 0;
  }
  std::vector<std::string> words;
  std::string w;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\0') {
      if (!w.empty()) words.push_back(std::move(w)), w.clear();
    } else {
      w.push_back(c);
    }
  }
  if (!w.empty()) words.push_back(std::move(w));
  ofld::daemon::DaemonConfig cfg;
  auto err = ofld::daemon::parse_tunnel_words(words, cfg);
  if (err && err->empty()) std::abort();
  return 0;
}

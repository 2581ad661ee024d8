// libFuzzer target: the `ofld tunnel` log line formatter (daemon::set_log_format): arbitrary
// message bytes (quotes, '=', control characters, invalid UTF-8) logged through spdlog with the
// JSON formatter must give exactly one line that parses as a JSON object with ts, level and msg,
// every field a string; with the text (logfmt) formatter exactly one line starting "ts=".
// Never a crash, an over-read or an uncaught exception.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "ofld/daemon/service.hpp"

namespace {
std::ostringstream& out() {
  static std::ostringstream o;
  return o;
}
std::shared_ptr<spdlog::logger> logger() {
  static auto l = [] {
    auto lg = std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::ostream_sink_st>(out()));
    spdlog::set_default_logger(lg);
    return lg;
  }();
  return l;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  auto lg = logger();
  const bool json_fmt = (data[0] & 1) == 0;
  ofld::daemon::set_log_format(json_fmt ? ofld::daemon::LogFormat::Json : ofld::daemon::LogFormat::Text);
  const std::string msg(reinterpret_cast<const char*>(data + 1), size - 1);
  out().str("");
  lg->info("{}", msg);
  const std::string line = out().str();
  if (line.empty() || line.back() != '\n' || line.find('\n') != line.size() - 1) std::abort();
  if (!json_fmt) {
    if (line.rfind("ts=", 0) != 0) std::abort();
    return 0;
  }
  // spdlog passes bytes through; nlohmann rejects invalid UTF-8, which only the message can hold
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) {
    // acceptable only when the input is not valid UTF-8
    try {
      (void)nlohmann::json(msg).dump();
    } catch (const nlohmann::json::type_error&) {
      return 0;
    }
    std::abort();
  }
  if (!j.is_object() || !j.contains("ts") || !j.contains("level") || !j.contains("msg")) std::abort();
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!it->is_string()) std::abort();
  return 0;
}

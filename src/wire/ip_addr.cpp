// IP address text conversion; see ofld/wire/ip_addr.hpp.
#include "ofld/wire/ip_addr.hpp"

#include <arpa/inet.h>

namespace ofld::wire {

std::optional<IpAddr> IpAddr::parse(std::string_view text) {
  std::string s(text);
  IpAddr a;
  if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) {
    a.family = 4;
    return a;
  }
  if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) {
    a.family = 6;
    return a;
  }
  return std::nullopt;
}

std::string IpAddr::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family == 4) inet_ntop(AF_INET, bytes.data(), buf, sizeof buf);
  else if (family == 6) inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
  else return "unset";
  return buf;
}

}  // namespace ofld::wire

// A namespace's SNMP counters (/proc/net/snmp, read inside the namespace): the kernel's own
// witness in the kernel tests (Tcp RetransSegs, Tcp InCsumErrors, Udp InDatagrams, ...).
#pragma once

#include <sstream>
#include <string>

#include "ofld/io/netns.hpp"

namespace ofld::ktest {

/// One value of /proc/net/snmp in `ns`: `proto` is the line's tag ("Tcp", "Udp", "Ip"),
/// `field` the column ("InCsumErrors", "RetransSegs"); -1 when unreadable or not found.
inline long snmp(const io::Netns& ns, const std::string& proto, const std::string& field) {
  auto r = ns.exec({"cat", "/proc/net/snmp"});
  if (!r.ok()) return -1;
  std::istringstream in(r.value().out);
  std::string names, values, line;
  const std::string tag = proto + ":";
  while (std::getline(in, line))
    if (line.rfind(tag, 0) == 0) (names.empty() ? names : values) = line;
  std::istringstream n(names), v(values);
  std::string a, b;
  while (n >> a && v >> b)
    if (a == field) return std::stol(b);
  return -1;
}

}  // namespace ofld::ktest

// The encapsulation's configuration inside a parsed DaemonConfig, for tests that check what
// the parser stored (std::get: a test of the wrong mode fails with bad_variant_access).
#pragma once

#include <variant>

#include "ofld/daemon/config.hpp"

namespace tunnel_test {

inline const ofld::tunnel::VxlanConfig& vxlan_of(const ofld::daemon::DaemonConfig& c) {
  return std::get<ofld::tunnel::VxlanConfig>(c.tunnel.encap);
}
inline const ofld::tunnel::GueConfig& gue_of(const ofld::daemon::DaemonConfig& c) {
  return std::get<ofld::tunnel::GueConfig>(c.tunnel.encap);
}
inline const ofld::tunnel::GreConfig& gre_of(const ofld::daemon::DaemonConfig& c) {
  return std::get<ofld::tunnel::GreConfig>(c.tunnel.encap);
}

}  // namespace tunnel_test

// ofld/daemon/reload.hpp — live reload of `ofld tunnel` (SIGHUP; `ofld reload` on the control
// socket): what changed between the running configuration and the one read again, and whether
// it can be applied to the running endpoint. Decision only (no I/O, no packet logic); the
// daemon applies the plan (tunnel_daemon.cpp) and keeps the running configuration when the
// plan is refused.
//
// Applied live: the remotes (VXLAN: the default destinations and their peer sessions), the
// static FDB entries, ttl, tos, the EVPN server (the client is restarted), integrity and
// peer-key (the peer sessions renegotiate: tunnel::PeerTable::reconfigure; the daemon reads the
// key file again on every reload, so a key rotated in the same file is applied too), the log
// level, the workers' CPUs (`cpus`: each worker re-pins its own thread).
// Refused, naming the first such setting: anything that needs a new device or socket or
// changes what the data path was built with — the encapsulation (mode), id/VNI, local,
// dstport/port, srcport, dev, queues, address, control socket, offload, gro, mtu, checksum and
// RCO flags, GRE keys, the L3 modes' remote, group, evpn on/off, learning and FDB limits,
// user, log format, metrics.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ofld/daemon/config.hpp"

namespace ofld::daemon {

struct ReloadPlan {
  /// Non-empty: the reload is refused; names the setting and both values
  /// ("id: 42 -> 43 needs a new device or socket; restart the endpoint to change it").
  std::string refused;
  /// What changes, one item each ("remote +10.0.0.3", "ttl 0 -> 32"); empty: nothing changed.
  std::vector<std::string> changes;
  std::vector<tunnel::IpAddr> remotes_added, remotes_removed;          ///< VXLAN, Geneve
  std::vector<std::pair<tunnel::Mac, tunnel::IpAddr>> fdb_added;       ///< new or moved static entries
  std::vector<tunnel::Mac> fdb_removed;                                ///< static entries gone
  bool outer = false;        ///< ttl or tos changed (cfg.tunnel.common(): ttl, tos, tos_inherit)
  bool evpn_server = false;  ///< evpn_server changed (EVPN on in both)
  bool log_level = false;    ///< log_level changed
  bool cpus = false;         ///< cpus changed (the workers re-pin themselves)
  bool peers = false;        ///< integrity or the peer-key path changed (the key's bytes are
                             ///< compared by the daemon, which reads the file)
};

/// Compare `running` with `next` (both parsed and validated). Pure.
ReloadPlan plan_reload(const DaemonConfig& running, const DaemonConfig& next);

}  // namespace ofld::daemon

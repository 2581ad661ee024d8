// ofld/daemon/config.hpp — `ofld tunnel` configuration from iproute2-style words or TOML.
//
// Words (after the `vxlan` keyword), in the spirit of `ip link add ... type vxlan`:
//   id VNI local ADDR remote ADDR [remote ADDR ...] [dstport N] [srcport MIN MAX]
//   [udpcsum|noudpcsum] [udp6zerocsumtx] [udp6zerocsumrx] [remcsumtx] [remcsumrx]
//   [remcsum-nopartial] [ttl N] [tos N|inherit] [mtu N] [ageing SECONDS] [nolearning]
//   [maxaddress N] [maxaddress-per-remote N] [learning-from remotes|any] [local-maxaddress N]
//   (docs/fdb.md)  [group ADDR [dev IF]] [evpn] [evpn-server HOST:PORT]   (docs/evpn.md)
// TOML (`--config FILE`):
//   dev = "ofld0"            # optional
//   address = "192.0.2.1/24" # optional, assigned to the TAP
//   offload = true           # TAP offloads + UDP_SEGMENT/UDP_GRO
//   gro = true               # GRO after decapsulation
//   queues = 1               # TAP/TUN queues, one worker thread each (1..kMaxQueues)
//   cpus = [0, 1]            # optional: worker i pinned to cpus[i % n] (or "0,1", "0-3")
//   user = "ofld"            # optional: run as this user once set up (daemon/service.hpp)
//   log_format = "text"      # or "json" (logfmt key=value lines by default)
//   log_level = "info"       # trace, debug, info, warning, error, critical, off
//   metrics = "127.0.0.1:9100" # optional: Prometheus/OpenMetrics at /metrics (a port alone: loopback)
//   [vxlan]
//   id = 42
//   local = "10.0.0.1"
//   remote = ["10.0.0.2"]    # or a single string
//   dstport = 4789
//   srcport = [32768, 60999]
//   udpcsum = true
//   udp6zerocsumtx = false
//   udp6zerocsumrx = false
//   remcsumtx = false
//   remcsumrx = false
//   remcsum_nopartial = false
//   ttl = 64
//   tos = 0                  # or "inherit"
//   mtu = 1450
//   ageing = 300
//   learning = true
//   maxaddress = 65536       # learned FDB entries (0 = unbounded); docs/fdb.md
//   maxaddress-per-remote = 0 # learned entries per remote (0 = only maxaddress)
//   learning-from = "remotes" # or "any" (default: remotes; any with a group)
//   local-maxaddress = 4096  # MACs behind our TAP (EVPN type-2 routes)
//   group = "239.1.1.1"      # underlay multicast group for flooding
//   dev = "eth0"             # ... joined on this interface
//   evpn = true              # BGP EVPN through gobgpd (evpn_server = "127.0.0.1:50051")
//   [[fdb]]                  # static entries
//   mac = "02:00:00:00:00:01"
//   remote = "10.0.0.2"
//
// L3 modes (TUN device, IP inner packets; see ofld/tunnel/ip_tunnel.hpp):
//   gue local ADDR remote ADDR port P [udpcsum|noudpcsum] [udp6zerocsumtx] [udp6zerocsumrx]
//       [remcsumtx] [remcsumrx] [remcsum-nopartial] [ttl N] [tos N] [mtu N]
//   gre|ip6gre local ADDR remote ADDR [key K] [ikey K] [okey K] [csum] [icsum] [ocsum]
//       [ttl N] [tos N] [mtu N]            (K: a number or a dotted quad, as in iproute2)
// Geneve (TAP device, Ethernet inner frames; see ofld/tunnel/geneve.hpp):
//   geneve id VNI local ADDR remote ADDR [dstport 6081] [srcport MIN MAX]
//       [options CLASS:TYPE:DATA[,…]] [udpcsum|noudpcsum] [udp6zerocsumtx] [udp6zerocsumrx]
//       [ttl N] [tos N|inherit] [mtu N]
// TOML: a [gue], [gre], [ip6gre] or [geneve] table with the same names (booleans for the flags,
// `port = 5555`, `key = 7`); exactly one tunnel table per file.
// Every error names the setting ("dstport: 'x' is not a number in 1..65535"; from TOML with
// its table: "vxlan.dstport: ...").
//
// One parser: each setting is described once (its words and TOML key, how many values, their
// TOML type, whether it may be given once, and the function that checks and stores it): an
// encapsulation's own in its file (tunnel::EncapKind::rows, ofld/tunnel/encap_kind.hpp), the
// host side's and those by capability (group, EVPN, static fdb) in config.cpp; the words, the TOML file and the command-line options (apply_setting)
// all go through that description, so `vxlan id 42 ... noudpcsum` and `[vxlan] id = 42 ...
// udpcsum = false` give the same DaemonConfig and the same messages.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ofld/tunnel/encapsulation.hpp"
#include "ofld/tunnel/fdb.hpp"

namespace ofld::daemon {

/// Either the value or an error message naming the setting.
template <class T>
using Parsed = std::variant<T, std::string>;

struct DaemonConfig {
  std::string dev = "ofld0";      ///< TAP name
  std::string address;            ///< optional CIDR assigned to the TAP (ip addr add)
  std::string control;            ///< control socket path; empty → default_control_path(dev)
  std::string control_group;      ///< group of the control socket (mode 0660); empty → the process's
  bool offload = true;            ///< TAP vnet hdr + TUNSETOFFLOAD, UDP_SEGMENT, UDP_GRO
  bool gro = true;                ///< GRO after decapsulation
  /// TAP/TUN queues (IFF_MULTI_QUEUE when > 1), one worker thread with its own UDP socket
  /// (SO_REUSEPORT on the same port), GRO engine and buffers per queue. 1 = single queue;
  /// kQueuesAuto (`queues auto`, the default): the count plan_queues chooses at start.
  unsigned queues = 0;
  /// `cpus LIST` / TOML `cpus = [0, 1]` (or a string "0,1", "0-3"): worker i is pinned to the
  /// one CPU cpus[i % n] (sched_setaffinity of its thread; the control, metrics and EVPN
  /// threads are not pinned). Empty: no pinning, the workers run where the scheduler puts
  /// them. A reload applies a change live (each worker re-pins itself between two batches;
  /// an emptied list gives the workers back the CPU set the process started with).
  std::vector<unsigned> cpus;
  /// The tunnel: VXLAN (TAP, Ethernet inner), GUE or GRE/ip6gre (TUN; gre or ip6gre by the
  /// address family): one TunnelConfig, its encapsulation's settings in tunnel.encap.
  tunnel::TunnelConfig tunnel;
  std::vector<std::pair<tunnel::Mac, tunnel::IpAddr>> static_fdb;
  /// Integrity mode (docs/peer-protocol.md; word `integrity`, TOML `integrity = true` in the tunnel
  /// table; every mode): inner checksums elided toward peers whose session says they have it
  /// too. Needs the outer checksum both ways (refused otherwise): VXLAN/GUE the outer UDP
  /// checksum, GRE/ip6gre the GRE checksum (`csum`).
  bool integrity = false;
  /// `peer-key FILE` (TOML `peer-key = "FILE"` in the tunnel table; every mode): the peer
  /// sessions carry an HMAC-SHA-256 under the key in FILE (read at start; at least 16 bytes,
  /// trailing whitespace removed) and take no message without a valid one. Empty: none.
  std::string peer_key;
  /// VXLAN `group ADDR [dev IF]` (iproute2): flood to the underlay multicast group (joined on
  /// IF) besides any remotes; empty = none.
  tunnel::IpAddr group;
  std::string group_dev;
  /// VXLAN and Geneve `evpn` / `evpn-server HOST:PORT`: feed the FDB from BGP EVPN through gobgpd's gRPC
  /// API (docs/evpn.md): advertise local MACs (type-2) and the VNI (type-3), program remote
  /// MACs and the flood list from the routes received.
  bool evpn = false;
  std::string evpn_server = "127.0.0.1:50051";
  /// `router-id A.B.C.D` (FRR's `bgp router-id`): the administrator field of our EVPN
  /// type-1 Route Distinguishers (router-id:VNI). Unset: FRR's default (an IPv4 VTEP; else
  /// the highest IPv4 address of a loopback, else of any interface).
  tunnel::IpAddr evpn_router_id;
  /// FRR's `dup-addr-detection` (on; `no-dup-addr-detection`), `max-moves N time S` as
  /// `dup-addr-detection-max-moves N` (2..1000, 5) / `dup-addr-detection-time S` (2..1800,
  /// 180), `freeze S|permanent` as `dup-addr-detection-freeze` (30..3600 s; 0 = no freeze).
  bool dup_addr_detection = true;
  std::uint32_t dad_max_moves = 5, dad_time_s = 180, dad_freeze_s = 0;
  bool dad_freeze_permanent = false;
  /// `user NAME` / TOML `user =`: once the device, sockets and control socket are open,
  /// become this user (name or uid) keeping only the capabilities still needed
  /// (daemon::caps_after_start). Empty: stay as started.
  std::string user;
  /// `log-format text|json` / TOML `log_format =`: logfmt key=value lines or JSON lines.
  std::string log_format = "text";
  /// `metrics [ADDR:]PORT` / TOML `metrics =`: serve the counters as Prometheus/OpenMetrics
  /// text at http://ADDR:PORT/metrics (ofld/daemon/metrics.hpp; 127.0.0.1 when only a port
  /// is given). Empty: off.
  std::string metrics;
  /// `log-level LEVEL` / TOML `log_level =`: trace, debug, info, warning, error, critical or
  /// off; empty: info (or debug with -v). Changed by a reload (ofld/daemon/reload.hpp).
  std::string log_level;
};

/// Most queues accepted: the kernel's MAX_TAP_QUEUES (drivers/net/tun.c).
inline constexpr unsigned kMaxQueues = 256;

/// `queues auto`: the endpoint chooses the count when it starts (plan_queues).
inline constexpr unsigned kQueuesAuto = 0;

/// Most queues `queues auto` opens. Two queues were measured (bench/tunnel-profile.md,
/// "Queue count", 2 vCPUs): four streams 0.64x the kernel VXLAN pair with two against 0.51x
/// with one, and less CPU per GB; one stream the same. More is an explicit `queues N`.
inline constexpr unsigned kAutoQueuesMax = 2;

/// Parse a queue count ("--queues N|auto", TOML `queues = N` or `queues = "auto"`): the
/// number, kQueuesAuto for "auto", or an error naming `queues` when it is neither "auto" nor
/// a number in 1..kMaxQueues.
Parsed<unsigned> parse_queues(const std::string& s);
/// "auto" or the number (the text parse_queues reads back).
std::string queues_text(unsigned queues);

/// The queues an endpoint opens on its TAP/TUN.
struct QueuePlan {
  unsigned count = 1;        ///< queues, one worker thread each
  bool multi_queue = false;  ///< TUNSETIFF with IFF_MULTI_QUEUE (the device is or becomes multi-queue)
  std::string why;           ///< for the log: how `auto` chose, or "" for an explicit count
};

/// How many workers `queues auto` could give a CPU each: with a `cpus` list, the length of its
/// leading run of distinct CPUs (worker i runs on cpus[i % n], so "1,1,0" gives the first two
/// workers one CPU: 1); without one, `allowed` (the process's allowed CPUs).
unsigned auto_queue_cpus(const std::vector<unsigned>& cpus, std::size_t allowed);

/// The queue plan for `configured` (kQueuesAuto or 1..kMaxQueues). `cpus`: how many workers
/// could have a CPU each (auto_queue_cpus).
/// `flow_spread`: the underlay's receive spreads inner flows over the SO_REUSEPORT sockets
/// (each flow has its own UDP source port: VXLAN, Geneve; not GUE's one port, not GRE's raw
/// socket, which hands every packet to worker 0). `existing_multi_queue`: whether a TUN/TAP
/// device of that name that already exists has IFF_MULTI_QUEUE (the endpoint reads the
/// link's tun info), nullopt when the endpoint creates it. The kernel refuses (EINVAL) to
/// attach without IFF_MULTI_QUEUE to a multi-queue device and with it to a single-queue one
/// (tun_set_iff in drivers/net/tun.c), so the plan follows an existing device's kind.
/// auto: 1 for an existing single-queue device or without flow_spread, else
/// min(kAutoQueuesMax, cpus). Error (naming `queues`): an explicit count above 1 for an
/// existing single-queue device.
Parsed<QueuePlan> plan_queues(unsigned configured, unsigned cpus, bool flow_spread,
                              std::optional<bool> existing_multi_queue);

/// The CPUs this process may run on (sched_getaffinity of the calling thread), ascending.
std::vector<unsigned> allowed_cpus();

/// The CPU time the calling thread's cgroups allow, in CPUs (quota / period): the smallest
/// limit over its cgroup and each ancestor below the hierarchy's mount point. Reads cgroup v2
/// `cpu.max` ("max 100000" is no limit) or, where the cpu controller is on a v1 hierarchy,
/// `cpu.cfs_quota_us` (-1 is no limit) and `cpu.cfs_period_us`; the cgroup comes from
/// /proc/thread-self/cgroup and the mount point from /proc/self/mountinfo. nullopt when no
/// level has a limit or nothing can be read. `root` is put before every path read (tests
/// build a fake tree; "" reads the real one).
std::optional<double> cgroup_cpu_limit(const std::string& root = "");

/// The workers a CPU limit (cgroup_cpu_limit) gives a CPU's worth of time each: the whole
/// CPUs in it, at least 1 (1.5 CPUs: 1). `queues auto` opens no more queues than this.
unsigned cpus_of_limit(double limit);

/// Parse a CPU list ("--cpus 0,1", TOML `cpus = [0, 1]` or `cpus = "0,2-3"`): numbers and
/// ranges A-B (A <= B) separated by commas, as taskset -c and cpuset lists write them, in the
/// order given (worker i takes the i-th, modulo the length); a CPU may repeat (two workers on
/// one CPU). Errors name `cpus`: an empty list or element, something not a number, a CPU
/// outside 0..CPU_SETSIZE-1 (1023), a CPU not in `allowed` (the process's allowed set,
/// allowed_cpus(), unless given).
Parsed<std::vector<unsigned>> parse_cpus(const std::string& s, const std::vector<unsigned>& allowed);
Parsed<std::vector<unsigned>> parse_cpus(const std::string& s);
/// "0,1" (the list as parse_cpus reads it back; each CPU as given, no ranges); "" when empty.
std::string cpus_text(const std::vector<unsigned>& cpus);

/// Set a host-side setting from a command-line option — the same description, rules and
/// messages as its TOML key at the top level: `dev`, `address`, `control`, `queues`, `cpus`, `user`,
/// `log-format`, `log-level`, `metrics` (one value each), `offload`, `gro` (flags, no value; `no-offload`, `no-gro` turn them off). Error text
/// names the setting.
std::optional<std::string> apply_setting(DaemonConfig& cfg, const std::string& name,
                                         const std::vector<std::string>& values = {});

/// "/run/ofld/<dev>.sock".
std::string default_control_path(const std::string& dev);

/// Parse the words after `vxlan` into cfg.tunnel (a VxlanConfig; and static fdb: `fdb MAC ADDR`). Validates
/// the result (tunnel::validate).
std::optional<std::string> parse_vxlan_words(const std::vector<std::string>& words,
                                             DaemonConfig& cfg);
/// Parse the words after `gue` into cfg.tunnel (a GueConfig). Validates the result.
std::optional<std::string> parse_gue_words(const std::vector<std::string>& words, DaemonConfig& cfg);
/// Parse the words after `gre` (ip6 = false) or `ip6gre` (ip6 = true) into cfg.tunnel (a
/// GreConfig). `gre` needs IPv4 addresses, `ip6gre` IPv6 ones. Validates the result.
std::optional<std::string> parse_gre_words(const std::vector<std::string>& words, bool ip6,
                                           DaemonConfig& cfg);
/// Parse `MODE words...` (MODE = vxlan, gue, gre, ip6gre or geneve); errors name the setting, or
/// the mode when it is unknown or missing.
std::optional<std::string> parse_tunnel_words(const std::vector<std::string>& words,
                                              DaemonConfig& cfg);
/// Parse a TOML file. Validates the result.
Parsed<DaemonConfig> parse_toml_file(const std::string& path);
/// Parse TOML text (`origin` names the source in messages).
Parsed<DaemonConfig> parse_toml(const std::string& text, const std::string& origin = "config");
/// Checks the host-side settings that no parser above sees when they come from the command line
/// (`--dev`, `--address`): an interface name of 1..15 characters without '/', ':' or spaces, an
/// IPv4/IPv6 address with an optional prefix length. Returns an error naming the setting.
std::optional<std::string> validate_local(const DaemonConfig& cfg);
/// "02:00:5e:00:00:01" → Mac.
std::optional<tunnel::Mac> parse_mac(const std::string& s);

}  // namespace ofld::daemon

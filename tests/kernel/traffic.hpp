// The traffic the kernel tests send through a tunnel and the witnesses that judge it, one copy
// for every tunnel, EVPN, service and queue test:
// - a SHA-256-checked TCP transfer: a python3 server in one namespace hashes what it receives,
//   a python3 client in another sends seeded random bytes and hashes what it sent; equal
//   "bytes sha" lines at both ends mean nothing was lost, duplicated or corrupted on the way
//   (through whatever joins the two namespaces: ofld endpoints, the kernel VXLAN device, OVS);
// - an ICMP echo (this machine has no ping);
// - tshark's dissection of a capture, the independent witness of checksums and headers.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "netns_pair.hpp"
#include "ofld/io/netns.hpp"

namespace ofld::ktest {

/// What one hashed transfer sends.
struct TransferSpec {
  int port = 5001;      ///< the server's TCP port (in the receiving namespace)
  int mib = 4;          ///< MiB per stream
  int seed = 1;         ///< stream i sends random.Random(seed + i).randbytes(mib << 20)
  int streams = 1;      ///< parallel TCP connections
  long rate = 0;        ///< > 0: each stream paced to this many bytes per second
  int timeout_s = 60;   ///< how long the client may run; the server waits 30 s per accept/recv
};

/// Sends `spec` from `from` to `dst` (an address of `to`; the server binds the wildcard of
/// dst's family). Returns {sender, receiver}: each "BYTES SHA256" per stream, sorted and
/// space-joined (one stream: "4194304 ab12…"); the sender side is "client failed: …" when the
/// client did not finish. The server's output goes through a log in /tmp, removed after.
std::pair<std::string, std::string> hashed_transfer(const io::Netns& from, const io::Netns& to,
                                                    const std::string& dst, const TransferSpec& spec = {});

/// Through the overlay of `p` (192.168.NET.1 in A, .2 in B): an ICMP echo A → B, then an
/// 8 MiB hashed transfer each way, and neither receiving stack counting a TCP checksum error
/// (Tcp InCsumErrors in /proc/net/snmp: the stack's own verdict on every inner segment
/// delivered, RFC 9293 §3.1).
/// Each check that fails is a gtest failure; returns false when one did (the caller stops).
bool expect_echo_and_transfers(const TunnelPair& p, int net);

/// A python3 program that sends up to `tries` ICMP echo requests (id 0x78, 32 bytes) to
/// `dst` from a raw socket, 0.5 s apart, and prints "reply" at the first echo reply from dst,
/// else "none". Run it with Netns::exec in the sending namespace.
std::string icmp_echo_script(const std::string& dst, int tries = 20);

/// tshark's field values for the frames of `pcap` matching the display filter, one line per
/// frame, fields tab-separated in the order asked; IP, UDP and TCP checksum validation on (so
/// `*.checksum.status` is tshark's verdict). Empty when tshark fails.
std::vector<std::string> tshark_fields(const std::string& pcap, const std::string& filter,
                                       const std::vector<std::string>& fields);

}  // namespace ofld::ktest

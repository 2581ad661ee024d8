#!/usr/bin/env python3
"""bench/underlay_tun_probe.py: can an endpoint hand its encapsulated frames to the kernel
through an underlay TUN/TAP (as TUN_F_UDP_TUNNEL_GSO would let it), and reach the peer, on a
host in its default settings? (root)

A frame written to a TUN/TAP enters the host's IP stack as if it had been *received* on that
device. The host must then forward it to the underlay device, which it does only with
net.ipv4.ip_forward=1; and a frame whose source is one of the host's own addresses is a
martian (ip_route_input_slow: fib_validate_source) unless accept_local is set on the device.

Two namespaces joined by a veth (10.250.0.1 / 10.250.0.2); the sender's namespace has a TUN
(10.251.0.1/30). One UDP datagram to 10.250.0.2:5555 is written into the TUN per case, and
the receiver's socket says whether it arrived; the sender's IP counters that moved follow.
Namespaces utapA and utapB are created and deleted here; no other address is used.
"""
import ctypes
import fcntl
import os
import socket
import struct
import subprocess
import sys
import time

A, B = "utapA", "utapB"
CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000


def sh(c):
    return subprocess.run(c, shell=True, capture_output=True, text=True)


def ip_checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def datagram(src):
    payload = b"hello-underlay"
    udp = struct.pack("!HHHH", 40000, 5555, 8 + len(payload), 0) + payload  # UDP csum 0: none
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0x4000, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton("10.250.0.2"))
    ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
    return ip + udp


def ip_counters():
    """The sender namespace's IP counters (/proc/net/snmp, the "Ip:" lines)."""
    lines = [l.split() for l in sh(f"ip netns exec {A} cat /proc/net/snmp").stdout.splitlines()
             if l.startswith("Ip:")]
    if len(lines) < 2:
        return {}
    return {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:])}


def case(label, sysctls, src):
    recv = subprocess.Popen(
        ["ip", "netns", "exec", B, "python3", "-c",
         "import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
         "s.bind(('0.0.0.0',5555));s.settimeout(1.5)\n"
         "try:\n s.recvfrom(100); print('arrived')\nexcept Exception:\n print('dropped')"],
        stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    before = ip_counters()
    pid = os.fork()
    if pid == 0:  # the writer, inside A
        try:
            fd = os.open(f"/var/run/netns/{A}", os.O_RDONLY)
            if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
                os._exit(3)
            t = os.open("/dev/net/tun", os.O_RDWR)
            fcntl.ioctl(t, TUNSETIFF, struct.pack("16sH", b"utun", IFF_TUN | IFF_NO_PI))
            sh("ip addr add 10.251.0.1/30 dev utun; ip link set utun up")
            for s in sysctls:
                sh(f"sysctl -qw {s}")
            time.sleep(0.2)
            os.write(t, datagram(src))
            time.sleep(0.5)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    verdict = recv.communicate()[0].strip()
    after = ip_counters()
    nz = [f"Ip{k}+{after[k] - before.get(k, 0)}" for k in after
          if k != "Forwarding" and after[k] != before.get(k, 0)]  # Forwarding: a setting
    print(f"{label:60s} {verdict:8s} {' '.join(nz)}")
    return verdict


def main():
    if os.geteuid() != 0:
        print("underlay_tun_probe: needs root", file=sys.stderr)
        return 2
    if not os.path.exists("/dev/net/tun"):
        print("underlay_tun_probe: skipped: no /dev/net/tun", file=sys.stderr)
        return 0
    for n in (A, B):
        sh(f"ip netns del {n}")
    try:
        sh(f"ip netns add {A}; ip netns add {B}")
        sh(f"ip link add va netns {A} type veth peer name vb netns {B}")
        sh(f"ip -n {A} addr add 10.250.0.1/24 dev va; ip -n {A} link set va up; ip -n {A} link set lo up")
        sh(f"ip -n {B} addr add 10.250.0.2/24 dev vb; ip -n {B} link set vb up; ip -n {B} link set lo up")
        fwd = sh(f"ip netns exec {A} sysctl -n net.ipv4.ip_forward").stdout.strip()
        print(f"defaults of a new namespace: net.ipv4.ip_forward={fwd}")
        case("defaults; source = the host's underlay address", [], "10.250.0.1")
        case("defaults; source = an address behind the TUN", [], "10.251.0.2")
        case("ip_forward=1; source = the host's underlay address",
             ["net.ipv4.ip_forward=1"], "10.250.0.1")
        case("ip_forward=1; source = an address behind the TUN",
             ["net.ipv4.ip_forward=1"], "10.251.0.2")
        case("ip_forward=1 + utun accept_local=1; host's underlay address",
             ["net.ipv4.ip_forward=1", "net.ipv4.conf.utun.accept_local=1"], "10.250.0.1")
    finally:
        for n in (A, B):
            sh(f"ip netns del {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

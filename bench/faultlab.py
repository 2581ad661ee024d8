#!/usr/bin/env python3
"""bench/faultlab.py — one cell of the `ofld tunnel` fault matrix (root; its own namespaces).

Three namespaces, TAG-a, TAG-r, TAG-b: A (underlay 10.81.0.1) -- R (10.81.0.2 | 10.81.1.2) -- B
(10.81.1.1), veths between them. An `ofld tunnel` VXLAN endpoint in A and in B (overlay
192.168.81.1 / .2, VNI 42, udpcsum unless the cell says otherwise); each one's remote is R, where
a UDP relay (this file, `relay`) forwards A's datagrams to B and B's to A, and injects the
cell's fault: loss, reordering, duplication, delay. This kernel has no sch_netem (`tc qdisc add
... netem` answers "Specified qdisc kind is unknown"), so the faults tc netem would make on the
veth are made by the relay instead; bit corruption is made by nftables in B after the relay
computed the outer UDP checksum (as corruption on a wire would be), with R's veth toward B
sending with transmit checksum offload off so that the checksum is complete when mangled.

Each cell moves SIZE MiB of seeded random data both ways at once over TCP (overlay), each
transfer checked by SHA-256 at the receiver, and judges:
  intact   both transfers complete and every hash matches (no byte corrupted)
  alive    both endpoints still run and answer on their control sockets (no crash, no hang)
  loss     every datagram accounted for, per direction: sent by the endpoint (per-peer
           tx_datagrams) = received by the relay + relay socket drops (Udp RcvbufErrors);
           relayed (in - dropped + duplicated) = received by the other endpoint (per-peer
           rx_datagrams) + its kernel's Udp InCsumErrors + RcvbufErrors; and every datagram
           the endpoint received but did not deliver is in its drops by reason.
Prints one JSON object: the cell, the verdicts, and the counters behind them.

  faultlab.py cell NAME [--size MiB] [--ofld PATH] [--tag TAG]
  faultlab.py relay LISTEN_A LISTEN_B PEER_A PEER_B FAULT P SEED   (run inside R)
Cells: clean loss1 loss10 reorder dup delay50 corrupt corrupt_nocsum kill_restart link_flap
       mtu_low malformed
"""
import hashlib
import heapq
import json
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

PORT = 4789
UA, RA, RB, UB = "10.81.0.1", "10.81.0.2", "10.81.1.2", "10.81.1.1"
OA, OB = "192.168.81.1", "192.168.81.2"


# ---------------------------------------------------------------------------------------------
# the relay (inside R)

def relay(la, lb, pa, pb, fault, p, seed, nocsum=False):
    rnd = random.Random(seed)
    sa = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sb = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for s, l in ((sa, la), (sb, lb)):
        if nocsum:  # SO_NO_CHECK: send with a zero UDP checksum, as the endpoints do (noudpcsum)
            s.setsockopt(socket.SOL_SOCKET, 11, 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        s.bind((l, PORT))
        s.setblocking(False)
    # direction "ab": in on sa (from A), out on sb to B; "ba": the reverse
    out = {sa: (sb, (pb, PORT), "ab"), sb: (sa, (pa, PORT), "ba")}
    ctr = {d: {"in": 0, "dropped": 0, "duplicated": 0, "reordered": 0, "delayed": 0, "out": 0}
           for d in ("ab", "ba")}
    held = {"ab": None, "ba": None}  # reorder: one datagram held back, sent after the next
    later = []  # delay: (due, seq, sock, dst, dir, data)
    seq = 0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    def send(sock, dst, d, data):
        try:
            sock.sendto(data, dst)
            ctr[d]["out"] += 1
        except BlockingIOError:
            ctr[d]["dropped"] += 1  # counted: the relay's own send queue was full

    while not stop:
        timeout = 0.2
        if later:
            timeout = max(0.0, min(timeout, later[0][0] - time.monotonic()))
        try:
            r, _, _ = select.select([sa, sb], [], [], timeout)
        except InterruptedError:
            continue
        now = time.monotonic()
        while later and later[0][0] <= now:
            _, _, sock, dst, d, data = heapq.heappop(later)
            send(sock, dst, d, data)
        for s in r:
            osock, dst, d = out[s]
            for _ in range(256):
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    break
                c = ctr[d]
                c["in"] += 1
                if fault.startswith("loss") and rnd.random() < p:
                    c["dropped"] += 1
                    continue
                if fault == "delay":
                    c["delayed"] += 1
                    seq += 1
                    heapq.heappush(later, (now + p, seq, osock, dst, d, data))
                    continue
                if fault == "reorder":
                    if held[d] is None and rnd.random() < p:
                        held[d] = data
                        c["reordered"] += 1
                        continue
                    send(osock, dst, d, data)
                    if held[d] is not None:
                        send(osock, dst, d, held[d])
                        held[d] = None
                    continue
                send(osock, dst, d, data)
                if fault == "dup" and rnd.random() < p:
                    c["duplicated"] += 1
                    send(osock, dst, d, data)
    for d in held:
        if held[d] is not None:
            ctr[d]["dropped"] += 1  # still held at the end: counted as dropped
    for _, _, _, _, d, _ in later:
        ctr[d]["dropped"] += 1
    print(json.dumps(ctr), flush=True)


# ---------------------------------------------------------------------------------------------
# the lab

def sh(*a, check=True, **kw):
    return subprocess.run(list(a), check=check, capture_output=True, text=True, **kw)


def nsx(ns, *a, check=True, **kw):
    return sh("ip", "netns", "exec", ns, *a, check=check, **kw)


def snmp(ns, proto, field):
    t = nsx(ns, "cat", "/proc/net/snmp").stdout.splitlines()
    for i in range(0, len(t) - 1, 2):
        h, v = t[i].split(), t[i + 1].split()
        if h[0] == proto + ":":
            return int(v[h.index(field)])
    return 0


def nstat(ns, field):
    out = nsx(ns, "nstat", "-az", field, check=False).stdout.split()
    try:
        return int(out[out.index(field) + 1])
    except (ValueError, IndexError):
        return 0


def control(path, timeout=2.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.shutdown(socket.SHUT_WR)
        buf = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            buf += b
        return json.loads(buf)
    except (OSError, ValueError):
        return None
    finally:
        s.close()


SERVER = r"""
import socket,hashlib,sys
s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)
s.bind((sys.argv[1],int(sys.argv[2])));s.listen(1);s.settimeout(float(sys.argv[3]))
c,_=s.accept();c.settimeout(float(sys.argv[3]));h=hashlib.sha256();n=0
while True:
  d=c.recv(1<<16)
  if not d: break
  h.update(d);n+=len(d)
c.sendall(b'k');c.close()
print(n,h.hexdigest(),flush=True)
"""
CLIENT = r"""
import socket,hashlib,random,sys,time
r=random.Random(int(sys.argv[4]));data=r.randbytes(int(sys.argv[3])<<20)
rate=float(sys.argv[5])  # bytes/s, 0 = as fast as possible
for i in range(100):
  try:
    s=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=float(sys.argv[6]));break
  except OSError: time.sleep(0.1)
s.settimeout(float(sys.argv[6]))
if rate<=0: s.sendall(data)
else:
  t0=time.monotonic();off=0;chunk=1<<16
  while off<len(data):
    s.sendall(data[off:off+chunk]);off+=chunk
    ahead=off/rate-(time.monotonic()-t0)
    if ahead>0: time.sleep(ahead)
s.shutdown(socket.SHUT_WR);s.recv(1);s.close()
print(len(data),hashlib.sha256(data).hexdigest(),flush=True)
"""

FLOOD = r"""
import socket,random,sys,time
r=random.Random(5);s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.bind((sys.argv[1],0))
rate=int(sys.argv[3]);secs=float(sys.argv[4]);n=0;t0=time.monotonic();kinds=[0,0,0,0]
while time.monotonic()-t0<secs:
  k=n%4;kinds[k]+=1
  if k==0: d=bytes(r.randrange(256) for _ in range(r.randrange(0,8)))            # short header
  elif k==1: d=bytes([0x00,0,0,0,0,0,42,0])+r.randbytes(r.randrange(0,120))      # I flag clear
  elif k==2: d=bytes([0x08,0,0,0,0,0,43,0])+r.randbytes(r.randrange(0,120))      # other VNI
  else: d=bytes([0x08,0,0,0,0,0,42,0])+r.randbytes(r.randrange(0,13))            # short frame
  try: s.sendto(d,(sys.argv[2],4789));n+=1
  except OSError: pass
  ahead=n/rate-(time.monotonic()-t0)
  if ahead>0: time.sleep(ahead)
print(n,flush=True)
"""


class Lab:
    def __init__(self, tag, ofld):
        self.tag, self.ofld = tag, ofld
        self.A, self.R, self.B = tag + "a", tag + "r", tag + "b"
        self.run = "/run/" + tag
        self.procs = []
        self.ep = {}

    def up(self, persistent_a=False):
        self.down()
        os.makedirs(self.run, exist_ok=True)
        for n in (self.A, self.R, self.B):
            sh("ip", "netns", "add", n)
            sh("ip", "-n", n, "link", "set", "lo", "up")
            nsx(n, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
        sh("ip", "-n", self.A, "link", "add", "veth0", "type", "veth", "peer", "name", "va", "netns", self.R)
        sh("ip", "-n", self.B, "link", "add", "veth0", "type", "veth", "peer", "name", "vb", "netns", self.R)
        for ns, dev, ad in ((self.A, "veth0", UA), (self.R, "va", RA), (self.R, "vb", RB), (self.B, "veth0", UB)):
            sh("ip", "-n", ns, "addr", "add", ad + "/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
        if persistent_a:  # survives the endpoint (kill/restart): address and neighbours stay
            sh("ip", "-n", self.A, "tuntap", "add", "dev", "ofld0", "mode", "tap")

    def down(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.procs = []
        for n in (self.A, self.R, self.B):
            pids = sh("ip", "netns", "pids", n, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
            sh("ip", "netns", "del", n, check=False)

    def start_relay(self, fault, p, seed=1, nocsum=False):
        self.relay = subprocess.Popen(["ip", "netns", "exec", self.R, sys.executable, __file__, "relay",
                                       RA, RB, UA, UB, fault, str(p), str(seed), "1" if nocsum else "0"],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(0.3)

    def stop_relay(self):
        self.relay.send_signal(signal.SIGTERM)
        try:
            out, _ = self.relay.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.relay.kill()
            return None
        for line in reversed(out.splitlines()):
            if line.startswith("{"):
                return json.loads(line)
        return None

    def start_ep(self, side, extra=()):
        ns, local, remote, ovl = (self.A, UA, RA, OA) if side == "a" else (self.B, UB, RB, OB)
        ctl = f"{self.run}/{side}.sock"
        log = open(f"{self.run}/{side}.log", "a")
        p = subprocess.Popen(["ip", "netns", "exec", ns, self.ofld, "tunnel", "--dev", "ofld0",
                              "--address", ovl + "/24", "--control", ctl, "vxlan", "id", "42",
                              "local", local, "remote", remote, *extra],
                             stdout=log, stderr=log)
        self.ep[side] = (p, ctl)
        for _ in range(100):
            if control(ctl) is not None:
                return p
            if p.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"endpoint {side} did not start: " + open(f"{self.run}/{side}.log").read())

    def transfers(self, mb, rate=0.0, timeout=60.0, during=None):
        """Both ways at once; returns {dir: {"sent": "N sha", "got": "N sha"}}."""
        srv, cli = {}, {}
        for d, (sns, saddr, port) in (("ab", (self.B, OB, 7101)), ("ba", (self.A, OA, 7102))):
            srv[d] = subprocess.Popen(["ip", "netns", "exec", sns, sys.executable, "-c", SERVER, saddr,
                                       str(port), str(timeout)], stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
        time.sleep(0.3)
        for d, (cns, daddr, port, seed) in (("ab", (self.A, OB, 7101, 7)), ("ba", (self.B, OA, 7102, 8))):
            cli[d] = subprocess.Popen(["ip", "netns", "exec", cns, sys.executable, "-c", CLIENT, daddr,
                                       str(port), str(mb), str(seed), str(rate), str(timeout)],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if during:
            during()
        res = {}
        for d in ("ab", "ba"):
            try:
                c, _ = cli[d].communicate(timeout=timeout + 30)
            except subprocess.TimeoutExpired:
                cli[d].kill()
                c = "client hung"
            try:
                s, _ = srv[d].communicate(timeout=15)
            except subprocess.TimeoutExpired:
                srv[d].kill()
                s = "server hung"
            res[d] = {"sent": c.strip().splitlines()[-1] if c.strip() else "client failed",
                      "got": s.strip().splitlines()[-1] if s.strip() else "server failed"}
        return res


def session(st, addr):
    return (st or {}).get("peer_sessions", {}).get("sessions", {}).get(addr, {})


def peer(st, addr, k):
    return (st or {}).get("peers", {}).get(addr, {}).get(k, 0)


def cell(name, size, ofld, tag):
    lab = Lab(tag, ofld)
    fault, p, csum, extra = "none", 0.0, "udpcsum", []
    if name == "loss1":
        fault, p = "loss", 0.01
    elif name == "loss10":
        fault, p = "loss", 0.10
    elif name == "reorder":
        fault, p = "reorder", 0.05
    elif name == "dup":
        fault, p = "dup", 0.05
    elif name == "delay50":
        fault, p = "delay", 0.05
    elif name == "corrupt_nocsum":
        csum = "noudpcsum"
    rate = 0.0
    if name in ("kill_restart", "link_flap", "malformed"):
        rate = size * (1 << 20) / 4.0  # spread over ~4 s: the event lands mid-transfer
    t0 = time.monotonic()
    r = {"cell": name, "size_mib": size}
    try:
        lab.up(persistent_a=name == "kill_restart")
        lab.start_relay(fault, p, nocsum=csum == "noudpcsum")
        if name.startswith("corrupt"):
            # R's veth toward B: the UDP checksum complete on the wire (no CHECKSUM_PARTIAL);
            # in B every 50th big datagram to port 4789 gets one payload byte inverted (inner
            # TCP payload, past the outer and inner headers) before the UDP checksum is checked.
            nsx(lab.R, "ethtool", "-K", "vb", "tx", "off")
            rules = ("table ip ofldfault {\n counter mangled {}\n chain pre {\n"
                     "  type filter hook prerouting priority -300; policy accept;\n"
                     "  udp dport 4789 meta length > 1000 numgen inc mod 50 0 counter name mangled "
                     "@th,1600,8 set @th,1600,8 ^ 0xff\n }\n}\n")
            nsx(lab.B, "nft", "-f", "-", input=rules)
        lab.start_ep("a", [csum, *extra])
        lab.start_ep("b", [csum, *extra])
        if name == "mtu_low":
            # the A-R link's MTU (both ends) below the outer packet A sends (1450 + 50 = 1500)
            nsx(lab.A, "ip", "link", "set", "veth0", "mtu", "1400")
            nsx(lab.R, "ip", "link", "set", "va", "mtu", "1400")
        # warm up: ARP and the FDB through the tunnel
        nsx(lab.A, "ping", "-c", "3", "-i", "0.2", "-W", "2", OB, check=False)
        base = {}
        for ns in (lab.A, lab.R, lab.B):
            base[ns] = {k: snmp(ns, "Udp", k) for k in ("InCsumErrors", "RcvbufErrors", "InDatagrams")}
        base["retrans"] = nstat(lab.A, "TcpRetransSegs") + nstat(lab.B, "TcpRetransSegs")
        base["tcpcsum"] = {s: nstat(ns, "TcpInCsumErrors") for s, ns in (("a", lab.A), ("b", lab.B))}
        flood = {}

        def during():
            if name == "kill_restart":
                time.sleep(1.5)
                pa, _ = lab.ep["a"]
                pa.send_signal(signal.SIGKILL)  # the `ip netns exec` process execs ofld
                pa.wait()
                r["killed_at_s"] = round(time.monotonic() - t0, 2)
                time.sleep(0.5)
                lab.start_ep("a", [csum])
            elif name == "link_flap":
                time.sleep(1.5)
                nsx(lab.A, "ip", "link", "set", "ofld0", "down")
                time.sleep(1.0)
                nsx(lab.A, "ip", "link", "set", "ofld0", "up")
            elif name == "malformed":
                f = nsx(lab.R, sys.executable, "-c", FLOOD, RB, UB, "10000", "4", check=False)
                flood["sent"] = int(f.stdout.split()[0]) if f.stdout.split() else 0

        res = lab.transfers(size, rate=rate, during=during)
        time.sleep(0.5)  # quiesce
        rel = lab.stop_relay()  # first: nothing is relayed after the endpoints' counters are read
        sta, stb = control(lab.ep["a"][1]), control(lab.ep["b"][1])
        r["transfers"] = res
        r["intact"] = all(v["sent"] == v["got"] and " " in v["got"] for v in res.values())
        r["alive"] = sta is not None and stb is not None and all(
            lab.ep[s][0].poll() is None for s in ("a", "b"))
        d = {ns: {k: snmp(ns, "Udp", k) - base[ns][k] for k in base[ns]} for ns in (lab.A, lab.R, lab.B)}
        r["tcp_retrans"] = nstat(lab.A, "TcpRetransSegs") + nstat(lab.B, "TcpRetransSegs") - base["retrans"]
        r["tcp_in_csum_errors"] = {s: nstat(ns, "TcpInCsumErrors") - base["tcpcsum"][s]
                                   for s, ns in (("a", lab.A), ("b", lab.B))}
        r["relay"] = rel
        r["kernel_udp"] = {"a": d[lab.A], "r": d[lab.R], "b": d[lab.B]}
        r["drops"] = {"a": (sta or {}).get("drops", {}), "b": (stb or {}).get("drops", {})}
        r["tap_write_failed"] = {s: (st or {}).get("tap_write", {}).get("failed", 0) for s, st in (("a", sta), ("b", stb))}
        r["send_errors"] = {s: (st or {}).get("tx", {}).get("send_errors", 0) for s, st in (("a", sta), ("b", stb))}
        if name == "mtu_low":
            r["stats_a"] = {k: (sta or {}).get(k) for k in ("tx", "socket", "drops")}
            r["frag"] = {"a_FragCreates": nstat(lab.A, "IpFragCreates"), "r_ReasmOKs": nstat(lab.R, "IpReasmOKs"),
                         "a_OutNoRoutes": nstat(lab.A, "IpOutNoRoutes")}
        if flood:
            r["flood_sent"] = flood["sent"]
        # loss accounting, per direction (counters since the endpoints started; the relay's too)
        acc = {}
        if rel and sta and stb:
            for dname, src, dst, sst, dst_st, rns, dns in (
                    ("ab", RA, RB, sta, stb, lab.R, lab.B), ("ba", RB, RA, stb, sta, lab.R, lab.A)):
                c = rel[dname]
                sa_, da_ = (RA, RB) if dname == "ab" else (RB, RA)
                ss = session(sst, sa_)
                ds = session(dst_st, da_)
                # data datagrams (per-peer counters) plus the peer-session messages
                tx = peer(sst, sa_, "tx_datagrams") + ss.get("hellos_sent", 0) + ss.get("acks_sent", 0)
                rx = peer(dst_st, da_, "rx_datagrams") + ds.get("hellos_received", 0) + ds.get("acks_received", 0)
                fl = flood.get("sent", 0) if dname == "ab" else 0
                relayed = c["out"]
                acc[dname] = {"endpoint_tx": tx, "relay_in": c["in"], "relay_socket_drops": d[lab.R]["RcvbufErrors"],
                              "relay_dropped": c["dropped"], "relay_duplicated": c["duplicated"],
                              "relay_out": relayed, "flood": fl, "endpoint_rx": rx,
                              "rx_csum_errors": d[dns]["InCsumErrors"], "rx_rcvbuf_errors": d[dns]["RcvbufErrors"]}
                acc[dname]["unexplained_in"] = tx - c["in"] - d[lab.R]["RcvbufErrors"]
                acc[dname]["unexplained_out"] = (relayed + fl - rx - d[dns]["InCsumErrors"] -
                                                 d[dns]["RcvbufErrors"])
        r["accounting"] = acc
        if name.startswith("corrupt"):
            m = nsx(lab.B, "nft", "list", "counter", "ip", "ofldfault", "mangled", check=False).stdout
            r["mangled"] = int(m.split("packets ")[1].split()[0]) if "packets " in m else 0
        r["seconds"] = round(time.monotonic() - t0, 1)
    finally:
        lab.down()
        if not os.environ.get("FAULTLAB_KEEP"):  # FAULTLAB_KEEP=1 keeps the endpoints' logs
            shutil.rmtree(lab.run, ignore_errors=True)
    return r


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "relay":
        la, lb, pa, pb, fault, p, seed, nocsum = sys.argv[2:10]
        relay(la, lb, pa, pb, fault, float(p), int(seed), nocsum == "1")
    elif len(sys.argv) > 2 and sys.argv[1] == "cell":
        args = sys.argv[2:]
        name = args[0]
        opt = dict(zip(args[1::2], args[2::2]))
        ofld = opt.get("--ofld", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "release", "ofld"))
        print(json.dumps(cell(name, int(opt.get("--size", "4")), os.path.abspath(ofld),
                              opt.get("--tag", "flt%d" % os.getpid()))), flush=True)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)

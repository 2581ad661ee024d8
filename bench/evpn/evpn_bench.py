#!/usr/bin/env python3
"""bench/evpn: `ofld tunnel ... evpn` at scale (docs/evpn.md "Scale").

In a network namespace of its own: gobgpd (the endpoint's BGP daemon, API on 127.0.0.1:50071),
a route generator peering with it over iBGP (bench/evpn/bgp_speaker.py: ROUTES type-2 routes
from VTEPS VTEPs), and `ofld tunnel vxlan ... evpn`. Measured:
  install      routes in ofld's FDB, from the moment gobgpd holds them all (and from the
               generator's start)
  fdb --json   `ofld fdb --json` of the whole table (median of 5)
  rss          ofld's RSS per route (VmRSS at ROUTES minus before the routes, over ROUTES)
  resync       after gobgpd restarts (SIGKILL, started again; the generator re-peers) and
               after ofld restarts (SIGTERM, started again): until the FDB has every route
               again and the client's route set equals gobgpd's
  churn        (--churn S) 1,000 MAC moves a second for S seconds: reconnects, FDB = RIB at
               the end, how far behind the FDB was at the end of the churn
  withdrawal   the generator's session closed: gobgpd withdraws everything; time until the
               FDB is empty, and RSS after (returned?)
Needs root, gobgpd/gobgp, python3. Usage:
  sudo bench/evpn/evpn_bench.py --ofld build/release/ofld [--routes 100000] [--vteps 1000]
       [--churn 60] [--json OUT]
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
API = "127.0.0.1:50071"
LOCAL, PEER = "10.99.0.1", "10.99.0.2"
# --churn: a second endpoint (static, no EVPN) in a namespace of its own behind a veth pair,
# the far end of a hashed transfer through the EVPN endpoint (bench/xfer.py)
XLOCAL, XPEER, XA, XB = "10.99.1.1", "10.99.1.2", "192.168.77.1", "192.168.77.2"


class Lab:
    def __init__(self, a):
        self.a = a
        self.ns = "ofld-evb-%d" % os.getpid()
        self.ctl = "/run/ofld/evb-%d.sock" % os.getpid()
        self.tmp = "/tmp/ofld-evb-%d" % os.getpid()
        os.makedirs(self.tmp, exist_ok=True)
        os.makedirs("/run/ofld", exist_ok=True)
        self.bgp = self.ofld = self.gen = self.peer = self.xserve = None
        self.nsb = self.ns + "b"

    def sh(self, *cmd, check=True):
        return subprocess.run(["ip", "netns", "exec", self.ns, *cmd], check=check,
                              capture_output=True, text=True)

    def up(self):
        subprocess.run(["ip", "netns", "add", self.ns], check=True)
        self.sh("ip", "link", "set", "lo", "up")
        self.sh("ip", "addr", "add", LOCAL + "/32", "dev", "lo")
        self.sh("ip", "addr", "add", PEER + "/32", "dev", "lo")
        conf = os.path.join(self.tmp, "gobgpd.toml")
        with open(conf, "w") as f:
            f.write('[global.config]\n  as = 65000\n  router-id = "%s"\n  local-address-list = ["%s"]\n'
                    '[[neighbors]]\n  [neighbors.config]\n    neighbor-address = "%s"\n    peer-as = 65000\n'
                    '  [neighbors.transport.config]\n    passive-mode = true\n    local-address = "%s"\n'
                    '  [[neighbors.afi-safis]]\n    [neighbors.afi-safis.config]\n'
                    '      afi-safi-name = "l2vpn-evpn"\n' % (LOCAL, LOCAL, PEER, LOCAL))
        self.conf = conf
        if self.a.churn:
            subprocess.run(["ip", "netns", "add", self.nsb], check=True)
            self.sh("ip", "link", "add", "evbv0", "type", "veth", "peer", "name", "evbv1", "netns", self.nsb)
            self.sh("ip", "addr", "add", XLOCAL + "/24", "dev", "evbv0")
            self.sh("ip", "link", "set", "evbv0", "up")
            for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "addr", "add", XPEER + "/24", "dev", "evbv1"],
                        ["ip", "link", "set", "evbv1", "up"], ["ip", "route", "add", LOCAL + "/32", "via", XLOCAL]):
                subprocess.run(["ip", "netns", "exec", self.nsb, *cmd], check=True)

    def tap_up(self, ns, dev, addr):
        for _ in range(100):
            r = subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "set", dev, "mtu", "1400", "up"],
                               capture_output=True)
            if r.returncode == 0:
                break
            time.sleep(0.05)
        subprocess.run(["ip", "netns", "exec", ns, "ip", "addr", "replace", addr + "/24", "dev", dev], check=True)

    def start_peer(self):
        """The transfer's far end: a static endpoint whose one remote is the EVPN endpoint."""
        log = open(os.path.join(self.tmp, "peer.log"), "a")
        self.peer = subprocess.Popen(["ip", "netns", "exec", self.nsb, self.a.ofld, "tunnel", "--dev", "evx0",
                                      "--control", self.ctl + "b", "vxlan", "id", "100", "local", XPEER,
                                      "remote", LOCAL], stdout=log, stderr=log)
        self.tap_up(self.nsb, "evx0", XB)
        self.xserve = subprocess.Popen(["ip", "netns", "exec", self.nsb, sys.executable,
                                        os.path.join(HERE, "..", "xfer.py"), "serve", XB, "5001"])
        # the sender starts right after: a connection before the server listens is refused
        listening = lambda: subprocess.run(["ip", "netns", "exec", self.nsb, "ss", "-Hltn", "sport", "=", ":5001"],
                                           capture_output=True, text=True).stdout.strip() != ""
        if wait(listening, 20, 0.1) is None:
            raise RuntimeError("the transfer server did not listen within 20 s")

    def start_bgp(self):
        log = open(os.path.join(self.tmp, "gobgpd.log"), "a")
        self.bgp = subprocess.Popen(["ip", "netns", "exec", self.ns, "gobgpd", "-f", self.conf, "-p",
                                     "--api-hosts", API, "--pprof-disable", "-l", "warn"],
                                    stdout=log, stderr=log)

    def start_ofld(self):
        log = open(os.path.join(self.tmp, "ofld.log"), "a")
        self.ofld = subprocess.Popen(["ip", "netns", "exec", self.ns, self.a.ofld, "tunnel", "--dev", "evb0",
                                      "--control", self.ctl, "vxlan", "id", "100", "local", LOCAL,
                                      "evpn-server", API] + (["remote", XPEER] if self.a.churn else []),
                                     stdout=log, stderr=log)
        for _ in range(200):
            if self.query("stats"):
                return
            time.sleep(0.05)
        raise RuntimeError("ofld did not come up: " + open(os.path.join(self.tmp, "ofld.log")).read()[-2000:])

    def start_gen(self):
        self.gen = subprocess.Popen(["ip", "netns", "exec", self.ns, sys.executable,
                                     os.path.join(HERE, "bgp_speaker.py"), LOCAL, "179", "65000",
                                     str(self.a.routes), str(self.a.vteps), "100", PEER,
                                     str(self.a.per_update)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def cpu_s(self, proc):
        """CPU seconds (user + system) of a process we started, or None once it is gone."""
        try:
            with open("/proc/%d/stat" % proc.pid) as f:
                w = f.read().rsplit(")", 1)[1].split()
            return round((int(w[11]) + int(w[12])) / os.sysconf("SC_CLK_TCK"), 2)
        except (OSError, AttributeError, IndexError, ValueError):
            return None

    def ofld_pid(self):
        # `ip netns exec` execs the program: the Popen pid is ofld's
        return self.ofld.pid

    def rss_split_kb(self):
        """VmRSS split by mapping: the main heap ([heap]), anonymous mappings (thread arenas,
        gRPC, stacks) and the rest (the binary and libraries)."""
        out = {"heap": 0, "anon": 0, "other": 0}
        kind = "other"
        with open("/proc/%d/smaps" % self.ofld_pid()) as f:
            for line in f:
                head = line.split()
                if not head:
                    continue
                if not head[0].endswith(":") or "-" in head[0]:
                    kind = "heap" if line.rstrip().endswith("[heap]") else ("anon" if len(head) < 6 else "other")
                elif head[0] == "Rss:":
                    out[kind] += int(head[1])
        return out

    def rss_kb(self):
        with open("/proc/%d/status" % self.ofld_pid()) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def query(self, req):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(30)
            s.connect(self.ctl)
            if req != "stats":
                s.sendall((req + "\n").encode())
            s.shutdown(socket.SHUT_WR)
            out = b""
            while True:
                d = s.recv(1 << 20)
                if not d:
                    break
                out += d
            s.close()
            return json.loads(out)
        except (OSError, ValueError):
            return None

    def fdb_entries(self):
        j = self.query("stats")
        return j.get("fdb", {}).get("entries", -1) if j else -1

    def evpn(self):
        j = self.query("fdb vtep 192.0.2.1")  # a VTEP no route names: just the counters
        return j.get("evpn", {}) if j else {}

    def rib_paths(self):
        r = self.sh("gobgp", "-u", API.split(":")[0], "-p", API.split(":")[1], "global", "rib", "-a",
                    "evpn", "summary", check=False)
        try:
            return int(r.stdout.split("Path:")[1].split()[0].strip(","))
        except (IndexError, ValueError):
            return -1

    def down(self):
        for p in (self.gen, self.ofld, self.bgp, self.peer, self.xserve):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
        subprocess.run(["ip", "netns", "del", self.ns], check=False)
        subprocess.run(["ip", "netns", "del", self.nsb], check=False, capture_output=True)

    def evpn_fdb(self):
        """{MAC: VTEP} of the FDB's EVPN entries (`ofld fdb --json`)."""
        r = subprocess.run([self.a.ofld, "fdb", "--json", "--control", self.ctl], capture_output=True, text=True)
        try:
            j = json.loads(r.stdout)
        except ValueError:
            return None
        return {e["mac"]: e.get("remote", e.get("dst")) for e in j.get("entries", []) if e.get("source") == "evpn"}

    def speaker_state(self):
        """{MAC: VTEP} the speaker advertises now (its `dump FILE` command)."""
        path = os.path.join(self.tmp, "speaker-%d.json" % time.time_ns())
        self.gen.stdin.write("dump %s\n" % path)
        self.gen.stdin.flush()
        for _ in range(200):
            if os.path.exists(path + ".done"):
                with open(path) as f:
                    return json.load(f)
            time.sleep(0.05)
        return None


def wait(cond, timeout, step=0.05):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if cond():
            return time.time() - t0
        time.sleep(step)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ofld", required=True)
    ap.add_argument("--routes", type=int, default=100000)
    ap.add_argument("--vteps", type=int, default=1000)
    ap.add_argument("--churn", type=int, default=0)
    ap.add_argument("--ofld-after", action="store_true",
                    help="start ofld once gobgpd holds the routes (its start-up re-sync; RSS absolute)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds allowed gobgpd to take the routes in")
    ap.add_argument("--per-update", type=int, default=100, help="NLRIs per UPDATE (1..100)")
    ap.add_argument("--gobgpd-only", action="store_true",
                    help="no ofld: time gobgpd taking the speaker's routes in, then stop")
    ap.add_argument("--poll", type=float, default=0.5,
                    help="seconds between `gobgp global rib summary` polls (each is a process)")
    ap.add_argument("--hold", type=float, default=0,
                    help="seconds to wait after the withdrawal of all before the teardown")
    ap.add_argument("--json")
    a = ap.parse_args()
    a.ofld = os.path.abspath(a.ofld)
    N = a.routes
    res = {"routes": N, "vteps": a.vteps, "nlris_per_update": a.per_update}
    L = Lab(a)
    try:
        L.up()
        L.start_bgp()
        time.sleep(0.5)
        if a.gobgpd_only:  # gobgpd and the speaker alone: is the ingest rate ours?
            t0 = time.time()
            L.start_gen()
            marks = []
            while True:
                n = L.rib_paths()
                marks.append((round(time.time() - t0, 1), n, L.cpu_s(L.bgp)))
                if n >= N or time.time() - t0 > a.timeout:
                    break
                time.sleep(a.poll)
            res["gobgpd_holding_s_from_start"] = round(time.time() - t0, 3) if n >= N else None
            res["gobgpd_cpu_s"] = L.cpu_s(L.bgp)
            res["gobgpd_progress"] = marks[::max(1, len(marks) // 20)] + marks[-1:]
            print(json.dumps(res), flush=True)
            return
        if a.ofld_after:  # gobgpd takes the routes in first (no watcher), then ofld starts
            t0 = time.time()
            L.start_gen()
            t_rib = wait(lambda: L.rib_paths() >= N, a.timeout, a.poll)
            if t_rib is None:  # gobgpd did not take them all in within --timeout: say so, stop
                res["gobgpd_routes_at_timeout"] = L.rib_paths()
                res["gobgpd_cpu_s"] = L.cpu_s(L.bgp)
                print(json.dumps(res), flush=True)
                return
            print("gobgpd holds %d routes after %.1f s" % (N, time.time() - t0), flush=True)
        t_ofld = time.time()
        L.start_ofld()
        if wait(lambda: L.evpn().get("connected"), 20) is None:
            raise RuntimeError("ofld never connected to gobgpd")
        if not a.ofld_after:
            time.sleep(1)
            rss0 = L.rss_kb()
            res["rss_split_kb_before"] = L.rss_split_kb()
            t0 = time.time()
            L.start_gen()
            t_rib = wait(lambda: L.rib_paths() >= N, a.timeout, a.poll)
        else:
            rss0 = 0
        t_rib_at = time.time()
        t_fdb = wait(lambda: L.fdb_entries() >= N, 300)
        res["install_s_from_gobgpd_holding"] = round(time.time() - t_rib_at, 3) if t_fdb is not None else None
        res["install_s_from_start"] = round(time.time() - t0, 3) if t_fdb is not None else None
        res["gobgpd_holding_s_from_start"] = round(t_rib, 3) if t_rib is not None else None
        if a.ofld_after and t_fdb is not None:  # the start-up re-synchronisation (ListPath)
            res["ofld_start_resync_s"] = round(time.time() - t_ofld, 3)
            res["gobgpd_cpu_s_at_routes"] = L.cpu_s(L.bgp)
        time.sleep(2)
        rss1 = L.rss_kb()
        res["rss_kb_before"], res["rss_kb_at_routes"] = rss0, rss1
        res["rss_bytes_per_route"] = round((rss1 - rss0) * 1024 / N, 1) if rss0 else None
        ts = []
        for _ in range(5):
            t = time.time()
            r = subprocess.run([a.ofld, "fdb", "--json", "--control", L.ctl], capture_output=True)
            ts.append(time.time() - t)
            if r.returncode != 0:
                res["fdb_json_error"] = (r.returncode, r.stderr[:300].decode(errors="replace"))
        res["fdb_json_s_median"] = round(statistics.median(ts), 3)
        res["fdb_json_bytes"] = len(r.stdout)
        print(json.dumps(res), flush=True)
        if not a.ofld_after:  # gobgpd restart (its re-ingest is slow with a watcher)
            c0 = L.evpn().get("connects", 0)
            L.bgp.kill()
            L.bgp.wait()
            t = time.time()
            L.start_bgp()
            t_b = wait(lambda: L.rib_paths() >= N, a.timeout, a.poll)
            t_b_at = time.time()
            ok = wait(lambda: (lambda e: e.get("connects", 0) > c0 and e.get("mac_routes", 0) >= N and
                               e.get("stale_routes", 1) == 0)(L.evpn()), 120, 0.1)
            res["gobgpd_restart_holding_again_s"] = round(t_b, 3) if t_b is not None else None
            res["resync_s_after_gobgpd_holding_again"] = round(time.time() - t_b_at, 3) if ok is not None else None
            res["fdb_entries_after_gobgpd_restart"] = L.fdb_entries()
            print(json.dumps(res), flush=True)
        # ofld restart
        L.ofld.terminate()
        L.ofld.wait()
        t = time.time()
        L.start_ofld()
        ok = wait(lambda: L.fdb_entries() >= N, 300)
        res["resync_s_after_ofld_restart"] = round(time.time() - t, 3) if ok is not None else None
        time.sleep(2)
        res["rss_kb_at_routes_after_ofld_restart"] = L.rss_kb()
        res["rss_split_kb_at_routes_after_ofld_restart"] = L.rss_split_kb()
        if a.churn:
            time.sleep(1)
            L.tap_up(L.ns, "evb0", XA)  # only now: its local MAC is no entry of the counts above
            L.start_peer()
            c0 = L.evpn().get("connects", 0)
            blob = os.path.join(L.tmp, "xfer.bin")
            with open(blob, "wb") as f:
                f.write(os.urandom(4 << 20))
            xfer = subprocess.Popen(["ip", "netns", "exec", L.ns, sys.executable, os.path.join(HERE, "..", "xfer.py"),
                                     "send", XB, "5001", blob, str(a.churn + 2)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1)
            cpu0 = (L.cpu_s(L.ofld), L.cpu_s(L.bgp))
            L.gen.stdin.write("moves 1000 %d\n" % a.churn)
            L.gen.stdin.flush()
            t = time.time()
            time.sleep(a.churn + 0.5)
            e = L.evpn()
            res["churn_reconnects"] = e.get("connects", 0) - c0
            res["churn_cpu_s_ofld_gobgpd"] = [round(L.cpu_s(L.ofld) - cpu0[0], 2), round(L.cpu_s(L.bgp) - cpu0[1], 2)]
            out, err = xfer.communicate(timeout=120)
            res["churn_transfer"] = out.strip() + (" rc=%d" % xfer.returncode)
            if err.strip():
                res["churn_transfer_errors"] = err.strip()[-300:]
            want = L.speaker_state()
            res["churn_moves_sent"] = want.pop("_moved", None) if want else None

            def equal():
                got = L.evpn_fdb()
                return got is not None and want is not None and got == want and \
                    L.evpn().get("mac_routes") == len(want)
            ok = wait(equal, 60, 0.5)
            res["churn_fdb_equals_rib_s_after_end"] = round(time.time() - t - a.churn, 3) if ok is not None else None
            if ok is None:
                got = L.evpn_fdb() or {}
                res["churn_fdb_differs"] = sum(1 for m, v in want.items() if got.get(m) != v) if want else None
            res["churn_moves_counted"] = L.evpn().get("moves")
            # gobgpd's RIB: the speaker's routes, our type-3 and the TAP's local MAC (type-2)
            res["churn_rib_paths"] = L.rib_paths()
            print(json.dumps(res), flush=True)
            L.peer.terminate()
            L.peer.wait()
            L.peer = None
        # mass withdrawal
        L.gen.stdin.write("quit\n")
        L.gen.stdin.flush()
        t = time.time()
        # the route set empty, then the FDB's EVPN entries (learned and local ones stay)
        ok = wait(lambda: L.evpn().get("mac_routes", -1) == 0, 60)
        res["withdraw_all_s"] = round(time.time() - t, 3) if ok is not None else None
        res["evpn_fdb_entries_after_withdraw_all"] = len(L.evpn_fdb() or {})
        time.sleep(3)
        res["rss_kb_after_withdraw_all"] = L.rss_kb()
        res["rss_split_kb_after_withdraw_all"] = L.rss_split_kb()
        res["heap_trims_after_withdraw_all"] = L.evpn().get("heap_trims")
        # gRPC keeps part of its read-ahead a while after a burst: RSS once more, later
        time.sleep(27)
        res["rss_kb_30s_after_withdraw_all"] = L.rss_kb()
        res["rss_split_kb_30s_after_withdraw_all"] = L.rss_split_kb()
        if a.hold:  # time to attach a profiler or gdb to the endpoint before the teardown
            print("holding %d s: ofld pid %d" % (a.hold, L.ofld_pid()), flush=True)
            time.sleep(a.hold)
            # after a churn the mobility records expire 180 s after the last move (RFC 7432
            # §15.1 as FRR): a hold past that shows what stays once they are gone too
            res["rss_kb_end_of_hold"] = L.rss_kb()
            res["rss_split_kb_end_of_hold"] = L.rss_split_kb()
            res["heap_trims_end_of_hold"] = L.evpn().get("heap_trims")
        # an ofld started fresh holds this much with no routes: RSS "returned" is relative to it
    finally:
        L.down()
    res["machine"] = "shared 2-core VM, other builds running (absolute times noisy)"
    print(json.dumps(res, indent=2))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A small BGP speaker that advertises EVPN type-2 routes (bench/evpn).

It connects to a BGP peer (gobgpd, configured with this speaker as a passive iBGP neighbour),
opens a session for l2vpn-evpn (RFC 4271 OPEN, RFC 4760 multiprotocol capability AFI 25 /
SAFI 70, RFC 6793 4-octet AS), and sends ROUTES type-2 MAC/IP routes (RFC 7432 §7.2, MAC
only) spread over VTEPS next hops 10.100.X.Y, in UPDATEs of up to 100 NLRIs sharing one next
hop (MP_REACH_NLRI, RFC 4760 §3; PER_UPDATE, the 8th argument, changes the 100), with route target AS:VNI (RFC 8365 §5.1.2.1) and the VXLAN
encapsulation community (RFC 9012, tunnel type 8). When the session ends it reconnects and
sends them again. Commands on stdin, one a line:
  moves N SECONDS   re-advertise N routes a second (round robin) with the MAC at another VTEP
                    and a higher MAC Mobility sequence number (RFC 7432 §7.7)
  dump FILE         write {MAC: VTEP} of every route as advertised now (and "_moved": the
                    moves sent so far) to FILE as JSON, then create FILE.done
  quit              close the session (the peer withdraws every route of it) and exit
(End of input is not quit: the session stays until the process is stopped.)
Prints "established" and "sent N" lines on stdout.
"""
import json
import select
import socket
import struct
import sys
import time

AFI_L2VPN, SAFI_EVPN = 25, 70


def msg(t, body):
    return b"\xff" * 16 + struct.pack("!HB", 19 + len(body), t) + body


def open_msg(asn, bgp_id):
    caps = bytes([1, 4]) + struct.pack("!HBB", AFI_L2VPN, 0, SAFI_EVPN)  # RFC 4760 §8
    caps += bytes([65, 4]) + struct.pack("!I", asn)                        # RFC 6793
    params = bytes([2, len(caps)]) + caps
    return msg(1, struct.pack("!BHH4sB", 4, asn if asn < 65536 else 23456, 90,
                              socket.inet_aton(bgp_id), len(params)) + params)


def vtep(i):
    return "10.100.%d.%d" % (i // 250, i % 250 + 1)


def mac(i):
    return struct.pack("!HI", 0x0200, i)  # 02:00:xx:xx:xx:xx, locally administered


def type2_nlri(rd_ip, vni, m):
    rd = struct.pack("!H4sH", 1, socket.inet_aton(rd_ip), vni & 0xFFFF)  # RFC 7432 §7.9 type 1
    body = rd + b"\x00" * 10 + struct.pack("!I", 0) + bytes([48]) + m + bytes([0])
    body += struct.pack("!I", vni)[1:]  # one label field: the 24-bit VNI (RFC 8365 §5.1.3)
    return bytes([2, len(body)]) + body


def attr(flags, t, v):
    if len(v) > 255:
        return struct.pack("!BBH", flags | 0x10, t, len(v)) + v
    return struct.pack("!BBB", flags, t, len(v)) + v


def update(asn, vni, nh, nlris, seq=None):
    ec = struct.pack("!BBHI", 0x00, 0x02, asn & 0xFFFF, vni)  # route target AS:VNI
    ec += struct.pack("!BB", 0x03, 0x0C) + b"\x00" * 4 + struct.pack("!H", 8)  # encapsulation: VXLAN
    if seq is not None:
        ec += struct.pack("!BBBBI", 0x06, 0x00, 0, 0, seq)  # MAC Mobility
    mp = struct.pack("!HBB", AFI_L2VPN, SAFI_EVPN, 4) + socket.inet_aton(nh) + b"\x00" + b"".join(nlris)
    pa = attr(0x40, 1, b"\x00")                   # ORIGIN IGP
    pa += attr(0x40, 2, b"")                      # AS_PATH (iBGP: empty)
    pa += attr(0x40, 5, struct.pack("!I", 100))   # LOCAL_PREF
    pa += attr(0xC0, 16, ec)                      # EXTENDED COMMUNITIES
    pa += attr(0x80, 14, mp)                      # MP_REACH_NLRI
    return msg(2, struct.pack("!H", 0) + struct.pack("!H", len(pa)) + pa)


def withdraw(nlris):
    mp = struct.pack("!HB", AFI_L2VPN, SAFI_EVPN) + b"".join(nlris)
    pa = attr(0x80, 15, mp)                       # MP_UNREACH_NLRI (RFC 4760 §4)
    return msg(2, struct.pack("!H", 0) + struct.pack("!H", len(pa)) + pa)


def read_msg(s, buf):
    while len(buf) < 19 or len(buf) < struct.unpack("!H", buf[16:18])[0]:
        d = s.recv(65536)
        if not d:
            raise ConnectionError("closed")
        buf += d
    n = struct.unpack("!H", buf[16:18])[0]
    return buf[18], buf[19:n], buf[n:]


def main():
    peer, port, asn, routes, vteps, vni = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    bgp_id = sys.argv[7] if len(sys.argv) > 7 else "10.99.0.2"
    per_update = int(sys.argv[8]) if len(sys.argv) > 8 else 100
    per_vtep = (routes + vteps - 1) // vteps
    at = {}  # route index -> (vtep index, seq)
    for i in range(routes):
        at[i] = (i // per_vtep, 0)
    quit_ = False
    stdin_open = True
    moved_total = 0
    while not quit_:
        try:
            s = socket.create_connection((peer, port), timeout=2, source_address=(bgp_id, 0))
        except OSError:
            time.sleep(0.2)
            continue
        s.settimeout(None)
        try:
            s.sendall(open_msg(asn, bgp_id))
            buf = b""
            while True:
                t, body, buf = read_msg(s, buf)
                if t == 1:
                    s.sendall(msg(4, b""))
                elif t == 4:
                    break
                elif t == 3:
                    raise ConnectionError("NOTIFICATION %s" % body[:2].hex())
            print("established", flush=True)
            t0 = time.time()
            by_vtep = {}
            for i, (v, seq) in at.items():
                by_vtep.setdefault((v, seq), []).append(i)
            sent = 0
            out = []
            for (v, seq), idx in by_vtep.items():
                for k in range(0, len(idx), per_update):
                    nl = [type2_nlri(vtep(v), vni, mac(i)) for i in idx[k:k + per_update]]
                    out.append(update(asn, vni, vtep(v), nl, seq if seq else None))
                    sent += len(nl)
                if len(out) >= 64:
                    s.sendall(b"".join(out))
                    out = []
            s.sendall(b"".join(out) + msg(2, struct.pack("!HH", 0, 6) +
                                          attr(0x80, 15, struct.pack("!HB", AFI_L2VPN, SAFI_EVPN))))  # End-of-RIB (RFC 4724 §2)
            print("sent %d %.3f" % (sent, time.time() - t0), flush=True)
            last_ka = time.time()
            moving = None  # (per second, until, next index)
            while True:
                r, _, _ = select.select([s] + ([sys.stdin] if stdin_open else []), [], [], 0.01)
                if s in r:
                    d = s.recv(65536)
                    if not d:
                        raise ConnectionError("closed")
                if stdin_open and sys.stdin in r:
                    line = sys.stdin.readline()
                    w = line.split()
                    if not line:  # no commands (stdin closed or /dev/null): keep the session
                        stdin_open = False
                    elif w and w[0] == "quit":
                        quit_ = True
                        break
                    if w and w[0] == "dump" and len(w) > 1:
                        st = {":".join("%02x" % b for b in mac(i)): vtep(v) for i, (v, _) in at.items()}
                        st["_moved"] = moved_total
                        with open(w[1], "w") as f:
                            json.dump(st, f)
                        open(w[1] + ".done", "w").close()
                    if w and w[0] == "moves":
                        moving = [int(w[1]), time.time() + float(w[2]), 0, time.time(), 0]
                if moving and time.time() < moving[1]:
                    due = int((time.time() - moving[3]) * moving[0]) - moving[4]
                    ups = []
                    for _ in range(max(0, due)):
                        i = moving[2] % routes
                        moving[2] += 1
                        v0, seq = at[i]
                        v = (v0 + 1) % vteps
                        seq += 1
                        at[i] = (v, seq)
                        ups.append(update(asn, vni, vtep(v), [type2_nlri(vtep(v), vni, mac(i))], seq))
                        # then the PE it left withdraws its route (RFC 7432 §15: it saw the
                        # higher sequence number of the new one)
                        ups.append(withdraw([type2_nlri(vtep(v0), vni, mac(i))]))
                    if ups:
                        s.sendall(b"".join(ups))
                        moving[4] += len(ups) // 2
                        moved_total += len(ups) // 2
                elif moving:
                    print("moved %d" % moving[4], flush=True)
                    moving = None
                if time.time() - last_ka > 10:
                    s.sendall(msg(4, b""))
                    last_ka = time.time()
        except (ConnectionError, OSError) as e:
            print("session ended: %s" % e, flush=True)
            time.sleep(0.2)
        finally:
            s.close()


if __name__ == "__main__":
    main()

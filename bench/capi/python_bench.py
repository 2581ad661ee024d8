#!/usr/bin/env python3
"""Python (the ofld package) vs the C API for the same work, alternating rounds, medians.

    bench/capi/python_bench.sh [--rounds R] [--bench build/release/capi_bench]
    (installs the package into a temporary venv, as scripts/test-python does, and runs this)

gso: one 64 KB TCPv4 TSO read with its virtio_net_hdr, segmented (45 segments, checksums
summed) into one output buffer: ofld.Gso.segment vs ofld_gso_run + ofld_gso_copy_all.
gro: a 64-frame batch of one TCP flow received, flushed, aggregates taken with their
virtio_net_hdr: ofld.Gro.receive + flush vs ofld_gro_receive + _flush + _next_all.
Each round runs the C program (capi_bench --only c-gso|c-gro) and then the Python loop (order
flipped every round); the C number is measured in its own process, on the same machine, in
the same minute.
"""
import argparse
import os
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import ofld  # the installed package (it carries the compiled ofld._native)
except ImportError as e:
    sys.exit(f"python_bench: {e}; run it with a Python that has ofld installed, "
             "e.g. bench/capi/python_bench.sh")


def fold(data: bytes, s: int = 0) -> int:
    if len(data) % 2:
        data += b"\0"
    for (w,) in struct.iter_unpack("!H", data):
        s += w
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def tcp(payload: bytes, seq: int) -> bytes:
    src, dst = b"\x0a\0\0\x01", b"\x0a\0\0\x02"
    t = struct.pack("!HHIIBBHHH", 40000, 5201, seq, 1, 5 << 4, 0x10, 502, 0, 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 1000, 0x4000, 64, 6,
                               0, src, dst))
    struct.pack_into("!H", ip, 10, ~fold(bytes(ip)) & 0xFFFF)
    c = ~fold(src + dst + struct.pack("!BBH", 0, 6, 20 + len(payload)) + t + payload) & 0xFFFF
    t = t[:16] + struct.pack("!H", c) + t[18:]
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + bytes(ip) + t + payload


def py_ns(f, iters):
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        f()
    return (time.perf_counter_ns() - t0) / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--bench", default=os.path.join(HERE, "..", "..", "build", "release",
                                                    "capi_bench"))
    a = ap.parse_args()
    payload = bytes((i * 7) & 0xFF for i in range(44 * 1448 + 700))
    hdr, frame = ofld.vnet_build(tcp(payload, 0x11223344), gso_size=1448)
    gso = ofld.Gso()
    frames = [tcp(bytes([0x61]) * 1448, 1000 + i * 1448) for i in range(64)]
    gro = ofld.Gro(flow_hash_key=0)

    def py_gso():
        gso.segment(frame, vnet_hdr=hdr)

    def py_gro():
        gro.receive(frames)
        gro.flush(all=False)

    assert len(gso.segment(frame, vnet_hdr=hdr)) == 45
    res = {"gso": ([], []), "gro": ([], [])}
    for r in range(a.rounds):
        for name, f in (("gso", py_gso), ("gro", py_gro)):
            def c():
                out = subprocess.run([a.bench, "--only", "c-" + name, "--rounds", "3", "--iters",
                                      str(a.iters)], check=True, capture_output=True, text=True)
                return float(out.stdout)
            def p():
                py_ns(f, a.iters // 10)
                return py_ns(f, a.iters)
            if r % 2:
                pv, cv = p(), c()
            else:
                cv, pv = c(), p()
            res[name][0].append(cv)
            res[name][1].append(pv)
    print(f"python_bench: {a.rounds} alternating rounds, medians (ofld {ofld.version()}, ctypes + pybind11 batch calls)")
    for name, what in (("gso", "64 KB TSO read, 45 segments"), ("gro", "64-frame batch")):
        cs, ps = res[name]
        ratios = [p / c for c, p in zip(cs, ps)]
        print(f"  {name} {what}: C API {statistics.median(cs):.0f} ns, Python "
              f"{statistics.median(ps):.0f} ns, Python/C {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()

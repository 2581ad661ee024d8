"""bench/xfer.py — hashed file transfers over TCP, for bench/soak.

  xfer.py serve ADDR PORT            accept transfers one at a time, forever (until SIGTERM):
                                     each is [8-byte length][32-byte SHA-256][data]; the
                                     receiver hashes what arrived and answers b"OK" or b"BAD"
  xfer.py send ADDR PORT FILE SECS   send FILE again and again for SECS seconds; prints
                                     "transfers=N bytes=B bad=K errors=E" (exit 1 if K or E > 0)
"""
import hashlib
import os
import socket
import struct
import sys
import time


def recv_exact(c, n):
    buf = bytearray()
    while len(buf) < n:
        b = c.recv(min(1 << 20, n - len(buf)))
        if not b:
            raise ConnectionError("short read")
        buf += b
    return bytes(buf)


def serve(addr, port):
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(4)
    while True:
        c, _ = s.accept()
        try:
            n, want = struct.unpack("!Q32s", recv_exact(c, 40))
            h = hashlib.sha256()
            left = n
            while left:
                b = c.recv(min(1 << 20, left))
                if not b:
                    raise ConnectionError("short read")
                h.update(b)
                left -= len(b)
            c.sendall(b"OK" if h.digest() == want else b"BAD")
        except OSError:
            pass
        finally:
            c.close()


def send(addr, port, path, secs):
    data_len = os.path.getsize(path)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    digest = h.digest()
    end = time.time() + secs
    n = nbytes = bad = errors = 0
    while time.time() < end:
        try:
            with socket.create_connection((addr, port), timeout=60) as c, open(path, "rb") as f:
                c.sendall(struct.pack("!Q32s", data_len, digest))
                c.sendfile(f)
                c.shutdown(socket.SHUT_WR)
                answer = recv_exact(c, 2)
                if answer == b"OK":
                    n += 1
                    nbytes += data_len
                else:
                    bad += 1
        except OSError as e:
            errors += 1
            print(f"xfer: transfer error: {e}", file=sys.stderr)
            time.sleep(0.5)
    print(f"transfers={n} bytes={nbytes} bad={bad} errors={errors}")
    return 1 if bad or errors else 0


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(send(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])))

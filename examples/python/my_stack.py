"""A toy user-space stack's TCP/IPv4 segmentation (what test_my_stack_gso.py checks): the kind
of code the ofld Python package exists to check. Written from RFC 791/793/1071 alone."""
import struct


def _fold(data: bytes, s: int = 0) -> int:
    if len(data) % 2:
        data += b"\0"
    for (w,) in struct.iter_unpack("!H", data):
        s += w
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def tso_frame(payload_len: int, seq: int = 1000) -> bytes:
    """Ethernet + IPv4 (DF) + TCP (ACK|PSH) + payload, checksums valid."""
    payload = bytes((i * 7 + 3) & 0xFF for i in range(payload_len))
    return _build(payload, seq, 0x18, 1)


def _build(payload: bytes, seq: int, flags: int, ip_id: int) -> bytes:
    src, dst = b"\x0a\0\0\x01", b"\x0a\0\0\x02"
    tcp = struct.pack("!HHIIBBHHH", 40000, 5201, seq, 1, 5 << 4, flags, 65535, 0, 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), ip_id, 0x4000, 64,
                               6, 0, src, dst))
    struct.pack_into("!H", ip, 10, ~_fold(bytes(ip)) & 0xFFFF)
    c = ~_fold(src + dst + struct.pack("!BBH", 0, 6, 20 + len(payload)) + tcp + payload) & 0xFFFF
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00" + bytes(ip) + tcp + payload


def segment(frame: bytes, mss: int) -> list:
    """Split a TCP/IPv4 super-frame into mss-sized segments: IP ID +1 per segment, sequence
    numbers advancing, PSH/FIN only on the last segment, checksums recomputed."""
    ip_id = struct.unpack_from("!H", frame, 18)[0]
    seq = struct.unpack_from("!I", frame, 38)[0]
    flags = frame[47]
    payload = frame[54:]
    chunks = [payload[i:i + mss] for i in range(0, len(payload), mss)] or [b""]
    out = []
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1
        f = flags if last else flags & ~0x09  # PSH and FIN only on the last
        out.append(_build(chunk, (seq + i * mss) & 0xFFFFFFFF, f, (ip_id + i) & 0xFFFF))
    return out

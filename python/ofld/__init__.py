"""ofld: kernel-exact network offloads from Python.

Checksums, virtio_net_hdr, GSO, GRO, VXLAN/GUE/GRE encapsulation and capture verification,
computed by libofld's engines through its stable C API (include/ofld/ofld.h) with ctypes.
Inputs are any bytes-like object (bytes, bytearray, memoryview, numpy arrays); bytes and
writable buffers are passed without a copy. Errors raise OfldError subclasses named by the
reason class, with the engine's reason string in ``.reason`` (e.g. "csum-outside-frame").

    >>> import ofld
    >>> segs = ofld.gso(frame, mss=1448)          # list of Segment
    >>> gro = ofld.Gro(); gro.receive(frames); merged = gro.flush()

Documentation: docs/python.md.
"""
import ctypes
import os
import struct
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Union

from . import _capi as _c
from . import _native  # after _capi: links the libofld.so that _capi loaded (its SONAME)

__all__ = [
    "OfldError", "InvalidArgument", "BufferTooSmall", "VnetHdrRejected", "GsoRefused",
    "UnknownFeature", "TunnelDrop", "FrameParseError", "CaptureFileError",
    "VnetHdr", "Segment", "Gso", "Gro", "Tunnel",
    "csum", "csum_partial", "csum_fold", "csum_fold16", "csum_add", "csum_replace2",
    "csum_replace4", "pseudo_header_sum", "features", "vnet_validate", "vnet_build", "gso",
    "vxlan_encap", "vxlan_decap", "gue_encap", "gue_decap", "gre_encap", "gre_decap",
    "verify", "gso_pcap", "gro_pcap", "version", "api_version",
    "CSUM_NONE", "CSUM_UNNECESSARY", "CSUM_COMPLETE", "CSUM_PARTIAL",
]

CSUM_NONE, CSUM_UNNECESSARY, CSUM_COMPLETE, CSUM_PARTIAL = 0, 1, 2, 3
_CSUM_NAMES = {"none": 0, "unnecessary": 1, "complete": 2, "partial": 3}
_LINKS = {"ethernet": 0, "eth": 0, "raw": 1, "raw_ip": 1, "ip": 1, "tun": 1}

if _c.ofld_api_version() // 10000 != _c.API_VERSION // 10000:
    raise ImportError(f"ofld: libofld API {_c.ofld_api_version()} is not major "
                      f"{_c.API_VERSION // 10000}")


# ---- errors -----------------------------------------------------------------------------------

class OfldError(Exception):
    """Base of every ofld error. ``code``: the C status; ``reason``: the engine's reason."""

    def __init__(self, code: int, reason: str):
        self.code = code
        self.reason = reason
        what = _c.ofld_strerror(code).decode()
        super().__init__(f"{what}: {reason}" if reason else what)


class InvalidArgument(OfldError, ValueError):
    """A bad argument (OFLD_E_INVAL)."""


class BufferTooSmall(OfldError):
    """A caller-provided buffer is too small (OFLD_E_NOSPC)."""


class VnetHdrRejected(OfldError, ValueError):
    """The virtio_net_hdr was refused as a TAP write refuses it (S-1..S-4)."""


class GsoRefused(OfldError):
    """The GSO engine refused the frame (reason: bad-gso-type, header-truncated, ...)."""


class UnknownFeature(OfldError, ValueError):
    """An unknown ethtool feature name."""


class TunnelDrop(OfldError):
    """The tunnel dropped the frame (reason: rx_wrong_vni, rx_gre_csum_bad, ...)."""


class FrameParseError(OfldError, ValueError):
    """The frame cannot be parsed."""


class CaptureFileError(OfldError, OSError):
    """A capture file cannot be opened or read."""


_ERRORS = {-1: InvalidArgument, -2: BufferTooSmall, -3: VnetHdrRejected, -4: GsoRefused,
           -5: UnknownFeature, -6: TunnelDrop, -7: FrameParseError, -8: CaptureFileError,
           -9: MemoryError}


def _raise(code: int):
    reason = _c.ofld_last_reason().decode(errors="replace")
    cls = _ERRORS.get(code, OfldError)
    if cls is MemoryError:
        raise MemoryError(reason)
    raise cls(code, reason)


def _check(code: int):
    if code != 0:
        _raise(code)


# ---- buffers ----------------------------------------------------------------------------------

def _ptr(obj):
    """(argument for a const uint8_t*, length, keep-alive) without a copy where possible."""
    if isinstance(obj, bytes):
        return obj, len(obj), obj
    mv = memoryview(obj)
    n = mv.nbytes
    if n == 0:
        return None, 0, None
    if not mv.readonly and mv.c_contiguous:
        a = (ctypes.c_char * n).from_buffer(mv)
        return a, n, (a, mv)
    if isinstance(mv.obj, bytes) and mv.c_contiguous and n == len(mv.obj):
        return mv.obj, n, mv.obj
    b = mv.tobytes()  # read-only non-bytes buffer: one copy
    return b, n, b


def _link(link) -> int:
    if isinstance(link, int):
        return link
    try:
        return _LINKS[link]
    except KeyError:
        raise InvalidArgument(-1, f"unknown link {link!r} (ethernet or raw_ip)") from None


# ---- versions, checksums ----------------------------------------------------------------------

def version() -> str:
    """libofld's release version, e.g. "0.1.0"."""
    return _c.ofld_version().decode()


def api_version() -> int:
    """The C API version of the loaded library (major * 10000 + minor * 100 + patch)."""
    return _c.ofld_api_version()


def csum_partial(buf, seed: int = 0) -> int:
    """Unfolded 32-bit ones'-complement sum of buf plus seed (kernel csum_partial)."""
    p, n, _k = _ptr(buf)
    return _c.ofld_csum_partial(p, n, seed)


def csum(buf) -> int:
    """Internet checksum of buf (RFC 1071): the value a checksum field holds, ~fold(sum)."""
    p, n, _k = _ptr(buf)
    return _c.ofld_ip_compute_csum(p, n)


def csum_fold(wsum: int) -> int:
    """Fold a 32-bit sum to 16 bits and complement (kernel csum_fold)."""
    return _c.ofld_csum_fold(wsum)


def csum_fold16(wsum: int) -> int:
    """Fold a 32-bit sum to 16 bits without complementing (a CHECKSUM_PARTIAL seed)."""
    return _c.ofld_csum_fold16(wsum)


def csum_add(a: int, b: int) -> int:
    """32-bit ones'-complement add (kernel csum_add)."""
    return _c.ofld_csum_add(a, b)


def csum_replace2(check: int, old: int, new: int) -> int:
    """RFC 1624 eqn. 3 update of a checksum field for a changed 16-bit word."""
    return _c.ofld_csum_replace2(check, old, new)


def csum_replace4(check: int, old: int, new: int) -> int:
    """RFC 1624 update for a changed 32-bit word (e.g. an IPv4 address)."""
    return _c.ofld_csum_replace4(check, old, new)


def pseudo_header_sum(saddr: bytes, daddr: bytes, length: int, proto: int, seed: int = 0) -> int:
    """Unfolded IPv4 (4-byte addresses) or IPv6 (16-byte) pseudo-header sum plus seed;
    csum_fold16() of it is the CHECKSUM_PARTIAL seed of a TCP/UDP header (C-12)."""
    saddr, daddr = bytes(saddr), bytes(daddr)
    if len(saddr) == len(daddr) == 4:
        return _c.ofld_csum_tcpudp_nofold(saddr, daddr, length, proto, seed)
    if len(saddr) == len(daddr) == 16:
        return _c.ofld_csum_ipv6_nofold(saddr, daddr, length, proto, seed)
    raise InvalidArgument(-1, "addresses must both be 4 (IPv4) or 16 (IPv6) bytes")


def features(names: Union[str, int, None]) -> int:
    """NETIF_F_* bits of a comma-separated ethtool feature list ("tx-scatter-gather,
    tx-checksum-ip-generic", aliases "sg", "tso", ...; "none"). An int passes through."""
    if names is None:
        return 0
    if isinstance(names, int):
        return names
    bits = _c.c_u64()
    _check(_c.ofld_features_parse(names.encode(), ctypes.byref(bits)))
    return bits.value


_VNET_C = struct.Struct("=BBHHHH")  # struct ofld_vnet_hdr, host order, no padding
if _VNET_C.size != _native.VNET_HDR_SIZE:
    raise ImportError("ofld: struct ofld_vnet_hdr of ofld._native differs from the binding's")


# ---- virtio_net_hdr ---------------------------------------------------------------------------

@dataclass
class VnetHdr:
    """struct virtio_net_hdr (10 bytes, legacy). Values host order."""
    flags: int = 0
    gso_type: int = 0
    hdr_len: int = 0
    gso_size: int = 0
    csum_start: int = 0
    csum_offset: int = 0

    NEEDS_CSUM = 1
    DATA_VALID = 2
    GSO_NONE, GSO_TCPV4, GSO_UDP, GSO_TCPV6, GSO_UDP_L4, GSO_ECN = 0, 1, 3, 4, 5, 0x80

    def _raw(self) -> bytes:
        """The struct ofld_vnet_hdr (host order) as bytes, for ofld._native."""
        return _VNET_C.pack(self.flags, self.gso_type, self.hdr_len, self.gso_size,
                            self.csum_start, self.csum_offset)

    def _c(self) -> "_c.VnetHdrC":
        return _c.VnetHdrC(self.flags, self.gso_type, self.hdr_len, self.gso_size,
                           self.csum_start, self.csum_offset)

    @classmethod
    def _from_c(cls, h) -> "VnetHdr":
        return cls(h.flags, h.gso_type, h.hdr_len, h.gso_size, h.csum_start, h.csum_offset)

    def pack(self, little_endian: bool = True) -> bytes:
        """The 10 bytes (little-endian fields: TUNSETVNETLE / virtio 1.0)."""
        out = ctypes.create_string_buffer(10)
        h = self._c()
        _check(_c.ofld_vnet_hdr_store(ctypes.byref(h), int(little_endian), out, 10))
        return out.raw

    @classmethod
    def unpack(cls, buf, little_endian: bool = True) -> "VnetHdr":
        """Decode the first 10 bytes of buf."""
        p, n, _k = _ptr(buf)
        h = _c.VnetHdrC()
        _check(_c.ofld_vnet_hdr_load(p, n, int(little_endian), ctypes.byref(h)))
        return cls._from_c(h)


def vnet_validate(hdr: VnetHdr, frame, link="ethernet") -> None:
    """Check hdr with its frame as a TAP write does (virtio_net_hdr_to_skb, S-1..S-5);
    raises VnetHdrRejected with the reason (e.g. "csum-outside-frame")."""
    p, n, _k = _ptr(frame)
    h = hdr._c()
    _check(_c.ofld_vnet_validate(ctypes.byref(h), p, n, _link(link), None))


def vnet_build(frame, gso_size: int = 0, link="ethernet", input_seeds: bool = False):
    """The virtio_net_hdr the kernel gives `frame` for GSO with gso_size (S-7/S-8), and the
    frame as it must then be written: its L4 checksum field holding the pseudo-header seed.
    Returns (VnetHdr, bytes)."""
    buf = bytearray(frame)
    n = _c.c_size(len(buf))
    h = _c.VnetHdrC()
    a = (ctypes.c_char * len(buf)).from_buffer(buf) if buf else None
    _check(_c.ofld_vnet_build(a, ctypes.byref(n), _link(link), gso_size, int(input_seeds),
                              ctypes.byref(h)))
    del a
    return VnetHdr._from_c(h), bytes(buf[:n.value])


# ---- outputs ----------------------------------------------------------------------------------

class Segment:
    """One output frame (GSO segment, GRO aggregate, decapsulated frame).

    ``data`` is a memoryview into the result's one buffer (no copy per frame); ``bytes(seg)``
    copies it. ``ip_summed`` is CSUM_NONE / _UNNECESSARY / _COMPLETE / _PARTIAL; a PARTIAL
    frame's checksum field holds the seed at csum_start + csum_offset. ``vnet_hdr`` is the
    header to write it to a TAP/TUN with (NEEDS_CSUM, gso_type/gso_size for aggregates)."""
    __slots__ = ("data", "ip_summed", "csum_level", "csum_start", "csum_offset", "csum",
                 "gso_size", "gso_segs", "vnet_hdr")

    def __init__(self, data, info):
        self.data = data
        self.ip_summed = info.ip_summed
        self.csum_level = info.csum_level
        self.csum_start = info.csum_start
        self.csum_offset = info.csum_offset
        self.csum = info.csum
        self.gso_size = info.gso_size
        self.gso_segs = info.gso_segs
        self.vnet_hdr = VnetHdr._from_c(info.vnet)

    def __bytes__(self) -> bytes:
        return bytes(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __eq__(self, other) -> bool:
        if isinstance(other, Segment):
            return self.data == other.data
        return self.data == other

    __hash__ = None

    def __repr__(self) -> str:
        return (f"Segment(len={len(self.data)}, ip_summed={self.ip_summed}, "
                f"vnet_hdr={self.vnet_hdr})")


_SEG_INFO_SIZE = ctypes.sizeof(_c.SegInfoC)
if _SEG_INFO_SIZE != _native.SEG_INFO_SIZE:
    raise ImportError("ofld: struct ofld_seg_info of ofld._native differs from the binding's")


class Segments(Sequence):
    """The outputs of one call: one buffer, and the n ofld_seg_info records that ofld._native
    wrote into `info` (a bytearray); Segment objects (and the record's ctypes view) made on
    access."""
    __slots__ = ("_buf", "_mv", "_info", "_n")

    def __init__(self, buf, info, n):
        self._buf, self._mv, self._info, self._n = buf, memoryview(buf), info, n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        s = _c.SegInfoC.from_buffer(self._info, i * _SEG_INFO_SIZE)
        return Segment(self._mv[s.offset:s.offset + s.len], s)

    @property
    def buffer(self) -> bytearray:
        """Every frame end to end (what a single writev or a pcap writer wants)."""
        return self._buf

    def __repr__(self) -> str:
        return f"Segments({self._n} frames, {len(self._buf)} bytes)"


# ---- GSO --------------------------------------------------------------------------------------

class Gso:
    """A GSO engine for a device with `features` (ethtool names or NETIF_F_* bits).

    With SG and a checksum feature (e.g. "sg,tx-checksum-ip-generic") segments keep
    NEEDS_CSUM (ip_summed CSUM_PARTIAL) as for a TAP/TUN write; with none (the default) every
    checksum is completed while copying. A device with TSO takes the frame whole (X-20)."""

    def __init__(self, features: Union[str, int, None] = None, link="ethernet"):
        self._h = _c.ofld_gso_new(globals()["features"](features), _link(link))
        if not self._h:
            _raise(-1)

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _c.ofld_gso_free(h)

    def segment(self, frame, mss: int = 0, vnet_hdr: Optional[VnetHdr] = None,
                input_seeds: bool = False) -> Segments:
        """Segment one frame. With vnet_hdr (a TAP/TUN read) it is validated as a TAP does
        and says gso_type/gso_size; without, the frame's headers and `mss` do (L4 fields hold
        full checksums, or seeds with input_seeds). Returns the outputs (one when nothing
        needs splitting). Raises VnetHdrRejected, GsoRefused, FrameParseError."""
        vnet = vnet_hdr._raw() if vnet_hdr is not None else None
        r, out, info, n = _native.gso_segment(self._h or 0, frame, vnet, mss, int(input_seeds))
        _check(r)
        return Segments(out, info, n)

    @property
    def counters(self) -> Dict[str, object]:
        """The engine's counters, errors by reason name."""
        c = _c.GsoCountersC()
        _check(_c.ofld_gso_get_counters(self._h, ctypes.byref(c)))
        d = {k: getattr(c, k) for k, _t in _c.GsoCountersC._fields_ if k != "errors"}
        d["errors"] = {_c.ofld_gso_reason_name(i).decode(): c.errors[i]
                       for i in range(_c.GSO_REASONS) if c.errors[i]}
        return d


def gso(frame, mss: int = 0, features: Union[str, int, None] = None,
        vnet_hdr: Optional[VnetHdr] = None, link="ethernet", input_seeds: bool = False) -> Segments:
    """Segment one frame as the kernel's software GSO does for a device with `features`.
    See Gso.segment."""
    return Gso(features, link).segment(frame, mss, vnet_hdr, input_seeds)


# ---- GRO --------------------------------------------------------------------------------------

class Gro:
    """A GRO engine (net/core/gro.c) for a receiving device.

    features: ethtool names of its receive features ("rx-gro" is on by default; add
    "rx-gro-list", "rx-udp-gro-forwarding"), or NETIF_F_* bits. flow_hash_key: fixed key
    (reproducible output order) or None (random, as the kernel). vnet_types_only: build only
    aggregates a virtio_net_hdr can describe (writing to a TAP/TUN)."""

    def __init__(self, features: Union[str, int, None] = "rx-gro", link="ethernet",
                 flush_timeout_ns: int = 0, flow_hash_key: Optional[int] = None,
                 vnet_types_only: bool = False, batch: int = 64):
        cfg = _c.GroConfigC()
        cfg.struct_size = ctypes.sizeof(cfg)
        cfg.link = _link(link)
        cfg.features = globals()["features"](features)
        cfg.flush_timeout_ns = flush_timeout_ns
        cfg.fixed_flow_hash_key = int(flow_hash_key is not None)
        cfg.flow_hash_key = flow_hash_key or 0
        cfg.vnet_types_only = int(vnet_types_only)
        cfg.batch = batch
        self._h = _c.ofld_gro_new(ctypes.byref(cfg))
        if not self._h:
            _raise(-1)

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _c.ofld_gro_free(h)

    def receive(self, frames: Iterable, csum="none", csum_level: int = 0, now_ns: int = 0) -> None:
        """napi_gro_receive of each frame (bytes-like), with the receiving device's checksum
        state: "none", "unnecessary" (csum_level) or "complete" (the sum is taken as such a
        device would). Outputs queue up for flush()."""
        ip_summed = _CSUM_NAMES.get(csum, csum) if isinstance(csum, str) else csum
        _check(_native.gro_receive(self._h or 0, frames, ip_summed, csum_level, now_ns))

    def flush(self, now_ns: int = 0, all: bool = True, finish: bool = False) -> Segments:
        """Complete held flows (all, or those older than the flush timeout) and take every
        output: aggregates PARTIAL with their virtio_net_hdr (finish=True: checksums
        completed, valid frames), other packets untouched."""
        r, out, info, n = _native.gro_take(self._h or 0, 1, now_ns, int(all), int(finish))
        _check(r)
        return Segments(out, info, n)

    def take(self, finish: bool = False) -> Segments:
        """Take the outputs waiting now (without completing held flows)."""
        r, out, info, n = _native.gro_take(self._h or 0, 0, 0, 0, int(finish))
        _check(r)
        return Segments(out, info, n)

    @property
    def counters(self) -> Dict[str, object]:
        """packets_in, merged, held, delivered_now, aggregates, singles, segments_out, and
        not_merged / completed by reason name."""
        c = _c.GroCountersC()
        _check(_c.ofld_gro_get_counters(self._h, ctypes.byref(c)))
        d = {k: getattr(c, k) for k, _t in _c.GroCountersC._fields_
             if k not in ("not_merged", "completed")}
        for k in ("not_merged", "completed"):
            arr = getattr(c, k)
            d[k] = {_c.ofld_gro_reason_name(i).decode(): arr[i]
                    for i in range(_c.GRO_REASONS) if arr[i]}
        return d

    @property
    def flow_hash_key(self) -> int:
        return _c.ofld_gro_flow_hash_key(self._h)


# ---- tunnels ----------------------------------------------------------------------------------

_KINDS = {"vxlan": 0, "gue": 1, "gre": 2, "ip6gre": 2}
_OUTER = {"unknown": 0, "present": 1, "zero": 2}


class Tunnel:
    """One encapsulation of `ofld tunnel`: "vxlan" (Ethernet frames), "gue" or "gre"/"ip6gre"
    (IP packets), with its iproute2 options (vni, port, key/ikey/okey, csum/icsum/ocsum,
    remcsum_tx/rx for RCO, udp_csum, ipv6 underlay). The outer IP [+ UDP] header is not
    built: an encapsulated frame starts at the tunnel header."""

    def __init__(self, kind: str = "vxlan", vni: int = 0, port: int = 0, ipv6: bool = False,
                 udp_csum: bool = True, remcsum_tx: bool = False, remcsum_rx: bool = False,
                 remcsum_nopartial: bool = False, key: Optional[int] = None,
                 ikey: Optional[int] = None, okey: Optional[int] = None, csum: bool = False,
                 icsum: bool = False, ocsum: bool = False, udp6_zero_csum_tx: bool = False,
                 udp6_zero_csum_rx: bool = False):
        cfg = _c.TunnelConfigC()
        cfg.struct_size = ctypes.sizeof(cfg)
        if kind not in _KINDS:
            raise InvalidArgument(-1, f"unknown tunnel kind {kind!r}")
        cfg.kind = _KINDS[kind]
        cfg.ipv6 = int(ipv6 or kind == "ip6gre")
        cfg.vni, cfg.port, cfg.udp_csum = vni, port, int(udp_csum)
        cfg.udp6_zero_csum_tx, cfg.udp6_zero_csum_rx = int(udp6_zero_csum_tx), int(udp6_zero_csum_rx)
        cfg.remcsum_tx, cfg.remcsum_rx = int(remcsum_tx), int(remcsum_rx)
        cfg.remcsum_nopartial = int(remcsum_nopartial)
        ikey = key if ikey is None else ikey
        okey = key if okey is None else okey
        cfg.has_ikey, cfg.ikey = int(ikey is not None), ikey or 0
        cfg.has_okey, cfg.okey = int(okey is not None), okey or 0
        cfg.icsum, cfg.ocsum = int(csum or icsum), int(csum or ocsum)
        self._h = _c.ofld_tunnel_new(ctypes.byref(cfg))
        if not self._h:
            _raise(-1)
        self.last_info: Dict[str, int] = {}

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            _c.ofld_tunnel_free(h)

    def encap(self, frame, vnet_hdr: Optional[VnetHdr] = None) -> bytes:
        """Tunnel header + frame. vnet_hdr with NEEDS_CSUM: the frame is CHECKSUM_PARTIAL
        (RCO when configured, else finished in software). Raises TunnelDrop."""
        p, n, _k = _ptr(frame)
        out = bytearray(n + 32)
        used, info = _c.c_size(), _c.TunnelInfoC()
        a = (ctypes.c_char * len(out)).from_buffer(out)
        h = ctypes.byref(vnet_hdr._c()) if vnet_hdr is not None else None
        r = _c.ofld_tunnel_encap(self._h, p, n, h, a, len(out), ctypes.byref(used),
                                 ctypes.byref(info))
        del a
        _check(r)
        self.last_info = {"rco": info.rco, "csum_sw": info.csum_sw, "hdr_len": info.hdr_len}
        return bytes(out[:used.value])

    def decap(self, payload, outer_csum: str = "present", outer_tos: int = -1) -> Segment:
        """The inner frame of one datagram (from the tunnel header on), with its checksum
        state and virtio_net_hdr. outer_csum: "present", "zero" or "unknown"; outer_tos: the
        outer TOS/traffic class (RFC 6040) or -1. Raises TunnelDrop with the reason."""
        p, n, _k = _ptr(payload)
        out = bytearray(max(n, 1))
        used, seg, info = _c.c_size(), _c.SegInfoC(), _c.TunnelInfoC()
        a = (ctypes.c_char * len(out)).from_buffer(out)
        r = _c.ofld_tunnel_decap(self._h, p, n, _OUTER[outer_csum], outer_tos, a, len(out),
                                 ctypes.byref(used), ctypes.byref(seg), ctypes.byref(info))
        del a
        _check(r)
        self.last_info = {"rco": info.rco}
        return Segment(memoryview(out)[:used.value], seg)


def vxlan_encap(frame, vni: int, **kw) -> bytes:
    """VXLAN header (RFC 7348) + Ethernet frame."""
    return Tunnel("vxlan", vni=vni, **kw).encap(frame)


def vxlan_decap(payload, vni: int, **kw) -> bytes:
    """The Ethernet frame inside a VXLAN payload (raises TunnelDrop)."""
    return bytes(Tunnel("vxlan", vni=vni, **kw).decap(payload))


def gue_encap(packet, port: int, **kw) -> bytes:
    """GUE header + IP packet."""
    return Tunnel("gue", port=port, **kw).encap(packet)


def gue_decap(payload, port: int, **kw) -> bytes:
    return bytes(Tunnel("gue", port=port, **kw).decap(payload))


def gre_encap(packet, **kw) -> bytes:
    """GRE header (key, checksum as configured) + IP packet."""
    return Tunnel("gre", **kw).encap(packet)


def gre_decap(payload, **kw) -> bytes:
    return bytes(Tunnel("gre", **kw).decap(payload, outer_csum="unknown"))


# ---- captures ---------------------------------------------------------------------------------

def _record(r) -> Dict[str, object]:
    # The field names and formats of `ofld csum verify --json` (hex values as strings).
    d = {"frame": r.frame, "kind": _c.ofld_csum_kind_name(r.kind).decode(), "level": r.level,
         "verdict": _c.ofld_verdict_name(r.verdict).decode(), "offset": r.field_offset,
         "value": f"0x{r.found:04x}"}
    if d["verdict"] == "skipped":
        d["reason"] = _c.ofld_skip_reason_name(r.skip_reason).decode()
    else:
        d["expected"] = f"0x{r.expected:04x}"
    if d["verdict"] == "partial":
        d["seed"] = f"0x{r.seed:04x}"
    if r.lco:
        d["lco"] = True
    if r.datagram:
        d["datagram"] = True
    return d


def verify(source: Union[str, os.PathLike, bytes, Sequence], link="ethernet",
           reassembly: bool = True) -> List[Dict[str, object]]:
    """The checksum verdicts of `ofld csum verify --json`, one dict per field: for a capture
    file (path), or for frames (one bytes-like frame or a list of them; frame numbers from 1).
    Raises CaptureFileError / FrameParseError (a single frame that does not parse)."""
    out: List[Dict[str, object]] = []
    if isinstance(source, (str, os.PathLike)):
        @_c.RECORD_FN
        def cb(rec, _user):
            out.append(_record(rec.contents))
            return 0
        _check(_c.ofld_verify_file(os.fsencode(source), int(not reassembly), cb, None, None))
        return out
    single = isinstance(source, (bytes, bytearray, memoryview)) or hasattr(source, "__array__")
    frames = [source] if single else list(source)
    recs = (_c.CsumRecordC * 64)()
    n = _c.c_size()
    for no, fr in enumerate(frames, 1):
        p, ln, _k = _ptr(fr)
        r = _c.ofld_verify_frame(p, ln, _link(link), 0, recs, 64, ctypes.byref(n))
        if r == -7 and not single:
            continue  # a frame that does not parse has no checksum fields
        _check(r)
        for i in range(n.value):
            d = _record(recs[i])
            d["frame"] = no
            out.append(d)
    return out


def gso_pcap(src: str, dst: str, mss: int, features: Optional[str] = None) -> int:
    """`ofld gso SRC -o DST --mss MSS [--features LIST]`; returns the segments written."""
    segs = _c.c_u64()
    _check(_c.ofld_gso_pcap(os.fsencode(src), os.fsencode(dst), mss,
                            features.encode() if features else None, ctypes.byref(segs)))
    return segs.value


def gro_pcap(src: str, dst: str, features: Optional[str] = None) -> int:
    """`ofld gro SRC -o DST [--features LIST]`; returns the frames written."""
    n = _c.c_u64()
    _check(_c.ofld_gro_pcap(os.fsencode(src), os.fsencode(dst),
                            features.encode() if features else None, ctypes.byref(n)))
    return n.value

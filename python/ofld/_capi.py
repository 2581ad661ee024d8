"""ctypes declarations of libofld's C API (include/ofld/ofld.h). Internal to the package."""
import ctypes
import ctypes.util
import glob
import os

API_VERSION = 10000  # OFLD_API_VERSION this binding was written for (major 1)

c_u8, c_u16, c_u32, c_u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64
c_size, c_int, c_void_p, c_char_p = ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
P = ctypes.POINTER


class VnetHdrC(ctypes.Structure):
    _fields_ = [("flags", c_u8), ("gso_type", c_u8), ("hdr_len", c_u16), ("gso_size", c_u16),
                ("csum_start", c_u16), ("csum_offset", c_u16)]


class SegInfoC(ctypes.Structure):
    _fields_ = [("offset", c_size), ("len", c_size), ("ip_summed", c_u8), ("csum_level", c_u8),
                ("csum_start", c_u16), ("csum_offset", c_u16), ("csum", c_u32),
                ("gso_size", c_u16), ("gso_segs", c_u16), ("vnet", VnetHdrC)]


class IovecC(ctypes.Structure):
    _fields_ = [("base", c_void_p), ("len", c_size)]


class FrameC(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("len", c_size)]


GSO_REASONS = 32
GRO_REASONS = 48


class GsoCountersC(ctypes.Structure):
    _fields_ = [(n, c_u64) for n in ("packets_in", "packets_segmented", "packets_hw",
                                     "segments_out", "payload_bytes_copied",
                                     "payload_bytes_referenced", "header_bytes_copied",
                                     "vnet_rejected")] + [("errors", c_u64 * GSO_REASONS)]


class GroConfigC(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("link", c_int), ("features", c_u64),
                ("flush_timeout_ns", c_u64), ("fixed_flow_hash_key", c_int),
                ("flow_hash_key", c_u64), ("vnet_types_only", c_int), ("batch", c_size)]


class GroCountersC(ctypes.Structure):
    _fields_ = [(n, c_u64) for n in ("packets_in", "merged", "held", "delivered_now",
                                     "aggregates", "singles", "segments_out")] + [
        ("not_merged", c_u64 * GRO_REASONS), ("completed", c_u64 * GRO_REASONS)]


class TunnelConfigC(ctypes.Structure):
    _fields_ = [("struct_size", c_size), ("kind", c_int), ("ipv6", c_int), ("vni", c_u32),
                ("port", c_u16), ("udp_csum", c_int), ("udp6_zero_csum_tx", c_int),
                ("udp6_zero_csum_rx", c_int), ("remcsum_tx", c_int), ("remcsum_rx", c_int),
                ("remcsum_nopartial", c_int), ("has_ikey", c_int), ("has_okey", c_int),
                ("ikey", c_u32), ("okey", c_u32), ("icsum", c_int), ("ocsum", c_int)]


class TunnelInfoC(ctypes.Structure):
    _fields_ = [("rco", c_int), ("csum_sw", c_int), ("hdr_len", c_size), ("drop", c_int)]


class CsumRecordC(ctypes.Structure):
    _fields_ = [("frame", c_u64), ("kind", c_u8), ("level", c_u8), ("verdict", c_u8),
                ("skip_reason", c_u8), ("ipv6", c_u8), ("lco", c_u8), ("in_fragment", c_u8),
                ("datagram", c_u8), ("field_offset", c_u32), ("found", c_u16),
                ("expected", c_u16), ("seed", c_u16)]


class VerifySummaryC(ctypes.Structure):
    _fields_ = [(n, c_u64) for n in ("frames", "frames_with_bad", "frames_with_partial",
                                     "frames_skipped", "parse_errors", "datagrams")] + [
        ("fields", (c_u64 * 5) * 6)]


RECORD_FN = ctypes.CFUNCTYPE(c_int, P(CsumRecordC), c_void_p)


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = []
    if os.environ.get("OFLD_LIBRARY"):
        candidates.append(os.environ["OFLD_LIBRARY"])
    # bundled by setup.py under its SONAME (ofld._native links that name, $ORIGIN)
    candidates.extend(sorted(glob.glob(os.path.join(here, "libofld.so.*"))))
    found = ctypes.util.find_library("ofld")
    if found:
        candidates.append(found)
    candidates.append("libofld.so")
    errors = []
    for c in candidates:
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            errors.append(f"{c}: {e}")
    raise ImportError("ofld: cannot load libofld.so (set OFLD_LIBRARY): " + "; ".join(errors))


lib = _load()


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


ofld_api_version = _fn("ofld_api_version", c_int)
ofld_version = _fn("ofld_version", c_char_p)
ofld_strerror = _fn("ofld_strerror", c_char_p, c_int)
ofld_last_reason = _fn("ofld_last_reason", c_char_p)

ofld_csum_partial = _fn("ofld_csum_partial", c_u32, c_void_p, c_size, c_u32)
ofld_csum_partial_copy = _fn("ofld_csum_partial_copy", c_u32, c_void_p, c_void_p, c_size, c_u32)
ofld_csum_add = _fn("ofld_csum_add", c_u32, c_u32, c_u32)
ofld_csum_block_add = _fn("ofld_csum_block_add", c_u32, c_u32, c_u32, c_size)
ofld_csum_fold = _fn("ofld_csum_fold", c_u16, c_u32)
ofld_csum_fold16 = _fn("ofld_csum_fold16", c_u16, c_u32)
ofld_csum_tcpudp_nofold = _fn("ofld_csum_tcpudp_nofold", c_u32, c_char_p, c_char_p, c_u32, c_u8,
                              c_u32)
ofld_csum_ipv6_nofold = _fn("ofld_csum_ipv6_nofold", c_u32, c_char_p, c_char_p, c_u32, c_u8, c_u32)
ofld_csum_replace2 = _fn("ofld_csum_replace2", c_u16, c_u16, c_u16, c_u16)
ofld_csum_replace4 = _fn("ofld_csum_replace4", c_u16, c_u16, c_u32, c_u32)
ofld_ip_compute_csum = _fn("ofld_ip_compute_csum", c_u16, c_void_p, c_size)

ofld_features_parse = _fn("ofld_features_parse", c_int, c_char_p, P(c_u64))

ofld_vnet_hdr_load = _fn("ofld_vnet_hdr_load", c_int, c_void_p, c_size, c_int, P(VnetHdrC))
ofld_vnet_hdr_store = _fn("ofld_vnet_hdr_store", c_int, P(VnetHdrC), c_int, c_void_p, c_size)
ofld_vnet_validate = _fn("ofld_vnet_validate", c_int, P(VnetHdrC), c_void_p, c_size, c_int, P(c_int))
ofld_vnet_reject_name = _fn("ofld_vnet_reject_name", c_char_p, c_int)
ofld_vnet_build = _fn("ofld_vnet_build", c_int, c_void_p, P(c_size), c_int, c_u16, c_int,
                      P(VnetHdrC))

ofld_gso_new = _fn("ofld_gso_new", c_void_p, c_u64, c_int)
ofld_gso_free = _fn("ofld_gso_free", None, c_void_p)
ofld_gso_input = _fn("ofld_gso_input", c_void_p, c_void_p, c_size)
ofld_gso_run = _fn("ofld_gso_run", c_int, c_void_p, c_void_p, c_size, P(VnetHdrC), c_u16, c_int)
ofld_gso_count = _fn("ofld_gso_count", c_size, c_void_p)
ofld_gso_copy_all = _fn("ofld_gso_copy_all", c_int, c_void_p, c_void_p, c_size, P(c_size),
                        P(SegInfoC), c_size, P(c_size))
ofld_gso_get_counters = _fn("ofld_gso_get_counters", c_int, c_void_p, P(GsoCountersC))
ofld_gso_reason_name = _fn("ofld_gso_reason_name", c_char_p, c_int)

ofld_gro_new = _fn("ofld_gro_new", c_void_p, P(GroConfigC))
ofld_gro_free = _fn("ofld_gro_free", None, c_void_p)
ofld_gro_receive = _fn("ofld_gro_receive", c_int, c_void_p, P(FrameC), c_size, c_int, c_int, c_u64)
ofld_gro_receive_packed = _fn("ofld_gro_receive_packed", c_int, c_void_p, c_void_p, c_size,
                              c_void_p, c_size, c_int, c_int, c_u64)
ofld_gro_flush = _fn("ofld_gro_flush", c_int, c_void_p, c_u64, c_int)
ofld_gro_pending = _fn("ofld_gro_pending", c_size, c_void_p)
ofld_gro_next_all = _fn("ofld_gro_next_all", c_int, c_void_p, c_void_p, c_size, P(c_size), c_int,
                        P(SegInfoC), c_size, P(c_size))
ofld_gro_get_counters = _fn("ofld_gro_get_counters", c_int, c_void_p, P(GroCountersC))
ofld_gro_reason_name = _fn("ofld_gro_reason_name", c_char_p, c_int)
ofld_gro_flow_hash_key = _fn("ofld_gro_flow_hash_key", c_u64, c_void_p)

ofld_tunnel_new = _fn("ofld_tunnel_new", c_void_p, P(TunnelConfigC))
ofld_tunnel_free = _fn("ofld_tunnel_free", None, c_void_p)
ofld_tunnel_encap = _fn("ofld_tunnel_encap", c_int, c_void_p, c_void_p, c_size, P(VnetHdrC),
                        c_void_p, c_size, P(c_size), P(TunnelInfoC))
ofld_tunnel_decap = _fn("ofld_tunnel_decap", c_int, c_void_p, c_void_p, c_size, c_int, c_int,
                        c_void_p, c_size, P(c_size), P(SegInfoC), P(TunnelInfoC))
ofld_tunnel_drop_name = _fn("ofld_tunnel_drop_name", c_char_p, c_int)

ofld_verify_frame = _fn("ofld_verify_frame", c_int, c_void_p, c_size, c_int, c_u32, P(CsumRecordC),
                        c_size, P(c_size))
ofld_verify_file = _fn("ofld_verify_file", c_int, c_char_p, c_int, RECORD_FN, c_void_p,
                       P(VerifySummaryC))
ofld_csum_kind_name = _fn("ofld_csum_kind_name", c_char_p, c_int)
ofld_verdict_name = _fn("ofld_verdict_name", c_char_p, c_int)
ofld_skip_reason_name = _fn("ofld_skip_reason_name", c_char_p, c_int)

ofld_gso_pcap = _fn("ofld_gso_pcap", c_int, c_char_p, c_char_p, c_u16, c_char_p, P(c_u64))
ofld_gro_pcap = _fn("ofld_gro_pcap", c_int, c_char_p, c_char_p, c_char_p, P(c_u64))

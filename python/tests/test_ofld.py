"""pytest suite of the ofld Python package. Expected values come from the RFCs and the spec
(rule IDs in the test names), computed here in plain Python, never from ofld's own output."""
import array
import os
import struct

import pytest

import ofld

SRC = os.environ.get("OFLD_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


# ---- an independent frame builder (RFC 791/793/768 layouts, RFC 1071 sums) -----------------

def rfc1071(data: bytes, start: int = 0) -> int:
    """Folded (not complemented) ones'-complement sum, pure Python."""
    if len(data) % 2:
        data += b"\0"
    s = start
    for (w,) in struct.iter_unpack("!H", data):
        s += w
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def ipv4_tcp(payload: bytes, seq: int = 1000, flags: int = 0x10, ip_id: int = 1,
             src=b"\x0a\0\0\x01", dst=b"\x0a\0\0\x02") -> bytes:
    tcp = struct.pack("!HHIIBBHHH", 40000, 5201, seq, 1, 5 << 4, flags, 65535, 0, 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), ip_id,
                               0x4000, 64, 6, 0, src, dst))
    struct.pack_into("!H", ip, 10, ~rfc1071(bytes(ip)) & 0xFFFF)
    pseudo = src + dst + struct.pack("!BBH", 0, 6, len(tcp) + len(payload))
    c = ~rfc1071(pseudo + tcp + payload) & 0xFFFF
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    eth = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00"
    return eth + bytes(ip) + tcp + payload


def tcp_valid(frame: bytes, ip_off: int = 14) -> bool:
    ip = frame[ip_off:]
    ihl = (ip[0] & 15) * 4
    l4 = ip[ihl:]
    pseudo = ip[12:20] + struct.pack("!BBH", 0, 6, len(l4))
    return rfc1071(pseudo + l4) == 0xFFFF


PAYLOAD = bytes((i * 7 + 3) & 0xFF for i in range(64000))


# ---- checksums (RFC 1071 §3, RFC 1624 §4) -------------------------------------------------------

def test_csum_rfc1071_example():
    b = bytes([0x00, 0x01, 0xF2, 0x03, 0xF4, 0xF5, 0xF6, 0xF7])
    assert ofld.csum_fold16(ofld.csum_partial(b)) == 0xDDF2
    assert ofld.csum(b) == (~0xDDF2 & 0xFFFF)


def test_csum_takes_every_buffer_kind_without_changing_the_answer():
    np = pytest.importorskip("numpy")
    want = rfc1071(PAYLOAD[:1001])
    for buf in (PAYLOAD[:1001], bytearray(PAYLOAD[:1001]), memoryview(PAYLOAD)[:1001],
                np.frombuffer(PAYLOAD[:1001], dtype=np.uint8).copy(),
                memoryview(bytearray(PAYLOAD[:1001]))):
        assert ofld.csum_fold16(ofld.csum_partial(buf)) == want


def test_csum_rfc1624_incremental_update():
    assert ofld.csum_replace2(0xDD2F, 0x5555, 0x3285) == 0x0000


def test_pseudo_header_seed_c12():
    f = ipv4_tcp(b"x" * 100)
    seed = ofld.csum_fold16(ofld.pseudo_header_sum(f[26:30], f[30:34], 120, 6))
    assert seed == rfc1071(f[26:34] + struct.pack("!BBH", 0, 6, 120))


# ---- features, virtio_net_hdr -----------------------------------------------------------------

def test_features_ethtool_names():
    assert ofld.features("tx-scatter-gather,tx-checksum-ip-generic") == (1 << 0) | (1 << 3)
    with pytest.raises(ofld.UnknownFeature) as e:
        ofld.features("tx-warp-drive")
    assert "tx-warp-drive" in e.value.reason


def test_vnet_hdr_layout_v18():
    h = ofld.VnetHdr(flags=1, gso_type=1, hdr_len=54, gso_size=1448, csum_start=34,
                     csum_offset=16)
    assert h.pack() == struct.pack("<BBHHHH", 1, 1, 54, 1448, 34, 16)
    assert ofld.VnetHdr.unpack(h.pack()) == h


def test_vnet_validate_s2_names_the_reason():
    f = ipv4_tcp(PAYLOAD[:3000])
    ofld.vnet_validate(ofld.VnetHdr(1, 1, 0, 1000, 34, 16), f)
    with pytest.raises(ofld.VnetHdrRejected) as e:
        ofld.vnet_validate(ofld.VnetHdr(1, 1, 0, 1000, 5000, 16), f)
    assert e.value.reason == "csum-outside-frame"


def test_vnet_build_s7():
    f = ipv4_tcp(PAYLOAD[:3000])
    h, frame = ofld.vnet_build(f, gso_size=1000)
    assert (h.flags, h.gso_type, h.gso_size, h.csum_start, h.csum_offset) == (1, 1, 1000, 34, 16)
    seed = rfc1071(f[26:34] + struct.pack("!BBH", 0, 6, len(f) - 34))
    assert struct.unpack_from("!H", frame, 50)[0] == seed


# ---- GSO (X-rules) ----------------------------------------------------------------------------

def test_gso_tso_frame_x21():
    f = ipv4_tcp(PAYLOAD)
    segs = ofld.gso(f, mss=1448)
    assert len(segs) == (64000 + 1447) // 1448
    for i, s in enumerate(segs):
        b = bytes(s)
        assert tcp_valid(b)
        assert struct.unpack_from("!I", b, 38)[0] == 1000 + 1448 * i
        assert b[54:] == PAYLOAD[1448 * i:1448 * (i + 1)]


def test_gso_with_vnet_hdr_keeps_needs_csum():
    h, frame = ofld.vnet_build(ipv4_tcp(PAYLOAD[:5000]), gso_size=1000)
    segs = ofld.gso(bytearray(frame), vnet_hdr=h, features="sg,tx-checksum-ip-generic")
    assert len(segs) == 5
    for s in segs:
        assert s.ip_summed == ofld.CSUM_PARTIAL
        assert (s.vnet_hdr.flags, s.csum_start, s.csum_offset) == (1, 34, 16)


def test_gso_bad_vnet_hdr_raises_not_crashes():
    f = ipv4_tcp(PAYLOAD[:3000])
    with pytest.raises(ofld.VnetHdrRejected):
        ofld.gso(f, vnet_hdr=ofld.VnetHdr(1, 2, 0, 1000, 34, 16))  # S-1: unknown gso_type
    for cut in range(0, 54, 7):  # S-2/S-3: headers cut short (beyond 54 the payload fits: S-5)
        with pytest.raises(ofld.OfldError):
            ofld.gso(f[:cut], vnet_hdr=ofld.VnetHdr(1, 1, 0, 1000, 34, 16))


# ---- GRO (G-/T-rules) -------------------------------------------------------------------------

def test_gro_coalesces_a_batch_t11_k4():
    frames = [ipv4_tcp(PAYLOAD[i * 1000:(i + 1) * 1000], seq=1000 + i * 1000) for i in range(16)]
    gro = ofld.Gro(flow_hash_key=0)
    gro.receive(frames)
    out = gro.flush()
    assert len(out) == 1
    agg = out[0]
    assert agg.vnet_hdr.gso_type == ofld.VnetHdr.GSO_TCPV4 and agg.vnet_hdr.gso_size == 1000
    assert bytes(agg)[54:] == PAYLOAD[:16000]
    c = gro.counters
    assert c["packets_in"] == 16 and c["merged"] == 15
    done = ofld.Gro(flow_hash_key=0)
    done.receive(frames)
    assert tcp_valid(bytes(done.flush(finish=True)[0]))


def test_gro_bad_checksum_not_merged_t1():
    frames = [bytearray(ipv4_tcp(PAYLOAD[:500], seq=1000 + 500 * i)) for i in range(3)]
    frames[1][50] ^= 1
    gro = ofld.Gro()
    gro.receive(frames)
    gro.flush()
    assert gro.counters["not_merged"].get("checksum") == 1


def test_gro_receive_takes_every_buffer_kind_t11():
    """The batch call (ofld._native) reads bytes, bytearray, memoryview, array, numpy and
    strided views alike, and a generator of them: the aggregate is the payload in order."""
    np = pytest.importorskip("numpy")
    frames = [ipv4_tcp(PAYLOAD[i * 1000:(i + 1) * 1000], seq=1000 + i * 1000) for i in range(6)]
    doubled = np.frombuffer(frames[5], dtype=np.uint8).repeat(2)
    kinds = [frames[0], bytearray(frames[1]), memoryview(frames[2]), array.array("B", frames[3]),
             np.frombuffer(frames[4], dtype=np.uint8), doubled[::2]]  # last: not contiguous
    gro = ofld.Gro(flow_hash_key=0)
    gro.receive(k for k in kinds)
    out = gro.flush()
    assert len(out) == 1 and bytes(out[0])[54:] == PAYLOAD[:6000]
    assert gro.counters["packets_in"] == 6 and gro.counters["merged"] == 5


def test_gro_receive_refuses_what_is_not_a_buffer():
    gro = ofld.Gro()
    with pytest.raises(TypeError):
        gro.receive([ipv4_tcp(PAYLOAD[:100]), 7])
    with pytest.raises(TypeError):
        gro.receive(None)
    gro.receive([])  # an empty batch is not an error
    assert len(gro.flush()) == 0 and gro.counters["packets_in"] == 0


def test_gso_output_buffer_is_exact_and_writable_x21():
    f = ipv4_tcp(PAYLOAD[:4000])
    segs = ofld.gso(memoryview(f), mss=1000)
    assert len(segs) == 4
    assert len(segs.buffer) == sum(len(s) for s in segs) == 4 * 54 + 4000
    assert b"".join(bytes(s)[54:] for s in segs) == PAYLOAD[:4000]


# ---- tunnels (RFC 7348 §5, V-13) --------------------------------------------------------------

def test_vxlan_header_rfc7348_and_round_trip():
    inner = ipv4_tcp(b"y" * 200)
    d = ofld.vxlan_encap(inner, vni=0x123456)
    assert d[:8] == bytes([0x08, 0, 0, 0, 0x12, 0x34, 0x56, 0]) and d[8:] == inner
    assert ofld.vxlan_decap(d, vni=0x123456) == inner
    with pytest.raises(ofld.TunnelDrop) as e:
        ofld.vxlan_decap(d, vni=7)
    assert e.value.reason == "rx_wrong_vni"


def test_gre_checksum_and_key_v13():
    ip = ipv4_tcp(b"z" * 300)[14:]
    t = ofld.Tunnel("gre", key=77, csum=True)
    d = t.encap(ip)
    assert d[0] == 0xA0 and struct.unpack_from("!H", d, 2)[0] == 0x0800
    assert rfc1071(d) == 0xFFFF
    assert bytes(t.decap(d, outer_csum="unknown")) == ip


# ---- captures ---------------------------------------------------------------------------------

def test_verify_frame_verdicts():
    f = bytearray(ipv4_tcp(b"q" * 100))
    recs = ofld.verify(f)
    assert [(r["kind"], r["verdict"]) for r in recs] == [("ipv4", "good"), ("tcp", "good")]
    f[60] ^= 1
    assert ofld.verify(bytes(f))[1]["verdict"] == "bad"


def test_verify_file_matches_the_command_records():
    path = os.path.join(SRC, "data", "tcpdump_gso-ipv4-vxlan-ipv4.pcap")
    if not os.path.exists(path):
        pytest.skip(f"{path} not here")
    recs = ofld.verify(path)
    assert recs and all(r["frame"] >= 1 for r in recs)
    with pytest.raises(ofld.CaptureFileError):
        ofld.verify("/nonexistent.pcap")


def test_pcap_tools(tmp_path):
    path = os.path.join(SRC, "tests", "data", "pcaps", "zeek_http-post-large.pcap")
    if not os.path.exists(path):
        pytest.skip(f"{path} not here")
    segs = ofld.gso_pcap(path, str(tmp_path / "seg.pcap"), mss=1000)
    assert segs > 0
    assert ofld.gro_pcap(str(tmp_path / "seg.pcap"), str(tmp_path / "merged.pcap")) > 0

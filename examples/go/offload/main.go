// offload: wireguard-go's offload job (tun/offload_linux.go) done through libofld's C API.
//
//  1. Split a TSO read from a TUN/TAP (a 10-byte virtio_net_hdr + the super-frame) into
//     segments with complete checksums, as wireguard-go's gsoSplit does before sending: the
//     frame is read straight into the engine's input buffer (ofld_gso_input), so its payload
//     is copied once, from the engine into the caller's segment buffers.
//  2. Coalesce received IP packets into TSO writes for a TUN with IFF_VNET_HDR, as
//     wireguard-go's handleGRO does: each output is written as virtio_net_hdr + packet.
//
// Usage: offload DIR. Reads DIR/tso.bin (virtio_net_hdr + Ethernet frame) and DIR/rx.bin
// (records of 4-byte big-endian length + raw IP packet); writes DIR/split.go.out (records of
// length + segment) and DIR/coalesced.go.out (records of length + virtio_net_hdr + packet).
// Only the standard library and cgo.
package main

/*
#cgo LDFLAGS: -lofld
#include <stdlib.h>
#include <ofld/ofld.h>
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"
)

func check(r C.int, what string) {
	if r != C.OFLD_OK {
		fmt.Fprintf(os.Stderr, "offload: %s: %s (%s)\n", what, C.GoString(C.ofld_strerror(r)),
			C.GoString(C.ofld_last_reason()))
		os.Exit(1)
	}
}

func records(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 4 {
		n := binary.BigEndian.Uint32(b)
		out = append(out, b[4:4+n])
		b = b[4+n:]
	}
	return out
}

func appendRecord(out []byte, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out = binary.BigEndian.AppendUint32(out, uint32(n))
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// gsoSplit: one TSO read in, segments out into caller buffers (full checksums).
func gsoSplit(read []byte) [][]byte {
	g := C.ofld_gso_new(0, C.OFLD_LINK_ETHERNET)
	if g == nil {
		check(C.OFLD_E_NOMEM, "ofld_gso_new")
	}
	defer C.ofld_gso_free(g)
	// The TUN read buffer is the engine's: a real reader does read(fd, in) here.
	in := C.ofld_gso_input(g, 65536+C.OFLD_VNET_HDR_LEN)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(in)), 65536+C.OFLD_VNET_HDR_LEN)
	n := copy(buf, read)
	var hdr C.ofld_vnet_hdr
	check(C.ofld_vnet_hdr_load(in, C.OFLD_VNET_HDR_LEN, 1, &hdr), "ofld_vnet_hdr_load")
	frame := (*C.uint8_t)(unsafe.Pointer(&buf[C.OFLD_VNET_HDR_LEN]))
	check(C.ofld_gso_run(g, frame, C.size_t(n-C.OFLD_VNET_HDR_LEN), &hdr, 0, 0), "ofld_gso_run")
	count := int(C.ofld_gso_count(g))
	// Caller-provided buffers, as wireguard-go's outBuffs.
	out := make([]byte, 128*1024)
	infos := make([]C.ofld_seg_info, count)
	var used, nsegs C.size_t
	check(C.ofld_gso_copy_all(g, (*C.uint8_t)(unsafe.Pointer(&out[0])), C.size_t(len(out)), &used,
		&infos[0], C.size_t(count), &nsegs), "ofld_gso_copy_all")
	segs := make([][]byte, count)
	for i, s := range infos {
		segs[i] = out[s.offset : s.offset+s.len]
	}
	return segs
}

// groCoalesce: received IP packets in, TUN writes (virtio_net_hdr + packet) out.
func groCoalesce(pkts [][]byte) [][]byte {
	cfg := C.ofld_gro_config{struct_size: C.size_t(unsafe.Sizeof(C.ofld_gro_config{})),
		link: C.OFLD_LINK_RAW_IP, features: C.OFLD_NETIF_F_GRO, fixed_flow_hash_key: 1,
		flow_hash_key: 0, vnet_types_only: 1, batch: 64}
	g := C.ofld_gro_new(&cfg)
	if g == nil {
		check(C.OFLD_E_INVAL, "ofld_gro_new")
	}
	defer C.ofld_gro_free(g)
	// One batch, as a recvmmsg / TUN read loop leaves it: frames end to end, their lengths.
	var joined []byte
	lens := make([]C.uint64_t, len(pkts))
	for i, p := range pkts {
		joined = append(joined, p...)
		lens[i] = C.uint64_t(len(p))
	}
	cbuf := C.CBytes(joined)
	defer C.free(cbuf)
	check(C.ofld_gro_receive_packed(g, (*C.uint8_t)(cbuf), C.size_t(len(joined)), &lens[0],
		C.size_t(len(lens)), C.OFLD_CSUM_NONE, 0, 0), "ofld_gro_receive_packed")
	check(C.ofld_gro_flush(g, 0, 1), "ofld_gro_flush")
	var writes [][]byte
	buf := make([]byte, 70000)
	for C.ofld_gro_pending(g) > 0 {
		var info C.ofld_seg_info
		var n C.size_t
		check(C.ofld_gro_next(g, (*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n, 0,
			&info), "ofld_gro_next")
		var h [C.OFLD_VNET_HDR_LEN]byte
		check(C.ofld_vnet_hdr_store(&info.vnet, 1, (*C.uint8_t)(unsafe.Pointer(&h[0])), C.size_t(len(h))),
			"ofld_vnet_hdr_store")
		w := append(append([]byte{}, h[:]...), buf[:n]...)
		writes = append(writes, w)
	}
	return writes
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: offload DIR")
		os.Exit(2)
	}
	if int(C.ofld_api_version())/10000 != C.OFLD_API_VERSION/10000 {
		fmt.Fprintln(os.Stderr, "offload: libofld API major version differs")
		os.Exit(1)
	}
	dir := os.Args[1]
	tso, err := os.ReadFile(filepath.Join(dir, "tso.bin"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rx, err := os.ReadFile(filepath.Join(dir, "rx.bin"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var split []byte
	segs := gsoSplit(tso)
	for _, s := range segs {
		split = appendRecord(split, s)
	}
	var coalesced []byte
	writes := groCoalesce(records(rx))
	for _, w := range writes {
		coalesced = appendRecord(coalesced, w)
	}
	if err := os.WriteFile(filepath.Join(dir, "split.go.out"), split, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(dir, "coalesced.go.out"), coalesced, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("offload: %d segments from one TSO read, %d TUN writes from %d packets\n",
		len(segs), len(writes), len(records(rx)))
}

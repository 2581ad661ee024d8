# shellcheck shell=bash
# bench/lib.sh — shared set-up for the end-to-end benches (bench/tunnel, bench/seeds,
# bench/soak); source it, never run it. Root only.
#
# Two network namespaces $NS_A and $NS_B joined by a veth pair (veth0 in each; underlay
# $UA/$UB, IPv4 10.231.0.x or IPv6 fd00:231::x), and one overlay between them carrying
# 192.168.231.1 (A) and 192.168.231.2 (B) at MTU 1450 (1430 over IPv6), made by one of:
#   bl_kernel_vxlan            the kernel VXLAN device (id 42, dstport 4789, udpcsum)
#   bl_ofld MODE WORDS..       `ofld tunnel MODE local .. remote .. WORDS` in each namespace
#                              (WORDS may hold `a:WORD` / `b:WORD` for one side only, and the
#                              options --no-offload / --no-gro; vxlan and geneve get id 42)
#   bl_ovs [vxlan|geneve]      Open vSwitch, userspace (netdev) datapath, one ovsdb-server +
#                              ovs-vswitchd per namespace, br-phy (veth0) + br-int with a VXLAN
#                              port (key 42, UDP 4789) or a Geneve port (key 42, UDP 6081, no
#                              options), userspace TSO off
#   bl_fastd                   fastd, `mode tap`, `method "null"`, UDP port 10000
# bl_run_iperf SECS STREAMS prints one TSV line: Gbit/s, endpoint CPU s/GB A and B (the
# processes in $EP_A/$EP_B; "-" for the kernel device), whole-machine CPU s/GB (all cores'
# non-idle time from /proc/stat over the run, so it includes both iperf3 ends and anything
# else the machine did), retransmits, CPU % of A and B over the run.
# bl_run_rr SECS prints: request/response transactions per second (sockperf TCP ping-pong,
# 64 B, one in flight), p50 and p99.9 half round trip in us, CPU % of A and B.
[[ $(id -u) == 0 ]] || { echo "${0##*/}: needs root (network namespaces)" >&2; exit 1; }
BL_TAG=${BL_TAG:-bl$$}
NS_A=${BL_TAG}a; NS_B=${BL_TAG}b
BL_RUN=/run/$BL_TAG; mkdir -p "$BL_RUN"
OA=192.168.231.1; OB=192.168.231.2
EP_A=""; EP_B=""          # endpoint pids (CPU accounting); empty for the kernel device
BL_V6=0

bl_teardown() {  # stop everything in the two namespaces and delete them
  local n d
  for n in $NS_A $NS_B; do
    for d in "$BL_RUN"/ovs-$n; do
      [[ -d $d ]] || continue
      for p in "$d"/*.pid; do [[ -f $p ]] && kill "$(cat "$p")" 2>/dev/null; done
    done
    ip netns pids $n 2>/dev/null | xargs -r kill 2>/dev/null || true
  done
  sleep 0.3
  for n in $NS_A $NS_B; do
    ip netns pids $n 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del $n 2>/dev/null || true
  done
  rm -rf "$BL_RUN"/ovs-* "$BL_RUN"/fastd-* 2>/dev/null || true
  EP_A=""; EP_B=""
}
bl_exit() { bl_teardown; rm -rf "$BL_RUN"; }

bl_underlay() {  # [v6]: fresh namespaces and the veth underlay
  bl_teardown
  BL_V6=0; [[ ${1:-} == v6 ]] && BL_V6=1
  ip netns add $NS_A; ip netns add $NS_B
  ip -n $NS_A link set lo up; ip -n $NS_B link set lo up
  # BL_CONGESTION: the namespaces' TCP congestion control (per namespace; the host's stays)
  if [[ -n ${BL_CONGESTION:-} ]]; then
    ip netns exec $NS_A sysctl -qw net.ipv4.tcp_congestion_control=$BL_CONGESTION
    ip netns exec $NS_B sysctl -qw net.ipv4.tcp_congestion_control=$BL_CONGESTION
  fi
  ip -n $NS_A link add veth0 type veth peer name veth0 netns $NS_B
  if [[ $BL_V6 == 1 ]]; then
    UA=fd00:231::1; UB=fd00:231::2; BL_PLEN=64; BL_MTU=1430
    ip -n $NS_A addr add $UA/64 dev veth0 nodad; ip -n $NS_B addr add $UB/64 dev veth0 nodad
  else
    UA=10.231.0.1; UB=10.231.0.2; BL_PLEN=24; BL_MTU=1450
    ip -n $NS_A addr add $UA/24 dev veth0; ip -n $NS_B addr add $UB/24 dev veth0
  fi
  ip -n $NS_A link set veth0 up; ip -n $NS_B link set veth0 up
}

bl_wait_overlay() {  # until A reaches B through the overlay (a TCP connect refused or accepted), 15 s
  ip netns exec $NS_A python3 -c '
import socket, sys, time
end = time.time() + 15
while time.time() < end:
    s = socket.socket(); s.settimeout(0.5)
    try:
        s.connect((sys.argv[1], 9)); sys.exit(0)
    except ConnectionRefusedError:
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
    finally:
        s.close()
sys.exit(1)' $OB && return 0
  echo "${0##*/}: the overlay does not carry a TCP connect to $OB" >&2; return 1
}

bl_kernel_vxlan() {
  bl_underlay
  local ns l r o
  for ns in A B; do
    if [[ $ns == A ]]; then n=$NS_A; l=$UA; r=$UB; o=$OA; else n=$NS_B; l=$UB; r=$UA; o=$OB; fi
    ip -n $n link add ofld0 type vxlan id 42 local $l remote $r dstport 4789 udpcsum
    ip -n $n link set ofld0 mtu $BL_MTU up
    ip -n $n addr add $o/24 dev ofld0
  done
  EP_A=""; EP_B=""
  bl_wait_overlay
}

OFLD=${OFLD:-}
bl_ofld() {  # MODE [WORDS..] (--no-offload/--no-gro; a:WORD/b:WORD for one side; v6 underlay for ip6gre)
  local mode=$1; shift
  local v=""; [[ $mode == ip6gre ]] && v=v6
  bl_underlay $v
  local side n l r o opts words w
  for side in a b; do
    if [[ $side == a ]]; then n=$NS_A; l=$UA; r=$UB; o=$OA; else n=$NS_B; l=$UB; r=$UA; o=$OB; fi
    opts=(); words=()
    for w in "$@"; do
      case $w in
        --*) opts+=("$w") ;;
        a:*) [[ $side == a ]] && words+=("${w#a:}") ;;
        b:*) [[ $side == b ]] && words+=("${w#b:}") ;;
        *) words+=("$w") ;;
      esac
    done
    local pre=(); [[ $mode == vxlan || $mode == geneve ]] && pre=(id 42)
    [[ $mode == gue ]] && words+=(port 5555)
    ip netns exec $n "$OFLD" tunnel --dev ofld0 --address $o/24 --control "$BL_RUN/ofld-$side.sock" \
      "${opts[@]}" $mode "${pre[@]}" local $l remote $r "${words[@]}" >"$BL_RUN/ofld-$side.log" 2>&1 &
    if [[ $side == a ]]; then EP_A=$!; else EP_B=$!; fi
  done
  # `ip netns exec` execs the program, so $! is the endpoint itself
  bl_wait_overlay || { cat "$BL_RUN"/ofld-*.log >&2; return 1; }
}

bl_ovs() {  # [vxlan|geneve]: the tunnel port's type (default vxlan)
  local type=${1:-vxlan} port=4789
  [[ $type == geneve ]] && port=6081
  bl_underlay
  local side n l r o d vs
  for side in a b; do
    if [[ $side == a ]]; then n=$NS_A; l=$UA; r=$UB; o=$OA; else n=$NS_B; l=$UB; r=$UA; o=$OB; fi
    d="$BL_RUN/ovs-$n"; mkdir -p "$d"
    vs=(ovs-vsctl "--db=unix:$d/db.sock" --timeout=10)
    ovsdb-tool create "$d/conf.db" /usr/share/openvswitch/vswitch.ovsschema
    ip netns exec $n ovsdb-server "$d/conf.db" --remote=punix:$d/db.sock --pidfile=$d/ovsdb.pid \
      --unixctl=$d/ovsdb.ctl --log-file=$d/ovsdb.log -vconsole:off --detach --no-chdir 2>/dev/null
    "${vs[@]}" --no-wait init
    "${vs[@]}" --no-wait set Open_vSwitch . other_config:userspace-tso-enable=false
    ip netns exec $n ovs-vswitchd unix:$d/db.sock --pidfile=$d/vswitchd.pid \
      --unixctl=$d/vswitchd.ctl --log-file=$d/vswitchd.log -vconsole:off --detach --no-chdir 2>/dev/null
    # underlay: veth0 in br-phy, the underlay address on br-phy (OVS routes tunnels by it)
    "${vs[@]}" add-br br-phy -- set bridge br-phy datapath_type=netdev \
      -- add-port br-phy veth0
    ip -n $n addr flush dev veth0
    ip -n $n addr add $l/$BL_PLEN dev br-phy; ip -n $n link set br-phy up
    # overlay: br-int with the VXLAN or Geneve port, the overlay address on br-int
    "${vs[@]}" add-br br-int -- set bridge br-int datapath_type=netdev \
      -- add-port br-int vx0 -- set interface vx0 type=$type \
         options:remote_ip=$r options:local_ip=$l options:key=42 options:dst_port=$port
    ip -n $n link set br-int mtu $BL_MTU up
    ip -n $n addr add $o/24 dev br-int
    if [[ $side == a ]]; then EP_A=$(cat $d/vswitchd.pid); else EP_B=$(cat $d/vswitchd.pid); fi
  done
  bl_wait_overlay || { tail -5 "$BL_RUN"/ovs-*/vswitchd.log >&2; return 1; }
}

bl_fastd() {
  bl_underlay
  local side n l r o d peer sa sb pa pb
  sa=$(fastd --generate-key --machine-readable 2>/dev/null); sb=$(fastd --generate-key --machine-readable 2>/dev/null)
  for side in a b; do
    d="$BL_RUN/fastd-$side"; mkdir -p "$d"
    local s=$sa; [[ $side == b ]] && s=$sb
    printf 'secret "%s";\n' "$s" > "$d/secret.conf"
  done
  pa=$(fastd --show-key --machine-readable --config "$BL_RUN/fastd-a/secret.conf" 2>/dev/null)
  pb=$(fastd --show-key --machine-readable --config "$BL_RUN/fastd-b/secret.conf" 2>/dev/null)
  for side in a b; do
    if [[ $side == a ]]; then n=$NS_A; l=$UA; r=$UB; o=$OA; peer=$pb; else n=$NS_B; l=$UB; r=$UA; o=$OB; peer=$pa; fi
    d="$BL_RUN/fastd-$side"
    cat > "$d/fastd.conf" <<EOF
log level warn;
interface "fastd0";
mode tap;
method "null";
mtu $BL_MTU;
bind $l:10000;
include "secret.conf";
on up "ip link set \$INTERFACE up; ip addr add $o/24 dev \$INTERFACE";
peer "p" { key "$peer"; remote $r:10000; }
EOF
    (cd "$d" && exec ip netns exec $n fastd --config "$d/fastd.conf" >"$d/log" 2>&1) &
    if [[ $side == a ]]; then EP_A=$!; else EP_B=$!; fi
  done
  bl_wait_overlay || { cat "$BL_RUN"/fastd-*/log >&2; return 1; }
}

# utime + stime of a process in ticks (0 when there is none)
bl_ticks() { [[ -n ${1:-} ]] && awk '{print $14 + $15}' /proc/$1/stat 2>/dev/null || echo 0; }
# non-idle ticks of the whole machine (user nice system irq softirq steal)
bl_machine_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }

bl_run_iperf() {  # SECS STREAMS [extra iperf3 client args..]
  local secs=$1 streams=$2; shift 2
  ip netns exec $NS_B iperf3 -s -1 -B $OB -D >/dev/null 2>&1; sleep 0.3
  local a0 b0 m0 t0 j a1 b1 m1 t1
  a0=$(bl_ticks "$EP_A"); b0=$(bl_ticks "$EP_B"); m0=$(bl_machine_ticks); t0=$(date +%s.%N)
  j=$(ip netns exec $NS_A iperf3 -c $OB -t "$secs" -P "$streams" -J "$@" 2>/dev/null || true)
  a1=$(bl_ticks "$EP_A"); b1=$(bl_ticks "$EP_B"); m1=$(bl_machine_ticks); t1=$(date +%s.%N)
  printf '%s' "$j" | python3 -c '
import json, sys, os
hz = os.sysconf("SC_CLK_TCK")
da, db, dm, wall, has_a, has_b = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5] == "1", sys.argv[6] == "1"
try:
    e = json.load(sys.stdin)["end"]
    gb = e["sum_received"]["bytes"] / 1e9
    f = lambda v, ok: "%.4f" % (v / hz / gb) if ok else "-"
    p = lambda v, ok: "%.1f" % (100 * v / hz / wall) if ok else "-"
    print("\t".join(["%.4f" % (e["sum_received"]["bits_per_second"] / 1e9), f(da, has_a), f(db, has_b),
                     f(dm, True), str(e["sum_sent"].get("retransmits", 0)), p(da, has_a), p(db, has_b)]))
except Exception:
    print("\t".join(["-"] * 7))
' "$((a1 - a0))" "$((b1 - b0))" "$((m1 - m0))" "$(awk "BEGIN{print $t1 - $t0}")" \
    "$([[ -n $EP_A ]] && echo 1 || echo 0)" "$([[ -n $EP_B ]] && echo 1 || echo 0)"
}

bl_run_rr() {  # SECS: sockperf TCP ping-pong, 64-byte messages, one in flight
  local secs=$1 a0 b0 t0 a1 b1 t1 out
  ip netns exec $NS_B sockperf server --tcp -i $OB -p 11111 >/dev/null 2>&1 &
  local srv=$!
  sleep 0.5
  a0=$(bl_ticks "$EP_A"); b0=$(bl_ticks "$EP_B"); t0=$(date +%s.%N)
  out=$(ip netns exec $NS_A sockperf ping-pong --tcp -i $OB -p 11111 -m 64 -t "$secs" 2>&1 || true)
  a1=$(bl_ticks "$EP_A"); b1=$(bl_ticks "$EP_B"); t1=$(date +%s.%N)
  kill $srv 2>/dev/null; wait $srv 2>/dev/null || true
  printf '%s' "$out" | python3 -c '
import re, sys, os
t = sys.stdin.read(); hz = os.sysconf("SC_CLK_TCK")
da, db, wall, has_a, has_b = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1", sys.argv[5] == "1"
m = re.search(r"RunTime=([0-9.]+) sec; \S*SentMessages=(\d+); \S*ReceivedMessages=(\d+)", t)
p50 = re.search(r"percentile 50.000 =\s*([0-9.]+)", t); p999 = re.search(r"percentile 99.900 =\s*([0-9.]+)", t)
p = lambda v, ok: "%.1f" % (100 * v / hz / wall) if ok else "-"
if not (m and p50 and p999):
    print("\t".join(["-"] * 5))
else:
    print("\t".join(["%.0f" % (int(m.group(3)) / float(m.group(1))), p50.group(1), p999.group(1), p(da, has_a), p(db, has_b)]))
' "$((a1 - a0))" "$((b1 - b0))" "$(awk "BEGIN{print $t1 - $t0}")" \
    "$([[ -n $EP_A ]] && echo 1 || echo 0)" "$([[ -n $EP_B ]] && echo 1 || echo 0)"
}

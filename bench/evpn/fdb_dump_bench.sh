#!/bin/sh
# bench/evpn/fdb_dump_bench.sh: `ofld fdb --json` (and the text listing) of a table of N
# entries at V remote VTEPs, end to end (request over the control socket, the daemon's
# streamed answer, the CLI writing it to a file). The entries are static ([[fdb]] in a TOML
# file) so that the table fills in seconds without gobgpd; an EVPN entry's document differs
# only by its "seq" member. Rounds alternate between the given binaries (same-run ratios).
# Needs root. Usage:
#   sudo bench/evpn/fdb_dump_bench.sh [-n 100000] [-v 1000] [-r 5] [-j] OFLD [OFLD_BASELINE]
# (-j: the JSON document only, not the text listing)
set -eu
N=100000 V=1000 R=5 KINDS="json text"
while getopts n:v:r:j o; do
  case $o in n) N=$OPTARG ;; v) V=$OPTARG ;; r) R=$OPTARG ;; j) KINDS=json ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n N] [-v V] [-r ROUNDS] OFLD [OFLD_BASELINE]" >&2; exit 2; }
NS=ofld-fdbdump-$$ TMP=$(mktemp -d /tmp/ofld-fdbdump.XXXXXX)
PIDS=""
cleanup() {
  for p in $PIDS; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
ip netns add "$NS"
ip -n "$NS" link set lo up
python3 - "$N" "$V" > "$TMP/fdb.toml" <<'EOF'
import sys
n, v = int(sys.argv[1]), int(sys.argv[2])
print('[vxlan]\nid = 100\nlocal = "LOCAL"\nremote = "10.98.1.1"')
for i in range(n):
    r = i % v
    print('[[fdb]]\nmac = "02:ab:00:%02x:%02x:%02x"\nremote = "10.97.%d.%d"'
          % ((i >> 16) & 255, (i >> 8) & 255, i & 255, r >> 8, r & 255))
EOF
k=0
for bin in "$@"; do
  k=$((k + 1))
  ip -n "$NS" addr add 10.98.0.$k/32 dev lo
  sed "s/LOCAL/10.98.0.$k/" "$TMP/fdb.toml" > "$TMP/fdb$k.toml"
  ip netns exec "$NS" "$bin" tunnel --dev fdbd$k --config "$TMP/fdb$k.toml" --control "$TMP/c$k.sock" \
    >"$TMP/ofld$k.log" 2>&1 &
  PIDS="$PIDS $!"
done
for k in $(seq 1 $#); do
  i=0
  until "$1" stats --control "$TMP/c$k.sock" >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -lt 600 ] || { cat "$TMP/ofld$k.log"; exit 1; }; sleep 0.1
  done
done
python3 - "$R" "$TMP" "$PIDS" "$KINDS" "$@" <<'EOF'
import os, statistics, subprocess, sys, time
rounds, tmp, pids, kinds, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(), sys.argv[4].split(), sys.argv[5:]
res = {b: {"json": [], "text": [], "cpu": []} for b in bins}
tick = os.sysconf("SC_CLK_TCK")
def cpu(pid):  # the daemon's user + system CPU seconds (its workers idle: the control thread)
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
for _ in range(rounds):
    for k, b in enumerate(bins, 1):
        for kind, extra in (("json", ["--json"]), ("text", [])):
            if kind not in kinds: continue
            c0 = cpu(pids[k - 1])
            t = time.perf_counter()
            with open(tmp + "/out", "wb") as f:
                subprocess.run([b, "fdb", "--control", "%s/c%d.sock" % (tmp, k)] + extra, stdout=f, check=True)
            res[b][kind].append(time.perf_counter() - t)
            if kind == "json": res[b]["cpu"].append(cpu(pids[k - 1]) - c0)
    size = sum(1 for _ in open(tmp + "/out"))
for b in bins:
    print("%s: fdb --json median %.3f s (min %.3f), daemon CPU per --json median %.3f s, text median %.3f s (min %.3f)" % (
        b, statistics.median(res[b]["json"]), min(res[b]["json"]), statistics.median(res[b]["cpu"]),
        statistics.median(res[b]["text"] or [0]), min(res[b]["text"] or [0])))
if len(bins) == 2:
    a, z = bins
    print("ratio %s / %s: json %.2f, daemon CPU per json %.2f, text %.2f" % (a, z,
          statistics.median(res[a]["json"]) / statistics.median(res[z]["json"]),
          statistics.median(res[a]["cpu"]) / max(statistics.median(res[z]["cpu"]), 1e-9),
          statistics.median(res[a]["text"] or [0]) / (statistics.median(res[z]["text"] or [1]) or 1)))
EOF

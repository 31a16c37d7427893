#!/usr/bin/env bash
# bench/ab.sh BEFORE AFTER REPO [ROUNDS]: two svelto binaries, side by side, on reads.
#
# Both binaries serve the same Svelto repository REPO at once (127.0.0.1, port 0); each
# operation alternates between them, the order flipping from round to round, so that a
# machine whose speed drifts (other work, thermal) weighs on both alike. Each measurement
# runs the operation REPS times and reads the server's CPU time (utime + stime of the server
# process, /proc/PID/stat) around them. Prints the median and min-max over the ROUNDS
# (default 5) for each operation; the raw figures go to WORK/raw.txt.
#
# Operations: export (svnbench null-export TREE), blame (svnbench null-blame HOT), log
# (svnbench null-log -v), log-file (svnbench null-log -v HOT), ls-R (svn ls -R -v TREE),
# cat (svn cat HOT), export-x10 (ten null-exports at once).
#
# Environment: OPS (which operations), REPS (10), HOT (trunk/ChangeLog), TREE (what export,
# ls-R and export-x10 read: trunk; a tag, say, to read a copied tree), WORK (a scratch
# directory, default /tmp/svelto-ab), PROTO (svn, default; http: both serve HTTP too, with
# --http-listen, and the clients use http:// URLs: the stock client's ra_serf), FSFS (the
# same history loaded into FSFS: svnserve -T -M 1024 -c 0 --cache-revprops yes --block-read
# yes serves it too, as a third server in the rotation, and the table gains its column and
# the ratio after/svnserve; svn:// only).
set -euo pipefail

[[ $# -ge 3 ]] || { echo "usage: bench/ab.sh BEFORE AFTER REPO [ROUNDS]" >&2; exit 2; }
declare -A BIN=([before]=$1 [after]=$2)
REPO=$(cd "$3" && pwd)
ROUNDS=${4:-5}
REPS=${REPS:-10}
HOT=${HOT:-trunk/ChangeLog}
TREE=${TREE:-trunk}
OPS=${OPS:-export blame log ls-R cat export-x10}
WORK=${WORK:-/tmp/svelto-ab}
PROTO=${PROTO:-svn}
case $PROTO in
svn) EXTRA=() MARK="listening on 127.0.0.1:" ;;
http) EXTRA=(--http-listen 127.0.0.1:0) MARK="http listening on 127.0.0.1:" ;;
*) echo "PROTO is svn or http, not $PROTO" >&2; exit 2 ;;
esac
for t in svn svnbench awk python3; do
    command -v "$t" >/dev/null || { echo "$t not found (apt-get install -y subversion)" >&2; exit 1; }
done
rm -rf "$WORK"
mkdir -p "$WORK/root" "$WORK/cfg"
ln -s "$REPO" "$WORK/root/r"

declare -A PID PORT
SERVERS=(before after)
trap 'kill "${PID[@]}" 2>/dev/null || true' EXIT
if [[ -n "${FSFS:-}" ]]; then
    [[ $PROTO == svn ]] || { echo "FSFS is for PROTO=svn" >&2; exit 2; }
    command -v svnserve >/dev/null || { echo "svnserve not found" >&2; exit 1; }
    mkdir -p "$WORK/fsfs-root"
    ln -s "$(cd "$FSFS" && pwd)" "$WORK/fsfs-root/r"
    PORT[svnserve]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    svnserve -d --foreground -T -M 1024 -c 0 --cache-revprops yes --block-read yes \
        -r "$WORK/fsfs-root" --listen-host 127.0.0.1 --listen-port "${PORT[svnserve]}" \
        >"$WORK/svnserve.out" 2>&1 &
    PID[svnserve]=$!
    SERVERS+=(svnserve)
    for _ in $(seq 100); do
        svn info --non-interactive "svn://127.0.0.1:${PORT[svnserve]}/r" >/dev/null 2>&1 && break
        sleep 0.1
    done
fi
for b in before after; do
    "${BIN[$b]}" serve -d --foreground -r "$WORK/root" --listen-host 127.0.0.1 --listen-port 0 \
        --log-file "$WORK/$b.log" "${EXTRA[@]}" >"$WORK/$b.out" 2>&1 &
    PID[$b]=$!
done
for b in before after; do
    for _ in $(seq 50); do
        PORT[$b]=$(grep -ho "$MARK[0-9]*" "$WORK/$b.out" "$WORK/$b.log" 2>/dev/null | head -1 | sed "s/.*://" || true)
        [[ -n "${PORT[$b]}" ]] && break
        sleep 0.1
    done
    [[ -n "${PORT[$b]}" ]] || { echo "$b: the server did not start (see $WORK/$b.out)" >&2; exit 1; }
done

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
C=(--non-interactive --config-dir "$WORK/cfg")
run1() { # BINARY OPERATION
    local u="$PROTO://127.0.0.1:${PORT[$1]}/r"
    case $2 in
    export) svnbench null-export "${C[@]}" "$u/$TREE" ;;
    blame) svnbench null-blame "${C[@]}" "$u/$HOT" ;;
    log) svnbench null-log -v "${C[@]}" "$u" ;;
    log-file) svnbench null-log -v "${C[@]}" "$u/$HOT" ;;
    ls-R) svn ls -R -v "${C[@]}" "$u/$TREE" ;;
    cat) svn cat "${C[@]}" "$u/$HOT" ;;
    export-x10)
        local ps=()
        for _ in $(seq 10); do svnbench null-export "${C[@]}" "$u/$TREE" & ps+=($!); done
        wait "${ps[@]}"
        ;;
    *) echo "unknown operation $2" >&2; exit 2 ;;
    esac >/dev/null 2>&1
}
run() { local i; for i in $(seq "$REPS"); do run1 "$@"; done; }

for b in "${SERVERS[@]}"; do for op in $OPS; do run1 "$b" "$op"; done; done # warm-up
for r in $(seq "$ROUNDS"); do
    # Each round starts with the next server (with two, the order flips).
    n=${#SERVERS[@]}
    order=""
    for i in $(seq 0 $((n - 1))); do order="$order ${SERVERS[$(((r + i + n - 1) % n))]}"; done
    for op in $OPS; do
        for b in $order; do
            t0=$(ticks "${PID[$b]}")
            run "$b" "$op"
            t1=$(ticks "${PID[$b]}")
            echo "$r $op $b $((t1 - t0))"
        done
    done
done >"$WORK/raw.txt"

python3 - "$WORK/raw.txt" "$(getconf CLK_TCK)" <<'PY'
import collections, statistics, sys
ticks = collections.defaultdict(list)
ops = []
for line in open(sys.argv[1]):
    _, op, b, t = line.split()
    ticks[(op, b)].append(int(t))
    if op not in ops:
        ops.append(op)
hz = int(sys.argv[2])
def cell(op, b):
    v = ticks[(op, b)]
    return "%.2f s (%.2f-%.2f)" % (statistics.median(v) / hz, min(v) / hz, max(v) / hz)
fsfs = any(b == "svnserve" for (_, b) in ticks)
if fsfs:
    print("| operation | before: server CPU, median (min-max) | after | svnserve | after / svnserve |")
    print("|---|---|---|---|---|")
else:
    print("| operation | before: server CPU, median (min-max) | after |")
    print("|---|---|---|")
for op in ops:
    row = f"| {op} | {cell(op, 'before')} | {cell(op, 'after')} |"
    if fsfs:
        s = statistics.median(ticks[(op, "svnserve")])
        ratio = "%.2f" % (statistics.median(ticks[(op, "after")]) / s) if s else "-"
        row += f" {cell(op, 'svnserve')} | {ratio} |"
    print(row)
PY

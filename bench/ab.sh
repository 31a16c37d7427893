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
# cat (svn cat HOT), export-xN (N null-exports at once, e.g. export-x10), and with the client
# writing files: checkout (svn checkout trunk), svn-export (svn export trunk), update (svn
# update -r UPDATE_TO of a working copy of trunk at UPDATE_FROM, copied afresh before each
# update, the copy not timed). Besides server CPU, the table gives the client's wall time
# per measurement (medians).
#
# Environment: OPS (which operations), REPS (10), HOT (trunk/ChangeLog), TREE (what export,
# ls-R and export-xN read: trunk; a tag, say, to read a copied tree), WORK (a scratch
# directory, default /tmp/svelto-ab), PROTO (svn, default; http: both serve HTTP too, with
# --http-listen, and the clients use http:// URLs: the stock client's ra_serf), FSFS (the
# same history loaded into FSFS: svnserve -T -M 1024 -c 0 --cache-revprops yes --block-read
# yes serves it too, as a third server in the rotation, and the table gains its column and
# the ratio after/svnserve; svn:// only), SVN_TOO (with PROTO=http, 1 adds the BEFORE
# server's svn:// URL to the rotation as "svn", for the ratio of HTTP to svn://), CONFIG (a
# client --config-option for every command, e.g. servers:global:http-bulk-updates=yes),
# WARMUP (the operations run once on each server before the rounds; default OPS),
# UPDATE_FROM (11000), UPDATE_TO (12000).
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
UPDATE_FROM=${UPDATE_FROM:-11000}
UPDATE_TO=${UPDATE_TO:-12000}
rm -rf "$WORK"
mkdir -p "$WORK/root" "$WORK/cfg" "$WORK/tmp"
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

# The "svn" server is the BEFORE binary over its svn:// port.
if [[ $PROTO == http && ${SVN_TOO:-0} == 1 ]]; then
    PID[svn]=${PID[before]}
    PORT[svn]=$(grep -h "listening on 127.0.0.1:" "$WORK/before.out" "$WORK/before.log" 2>/dev/null |
        grep -v "http listening" | grep -o "127.0.0.1:[0-9]*" | head -1 | cut -d: -f2 || true)
    [[ -n "${PORT[svn]}" ]] || { echo "before: no svn:// port found (see $WORK/before.out)" >&2; exit 1; }
    SERVERS+=(svn)
fi
url() {
    case $1 in
    svn | svnserve) echo "svn://127.0.0.1:${PORT[$1]}/r" ;;
    *) echo "$PROTO://127.0.0.1:${PORT[$1]}/r" ;;
    esac
}

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
C=(--non-interactive --config-dir "$WORK/cfg")
[[ -n ${CONFIG:-} ]] && C+=(--config-option "$CONFIG")
WALL=0 # microseconds of client wall time the last run took, preparation not counted
run1() { # SERVER OPERATION
    local u t0 out="$WORK/tmp/$1"
    u=$(url "$1")
    rm -rf "$out"
    if [[ $2 == update ]]; then cp -a "$WORK/wc-$1" "$out"; fi
    t0=${EPOCHREALTIME/./}
    case $2 in
    export) svnbench null-export "${C[@]}" "$u/$TREE" ;;
    blame) svnbench null-blame "${C[@]}" "$u/$HOT" ;;
    log) svnbench null-log -v "${C[@]}" "$u" ;;
    log-file) svnbench null-log -v "${C[@]}" "$u/$HOT" ;;
    ls-R) svn ls -R -v "${C[@]}" "$u/$TREE" ;;
    cat) svn cat "${C[@]}" "$u/$HOT" ;;
    checkout) svn checkout -q "${C[@]}" "$u/trunk" "$out" ;;
    svn-export) svn export -q "${C[@]}" "$u/trunk" "$out" ;;
    update) svn update -q -r "$UPDATE_TO" "${C[@]}" "$out" ;;
    export-x[0-9]*)
        local ps=()
        for _ in $(seq "${2#export-x}"); do svnbench null-export "${C[@]}" "$u/$TREE" & ps+=($!); done
        wait "${ps[@]}"
        ;;
    *) echo "unknown operation $2" >&2; exit 2 ;;
    esac >/dev/null 2>"$WORK/tmp/$1.err" || { echo "$1 $2 failed:" >&2; cat "$WORK/tmp/$1.err" >&2; exit 1; }
    WALL=$((WALL + ${EPOCHREALTIME/./} - t0))
    rm -rf "$out"
}
run() { local i; WALL=0; for i in $(seq "$REPS"); do run1 "$@"; done; }

if [[ " $OPS " == *" update "* ]]; then # the working copies updates start from
    for b in "${SERVERS[@]}"; do
        svn checkout -q -r "$UPDATE_FROM" "${C[@]}" "$(url "$b")/trunk" "$WORK/wc-$b"
    done
fi
for b in "${SERVERS[@]}"; do for op in ${WARMUP-$OPS}; do run1 "$b" "$op"; done; done # warm-up
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
            echo "$r $op $b $((t1 - t0)) $WALL"
        done
    done
done >"$WORK/raw.txt"

python3 - "$WORK/raw.txt" "$(getconf CLK_TCK)" "${SERVERS[@]}" <<'PY'
import collections, statistics, sys
ticks = collections.defaultdict(list)
wall = collections.defaultdict(list)
ops = []
for line in open(sys.argv[1]):
    _, op, b, t, w = line.split()
    ticks[(op, b)].append(int(t))
    wall[(op, b)].append(int(w))
    if op not in ops:
        ops.append(op)
hz = int(sys.argv[2])
servers = sys.argv[3:]
def cell(op, b):
    v = ticks[(op, b)]
    return "%.2f s (%.2f-%.2f) | %.2f s" % (statistics.median(v) / hz, min(v) / hz, max(v) / hz,
                                            statistics.median(wall[(op, b)]) / 1e6)
fsfs = "svnserve" in servers
head = " | ".join(f"{b}: server CPU, median (min-max) | {b}: client wall" for b in servers)
print(f"| operation | {head} |" + (" after / svnserve |" if fsfs else ""))
print("|---" * (1 + 2 * len(servers) + fsfs) + "|")
for op in ops:
    row = f"| {op} | " + " | ".join(cell(op, b) for b in servers) + " |"
    if fsfs:
        s = statistics.median(ticks[(op, "svnserve")])
        ratio = "%.2f" % (statistics.median(ticks[(op, "after")]) / s) if s else "-"
        row += f" {ratio} |"
    print(row)
PY

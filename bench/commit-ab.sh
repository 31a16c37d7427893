#!/usr/bin/env bash
# bench/commit-ab.sh BEFORE AFTER [ROUNDS] [N]: commits to two svelto builds, side by side.
#
# Each binary serves a fresh empty repository of its own (anonymous writes) over svn://
# and, with PROTO=http, over http:// (--http-listen). Each round makes N one-file commits
# (`svnmucc put` of a 27 KB file, one line appended each time) to each server, the order
# flipping from round to round, and reads the server's CPU time (utime + stime,
# /proc/PID/stat) around them. Prints each round's ticks (1/100 s) and wall time, then the
# medians. For a change that should not move commit cost (a refactor): compare the
# medians; the machine's drift weighs on both alike.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: bench/commit-ab.sh BEFORE AFTER [ROUNDS] [N]" >&2; exit 2; }
declare -A BIN=([before]=$1 [after]=$2) URL PID
R=${3:-6}; N=${4:-30}; PROTO=${PROTO:-svn}
W=$(mktemp -d /tmp/commit-ab.XXXXXX)
trap 'kill "${PID[@]}" 2>/dev/null || true; rm -rf "$W"' EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
for b in before after; do
    mkdir -p "$W/$b"
    "${BIN[$b]}" admin create "$W/$b/r" >/dev/null
    printf '[general]\nanon-access = write\n' > "$W/$b/r/conf/svnserve.conf"
    port=$(free_port); hport=$(free_port)
    "${BIN[$b]}" serve -d --foreground --listen-host 127.0.0.1 --listen-port "$port" \
        --http-listen "127.0.0.1:$hport" -r "$W/$b" >/dev/null 2>&1 &
    PID[$b]=$!
    if [[ $PROTO == http ]]; then URL[$b]=http://127.0.0.1:$hport/r; else URL[$b]=svn://127.0.0.1:$port/r; fi
done
sleep 1
head -c 20000 /dev/urandom | base64 > "$W/file"
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
i=0
for r in $(seq "$R"); do
    order="before after"; [[ $((r % 2)) == 0 ]] && order="after before"
    for b in $order; do
        c0=$(cpu "${PID[$b]}"); t0=$(date +%s%N)
        for n in $(seq "$N"); do
            i=$((i + 1)); echo "line $i" >> "$W/file"
            svnmucc -m "c$i" put "$W/file" "${URL[$b]}/f$((n % 5))" --non-interactive >/dev/null
        done
        c1=$(cpu "${PID[$b]}"); t1=$(date +%s%N)
        echo "$r $b ticks=$((c1 - c0)) wall_ms=$(((t1 - t0) / 1000000))" | tee -a "$W/raw"
    done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }'; }
for b in before after; do
    read -r t tmin tmax < <(awk -v b="$b" '$2 == b { sub("ticks=", "", $3); print $3 }' "$W/raw" | median)
    read -r w _ _ < <(awk -v b="$b" '$2 == b { sub("wall_ms=", "", $4); print $4 }' "$W/raw" | median)
    echo "$b: server CPU median $t ticks per $N commits (min $tmin, max $tmax), wall median $w ms"
done

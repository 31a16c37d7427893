#!/usr/bin/env bash
# bench/commit.sh [RUNS]: commits to svelto serve vs svnserve, side by side.
#
# For each run, two fresh empty repositories (FSFS served by svnserve in its fastest
# configuration, `-T -M 1024 -c 0 --cache-revprops yes --block-read yes`, and Svelto served
# by `svelto serve`), both on 127.0.0.1, writable by anonymous clients. Against each, in
# alternating order:
#   latency  COMMITS one-file commits in a row (`svnmucc put`), wall time of each
#   import   `svn import` of a generated tree of FILES files (deterministic contents)
#   writers  WRITERS clients committing to their own files as fast as they can for
#            DURATION seconds (`svnmucc put` in a loop): commits per second, failures
# Server CPU comes from /proc around each workload. Prints a markdown table (medians over
# the runs, min-max) and writes it, with every raw run as JSON lines, to
# OUT_DIR/commit.{md,jsonl} (default bench/results/DAY/).
#
# Environment: SVELTO_BIN=PATH (default: build target/release/svelto), COMMITS (30),
# FILES (20000), WRITERS (8), DURATION (120), SCRATCH (bench/work/commit).
set -euo pipefail

RUNS=${1:-3}
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/commit.sh [RUNS]" >&2; exit 2; }
COMMITS=${COMMITS:-30}
FILES=${FILES:-20000}
WRITERS=${WRITERS:-8}
DURATION=${DURATION:-120}

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
SCRATCH=${SCRATCH:-$BENCH/work/commit}
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
JSON=$SCRATCH/commit.jsonl
: >"$JSON"

NAME=commit.sh
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"
results_dir

for t in svn svnmucc svnserve svnadmin awk; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install -y subversion)"
done
TICK=$(getconf CLK_TCK)
if [[ -n "${SVELTO_BIN:-}" ]]; then
    SV=$SVELTO_BIN
else
    say "building svelto (cargo build --release -p svelto-cli)"
    (cd "$ROOT" && cargo build --release -q -p svelto-cli) || die "building svelto failed"
    SV=$TARGET/release/svelto
fi
SV=$(cd "$(dirname "$SV")" && pwd)/$(basename "$SV")
BUILD="$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet HEAD -- crates Cargo.toml Cargo.lock 2>/dev/null || echo '+changes')"

# ----- the tree to import: FILES files, 20 per directory, 50 directories per parent ----
TREE=$SCRATCH/tree-$FILES
if [[ ! -d "$TREE" ]]; then
    say "generating $TREE"
    awk -v n="$FILES" -v root="$TREE" 'BEGIN {
        srand(1)
        for (i = 0; i < n; i++) {
            d = root "/d" int(i / 1000) "/e" int(i / 20)
            if (i % 20 == 0) system("mkdir -p " d)
            f = d "/f" (i % 20) ".txt"
            lines = 5 + int(rand() * 200)
            for (l = 0; l < lines; l++) printf "line %d of file %d: %d\n", l, i, int(rand() * 1e9) > f
            close(f)
        }
    }'
fi

CFG=$SCRATCH/config
mkdir -p "$CFG"
C=(--non-interactive --no-auth-cache --config-dir "$CFG")
declare -A PID URL

port_of() {
    local pid=$1 inodes hex
    inodes=$(find "/proc/$pid/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | sed 's/socket:\[\(.*\)\]/\1/')
    [[ -n "$inodes" ]] || return 1
    hex=$(awk -v ino=" $(echo "$inodes" | tr '\n' ' ')" '$4 == "0A" && index(ino, " " $10 " ") { split($2, a, ":"); print a[2]; exit }' /proc/net/tcp)
    [[ -n "$hex" ]] || return 1
    echo $((16#$hex))
}
stop_servers() {
    local s
    for s in "${!PID[@]}"; do kill "${PID[$s]}" 2>/dev/null || true; done
    wait 2>/dev/null || true
    PID=()
}
trap stop_servers EXIT
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

start() {
    local s=$1 root=$SCRATCH/root-$1 port="" i
    rm -rf "$root"
    mkdir -p "$root"
    if [[ $s == svnserve ]]; then
        svnadmin create "$root/repo"
    else
        "$SV" admin create "$root/repo" >/dev/null
        mkdir -p "$root/repo/conf"
    fi
    printf '[general]\nanon-access = write\n' >"$root/repo/conf/svnserve.conf"
    if [[ $s == svnserve ]]; then
        svnserve -d --foreground -T -M 1024 -c 0 --cache-revprops yes --block-read yes \
            -r "$root" --listen-host 127.0.0.1 --listen-port 0 2>"$SCRATCH/$s.stderr" &
    else
        "$SV" serve -d --foreground -r "$root" --listen-host 127.0.0.1 --listen-port 0 \
            2>"$SCRATCH/$s.stderr" &
    fi
    PID[$s]=$!
    # The listening socket's port, read from /proc for both servers (the server's
    # standard error may not even exist yet when the first check runs).
    for i in $(seq 1 100); do
        kill -0 "${PID[$s]}" 2>/dev/null || break
        port=$(port_of "${PID[$s]}") || port=""
        [[ -n "$port" ]] && break
        sleep 0.1
    done
    [[ -n "$port" ]] || die "$s did not start: $(cat "$SCRATCH/$s.stderr" 2>/dev/null)"
    URL[$s]=svn://127.0.0.1:$port/repo
}

now() { date +%s.%N; }
record() { # server run workload key value...
    local s=$1 r=$2 w=$3
    shift 3
    local extra=""
    while (($#)); do extra+=", \"$1\": $2"; shift 2; done
    echo "{\"server\": \"$s\", \"run\": $r, \"workload\": \"$w\"$extra}" >>"$JSON"
}

run_one() { # server run
    local s=$1 r=$2 t0 t1 c0 i w ok bad
    start "$s"
    local url=${URL[$s]} pid=${PID[$s]}
    svn "${C[@]}" mkdir -q -m layout "$url/trunk" "$url/writers"
    # latency: one file changed COMMITS times
    local lat=()
    echo 0 >"$SCRATCH/payload"
    svnmucc "${C[@]}" -m first -U "$url" put "$SCRATCH/payload" trunk/one.txt >/dev/null
    c0=$(ticks "$pid")
    for i in $(seq 1 "$COMMITS"); do
        echo "$i" >"$SCRATCH/payload"
        t0=$(now)
        svnmucc "${C[@]}" -m "change $i" -U "$url" put "$SCRATCH/payload" trunk/one.txt >/dev/null
        t1=$(now)
        lat+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')")
    done
    local med
    med=$(printf '%s\n' "${lat[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    record "$s" "$r" latency median_s "$med" server_cpu_s "$(awk -v t="$(( $(ticks "$pid") - c0 ))" -v k="$TICK" -v n="$COMMITS" 'BEGIN { printf "%.4f", t / k / n }')"
    # import
    c0=$(ticks "$pid")
    t0=$(now)
    svn "${C[@]}" import -q -m import "$TREE" "$url/trunk/tree"
    t1=$(now)
    record "$s" "$r" import wall_s "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" server_cpu_s "$(awk -v t="$(( $(ticks "$pid") - c0 ))" -v k="$TICK" 'BEGIN { printf "%.3f", t / k }')"
    # writers
    c0=$(ticks "$pid")
    local end=$(( $(date +%s) + DURATION ))
    for w in $(seq 1 "$WRITERS"); do
        (
            ok=0 bad=0 i=0
            echo "writer $w" >"$SCRATCH/payload.$w"
            while (( $(date +%s) < end )); do
                i=$((i + 1))
                if svnmucc "${C[@]}" -m "w$w c$i" -U "$url" put "$SCRATCH/payload.$w" "writers/w$w-$i.txt" >/dev/null 2>>"$SCRATCH/$s.writer-errors"; then
                    ok=$((ok + 1))
                else
                    bad=$((bad + 1))
                fi
            done
            echo "$ok $bad" >"$SCRATCH/writer.$w"
        ) &
    done
    mapfile -t writers < <(jobs -p | grep -v "^$pid$")
    wait "${writers[@]}" 2>/dev/null || true
    read -r ok bad < <(cat "$SCRATCH"/writer.* | awk '{ o += $1; b += $2 } END { print o, b }')
    rm -f "$SCRATCH"/writer.*
    record "$s" "$r" writers commits "$ok" failures "$bad" per_s "$(awk -v o="$ok" -v d="$DURATION" 'BEGIN { printf "%.2f", o / d }')" server_cpu_s "$(awk -v t="$(( $(ticks "$pid") - c0 ))" -v k="$TICK" 'BEGIN { printf "%.2f", t / k }')"
    stop_servers
}

: >"$SCRATCH/svnserve.writer-errors"
: >"$SCRATCH/svelto.writer-errors"
for r in $(seq 1 "$RUNS"); do
    if ((r % 2)); then order=(svnserve svelto); else order=(svelto svnserve); fi
    for s in "${order[@]}"; do
        say "run $r: $s"
        run_one "$s" "$r"
    done
done

# ----- table ----------------------------------------------------------------------
stat() { # workload key server -> "median (min-max)"
    grep "\"server\": \"$3\"" "$JSON" | grep "\"workload\": \"$1\"" |
        sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" | sort -n |
        awk '{ v[NR] = $1 } END { if (NR) printf "%s (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
med() { stat "$@" | cut -d' ' -f1; }
# svelto/svnserve; a server CPU time of 0 means less than one clock tick (10 ms) in all,
# which short runs (SMOKE=1) can measure: said so rather than divided by.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "n/a (svnserve under one clock tick)" }'; }
OUT_MD=$OUT_DIR/commit.md
{
    echo "# Commits: svelto serve vs svnserve ($STAMP)"
    echo
    echo "Machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), load before: $LOAD0."
    echo "Command: \`bench/commit.sh $RUNS\` (COMMITS=$COMMITS FILES=$FILES WRITERS=$WRITERS DURATION=$DURATION); svelto $BUILD; $(svn --version --quiet) client and svnserve (-T -M 1024 -c 0 --cache-revprops yes --block-read yes)."
    echo "Medians over $RUNS runs (min-max). Ratio: svelto/svnserve for times, svelto/svnserve for throughput."
    echo
    echo "| workload | measure | svnserve | svelto | ratio |"
    echo "|---|---|---|---|---|"
    echo "| one-file commit (svnmucc put) | wall s per commit | $(stat latency median_s svnserve) | $(stat latency median_s svelto) | $(ratio "$(med latency median_s svnserve)" "$(med latency median_s svelto)") |"
    echo "| one-file commit | server CPU s per commit | $(stat latency server_cpu_s svnserve) | $(stat latency server_cpu_s svelto) | $(ratio "$(med latency server_cpu_s svnserve)" "$(med latency server_cpu_s svelto)") |"
    echo "| svn import, $FILES files | wall s | $(stat import wall_s svnserve) | $(stat import wall_s svelto) | $(ratio "$(med import wall_s svnserve)" "$(med import wall_s svelto)") |"
    echo "| svn import | server CPU s | $(stat import server_cpu_s svnserve) | $(stat import server_cpu_s svelto) | $(ratio "$(med import server_cpu_s svnserve)" "$(med import server_cpu_s svelto)") |"
    echo "| $WRITERS writers, ${DURATION}s | commits/s | $(stat writers per_s svnserve) | $(stat writers per_s svelto) | $(ratio "$(med writers per_s svnserve)" "$(med writers per_s svelto)") |"
    echo "| $WRITERS writers | failed commits | $(stat writers failures svnserve) | $(stat writers failures svelto) | |"
    echo "| $WRITERS writers | server CPU s | $(stat writers server_cpu_s svnserve) | $(stat writers server_cpu_s svelto) | $(ratio "$(med writers server_cpu_s svnserve)" "$(med writers server_cpu_s svelto)") |"
} >"$OUT_MD"
cp "$JSON" "$OUT_DIR/commit.jsonl"
cat "$OUT_MD"
for s in svnserve svelto; do
    if [[ -s "$SCRATCH/$s.writer-errors" ]]; then
        say "$s writer errors (first 5):"
        sort "$SCRATCH/$s.writer-errors" | uniq -c | sort -rn | head -n 5 >&2
    fi
done

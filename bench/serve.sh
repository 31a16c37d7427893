#!/usr/bin/env bash
# bench/serve.sh SIZE [RUNS]: svelto serve vs svnserve, side by side.
#
# Serves the same history from a packed FSFS repository (svnserve, in its fastest
# configuration) and from a Svelto repository (svelto serve), both on 127.0.0.1, and
# times the same svn 1.14 client commands against each: export, log -v, blame, list,
# checkout, update, and concurrent exports. Each server runs for the whole session; the
# script reads its CPU time and memory from /proc around every operation. One untimed
# warm-up pass of every operation comes first: the table compares hot caches. Runs
# alternate which server goes first. Prints a markdown table and writes it, with every
# raw run as JSON lines, to bench/results/DATE-serve-SIZE.{md,jsonl}.
#
# Environment:
#   SEED=N            generator seed (default 1)
#   SVELTO=none       measure svnserve only (while `svelto serve` is not ready)
#   SVELTO_BIN=PATH   use this svelto binary instead of building target/release/svelto
#   DATA=DIR          where SIZE-seedN.dump lives (default bench/data)
#   WORK=DIR          where fsfs-SIZE and svelto-SIZE live (default bench/work); a missing
#                     repository is created from the dump as admin.sh does. The script
#                     only reads them.
#   SCRATCH=DIR       working copies, server roots and logs (default WORK/serve-SIZE)
#   CONCURRENT=N      parallel exports in the concurrency test (default 20)
#   SPAN=N            revisions crossed by the update test (default 1000, at most
#                     half of HEAD)
#   TIMEOUT=S         give up on any single client command after S seconds (default 1800)
#
# See bench/README.md for what is measured and how to read the table.
set -euo pipefail

usage() {
    echo "usage: bench/serve.sh small|medium|large [RUNS]" >&2
    exit 2
}
SIZE=${1:-}
RUNS=${2:-3}
case "$SIZE" in small | medium | large) ;; *) usage ;; esac
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || usage
SEED=${SEED:-1}
SVELTO=${SVELTO:-yes}
CONCURRENT=${CONCURRENT:-20}
TIMEOUT=${TIMEOUT:-1800}
[[ "$CONCURRENT" =~ ^[1-9][0-9]*$ ]] || usage
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || usage

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
DATA=${DATA:-$BENCH/data}
WORK=${WORK:-$BENCH/work}
SCRATCH=${SCRATCH:-$WORK/serve-$SIZE}
RESULTS=$BENCH/results
mkdir -p "$DATA" "$WORK" "$SCRATCH" "$RESULTS"
DATA=$(cd "$DATA" && pwd)
WORK=$(cd "$WORK" && pwd)
SCRATCH=$(cd "$SCRATCH" && pwd)

T_START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
DAY=$(date -u +%Y-%m-%d)
STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
OUT_MD=$RESULTS/$DAY-serve-$SIZE.md
OUT_JSON=$RESULTS/$DAY-serve-$SIZE.jsonl
# Raw records collect in the scratch directory; the results replace earlier ones of the
# same day only once the run has finished.
RAW=$SCRATCH/serve.tsv
JSON=$SCRATCH/serve.jsonl
: >"$RAW"
: >"$JSON"

NAME=serve.sh
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"

# ----- tools ----------------------------------------------------------------------

need_gnu_time
for t in svn svnbench svnserve svnadmin svnlook timeout; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install -y subversion coreutils)"
done
TICK=$(getconf CLK_TCK)

SVELTO_DESC="not measured (SVELTO=none)"
SERVERS=(svnserve)
if [[ "$SVELTO" != none ]]; then
    if [[ -n "${SVELTO_BIN:-}" ]]; then
        SV=$SVELTO_BIN
    else
        command -v cargo >/dev/null || die "cargo not found (or set SVELTO_BIN)"
        # cargo rebuilds only when the sources changed: this is the staleness check.
        say "building svelto (cargo build --release -p svelto-cli)"
        (cd "$ROOT" && cargo build --release -q -p svelto-cli) ||
            die "building svelto failed; fix it, or run with SVELTO=none to measure svnserve only"
        SV=$TARGET/release/svelto
    fi
    [[ -x "$SV" ]] || die "$SV is missing; run with SVELTO=none to measure svnserve only"
    SV=$(cd "$(dirname "$SV")" && pwd)/$(basename "$SV")
    "$SV" serve --help >/dev/null 2>&1 ||
        die "'$SV serve' does not exist yet; run with SVELTO=none to measure svnserve only"
    SVELTO_DESC="$SV ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet HEAD -- crates Cargo.toml Cargo.lock 2>/dev/null || echo '+changes'))"
    SERVERS+=(svelto)
fi

# ----- data and repositories ------------------------------------------------------

DUMP=$DATA/$SIZE-seed$SEED.dump
if [[ ! -s "$DUMP" ]]; then
    command -v cargo >/dev/null || die "$DUMP is missing and cargo is not there to build svelto-gen"
    say "building svelto-gen (cargo build --release -p svelto-bench)"
    (cd "$ROOT" && cargo build --release -q -p svelto-bench) || die "building svelto-gen failed"
    say "generating $DUMP"
    "$TARGET/release/svelto-gen" --size "$SIZE" --seed "$SEED" -o "$DUMP.tmp"
    mv "$DUMP.tmp" "$DUMP"
fi
DUMP_BYTES=$(stat -c %s "$DUMP")
DUMP_MD5=$(md5sum "$DUMP" | cut -d' ' -f1)

FSFS=$WORK/fsfs-$SIZE
SVR=$WORK/svelto-$SIZE
if [[ ! -f "$FSFS/db/current" ]]; then
    say "$FSFS is missing: creating it as admin.sh does (svnadmin load + pack; minutes for medium)"
    rm -rf "$FSFS"
    svnadmin create --compatible-version 1.14 "$FSFS"
    svnadmin load -q "$FSFS" <"$DUMP" || die "svnadmin load into $FSFS failed"
    svnadmin pack -q "$FSFS" || die "svnadmin pack $FSFS failed"
fi
if [[ "$SVELTO" != none && ! -d "$SVR/db" ]]; then
    say "$SVR is missing: creating it as admin.sh does (svelto admin load)"
    rm -rf "$SVR"
    "$SV" admin create "$SVR" >/dev/null || die "$SV admin create $SVR failed"
    "$SV" admin load -q "$SVR" <"$DUMP" || die "$SV admin load into $SVR failed"
fi
HEAD=$(svnlook youngest "$FSFS")

# ----- choosing the files to blame -----------------------------------------------

# Files at HEAD under trunk, plainly named (no spaces, no non-ASCII: the URL needs no
# escaping), with how many dump records (add, change, replace) touched that path.
say "choosing the files to blame (counting the dump's node records; untimed)"
svnlook tree --full-paths "$FSFS" trunk | LC_ALL=C grep -E '^trunk/[A-Za-z0-9._/+-]*[^/]$' |
    LC_ALL=C sort >"$SCRATCH/head-files.txt"
LC_ALL=C grep -a -E '^Node-(path|kind|action): ' "$DUMP" |
    awk -v files="$SCRATCH/head-files.txt" '
        function flush() { if (path != "" && action != "delete" && kind != "dir") n[path]++ }
        BEGIN { while ((getline f < files) > 0) head[f] = 1 }
        /^Node-path: / { flush(); path = substr($0, 12); kind = ""; action = ""; next }
        /^Node-kind: / { kind = substr($0, 12); next }
        /^Node-action: / { action = substr($0, 14); next }
        END { flush(); for (p in n) if (p in head) print n[p] "\t" p }' |
    LC_ALL=C sort -t$'\t' -k1,1nr -k2,2 >"$SCRATCH/file-counts.tsv"
[[ -s "$SCRATCH/file-counts.tsv" ]] || die "found no files under trunk at r$HEAD in $FSFS"
is_text() { [[ "$(svnlook propget "$FSFS" svn:mime-type "$1" 2>/dev/null || true)" != application/* ]]; }
HOT_FILE="" HOT_COUNT=""
while IFS=$'\t' read -r n p; do
    if is_text "$p"; then HOT_FILE=$p HOT_COUNT=$n && break; fi
done <"$SCRATCH/file-counts.tsv"
MEAN=$(awk -F'\t' '{ s += $1 } END { printf "%.2f", s / NR }' "$SCRATCH/file-counts.tsv")
AVG_FILE="" AVG_COUNT=""
while IFS=$'\t' read -r _ n p; do
    if is_text "$p"; then AVG_FILE=$p AVG_COUNT=$n && break; fi
done < <(awk -F'\t' -v m="$MEAN" '{ d = $1 - m; if (d < 0) d = -d; printf "%.4f\t%s\t%s\n", d, $1, $2 }' \
    "$SCRATCH/file-counts.tsv" | LC_ALL=C sort -t$'\t' -k1,1n -k3,3)
[[ -n "$HOT_FILE" && -n "$AVG_FILE" ]] || die "could not choose text files to blame"
N_FILES=$(wc -l <"$SCRATCH/file-counts.tsv")
# The revisions blame really visits (its history, across copies).
hist() { svn log -q "file://$FSFS/$1" | grep -c '^r' || true; }
HOT_HIST=$(hist "$HOT_FILE")
AVG_HIST=$(hist "$AVG_FILE")
say "blame: $HOT_FILE ($HOT_COUNT records, $HOT_HIST revisions in its log) and $AVG_FILE ($AVG_COUNT records, $AVG_HIST in its log; mean over $N_FILES files $MEAN)"

SPAN=${SPAN:-1000}
if ((SPAN > HEAD / 2)); then SPAN=$((HEAD / 2)); fi
FROM=$((HEAD - SPAN))

# ----- servers --------------------------------------------------------------------

CFG=$SCRATCH/config
rm -rf "$CFG" "$SCRATCH"/wc-* "$SCRATCH"/root-*
mkdir -p "$CFG"
declare -A PID URL LOG
ERRF=$SCRATCH/stderr.txt

stop_servers() {
    local s
    for s in "${!PID[@]}"; do
        kill "${PID[$s]}" 2>/dev/null || true
    done
    wait 2>/dev/null || true
}
trap stop_servers EXIT

# port_of PID: the TCP port the process listens on (from /proc, no tools needed).
port_of() {
    local pid=$1 inodes hex
    inodes=$(find "/proc/$pid/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | sed 's/socket:\[\(.*\)\]/\1/')
    [[ -n "$inodes" ]] || return 1
    hex=$(awk -v ino=" $(echo "$inodes" | tr '\n' ' ')" '$4 == "0A" && index(ino, " " $10 " ") { split($2, a, ":"); print a[2]; exit }' /proc/net/tcp)
    [[ -n "$hex" ]] || return 1
    echo $((16#$hex))
}

start_server() {
    local s=$1 root=$SCRATCH/root-$1 i port=""
    mkdir -p "$root"
    LOG[$s]=$SCRATCH/$s.log
    : >"${LOG[$s]}"
    if [[ $s == svnserve ]]; then
        ln -s "$FSFS" "$root/$SIZE"
        svnserve -d --foreground -T -M 1024 -c 0 --cache-revprops yes --block-read yes \
            -r "$root" --listen-host 127.0.0.1 --listen-port 0 --log-file "${LOG[$s]}" \
            2>"$SCRATCH/$s.stderr" &
    else
        ln -s "$SVR" "$root/$SIZE"
        "$SV" serve -d --foreground -r "$root" --listen-host 127.0.0.1 --listen-port 0 \
            --log-file "${LOG[$s]}" 2>"$SCRATCH/$s.stderr" &
    fi
    PID[$s]=$!
    for i in $(seq 1 100); do
        kill -0 "${PID[$s]}" 2>/dev/null || break
        if [[ $s == svnserve ]]; then
            port=$(port_of "${PID[$s]}") || port=""
        else
            port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$SCRATCH/$s.stderr" | head -n 1)
        fi
        [[ -n "$port" ]] && break
        sleep 0.1
    done
    if [[ -z "$port" ]]; then
        cat "$SCRATCH/$s.stderr" "${LOG[$s]}" >&2
        die "$s did not start listening"
    fi
    URL[$s]=svn://127.0.0.1:$port/$SIZE
    say "$s: pid ${PID[$s]}, ${URL[$s]}"
}

ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

for s in "${SERVERS[@]}"; do start_server "$s"; done
declare -A RSS0 TICKS0 PEAK
for s in "${SERVERS[@]}"; do
    PEAK[$s]=0
    RSS0[$s]=$(status_kb "${PID[$s]}" VmRSS)
    TICKS0[$s]=$(ticks "${PID[$s]}")
done

fail() {
    local s=$1
    shift
    say "FAILED against $s: $*"
    if [[ -s "$ERRF" ]]; then
        say "its standard error (last 30 lines):"
        tail -n 30 "$ERRF" >&2
    fi
    if ! kill -0 "${PID[$s]}" 2>/dev/null; then say "the $s server has exited"; fi
    say "the $s log (last 10 lines, ${LOG[$s]}):"
    tail -n 10 "${LOG[$s]}" "$SCRATCH/$s.stderr" >&2 || true
    exit 1
}

# client S CMD...: runs an untimed client command against server S, output to stdout.
client() {
    local s=$1
    shift
    timeout "$TIMEOUT" "$@" 2>"$ERRF" || fail "$s" "$*"
}

SVNOPT=(--non-interactive --config-dir "$CFG")

# ----- checking that both serve the same repository (untimed) ----------------------

say "checking the servers' answers (untimed): svn log -q -l 5, svn ls -R trunk | md5sum"
declare -A LOGQ LSMD5
for s in "${SERVERS[@]}"; do
    LOGQ[$s]=$(client "$s" svn log "${SVNOPT[@]}" -q -l 5 "${URL[$s]}")
    LSMD5[$s]=$(client "$s" svn ls "${SVNOPT[@]}" -R "${URL[$s]}/trunk" | md5sum | cut -d' ' -f1)
done
REF_LOGQ=$(svn log "${SVNOPT[@]}" -q -l 5 "file://$FSFS")
REF_LSMD5=$(svn ls "${SVNOPT[@]}" -R "file://$FSFS/trunk" | md5sum | cut -d' ' -f1)
for s in "${SERVERS[@]}"; do
    if [[ "${LOGQ[$s]}" != "$REF_LOGQ" ]]; then
        say "svn log -q -l 5 ${URL[$s]} differs from file://$FSFS:"
        diff <(echo "$REF_LOGQ") <(echo "${LOGQ[$s]}") >&2 || true
        die "$s does not serve the same history"
    fi
    [[ "${LSMD5[$s]}" == "$REF_LSMD5" ]] ||
        die "svn ls -R ${URL[$s]}/trunk | md5sum: ${LSMD5[$s]}, file://$FSFS/trunk: $REF_LSMD5"
done
names="${SERVERS[*]}"
CHECK_LINE="svn log -q -l 5 and svn ls -R trunk (md5 $REF_LSMD5) identical to file:// on FSFS for ${names// / and }"

# ----- measuring ------------------------------------------------------------------

OPS=(export log blame-hot blame-avg list checkout update-null update-span "export-x$CONCURRENT")

# The concurrency test: CONCURRENT exports at once; fails if any fails.
concurrent_export() {
    local n=$1 url=$2 dir=$3 i pids=() rc=0
    shift 3
    for i in $(seq 1 "$n"); do
        svnbench null-export "$@" "$url/trunk" >/dev/null 2>"$dir/par-$i.err" &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do
        if ! wait "${pids[$i]}"; then
            echo "export $((i + 1)) of $n failed:" >&2
            cat "$dir/par-$((i + 1)).err" >&2
            rc=1
        fi
    done
    return $rc
}
export -f concurrent_export

# op_cmd S OP: the client command of OP against server S, into the array CMD.
op_cmd() {
    local s=$1 op=$2 u=${URL[$1]}
    case "$op" in
    export) CMD=(svnbench null-export "${SVNOPT[@]}" "$u/trunk") ;;
    log) CMD=(svnbench null-log -v "${SVNOPT[@]}" "$u") ;;
    blame-hot) CMD=(svnbench null-blame "${SVNOPT[@]}" "$u/$HOT_FILE") ;;
    blame-avg) CMD=(svnbench null-blame "${SVNOPT[@]}" "$u/$AVG_FILE") ;;
    list) CMD=(svnbench null-list -R "${SVNOPT[@]}" "$u/trunk") ;;
    checkout) CMD=(svn checkout -q "${SVNOPT[@]}" "$u/trunk" "$SCRATCH/wc-$s") ;;
    update-null) CMD=(svn update -q "${SVNOPT[@]}" "$SCRATCH/wc-$s") ;;
    update-span) CMD=(svn update -q "${SVNOPT[@]}" -r "$HEAD" "$SCRATCH/wc-span-$s") ;;
    export-x*) CMD=(bash -c 'concurrent_export "$@"' _ "$CONCURRENT" "$u" "$SCRATCH" "${SVNOPT[@]}") ;;
    esac
}

# Untimed preparation before OP, and cleaning after it.
op_before() {
    case "$2" in
    checkout) rm -rf "$SCRATCH/wc-$1" ;;
    update-span)
        rm -rf "$SCRATCH/wc-span-$1"
        client "$1" svn checkout -q "${SVNOPT[@]}" -r "$FROM" "${URL[$1]}/trunk" "$SCRATCH/wc-span-$1"
        ;;
    esac
}
op_after() {
    case "$2" in
    update-null) rm -rf "$SCRATCH/wc-$1" ;;
    update-span)
        [[ "$(svn info --show-item revision "${SVNOPT[@]}" "$SCRATCH/wc-span-$1")" == "$HEAD" ]] ||
            fail "$1" "the update did not bring $SCRATCH/wc-span-$1 to r$HEAD"
        rm -rf "$SCRATCH/wc-span-$1"
        ;;
    esac
}

# measure RUN S OP: runs OP's client command against server S under /usr/bin/time and
# reads the server's CPU ticks and memory around it; appends a raw record.
measure() {
    local run=$1 s=$2 op=$3 pid=${PID[$2]} tf out
    op_cmd "$s" "$op"
    op_before "$s" "$op"
    sync
    tf=$SCRATCH/time.txt
    out=/dev/null
    ((run == 0)) && out=$SCRATCH/out-$s-$op.txt
    kill -0 "$pid" 2>/dev/null || fail "$s" "(the server is gone before $op)"
    local t0 r0 t1 r1 hwm
    r0=$(status_kb "$pid" VmRSS)
    hwm=$(status_kb "$pid" VmHWM)
    ((hwm > PEAK[$s])) && PEAK[$s]=$hwm
    # Resets the peak RSS (VmHWM) to the current RSS: the peak then is this operation's.
    echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || true
    t0=$(ticks "$pid")
    if ! /usr/bin/time -o "$tf" -f '%e %U %S %M' timeout "$TIMEOUT" "${CMD[@]}" >"$out" 2>"$ERRF"; then
        cat "$tf" >&2
        fail "$s" "${CMD[*]}"
    fi
    t1=$(ticks "$pid")
    r1=$(status_kb "$pid" VmRSS)
    hwm=$(status_kb "$pid" VmHWM)
    ((hwm > PEAK[$s])) && PEAK[$s]=$hwm
    op_after "$s" "$op"
    local wall user sys rss cpu
    read -r wall user sys rss < <(tail -n 1 "$tf")
    cpu=$(awk -v a="$t0" -v b="$t1" -v t="$TICK" 'BEGIN { printf "%.2f", (b - a) / t }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$run" "$s" "$op" "$wall" "$user" "$sys" "$rss" \
        "$cpu" "$r0" "$r1" "$hwm" >>"$RAW"
    printf '{"date":"%s","size":"%s","seed":%s,"run":%s,"warmup":%s,"server":"%s","op":"%s","wall_s":%s,"client_user_s":%s,"client_sys_s":%s,"client_max_rss_kb":%s,"server_cpu_s":%s,"server_rss_before_kb":%s,"server_rss_after_kb":%s,"server_peak_rss_kb":%s}\n' \
        "$STAMP" "$SIZE" "$SEED" "$run" "$([[ $run == 0 ]] && echo true || echo false)" "$s" "$op" \
        "$wall" "$user" "$sys" "$rss" "$cpu" "$r0" "$r1" "$hwm" >>"$JSON"
    say "run $run: $s $op: ${wall}s wall, client ${user}s user ${sys}s sys; server ${cpu}s CPU, RSS ${r0}->${r1} KB, peak ${hwm} KB"
}

for run in $(seq 0 "$RUNS"); do
    ((run == 0)) && say "warm-up pass (run 0, not in the table)"
    # Alternate which server goes first, so that drift in the machine hits both.
    order=("${SERVERS[@]}")
    if ((run % 2 == 0 && ${#SERVERS[@]} == 2)); then order=(svelto svnserve); fi
    for op in "${OPS[@]}"; do
        for s in "${order[@]}"; do measure "$run" "$s" "$op"; done
    done
done

# The warm-up outputs of svnbench (counts of files, revisions, changes, ...) must agree;
# timings and byte counts of the wire and of deltas may differ.
OUTPUT_LINE="svnbench counts not compared (one server)"
if [[ ${#SERVERS[@]} == 2 ]]; then
    diffs=()
    strip() { grep -v -E 'seconds taken|bytes transferred|bytes in deltas' "$1" || true; }
    for op in export log blame-hot blame-avg list; do
        if ! diff <(strip "$SCRATCH/out-svnserve-$op.txt") <(strip "$SCRATCH/out-svelto-$op.txt") >&2; then
            diffs+=("$op")
            say "WARNING: svnbench $op reports different counts for the two servers (above)"
        fi
    done
    if ((${#diffs[@]} == 0)); then
        OUTPUT_LINE="svnbench counts (files, directories, properties, revisions, changes, deltas) identical for both servers"
    else
        OUTPUT_LINE="**svnbench counts DIFFER for: ${diffs[*]}** (see the raw outputs in $SCRATCH/out-*.txt)"
    fi
fi

declare -A HWM CPU_ALL RSS_END
for s in "${SERVERS[@]}"; do
    # The peak over the session: the largest VmHWM seen before each reset and after each
    # operation, and at the end.
    HWM[$s]=$(status_kb "${PID[$s]}" VmHWM)
    ((HWM[$s] > PEAK[$s])) || HWM[$s]=${PEAK[$s]}
    RSS_END[$s]=$(status_kb "${PID[$s]}" VmRSS)
    CPU_ALL[$s]=$(awk -v a="${TICKS0[$s]}" -v b="$(ticks "${PID[$s]}")" -v t="$TICK" 'BEGIN { printf "%.1f", (b - a) / t }')
    printf '{"date":"%s","size":"%s","seed":%s,"op":"session","server":"%s","server_rss_start_kb":%s,"server_rss_end_kb":%s,"server_vmhwm_end_kb":%s,"server_cpu_s":%s}\n' \
        "$STAMP" "$SIZE" "$SEED" "$s" "${RSS0[$s]}" "${RSS_END[$s]}" "${HWM[$s]}" "${CPU_ALL[$s]}" >>"$JSON"
done
printf '{"date":"%s","size":"%s","seed":%s,"op":"choices","head":%s,"blame_hot":"%s","blame_hot_records":%s,"blame_hot_log_revs":%s,"blame_avg":"%s","blame_avg_records":%s,"blame_avg_log_revs":%s,"mean_records":%s,"files":%s,"update_from":%s,"update_to":%s,"concurrent":%s}\n' \
    "$STAMP" "$SIZE" "$SEED" "$HEAD" "$HOT_FILE" "$HOT_COUNT" "$HOT_HIST" "$AVG_FILE" "$AVG_COUNT" "$AVG_HIST" \
    "$MEAN" "$N_FILES" "$FROM" "$HEAD" "$CONCURRENT" >>"$JSON"
stop_servers
trap - EXIT

# ----- the table ------------------------------------------------------------------

# stats S OP: "wall_median wall_min wall_max client_cpu_median server_cpu_median
# server_peak_mb_max server_growth_mb_median first_wall" over the timed runs (run 0, the
# warm-up, gives only first_wall).
stats() {
    awk -F'\t' -v s="$1" -v op="$2" '
        function median(a, n,   i, j, t, v) {
            for (i = 1; i <= n; i++) v[i] = a[i]
            for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j > 0 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
            return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        $1 == 0 && $2 == s && $3 == op { first = $4 }
        $1 > 0 && $2 == s && $3 == op {
            n++; w[n] = $4; cc[n] = $5 + $6; sc[n] = $8; g[n] = ($10 - $9) / 1024
            if (n == 1 || $4 < mn) mn = $4; if (n == 1 || $4 > mx) mx = $4; if ($11 > pk) pk = $11
        }
        END {
            if (n == 0) { print "- - - - - - - -"; exit }
            printf "%.2f %.2f %.2f %.2f %.2f %.0f %.1f %s\n", median(w, n), mn, mx, median(cc, n), median(sc, n), pk / 1024, median(g, n), (first == "" ? "–" : first)
        }' "$RAW"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "–"; else printf "%.2f", a / b }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

describe() {
    case "$1" in
    export) echo "export trunk" ;;
    log) echo "log -v, all history" ;;
    blame-hot) echo "blame $HOT_FILE" ;;
    blame-avg) echo "blame $AVG_FILE" ;;
    list) echo "list -R trunk" ;;
    checkout) echo "checkout trunk" ;;
    update-null) echo "update, nothing to do" ;;
    update-span) echo "update r$FROM→r$HEAD" ;;
    export-x*) echo "$CONCURRENT exports at once" ;;
    esac
}

row() {
    local op=$1 s=$2 st=$3 extra=$4 med mn mx cc sc pk g first
    read -r med mn mx cc sc pk g first <<<"$st"
    if [[ "$med" == - ]]; then
        printf '| %s | %s | not measured | – | – | – | – | – | |\n' "$(describe "$op")" "$s"
    else
        printf '| %s | %s | %s (%s–%s) | %s | %s | %s | %s | %s | %s |\n' "$(describe "$op")" "$s" "$med" "$mn" "$mx" "$cc" "$sc" "$pk" "$g" "$first" "$extra"
    fi
}

CMDS="svnserve -d --foreground -T -M 1024 -c 0 --cache-revprops yes --block-read yes -r $SCRATCH/root-svnserve --listen-host 127.0.0.1 --listen-port 0 --log-file $SCRATCH/svnserve.log
    ($SCRATCH/root-svnserve/$SIZE -> $FSFS)"
if [[ "$SVELTO" != none ]]; then
    CMDS="$CMDS
$SV serve -d --foreground -r $SCRATCH/root-svelto --listen-host 127.0.0.1 --listen-port 0 --log-file $SCRATCH/svelto.log
    ($SCRATCH/root-svelto/$SIZE -> $SVR)"
fi
CMDS="$CMDS

URL=svn://127.0.0.1:PORT/$SIZE; every client command also gets --non-interactive --config-dir $CFG
svnbench null-export URL/trunk
svnbench null-log -v URL
svnbench null-blame URL/$HOT_FILE
svnbench null-blame URL/$AVG_FILE
svnbench null-list -R URL/trunk
svn checkout -q URL/trunk WC
svn update -q WC                      (the checkout just made; then rm -rf WC, untimed)
svn checkout -q -r $FROM URL/trunk WC   (untimed), then: svn update -q -r $HEAD WC
$CONCURRENT x svnbench null-export URL/trunk, started together, timed until the last ends"

{
    echo "# Server: svnserve vs svelto serve ($SIZE, seed $SEED)"
    echo
    echo "- Date: $STAMP; the whole run took $((($(date +%s) - T_START + 30) / 60)) min"
    echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r); load average before the run: $LOAD0"
    echo "- Work directory: $SCRATCH on $(df -PT "$SCRATCH" | awk 'NR == 2 { print $2 " (" $1 ")" }'); client and servers on the same machine, over 127.0.0.1"
    echo "- History: $DUMP, r0-r$HEAD, $(awk -v b="$DUMP_BYTES" 'BEGIN { printf "%.1f", b / 1e6 }') MB, md5 $DUMP_MD5 (\`svelto-gen --size $SIZE --seed $SEED\`)"
    echo "- Repositories: $FSFS (FSFS, packed), $(if [[ "$SVELTO" != none ]]; then echo "$SVR (Svelto)"; else echo "Svelto not served"; fi)"
    echo "- svnserve and client: $(svnserve --version --quiet) (svn, svnbench); svelto: $SVELTO_DESC"
    if [[ "$SVELTO" == none ]]; then order_desc="svnserve only"; else order_desc="interleaved per operation (odd runs svnserve first, even runs svelto first)"; fi
    echo "- Runs: $RUNS, $order_desc, after one untimed warm-up pass of every operation: hot caches (page cache and the servers' own) are compared"
    echo "- Blamed files (files under trunk at r$HEAD with plain names, by dump records that touched the path): the most touched, $HOT_FILE ($HOT_COUNT records, $HOT_HIST revisions in its \`svn log\`); an average one, $AVG_FILE ($AVG_COUNT records, $AVG_HIST in its log; the mean over $N_FILES files is $MEAN)"
    echo "- Checks (untimed): $CHECK_LINE; $OUTPUT_LINE"
    echo
    echo "Commands:"
    echo
    echo '```'
    echo "$CMDS"
    echo '```'
    echo
    echo "Client wall time is the command's elapsed time (\`/usr/bin/time\`), client CPU its user+sys. Server CPU is the server process's utime+stime (\`/proc/PID/stat\`, all threads, 1/$TICK s ticks) read before and after the command; server peak is its VmHWM during the command (reset through \`/proc/PID/clear_refs\` before it), growth the change of its VmRSS across it. Medians over the $RUNS timed runs; the peak is the largest over them."
    echo
    echo "| operation | server | client wall s: median (min–max) | client CPU s | server CPU s | server peak RSS MB | server RSS growth MB | first run s (fresh server) | svelto/svnserve: wall, server CPU |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for op in "${OPS[@]}"; do
        A=$(stats svnserve "$op")
        if [[ "$SVELTO" != none ]]; then
            B=$(stats svelto "$op")
        else
            B="- - - - - - - -"
        fi
        row "$op" svnserve "$A" ""
        if [[ "$SVELTO" != none ]]; then
            read -r bw _ _ _ bc _ <<<"$B"
            read -r aw _ _ _ ac _ <<<"$A"
            row "$op" svelto "$B" "$(ratio "$bw" "$aw"), $(ratio "$bc" "$ac")"
        fi
    done
    echo
    echo "| server, whole session | RSS at start MB | RSS at end MB | peak RSS (VmHWM) over the session MB | CPU s, all passes and checks |"
    echo "|---|---|---|---|---|"
    for s in "${SERVERS[@]}"; do
        echo "| $s | $(mb "${RSS0[$s]}") | $(mb "${RSS_END[$s]}") | $(mb "${HWM[$s]}") | ${CPU_ALL[$s]} |"
    done
    echo
    echo "Raw runs (run 0 is the warm-up): \`$(basename "$OUT_JSON")\`."
} | tee "$OUT_MD"
mv "$JSON" "$OUT_JSON"
say "wrote $OUT_MD and $OUT_JSON"

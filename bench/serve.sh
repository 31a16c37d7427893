#!/usr/bin/env bash
# bench/serve.sh SIZE [RUNS]: svelto serve vs svnserve (and over HTTP, vs Apache httpd with
# mod_dav_svn), side by side.
#
# Serves the same history from a packed FSFS repository (svnserve, in its usual
# configurations, and Apache) and from a Svelto repository (svelto serve, over svn:// and
# over http://), all on 127.0.0.1, and
# times the same svn 1.14 client commands against each: export, log -v, blame, list,
# checkout, update, export to disk, concurrent exports. The script reads each server's
# CPU time and memory from /proc around every operation. Hot: one untimed warm-up pass,
# then RUNS passes, each operation against every server in a row, the order rotating
# from pass to pass. Cold: then COLD passes where, before each operation, the server is
# restarted and the page cache dropped. Prints a markdown table and writes it, with
# every raw run as JSON lines, to OUT_DIR/serve-SIZE.{md,jsonl} and the medians to
# OUT_DIR/serve-SIZE.tsv (for bench/charts.sh).
#
# Environment:
#   SERVERS="..."     which servers, of: svnserve-slow (svnserve's defaults), svnserve-fast
#                     (-M 1024 -c 0 --cache-revprops yes --block-read yes), svnserve-T
#                     (the same with -T: threads, one shared cache), svelto; and over
#                     http://: apache (Apache httpd 2.4, event MPM, with mod_dav_svn and
#                     its defaults), apache-fast (the seeds' "fast": SVNInMemoryCacheSize
#                     1048576, SVNCacheFullTexts, SVNCacheTextDeltas, SVNCacheRevProps,
#                     SVNBlockRead on, SVNAllowBulkUpdates Prefer), svelto-http (svelto
#                     serve --http-listen).
#                     Default: "svnserve-T svelto"; bench/run passes all seven.
#   OPS="..."         which operations (default: all; see op_cmd below)
#   COLD=N            cold passes (default 1; 0: none). Needs root (drop_caches)
#   FIRST=N           first-request passes (default 1; 0: none): before each operation the
#                     server is restarted, the page cache left warm
#   FLOOR=no          leave out the client's floor (default: measured with svelto): each
#                     operation replayed from memory with the bytes svelto sent
#                     (bench/src/floor.rs), so the client's own time shows
#   UNDISTURBED=1     repeat only export, log, log of one file, blame and list (unless OPS
#                     says otherwise), so that no other workload churns the servers'
#                     caches between them; results go to serve-SIZE-undisturbed.*
#   SEED=N            generator seed (default 1)
#   SVELTO=none       leave svelto out of SERVERS
#   SVELTO_BIN=PATH   use this svelto binary instead of building target/release/svelto
#   DATA=DIR          where SIZE-seedN.dump lives (default bench/data)
#   WORK=DIR          where fsfs-SIZE and svelto-SIZE live (default bench/work); a missing
#                     repository is created from the dump as admin.sh does. The script
#                     only reads them.
#   SCRATCH=DIR       working copies, server roots and logs (default WORK/serve-SIZE)
#   CONCURRENT="N.."  sizes of the concurrent-export tests (default "20 100"); an export
#                     that fails there is counted and shown, not fatal
#   FORK_MAX=N        the forking svnserve configurations run only the concurrent tests
#                     of at most N clients (default 20): a process per connection with
#                     its own cache (1 GB for svnserve-fast) does not fit 100 of them.
#                     (Apache's children are threaded and bounded: it runs them all.)
#   SPAN=N            revisions crossed by the update test (default 1000, at most
#                     half of HEAD)
#   TIMEOUT=S         give up on any single client command after S seconds (default 1800)
#   OUT_DIR=DIR       results (default bench/results/DAY)
#
# See bench/README.md for what is measured and how to read the table.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME=serve.sh
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"
# shellcheck source=bench/serve-floor.sh
source "$BENCH/serve-floor.sh"
# shellcheck source=bench/servers.sh
source "$BENCH/servers.sh"

usage() {
    echo "usage: bench/serve.sh small|medium|large|rN [RUNS]" >&2
    exit 2
}
# The undisturbed batch: only the operations whose caches another workload would churn.
undisturbed_defaults() {
    SUFFIX=""
    [[ "${UNDISTURBED:-}" == 1 ]] || return 0
    SUFFIX=-undisturbed
    OPS=${OPS:-export log log-file blame-hot list}
}
SIZE=${1:-}
RUNS=${2:-3}
valid_size "$SIZE" || usage
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || usage
SEED=${SEED:-1}
SVELTO=${SVELTO:-yes}
CONCURRENT=${CONCURRENT:-20 100}
TIMEOUT=${TIMEOUT:-1800}
COLD=${COLD:-1}
FIRST=${FIRST:-1}
[[ "$FIRST" =~ ^[0-9]+$ ]] || usage
FORK_MAX=${FORK_MAX:-20}
[[ "$FORK_MAX" =~ ^[0-9]+$ ]] || usage
read -r -a CONC <<<"$CONCURRENT"
for n in "${CONC[@]}"; do [[ "$n" =~ ^[1-9][0-9]*$ ]] || usage; done
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || usage
[[ "$COLD" =~ ^[0-9]+$ ]] || usage
ALL_OPS="export log log-file blame-hot blame-avg list checkout update-null update-span svn-export"
for n in "${CONC[@]}"; do ALL_OPS="$ALL_OPS export-x$n"; done
undisturbed_defaults
read -r -a OPS <<<"${OPS:-$ALL_OPS}"
for op in "${OPS[@]}"; do [[ " $ALL_OPS " == *" $op "* ]] || die "unknown operation '$op' (of: $ALL_OPS)"; done
read -r -a SERVERS <<<"${SERVERS:-svnserve-T svelto}"
if [[ "$SVELTO" == none ]]; then
    keep=()
    for s in "${SERVERS[@]}"; do [[ $s == svelto || $s == svelto-http ]] || keep+=("$s"); done
    SERVERS=("${keep[@]}")
fi
HAS_SVELTO=no
HAS_APACHE=no
for s in "${SERVERS[@]}"; do
    case "$s" in
    svelto | svelto-http) HAS_SVELTO=yes ;;
    apache | apache-fast) HAS_APACHE=yes ;;
    floor) die "the floor is measured with svelto (FLOOR=no leaves it out), not named in SERVERS" ;;
    svnserve-slow | svnserve-fast | svnserve-T) ;;
    *) die "unknown server '$s' (of: svnserve-slow svnserve-fast svnserve-T svelto apache apache-fast svelto-http)" ;;
    esac
done
# Over http:// the two Svelto rows are compared with each other: svelto-http's server CPU
# over svelto's (svn://) is the figure to watch.
HAS_BOTH=no
[[ " ${SERVERS[*]} " == *" svelto "* && " ${SERVERS[*]} " == *" svelto-http "* ]] && HAS_BOTH=yes
((${#SERVERS[@]} > 0)) || usage
FLOOR=${FLOOR:-yes}
[[ " ${SERVERS[*]} " == *" svelto "* ]] || FLOOR=no
[[ $FLOOR == no ]] || SERVERS+=(floor)

ROOT=$(dirname "$BENCH")
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
DATA=${DATA:-$BENCH/data}
WORK=${WORK:-$BENCH/work}
SCRATCH=${SCRATCH:-$WORK/serve-$SIZE}
mkdir -p "$DATA" "$WORK" "$SCRATCH"
results_dir
DATA=$(cd "$DATA" && pwd)
WORK=$(cd "$WORK" && pwd)
SCRATCH=$(cd "$SCRATCH" && pwd)

T_START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
OUT_MD=$OUT_DIR/serve-$SIZE$SUFFIX.md
OUT_JSON=$OUT_DIR/serve-$SIZE$SUFFIX.jsonl
OUT_TSV=$OUT_DIR/serve-$SIZE$SUFFIX.tsv
# Raw records collect in the scratch directory; the results replace earlier ones of the
# same day only once the run has finished.
RAW=$SCRATCH/serve.tsv
JSON=$SCRATCH/serve.jsonl
: >"$RAW"
: >"$JSON"

# ----- tools ----------------------------------------------------------------------

need_gnu_time
for t in svn svnbench svnserve svnadmin svnlook timeout; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install -y subversion coreutils)"
done
TICK=$(getconf CLK_TCK)
[[ $HAS_APACHE == no ]] || need_apache

SVELTO_DESC="not measured"
if [[ $HAS_SVELTO == yes ]]; then
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
    floor_build
    SV=$(cd "$(dirname "$SV")" && pwd)/$(basename "$SV")
    "$SV" serve --help >/dev/null 2>&1 ||
        die "'$SV serve' does not exist yet; run with SVELTO=none to measure svnserve only"
    SVELTO_DESC="$SV ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet HEAD -- crates Cargo.toml Cargo.lock 2>/dev/null || echo '+changes'))"
fi

# ----- data and repositories ------------------------------------------------------

DUMP=$DATA/$SIZE-seed$SEED.dump
if [[ ! -s "$DUMP" ]]; then
    command -v cargo >/dev/null || die "$DUMP is missing and cargo is not there to build svelto-gen"
    say "building svelto-gen (cargo build --release -p svelto-bench)"
    (cd "$ROOT" && cargo build --release -q -p svelto-bench) || die "building svelto-gen failed"
    ensure_dump "$TARGET/release/svelto-gen"
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
if [[ $HAS_SVELTO == yes && ! -d "$SVR/db" ]]; then
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
rm -rf "$CFG" "$SCRATCH"/wc-* "$SCRATCH"/exp-* "$SCRATCH"/root-*
mkdir -p "$CFG"
declare -A PID URL LOG
ERRF=$SCRATCH/stderr.txt

SVNSERVE_FAST=(-M 1024 -c 0 --cache-revprops yes --block-read yes)
# server_args S: the server's command line, without -r and the listening options.
server_args() {
    case "$1" in
    svnserve-slow) ARGS=(svnserve -d --foreground) ;;
    svnserve-fast) ARGS=(svnserve -d --foreground "${SVNSERVE_FAST[@]}") ;;
    svnserve-T) ARGS=(svnserve -d --foreground -T "${SVNSERVE_FAST[@]}") ;;
    svelto | svelto-http) ARGS=("$SV" serve -d --foreground) ;;
    apache | apache-fast) ARGS=("$APACHE_BIN" -DFOREGROUND -f "$SCRATCH/$1/httpd.conf") ;;
    esac
}
# forks S: whether S serves connections in child processes (their CPU and memory count).
forks() { [[ $1 == svnserve-slow || $1 == svnserve-fast || $1 == apache* ]]; }
# over_http S: whether S speaks http://.
over_http() { [[ $1 == apache* || $1 == svelto-http ]]; }
describe_server() {
    case "$1" in
    svnserve-slow) echo "svnserve with its defaults: a process per connection, 16 MB cache per process, compression level 5" ;;
    svnserve-fast) echo "svnserve -M 1024 -c 0 --cache-revprops yes --block-read yes: a process per connection, each with its own 1 GB cache (the seeds' \"fast\")" ;;
    svnserve-T) echo "svnserve -T -M 1024 -c 0 --cache-revprops yes --block-read yes: threads sharing one 1 GB cache (svnserve's best here)" ;;
    svelto) echo "svelto serve: no tuning options" ;;
    svelto-http) echo "svelto serve --http-listen: the same server over http:// (the stock client's ra_serf: skelta updates, a GET per file)" ;;
    apache) echo "Apache httpd $(apache_version) (event MPM, Debian's defaults: 25 threads a child) with mod_dav_svn and its defaults (16 MB cache per child process, SVNAllowBulkUpdates On: ra_serf fetches each file with its own GET)" ;;
    apache-fast) echo "Apache httpd $(apache_version) with mod_dav_svn and the seeds' \"fast\": $(echo "$APACHE_FAST" | tr -s ' \n' ' ')(1 GB cache per child process; bulk updates preferred: one report carries every file)" ;;
    esac
}
stop_server() {
    kill "${PID[$1]}" 2>/dev/null || true
    wait "${PID[$1]}" 2>/dev/null || true
}
stop_servers() {
    local s
    for s in "${!PID[@]}"; do stop_server "$s"; done
}
trap stop_servers EXIT

start_server() {
    local s=$1 root=$SCRATCH/root-$1 i port=""
    mkdir -p "$root"
    LOG[$s]=$SCRATCH/$s.log
    if [[ ! -e "$root/$SIZE" ]]; then
        if [[ $s == svelto* ]]; then ln -s "$SVR" "$root/$SIZE"; else ln -s "$FSFS" "$root/$SIZE"; fi
    fi
    server_args "$s"
    case "$s" in
    apache*)
        port=$(free_port) || die "found no free port for $s"
        apache_conf "$s" "$root" "$port" "$SCRATCH/$s"
        open_to_daemon "$FSFS" "$SCRATCH/$s"
        LOG[$s]=$SCRATCH/$s/error.log
        apache_start "$SCRATCH/$s" "$SCRATCH/$s.stderr"
        PID[$s]=$APACHE_PID
        URL[$s]=http://127.0.0.1:$APACHE_PORT/$SIZE
        return 0
        ;;
    svelto-http) ARGS+=(--http-listen 127.0.0.1:0) ;;
    esac
    # Emptied here, before the server starts: the shell truncates a background command's
    # redirection only once the child runs, and a restart read the previous server's port
    # from the old file (connection refused on the first request).
    : >"$SCRATCH/$s.stderr"
    "${ARGS[@]}" -r "$root" --listen-host 127.0.0.1 --listen-port 0 --log-file "${LOG[$s]}" \
        2>>"$SCRATCH/$s.stderr" &
    PID[$s]=$!
    for i in $(seq 1 600); do
        kill -0 "${PID[$s]}" 2>/dev/null || break
        if [[ $s == svelto-http ]]; then
            port=$(http_port_of "$SCRATCH/$s.stderr")
        else
            port=$(port_of "${PID[$s]}") || port=""
        fi
        # The port the client will use answers (for svelto-http the HTTP one).
        [[ -n "$port" ]] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        port=""
        sleep 0.1
    done
    if [[ -z "$port" ]]; then
        cat "$SCRATCH/$s.stderr" "${LOG[$s]}" >&2
        die "$s did not start listening"
    fi
    if [[ $s == svelto-http ]]; then URL[$s]=http://127.0.0.1:$port/$SIZE; else URL[$s]=svn://127.0.0.1:$port/$SIZE; fi
}

status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# children_kb PID: the summed VmRSS of the process's children.
children_kb() {
    { grep -sE '^(PPid|VmRSS):' /proc/[0-9]*/status || true; } | awk -F'[:\t ]+' -v p="$1" '
        { f = $1 } $2 == "PPid" { pp[f] = $3 } $2 == "VmRSS" { r[f] = $3 }
        END { for (f in pp) if (pp[f] == p) t += r[f]; print t + 0 }'
}
# sample_children PID FILE: while FILE.on exists, the largest children_kb seen goes to FILE.
sample_children() {
    local max=0 cur
    while [[ -e "$2.on" ]]; do
        cur=$(children_kb "$1")
        ((cur > max)) && max=$cur
        echo "$max" >"$2"
        sleep 0.2
    done
}

for s in "${SERVERS[@]}"; do
    [[ $s == floor ]] && continue
    start_server "$s"
    say "$s: pid ${PID[$s]}, ${URL[$s]}"
done
declare -A RSS0 TICKS0 PEAK
PEAK[floor]=0
for s in "${SERVERS[@]}"; do
    [[ $s == floor ]] && continue
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

# ----- checking that all serve the same repository (untimed) -----------------------

say "checking the servers' answers (untimed): svn log -q -l 5, svn ls -R trunk | md5sum"
declare -A LOGQ LSMD5
for s in "${SERVERS[@]}"; do
    [[ $s == floor ]] && continue
    LOGQ[$s]=$(client "$s" svn log "${SVNOPT[@]}" -q -l 5 "${URL[$s]}")
    LSMD5[$s]=$(client "$s" svn ls "${SVNOPT[@]}" -R "${URL[$s]}/trunk" | md5sum | cut -d' ' -f1)
done
REF_LOGQ=$(svn log "${SVNOPT[@]}" -q -l 5 "file://$FSFS")
REF_LSMD5=$(svn ls "${SVNOPT[@]}" -R "file://$FSFS/trunk" | md5sum | cut -d' ' -f1)
for s in "${SERVERS[@]}"; do
    [[ $s == floor ]] && continue
    if [[ "${LOGQ[$s]}" != "$REF_LOGQ" ]]; then
        say "svn log -q -l 5 ${URL[$s]} differs from file://$FSFS:"
        diff <(echo "$REF_LOGQ") <(echo "${LOGQ[$s]}") >&2 || true
        die "$s does not serve the same history"
    fi
    [[ "${LSMD5[$s]}" == "$REF_LSMD5" ]] ||
        die "svn ls -R ${URL[$s]}/trunk | md5sum: ${LSMD5[$s]}, file://$FSFS/trunk: $REF_LSMD5"
done
CHECK_LINE="svn log -q -l 5 and svn ls -R trunk (md5 $REF_LSMD5) identical to file:// on FSFS for ${SERVERS[*]}"

# ----- measuring ------------------------------------------------------------------

# The concurrency test: N exports at once. The number that failed goes to
# DIR/par-failed (and their errors, once each, to standard error).
concurrent_export() {
    local n=$1 url=$2 dir=$3 i pids=() failed=0
    shift 3
    for i in $(seq 1 "$n"); do
        svnbench null-export "$@" "$url/trunk" >/dev/null 2>"$dir/par-$i.err" &
        pids+=($!)
    done
    : >"$dir/par-failed-errors"
    for i in "${!pids[@]}"; do
        if ! wait "${pids[$i]}"; then
            failed=$((failed + 1))
            cat "$dir/par-$((i + 1)).err" >>"$dir/par-failed-errors"
        fi
    done
    sort "$dir/par-failed-errors" | uniq -c >&2
    echo "$failed" >"$dir/par-failed"
    rm -f "$dir"/par-*.err
}
export -f concurrent_export

# op_cmd S OP: the client command of OP against server S, into the array CMD.
op_cmd() {
    local s=$1 op=$2 u=${URL[$1]}
    case "$op" in
    export) CMD=(svnbench null-export "${SVNOPT[@]}" "$u/trunk") ;;
    log) CMD=(svnbench null-log -v --limit 50000 "${SVNOPT[@]}" "$u") ;;
    log-file) CMD=(svnbench null-log -v "${SVNOPT[@]}" "$u/$HOT_FILE") ;;
    blame-hot) CMD=(svnbench null-blame "${SVNOPT[@]}" "$u/$HOT_FILE") ;;
    blame-avg) CMD=(svnbench null-blame "${SVNOPT[@]}" "$u/$AVG_FILE") ;;
    list) CMD=(svnbench null-list -R "${SVNOPT[@]}" "$u/trunk") ;;
    checkout) CMD=(svn checkout -q "${SVNOPT[@]}" "$u/trunk" "$SCRATCH/wc-$s") ;;
    update-null) CMD=(svn update -q "${SVNOPT[@]}" "$SCRATCH/wc-$s") ;;
    update-span) CMD=(svn update -q "${SVNOPT[@]}" -r "$HEAD" "$SCRATCH/wc-span-$s") ;;
    svn-export) CMD=(svn export -q "${SVNOPT[@]}" "$u/trunk" "$SCRATCH/exp-$s") ;;
    export-x*) CMD=(bash -c 'concurrent_export "$@"' _ "${op#export-x}" "$u" "$SCRATCH" "${SVNOPT[@]}") ;;
    esac
}

# Untimed preparation before OP, and cleaning after it.
op_before() {
    case "$2" in
    checkout) rm -rf "$SCRATCH/wc-$1" ;;
    update-null)
        [[ -d "$SCRATCH/wc-$1" ]] || client "$1" svn checkout -q "${SVNOPT[@]}" "${URL[$1]}/trunk" "$SCRATCH/wc-$1"
        ;;
    update-span)
        rm -rf "$SCRATCH/wc-span-$1"
        client "$1" svn checkout -q "${SVNOPT[@]}" -r "$FROM" "${URL[$1]}/trunk" "$SCRATCH/wc-span-$1"
        ;;
    svn-export) rm -rf "$SCRATCH/exp-$1" ;;
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
    svn-export) rm -rf "$SCRATCH/exp-$1" ;;
    esac
}

# Cold runs need the page cache dropped, which needs root.
COLD_LINE=""
if ((COLD > 0)); then
    sync
    if ! { echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then
        COLD_LINE="not run: this machine does not let the benchmark drop the page cache (writing /proc/sys/vm/drop_caches failed; it needs root)"
        COLD=0
    fi
fi
# cold_restart S: stops S, drops the page cache, starts S again.
cold_restart() {
    stop_server "$1"
    sync
    echo 3 >/proc/sys/vm/drop_caches
    start_server "$1"
}

# skipped S OP: whether OP is not run against S (FORK_MAX).
skipped() { [[ $2 == export-x* && $1 == svnserve* ]] && forks "$1" && ((${2#export-x} > FORK_MAX)); }

# measure MODE RUN S OP: runs OP's client command against server S under /usr/bin/time
# and reads the server's CPU ticks and memory around it; appends a raw record. MODE cold
# restarts the server and drops the page cache first (after OP's untimed preparation).
measure() {
    local mode=$1 run=$2 s=$3 op=$4 tf out pid failed=0
    skipped "$s" "$op" && return 0
    if [[ $s == floor ]]; then floor_prepare "$mode" "$run" "$op" || return 0; fi
    op_before "$s" "$op"
    if [[ $mode == cold || $mode == first ]]; then
        local wc
        if [[ $mode == cold ]]; then cold_restart "$s"; else restart_server "$s"; fi
        # The server listens on a new port: working copies made before follow it.
        for wc in "$SCRATCH/wc-$s" "$SCRATCH/wc-span-$s"; do
            if [[ -d $wc ]]; then client "$s" svn relocate "${SVNOPT[@]}" "${URL[$s]}/trunk" "$wc"; fi
        done
    fi
    op_cmd "$s" "$op"
    pid=${PID[$s]}
    sync
    tf=$SCRATCH/time.txt
    out=/dev/null
    [[ $mode == hot && $run == 0 ]] && out=$SCRATCH/out-$s-$op.txt
    kill -0 "$pid" 2>/dev/null || fail "$s" "(the server is gone before $op)"
    local t0 r0 t1 r1 hwm kids=0 kf=$SCRATCH/children-kb
    r0=$(status_kb "$pid" VmRSS)
    hwm=$(status_kb "$pid" VmHWM)
    ((hwm > PEAK[$s])) && PEAK[$s]=$hwm
    # Resets the peak RSS (VmHWM) to the current RSS: the peak then is this operation's.
    echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || true
    if forks "$s"; then
        echo 0 >"$kf"
        : >"$kf.on"
        sample_children "$pid" "$kf" &
    fi
    t0=$(ticks "$pid")
    if ! /usr/bin/time -o "$tf" -f '%e %U %S %M' timeout "$TIMEOUT" "${CMD[@]}" >"$out" 2>"$ERRF"; then
        rm -f "$kf.on"
        cat "$tf" >&2
        fail "$s" "${CMD[*]}"
    fi
    t1=$(ticks "$pid")
    if forks "$s"; then
        rm -f "$kf.on"
        wait $!
        kids=$(cat "$kf")
    fi
    r1=$(status_kb "$pid" VmRSS)
    hwm=$(($(status_kb "$pid" VmHWM) + kids))
    [[ $mode == hot ]] && ((hwm > PEAK[$s])) && PEAK[$s]=$hwm
    op_after "$s" "$op"
    if [[ $op == export-x* ]]; then
        failed=$(cat "$SCRATCH/par-failed")
        ((failed == 0)) || say "$s: $failed of the ${op#export-x} exports failed (counted, not fatal)"
    fi
    local wall user sys rss cpu
    read -r wall user sys rss < <(tail -n 1 "$tf")
    cpu=$(awk -v a="$t0" -v b="$t1" -v t="$TICK" 'BEGIN { printf "%.2f", (b - a) / t }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$run" "$s" "$op" "$wall" "$user" "$sys" "$rss" \
        "$cpu" "$r0" "$r1" "$hwm" "$failed" >>"$RAW"
    printf '{"date":"%s","size":"%s","seed":%s,"mode":"%s","run":%s,"warmup":%s,"server":"%s","op":"%s","wall_s":%s,"client_user_s":%s,"client_sys_s":%s,"client_max_rss_kb":%s,"server_cpu_s":%s,"server_rss_before_kb":%s,"server_rss_after_kb":%s,"server_peak_rss_kb":%s,"failed_clients":%s}\n' \
        "$STAMP" "$SIZE" "$SEED" "$mode" "$run" "$([[ $mode == hot && $run == 0 ]] && echo true || echo false)" "$s" "$op" \
        "$wall" "$user" "$sys" "$rss" "$cpu" "$r0" "$r1" "$hwm" "$failed" >>"$JSON"
    say "$mode run $run: $s $op: ${wall}s wall, client ${user}s user ${sys}s sys; server ${cpu}s CPU, RSS ${r0}->${r1} KB, peak ${hwm} KB"
    if [[ $s == floor ]]; then floor_stop; fi
}

# rotated RUN: the servers, rotated by RUN places, into ORDER: each server goes first
# in turn, so that drift in the machine hits all.
rotated() {
    local n=${#SERVERS[@]} i
    ORDER=()
    for ((i = 0; i < n; i++)); do ORDER+=("${SERVERS[$(((i + $1) % n))]}"); done
}

for run in $(seq 0 "$RUNS"); do
    ((run == 0)) && say "warm-up pass (run 0, not in the table)"
    rotated "$run"
    for op in "${OPS[@]}"; do
        for s in "${ORDER[@]}"; do measure hot "$run" "$s" "$op"; done
    done
done

# The warm-up outputs of svnbench (counts of files, revisions, changes, ...) must agree;
# timings and byte counts of the wire and of deltas may differ.
OUTPUT_LINE="svnbench counts not compared (one server)"
if ((${#SERVERS[@]} > 1)); then
    diffs=()
    strip() { grep -v -E 'seconds taken|bytes transferred|bytes in deltas' "$1" || true; }
    # ra_serf counts the DAV properties it is sent too: http:// servers are compared with
    # the first http:// one, svn:// servers with the first svn:// one.
    first_svn="" first_http=""
    for s in "${SERVERS[@]}"; do
        if over_http "$s"; then
            [[ -n $first_http ]] || first_http=$s
        else
            [[ -n $first_svn ]] || first_svn=$s
        fi
    done
    for op in export log log-file blame-hot blame-avg list; do
        [[ " ${OPS[*]} " == *" $op "* ]] || continue
        for s in "${SERVERS[@]}"; do
            [[ $s == floor ]] && continue
            if over_http "$s"; then first=$first_http; else first=$first_svn; fi
            [[ $s != "$first" ]] || continue
            if ! diff <(strip "$SCRATCH/out-$first-$op.txt") <(strip "$SCRATCH/out-$s-$op.txt") >&2; then
                diffs+=("$op ($first vs $s)")
                say "WARNING: svnbench $op reports different counts for $first and $s (above)"
            fi
        done
    done
    if ((${#diffs[@]} == 0)); then
        OUTPUT_LINE="svnbench counts (files, directories, properties, revisions, changes, deltas) identical for all servers of each protocol (over http:// ra_serf also counts the DAV properties it is sent)"
    else
        OUTPUT_LINE="**svnbench counts DIFFER for: ${diffs[*]}** (see the raw outputs in $SCRATCH/out-*.txt)"
    fi
fi

# Whole-session figures cover the warm-up and the hot passes (cold passes restart).
declare -A HWM CPU_ALL RSS_END
for s in "${SERVERS[@]}"; do
    [[ $s == floor ]] && continue
    HWM[$s]=$(status_kb "${PID[$s]}" VmHWM)
    ((HWM[$s] > PEAK[$s])) || HWM[$s]=${PEAK[$s]}
    RSS_END[$s]=$(status_kb "${PID[$s]}" VmRSS)
    CPU_ALL[$s]=$(awk -v a="${TICKS0[$s]}" -v b="$(ticks "${PID[$s]}")" -v t="$TICK" 'BEGIN { printf "%.1f", (b - a) / t }')
    printf '{"date":"%s","size":"%s","seed":%s,"op":"session","server":"%s","server_rss_start_kb":%s,"server_rss_end_kb":%s,"server_vmhwm_end_kb":%s,"server_cpu_s":%s}\n' \
        "$STAMP" "$SIZE" "$SEED" "$s" "${RSS0[$s]}" "${RSS_END[$s]}" "${HWM[$s]}" "${CPU_ALL[$s]}" >>"$JSON"
done

COLD_OPS=()
for op in "${OPS[@]}"; do [[ $op == export-x* ]] || COLD_OPS+=("$op"); done
first_passes
for run in $(seq 1 "$COLD"); do
    say "cold pass $run: each operation against a freshly started server, page cache dropped"
    rotated "$run"
    for op in "${COLD_OPS[@]}"; do
        for s in "${ORDER[@]}"; do measure cold "$run" "$s" "$op"; done
    done
done
if ((COLD > 0)); then
    COLD_LINE="$COLD pass(es) after the hot ones; before each operation (after its untimed preparation, such as the checkout an update starts from) the server is stopped, \`sync; echo 3 > /proc/sys/vm/drop_caches\`, and the server started again. The concurrent exports are not run cold"
elif [[ -z "$COLD_LINE" ]]; then
    COLD_LINE="not run (COLD=0)"
fi

printf '{"date":"%s","size":"%s","seed":%s,"op":"choices","head":%s,"blame_hot":"%s","blame_hot_records":%s,"blame_hot_log_revs":%s,"blame_avg":"%s","blame_avg_records":%s,"blame_avg_log_revs":%s,"mean_records":%s,"files":%s,"update_from":%s,"update_to":%s,"concurrent":"%s"}\n' \
    "$STAMP" "$SIZE" "$SEED" "$HEAD" "$HOT_FILE" "$HOT_COUNT" "$HOT_HIST" "$AVG_FILE" "$AVG_COUNT" "$AVG_HIST" \
    "$MEAN" "$N_FILES" "$FROM" "$HEAD" "$CONCURRENT" >>"$JSON"
stop_servers
trap - EXIT

# ----- the tables -----------------------------------------------------------------

# stats MODE S OP: "wall_median wall_min wall_max client_cpu_median server_cpu_median
# server_peak_mb_max server_growth_mb_median first_wall failed_clients" over the timed runs of MODE
# (hot: run 0, the warm-up, gives only first_wall).
stats() {
    awk -F'\t' -v m="$1" -v s="$2" -v op="$3" '
        function median(a, n,   i, j, t, v) {
            for (i = 1; i <= n; i++) v[i] = a[i]
            for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j > 0 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
            return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        $1 == m && $2 == 0 && $3 == s && $4 == op { first = $5 }
        $1 == m && $2 > 0 && $3 == s && $4 == op {
            n++; w[n] = $5; cc[n] = $6 + $7; sc[n] = $9; g[n] = ($11 - $10) / 1024; f += $13
            if (n == 1 || $5 < mn) mn = $5; if (n == 1 || $5 > mx) mx = $5; if ($12 > pk) pk = $12
        }
        END {
            if (n == 0) { print "- - - - - - - - 0"; exit }
            printf "%.2f %.2f %.2f %.2f %.2f %.0f %.1f %s %d\n", median(w, n), mn, mx, median(cc, n), median(sc, n), pk / 1024, median(g, n), (first == "" ? "–" : first), f
        }' "$RAW"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "–"; else printf "%.2f", a / b }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

describe() {
    case "$1" in
    export) echo "export trunk (null-export)" ;;
    log) echo "log -v --limit 50000" ;;
    log-file) echo "log -v $HOT_FILE" ;;
    blame-hot) echo "blame $HOT_FILE" ;;
    blame-avg) echo "blame an average file" ;;
    list) echo "list -R trunk" ;;
    checkout) echo "checkout trunk" ;;
    update-null) echo "update, nothing to do" ;;
    update-span) echo "update r$FROM→r$HEAD" ;;
    svn-export) echo "svn export trunk (to disk)" ;;
    export-x*) echo "${1#export-x} exports at once" ;;
    esac
}

declare -A ST
for mode in hot cold first; do
    for op in "${OPS[@]}"; do
        for s in "${SERVERS[@]}"; do ST[$mode.$s.$op]=$(stats "$mode" "$s" "$op"); done
    done
done
field() { echo "${ST[$1.$2.$3]}" | cut -d' ' -f"$4"; }

: >"$OUT_TSV.tmp"
for mode in hot cold first; do
    for op in "${OPS[@]}"; do
        for s in "${SERVERS[@]}"; do
            read -r med mn mx cc sc pk _ _ <<<"${ST[$mode.$s.$op]}"
            [[ $med == - ]] && continue
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$SIZE" "$mode" "$op" "$(describe "$op")" "$s" "$med" "$mn" "$mx" "$sc" "$pk" >>"$OUT_TSV.tmp"
        done
    done
done

# summary MODE: one line per operation, the wall medians of every server, and Svelto's
# against the best svnserve configuration.
summary() {
    local mode=$1 op s line best bs med
    printf '| operation |'
    for s in "${SERVERS[@]}"; do [[ $mode != hot && $s == floor ]] || printf ' %s |' "$s"; done
    if [[ $HAS_SVELTO == yes && ${#SERVERS[@]} -gt 1 ]]; then printf ' svelto ÷ best svnserve (wall) |'; fi
    if [[ $HAS_BOTH == yes ]]; then printf ' svelto-http ÷ svelto: wall, server CPU |'; fi
    echo
    printf '|---|'
    for s in "${SERVERS[@]}"; do [[ $mode != hot && $s == floor ]] || printf -- '---|'; done
    if [[ $HAS_SVELTO == yes && ${#SERVERS[@]} -gt 1 ]]; then printf -- '---|'; fi
    if [[ $HAS_BOTH == yes ]]; then printf -- '---|'; fi
    echo
    for op in "${OPS[@]}"; do
        [[ $mode != hot && $op == export-x* ]] && continue
        line="| $(describe "$op") |"
        best="" bs=""
        for s in "${SERVERS[@]}"; do
            if [[ $mode != hot && $s == floor ]]; then continue; fi
            med=$(field "$mode" "$s" "$op" 1)
            nf=$(field "$mode" "$s" "$op" 9)
            if [[ $med == - ]] && skipped "$s" "$op"; then
                line="$line not run (FORK_MAX) |"
            elif [[ $med == - ]]; then
                line="$line – |"
            elif ((nf > 0)); then
                line="$line $med, **$nf clients failed** |"
            elif [[ $mode == hot ]]; then
                line="$line $med ($(field "$mode" "$s" "$op" 2)–$(field "$mode" "$s" "$op" 3)) |"
            else
                line="$line $med |"
            fi
            if [[ $s == svnserve* && $med != - && $nf == 0 ]] && { [[ -z "$best" ]] || awk -v a="$med" -v b="$best" 'BEGIN { exit !(a < b) }'; }; then
                best=$med bs=$s
            fi
        done
        if [[ $HAS_SVELTO == yes && ${#SERVERS[@]} -gt 1 ]]; then
            if [[ -n "$bs" ]]; then
                line="$line $(ratio "$(field "$mode" svelto "$op" 1)" "$best") ($bs) |"
            else
                line="$line – |"
            fi
        fi
        if [[ $HAS_BOTH == yes ]]; then
            line="$line $(ratio "$(field "$mode" svelto-http "$op" 1)" "$(field "$mode" svelto "$op" 1)"), $(ratio "$(field "$mode" svelto-http "$op" 5)" "$(field "$mode" svelto "$op" 5)") |"
        fi
        echo "$line"
    done
}

row() {
    local op=$1 s=$2 st=$3 extra=$4 med mn mx cc sc pk g first nf
    read -r med mn mx cc sc pk g first nf <<<"$st"
    ((nf == 0)) || med="$med (**$nf clients failed**)"
    if [[ "$med" == - ]]; then
        printf '| %s | %s | not measured | – | – | – | – | – | |\n' "$(describe "$op")" "$s"
    else
        printf '| %s | %s | %s (%s–%s) | %s | %s | %s | %s | %s | %s |\n' "$(describe "$op")" "$s" "$med" "$mn" "$mx" "$cc" "$sc" "$pk" "$g" "$first" "$extra"
    fi
}

CMDS=""
for s in "${SERVERS[@]}"; do
    [[ $s == floor ]] && continue
    server_args "$s"
    if [[ $s == svelto* ]]; then repo=$SVR; else repo=$FSFS; fi
    case "$s" in
    apache*)
        extra=""
        if [[ $s == apache-fast ]]; then extra="; $APACHE_FAST_SERVER $(echo "$APACHE_FAST" | tr -s ' \n' ' ')"; fi
        CMDS="$CMDS${ARGS[*]}
    (Listen 127.0.0.1:PORT; <Location /> DAV svn, SVNParentPath $SCRATCH/root-$s$extra; $SCRATCH/root-$s/$SIZE -> $repo)
" ;;
    svelto-http)
        CMDS="$CMDS${ARGS[*]} --http-listen 127.0.0.1:0 -r $SCRATCH/root-$s --listen-host 127.0.0.1 --listen-port 0 --log-file $SCRATCH/$s.log
    ($SCRATCH/root-$s/$SIZE -> $repo)
" ;;
    *)
        CMDS="$CMDS${ARGS[*]} -r $SCRATCH/root-$s --listen-host 127.0.0.1 --listen-port 0 --log-file $SCRATCH/$s.log
    ($SCRATCH/root-$s/$SIZE -> $repo)
" ;;
    esac
done
CMDS="${CMDS}
URL=svn://127.0.0.1:PORT/$SIZE (http://127.0.0.1:PORT/$SIZE for Apache and svelto-http); every client command also gets --non-interactive --config-dir $CFG"
for op in "${OPS[@]}"; do
    URL[cmd]=URL
    op_cmd cmd "$op"
    c="${CMD[*]}"
    case "$op" in
    update-null) CMDS="$CMDS
svn update -q WC                      (the checkout just made; then rm -rf WC, untimed)" ;;
    update-span) CMDS="$CMDS
svn checkout -q -r $FROM URL/trunk WC   (untimed), then: svn update -q -r $HEAD WC" ;;
    checkout) CMDS="$CMDS
svn checkout -q URL/trunk WC" ;;
    svn-export) CMDS="$CMDS
svn export -q URL/trunk DIR          (then rm -rf DIR, untimed)" ;;
    export-x*) CMDS="$CMDS
${op#export-x} x svnbench null-export URL/trunk, started together, timed until the last ends" ;;
    *) CMDS="$CMDS
${c// --non-interactive --config-dir $CFG/}" ;;
    esac
done

{
    echo "# Server: svnserve and Apache vs svelto serve ($SIZE, seed $SEED)"
    echo
    echo "- Date: $STAMP; the whole run took $((($(date +%s) - T_START + 30) / 60)) min"
    echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r); load average before the run: $LOAD0"
    echo "- Work directory: $SCRATCH on $(df -PT "$SCRATCH" | awk 'NR == 2 { print $2 " (" $1 ")" }'); client and servers on the same machine, over 127.0.0.1"
    echo "- History: $DUMP, r0-r$HEAD, $(awk -v b="$DUMP_BYTES" 'BEGIN { printf "%.1f", b / 1e6 }') MB, md5 $DUMP_MD5 (\`svelto-gen $(gen_args "$SIZE") --seed $SEED\`)"
    echo "- Repositories: $FSFS (FSFS, packed), $(if [[ $HAS_SVELTO == yes ]]; then echo "$SVR (Svelto)"; else echo "Svelto not served"; fi)"
    echo "- Servers:"
    for s in "${SERVERS[@]}"; do echo "  - \`$s\`: $(describe_server "$s")"; done
    echo "- svnserve and client: $(svnserve --version --quiet) (svn, svnbench); svelto: $SVELTO_DESC"
    echo "- Hot runs: $RUNS, each operation against every server in a row, the order rotating by one server per pass, after one untimed warm-up pass of every operation: hot caches (page cache and the servers' own)"
    echo "- Cold runs: $COLD_LINE"
    echo "- First request after a start: $FIRST_LINE"
    echo "- Floor: $FLOOR_LINE"
    echo "- Blamed files (files under trunk at r$HEAD with plain names, by dump records that touched the path): the most touched, $HOT_FILE ($HOT_COUNT records, $HOT_HIST revisions in its \`svn log\`; also the file of \`log -v FILE\`); an average one, $AVG_FILE ($AVG_COUNT records, $AVG_HIST in its log; the mean over $N_FILES files is $MEAN)"
    echo "- Checks (untimed): $CHECK_LINE; $OUTPUT_LINE"
    echo
    echo "## Hot: client wall seconds, median (min–max) over $RUNS runs"
    echo
    summary hot
    echo
    if ((COLD > 0)); then
        echo "## Cold: client wall seconds, median over $COLD run(s), server restarted and page cache dropped before each"
        echo
        summary cold
        echo
    fi
    first_tables
    floor_tables
    echo "## Commands"
    echo
    echo '```'
    echo "$CMDS"
    echo '```'
    echo
    echo "## Hot, in detail"
    echo
    echo "Client wall time is the command's elapsed time (\`/usr/bin/time\`), client CPU its user+sys. Server CPU is the server's utime+stime (\`/proc/PID/stat\`, all threads, and for the forking svnserve configurations and Apache its child processes too; 1/$TICK s ticks) read before and after the command. Server peak is its VmHWM during the command (reset through \`/proc/PID/clear_refs\` before it); for the forking configurations, plus the largest sum of the connection processes' RSS sampled every 0.2 s. Growth is the change of the main process's VmRSS across the command. Medians over the $RUNS timed runs; the peak is the largest over them."
    echo
    echo "| operation | server | client wall s: median (min–max) | client CPU s | server CPU s | server peak RSS MB | server RSS growth MB | first run s (fresh server) | Svelto ÷ this: wall, server CPU (svelto for svn:// rows, svelto-http for Apache's; svelto-http's row: ÷ svelto) |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for op in "${OPS[@]}"; do
        for s in "${SERVERS[@]}"; do
            extra=""
            mine=""
            case "$s" in
            svnserve*) [[ " ${SERVERS[*]} " == *" svelto "* ]] && mine=svelto ;;
            apache*) [[ " ${SERVERS[*]} " == *" svelto-http "* ]] && mine=svelto-http ;;
            svelto-http) [[ " ${SERVERS[*]} " == *" svelto "* ]] && mine=svelto ;;
            esac
            if [[ -n $mine && $s == svelto-http ]]; then
                extra="$(ratio "$(field hot "$s" "$op" 1)" "$(field hot svelto "$op" 1)"), $(ratio "$(field hot "$s" "$op" 5)" "$(field hot svelto "$op" 5)")"
            elif [[ -n $mine ]]; then
                extra="$(ratio "$(field hot "$mine" "$op" 1)" "$(field hot "$s" "$op" 1)"), $(ratio "$(field hot "$mine" "$op" 5)" "$(field hot "$s" "$op" 5)")"
            fi
            row "$op" "$s" "${ST[hot.$s.$op]}" "$extra"
        done
    done
    echo
    echo "| server, whole session (warm-up and hot runs) | RSS at start MB | RSS at end MB | peak RSS (VmHWM) over the session MB | CPU s, all passes and checks |"
    echo "|---|---|---|---|---|"
    for s in "${SERVERS[@]}"; do
        [[ $s == floor ]] && continue
        echo "| $s | $(mb "${RSS0[$s]}") | $(mb "${RSS_END[$s]}") | $(mb "${HWM[$s]}") | ${CPU_ALL[$s]} |"
    done
    echo
    echo "Raw runs (hot run 0 is the warm-up): \`$(basename "$OUT_JSON")\`; medians: \`$(basename "$OUT_TSV")\`."
} >"$OUT_MD.tmp"
mv "$OUT_MD.tmp" "$OUT_MD"
mv "$OUT_TSV.tmp" "$OUT_TSV"
mv "$JSON" "$OUT_JSON"
cat "$OUT_MD"
say "wrote $OUT_MD, $OUT_JSON and $OUT_TSV"

#!/usr/bin/env bash
# bench/web.sh: server CPU of each web interface page (docs/web.md) against the stock
# client's equivalent request on the same `svelto serve --http-listen`.
#
#   bench/web.sh                 the synthetic history below (docs/web.md's Cost table)
#   RUNS=5 REQS=20 bench/web.sh  medians of RUNS samples, each REQS requests (defaults)
#   ONLY=blame bench/web.sh      only the requests whose name matches the (grep -E) pattern
#   KEEP=1 bench/web.sh          leaves the server running afterwards (its PID and URL said)
#   SVELTO=target/release/svelto bench/web.sh   another build (default: target/debug/svelto,
#                                the test profile's, as `cargo test -p svelto-cli` builds it)
#
# The history: r1 adds trunk/files/ (200 files of 40 lines), trunk/big.rs (600 lines of
# Rust-like text) and trunk/big.txt (the same text, a name no grammar matches); r2..r121
# each change one line of big.rs and big.txt. Made with the stock svnmucc over http://.
#
# A sample is the server's user+system CPU (/proc/PID/stat, 1/CLK_TCK s ticks) over REQS
# identical requests (curl for a page, the svn client for its counterpart), divided by
# REQS; the table gives the median of RUNS samples in ms. Writes
# bench/results/DAY/web.md (and .jsonl). Needs svn, svnmucc, curl (scripts/setup).
set -euo pipefail
NAME=web
BENCH=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"
# shellcheck source=bench/servers.sh
source "$BENCH/servers.sh"

RUNS=${RUNS:-5}
REQS=${REQS:-20}
SVELTO=${SVELTO:-$BENCH/../target/debug/svelto}
[[ -x $SVELTO ]] || die "no svelto at $SVELTO (cargo test -p svelto-cli --test web builds it)"
for t in svn svnmucc curl; do command -v $t >/dev/null || die "$t is missing (scripts/setup)"; done
TICK=$(getconf CLK_TCK)
SCRATCH=$(mktemp -d /tmp/bench-web.XXXXXX)
SERVER=""
cleanup() {
    [[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

"$SVELTO" admin create "$SCRATCH/root/demo" >/dev/null
printf '[general]\nanon-access = write\n' >"$SCRATCH/root/demo/conf/svnserve.conf"
"$SVELTO" serve -d --foreground -r "$SCRATCH/root" --listen-host 127.0.0.1 --listen-port 0 \
    --http-listen 127.0.0.1:0 --log-file "$SCRATCH/serve.log" 2>"$SCRATCH/serve.err" &
SERVER=$!
port=""
for _ in $(seq 1 100); do
    port=$(http_port_of "$SCRATCH/serve.err")
    [[ -n $port ]] && break
    sleep 0.1
done
[[ -n $port ]] || { cat "$SCRATCH/serve.err" >&2; die "svelto did not start"; }
BASE=http://127.0.0.1:$port
URL=$BASE/demo
SVN=(--non-interactive --config-option servers:global:http-compression=no)

say "making the history (121 revisions) at $URL"
mkdir -p "$SCRATCH/files"
ops=(mkdir "$URL/trunk" mkdir "$URL/trunk/files")
for f in $(seq 1 200); do
    for l in $(seq 1 40); do echo "file $f line $l: some words to make a line of text"; done \
        >"$SCRATCH/files/f$f.txt"
    ops+=(put "$SCRATCH/files/f$f.txt" "$URL/trunk/files/f$f.txt")
done
big() { # big REV: the 600-line text at REV (line REV*7 mod 600 changed since r2)
    awk -v r="$1" 'BEGIN { for (i = 1; i <= 600; i++) {
        v = i; for (k = 2; k <= r; k++) if ((k * 7) % 600 == i - 1) v = i "_" k
        printf "    let x_%s = compute(%d, \"text %d\"); // note %d\n", v, i, i, i } }'
}
big 1 >"$SCRATCH/big"
ops+=(put "$SCRATCH/big" "$URL/trunk/big.rs" put "$SCRATCH/big" "$URL/trunk/big.txt")
svnmucc "${SVN[@]}" -m "import" "${ops[@]}" >/dev/null
for r in $(seq 2 121); do
    big "$r" >"$SCRATCH/big"
    svnmucc "${SVN[@]}" -m "change $r of big" put "$SCRATCH/big" "$URL/trunk/big.rs" \
        put "$SCRATCH/big" "$URL/trunk/big.txt" >/dev/null
done
printf '[general]\nanon-access = read\n' >"$SCRATCH/root/demo/conf/svnserve.conf"
sleep 1.1

W=$URL/!svn/web
# name | command (run REQS times per sample)
CASES=(
    "page: directory of 200 files|curl -sf -o /dev/null $W/browse/HEAD/trunk/files/"
    "svn ls -v (200 files)|svn ls -v ${SVN[*]} $URL/trunk/files"
    "page: history, 50 revisions|curl -sf -o /dev/null $W/log/HEAD/trunk"
    "svn log -v -l 50|svn log -v -l 50 ${SVN[*]} $URL/trunk"
    "page: revision (diff of 2 files)|curl -sf -o /dev/null $W/rev/100/"
    "svn diff -c 100|svn diff -c 100 ${SVN[*]} $URL/trunk"
    "page: diff of one file|curl -sf -o /dev/null $W/diff/100/trunk/big.rs"
    "svn diff -c 100 (one file)|svn diff -c 100 ${SVN[*]} $URL/trunk/big.rs"
    "page: file of 600 lines, highlighted|curl -sf -o /dev/null $W/browse/HEAD/trunk/big.rs"
    "page: file of 600 lines, plain|curl -sf -o /dev/null $W/browse/HEAD/trunk/big.txt"
    "svn cat (600 lines)|svn cat ${SVN[*]} $URL/trunk/big.rs"
    "page: blame, 121 versions|curl -sf -o /dev/null $W/blame/HEAD/trunk/big.rs"
    "svn blame (121 versions)|svn blame ${SVN[*]} $URL/trunk/big.rs"
    "page: archive .tar.gz, 202 files|curl -sf -o /dev/null $W/archive/HEAD/trunk"
    "page: archive .zip, 202 files|curl -sf -o /dev/null $W/archive/HEAD/trunk?format=zip"
    "svn export (202 files)|svn export -q --force ${SVN[*]} $URL/trunk $SCRATCH/export"
    "page: search (names and messages)|curl -sf -o /dev/null $W/search/HEAD/?q=f17"
    "svn log --search (121 revisions)|svn log -q --search f17 ${SVN[*]} $URL"
)

# A partial run (ONLY) keeps its table in the scratch directory, not in bench/results/.
[[ -z ${ONLY:-} ]] || OUT_DIR=${OUT_DIR:-$SCRATCH}
results_dir
OUT=$OUT_DIR/web
: >"$OUT.jsonl"
{
    echo "# Web pages against the stock client, server CPU ($(date -u +%Y-%m-%d))"
    echo
    echo "\`bench/web.sh\` (RUNS=$RUNS, REQS=$REQS), $($SVELTO --version 2>/dev/null | head -n 1), $(svn --version --quiet) client; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg) at the start."
    echo "Server CPU per request in ms, median of $RUNS samples of $REQS requests each."
    echo
    echo "| request | server CPU ms | min | max |"
    echo "| --- | --- | --- | --- |"
} >"$OUT.md"
for c in "${CASES[@]}"; do
    name=${c%%|*}
    cmd=${c#*|}
    [[ -z ${ONLY:-} ]] || grep -qE "$ONLY" <<<"$name" || continue
    # A first run warms the caches (and checks the command works).
    bash -c "$cmd" >/dev/null || die "failed: $cmd"
    samples=()
    for _ in $(seq 1 "$RUNS"); do
        t0=$(ticks "$SERVER")
        for _ in $(seq 1 "$REQS"); do bash -c "$cmd" >/dev/null; done
        t1=$(ticks "$SERVER")
        samples+=("$(awk -v a="$t0" -v b="$t1" -v t="$TICK" -v n="$REQS" 'BEGIN { printf "%.2f", (b - a) * 1000 / t / n }')")
    done
    read -r med lo hi < <(printf '%s\n' "${samples[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }')
    say "$name: $med ms (${samples[*]})"
    echo "| $name | $med | $lo | $hi |" >>"$OUT.md"
    printf '{"request":"%s","server_cpu_ms":%s,"samples":[%s]}\n' "$name" "$med" \
        "$(IFS=,; echo "${samples[*]}")" >>"$OUT.jsonl"
done
say "wrote $OUT.md"
if [[ -n ${KEEP:-} ]]; then
    say "server $SERVER left running at $URL (scratch $SCRATCH)"
    trap - EXIT
fi

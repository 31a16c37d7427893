#!/usr/bin/env bash
# bench/web.sh: server CPU and wall time of each web interface page (docs/web.md) against
# the stock client's equivalent request on the same `svelto serve --http-listen`.
#
#   bench/web.sh                 the synthetic history below (docs/web.md's first Cost table)
#   bench/web.sh medium          a copy of the medium history's Svelto repository (REPO, default
#                                bench/work/svelto-medium; the paths below are those of
#                                `svelto-gen --size medium --seed 7`, e.g. REPO=/work/cache/
#                                medium7/svelto; every path is checked first)
#   RUNS=5 REQS=20 bench/web.sh  medians of RUNS samples, each REQS requests (defaults; the
#                                medium history's slower rows take SLOW=5, or 1, a sample)
#   ONLY=blame bench/web.sh      only the requests whose name matches the (grep -E) pattern
#   KEEP=1 bench/web.sh          leaves the server running afterwards (its PID and URL said)
#   SVELTO=target/release/svelto bench/web.sh   another build (default: target/debug/svelto,
#                                the test profile's, as `cargo test -p svelto-cli` builds it)
#
# The synthetic history: r1 adds trunk/files/ (200 files of 40 lines), trunk/big.rs (600
# lines of Rust-like text) and trunk/big.txt (the same text, a name no grammar matches);
# r2..r121 each change one line of big.rs and big.txt. Made with the stock svnmucc over
# http://.
#
# A sample is the server's user+system CPU (/proc/PID/stat, 1/CLK_TCK s ticks) over REQS
# requests (curl for a page, the svn client for its counterpart), divided by REQS, and the
# wall time of the same requests as the client saw them (an `svn` command's includes its
# own start, about 10-20 ms), and the client's user+system CPU (the children this script
# waited for: curl, or the svn client doing its share, e.g. `svn blame`'s line matching);
# the table gives the medians of RUNS samples in ms. A row whose
# name says "first view" asks for a different file each request (so no cache helps). The
# first request of a row warms the caches and checks the command works. Writes
# bench/results/DAY/web.md (web-medium.md; and .jsonl). Needs svn, svnmucc, curl.
set -euo pipefail
NAME=web
BENCH=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"
# shellcheck source=bench/servers.sh
source "$BENCH/servers.sh"

MODE=${1:-synthetic}
case "$MODE" in synthetic | medium) ;; *) die "usage: bench/web.sh [medium]" ;; esac
RUNS=${RUNS:-5}
REQS=${REQS:-20}
SLOW=${SLOW:-5} # the requests a sample of the medium history's slower rows
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

if [[ $MODE == medium ]]; then
    REPO=${REPO:-$BENCH/work/svelto-medium}
    [[ -f $REPO/format && -d $REPO/db ]] || die "no Svelto repository at $REPO (bench/run medium, or REPO=...)"
    # The server may write (locks, caches): it serves a copy, never REPO itself.
    mkdir -p "$SCRATCH/root"
    cp -a "$REPO" "$SCRATCH/root/demo"
    printf '[general]\nanon-access = read\n' >"$SCRATCH/root/demo/conf/svnserve.conf"
    rm -f "$SCRATCH/root/demo/conf/authz"
else
    "$SVELTO" admin create "$SCRATCH/root/demo" >/dev/null
    printf '[general]\nanon-access = write\n' >"$SCRATCH/root/demo/conf/svnserve.conf"
fi
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
W=$URL/!svn/web

# name | requests a sample (empty: REQS) | command; $N counts the requests of a row (0 is
# the warming one), for the rows that ask for a different file each time.
if [[ $MODE == synthetic ]]; then
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
    CASES=(
        "page: directory of 200 files||curl -sf -o /dev/null $W/browse/HEAD/trunk/files/"
        "svn ls -v (200 files)||svn ls -v ${SVN[*]} $URL/trunk/files"
        "page: history, 50 revisions||curl -sf -o /dev/null $W/log/HEAD/trunk"
        "svn log -v -l 50||svn log -v -l 50 ${SVN[*]} $URL/trunk"
        "page: revision (diff of 2 files)||curl -sf -o /dev/null $W/rev/100/"
        "svn diff -c 100||svn diff -c 100 ${SVN[*]} $URL/trunk"
        "page: diff of one file||curl -sf -o /dev/null $W/diff/100/trunk/big.rs"
        "svn diff -c 100 (one file)||svn diff -c 100 ${SVN[*]} $URL/trunk/big.rs"
        "page: file of 600 lines, highlighted||curl -sf -o /dev/null $W/browse/HEAD/trunk/big.rs"
        "page: file of 600 lines, plain||curl -sf -o /dev/null $W/browse/HEAD/trunk/big.txt"
        "svn cat (600 lines)||svn cat ${SVN[*]} $URL/trunk/big.rs"
        "page: blame, 121 versions||curl -sf -o /dev/null $W/blame/HEAD/trunk/big.rs"
        "svn blame (121 versions)||svn blame ${SVN[*]} $URL/trunk/big.rs"
        "page: archive .tar.gz, 202 files||curl -sf -o /dev/null $W/archive/HEAD/trunk"
        "page: archive .zip, 202 files||curl -sf -o /dev/null $W/archive/HEAD/trunk?format=zip"
        "svn export (202 files)||svn export -q --force ${SVN[*]} $URL/trunk $SCRATCH/export"
        "page: search (names and messages)||curl -sf -o /dev/null $W/search/HEAD/?q=f17"
        "svn log --search (121 revisions)||svn log -q --search f17 ${SVN[*]} $URL"
    )
else
    # Paths of `svelto-gen --size medium --seed 7` at r12000 (override for another history).
    DIR=${DIR:-trunk/data/plugin/editor}           # 49 files
    FILE=${FILE:-trunk/src/auth/bench/compat/model/event_annotate.c} # 584 lines, 10 versions
    FILE_LAST=${FILE_LAST:-11913}                   # FILE's last change
    LONG=${LONG:-trunk/ChangeLog}                   # changed in 11,558 revisions
    REV=${REV:-12000}                               # 2 files changed
    ARCH=${ARCH:-trunk/src/thread}                  # 267 files
    WORD=${WORD:-annotate}
    for p in "$DIR" "$FILE" "$LONG" "$ARCH"; do
        svn info "${SVN[@]}" "$URL/$p" >/dev/null 2>&1 || die "no $p in $REPO (another history? set DIR, FILE, LONG, ARCH)"
    done
    # C files of 400-800 lines under trunk/src, one per "first view" request.
    mapfile -t CFILES < <(svn ls -R "${SVN[@]}" "$URL/trunk/src" | grep '\.c$' | head -n 400 |
        while read -r f; do
            n=$(svn cat "${SVN[@]}" "$URL/trunk/src/$f" | wc -l)
            ((n >= 400 && n <= 800)) && echo "trunk/src/$f"
        done | head -n $((RUNS * SLOW + 1)))
    ((${#CFILES[@]} > RUNS * SLOW)) || die "too few C files of 400-800 lines under trunk/src"
    lines=0
    for f in "${CFILES[@]}"; do lines=$((lines + $(svn cat "${SVN[@]}" "$URL/$f" | wc -l))); done
    CLINES=$((lines / ${#CFILES[@]}))
    say "first views over ${#CFILES[@]} C files of $CLINES lines on average"
    FLINES=$(svn cat "${SVN[@]}" "$URL/$FILE" | wc -l)
    NDIR=$(svn ls "${SVN[@]}" "$URL/$DIR" | wc -l)
    NARCH=$(svn ls -R "${SVN[@]}" "$URL/$ARCH" | grep -vc '/$')
    CASES=(
        "page: parent path (list of repositories)||curl -sf -o /dev/null $BASE/"
        "svn ls (repository root)||svn ls ${SVN[*]} $URL"
        "page: directory trunk (README below)||curl -sf -o /dev/null $W/browse/HEAD/trunk/"
        "svn ls -v trunk||svn ls -v ${SVN[*]} $URL/trunk"
        "page: directory of $NDIR files||curl -sf -o /dev/null $W/browse/HEAD/$DIR/"
        "svn ls -v ($NDIR files)||svn ls -v ${SVN[*]} $URL/$DIR"
        "page: file of $FLINES lines (C), highlighted, cached||curl -sf -o /dev/null $W/browse/HEAD/$FILE"
        "page: line range (?hl=100-120), cached||curl -sf -o /dev/null '$W/browse/HEAD/$FILE?hl=100-120'"
        "page: raw file||curl -sf -o /dev/null $W/raw/HEAD/$FILE"
        "svn cat ($FLINES lines)||svn cat ${SVN[*]} $URL/$FILE"
        "page: file of ~$CLINES lines (C), first view|$SLOW|curl -sf -o /dev/null $W/browse/HEAD/\${CFILES[N]}"
        "svn cat (~$CLINES lines, each file once)|$SLOW|svn cat ${SVN[*]} $URL/\${CFILES[N]}"
        "page: history of trunk, 50 revisions||curl -sf -o /dev/null $W/log/HEAD/trunk"
        "svn log -v -l 50 trunk||svn log -v -l 50 ${SVN[*]} $URL/trunk"
        "page: history of a file (10 revisions in 12,000)|$SLOW|curl -sf -o /dev/null $W/log/HEAD/$FILE"
        "svn log -v -l 50 (the file)|$SLOW|svn log -v -l 50 ${SVN[*]} $URL/$FILE"
        "page: revision r$REV||curl -sf -o /dev/null $W/rev/$REV/"
        "svn diff -c $REV||svn diff -c $REV ${SVN[*]} $URL"
        "svn log -v -r $REV||svn log -v -r $REV ${SVN[*]} $URL"
        "page: revision r2 (the import: 22,603 changed paths)|$SLOW|curl -sf -o /dev/null $W/rev/2/"
        "svn log -v -r 2|$SLOW|svn log -v -r 2 ${SVN[*]} $URL"
        "page: diff of one file (r$FILE_LAST)||curl -sf -o /dev/null $W/diff/HEAD/$FILE"
        "svn diff -c $FILE_LAST (the file)||svn diff -c $FILE_LAST ${SVN[*]} $URL/$FILE"
        "page: blame, 10 versions||curl -sf -o /dev/null $W/blame/HEAD/$FILE"
        "svn blame (10 versions)||svn blame ${SVN[*]} $URL/$FILE"
        "page: blame of ChangeLog (11,558 versions)|1|curl -sf -o /dev/null $W/blame/HEAD/$LONG"
        "svn blame ChangeLog (11,558 versions)|1|svn blame ${SVN[*]} $URL/$LONG"
        "page: archive .tar.gz, $NARCH files|$SLOW|curl -sf -o /dev/null $W/archive/HEAD/$ARCH"
        "page: archive .zip, $NARCH files|$SLOW|curl -sf -o /dev/null '$W/archive/HEAD/$ARCH?format=zip'"
        "svn export ($NARCH files)|$SLOW|svn export -q --force ${SVN[*]} $URL/$ARCH $SCRATCH/export"
        "page: search '$WORD' (names and messages)|$SLOW|curl -sf -o /dev/null '$W/search/HEAD/?q=$WORD'"
        "svn log -q --search $WORD (12,000 revisions)|$SLOW|svn log -q --search $WORD ${SVN[*]} $URL"
    )
fi

# A partial run (ONLY) keeps its table in the scratch directory, not in bench/results/.
[[ -z ${ONLY:-} ]] || OUT_DIR=${OUT_DIR:-$SCRATCH}
results_dir
OUT=$OUT_DIR/web
[[ $MODE == synthetic ]] || OUT=$OUT-$MODE
: >"$OUT.jsonl"
{
    echo "# Web pages against the stock client, server CPU ($(date -u +%Y-%m-%d))"
    echo
    echo "\`bench/web.sh${1:+ $1}\` (RUNS=$RUNS, REQS=$REQS), $($SVELTO --version 2>/dev/null | head -n 1), $(svn --version --quiet) client; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg) at the start."
    echo "Per request in ms: the server's CPU (median of $RUNS samples, min, max), the client's CPU (curl or svn, median) and the wall time the client saw (median)."
    echo
    echo "| request | server CPU ms | min | max | client CPU ms | wall ms |"
    echo "| --- | --- | --- | --- | --- | --- |"
} >"$OUT.md"
now() { date +%s%N; }
# The user+system CPU of this shell's waited-for children (curl, svn), in ticks.
child_ticks() { awk '{ print $16 + $17 }' "/proc/$$/stat"; }
for c in "${CASES[@]}"; do
    name=${c%%|*}
    rest=${c#*|}
    reqs=${rest%%|*}
    reqs=${reqs:-$REQS}
    cmd=${rest#*|}
    [[ -z ${ONLY:-} ]] || grep -qE "$ONLY" <<<"$name" || continue
    N=0
    eval "$cmd" >/dev/null || die "failed: $cmd"
    samples=()
    walls=()
    clients=()
    for _ in $(seq 1 "$RUNS"); do
        t0=$(ticks "$SERVER")
        c0=$(child_ticks)
        w0=$(now)
        for _ in $(seq 1 "$reqs"); do
            N=$((N + 1))
            eval "$cmd" >/dev/null
        done
        w1=$(now)
        c1=$(child_ticks)
        t1=$(ticks "$SERVER")
        clients+=("$(awk -v a="$c0" -v b="$c1" -v t="$TICK" -v n="$reqs" 'BEGIN { printf "%.2f", (b - a) * 1000 / t / n }')")
        samples+=("$(awk -v a="$t0" -v b="$t1" -v t="$TICK" -v n="$reqs" 'BEGIN { printf "%.2f", (b - a) * 1000 / t / n }')")
        walls+=("$(awk -v a="$w0" -v b="$w1" -v n="$reqs" 'BEGIN { printf "%.1f", (b - a) / 1e6 / n }')")
    done
    read -r med lo hi < <(printf '%s\n' "${samples[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }')
    wall=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    client=$(printf '%s\n' "${clients[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    say "$name: $med ms CPU, client $client ms CPU, $wall ms wall (${samples[*]})"
    echo "| $name | $med | $lo | $hi | $client | $wall |" >>"$OUT.md"
    printf '{"request":"%s","requests":%s,"server_cpu_ms":%s,"samples":[%s],"client_cpu_ms":[%s],"wall_ms":[%s]}\n' "$name" "$reqs" "$med" \
        "$(IFS=,; echo "${samples[*]}")" "$(IFS=,; echo "${clients[*]}")" "$(IFS=,; echo "${walls[*]}")" >>"$OUT.jsonl"
done
say "wrote $OUT.md"
if [[ -n ${KEEP:-} ]]; then
    say "server $SERVER left running at $URL (scratch $SCRATCH)"
    trap - EXIT
fi

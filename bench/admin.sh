#!/usr/bin/env bash
# bench/admin.sh SIZE [RUNS]: svnadmin vs svelto admin, side by side.
#
# Loads a generated dumpfile into a fresh FSFS repository (format 8, then packed) and
# into a fresh Svelto repository, dumps both back out, and compares size on disk.
# Every repetition runs both tools, alternating which goes first. Prints a markdown
# table and writes it, with every raw run as JSON lines, to bench/results/.
#
# Environment:
#   SEED=N            generator seed (default 1)
#   SVELTO=none       measure svnadmin only (while `svelto admin` is not ready)
#   SVELTO_BIN=PATH   use this svelto binary instead of building target/release/svelto
#   CHECK=0           skip the (untimed) check that both dumps equal the input dump
#   LOADS=N           load in the first N runs only (default: every run); dumps run in all.
#                     LOADS=0 measures the dumps of the repositories already in bench/work
#   OUT_DIR=DIR       where the table and the raw runs go (default bench/results/DAY)
#   SVNADMIN_FLAGS=.. extra flags for svnadmin load and dump, e.g. "-M 1024" (the seed
#                     studies' "fast" cache) or "--no-flush-to-disk" (load only: not durable)
#
# See bench/README.md for what is measured and how to read the table.
set -euo pipefail

usage() {
    echo "usage: bench/admin.sh small|medium|large|rN [RUNS]" >&2
    exit 2
}
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME=admin.sh
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"
SIZE=${1:-}
RUNS=${2:-3}
valid_size "$SIZE" || usage
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || usage
LOADS=${LOADS:-$RUNS}
[[ "$LOADS" =~ ^[0-9]+$ ]] || usage
SEED=${SEED:-1}
SVELTO=${SVELTO:-yes}
CHECK=${CHECK:-1}
SVNADMIN_FLAGS=${SVNADMIN_FLAGS:-}
read -r -a SVNFLAGS <<<"$SVNADMIN_FLAGS"
DUMPFLAGS=()
for f in "${SVNFLAGS[@]}"; do [[ "$f" == --no-flush-to-disk ]] || DUMPFLAGS+=("$f"); done

ROOT=$(dirname "$BENCH")
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
DATA=$BENCH/data
WORK=$BENCH/work
mkdir -p "$DATA" "$WORK"
results_dir

STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
OUT_MD=$OUT_DIR/admin-$SIZE.md
OUT_JSON=$OUT_DIR/admin-$SIZE.jsonl
# Raw records collect in the work directory; the results replace earlier ones of the
# same day only once the run has finished.
RAW=$WORK/admin-$SIZE.tsv
JSON=$WORK/admin-$SIZE.jsonl
: >"$RAW"
: >"$JSON"

# ----- tools ----------------------------------------------------------------------

need_gnu_time
command -v svnadmin >/dev/null || die "svnadmin not found (apt-get install -y subversion)"
command -v cargo >/dev/null || die "cargo not found"

say "building svelto-gen (cargo build --release -p svelto-bench)"
(cd "$ROOT" && cargo build --release -q -p svelto-bench) || die "building svelto-gen failed"
GEN=$TARGET/release/svelto-gen

SVELTO_DESC="not measured (SVELTO=none)"
if [[ "$SVELTO" != none ]]; then
    if [[ -n "${SVELTO_BIN:-}" ]]; then
        SV=$SVELTO_BIN
    else
        # cargo rebuilds only when the sources changed: this is the staleness check.
        say "building svelto (cargo build --release -p svelto-cli)"
        (cd "$ROOT" && cargo build --release -q -p svelto-cli) ||
            die "building svelto failed; fix it, or run with SVELTO=none to measure svnadmin only"
        SV=$TARGET/release/svelto
    fi
    [[ -x "$SV" ]] || die "$SV is missing; run with SVELTO=none to measure svnadmin only"
    rm -rf "$WORK/probe"
    "$SV" admin create "$WORK/probe" >/dev/null 2>&1 ||
        die "'$SV admin create' does not work yet; run with SVELTO=none to measure svnadmin only"
    rm -rf "$WORK/probe"
    SVELTO_DESC="$SV ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet HEAD -- 2>/dev/null || echo '+changes'))"
fi

# ----- data -----------------------------------------------------------------------

DUMP=$DATA/$SIZE-seed$SEED.dump
ensure_dump "$GEN"
DUMP_BYTES=$(stat -c %s "$DUMP")
# The checksum names the exact history (it depends on the generator's code, not only
# on the seed); reading the file also puts it in the page cache for the runs.
DUMP_MD5=$(md5sum "$DUMP" | cut -d' ' -f1)
DUMP_YOUNGEST=$(($(grep -a -c '^Revision-number: ' "$DUMP" || true) - 1))

FSFS=$WORK/fsfs-$SIZE
SVR=$WORK/svelto-$SIZE

# ----- measuring ------------------------------------------------------------------

# measure RUN TOOL OP STDIN STDOUT CMD...: runs CMD under /usr/bin/time, appends a raw
# record (TSV for the table, JSON for the record).
measure() {
    local run=$1 tool=$2 op=$3 input=$4 output=$5
    shift 5
    local tf
    tf=$(mktemp)
    if ! /usr/bin/time -o "$tf" -f '%e %U %S %M' "$@" <"$input" >"$output"; then
        cat "$tf" >&2
        rm -f "$tf"
        die "failed: $*"
    fi
    local wall user sys rss
    read -r wall user sys rss < <(tail -n 1 "$tf")
    rm -f "$tf"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$run" "$tool" "$op" "$wall" "$user" "$sys" "$rss" >>"$RAW"
    printf '{"date":"%s","size":"%s","seed":%s,"run":%s,"tool":"%s","op":"%s","wall_s":%s,"user_s":%s,"sys_s":%s,"max_rss_kb":%s}\n' \
        "$STAMP" "$SIZE" "$SEED" "$run" "$tool" "$op" "$wall" "$user" "$sys" "$rss" >>"$JSON"
    say "run $run: $tool $op: ${wall}s wall, ${user}s user, ${sys}s sys, ${rss} KB"
}

size_record() {
    local what=$1 bytes=$2
    printf '{"date":"%s","size":"%s","seed":%s,"op":"size","what":"%s","bytes":%s}\n' \
        "$STAMP" "$SIZE" "$SEED" "$what" "$bytes" >>"$JSON"
}

svnadmin_load() {
    local run=$1
    rm -rf "$FSFS"
    svnadmin create --compatible-version 1.14 "$FSFS"
    measure "$run" svnadmin load "$DUMP" /dev/null svnadmin load -q "${SVNFLAGS[@]}" "$FSFS"
    measure "$run" svnadmin pack /dev/null /dev/null svnadmin pack -q "$FSFS"
}

svelto_load() {
    local run=$1
    rm -rf "$SVR"
    "$SV" admin create "$SVR" >/dev/null
    measure "$run" svelto load "$DUMP" /dev/null "$SV" admin load -q "$SVR"
}

svnadmin_dump() { measure "$1" svnadmin dump /dev/null /dev/null svnadmin dump -q "${DUMPFLAGS[@]}" "$FSFS"; }
svelto_dump() { measure "$1" svelto dump /dev/null /dev/null "$SV" admin dump -q "$SVR"; }

CMDS="svnadmin create --compatible-version 1.14 $FSFS
svnadmin load -q${SVNADMIN_FLAGS:+ $SVNADMIN_FLAGS} $FSFS < $DUMP
svnadmin pack -q $FSFS
svnadmin dump -q${DUMPFLAGS[*]:+ ${DUMPFLAGS[*]}} $FSFS > /dev/null
du -sb $FSFS/db"
if [[ "$SVELTO" != none ]]; then
    CMDS="$CMDS
$SV admin create $SVR
$SV admin load -q $SVR < $DUMP
$SV admin dump -q $SVR > /dev/null
du -sb $SVR"
fi

if ((LOADS == 0)); then
    [[ -f "$FSFS/db/current" ]] || die "LOADS=0 but $FSFS does not exist"
    [[ "$SVELTO" == none || -d "$SVR/db" ]] || die "LOADS=0 but $SVR does not exist"
fi
for run in $(seq 1 "$RUNS"); do
    # Alternate the order so that drift (thermal, background load) hits both tools.
    if ((run <= LOADS)); then
        if [[ "$SVELTO" == none ]]; then
            svnadmin_load "$run"
        elif ((run % 2 == 1)); then
            svnadmin_load "$run"
            svelto_load "$run"
        else
            svelto_load "$run"
            svnadmin_load "$run"
        fi
    fi
    if [[ "$SVELTO" == none ]]; then
        svnadmin_dump "$run"
    elif ((run % 2 == 1)); then
        svnadmin_dump "$run"
        svelto_dump "$run"
    else
        svelto_dump "$run"
        svnadmin_dump "$run"
    fi
done

FSFS_BYTES=$(du -sb "$FSFS/db" | cut -f1)
size_record dumpfile "$DUMP_BYTES"
size_record fsfs_packed_db "$FSFS_BYTES"
SV_BYTES=""
if [[ "$SVELTO" != none ]]; then
    SV_BYTES=$(du -sb "$SVR" | cut -f1)
    size_record svelto_repository "$SV_BYTES"
fi

# Untimed: both dumps must give back the generated dump byte for byte.
CHECK_LINE="not checked (CHECK=0)"
if [[ "$CHECK" != 0 ]]; then
    say "checking that the dumps equal the input (untimed)"
    if svnadmin dump -q "$FSFS" | cmp -s - "$DUMP"; then a=identical; else a=DIFFERENT; fi
    CHECK_LINE="svnadmin dump: $a"
    if [[ "$SVELTO" != none ]]; then
        if "$SV" admin dump -q "$SVR" | cmp -s - "$DUMP"; then b=identical; else b=DIFFERENT; fi
        CHECK_LINE="$CHECK_LINE; svelto admin dump: $b"
    fi
fi

# ----- the table ------------------------------------------------------------------

# stats TOOL OPS...: "median min max cpu_median rss_max" over runs of the sum of OPS
# (load+pack is the sum of the two per run; peak RSS is the larger of the two).
stats() {
    local tool=$1
    shift
    local ops=" $* "
    awk -F'\t' -v tool="$tool" -v ops="$ops" '
        $2 == tool && index(ops, " " $3 " ") {
            wall[$1] += $4; cpu[$1] += $5 + $6; if ($7 > rss[$1]) rss[$1] = $7; seen[$1] = 1
        }
        function median(a, n,   i, j, t, v) {
            n = 0; for (i in a) v[++n] = a[i]
            for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j > 0 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
            if (n == 0) return "";
            return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        END {
            n = 0; for (r in seen) n++
            if (n == 0) { print "- - - - -"; exit }
            mn = ""; mx = ""; m = 0
            for (r in seen) { if (mn == "" || wall[r] < mn) mn = wall[r]; if (mx == "" || wall[r] > mx) mx = wall[r]; if (rss[r] > m) m = rss[r] }
            printf "%.2f %.2f %.2f %.2f %.0f\n", median(wall), mn, mx, median(cpu), m / 1024
        }' "$RAW"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "–"; else printf "%.2f", a / b }'; }

row() {
    local op=$1 label=$2 s=$3
    local med mn mx cpu rss
    read -r med mn mx cpu rss <<<"$s"
    if [[ "$med" == - ]]; then
        printf '| %s | %s | not measured | – | – |' "$op" "$label"
    else
        printf '| %s | %s | %s (%s–%s) | %s | %s |' "$op" "$label" "$med" "$mn" "$mx" "$cpu" "$rss"
    fi
}

L=$(stats svnadmin load)
LP=$(stats svnadmin load pack)
D=$(stats svnadmin dump)
if [[ "$SVELTO" != none ]]; then
    SL=$(stats svelto load)
    SD=$(stats svelto dump)
else
    SL="- - - - -"
    SD="- - - - -"
fi
w() { echo "$1" | cut -d' ' -f1; }
c() { echo "$1" | cut -d' ' -f4; }

mb() { awk -v b="$1" 'BEGIN { if (b == "") print "–"; else printf "%.1f", b / 1e6 }'; }

{
    echo "# Admin tools: svnadmin vs svelto admin ($SIZE, seed $SEED)"
    echo
    echo "- Date: $STAMP"
    echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r)"
    echo "- Work directory: $WORK on $(df -PT "$WORK" | awk 'NR == 2 { print $2 " (" $1 ")" }')"
    echo "- Dumpfile: $DUMP, revisions 0-$DUMP_YOUNGEST, $(mb "$DUMP_BYTES") MB, md5 $DUMP_MD5 (\`svelto-gen $(gen_args "$SIZE") --seed $SEED\`)"
    echo "- svnadmin: $(svnadmin --version --quiet); svelto: $SVELTO_DESC"
    if [[ "$SVELTO" == none ]]; then order="svnadmin only"; else order="interleaved (odd runs svnadmin first, even runs svelto first)"; fi
    echo "- Runs: $RUNS ($LOADS with loads), $order; caches hot (the dumpfile is read once before the runs); each load starts from a fresh repository"
    echo "- Dumps equal the input: $CHECK_LINE"
    echo
    echo "Commands:"
    echo
    echo '```'
    echo "$CMDS"
    echo '```'
    echo
    echo "| operation | tool | wall s: median (min–max) | CPU s (user+sys): median | peak RSS MB | svelto/svnadmin: wall, CPU |"
    echo "|---|---|---|---|---|---|"
    echo "$(row load 'svnadmin load' "$L") |"
    echo "$(row load 'svnadmin load + pack' "$LP") |"
    echo "$(row load 'svelto admin load' "$SL") $(ratio "$(w "$SL")" "$(w "$LP")"), $(ratio "$(c "$SL")" "$(c "$LP")") (vs load + pack); $(ratio "$(w "$SL")" "$(w "$L")"), $(ratio "$(c "$SL")" "$(c "$L")") (vs load) |"
    echo "$(row dump 'svnadmin dump' "$D") |"
    echo "$(row dump 'svelto admin dump' "$SD") $(ratio "$(w "$SD")" "$(w "$D")"), $(ratio "$(c "$SD")" "$(c "$D")") |"
    echo
    echo "| size on disk | bytes | MB | svelto/svnadmin |"
    echo "|---|---|---|---|"
    echo "| dumpfile | $DUMP_BYTES | $(mb "$DUMP_BYTES") | |"
    echo "| FSFS db/, packed | $FSFS_BYTES | $(mb "$FSFS_BYTES") | |"
    if [[ -n "$SV_BYTES" ]]; then
        echo "| svelto repository | $SV_BYTES | $(mb "$SV_BYTES") | $(ratio "$SV_BYTES" "$FSFS_BYTES") |"
    else
        echo "| svelto repository | – | – | – |"
    fi
    echo
    echo "Raw runs: \`$(basename "$OUT_JSON")\`."
} | tee "$OUT_MD"
mv "$JSON" "$OUT_JSON"
say "wrote $OUT_MD and $OUT_JSON"

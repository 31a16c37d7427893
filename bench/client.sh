#!/usr/bin/env bash
# bench/client.sh REPO [RUNS]: the client's side. Stock `svn checkout` / `svn export` against
# `svelto checkout` / `svelto export` of REPO's trunk, from one `svnserve` on 127.0.0.1,
# alternating, RUNS times each (default 3); wall, user and system seconds of the client
# (/usr/bin/time), medians. Prints a Markdown table.
#
#   SVELTO=target/release/svelto bench/client.sh /path/to/fsfs-repo 3
set -euo pipefail
repo=$(readlink -f "$1")
runs=${2:-3}
svelto=$(readlink -f "${SVELTO:-target/release/svelto}")
work=$(mktemp -d)
trap 'kill "$(cat "$work/pid")" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$((20000 + RANDOM % 20000))
svnserve -d -r "$(dirname "$repo")" --listen-host 127.0.0.1 --listen-port "$port" \
    --pid-file "$work/pid"
sleep 0.5
url="svn://127.0.0.1:$port/$(basename "$repo")/trunk"

# one NAME CMD...: runs CMD in $work, appends "wall user sys" to $work/NAME.
one() {
    local name=$1; shift
    rm -rf "$work/out"
    (cd "$work" && /usr/bin/time -f "%e %U %S" -o "$work/t" "$@" >/dev/null)
    cat "$work/t" >>"$work/$name"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

one warmup svn export -q "$url" out
for _ in $(seq "$runs"); do
    one svn-checkout svn checkout -q "$url" out
    one svelto-checkout "$svelto" checkout -q "$url" out
    one svn-export svn export -q "$url" out
    one svelto-export "$svelto" export -q "$url" out
done
files=$(find "$work/out" -type f | wc -l)
echo "| operation | client | wall s | user s | sys s | CPU s |"
echo "|---|---|---|---|---|---|"
for op in checkout export; do
    for c in svn svelto; do
        f="$work/$c-$op"
        w=$(cut -d' ' -f1 "$f" | median)
        u=$(cut -d' ' -f2 "$f" | median)
        s=$(cut -d' ' -f3 "$f" | median)
        cpu=$(awk '{print $2 + $3}' "$f" | median)
        echo "| $op | $c | $w | $u | $s | $cpu |"
    done
done
echo
echo "($runs runs each, alternating; $files files in the export; svnserve 127.0.0.1;" \
    "$(date -u +%Y-%m-%d), $(nproc) CPUs)"

# shellcheck shell=bash
# Sourced by bench/*.sh: messages, and the tools every benchmark needs.
# The sourcing script sets NAME (for messages) first.

say() { echo "$NAME: $*" >&2; }
die() {
    say "$*"
    exit 1
}

# /usr/bin/time (GNU time, for peak RSS) from Debian's 'time' package when missing.
need_gnu_time() {
    [[ -x /usr/bin/time ]] && return 0
    say "/usr/bin/time is missing; installing Debian's 'time' package (apt-get install -y time)"
    if [[ $(id -u) -eq 0 ]]; then
        apt-get install -y time >&2 || { apt-get update >&2 && apt-get install -y time >&2; }
    else
        sudo apt-get install -y time >&2
    fi
    [[ -x /usr/bin/time ]] || die "could not install /usr/bin/time"
}

# Sizes: the generator's presets small, medium and large, and rN for the scaling runs:
# N revisions over a trunk of 2,000 files (r1000, r10000, r100000, ...).
valid_size() { [[ "$1" =~ ^(small|medium|large|r[1-9][0-9]*)$ ]]; }
gen_args() {
    case "$1" in
    r*) echo "--size medium --revisions ${1#r} --files 2000" ;;
    *) echo "--size $1" ;;
    esac
}

# ensure_dump GEN: writes $DUMP (the history of $SIZE and $SEED) with the generator GEN
# when it is missing.
ensure_dump() {
    [[ -s "$DUMP" ]] && return 0
    local t0 t1
    say "generating $DUMP (svelto-gen $(gen_args "$SIZE") --seed $SEED)"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2046 # gen_args is a list of words
    "$1" $(gen_args "$SIZE") --seed "$SEED" -o "$DUMP.tmp" || die "svelto-gen failed"
    mv "$DUMP.tmp" "$DUMP"
    t1=$(date +%s.%N)
    say "generated in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
}

# Results go to OUT_DIR (default bench/results/DAY/, DAY in UTC).
results_dir() {
    OUT_DIR=${OUT_DIR:-$BENCH/results/$(date -u +%Y-%m-%d)}
    mkdir -p "$OUT_DIR"
    OUT_DIR=$(cd "$OUT_DIR" && pwd)
}

# need_package COMMAND PACKAGE: installs Debian's PACKAGE when COMMAND is missing.
need_package() {
    command -v "$1" >/dev/null && return 0
    say "$1 is missing; installing Debian's '$2' package (apt-get install -y $2)"
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    "${sudo[@]}" apt-get install -y "$2" >&2 || { "${sudo[@]}" apt-get update >&2 && "${sudo[@]}" apt-get install -y "$2" >&2; }
    command -v "$1" >/dev/null || die "could not install $2"
}

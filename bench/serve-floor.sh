# shellcheck shell=bash
# Sourced by bench/serve.sh: the client's floor, the first request after a start, and the
# tables of both. Functions only; they use serve.sh's variables when called.
#
# The floor (FLOOR, default on with svelto): in the warm-up pass, each operation is run once
# through `svelto-floor record`, a proxy to svelto serve that files the bytes svelto sent
# under the requests the client made; in each hot pass, `svelto-floor replay` answers the
# same client command from memory with those bytes, no storage and no computation. The
# client's time against it is the least any server can make it take. It is a column named
# "floor" among the servers (hot only).
#
# The first request after a start (FIRST passes, default 1): before each operation (after its
# untimed preparation) the server is stopped and started again, the page cache left as it
# is: the server's own caches are empty, the OS's are warm.

FLOOR_LINE="not measured"
FIRST_LINE="not run (FIRST=0)"

# floor_build: the svelto-floor binary, built with svelto (FLOOR_BIN to use another).
floor_build() {
    [[ $FLOOR == no ]] && return 0
    if [[ -z "${FLOOR_BIN:-}" ]]; then
        command -v cargo >/dev/null || die "cargo not found (or set FLOOR_BIN, or FLOOR=no)"
        say "building svelto-floor (cargo build --release -p svelto-bench)"
        (cd "$ROOT" && cargo build --release -q -p svelto-bench) || die "building svelto-floor failed"
        FLOOR_BIN=$TARGET/release/svelto-floor
    fi
    [[ -x "$FLOOR_BIN" ]] || die "$FLOOR_BIN is missing"
    FLOOR_LINE="each operation answered from memory by \`svelto-floor replay\` with the bytes svelto serve sent when it was recorded (\`svelto-floor record\`, a proxy, in the warm-up pass): no storage, no computation; the client's own time"
}

# floor_start ARGS...: starts svelto-floor with ARGS as the "floor" server, once it listens.
floor_start() {
    local out=$SCRATCH/floor.out i port=""
    : >"$out"
    "$FLOOR_BIN" "$@" >"$out" 2>>"$SCRATCH/floor.stderr" &
    PID[floor]=$!
    LOG[floor]=$SCRATCH/floor.stderr
    for i in $(seq 1 600); do
        port=$(sed -n 's/^port \([0-9][0-9]*\)$/\1/p' "$out")
        [[ -n "$port" ]] && break
        kill -0 "${PID[floor]}" 2>/dev/null || break
        sleep 0.1
    done
    [[ -n "$port" ]] || { cat "$SCRATCH/floor.stderr" >&2; die "svelto-floor $* did not start"; }
    URL[floor]=svn://127.0.0.1:$port/$SIZE
}

floor_stop() {
    [[ -n "${PID[floor]:-}" ]] || return 0
    stop_server floor
    unset "PID[floor]"
}

# floor_prepare MODE RUN OP: the floor takes part in hot passes only. In the warm-up pass
# it records OP (untimed) and returns 1: nothing to measure; in the others it starts the
# replay of OP's recording.
floor_prepare() {
    local mode=$1 run=$2 op=$3 rec=$SCRATCH/floor-$3.rec up
    [[ $mode == hot ]] || return 1
    # A working copy made against an earlier floor names its port: start again.
    rm -rf "$SCRATCH/wc-floor" "$SCRATCH/wc-span-floor"
    if ((run == 0)); then
        up=${URL[svelto]#svn://127.0.0.1:}
        floor_start record "${up%%/*}" "$rec"
        op_before floor "$op"
        op_cmd floor "$op"
        client floor "${CMD[@]}" >/dev/null
        op_after floor "$op"
        floor_stop
        say "floor: recorded $op ($(du -m "$rec" | cut -f1) MB)"
        return 1
    fi
    [[ -s "$rec" ]] || die "no recording of $op for the floor ($rec)"
    floor_start replay "$rec"
}

# restart_server S: stops S and starts it again, the page cache left as it is.
restart_server() {
    stop_server "$1"
    start_server "$1"
}

# first_passes: FIRST passes of every operation but the concurrent ones, each against a
# server that just started (the floor is not restarted: it has no caches).
first_passes() {
    local run op s
    for run in $(seq 1 "$FIRST"); do
        say "first-request pass $run: each operation against a server just restarted, page cache warm"
        rotated "$run"
        for op in "${COLD_OPS[@]}"; do
            for s in "${ORDER[@]}"; do
                [[ $s == floor ]] || measure first "$run" "$s" "$op"
            done
        done
    done
    if ((FIRST > 0)); then
        FIRST_LINE="$FIRST pass(es) after the hot ones; before each operation (after its untimed preparation) the server is stopped and started again, the page cache left warm: the server's own caches are empty. The concurrent exports are not run"
    fi
}

first_tables() {
    ((FIRST > 0)) || return 0
    echo "## First request after a start: client wall seconds, median over $FIRST run(s), server restarted (page cache warm) before each"
    echo
    summary first
    echo
    echo "Server CPU seconds of that first request:"
    echo
    printf '| operation |'
    for s in "${SERVERS[@]}"; do [[ $s == floor ]] || printf ' %s |' "$s"; done
    echo
    printf '|---|'
    for s in "${SERVERS[@]}"; do [[ $s == floor ]] || printf -- '---|'; done
    echo
    local op
    for op in "${COLD_OPS[@]}"; do
        printf '| %s |' "$(describe "$op")"
        for s in "${SERVERS[@]}"; do [[ $s == floor ]] || printf ' %s |' "$(field first "$s" "$op" 5)"; done
        echo
    done
    echo
}

# floor_tables: every server's hot wall time against the floor's, and where the floor is
# the client's own CPU.
floor_tables() {
    [[ $FLOOR == no ]] && return 0
    local op s fw fc line
    echo "## Against the client's floor (hot): wall time ÷ the floor's"
    echo
    echo "The floor is the same client command answered from memory with the bytes svelto sent (no storage, no computation). Where the client's own CPU is 90% or more of the floor's wall time, the floor is the stock client's CPU and says so."
    echo
    printf '| operation | floor wall s | floor: client CPU s |'
    for s in "${SERVERS[@]}"; do [[ $s == floor ]] || printf ' %s ÷ floor |' "$s"; done
    echo
    printf '|---|---|---|'
    for s in "${SERVERS[@]}"; do [[ $s == floor ]] || printf -- '---|'; done
    echo
    for op in "${OPS[@]}"; do
        fw=$(field hot floor "$op" 1)
        fc=$(field hot floor "$op" 4)
        line="| $(describe "$op") | $fw | $fc$(awk -v w="$fw" -v c="$fc" 'BEGIN { if (w != "-" && w > 0 && c / w >= 0.9) print " (the floor is the client CPU)" }') |"
        for s in "${SERVERS[@]}"; do
            [[ $s == floor ]] && continue
            # A floor under the clock's 0.01 s resolution divides nothing: say so.
            if awk -v w="$fw" 'BEGIN { exit !(w != "-" && w + 0 == 0) }'; then
                line="$line n/a (floor under 0.01 s) |"
            else
                line="$line $(ratio "$(field hot "$s" "$op" 1)" "$fw") |"
            fi
        done
        echo "$line"
    done
    echo
}

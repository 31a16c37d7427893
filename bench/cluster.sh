#!/usr/bin/env bash
# bench/cluster.sh: svelto serve --cluster front ends against one machine, on 127.0.0.1.
#
# Starts three etcd members (Debian's etcd-server), SeaweedFS's weed (S3 gateway; built by
# scripts/s3-server into ~/.cache/svelto), `svelto admin create --cluster` of one
# repository, front ends A and B (`svelto serve --cluster`, each its own cache) and one
# single-machine `svelto serve` of a local repository. Then:
#   latency     COMMITS one-file commits (`svnmucc put`) through A, and as many to the one
#               machine, alternating: wall time of each svnmucc (median, p99)
#   visible     VISIBLE commits through A; after each acknowledgement (svnmucc's exit),
#               `svn info --show-item revision` through B until it names the new revision:
#               time from the acknowledgement to that answer, and the same `svn info`
#               against the one machine (the client's own floor)
#   failover    KILLS times: a commit through A (A then holds the writer lease), kill -9 of
#               A, then `svnmucc put` through B in a loop: time from the kill to B's first
#               acknowledged commit; A is restarted on its cache after each
#   reads       (with HISTORY=a dump file) `svelto admin load --cluster` of it into
#               repository hist through a loader's own cache (timed), a front end R
#               with its own cache (the loader's, R's and C's request-timeout
#               HISTORY_TIMEOUT if set), and the same
#               history on the one machine (HISTORY_REPO, a one-machine svelto repository
#               of it, copied; else `svelto admin load` of the dump, timed); then, after a
#               warm-up round, RUNS rounds of export, log -v, blame and checkout through
#               front end R and the one machine in turn: the serving process's user +
#               system CPU from /proc/PID/stat before and after each (medians), and the
#               wall time
#               (READ_PROTO=http: through R's and the one machine's --http-listen instead).
#               Before the warm-up the five files of both are dropped from the page cache
#               and read back in order, so that both are read from pages of the same kind
#               (pages a process wrote cost the kernel more to copy out than pages read in
#               ahead: R's cache is written by its catch-up, the one machine's a copy)
#   cold start  (with HISTORY) COLD times: a new front end C with an empty cache starts;
#               from its start to the end of its first `svn log -l1`, then its first
#               export (and a second one, warm)
# With SVELTO_BEFORE=another svelto binary, a third front end A0 runs it on its own
# repository of the same cluster (proj0: the writer lease is per repository) and the
# latency loop goes A0, A, one machine in turn: before and after side by side in one run.
# Front ends A and A0 log each publication's round trips (`log-timings = yes`); the
# table gives their counts and times per commit. etcd runs with ETCD_FLAGS (default the
# production settings of docs/cluster.md: --heartbeat-interval 50 --election-timeout 500)
# and the front ends with lease-ttl = LEASE_TTL (1). With PROBE=1 (the default) it then
# runs the in-process probe (crates/svelto-cli/tests/cluster/probe.rs: each commit's round
# trips through the backend API, acknowledgement on A to visibility on B without a
# client's start-up).
# Prints a markdown table and writes it to OUT_DIR/cluster.md (default
# bench/results/DAY/), raw times to OUT_DIR/cluster.raw.
#
# Environment: SVELTO_BIN (default target/debug/svelto, built by `cargo test -p
# svelto-cli --test cluster`: the test profile is optimized), SVELTO_BEFORE (none), WEED
# (default the newest ~/.cache/svelto/weed-*/weed), COMMITS (40), VISIBLE (40), KILLS (5),
# ETCD_FLAGS, LEASE_TTL (1), WRITER_IDLE_MS (the front ends' writer-idle-ms, 200), PROBE
# (1), SCRATCH (bench/work/cluster), HISTORY (none), HISTORY_REPO (none), RUNS (5), COLD
# (2), and the paths read: EXPORT_PATH (trunk), CHECKOUT_PATH (trunk), LOG_PATH (the
# root: `svn log -v` of every revision), BLAME_PATH (trunk/ChangeLog; the medium
# history's defaults), LOG_REPEAT (10) and BLAME_REPEAT (3) reads of a log or blame sample
# (one is a few 10 ms ticks of CPU), READS (the reads measured: export log blame
# checkout), IDLE (10: seconds of the idle CPU measure), PROFILE (a read to profile with
# perf after the warm-up; PROFILE_RUNS, PROFILE_HZ), CALLGRIND (1: R and the one machine run
# under valgrind's callgrind, instrumentation off until the reads; after the warm-up each
# read of READS is counted once per side, in instructions executed by the serving process
# (user space only; deterministic where CPU time on a shared VM is not), written to
# SCRATCH/callgrind-NAME.PID.N), SYSCALLS (1: after the warm-up each read of READS once
# per side under `perf stat -p`: the serving process's system calls and context switches,
# the kernel's share that callgrind does not see). COMMITS=0 VISIBLE=0 KILLS=0 PROBE=0 HISTORY=... runs the reads only.
set -euo pipefail

cd "$(dirname "$0")/.."
COMMITS=${COMMITS:-40}
VISIBLE=${VISIBLE:-40}
KILLS=${KILLS:-5}
ETCD_FLAGS=${ETCD_FLAGS:---heartbeat-interval 50 --election-timeout 500}
LEASE_TTL=${LEASE_TTL:-1}
WRITER_IDLE_MS=${WRITER_IDLE_MS:-200}
PROBE=${PROBE:-1}
SVELTO_BEFORE=${SVELTO_BEFORE:-}
HISTORY=${HISTORY:-}
HISTORY_REPO=${HISTORY_REPO:-}
RUNS=${RUNS:-5}
COLD=${COLD:-2}
EXPORT_PATH=${EXPORT_PATH-trunk}
CHECKOUT_PATH=${CHECKOUT_PATH-trunk}
LOG_PATH=${LOG_PATH-}
BLAME_PATH=${BLAME_PATH-trunk/ChangeLog}
HISTORY_TIMEOUT=${HISTORY_TIMEOUT:-}
LOG_REPEAT=${LOG_REPEAT:-10}
READS=${READS:-export log blame checkout}
READ_PROTO=${READ_PROTO:-svn}
IDLE=${IDLE:-10}
BLAME_REPEAT=${BLAME_REPEAT:-3}
SVELTO_BIN=${SVELTO_BIN:-$PWD/target/debug/svelto}
WEED=${WEED:-$(ls -d "$HOME"/.cache/svelto/weed-*/weed 2>/dev/null | tail -1)}
SCRATCH=${SCRATCH:-$PWD/bench/work/cluster}
OUT_DIR=${OUT_DIR:-$PWD/bench/results/$(date -u +%F)}
for tool in etcd svn svnmucc; do
    command -v "$tool" >/dev/null || { echo "bench/cluster.sh: $tool is missing (scripts/setup)" >&2; exit 1; }
done
[ -x "$SVELTO_BIN" ] || { echo "bench/cluster.sh: no $SVELTO_BIN (cargo test -p svelto-cli --test cluster --no-run)" >&2; exit 1; }
[ -x "$WEED" ] || { echo "bench/cluster.sh: no weed binary (scripts/s3-server)" >&2; exit 1; }

rm -rf "$SCRATCH"
mkdir -p "$SCRATCH" "$OUT_DIR"
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
wait_port() {
    for _ in $(seq 600); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "bench/cluster.sh: nothing listens on port $1 ($2)" >&2
    exit 1
}

# Three etcd members.
declare -a CPORT PPORT
for i in 0 1 2; do CPORT[$i]=$(free_port); PPORT[$i]=$(free_port); done
INITIAL="m0=http://127.0.0.1:${PPORT[0]},m1=http://127.0.0.1:${PPORT[1]},m2=http://127.0.0.1:${PPORT[2]}"
for i in 0 1 2; do
    etcd --name "m$i" --data-dir "$SCRATCH/etcd-$i" \
        --listen-client-urls "http://127.0.0.1:${CPORT[$i]}" --advertise-client-urls "http://127.0.0.1:${CPORT[$i]}" \
        --listen-peer-urls "http://127.0.0.1:${PPORT[$i]}" --initial-advertise-peer-urls "http://127.0.0.1:${PPORT[$i]}" \
        --initial-cluster "$INITIAL" --initial-cluster-state new --initial-cluster-token bench \
        $ETCD_FLAGS \
        --logger zap --log-outputs "$SCRATCH/etcd-$i.log" >/dev/null 2>&1 &
    PIDS+=($!)
done
for i in 0 1 2; do wait_port "${CPORT[$i]}" "etcd m$i"; done
ENDPOINTS="http://127.0.0.1:${CPORT[0]}, http://127.0.0.1:${CPORT[1]}, http://127.0.0.1:${CPORT[2]}"

# weed, as svelto-testkit's rig starts it.
W_MASTER=$(free_port); W_MGRPC=$(free_port); W_VOL=$(free_port); W_VGRPC=$(free_port)
W_FILER=$(free_port); W_FGRPC=$(free_port); W_S3=$(free_port); W_S3GRPC=$(free_port)
mkdir -p "$SCRATCH/weed/data" "$SCRATCH/weed/master"
cat >"$SCRATCH/weed/s3.json" <<EOF
{"identities":[{"name":"svelto","credentials":[{"accessKey":"bench-access","secretKey":"bench-secret-0123456789"}],"actions":["Admin","Read","List","Tagging","Write"]}]}
EOF
"$WEED" server -dir="$SCRATCH/weed/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -master.port="$W_MASTER" -master.port.grpc="$W_MGRPC" -master.volumeSizeLimitMB=64 \
    -master.dir="$SCRATCH/weed/master" -master.electionTimeout=1s \
    -volume.port="$W_VOL" -volume.port.grpc="$W_VGRPC" -volume.max=16 -volume.preStopSeconds=0 \
    -filer -filer.port="$W_FILER" -filer.port.grpc="$W_FGRPC" \
    -s3 -s3.port="$W_S3" -s3.port.grpc="$W_S3GRPC" -s3.port.iceberg=0 -s3.port.lance=0 \
    -s3.config="$SCRATCH/weed/s3.json" >"$SCRATCH/weed.log" 2>&1 &
PIDS+=($!)
for p in "$W_MASTER" "$W_VOL" "$W_FILER" "$W_S3"; do wait_port "$p" weed; done
for _ in $(seq 300); do
    printf 's3.bucket.create -name svelto -owner svelto\nexit\n' |
        "$WEED" shell -master="127.0.0.1:$W_MASTER.$W_MGRPC" -filer="127.0.0.1:$W_FILER.$W_FGRPC" >/dev/null 2>&1 || true
    curl -fs "http://127.0.0.1:$W_FILER/buckets/svelto/?limit=1" >/dev/null 2>&1 && break
    sleep 0.2
done

printf '[default]\naws_access_key_id = bench-access\naws_secret_access_key = bench-secret-0123456789\n' >"$SCRATCH/s3.credentials"
for id in a b a0 loader r c; do
    cat >"$SCRATCH/$id.cluster" <<EOF
etcd = $ENDPOINTS
cluster = bench
s3-endpoint = http://127.0.0.1:$W_S3
s3-bucket = svelto
s3-credentials = s3.credentials
cache = cache-$id
front-end = $id
lease-ttl = $LEASE_TTL
log-timings = yes
writer-idle-ms = $WRITER_IDLE_MS
EOF
    # HISTORY_TIMEOUT sets the history's front ends' request-timeout (none: the default,
    # 2 s, which a transfer extends by its size: docs/cluster.md, "Front ends").
    if [ -n "$HISTORY_TIMEOUT" ]; then
        case $id in loader | r | c) echo "request-timeout = $HISTORY_TIMEOUT" >>"$SCRATCH/$id.cluster" ;; esac
    fi
    for name in proj proj0 hist; do
        mkdir -p "$SCRATCH/root-$id/$name/conf"
        printf '[general]\nanon-access = write\n' >"$SCRATCH/root-$id/$name/conf/svnserve.conf"
    done
done
"$SVELTO_BIN" admin create --cluster "$SCRATCH/a.cluster" proj
"$SVELTO_BIN" admin create --cluster "$SCRATCH/a.cluster" proj0
mkdir -p "$SCRATCH/single"
"$SVELTO_BIN" admin create "$SCRATCH/single/proj"
printf '[general]\nanon-access = write\n' >"$SCRATCH/single/proj/conf/svnserve.conf"

declare -A PORT SPID
serve() { # serve NAME ROOT [FLAGS...] (BIN=another binary)
    local name=$1 root=$2
    shift 2
    local port
    port=$(free_port)
    local wrap=()
    if [ -n "${CALLGRIND:-}" ] && { [ "$name" = r ] || [ "$name" = single ]; }; then
        wrap=(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$SCRATCH/callgrind-$name.%p")
    fi
    "${wrap[@]}" "${BIN:-$SVELTO_BIN}" serve -d --foreground -r "$root" --listen-host 127.0.0.1 --listen-port "$port" \
        --log-file "$SCRATCH/serve-$name.log" "$@" >/dev/null 2>&1 &
    SPID[$name]=$!
    PIDS+=($!)
    PORT[$name]=$port
    wait_port "$port" "svelto serve $name"
}
serve a "$SCRATCH/root-a" --cluster "$SCRATCH/a.cluster"
serve b "$SCRATCH/root-b" --cluster "$SCRATCH/b.cluster"
serve single "$SCRATCH/single"
[ -z "$SVELTO_BEFORE" ] || BIN=$SVELTO_BEFORE serve a0 "$SCRATCH/root-a0" --cluster "$SCRATCH/a0.cluster"
url() { if [ "$1" = a0 ]; then echo "svn://127.0.0.1:${PORT[$1]}/proj0"; else echo "svn://127.0.0.1:${PORT[$1]}/proj"; fi; }

RAW="$OUT_DIR/cluster.raw"
: >"$RAW"
put() { # put URL NAME: one svnmucc put, its wall time in ms on stdout
    echo "$RANDOM $(date +%s%N)" >"$SCRATCH/text"
    local t0 t1
    t0=$(date +%s%N)
    svnmucc --non-interactive -m bench put "$SCRATCH/text" "$1/$2" >/dev/null
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000))
}
stats() { # stats < values in µs: "median / p99 ms (n)"
    sort -n | awk '{v[NR]=$1} END {m=v[int((NR+1)/2)]; p=v[int(NR*0.99+0.999)]; printf "%.1f / %.1f ms (n=%d)", m/1000, p/1000, NR}'
}

# Warm: the first PUTs of a new weed volume are slow.
for _ in 1 2 3; do put "$(url a)" warm.txt >/dev/null; put "$(url single)" warm.txt >/dev/null; done
[ -z "$SVELTO_BEFORE" ] || for _ in 1 2 3; do put "$(url a0)" warm.txt >/dev/null; done

for i in $(seq "$COMMITS"); do
    [ -z "$SVELTO_BEFORE" ] || echo "latency before $(put "$(url a0)" lat.txt)" >>"$RAW"
    echo "latency cluster $(put "$(url a)" lat.txt)" >>"$RAW"
    echo "latency single $(put "$(url single)" lat.txt)" >>"$RAW"
done
# The round trips of the latency loop's commits (A's and A0's timing lines so far).
for f in a a0; do
    if [ "$COMMITS" -gt 0 ] && [ -f "$SCRATCH/serve-$f.log" ]; then
        grep 'cluster timings:' "$SCRATCH/serve-$f.log" | tail -n "$COMMITS" >"$SCRATCH/timings-$f"
    fi
done

for i in $(seq "$VISIBLE"); do
    echo "visible $i" >"$SCRATCH/text"
    said=$(svnmucc --non-interactive -m visible put "$SCRATCH/text" "$(url a)/vis.txt")
    acked=$(date +%s%N)
    want=${said#r}
    want=${want%% *}
    polls=0
    while :; do
        polls=$((polls + 1))
        got=$(svn info --non-interactive --show-item revision "$(url b)")
        [ "$got" -ge "$want" ] && break
    done
    seen=$(date +%s%N)
    echo "visible cluster $(((seen - acked) / 1000)) $polls" >>"$RAW"
    t0=$(date +%s%N)
    svn info --non-interactive --show-item revision "$(url single)" >/dev/null
    t1=$(date +%s%N)
    echo "visible single-info $(((t1 - t0) / 1000))" >>"$RAW"
done
# (The acknowledgement is svnmucc's exit; the figure includes the `svn info` client's own
# start-up and connection, whose cost alone is the one-machine column. polls: how many
# `svn info` it took; 1 means the first read through B already saw the commit.)

for k in $(seq "$KILLS"); do
    put "$(url a)" kill.txt >/dev/null
    kill -9 "${SPID[a]}"
    killed=$(date +%s%N)
    wait "${SPID[a]}" 2>/dev/null || true
    while ! svnmucc --non-interactive -m "after kill $k" put "$SCRATCH/text" "$(url b)/kill.txt" >/dev/null 2>&1; do :; done
    accepted=$(date +%s%N)
    echo "failover cluster $(((accepted - killed) / 1000))" >>"$RAW"
    serve a "$SCRATCH/root-a" --cluster "$SCRATCH/a.cluster"
done

# --- Reads of a history on a warm front end against one machine, and a cold start.
cpu_ms() { # the user + system CPU of process PID so far, in ms (its threads included)
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) * 1000 / hz }' "/proc/$1/stat"
}
read_op() { # read_op OP URL: one sample of a read through URL (output discarded)
    local dest=$SCRATCH/read-out i
    rm -rf "$dest"
    case $1 in
    export) svn export -q --non-interactive "$2${EXPORT_PATH:+/$EXPORT_PATH}" "$dest" ;;
    log) for i in $(seq "$LOG_REPEAT"); do svn log -v --non-interactive "$2${LOG_PATH:+/$LOG_PATH}" >/dev/null; done ;;
    blame) for i in $(seq "$BLAME_REPEAT"); do svn blame --non-interactive "$2/$BLAME_PATH" >/dev/null; done ;;
    checkout) svn checkout -q --non-interactive "$2${CHECKOUT_PATH:+/$CHECKOUT_PATH}" "$dest" ;;
    esac
    rm -rf "$dest"
}
repeat_of() { case $1 in log) echo "$LOG_REPEAT" ;; blame) echo "$BLAME_REPEAT" ;; *) echo 1 ;; esac; }
reads_and_cold_start() {
    local t0 t1 hurl surl op run name c0 c1 w0 w1 k
    # The cluster's copy: loaded through the loader's cache, so that R starts cold.
    t0=$(date +%s%N)
    "$SVELTO_BIN" admin create --cluster "$SCRATCH/loader.cluster" hist
    "$SVELTO_BIN" admin load -q --cluster "$SCRATCH/loader.cluster" hist -F "$HISTORY" 2>"$SCRATCH/load-cluster.err" ||
        { cat "$SCRATCH/load-cluster.err" >&2; exit 1; }
    t1=$(date +%s%N)
    echo "load cluster $(((t1 - t0) / 1000000))" >>"$RAW"
    # The one machine's copy.
    t0=$(date +%s%N)
    if [ -n "$HISTORY_REPO" ]; then
        cp -a "$HISTORY_REPO" "$SCRATCH/single/hist"
        t1=$(date +%s%N)
        echo "copy single $(((t1 - t0) / 1000000))" >>"$RAW"
    else
        "$SVELTO_BIN" admin create "$SCRATCH/single/hist"
        "$SVELTO_BIN" admin load -q "$SCRATCH/single/hist" -F "$HISTORY" 2>"$SCRATCH/load-single.err" ||
            { cat "$SCRATCH/load-single.err" >&2; exit 1; }
        t1=$(date +%s%N)
        echo "load single $(((t1 - t0) / 1000000))" >>"$RAW"
    fi
    printf '[general]\nanon-access = read\n' >"$SCRATCH/single/hist/conf/svnserve.conf"
    if [ "$READ_PROTO" = http ]; then
        local rh sh
        rh=$(free_port) sh=$(free_port)
        serve r "$SCRATCH/root-r" --cluster "$SCRATCH/r.cluster" --http-listen "127.0.0.1:$rh"
        kill -9 "${SPID[single]}"
        wait "${SPID[single]}" 2>/dev/null || true
        serve single "$SCRATCH/single" --http-listen "127.0.0.1:$sh"
        wait_port "$rh" "R's HTTP"
        wait_port "$sh" "the one machine's HTTP"
        hurl="http://127.0.0.1:$rh/hist"
        surl="http://127.0.0.1:$sh/hist"
    else
        serve r "$SCRATCH/root-r" --cluster "$SCRATCH/r.cluster"
        hurl="svn://127.0.0.1:${PORT[r]}/hist"
        surl="svn://127.0.0.1:${PORT[single]}/hist"
    fi
    [ "$(svn info --non-interactive --show-item revision "$hurl")" = "$(svn info --non-interactive --show-item revision "$surl")" ] ||
        { echo "bench/cluster.sh: the cluster's hist and the one machine's differ in HEAD" >&2; exit 1; }
    # The same kind of pages on both (above): dropped, then read in order.
    svn info --non-interactive "$hurl" >/dev/null
    python3 - "$SCRATCH"/cache-r/hist/db/* "$SCRATCH"/single/hist/db/* <<'PY'
import os, sys
for path in sys.argv[1:]:
    if not os.path.isfile(path):
        continue
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    while os.read(fd, 1 << 20):
        pass
    os.close(fd)
PY
    # Warm-up: a round of every read on both (R's cache fills, both page caches fill).
    for op in $READS; do read_op "$op" "$hurl"; read_op "$op" "$surl"; done
    # PROFILE=OP: perf record (call graphs, kernel and user) of each serving process over
    # PROFILE_RUNS (5) reads OP, written to SCRATCH/perf-r.data and SCRATCH/perf-single.data.
    if [ -n "${PROFILE:-}" ]; then
        local pp
        for name in r single; do
            local u=$hurl
            [ "$name" = r ] || u=$surl
            perf record -q -F "${PROFILE_HZ:-1999}" -g -p "${SPID[$name]}" \
                -o "$SCRATCH/perf-$name.data" 2>"$SCRATCH/perf-$name.err" &
            pp=$!
            sleep 1
            for run in $(seq "${PROFILE_RUNS:-5}"); do read_op "$PROFILE" "$u"; done
            kill -INT "$pp"
            wait "$pp" 2>/dev/null || true
        done
    fi
    # CALLGRIND=1: each read counted once per side, in instructions.
    if [ -n "${CALLGRIND:-}" ]; then
        for op in $READS; do
            for name in r single; do
                local u=$hurl pid=${SPID[$name]}
                [ "$name" = r ] || u=$surl
                callgrind_control -i on "$pid" >/dev/null
                callgrind_control -z "$pid" >/dev/null
                read_op "$op" "$u"
                callgrind_control -d "$op" "$pid" >/dev/null
                callgrind_control -i off "$pid" >/dev/null
                local dumped
                dumped=$(ls -t "$SCRATCH/callgrind-$name.$pid".* | head -1)
                echo "instructions $op $name $(awk '/^summary:/{print $2}' "$dumped") $(repeat_of "$op")" >>"$RAW"
            done
        done
    fi
    # SYSCALLS=1: each read once per side under perf stat.
    if [ -n "${SYSCALLS:-}" ]; then
        for op in $READS; do
            for name in r single; do
                local u=$hurl pp
                [ "$name" = r ] || u=$surl
                perf stat -x, -e raw_syscalls:sys_enter,context-switches -p "${SPID[$name]}" \
                    -o "$SCRATCH/perfstat-$op-$name.csv" 2>/dev/null &
                pp=$!
                sleep 0.5
                read_op "$op" "$u"
                kill -INT "$pp"
                wait "$pp" 2>/dev/null || true
                echo "syscalls $op $name $(awk -F, '$3=="raw_syscalls:sys_enter"{print $1}' "$SCRATCH/perfstat-$op-$name.csv") $(awk -F, '$3=="context-switches"{print $1}' "$SCRATCH/perfstat-$op-$name.csv")" >>"$RAW"
            done
        done
    fi
    # Idle CPU of each serving process over IDLE s (R's member lease keep-alives).
    c0=$(cpu_ms "${SPID[r]}") w0=$(cpu_ms "${SPID[single]}")
    sleep "$IDLE"
    echo "idle cluster $(($(cpu_ms "${SPID[r]}") - c0))" >>"$RAW"
    echo "idle single $(($(cpu_ms "${SPID[single]}") - w0))" >>"$RAW"
    for run in $(seq "$RUNS"); do
        for op in $READS; do
            for name in r single; do
                local u=$hurl
                [ "$name" = r ] || u=$surl
                c0=$(cpu_ms "${SPID[$name]}")
                w0=$(date +%s%N)
                read_op "$op" "$u"
                w1=$(date +%s%N)
                c1=$(cpu_ms "${SPID[$name]}")
                echo "read $op $name $((c1 - c0)) $(((w1 - w0) / 1000000)) $(repeat_of "$op")" >>"$RAW"
            done
        done
    done
    # Cold start: a new front end C, its cache empty, started for each run.
    for k in $(seq "$COLD"); do
        rm -rf "$SCRATCH/cache-c"
        t0=$(date +%s%N)
        serve c "$SCRATCH/root-c" --cluster "$SCRATCH/c.cluster"
        local curl_="svn://127.0.0.1:${PORT[c]}/hist"
        t1=$(date +%s%N)
        echo "cold listen $(((t1 - t0) / 1000000))" >>"$RAW"
        svn log -l1 --non-interactive "$curl_" >/dev/null
        t1=$(date +%s%N)
        echo "cold log $(((t1 - t0) / 1000000))" >>"$RAW"
        w0=$(date +%s%N)
        read_op export "$curl_"
        w1=$(date +%s%N)
        echo "cold export $(((w1 - w0) / 1000000)) $(((w1 - t0) / 1000000))" >>"$RAW"
        w0=$(date +%s%N)
        read_op export "$curl_"
        w1=$(date +%s%N)
        echo "cold export-again $(((w1 - w0) / 1000000))" >>"$RAW"
        echo "cold cache-bytes $(du -sb "$SCRATCH/cache-c" | cut -f1)" >>"$RAW"
        kill -9 "${SPID[c]}"
        wait "${SPID[c]}" 2>/dev/null || true
    done
    reads_table >"$SCRATCH/reads.md"
    [ -z "${CALLGRIND:-}" ] || instructions_table >>"$SCRATCH/reads.md"
    [ -z "${SYSCALLS:-}" ] || syscalls_table >>"$SCRATCH/reads.md"
}
syscalls_table() {
    echo
    echo "System calls and context switches of the serving process per read (perf stat -p; one sample each, with the 0.5 s before the read: R's keep-alives):"
    echo
    echo "| read | front end R syscalls | one machine syscalls | R / one machine | R context switches | one machine context switches |"
    echo "|---|---|---|---|---|---|"
    awk '$1=="syscalls" { n[$2","$3]=$4; c[$2","$3]=$5; ops[$2]=1 }
         END { for (op in ops) printf "| %s | %d | %d | %.3f | %d | %d |\n", op, n[op",r"], n[op",single"], n[op",r"]/n[op",single"], c[op",r"], c[op",single"] }' "$RAW"
}
instructions_table() {
    echo
    echo "Instructions executed by the serving process per read (callgrind, user space; one sample each):"
    echo
    echo "| read | front end R | one machine | R / one machine |"
    echo "|---|---|---|---|"
    awk '$1=="instructions" { n[$2","$3]=$4; ops[$2]=1 }
         END { for (op in ops) printf "| %s | %d | %d | %.3f |\n", op, n[op",r"], n[op",single"], n[op",r"]/n[op",single"] }' "$RAW"
}
reads_table() {
    local revs
    revs=$(svn info --non-interactive --show-item revision "svn://127.0.0.1:${PORT[single]}/hist")
    echo
    echo "Reads over $READ_PROTO://; both repositories' files dropped from the page cache and read back in order before the warm-up."
    echo
    echo "### Reads of HISTORY=$HISTORY (r$revs) on a warm front end against one machine"
    echo
    echo "\`svelto admin load --cluster\` of the dump: $(awk '$1=="load"&&$2=="cluster"{printf "%.1f s", $3/1000}' "$RAW"); the one machine's: $(awk '$1=="load"&&$2=="single"{printf "svelto admin load %.1f s", $3/1000} $1=="copy"{printf "a copy of %s", "'"$HISTORY_REPO"'"}' "$RAW"). Idle CPU over $IDLE s: front end R $(awk '$1=="idle"&&$2=="cluster"{print $3}' "$RAW") ms, the one machine $(awk '$1=="idle"&&$2=="single"{print $3}' "$RAW") ms."
    echo
    echo "Server CPU (user + system of the serving process, /proc/PID/stat, $(getconf CLK_TCK) ticks/s) per read, median of $RUNS samples after a warm-up round (a sample: one export or checkout, $LOG_REPEAT logs, $BLAME_REPEAT blames), and the client's wall time:"
    echo
    echo "| read | front end R CPU ms, median (min-max), mean | one machine CPU ms, median (min-max), mean | R / one machine, medians; means | wall R / one machine, median s |"
    echo "|---|---|---|---|---|"
    python3 - "$RAW" "export ${EXPORT_PATH:-/}" "log -v ${LOG_PATH:-/}" "blame $BLAME_PATH" "checkout ${CHECKOUT_PATH:-/}" <<'PY'
import sys, collections
cpu, wall = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "read":
        n = int(f[5]) if len(f) > 5 else 1  # reads per sample
        cpu[(f[1], f[2])].append(float(f[3]) / n)
        wall[(f[1], f[2])].append(float(f[4]) / 1000 / n)
med = lambda v: sorted(v)[(len(v) - 1) // 2]
for op, label in zip(["export", "log", "blame", "checkout"], sys.argv[2:]):
    a, s = cpu[(op, "r")], cpu[(op, "single")]
    if not a or not s:
        continue
    mean = lambda v: sum(v) / len(v)
    ratio = f"{med(a) / med(s):.3f}; {mean(a) / mean(s):.3f}" if med(s) and mean(s) else "-"
    print(f"| {label} | {med(a):.0f} ({min(a):.0f}-{max(a):.0f}), {mean(a):.0f} | {med(s):.0f} ({min(s):.0f}-{max(s):.0f}), {mean(s):.0f} | {ratio} | {med(wall[(op, 'r')]):.2f} / {med(wall[(op, 'single')]):.2f} |")
PY
    echo
    echo "A new front end C with an empty cache (started $COLD times, a new cache each): from its start to"
    echo
    echo "| run | listening s | first \`svn log -l1\` answered s | first export of ${EXPORT_PATH:-/} s (from start) | second export s | cache bytes |"
    echo "|---|---|---|---|---|---|"
    python3 - "$RAW" <<'PY'
import sys
rows, cur = [], None
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] != "cold":
        continue
    if f[1] == "listen":
        cur = {"listen": int(f[2])}
        rows.append(cur)
    elif f[1] == "export":
        cur["export"], cur["export_from_start"] = int(f[2]), int(f[3])
    else:
        cur[f[1]] = int(f[2])
for i, r in enumerate(rows, 1):
    print(f"| {i} | {r['listen'] / 1000:.2f} | {r['log'] / 1000:.2f} | {r['export'] / 1000:.2f} ({r['export_from_start'] / 1000:.2f}) | {r['export-again'] / 1000:.2f} | {r['cache-bytes']:,} |")
PY
}

if [ -n "$HISTORY" ]; then
    reads_and_cold_start
fi

LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
{
    echo "## bench/cluster.sh, $(date -u '+%F %H:%M UTC'), $(nproc) cores, load $LOAD"
    echo
    echo "svelto: $SVELTO_BIN; three etcd members ($(etcd --version | head -1)), weed $(basename "$(dirname "$WEED")"), all on 127.0.0.1."
    echo
    if [ $((COMMITS + VISIBLE + KILLS)) -gt 0 ]; then
        echo "| measure | cluster (front end A, B) | one machine |"
        echo "|---|---|---|"
        echo "| one-file commit, svnmucc put wall, median / p99 | $(awk '$1=="latency"&&$2=="cluster"{print $3}' "$RAW" | stats) | $(awk '$1=="latency"&&$2=="single"{print $3}' "$RAW" | stats) |"
        echo "| acknowledged on A to seen by svn info through B, median / p99 | $(awk '$1=="visible"&&$2=="cluster"{print $3}' "$RAW" | stats) | one svn info: $(awk '$1=="visible"&&$2=="single-info"{print $3}' "$RAW" | stats) |"
        echo "| svn info polls through B until it saw the commit, max | $(awk '$1=="visible"&&$2=="cluster"{print $4}' "$RAW" | sort -n | tail -1) | - |"
        echo "| kill -9 of the writer (A) to B's next acknowledged commit, median / max | $(awk '$1=="failover"{print $3}' "$RAW" | sort -n | awk '{v[NR]=$1} END {printf "%.2f / %.2f s (n=%d)", v[int((NR+1)/2)]/1e6, v[NR]/1e6, NR}') | - |"
        if [ -n "$SVELTO_BEFORE" ]; then
            echo "| one-file commit through A0 ($SVELTO_BEFORE), median / p99 | $(awk '$1=="latency"&&$2=="before"{print $3}' "$RAW" | stats) | - |"
        fi
    fi
    [ ! -s "$SCRATCH/reads.md" ] || cat "$SCRATCH/reads.md"
    if [ "$COMMITS" -gt 0 ]; then
        echo
        echo "Round trips per commit of the latency loop (the front end's \`log-timings\` lines: mean count, median time per commit):"
        echo
        echo "| front end | head reads | lock reads | campaigns | resigns | PUTs | head txns | all round trips, median ms |"
        echo "|---|---|---|---|---|---|---|---|"
        for f in a a0; do
            [ -s "$SCRATCH/timings-$f" ] || continue
            python3 - "$SCRATCH/timings-$f" "$f" <<'PY'
import re, sys
kinds = ["head reads", "lock reads", "campaigns", "resigns", "PUTs", "head txns"]
rows = []
for line in open(sys.argv[1]):
    since = line.split("since then: ", 1)[1].split(";", 1)[0]
    got = {k: (0, 0.0) for k in kinds}
    for n, kind, t in re.findall(r"(\d+) ([a-zA-Z ]+?) ([0-9.]+) ms", since):
        got[kind.strip()] = (int(n), float(t))
    rows.append(got)
def cell(k):
    counts = [r[k][0] for r in rows]
    times = sorted(r[k][1] for r in rows)
    return f"{sum(counts) / len(rows):.2f} x, {times[(len(times) - 1) // 2]:.1f} ms"
total = sorted(sum(r[k][1] for k in kinds) for r in rows)
print(f"| {sys.argv[2]} | " + " | ".join(cell(k) for k in kinds) + f" | {total[(len(total) - 1) // 2]:.1f} (n={len(rows)}) |")
PY
        done
    fi
} | tee "$OUT_DIR/cluster.md"

if [ "$PROBE" = 1 ]; then
    {
        echo
        echo "In-process probe (\`cargo test -p svelto-cli --test cluster -- --ignored --nocapture probe\`):"
        echo
        cargo test -q -p svelto-cli --test cluster -- --ignored --nocapture probe 2>/dev/null | grep -E '^\||^probe|^head transactions'
    } | tee -a "$OUT_DIR/cluster.md"
fi

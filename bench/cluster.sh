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
# (1), SCRATCH (bench/work/cluster).
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
for id in a b a0; do
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
    for name in proj proj0; do
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
    "${BIN:-$SVELTO_BIN}" serve -d --foreground -r "$root" --listen-host 127.0.0.1 --listen-port "$port" \
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
    if [ -f "$SCRATCH/serve-$f.log" ]; then
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

LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
{
    echo "## bench/cluster.sh, $(date -u '+%F %H:%M UTC'), $(nproc) cores, load $LOAD"
    echo
    echo "svelto: $SVELTO_BIN; three etcd members ($(etcd --version | head -1)), weed $(basename "$(dirname "$WEED")"), all on 127.0.0.1."
    echo
    echo "| measure | cluster (front end A, B) | one machine |"
    echo "|---|---|---|"
    echo "| one-file commit, svnmucc put wall, median / p99 | $(awk '$1=="latency"&&$2=="cluster"{print $3}' "$RAW" | stats) | $(awk '$1=="latency"&&$2=="single"{print $3}' "$RAW" | stats) |"
    echo "| acknowledged on A to seen by svn info through B, median / p99 | $(awk '$1=="visible"&&$2=="cluster"{print $3}' "$RAW" | stats) | one svn info: $(awk '$1=="visible"&&$2=="single-info"{print $3}' "$RAW" | stats) |"
    echo "| svn info polls through B until it saw the commit, max | $(awk '$1=="visible"&&$2=="cluster"{print $4}' "$RAW" | sort -n | tail -1) | - |"
    echo "| kill -9 of the writer (A) to B's next acknowledged commit, median / max | $(awk '$1=="failover"{print $3}' "$RAW" | sort -n | awk '{v[NR]=$1} END {printf "%.2f / %.2f s (n=%d)", v[int((NR+1)/2)]/1e6, v[NR]/1e6, NR}') | - |"
    if [ -n "$SVELTO_BEFORE" ]; then
        echo "| one-file commit through A0 ($SVELTO_BEFORE), median / p99 | $(awk '$1=="latency"&&$2=="before"{print $3}' "$RAW" | stats) | - |"
    fi
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
} | tee "$OUT_DIR/cluster.md"

if [ "$PROBE" = 1 ]; then
    {
        echo
        echo "In-process probe (\`cargo test -p svelto-cli --test cluster -- --ignored --nocapture probe\`):"
        echo
        cargo test -q -p svelto-cli --test cluster -- --ignored --nocapture probe 2>/dev/null | grep -E '^\||^probe|^head transactions'
    } | tee -a "$OUT_DIR/cluster.md"
fi

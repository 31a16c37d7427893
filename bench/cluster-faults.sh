#!/usr/bin/env bash
# bench/cluster-faults.sh: the cluster's fault suite (issue 35, "Done means"), on 127.0.0.1.
# Long (KILLS=100 takes 10-20 minutes): not part of `cargo test`, which runs a ten-kill version
# with the same invariants (crates/svelto-cli/tests/cluster/faults.rs, about 50 s).
#
# Starts three etcd members (Debian's etcd-server, with the settings docs/cluster.md gives
# for production on one LAN: --heartbeat-interval 50 --election-timeout 500), SeaweedFS's
# weed (S3 gateway; scripts/s3-server builds it into ~/.cache/svelto), repository `proj`
# (`svelto admin create --cluster`) and three front ends fe0 fe1 fe2 (`svelto serve
# --cluster`, lease-ttl = 1, each its own cache). Then:
#   committers  COMMITTERS loops of `svnmucc put` (committer c, attempt i: file c$c.txt
#               holding "c$c i$i", log message "c$c-$i"), each through the front ends in
#               turn; an attempt that exits 0 is an acknowledged commit, recorded with the
#               revision svnmucc printed
#   changers    CHANGERS loops (changer k, attempt n) of `svn propset --revprop -r REV
#               test:changer-k "k$k-n$n"` through the front ends in turn, REV an
#               acknowledged commit's revision (half the time one of the 3 newest, so the
#               youngest revision's segment is often the one replaced, else any); each
#               front end's pre-revprop-change hook allows it; exit 0 is an acknowledged
#               change
#   reader      a loop of `svn log -v -r HEAD` and `svn cat` of the newest file through a
#               random front end: any answer naming corruption or a checksum is a half
#               revision seen
#   kills       KILLS times: kill -9 of one component, chosen in turn from: the front end
#               holding the writer lease (etcd's writer key), a random front end, the etcd
#               leader, a random component (any front end, etcd member or weed), and weed
#               every WEED_EVERY-th kill; it stays down 0.1-1.0 s, is restarted on its data
#               and ports, and the next kill follows 0.5-2.0 s after it listens again
# Then the committers stop, every component is up, and the checks run:
#   - one commit through each front end is accepted; every front end names the same HEAD
#   - `svnrdump dump` through each front end: the three dumps are byte-identical; one is
#     loaded by `svnadmin load` into a local repository (Subversion reads every revision)
#   - every acknowledged commit is there: at the revision svnmucc printed, the log message
#     is its own and `svnlook cat` of its file gives its text; no message is in two
#     revisions
#   - `svelto admin verify` of every front end's cache directory passes
#   - one revision property change through each front end is accepted; `svn log --xml
#     --with-all-revprops` through the three front ends gives the same revision
#     properties; for every changer k and revision r it changed, test:changer-k of r
#     (through each front end and in the loaded dump) is the value of the last
#     acknowledged attempt on r, or of a later attempt whose client saw an error (its
#     change may have been published before the error: applied, unacknowledged); with
#     no acknowledged attempt, absent or any attempt's value
# Prints a markdown report and writes it to OUT_DIR/cluster-faults.md (default
# bench/results/DAY/), the raw records to OUT_DIR/cluster-faults.raw/. Exits non-zero
# when a check fails.
#
# Environment: SVELTO_BIN (default target/debug/svelto), WEED (default the newest
# ~/.cache/svelto/weed-*/weed), KILLS (100), COMMITTERS (4), CHANGERS (2), WEED_EVERY (8), SEED
# (random), SCRATCH (bench/work/cluster-faults).
set -uo pipefail

cd "$(dirname "$0")/.."
KILLS=${KILLS:-100}
COMMITTERS=${COMMITTERS:-4}
CHANGERS=${CHANGERS:-2}
WEED_EVERY=${WEED_EVERY:-8}
SEED=${SEED:-$$}
RANDOM=$SEED
SVELTO_BIN=${SVELTO_BIN:-$PWD/target/debug/svelto}
WEED=${WEED:-$(ls -d "$HOME"/.cache/svelto/weed-*/weed 2>/dev/null | tail -1)}
SCRATCH=${SCRATCH:-$PWD/bench/work/cluster-faults}
OUT_DIR=${OUT_DIR:-$PWD/bench/results/$(date -u +%F)}
for tool in etcd svn svnmucc svnrdump svnadmin svnlook curl python3; do
    command -v "$tool" >/dev/null || { echo "bench/cluster-faults.sh: $tool is missing (scripts/setup)" >&2; exit 1; }
done
[ -x "$SVELTO_BIN" ] || { echo "bench/cluster-faults.sh: no $SVELTO_BIN (cargo build -p svelto-cli)" >&2; exit 1; }
[ -x "$WEED" ] || { echo "bench/cluster-faults.sh: no weed binary (scripts/s3-server)" >&2; exit 1; }

rm -rf "$SCRATCH"
mkdir -p "$SCRATCH/raw" "$OUT_DIR"
RAW=$SCRATCH/raw
declare -A PID
BG=()
cleanup() {
    touch "$SCRATCH/stop"
    for p in "${PID[@]}" "${BG[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ns() { date +%s%N; }
log() { echo "$(date -u +%T) $*" | tee -a "$RAW/events"; }
wait_port() { # wait_port PORT WHAT [SECONDS]
    local tries=$((${3:-60} * 10))
    for _ in $(seq "$tries"); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    log "FAIL nothing listens on port $1 ($2)"
    return 1
}
pause() { # pause MIN_MS MAX_MS
    sleep "$(python3 -c "import random; print(random.uniform($1, $2) / 1000)")"
}

# --- etcd: three members.
declare -a CPORT PPORT
for i in 0 1 2; do CPORT[$i]=$(free_port); PPORT[$i]=$(free_port); done
INITIAL="m0=http://127.0.0.1:${PPORT[0]},m1=http://127.0.0.1:${PPORT[1]},m2=http://127.0.0.1:${PPORT[2]}"
start_etcd() {
    local i=$1
    etcd --name "m$i" --data-dir "$SCRATCH/etcd-$i" \
        --listen-client-urls "http://127.0.0.1:${CPORT[$i]}" --advertise-client-urls "http://127.0.0.1:${CPORT[$i]}" \
        --listen-peer-urls "http://127.0.0.1:${PPORT[$i]}" --initial-advertise-peer-urls "http://127.0.0.1:${PPORT[$i]}" \
        --initial-cluster "$INITIAL" --initial-cluster-state new --initial-cluster-token faults \
        --heartbeat-interval 50 --election-timeout 500 \
        --logger zap --log-outputs "$SCRATCH/etcd-$i.log" >/dev/null 2>&1 &
    PID[etcd$i]=$!
}
for i in 0 1 2; do start_etcd "$i"; done
for i in 0 1 2; do wait_port "${CPORT[$i]}" "etcd m$i" || exit 1; done
ENDPOINTS="http://127.0.0.1:${CPORT[0]}, http://127.0.0.1:${CPORT[1]}, http://127.0.0.1:${CPORT[2]}"

etcd_leader() { # the index of the member etcd says leads, or nothing
    local i status
    for i in 0 1 2; do
        status=$(curl -s -m 1 -X POST "http://127.0.0.1:${CPORT[$i]}/v3/maintenance/status" -d '{}' 2>/dev/null) || continue
        if [ -n "$status" ] && python3 -c 'import json,sys; s=json.loads(sys.argv[1]); sys.exit(0 if s["header"]["member_id"] == s["leader"] else 1)' "$status" 2>/dev/null; then
            echo "$i"
            return
        fi
    done
}
writer_front_end() { # the front end etcd's writer key names, or nothing
    local key i out
    key=$(printf '%s' /svelto/faults/repos/proj/writer | base64 -w0)
    for i in 0 1 2; do
        out=$(curl -s -m 1 -X POST "http://127.0.0.1:${CPORT[$i]}/v3/kv/range" -d "{\"key\":\"$key\"}" 2>/dev/null) || continue
        [ -n "$out" ] || continue
        python3 -c 'import base64,json,sys; k=json.loads(sys.argv[1]).get("kvs"); print(base64.b64decode(k[0]["value"]).decode() if k else "")' "$out" 2>/dev/null
        return
    done
}

# --- weed, as svelto-testkit's rig starts it.
W_MASTER=$(free_port); W_MGRPC=$(free_port); W_VOL=$(free_port); W_VGRPC=$(free_port)
W_FILER=$(free_port); W_FGRPC=$(free_port); W_S3=$(free_port); W_S3GRPC=$(free_port)
mkdir -p "$SCRATCH/weed/data" "$SCRATCH/weed/master"
cat >"$SCRATCH/weed/s3.json" <<EOF
{"identities":[{"name":"svelto","credentials":[{"accessKey":"faults-access","secretKey":"faults-secret-0123456789"}],"actions":["Admin","Read","List","Tagging","Write"]}]}
EOF
start_weed() {
    "$WEED" server -dir="$SCRATCH/weed/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
        -master.port="$W_MASTER" -master.port.grpc="$W_MGRPC" -master.volumeSizeLimitMB=64 \
        -master.dir="$SCRATCH/weed/master" -master.electionTimeout=1s \
        -volume.port="$W_VOL" -volume.port.grpc="$W_VGRPC" -volume.max=16 -volume.preStopSeconds=0 \
        -filer -filer.port="$W_FILER" -filer.port.grpc="$W_FGRPC" \
        -s3 -s3.port="$W_S3" -s3.port.grpc="$W_S3GRPC" -s3.port.iceberg=0 -s3.port.lance=0 \
        -s3.config="$SCRATCH/weed/s3.json" >>"$SCRATCH/weed.log" 2>&1 &
    PID[weed]=$!
}
wait_weed() { for p in "$W_MASTER" "$W_VOL" "$W_FILER" "$W_S3"; do wait_port "$p" weed 120 || return 1; done; }
start_weed
wait_weed || exit 1
for _ in $(seq 300); do
    printf 's3.bucket.create -name svelto -owner svelto\nexit\n' |
        "$WEED" shell -master="127.0.0.1:$W_MASTER.$W_MGRPC" -filer="127.0.0.1:$W_FILER.$W_FGRPC" >/dev/null 2>&1 || true
    curl -fs "http://127.0.0.1:$W_FILER/buckets/svelto/?limit=1" >/dev/null 2>&1 && break
    sleep 0.2
done

# --- the repository and three front ends.
printf '[default]\naws_access_key_id = faults-access\naws_secret_access_key = faults-secret-0123456789\n' >"$SCRATCH/s3.credentials"
declare -a FPORT
for f in 0 1 2; do
    FPORT[$f]=$(free_port)
    cat >"$SCRATCH/fe$f.cluster" <<EOF
etcd = $ENDPOINTS
cluster = faults
s3-endpoint = http://127.0.0.1:$W_S3
s3-bucket = svelto
s3-credentials = s3.credentials
cache = cache-fe$f
front-end = fe$f
lease-ttl = 1
request-timeout = 3
EOF
    mkdir -p "$SCRATCH/root-fe$f/proj/conf" "$SCRATCH/root-fe$f/proj/hooks"
    printf '[general]\nanon-access = write\n' >"$SCRATCH/root-fe$f/proj/conf/svnserve.conf"
    # Revision property changes are refused without a hook that allows them.
    printf '#!/bin/sh\nexit 0\n' >"$SCRATCH/root-fe$f/proj/hooks/pre-revprop-change"
    chmod 755 "$SCRATCH/root-fe$f/proj/hooks/pre-revprop-change"
done
for _ in $(seq 60); do
    "$SVELTO_BIN" admin create --cluster "$SCRATCH/fe0.cluster" proj 2>>"$RAW/create.err" && break
    sleep 1
done
start_fe() {
    local f=$1
    "$SVELTO_BIN" serve -d --foreground -r "$SCRATCH/root-fe$f" --listen-host 127.0.0.1 \
        --listen-port "${FPORT[$f]}" --log-file "$SCRATCH/serve-fe$f.log" \
        --cluster "$SCRATCH/fe$f.cluster" >>"$SCRATCH/serve-fe$f.out" 2>&1 &
    PID[fe$f]=$!
}
for f in 0 1 2; do start_fe "$f"; done
for f in 0 1 2; do wait_port "${FPORT[$f]}" "fe$f" || exit 1; done
url() { echo "svn://127.0.0.1:${FPORT[$1]}/proj"; }

# --- committers and the reader.
committer() {
    local c=$1 i=0 f out rev t0
    while [ ! -e "$SCRATCH/stop" ]; do
        i=$((i + 1))
        f=$(((c + i) % 3))
        printf 'c%s i%s\n' "$c" "$i" >"$SCRATCH/text-$c"
        t0=$(now_ns)
        if out=$(timeout 60 svnmucc --non-interactive --no-auth-cache -m "c$c-$i" \
            put "$SCRATCH/text-$c" "$(url "$f")/c$c.txt" 2>"$SCRATCH/err-$c"); then
            rev=$(sed -n 's/^r\([0-9]*\) committed.*/\1/p' <<<"$out")
            echo "$c $i ${rev:-?} fe$f $t0 $(now_ns)" >>"$RAW/acks"
        else
            echo "$c $i fe$f $(now_ns) $(tr '\n' ' ' <"$SCRATCH/err-$c" | cut -c1-300)" >>"$RAW/fails"
            sleep 0.1
        fi
    done
}
changer() { # one line per attempt in changes: k n rev front-end start end ok|fail
    local k=$1 n=0 f acked rev t0 out r1 r2
    RANDOM=$((SEED + 1000 + k))
    while [ ! -e "$SCRATCH/stop" ]; do
        acked=$(awk '$3 != "?" {print $3}' "$RAW/acks" 2>/dev/null)
        if [ -z "$acked" ]; then sleep 0.2; continue; fi
        n=$((n + 1))
        f=$(((k + n) % 3))
        # (The random numbers drawn here: a command substitution's subshell would not
        # advance this shell's generator.)
        r1=$RANDOM r2=$RANDOM
        [ $((r1 % 2)) -eq 1 ] || acked=$(tail -3 <<<"$acked")
        rev=$(sed -n "$((r2 % $(wc -l <<<"$acked") + 1))p" <<<"$acked")
        t0=$(now_ns)
        if out=$(timeout 60 svn propset --non-interactive --no-auth-cache --revprop -r "$rev" \
            "test:changer-$k" "k$k-n$n" "$(url "$f")" 2>"$SCRATCH/cerr-$k"); then
            echo "$k $n $rev fe$f $t0 $(now_ns) ok" >>"$RAW/changes"
        else
            echo "$k $n $rev fe$f $t0 $(now_ns) fail" >>"$RAW/changes"
            echo "$k $n $rev fe$f $(now_ns) $(tr '\n' ' ' <"$SCRATCH/cerr-$k" | cut -c1-300)" >>"$RAW/change-fails"
            sleep 0.1
        fi
    done
}
reader() {
    local f out
    while [ ! -e "$SCRATCH/stop" ]; do
        f=$((RANDOM % 3))
        out=$(timeout 30 svn log --non-interactive -v -r HEAD "$(url "$f")" 2>&1)
        out+=$(timeout 30 svn cat --non-interactive "$(url "$f")/c0.txt" 2>&1)
        if grep -qiE 'corrupt|checksum|malformed|mismatch' <<<"$out"; then
            echo "$(now_ns) fe$f $(tr '\n' ' ' <<<"$out" | cut -c1-400)" >>"$RAW/half"
        fi
        echo x >>"$RAW/reads"
        sleep 0.2
    done
}
for c in $(seq 0 $((COMMITTERS - 1))); do
    committer "$c" &
    BG+=($!)
done
for k in $(seq 0 $((CHANGERS - 1))); do
    changer "$k" &
    BG+=($!)
done
reader &
BG+=($!)

# --- kills.
kill_and_restart() { # kill_and_restart CATEGORY COMPONENT
    local what=$1 comp=$2
    local t0
    t0=$(now_ns)
    kill -9 "${PID[$comp]}" 2>/dev/null
    wait "${PID[$comp]}" 2>/dev/null
    echo "$what $comp $t0" >>"$RAW/kills"
    log "kill $((k)) ($what): $comp"
    pause 100 1000
    case $comp in
    fe*) start_fe "${comp#fe}"; wait_port "${FPORT[${comp#fe}]}" "$comp" ;;
    etcd*) start_etcd "${comp#etcd}"; wait_port "${CPORT[${comp#etcd}]}" "$comp" ;;
    weed) start_weed; wait_weed ;;
    esac
}
COMPONENTS=(fe0 fe1 fe2 etcd0 etcd1 etcd2 weed)
sleep 3
START=$(now_ns)
for k in $(seq "$KILLS"); do
    if [ $((k % WEED_EVERY)) -eq 0 ]; then
        what=weed comp=weed
    else
        case $((k % 4)) in
        1) what=writer comp=$(writer_front_end)
           [ -n "$comp" ] || { what="writer (none held: random front end)"; comp=fe$((RANDOM % 3)); } ;;
        2) what=front-end comp=fe$((RANDOM % 3)) ;;
        3) what=etcd-leader comp=etcd$(etcd_leader)
           [ "$comp" != etcd ] || { what="etcd-leader (none: random member)"; comp=etcd$((RANDOM % 3)); } ;;
        0) what=random comp=${COMPONENTS[$((RANDOM % 7))]} ;;
        esac
    fi
    kill_and_restart "$what" "$comp"
    # An etcd member back on its data, or weed, takes a moment before it serves; a
    # committer's next attempt finds out.
    pause 500 2000
done
END=$(now_ns)
touch "$SCRATCH/stop"
log "kills done; waiting for the committers"
for p in "${BG[@]}"; do wait "$p" 2>/dev/null; done
BG=()

# --- checks.
FAILED=0
fail() { log "FAIL $*"; FAILED=1; }
for f in 0 1 2; do
    ok=
    for _ in $(seq 120); do
        if svnmucc --non-interactive -m "check fe$f" put "$SCRATCH/text-0" "$(url "$f")/check.txt" >/dev/null 2>>"$RAW/check.err"; then ok=1; break; fi
        sleep 0.5
    done
    [ -n "$ok" ] || fail "no commit accepted through fe$f after the kills"
done
for f in 0 1 2; do
    ok=
    for _ in $(seq 60); do
        if svn propset --non-interactive --revprop -r 1 test:check "fe$f" "$(url "$f")" >/dev/null 2>>"$RAW/check.err"; then ok=1; break; fi
        sleep 0.5
    done
    [ -n "$ok" ] || fail "no revision property change accepted through fe$f after the kills"
done
heads=$(for f in 0 1 2; do svn info --non-interactive --show-item revision "$(url "$f")"; done | sort -u)
[ "$(wc -l <<<"$heads")" -eq 1 ] || fail "front ends name different heads: $heads"
HEAD=$(head -1 <<<"$heads")
for f in 0 1 2; do
    svnrdump dump -q --non-interactive "$(url "$f")" >"$SCRATCH/dump-fe$f" 2>>"$RAW/check.err" || fail "svnrdump dump through fe$f"
done
SAME=yes
cmp -s "$SCRATCH/dump-fe0" "$SCRATCH/dump-fe1" || { SAME=no; fail "the dumps through fe0 and fe1 differ"; }
cmp -s "$SCRATCH/dump-fe0" "$SCRATCH/dump-fe2" || { SAME=no; fail "the dumps through fe0 and fe2 differ"; }
svnadmin create "$SCRATCH/loaded"
svnadmin load -q "$SCRATCH/loaded" <"$SCRATCH/dump-fe0" 2>>"$RAW/check.err" || fail "svnadmin load of the dump"
[ "$(svnlook youngest "$SCRATCH/loaded")" = "$HEAD" ] || fail "the loaded dump ends at r$(svnlook youngest "$SCRATCH/loaded"), HEAD is r$HEAD"
# A cache directory holds a local repository's db/ (no top-level format file, conf/ or
# hooks/): verified through a repository layout whose db is a link to it.
"$SVELTO_BIN" admin create "$SCRATCH/layout"
for f in 0 1 2; do
    mkdir -p "$SCRATCH/verify-fe$f"
    cp "$SCRATCH/layout/format" "$SCRATCH/verify-fe$f/"
    cp -r "$SCRATCH/layout/conf" "$SCRATCH/layout/hooks" "$SCRATCH/verify-fe$f/" 2>/dev/null
    ln -s "$SCRATCH/cache-fe$f/proj/db" "$SCRATCH/verify-fe$f/db"
    echo "fe$f:" >>"$RAW/verify"
    "$SVELTO_BIN" admin verify "$SCRATCH/verify-fe$f" >>"$RAW/verify" 2>&1 || fail "svelto admin verify of fe$f's cache"
done
# Every acknowledged commit at its revision, with its message and text; no message twice.
python3 - "$RAW/acks" "$SCRATCH/loaded" "$HEAD" >"$RAW/acks-check" <<'EOF' || fail "acknowledged commits: $(tail -3 "$RAW/acks-check")"
import subprocess, sys
acks_file, repo, head = sys.argv[1], sys.argv[2], int(sys.argv[3])
acks = [l.split() for l in open(acks_file)] if head else []
msgs = {}
for rev in range(1, head + 1):
    msgs[rev] = subprocess.run(["svnlook", "log", "-r", str(rev), repo], capture_output=True, text=True, check=True).stdout.strip()
bad = []
for c, i, rev, *_ in acks:
    if rev == "?":
        bad.append(f"c{c}-{i}: acknowledged without a revision number")
        continue
    rev = int(rev)
    if msgs.get(rev) != f"c{c}-{i}":
        bad.append(f"c{c}-{i} acknowledged as r{rev}, whose message is {msgs.get(rev)!r}")
        continue
    text = subprocess.run(["svnlook", "cat", "-r", str(rev), repo, f"c{c}.txt"], capture_output=True, text=True).stdout
    if text != f"c{c} i{i}\n":
        bad.append(f"c{c}-{i} at r{rev}: c{c}.txt holds {text!r}")
import re
ours = re.compile(r"c[0-9]+-[0-9]+")
seen = {}
for rev, m in msgs.items():
    if m in seen and ours.fullmatch(m):
        bad.append(f"message {m!r} in r{seen[m]} and r{rev}")
    seen[m] = rev
unacked = sum(1 for m in msgs.values() if ours.fullmatch(m)) - len(acks)
print(f"acknowledged {len(acks)}, revisions {head}, committed but not acknowledged to their client {unacked}")
for b in bad[:20]:
    print("BAD", b)
sys.exit(1 if bad else 0)
EOF
# Every revision property change: its value through each front end and in the loaded dump.
for f in 0 1 2; do
    svn log --non-interactive --xml --with-all-revprops -r 1:HEAD "$(url "$f")" >"$SCRATCH/revprops-fe$f" 2>>"$RAW/check.err" ||
        fail "svn log --with-all-revprops through fe$f"
done
python3 - "$RAW/changes" "$SCRATCH/loaded" "$SCRATCH"/revprops-fe{0,1,2} >"$RAW/changes-check" <<'EOF' || fail "revision property changes: $(tail -3 "$RAW/changes-check")"
import collections, os, subprocess, sys
import xml.etree.ElementTree as ET
changes_file, repo, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
bad = []
# The revision properties each front end names, revision by revision.
seen = []
for path in logs:
    props = {}
    for entry in ET.parse(path).getroot().iter("logentry"):
        rp = entry.find("revprops")
        props[int(entry.get("revision"))] = {p.get("name"): p.text or "" for p in (rp if rp is not None else [])}
    seen.append(props)
for i in (1, 2):
    if seen[i] != seen[0]:
        diff = [r for r in seen[0] if seen[0][r] != seen[i].get(r)][:5]
        bad.append(f"fe{i}'s revision properties differ from fe0's (revisions {diff})")
attempts = collections.defaultdict(list)
rows = [l.split() for l in open(changes_file)] if os.path.exists(changes_file) else []
for k, n, rev, fe, t0, t1, status in rows:
    attempts[(k, int(rev))].append((int(n), f"k{k}-n{n}", status == "ok"))
checked = unacked_seen = 0
for (k, rev), tried in sorted(attempts.items()):
    tried.sort()
    name = f"test:changer-{k}"
    last = max((i for i, t in enumerate(tried) if t[2]), default=None)
    if last is None:
        allowed = {t[1] for t in tried} | {None}
    else:
        allowed = {t[1] for t in tried[last:]}
    out = subprocess.run(["svnlook", "propget", "--revprop", "-r", str(rev), repo, name], capture_output=True, text=True)
    loaded = out.stdout.rstrip("\n") if out.returncode == 0 else None
    got = [s.get(rev, {}).get(name) for s in seen] + [loaded]
    for where, value in zip(["fe0", "fe1", "fe2", "the loaded dump"], got):
        if value not in allowed:
            acked = tried[last][1] if last is not None else None
            bad.append(f"{name} of r{rev} through {where}: {value!r}; last acknowledged {acked!r}, allowed {sorted(map(str, allowed))}")
    if got[3] is not None and (last is None or got[3] != tried[last][1]):
        unacked_seen += 1
    checked += 1
acked = sum(1 for r in rows if r[6] == "ok")
print(f"changes acknowledged {acked}, attempts {len(rows)}, (changer, revision) pairs checked {checked}, "
      f"holding an unacknowledged attempt's value (applied, its client saw an error) {unacked_seen}")
for b in bad[:20]:
    print("BAD", b)
if not acked:
    print("BAD no revision property change was acknowledged")
sys.exit(1 if bad or not acked else 0)
EOF
[ ! -s "$RAW/half" ] || fail "a reader saw a half revision: $(head -2 "$RAW/half")"

# --- report.
ACKED=$(wc -l <"$RAW/acks" 2>/dev/null || echo 0)
FAILS=$(wc -l <"$RAW/fails" 2>/dev/null || echo 0)
per_committer=$(for c in $(seq 0 $((COMMITTERS - 1))); do
    printf 'c%s %s acked / %s refused; ' "$c" "$(awk -v c="$c" '$1==c' "$RAW/acks" 2>/dev/null | wc -l)" "$(awk -v c="$c" '$1==c' "$RAW/fails" 2>/dev/null | wc -l)"
done)
# Per kind of kill: how many, and the time from the kill to the next acknowledged commit
# (any committer) that started after it.
recovery=$(python3 - "$RAW/kills" "$RAW/acks" <<'EOF'
import sys, collections
kills = [l.split() for l in open(sys.argv[1])]
acks = sorted((int(l.split()[4]), int(l.split()[5])) for l in open(sys.argv[2]))
by = collections.defaultdict(list)
for k in kills:
    what, comp, t = " ".join(k[:-2]), k[-2], int(k[-1])
    kind = what.split(" ")[0]
    nxt = [done for start, done in acks if start >= t]
    by[kind].append(((min(nxt) - t) / 1e9) if nxt else None)
for kind, v in sorted(by.items()):
    got = sorted(x for x in v if x is not None)
    med = got[(len(got) - 1) // 2] if got else float("nan")
    print(f"| {kind} | {len(v)} | {med:.2f} | {max(got) if got else float('nan'):.2f} |")
EOF
)
{
    echo "## bench/cluster-faults.sh, $(date -u '+%F %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo "KILLS=$KILLS COMMITTERS=$COMMITTERS WEED_EVERY=$WEED_EVERY SEED=$SEED; svelto: $SVELTO_BIN; three etcd members ($(etcd --version | head -1), heartbeat 50 ms, election 500 ms), weed $(basename "$(dirname "$WEED")"), three front ends (lease-ttl = 1); kills over $(((END - START) / 1000000000)) s."
    echo
    echo "| kind of kill | kills | kill to the next acknowledged commit started after it, median s | max s |"
    echo "|---|---|---|---|"
    echo "$recovery"
    echo
    echo "- commits acknowledged: $ACKED; attempts refused or cut off: $FAILS ($per_committer)"
    echo "- $(head -1 "$RAW/acks-check" 2>/dev/null)"
    echo "- revision property changes ($CHANGERS changers): $(awk '$7 == "ok"' "$RAW/changes" 2>/dev/null | wc -l) acknowledged, $(awk '$7 == "fail"' "$RAW/changes" 2>/dev/null | wc -l) refused or cut off; $(head -1 "$RAW/changes-check" 2>/dev/null)"
    echo "- reader: $(wc -l <"$RAW/reads" 2>/dev/null || echo 0) reads of HEAD's log and a file through random front ends, half revisions seen: $(cat "$RAW/half" 2>/dev/null | wc -l)"
    echo "- HEAD r$HEAD on all three front ends; svnrdump dumps through the three byte-identical: $SAME ($(wc -c <"$SCRATCH/dump-fe0") bytes); svnadmin load of it: r$(svnlook youngest "$SCRATCH/loaded" 2>/dev/null)"
    echo "- svelto admin verify of the three caches: $(grep -c '^\* Verified revision' "$RAW/verify") revisions verified in all, $(grep -ci 'error' "$RAW/verify") lines naming an error"
    echo "- result: $([ $FAILED -eq 0 ] && echo 'every check passed' || echo FAILED)"
    grep FAIL "$RAW/events" | sed 's/^/- /'
    echo
    echo "Refusals by message (first 60 characters, the commonest):"
    echo
    cut -d' ' -f5- "$RAW/fails" 2>/dev/null | sed 's/svnmucc: //g' | cut -c1-60 | sort | uniq -c | sort -rn | head -8 | sed 's/^/    /'
    echo
    echo "Refused revision property changes by message (first 60 characters, the commonest):"
    echo
    cut -d' ' -f6- "$RAW/change-fails" 2>/dev/null | sed 's/svn: //g; s/\br[0-9][0-9]*/rN/g' | cut -c1-60 | sort | uniq -c | sort -rn | head -8 | sed 's/^/    /'
} | tee "$SCRATCH/report.md"
mkdir -p "$OUT_DIR/cluster-faults.raw"
cp "$RAW"/* "$OUT_DIR/cluster-faults.raw/" 2>/dev/null
cat "$SCRATCH/report.md" >>"$OUT_DIR/cluster-faults.md"
exit $FAILED

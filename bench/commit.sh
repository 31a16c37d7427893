#!/usr/bin/env bash
# bench/commit.sh [RUNS]: commits to svelto serve vs svnserve, and over http:// to
# svelto serve --http-listen vs Apache httpd with mod_dav_svn, side by side.
#
# For each run, a fresh empty repository per server, all on 127.0.0.1:
#   svnserve     FSFS served by svnserve in its fastest configuration, `-T -M 1024 -c 0
#                --cache-revprops yes --block-read yes`, anonymous clients may write
#   svelto       svelto serve, anonymous clients may write
#   apache       FSFS served by Apache httpd (event MPM) with mod_dav_svn and its defaults
#                (bench/servers.sh), every request logged in: AuthType Basic, an htpasswd
#                file, Require valid-user
#   apache-fast  the same with the seeds' "fast" mod_dav_svn caches (not by default)
#   svelto-http  svelto serve --http-listen with the same htpasswd file (--http-auth-file,
#                anon-access = none, auth-access = write)
# The password file holds one user, written by `htpasswd -b HTPASSWD_FLAGS` (default -B:
# bcrypt, which both servers verify on each request). Against each server, in an order
# that rotates from run to run:
#   latency  COMMITS one-file commits in a row (`svnmucc put`), wall time of each and
#            svnmucc's own CPU time (the floor no server can go below)
#   import   `svn import` of a generated tree of FILES files (deterministic contents)
#   writers  WRITERS clients committing to their own files as fast as they can for
#            DURATION seconds (`svnmucc put` in a loop): commits per second, failures
# and over http:// only, with bench/httpcommit.py (one process, one keep-alive connection
# per committer, the requests ra_serf sends for a one-file change: POST create-txn, PUT of
# an svndiff0 text with its checksums, MERGE), so that the clients' start-up does not
# take the machine:
#   raw-latency  RAW_COMMITS one-file commits in a row by one committer: wall per commit
#   raw-writers  WRITERS committers, each on its own file, for DURATION seconds:
#                commits per second, failures, server CPU per commit
# After each server's workloads: its youngest revision against the commits the clients
# saw land, and `svnadmin verify` / `svelto admin verify`.
# Server CPU comes from /proc around each workload (utime+stime of the server, its threads
# and its children: Apache's). Prints a markdown table (medians over the runs, min-max)
# and writes it, with every raw run as JSON lines, to OUT_DIR/commit.{md,jsonl} (default
# bench/results/DAY/).
#
# Environment: SVELTO_BIN=PATH (default: build target/release/svelto), SERVERS (default
# "svnserve svelto apache svelto-http"), WORKLOADS (default "latency import writers
# raw-latency raw-writers"), COMMITS (30), RAW_COMMITS (200), FILES (20000), WRITERS (8),
# DURATION (120), HTPASSWD_FLAGS (-B), SCRATCH (bench/work/commit); RECORDS=FILE: measure
# nothing, write the table from FILE's raw runs (those of an interrupted run: give the same
# settings as it had; RUNS is the number of runs FILE holds).
set -euo pipefail

RUNS=${1:-3}
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/commit.sh [RUNS]" >&2; exit 2; }
COMMITS=${COMMITS:-30}
RAW_COMMITS=${RAW_COMMITS:-200}
FILES=${FILES:-20000}
WRITERS=${WRITERS:-8}
DURATION=${DURATION:-120}
HTPASSWD_FLAGS=${HTPASSWD_FLAGS:--B}
read -r -a SERVERS <<<"${SERVERS:-svnserve svelto apache svelto-http}"
read -r -a WORKLOADS <<<"${WORKLOADS:-latency import writers raw-latency raw-writers}"
for w in "${WORKLOADS[@]}"; do
    case "$w" in
    latency | import | writers | raw-latency | raw-writers) ;;
    *) echo "bench/commit.sh: unknown workload '$w' (of: latency import writers raw-latency raw-writers)" >&2; exit 2 ;;
    esac
done
want() { [[ " ${WORKLOADS[*]} " == *" $1 "* ]]; }
HAS_APACHE=no
for s in "${SERVERS[@]}"; do
    case "$s" in
    apache | apache-fast) HAS_APACHE=yes ;;
    svnserve | svelto | svelto-http) ;;
    *) echo "bench/commit.sh: unknown server '$s' (of: svnserve svelto apache apache-fast svelto-http)" >&2; exit 2 ;;
    esac
done

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
SCRATCH=${SCRATCH:-$BENCH/work/commit}
mkdir -p "$SCRATCH"
SCRATCH=$(cd "$SCRATCH" && pwd)
STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
JSON=$SCRATCH/commit.jsonl
if [[ -n "${RECORDS:-}" ]]; then
    [[ -s "$RECORDS" ]] || { echo "bench/commit.sh: RECORDS=$RECORDS: no such file" >&2; exit 2; }
    [[ "$RECORDS" -ef "$JSON" ]] || cp "$RECORDS" "$JSON"
    RUNS=$(sed -n 's/.*"run": \([0-9]*\).*/\1/p' "$JSON" | sort -n | tail -n 1)
else
    : >"$JSON"
fi

NAME=commit.sh
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"
# shellcheck source=bench/servers.sh
source "$BENCH/servers.sh"
results_dir

for t in svn svnmucc svnserve svnadmin svnlook awk; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install -y subversion)"
done
if want raw-latency || want raw-writers; then need_package python3 python3; fi
[[ $HAS_APACHE == no ]] || { need_apache; need_package htpasswd apache2-utils; }
TICK=$(getconf CLK_TCK)
if [[ -n "${SVELTO_BIN:-}" ]]; then
    SV=$SVELTO_BIN
else
    say "building svelto (cargo build --release -p svelto-cli)"
    (cd "$ROOT" && cargo build --release -q -p svelto-cli) || die "building svelto failed"
    SV=$TARGET/release/svelto
fi
SV=$(cd "$(dirname "$SV")" && pwd)/$(basename "$SV")
BUILD="$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet HEAD -- crates Cargo.toml Cargo.lock 2>/dev/null || echo '+changes')"

# ----- the tree to import: FILES files, 20 per directory, 50 directories per parent ----
TREE=$SCRATCH/tree-$FILES
if [[ ! -d "$TREE" ]]; then
    say "generating $TREE"
    awk -v n="$FILES" -v root="$TREE" 'BEGIN {
        srand(1)
        for (i = 0; i < n; i++) {
            d = root "/d" int(i / 1000) "/e" int(i / 20)
            if (i % 20 == 0) system("mkdir -p " d)
            f = d "/f" (i % 20) ".txt"
            lines = 5 + int(rand() * 200)
            for (l = 0; l < lines; l++) printf "line %d of file %d: %d\n", l, i, int(rand() * 1e9) > f
            close(f)
        }
    }'
fi

CFG=$SCRATCH/config
mkdir -p "$CFG"
C=(--non-interactive --no-auth-cache --config-dir "$CFG")
# Over http:// every client logs in as this user.
PASSWD=$SCRATCH/htpasswd
htpasswd -c -b $HTPASSWD_FLAGS "$PASSWD" bench bench-pw 2>/dev/null || die "htpasswd $HTPASSWD_FLAGS failed"
chmod a+r "$PASSWD"
declare -A PID URL

stop_servers() {
    local s
    for s in "${!PID[@]}"; do kill "${PID[$s]}" 2>/dev/null || true; done
    wait 2>/dev/null || true
    PID=()
}
trap stop_servers EXIT

start() {
    local s=$1 root=$SCRATCH/root-$1 port="" i
    rm -rf "$root"
    mkdir -p "$root"
    case "$s" in
    svnserve | apache*) svnadmin create "$root/repo" ;;
    *)
        "$SV" admin create "$root/repo" >/dev/null
        mkdir -p "$root/repo/conf"
        ;;
    esac
    printf '[general]\nanon-access = write\n' >"$root/repo/conf/svnserve.conf"
    # Emptied before the server starts (the shell truncates a background command's
    # redirection only once the child runs: the previous run's HTTP port could be read).
    : >"$SCRATCH/$s.stderr"
    case "$s" in
    svnserve)
        svnserve -d --foreground -T -M 1024 -c 0 --cache-revprops yes --block-read yes \
            -r "$root" --listen-host 127.0.0.1 --listen-port 0 2>>"$SCRATCH/$s.stderr" &
        ;;
    svelto)
        "$SV" serve -d --foreground -r "$root" --listen-host 127.0.0.1 --listen-port 0 \
            2>>"$SCRATCH/$s.stderr" &
        ;;
    svelto-http)
        printf '[general]\nanon-access = none\nauth-access = write\nrealm = bench\n' >"$root/repo/conf/svnserve.conf"
        "$SV" serve -d --foreground -r "$root" --listen-host 127.0.0.1 --listen-port 0 \
            --http-listen 127.0.0.1:0 --http-auth-file "$PASSWD" 2>>"$SCRATCH/$s.stderr" &
        ;;
    apache*)
        port=$(free_port) || die "found no free port for $s"
        apache_conf "$s" "$root" "$port" "$SCRATCH/$s" "$PASSWD"
        open_to_daemon "$root" "$SCRATCH/$s"
        apache_start "$SCRATCH/$s" "$SCRATCH/$s.stderr"
        PID[$s]=$APACHE_PID
        URL[$s]=http://127.0.0.1:$APACHE_PORT/repo
        return 0
        ;;
    esac
    PID[$s]=$!
    # The listening port: from /proc for svn:// (the server's standard error may not even
    # exist yet when the first check runs), as announced for http://.
    for i in $(seq 1 600); do
        kill -0 "${PID[$s]}" 2>/dev/null || break
        if [[ $s == svelto-http ]]; then port=$(http_port_of "$SCRATCH/$s.stderr"); else port=$(port_of "${PID[$s]}") || port=""; fi
        # The port the client will use answers (for svelto-http the HTTP one).
        [[ -n "$port" ]] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        port=""
        sleep 0.1
    done
    [[ -n "$port" ]] || die "$s did not start: $(cat "$SCRATCH/$s.stderr" 2>/dev/null)"
    if [[ $s == svelto-http ]]; then
        URL[$s]=http://127.0.0.1:$port/repo
    else
        URL[$s]=svn://127.0.0.1:$port/repo
    fi
}

now() { date +%s.%N; }
# children_ticks: CHILDREN_TICKS = the CPU ticks (utime+stime) of the children this shell
# has waited for, from /proc (cutime, cstime); a builtin read, so no child of its own.
children_ticks() {
    local stat f
    read -r stat </proc/$BASHPID/stat
    read -r -a f <<<"${stat##*) }"
    CHILDREN_TICKS=$((f[13] + f[14]))
}
record() { # server run workload key value...
    local s=$1 r=$2 w=$3
    shift 3
    local extra=""
    while (($#)); do extra+=", \"$1\": $2"; shift 2; done
    echo "{\"server\": \"$s\", \"run\": $r, \"workload\": \"$w\"$extra}" >>"$JSON"
}

# jget KEY JSON: a number of httpcommit.py's JSON line.
jget() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" <<<"$2"; }

# raw NAME RUN WORKLOAD ARGS...: bench/httpcommit.py against server NAME (its output
# recorded); adds the commits it made to LANDED; a failed check is recorded and reported.
raw() {
    local s=$1 r=$2 w=$3 out rc=0 commits setup
    shift 3
    out=$(python3 "$BENCH/httpcommit.py" --url "${URL[$s]}" --user bench --password bench-pw \
        --server-pid "${PID[$s]}" --dir "$w" "$@" 2>>"$SCRATCH/$s.raw-errors") || rc=$?
    echo "$out" >>"$SCRATCH/$s.raw-output"
    if [[ -z "$out" ]]; then
        say "$s: httpcommit.py failed (exit $rc): $(tail -n 1 "$SCRATCH/$s.raw-errors")"
        record "$s" "$r" "$w" check_ok 0
        return 0
    fi
    commits=$(jget commits "$out") setup=$(jget setup_commits "$out")
    LANDED=$((LANDED + commits + setup))
    [[ $rc == 0 ]] || say "$s: httpcommit.py's check failed: $out"
    local cpu per
    cpu=$(jget server_cpu_s "$out")
    per=$(awk -v c="$cpu" -v n="$commits" 'BEGIN { if (n > 0) printf "%.5f", c / n; else print 0 }')
    if [[ $w == raw-latency ]]; then
        record "$s" "$r" "$w" median_s "$(jget latency_median_s "$out")" server_cpu_s "$per" \
            client_cpu_s "$(awk -v c="$(jget client_cpu_s "$out")" -v n="$commits" 'BEGIN { if (n > 0) printf "%.5f", c / n; else print 0 }')" \
            check_ok "$((rc == 0))"
    else
        record "$s" "$r" "$w" commits "$commits" failures "$(jget failures "$out")" per_s "$(jget per_s "$out")" \
            server_cpu_s "$cpu" server_cpu_per_commit_s "$per" \
            client_cpu_per_commit_s "$(awk -v c="$(jget client_cpu_s "$out")" -v n="$commits" 'BEGIN { if (n > 0) printf "%.5f", c / n; else print 0 }')" \
            connections "$(jget connections "$out")" check_ok "$((rc == 0))"
    fi
}

# youngest NAME: the youngest revision of server NAME's repository.
youngest() {
    case "$1" in
    svnserve | apache*) svnlook youngest "$SCRATCH/root-$1/repo" ;;
    *) "$SV" look youngest "$SCRATCH/root-$1/repo" ;;
    esac
}

run_one() { # server run
    local s=$1 r=$2 t0 t1 c0 i w ok bad
    start "$s"
    local url=${URL[$s]} pid=${PID[$s]} c=("${C[@]}")
    [[ $url != http:* ]] || c+=(--username bench --password bench-pw)
    svn "${c[@]}" mkdir -q -m layout "$url/trunk" "$url/writers"
    # The commits the clients saw land (the check after the workloads).
    LANDED=1
    if want latency; then
        # latency: one file changed COMMITS times
        local lat=()
        echo 0 >"$SCRATCH/payload"
        svnmucc "${c[@]}" -m first -U "$url" put "$SCRATCH/payload" trunk/one.txt >/dev/null
        c0=$(ticks "$pid")
        # The client's own CPU: svnmucc's utime+stime, summed from this shell's counters
        # of reaped children around each call alone (children_ticks forks nothing).
        local mucc=0
        for i in $(seq 1 "$COMMITS"); do
            echo "$i" >"$SCRATCH/payload"
            t0=$(now)
            children_ticks
            local k0=$CHILDREN_TICKS
            svnmucc "${c[@]}" -m "change $i" -U "$url" put "$SCRATCH/payload" trunk/one.txt >/dev/null
            children_ticks
            mucc=$((mucc + CHILDREN_TICKS - k0))
            t1=$(now)
            lat+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')")
        done
        local med
        med=$(printf '%s\n' "${lat[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
        record "$s" "$r" latency median_s "$med" server_cpu_s "$(awk -v t="$(( $(ticks "$pid") - c0 ))" -v k="$TICK" -v n="$COMMITS" 'BEGIN { printf "%.4f", t / k / n }')" \
            client_cpu_s "$(awk -v t="$mucc" -v k="$TICK" -v n="$COMMITS" 'BEGIN { printf "%.4f", t / k / n }')"
        LANDED=$((LANDED + 1 + COMMITS))
    fi
    if want import; then
        # import
        c0=$(ticks "$pid")
        t0=$(now)
        svn "${c[@]}" import -q -m import "$TREE" "$url/trunk/tree"
        t1=$(now)
        record "$s" "$r" import wall_s "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" server_cpu_s "$(awk -v t="$(( $(ticks "$pid") - c0 ))" -v k="$TICK" 'BEGIN { printf "%.3f", t / k }')"
        LANDED=$((LANDED + 1))
    fi
    if want writers; then
        # writers
        c0=$(ticks "$pid")
        local end=$(( $(date +%s) + DURATION ))
        for w in $(seq 1 "$WRITERS"); do
            (
                ok=0 bad=0 i=0
                echo "writer $w" >"$SCRATCH/payload.$w"
                while (( $(date +%s) < end )); do
                    i=$((i + 1))
                    if svnmucc "${c[@]}" -m "w$w c$i" -U "$url" put "$SCRATCH/payload.$w" "writers/w$w-$i.txt" >/dev/null 2>>"$SCRATCH/$s.writer-errors"; then
                        ok=$((ok + 1))
                    else
                        bad=$((bad + 1))
                    fi
                done
                echo "$ok $bad" >"$SCRATCH/writer.$w"
            ) &
        done
        mapfile -t writers < <(jobs -p | grep -v "^$pid$")
        wait "${writers[@]}" 2>/dev/null || true
        read -r ok bad < <(cat "$SCRATCH"/writer.* | awk '{ o += $1; b += $2 } END { print o, b }')
        rm -f "$SCRATCH"/writer.*
        record "$s" "$r" writers commits "$ok" failures "$bad" per_s "$(awk -v o="$ok" -v d="$DURATION" 'BEGIN { printf "%.2f", o / d }')" server_cpu_s "$(awk -v t="$(( $(ticks "$pid") - c0 ))" -v k="$TICK" 'BEGIN { printf "%.2f", t / k }')"
        LANDED=$((LANDED + ok))
    fi
    if [[ $url == http:* ]]; then
        if want raw-latency; then raw "$s" "$r" raw-latency --writers 1 --commits "$RAW_COMMITS"; fi
        if want raw-writers; then raw "$s" "$r" raw-writers --writers "$WRITERS" --duration "$DURATION"; fi
    fi
    stop_servers
    # The check: the revisions the clients saw land are there (a failed svnmucc may have
    # landed too: then youngest is above), and the repository verifies.
    local young verify=1
    young=$(youngest "$s")
    case "$s" in
    svnserve | apache*) svnadmin verify -q "$SCRATCH/root-$s/repo" 2>>"$SCRATCH/$s.verify" || verify=0 ;;
    *) "$SV" admin verify -q "$SCRATCH/root-$s/repo" 2>>"$SCRATCH/$s.verify" || verify=0 ;;
    esac
    [[ $verify == 1 ]] || say "$s: verify failed: $(tail -n 3 "$SCRATCH/$s.verify")"
    [[ $young == "$LANDED" ]] || say "$s: youngest r$young, but the clients saw $LANDED commits land"
    record "$s" "$r" check youngest "$young" landed "$LANDED" verify_ok "$verify" same "$((young == LANDED))"
}

if [[ -z "${RECORDS:-}" ]]; then
    for s in "${SERVERS[@]}"; do : >"$SCRATCH/$s.writer-errors"; : >"$SCRATCH/$s.raw-errors"; : >"$SCRATCH/$s.raw-output"; : >"$SCRATCH/$s.verify"; done
    for r in $(seq 1 "$RUNS"); do
        # The order rotates by one server from run to run.
        n=${#SERVERS[@]}
        for k in $(seq 0 $((n - 1))); do
            s=${SERVERS[$(((k + r - 1) % n))]}
            say "run $r: $s"
            run_one "$s" "$r"
        done
    done
fi

# ----- table ----------------------------------------------------------------------
stat() { # workload key server -> "median (min-max)"
    { grep "\"server\": \"$3\"" "$JSON" || true; } | { grep "\"workload\": \"$1\"" || true; } |
        sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" | sort -n |
        awk '{ v[NR] = $1 } END { if (NR) printf "%s (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR]; else print "–" }'
}
med() { stat "$@" | cut -d' ' -f1 | sed 's/^–$//'; }
# a ÷ b for times, where b is the peer's; a server CPU time of 0 means less than one clock
# tick (10 ms) in all, which short runs (SMOKE=1) can measure: said so rather than
# divided by.
ratio() { awk -v a="$1" -v b="$2" -v peer="$3" 'BEGIN { if (a == "" || b == "") print ""; else if (b > 0) printf "%.2f", a / b; else print "n/a (" peer " under one clock tick)" }'; }
# The pairs compared: svelto with svnserve over svn://, svelto-http with Apache over
# http:// (apache-fast when apache is not measured).
has() { [[ " ${SERVERS[*]} " == *" $1 "* ]]; }
PAIRS=()
has svnserve && has svelto && PAIRS+=("svelto svnserve")
for a in apache apache-fast; do
    if has "$a" && has svelto-http; then
        PAIRS+=("svelto-http $a")
        break
    fi
done
row() { # label measure workload key
    want "$3" || return 0
    local line="| $1 | $2 |" s p
    for s in "${SERVERS[@]}"; do
        # The raw committer speaks HTTP only.
        if [[ $3 == raw-* && ($s == svnserve || $s == svelto) ]]; then line+=" (http only) |"; else line+=" $(stat "$3" "$4" "$s") |"; fi
    done
    for p in "${PAIRS[@]}"; do
        read -r a b <<<"$p"
        if [[ $4 == failures || $4 == client_cpu_per_commit_s || $4 == client_cpu_s ]]; then line+=" |"; else line+=" $(ratio "$(med "$3" "$4" "$a")" "$(med "$3" "$4" "$b")" "$b") |"; fi
    done
    echo "$line"
}
# checks SERVER: "N/M runs" whose check passed: youngest revision as the clients saw their
# commits land, verify passed, and httpcommit.py's own check (its commits' revisions, its
# files read back).
checks() {
    local r n=0 ok=0 recs
    for r in $(seq 1 "$RUNS"); do
        recs=$(grep "\"server\": \"$1\", \"run\": $r," "$JSON" || true)
        grep -q '"workload": "check"' <<<"$recs" || continue
        n=$((n + 1))
        if grep '"workload": "check"' <<<"$recs" | grep -q '"verify_ok": 1, "same": 1' &&
            ! grep -q '"check_ok": 0' <<<"$recs"; then ok=$((ok + 1)); fi
    done
    echo "$ok/$n runs"
}
OUT_MD=$OUT_DIR/commit.md
{
    echo "# Commits: svelto serve vs svnserve, and over http:// vs Apache httpd + mod_dav_svn ($STAMP)"
    echo
    echo "Machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), load before: $LOAD0."
    echo "Command: \`bench/commit.sh $RUNS\` (SERVERS=\"${SERVERS[*]}\" WORKLOADS=\"${WORKLOADS[*]}\" COMMITS=$COMMITS RAW_COMMITS=$RAW_COMMITS FILES=$FILES WRITERS=$WRITERS DURATION=$DURATION HTPASSWD_FLAGS=$HTPASSWD_FLAGS); svelto $BUILD; $(svn --version --quiet) client and svnserve (-T -M 1024 -c 0 --cache-revprops yes --block-read yes)$([[ $HAS_APACHE == yes ]] && echo "; Apache httpd $(apache_version) (event MPM) with mod_dav_svn, Basic logins against an htpasswd file (htpasswd $HTPASSWD_FLAGS), as svelto-http")."
    [[ -z "${RECORDS:-}" ]] || echo "The table is rebuilt from the $RUNS finished runs of an interrupted run (RECORDS=$RECORDS)."
    echo "Medians over $RUNS runs (min-max), the servers' order rotating from run to run. Server CPU: utime+stime from /proc, threads and children (Apache's) included. Ratios: Svelto's figure over its peer's (svelto over svnserve, svelto-http over Apache), for times and for throughput alike."
    want raw-latency || want raw-writers && echo "Raw HTTP client: bench/httpcommit.py, one process, one keep-alive connection per committer, each commit the POST (create-txn-with-props), PUT (svndiff0 full text, base and result MD5) and MERGE that ra_serf sends for a one-file change; its server CPU is that of the timed commits alone (not the setup: MKCOL of its directory, one add per committer), its commits per second over the time the last committer finished."
    echo
    line="| workload | measure |"
    sep="|---|---|"
    for s in "${SERVERS[@]}"; do line+=" $s |"; sep+="---|"; done
    for p in "${PAIRS[@]}"; do read -r a b <<<"$p"; line+=" $a ÷ $b |"; sep+="---|"; done
    echo "$line"
    echo "$sep"
    row "one-file commit (svnmucc put)" "wall s per commit" latency median_s
    row "one-file commit" "server CPU s per commit" latency server_cpu_s
    row "one-file commit" "client CPU s per commit (svnmucc's own)" latency client_cpu_s
    row "svn import, $FILES files" "wall s" import wall_s
    row "svn import" "server CPU s" import server_cpu_s
    row "$WRITERS writers, ${DURATION}s" "commits/s" writers per_s
    row "$WRITERS writers" "failed commits" writers failures
    row "$WRITERS writers" "server CPU s" writers server_cpu_s
    row "one-file commit, raw HTTP client (httpcommit.py)" "wall s per commit" raw-latency median_s
    row "one-file commit, raw HTTP client" "server CPU s per commit" raw-latency server_cpu_s
    row "$WRITERS raw HTTP committers, ${DURATION}s" "commits/s" raw-writers per_s
    row "$WRITERS raw HTTP committers" "failed commits" raw-writers failures
    row "$WRITERS raw HTTP committers" "server CPU s per commit" raw-writers server_cpu_per_commit_s
    row "$WRITERS raw HTTP committers" "client CPU s per commit" raw-writers client_cpu_per_commit_s
    line="| check after each run | revisions landed as the clients saw, verify passes |"
    for s in "${SERVERS[@]}"; do line+=" $(checks "$s") |"; done
    for p in "${PAIRS[@]}"; do line+=" |"; done
    echo "$line"
} >"$OUT_MD"
cp "$JSON" "$OUT_DIR/commit.jsonl"
cat "$OUT_MD"
for s in "${SERVERS[@]}"; do
    if [[ -s "$SCRATCH/$s.writer-errors" ]]; then
        say "$s writer errors (first 5):"
        sort "$SCRATCH/$s.writer-errors" | uniq -c | sort -rn | head -n 5 >&2
    fi
    if [[ -s "$SCRATCH/$s.raw-errors" ]]; then
        say "$s httpcommit.py errors (first 5):"
        head -n 5 "$SCRATCH/$s.raw-errors" >&2
    fi
done

#!/usr/bin/env bash
# bench/client.sh REPO [RUNS]: the client's side. Stock `svn checkout` / `svn export`
# against `svelto checkout` / `svelto export` of REPO's trunk, side by side in one run,
# from each server in SERVERS (default "svnserve svelto apache svelto-http": `svnserve -d
# -T` on REPO; `svelto serve -d` on a Svelto copy of REPO, made by `svelto admin load`
# unless SVELTO_REPO names one; Apache httpd with mod_dav_svn (mpm_event) on REPO over
# http://; and `svelto serve --http-listen` on the Svelto copy), alternating, RUNS times
# each (default 3). Per row: the medians of the client's wall, user and system seconds
# (/usr/bin/time) and of the server's CPU seconds for that operation (/proc/PID/stat of the
# server and its child processes, reaped children included). Prints a Markdown table.
#
#   SVELTO=target/release/svelto bench/client.sh /path/to/fsfs-repo 3
#
# FLOOR=1 (default) adds what the client cannot go below: `tar x` of a tarball of the last
# checkout and of the last export (the same files written by tar, one thread; server "local"),
# `svelto export` into tmpfs (/dev/shm: the network and decoding without the disk), and over
# http:// curl fetching the export's send-all update-report to /dev/null (the server's
# sending alone). UPDATE=N (default 0: none) adds `svn update` against `svelto update` of a
# working copy checked out at HEAD-N (made once by svelto, copied with `cp -a` before each run,
# not timed) to HEAD (by every client: svelto-before and MORE_CLIENTS too). OPS=" " runs the
# updates alone.
#
# Every run writes into a new directory and nothing is deleted until the end: on an ext4
# without a journal (this machine's), a file created within a minute of many deletions
# makes the inode allocator skip every recently deleted inode (ext4's recently_deleted()),
# which costs up to a millisecond per created file after an `rm -rf` of a checkout and
# would be measured as the client's system time. For the same reason the script first
# syncs and waits SETTLE seconds (default 65) after whatever was deleted before it ran
# (a previous run's cleanup, say).
set -euo pipefail
repo=$(readlink -f "$1")
runs=${2:-3}
svelto=$(readlink -f "${SVELTO:-target/release/svelto}")
# The server's binary (SVELTO_SERVER; default the client's), so that two clients can be
# compared against the same server.
server_bin=$(readlink -f "${SVELTO_SERVER:-$svelto}")
servers=${SERVERS:-svnserve svelto apache svelto-http}
work=$(mktemp -d "${BENCH_TMP:-/tmp}/client-bench.XXXXXX")
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
    [[ -n ${shm:-} ]] && rm -rf "$shm"
}
trap cleanup EXIT
tick=$(getconf CLK_TCK)

# svelto_repo: the Svelto copy of REPO (made on first use).
svelto_repo() {
    local srepo=${SVELTO_REPO:-}
    if [[ -z $srepo ]]; then
        srepo=$work/svelto-root/repo
        if [[ ! -d $srepo ]]; then
            mkdir -p "$work/svelto-root"
            "$server_bin" admin create "$srepo" >/dev/null
            svnadmin dump -q "$repo" | "$server_bin" admin load -q "$srepo"
        fi
    fi
    readlink -f "$srepo"
}

# start NAME: starts the server NAME; sets url and spid.
start() {
    local port=$((20000 + RANDOM % 20000)) root
    case "$1" in
    apache)
        # As the testkit runs it (crates/svelto-testkit/src/apache.rs): root's Apache
        # serves as daemon, who must read the repository (and write its lock files).
        local conf=$work/httpd.conf mods=/usr/lib/apache2/modules user=""
        root=$(dirname "$repo")
        mkdir -p "$work/httpd-run"
        if [[ $(id -u) == 0 ]]; then
            user=$'User daemon\nGroup daemon'
            chmod -R a+rwX "$repo" "$work/httpd-run"
            chmod a+rx "$work" "$root"
        fi
        cat >"$conf" <<EOC
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile $work/httpd-run/httpd.pid
DefaultRuntimeDir $work/httpd-run
ErrorLog $work/httpd-error.log
$user
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule dav_module $mods/mod_dav.so
LoadModule dav_svn_module $mods/mod_dav_svn.so
<Location /svn>
  DAV svn
  SVNParentPath $root
</Location>
EOC
        /usr/sbin/apache2 -f "$conf" -DFOREGROUND &
        spid=$!
        url="http://127.0.0.1:$port/svn/$(basename "$repo")/trunk"
        ;;
    svelto-http)
        local srepo
        srepo=$(svelto_repo)
        "$server_bin" serve -d --foreground -r "$(dirname "$srepo")" \
            --listen-host 127.0.0.1 --listen-port $((port + 1)) \
            --http-listen "127.0.0.1:$port" --http-prefix /svn 2>"$work/svelto-http.log" &
        spid=$!
        url="http://127.0.0.1:$port/svn/$(basename "$srepo")/trunk"
        ;;
    svnserve)
        root=$(dirname "$repo")
        svnserve -d --foreground -T -r "$root" --listen-host 127.0.0.1 --listen-port "$port" &
        spid=$!
        url="svn://127.0.0.1:$port/$(basename "$repo")/trunk"
        ;;
    svelto)
        local srepo
        srepo=$(svelto_repo)
        "$server_bin" serve -d --foreground -r "$(dirname "$srepo")" \
            --listen-host 127.0.0.1 --listen-port "$port" 2>"$work/svelto-serve.log" &
        spid=$!
        url="svn://127.0.0.1:$port/$(basename "$srepo")/trunk"
        ;;
    *) echo "unknown server '$1' (svnserve, svelto, apache or svelto-http)" >&2; exit 2 ;;
    esac
    pids+=("$spid")
    local i
    for i in $(seq 50); do
        svn info "$url" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "the $1 server did not answer at $url" >&2
    exit 1
}

# cpu_ticks PID: the CPU so far of the process and its children (Apache's workers), their
# reaped children's included, in ticks.
cpu_ticks() {
    local p t=0
    for p in $1 $(pgrep -P "$1" || true); do
        t=$((t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}

n=0
files="?"
# one FILE CMD...: runs CMD in a new directory; appends "wall user sys server-cpu" to FILE.
one() {
    local name=$1; shift
    n=$((n + 1))
    local dir=$work/runs/$n t0 t1
    mkdir -p "$dir"
    t0=$(cpu_ticks "$spid")
    (cd "$dir" && /usr/bin/time -f "%e %U %S" -o "$dir.t" "$@" >/dev/null)
    t1=$(cpu_ticks "$spid")
    echo "$(cat "$dir.t") $(awk -v a="$t0" -v b="$t1" -v t="$tick" 'BEGIN {printf "%.2f", (b - a) / t}')" \
        >>"$work/$name"
    last=$dir/out
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# settle: deletes what the runs wrote, syncs and waits SETTLE seconds (see above), so that
# a medium history's checkouts (1.1 GB each) do not pile up on the disk.
settle() {
    rm -rf "$work/runs"
    mkdir -p "$work/runs"
    sync
    sleep "${SETTLE:-65}"
}

# The clients compared: svn, svelto, SVELTO_BEFORE (another svelto binary, "svelto-before"),
# and MORE_CLIENTS ("LABEL=COMMAND ...": more svelto commands, a script that sets
# SVELTO_WRITERS, say).
clients="svn svelto"
before=""
if [[ -n ${SVELTO_BEFORE:-} ]]; then
    before=$(readlink -f "$SVELTO_BEFORE")
    clients+=" svelto-before"
fi
declare -A more=()
for m in ${MORE_CLIENTS:-}; do
    more[${m%%=*}]=$(readlink -f "${m#*=}")
    clients+=" ${m%%=*}"
done
# bin CLIENT: the command of a client.
bin() {
    case "$1" in
    svn) echo svn ;;
    svelto) echo "$svelto" ;;
    svelto-before) echo "$before" ;;
    *) echo "${more[$1]}" ;;
    esac
}

echo "| server | operation | client | wall s | user s | sys s | client CPU s | server CPU s |"
echo "|---|---|---|---|---|---|---|---|"
for s in $servers; do
    start "$s"
    one "$s-warmup" svn export -q "$url" out
    head=$(svn info --show-item revision "$url")
    ops=${OPS:-checkout export}
    if [[ ${UPDATE:-0} -gt 0 ]]; then
        ops+=" update"
        rm -rf "$work/update-base"
        "$svelto" checkout -q -r $((head - UPDATE)) "$url" "$work/update-base"
    fi
    if [[ ${FLOOR:-1} == 1 ]]; then
        ops+=" export-tmpfs"
        shm=$(mktemp -d /dev/shm/client-bench.XXXXXX)
        if [[ $url == http* ]]; then
            ops+=" report"
            base=${url%/trunk}
            printf '%s' "<?xml version=\"1.0\" encoding=\"utf-8\"?><S:update-report xmlns:S=\"svn:\" send-all=\"true\"><S:src-path>/${url#http://*/}</S:src-path><S:target-revision>$head</S:target-revision><S:depth>infinity</S:depth><S:entry rev=\"$head\" depth=\"infinity\" start-empty=\"true\"></S:entry></S:update-report>" >"$work/report.xml"
        fi
    fi
    settle
    for _ in $(seq "$runs"); do
        for op in ${OPS:-checkout export}; do
            for c in $clients; do
                one "$s-$c-$op" "$(bin "$c")" "$op" -q "$url" out
                if [[ $c == svn ]]; then eval "svn_$op=\$last"; fi
                if [[ $c == svelto && $op == export ]]; then exported=$last; fi
            done
        done
        if [[ ${FLOOR:-1} == 1 && ! -f $work/export.tar && -n ${svn_checkout:-} && -n ${svn_export:-} ]]; then
            # The floor of writing the same files: tar x of svn's checkout and export.
            tar cf "$work/checkout.tar" -C "$(dirname "$svn_checkout")" out
            tar cf "$work/export.tar" -C "$(dirname "$svn_export")" out
        fi
        if [[ ${UPDATE:-0} -gt 0 ]]; then
            # (the checkouts deleted first: a medium history's would not fit beside them)
            if [[ -d ${exported:-$last} ]]; then files=$(find "${exported:-$last}" -type f | wc -l); fi
            settle
            for c in $clients; do
                wc=$work/runs/u$n
                cp -a "$work/update-base" "$wc"
                one "$s-$c-update" "$(bin "$c")" update -q "$wc"
            done
        fi
        if [[ ${FLOOR:-1} == 1 ]]; then
            rm -rf "${shm:?}/out"
            one "$s-svelto-export-tmpfs" "$svelto" export -q "$url" "$shm/out"
            if [[ $url == http* ]]; then
                one "$s-curl-report" curl -sf -o /dev/null -X REPORT -H 'Content-Type: text/xml' \
                    --data-binary "@$work/report.xml" "$base/!svn/me"
            fi
        fi
        if [[ ${UPDATE:-0} -eq 0 ]]; then
            files=$(find "${exported:-$last}" -type f | wc -l)
        fi
        settle
    done
    kill "$spid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    if [[ -n ${shm:-} ]]; then rm -rf "$shm"; fi
    for op in $ops; do
        for c in $clients curl; do
            f="$work/$s-$c-$op"
            [[ -f $f ]] || continue
            w=$(cut -d' ' -f1 "$f" | median)
            u=$(cut -d' ' -f2 "$f" | median)
            sy=$(cut -d' ' -f3 "$f" | median)
            cpu=$(awk '{print $2 + $3}' "$f" | median)
            scpu=$(cut -d' ' -f4 "$f" | median)
            echo "| $s | $op | $c | $w | $u | $sy | $cpu | $scpu |"
        done
    done
done
if [[ -f $work/export.tar ]]; then
    spid=$$
    for _ in $(seq "$runs"); do
        for op in checkout export; do
            one "local-tar-$op" tar xf "$work/$op.tar"
            settle
        done
    done
    for op in checkout export; do
        f="$work/local-tar-$op"
        echo "| local | $op (tar x) | tar | $(cut -d' ' -f1 "$f" | median) | $(cut -d' ' -f2 "$f" | median) | $(cut -d' ' -f3 "$f" | median) | $(awk '{print $2 + $3}' "$f" | median) | - |"
    done
fi
echo
echo "($runs runs each, alternating, medians; $files files in the export; servers on" \
    "127.0.0.1; $(date -u +%Y-%m-%d), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"

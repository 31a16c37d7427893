#!/usr/bin/env bash
# bench/http-static.sh REPO [ROUNDS]: what one GET per file costs a server that does nothing
# but send files: the stock client's export over HTTP against Svelto, and against nginx
# serving the same files from the page cache, beside Svelto over svn://.
#
# ra_serf exports, checks out and updates with a skelta report (the tree, no texts) and then
# one GET per file (25,106 for the medium trunk). Here nginx (one process, no request log)
# answers those GETs itself, from the tree's texts on disk (page cache warm),
# with sendfile on ("ngx-sendfile": no copy through user space) and off ("ngx-copy"), and
# passes every other request (OPTIONS, PROPFIND, the REPORT) to the Svelto server. The
# server CPU of the nginx rows is nginx's plus Svelto's for what it was passed: about the
# least any server can spend on the GETs of an export, whatever its storage. Each round
# runs each operation once against each of: svn (Svelto over svn://), http (Svelto over
# http://), ngx-sendfile, ngx-copy; server CPU is utime+stime from /proc (1/100 s ticks),
# wall the client's. Prints the medians over ROUNDS (default 5), with the ratio to the svn
# row; raw lines to WORK/raw.txt.
#
# Environment: OPS (export: `svnbench null-export TREE`; checkout: `svn checkout TREE`
# into WORK, removed after; default "export"), SVELTO_BIN (default target/release/svelto),
# TREE (trunk), WORK (scratch, default /tmp/svelto-http-static; the texts nginx serves and
# the checkouts are written there: tmpfs keeps the disk out of the checkout's wall). Needs
# nginx (apt-get install nginx-light), svn, svnbench.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME=http-static.sh
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"

[[ $# -ge 1 ]] || { echo "usage: bench/http-static.sh REPO [ROUNDS]" >&2; exit 2; }
REPO=$(cd "$1" && pwd)
ROUNDS=${2:-5}
TREE=${TREE:-trunk}
OPS=${OPS:-export}
WORK=${WORK:-/tmp/svelto-http-static}
SVELTO_BIN=${SVELTO_BIN:-$BENCH/../target/release/svelto}
for t in nginx svn svnbench; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install -y nginx-light subversion)"
done
[[ -x "$SVELTO_BIN" ]] || die "no svelto binary at $SVELTO_BIN (cargo build --release, or set SVELTO_BIN)"
rm -rf "$WORK"
mkdir -p "$WORK/root" "$WORK/nginx"
ln -s "$REPO" "$WORK/root/r"

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
HTTP_PORT=$(free_port)
declare -A NGX_PORT=([on]=$(free_port) [off]=$(free_port))
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
"$SVELTO_BIN" serve -d --foreground -r "$WORK/root" --listen-host 127.0.0.1 --listen-port 0 \
    --http-listen "127.0.0.1:$HTTP_PORT" --log-file "$WORK/svelto.log" >/dev/null 2>&1 &
SVELTO_PID=$!
PIDS+=("$SVELTO_PID")
for _ in $(seq 100); do
    grep -q "http listening" "$WORK/svelto.log" 2>/dev/null && break
    sleep 0.1
done
SVN_PORT=$(grep -o "INFO listening on 127.0.0.1:[0-9]*" "$WORK/svelto.log" | head -1 | sed 's/.*://')
[[ -n "$SVN_PORT" ]] || die "svelto serve did not start: $(cat "$WORK/svelto.log")"
HEAD=$(svn info --show-item revision "svn://127.0.0.1:$SVN_PORT/r")
# The files as the repository holds them (an export would expand keywords and translate
# line endings, and the client checks each text's checksum): a checkout's pristine texts,
# linked under their paths.
say "checking out $TREE@$HEAD: nginx serves its pristine texts"
svn checkout -q "svn://127.0.0.1:$SVN_PORT/r/$TREE@$HEAD" "$WORK/co"
python3 - "$WORK/co" "$WORK/tree" <<'EOF'
import os
import sqlite3
import sys

co, tree = sys.argv[1:]
db = sqlite3.connect(os.path.join(co, ".svn", "wc.db"))
rows = db.execute("SELECT local_relpath, checksum FROM nodes WHERE op_depth = 0 AND kind = 'file'")
for relpath, checksum in rows:
    sha1 = checksum.split("$")[2]
    dst = os.path.join(tree, relpath)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    os.link(os.path.join(co, ".svn", "pristine", sha1[:2], sha1 + ".svn-base"), dst)
EOF
rm -rf "$WORK/co"

declare -A NGX_PID
for sf in on off; do
    cat >"$WORK/nginx/$sf.conf" <<EOF
master_process off;
daemon off;
worker_processes 1;
pid $WORK/nginx/$sf.pid;
error_log $WORK/nginx/error-$sf.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile $sf;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  default_type application/octet-stream;
  upstream svelto { server 127.0.0.1:$HTTP_PORT; keepalive 8; }
  server {
    listen 127.0.0.1:${NGX_PORT[$sf]};
    # ra_serf fetches each file of the tree as /r/!svn/rvr/REV/PATH.
    location ~ "^/r/!svn/rvr/[0-9]+/$TREE/(.*)\$" {
      error_page 418 = @svelto;
      if (\$request_method != GET) { return 418; }
      alias $WORK/tree/\$1;
    }
    location / { proxy_pass http://svelto; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host \$http_host; proxy_buffering off; }
    location @svelto { proxy_pass http://svelto; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host \$http_host; proxy_buffering off; }
  }
}
EOF
    nginx -c "$WORK/nginx/$sf.conf" -p "$WORK/nginx" >"$WORK/nginx/$sf.out" 2>&1 &
    NGX_PID[$sf]=$!
    PIDS+=("${NGX_PID[$sf]}")
done
sleep 1
for sf in on off; do
    kill -0 "${NGX_PID[$sf]}" 2>/dev/null || die "nginx did not start: $(cat "$WORK/nginx/$sf.out" "$WORK/nginx/error-$sf.log")"
done

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
url() {
    case $1 in
    svn) echo "svn://127.0.0.1:$SVN_PORT/r/$TREE" ;;
    http) echo "http://127.0.0.1:$HTTP_PORT/r/$TREE" ;;
    ngx-sendfile) echo "http://127.0.0.1:${NGX_PORT[on]}/r/$TREE" ;;
    ngx-copy) echo "http://127.0.0.1:${NGX_PORT[off]}/r/$TREE" ;;
    esac
}
proc() {
    case $1 in
    ngx-sendfile) echo "${NGX_PID[on]}" ;;
    ngx-copy) echo "${NGX_PID[off]}" ;;
    *) echo "$SVELTO_PID" ;;
    esac
}
ROWS=(svn http ngx-sendfile ngx-copy)
run_op() { # OP URL
    case $1 in
    export) svnbench null-export "$2" >/dev/null ;;
    checkout)
        svn checkout -q "$2" "$WORK/wc"
        rm -rf "$WORK/wc"
        ;;
    *) die "unknown operation $1 (export, checkout)" ;;
    esac
}
say "warm-up: one export against each"
for t in "${ROWS[@]}"; do run_op export "$(url "$t")"; done
: >"$WORK/raw.txt"
for r in $(seq "$ROUNDS"); do
    for op in $OPS; do
        for t in "${ROWS[@]}"; do
            p=$(proc "$t")
            a=$(cpu "$p") s=$(cpu "$SVELTO_PID") t0=$(date +%s.%N)
            run_op "$op" "$(url "$t")"
            t1=$(date +%s.%N) b=$(cpu "$p") s2=$(cpu "$SVELTO_PID")
            other=0
            [[ $p == "$SVELTO_PID" ]] || other=$((s2 - s))
            echo "$r $op $t $((b - a)) $other $(echo "$t1 - $t0" | bc)" >>"$WORK/raw.txt"
        done
    done
done
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
col() { awk -v o="$1" -v t="$2" -v c="$3" '$2 == o && $3 == t {print $c}' "$WORK/raw.txt"; }
files=$(find "$WORK/tree" -type f | wc -l)
echo "| $TREE@$HEAD ($files files), medians of $ROUNDS | server CPU s | of which Svelto, passed requests | client wall s | CPU ÷ svn:// |"
echo "|---|---|---|---|---|"
for op in $OPS; do
    svn_cpu=$(col "$op" svn 4 | median)
    for t in "${ROWS[@]}"; do
        c=$(col "$op" "$t" 4 | median) o=$(col "$op" "$t" 5 | median) w=$(col "$op" "$t" 6 | median)
        passed=–
        [[ $t == ngx-* ]] && passed=$(awk -v o="$o" 'BEGIN {printf "%.2f", o / 100}')
        echo "| $op, $t | $(awk -v c="$c" -v o="$o" 'BEGIN {printf "%.2f", (c + o) / 100}') | $passed | $(printf %.2f "$w") | $(awk -v c="$c" -v o="$o" -v s="$svn_cpu" 'BEGIN {printf "%.1f", (c + o) / s}') |"
    done
done

#!/usr/bin/env bash
# bench/http-static.sh REPO [ROUNDS]: what one GET per file costs a server that does nothing
# but send files: the stock client's export over HTTP against Svelto, and against nginx
# serving the same files from the page cache, beside Svelto over svn://.
#
# ra_serf exports, checks out and updates with a skelta report (the tree, no texts) and then
# one GET per file (25,106 for the medium trunk). Here nginx (one process, no request log)
# answers those GETs itself, from a copy of the exported tree on disk (page cache warm),
# with sendfile on ("ngx-sendfile": no copy through user space) and off ("ngx-copy"), and
# passes every other request (OPTIONS, PROPFIND, the REPORT) to the Svelto server. The
# server CPU of the nginx rows is nginx's plus Svelto's for what it was passed: about the
# least any server can spend on the GETs of an export, whatever its storage. Each round
# runs `svnbench null-export TREE` once against each of: svn (Svelto over svn://), http
# (Svelto over http://), ngx-sendfile, ngx-copy; server CPU is utime+stime from /proc
# (1/100 s ticks), wall the client's. Prints the medians over ROUNDS (default 5), with the
# ratio to the svn row; raw lines to WORK/raw.txt.
#
# Environment: SVELTO_BIN (default target/release/svelto), TREE (trunk), WORK (scratch,
# default /tmp/svelto-http-static; the exported tree is written there). Needs nginx
# (apt-get install nginx-light), svn, svnbench.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME=http-static.sh
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"

[[ $# -ge 1 ]] || { echo "usage: bench/http-static.sh REPO [ROUNDS]" >&2; exit 2; }
REPO=$(cd "$1" && pwd)
ROUNDS=${2:-5}
TREE=${TREE:-trunk}
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
say "exporting $TREE@$HEAD for nginx"
svn export -q "svn://127.0.0.1:$SVN_PORT/r/$TREE@$HEAD" "$WORK/tree"

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
say "warm-up: one export against each"
for t in "${ROWS[@]}"; do svnbench null-export "$(url "$t")" >/dev/null; done
: >"$WORK/raw.txt"
for r in $(seq "$ROUNDS"); do
    for t in "${ROWS[@]}"; do
        p=$(proc "$t")
        a=$(cpu "$p") s=$(cpu "$SVELTO_PID") t0=$(date +%s.%N)
        svnbench null-export "$(url "$t")" >"$WORK/out.txt"
        t1=$(date +%s.%N) b=$(cpu "$p") s2=$(cpu "$SVELTO_PID")
        other=0
        [[ $p == "$SVELTO_PID" ]] || other=$((s2 - s))
        files=$(awk '/files/ {gsub(",", "", $1); print $1; exit}' "$WORK/out.txt")
        echo "$r $t $((b - a)) $other $(echo "$t1 - $t0" | bc) $files" >>"$WORK/raw.txt"
    done
done
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
col() { awk -v t="$1" -v c="$2" '$2 == t {print $c}' "$WORK/raw.txt"; }
svn_cpu=$(col svn 3 | median)
echo "| $TREE@$HEAD, null-export ($(col svn 6 | head -1) files), medians of $ROUNDS | server CPU s | of which Svelto, passed requests | client wall s | CPU ÷ svn:// |"
echo "|---|---|---|---|---|"
for t in "${ROWS[@]}"; do
    c=$(col "$t" 3 | median) o=$(col "$t" 4 | median) w=$(col "$t" 5 | median)
    passed=–
    [[ $t == ngx-* ]] && passed=$(awk -v o="$o" 'BEGIN {printf "%.2f", o / 100}')
    echo "| $t | $(awk -v c="$c" -v o="$o" 'BEGIN {printf "%.2f", (c + o) / 100}') | $passed | $(printf %.2f "$w") | $(awk -v c="$c" -v o="$o" -v s="$svn_cpu" 'BEGIN {printf "%.1f", (c + o) / s}') |"
done

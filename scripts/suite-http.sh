#!/usr/bin/env bash
# Runs Subversion 1.14.2's command-line tests over http:// against Apache httpd + mod_dav_svn
# or against `svelto serve --http-listen`.
#   SUITE=DEST/subversion/tests/cmdline scripts/suite-http.sh apache|svelto [TESTFILE...]
#   scripts/suite-http.sh compare OUT_A OUT_B
# SUITE is the suite as extracted and built by Subversion's sources (nothing of Subversion is
# built here): for example `build-suite.sh SUBVERSION_GIT_DIR DEST`, which runs
#   git --git-dir=G archive 1.14.2 subversion/tests/cmdline subversion/include | tar -x -C DEST
# and compiles the suite's three C helpers (entries-dump, atomic-ra-revprop-change,
# lock-helper) against libsvn-dev. Default TESTFILEs: every *_tests.py.
#
# The server side follows Subversion's own davautocheck.sh, reduced to what the suite needs:
# `<Location /svn-test-work/repositories>` with `SVNParentPath svn-test-work/repositories`,
# `<Location /svn-test-work/local_tmp/repos>` with `SVNPath` (the pristine Greek tree that
# read-only tests use) and `/svn-test-work/local_tmp/trojan` alike, `AuthType Basic` with the users jrandom, jconstant (rayjandom) and
# __dumpster__, `Require valid-user`, `AuthzSVNAccessFile svn-test-work/authz` (the file the
# suite writes), `SVNListParentPath On`, and the REDIRECT-PERM-/REDIRECT-TEMP- redirects.
# The /authz-test-work/*, /ddt-test-work (mod_dontdothat), /fsdavroot and /nodavroot locations
# are left out: their tests fail alike against both servers.
#
# svelto: `svelto serve -d --http-listen` with --http-prefix /svn-test-work/repositories
# over svn-test-work/repositories (SVNParentPath), --http-auth-file (the same htpasswd file),
# and --config-file holding `anon-access = none` (Require valid-user), `auth-access = write`,
# the realm and `authz-db` = svn-test-work/authz. Svelto maps one prefix per process, so a
# second `svelto serve` serves /svn-test-work/local_tmp (the SVNPath locations, repository
# names `repos` and `trojan`) and nginx in front routes the two paths and does the redirects: nginx only
# forwards (no buffering, keep-alive to the servers). `svnadmin` and `svnlook` are `svelto
# admin`/`svelto look` (FSFS-only options dropped), as in run-suite.sh.
#
# As root, Apache refuses to serve and its children run as `daemon`, who must write the
# repositories the suite creates and run the hooks it writes (mode 0700): so the suite, its
# Python (/usr/bin/python3, whose path the hooks name), Svelto and nginx run as `daemon`
# too, and SUITE is handed to `daemon` (chown -R).
#
# A fresh server (or servers) serves each test file. Logs: $OUT (default ./suite-out/http-WHICH)
# /FILE.log (the suite's output), server logs beside them; per-file counts, then a last line
# 'N passed, M failed'. `scripts/suite-http.sh compare OUT_A OUT_B` lists the tests whose
# outcome differs between two runs (docs/conformance.md, HTTP section, has the results).
set -u
which=${1:-apache}; shift || true
if [ "$which" = compare ]; then
    # compare A B: the tests whose outcome differs between two runs' logs (A/FILE.log, B/FILE.log)
    a=${1:?compare needs two output directories}; b=${2:?compare needs two output directories}
    for d in "$a" "$b"; do
        grep -h -E '^(PASS|FAIL|XFAIL|XPASS|SKIP):' "$d"/*_tests.py.log | sed "s#^#$d #"
    done | awk -v a="$a" '{k=$3" "$4; sub(/:$/,"",$2); if ($1==a) x[k]=$2; else y[k]=$2}
        END {for (k in x) if (!(k in y)) print k" "x[k]" -> absent"; else if (x[k] != y[k]) print k" "x[k]" -> "y[k]
             for (k in y) if (!(k in x)) print k" absent -> "y[k]}' | sort -V
    exit 0
fi
case "$which" in apache|svelto) ;; *) echo "usage: SUITE=... $0 apache|svelto [TESTFILE...]" >&2; exit 2;; esac
suite=$(realpath "${SUITE:?set SUITE to the extracted subversion/tests/cmdline}")
out=$(realpath -m "${OUT:-suite-out/http-$which}"); mkdir -p "$out"
svelto=$(realpath -m "${SVELTO:-target/release/svelto}")
mods=/usr/lib/apache2/modules
python=${PYTHON:-/usr/bin/python3}
as=(); user=""
if [ "$(id -u)" = 0 ]; then
    as=("$(command -v runuser)" -u daemon --); user=$'User daemon\nGroup daemon'
    chown -R daemon:daemon "$suite"
fi
for need in htpasswd python3 svn; do
    command -v "$need" >/dev/null || { echo "$need is required (scripts/setup installs it)" >&2; exit 2; }
done
if [ "$which" = apache ]; then
    [ -x /usr/sbin/apache2 ] && [ -f $mods/mod_dav_svn.so ] && [ -f $mods/mod_authz_svn.so ] \
        || { echo "Apache httpd with mod_dav_svn and mod_authz_svn is required (apt-get install apache2 libapache2-mod-svn)" >&2; exit 2; }
else
    [ -x "$svelto" ] || { echo "no svelto binary at $svelto (set SVELTO)" >&2; exit 2; }
    command -v nginx >/dev/null || { echo "nginx is required in front of svelto (apt-get install nginx-light)" >&2; exit 2; }
fi
cfg=$(mktemp -d); chmod 755 "$cfg"; [ ${#as[@]} = 0 ] || chown daemon:daemon "$cfg"
bindir=$cfg/bin; mkdir "$bindir"
for b in svn svnsync svnrdump svnmucc svnversion svndumpfilter svnfsfs svnbench svnauthz svnauthz-validate; do
    ln -s "/usr/bin/$b" "$bindir/$b"
done
# svneditor.py and the hooks start `python` from PATH: the one `daemon` may run
ln -s "$python" "$bindir/python"; ln -s "$python" "$bindir/python3"
if [ "$which" = svelto ]; then
    # the suite passes svnadmin create FSFS options; they do not apply to Svelto
    cat > "$bindir/svnadmin" <<EOS
#!/bin/bash
a=(); for x in "\$@"; do case "\$x" in --compatible-version=*|--fs-type=*|--pre-1.*-compatible) ;; *) a+=("\$x");; esac; done
exec "$svelto" admin "\${a[@]}"
EOS
    printf '#!/bin/sh\nexec "%s" look "$@"\n' "$svelto" > "$bindir/svnlook"
    chmod +x "$bindir/svnadmin" "$bindir/svnlook"
else
    ln -s /usr/bin/svnadmin "$bindir/svnadmin"; ln -s /usr/bin/svnlook "$bindir/svnlook"
fi
htpasswd -bcB "$cfg/users" jrandom rayjandom 2>/dev/null
htpasswd -bB "$cfg/users" jconstant rayjandom 2>/dev/null
htpasswd -bB "$cfg/users" __dumpster__ __loadster__ 2>/dev/null
htpasswd -bB "$cfg/users" JRANDOM rayjandom 2>/dev/null
htpasswd -bB "$cfg/users" JCONSTANT rayjandom 2>/dev/null
work=$suite/svn-test-work
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

start_apache() {
    mkdir -p "$cfg/run"
    cat > "$cfg/httpd.conf" <<EOF
ServerName localhost
Listen 127.0.0.1:$port
PidFile $cfg/run/httpd.pid
DefaultRuntimeDir $cfg/run
ErrorLog $out/$f.server.log
LogLevel warn
$user
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authn_core_module $mods/mod_authn_core.so
LoadModule authn_file_module $mods/mod_authn_file.so
LoadModule auth_basic_module $mods/mod_auth_basic.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule authz_user_module $mods/mod_authz_user.so
LoadModule alias_module $mods/mod_alias.so
LoadModule dav_module $mods/mod_dav.so
LoadModule dav_svn_module $mods/mod_dav_svn.so
LoadModule authz_svn_module $mods/mod_authz_svn.so
StartServers 2
ThreadsPerChild 8
MaxRequestWorkers 32
<Location /svn-test-work/repositories>
  DAV svn
  AuthType Basic
  AuthName "Subversion Repository"
  AuthUserFile $cfg/users
  SVNListParentPath On
  AuthzSVNAccessFile $work/authz
  SVNParentPath $work/repositories
  Require valid-user
</Location>
<Location /svn-test-work/local_tmp/repos>
  DAV svn
  AuthType Basic
  AuthName "Subversion Repository"
  AuthUserFile $cfg/users
  AuthzSVNAccessFile $work/authz
  SVNPath $work/local_tmp/repos
  Require valid-user
</Location>
<Location /svn-test-work/local_tmp/trojan>
  DAV svn
  AuthType Basic
  AuthName "Subversion Repository"
  AuthUserFile $cfg/users
  AuthzSVNAccessFile $work/authz
  SVNPath $work/local_tmp/trojan
  Require valid-user
</Location>
RedirectMatch permanent ^/svn-test-work/repositories/REDIRECT-PERM-(.*)\$ /svn-test-work/repositories/\$1
RedirectMatch           ^/svn-test-work/repositories/REDIRECT-TEMP-(.*)\$ /svn-test-work/repositories/\$1
EOF
    /usr/sbin/apache2 -f "$cfg/httpd.conf" -DFOREGROUND >> "$out/$f.server.log" 2>&1 & pids=($!)
    wait_port "$port"
}

start_svelto() {
    local pa pb
    pa=$(free_port); pb=$(free_port)
    "${as[@]}" mkdir -p "$work/repositories" "$work/local_tmp"
    cat > "$cfg/svnserve.conf" <<EOF
[general]
anon-access = none
auth-access = write
realm = Subversion Repository
authz-db = $work/authz
EOF
    local common=(-d --foreground --listen-host 127.0.0.1 --listen-port 0 --http-auth-file "$cfg/users" --config-file "$cfg/svnserve.conf")
    "${as[@]}" "$svelto" serve "${common[@]}" -r "$work/repositories" --http-listen "127.0.0.1:$pa" \
        --http-prefix /svn-test-work/repositories >> "$out/$f.server.log" 2>&1 & pids=($!)
    "${as[@]}" "$svelto" serve "${common[@]}" -r "$work/local_tmp" --http-listen "127.0.0.1:$pb" \
        --http-prefix /svn-test-work/local_tmp >> "$out/$f.server-tmp.log" 2>&1 & pids+=($!)
    cat > "$cfg/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $cfg/nginx.pid;
error_log stderr warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $cfg/nginx-body;
  proxy_temp_path $cfg/nginx-proxy;
  fastcgi_temp_path $cfg/nginx-fastcgi;
  uwsgi_temp_path $cfg/nginx-uwsgi;
  scgi_temp_path $cfg/nginx-scgi;
  client_max_body_size 0;
  proxy_request_buffering off;
  proxy_buffering off;
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_set_header Host \$http_host;
  proxy_read_timeout 600s;
  proxy_pass_request_headers on;
  underscores_in_headers on;
  upstream parent { server 127.0.0.1:$pa; keepalive 16; }
  upstream tmp { server 127.0.0.1:$pb; keepalive 16; }
  server {
    listen 127.0.0.1:$port;
    server_name localhost;
    location ~ ^/svn-test-work/repositories/REDIRECT-PERM-(.*)\$ { return 301 http://\$http_host/svn-test-work/repositories/\$1; }
    location ~ ^/svn-test-work/repositories/REDIRECT-TEMP-(.*)\$ { return 302 http://\$http_host/svn-test-work/repositories/\$1; }
    location /svn-test-work/local_tmp/ { proxy_pass http://tmp; }
    location / { proxy_pass http://parent; }
  }
}
EOF
    wait_port "$pa"; wait_port "$pb"
    "${as[@]}" nginx -c "$cfg/nginx.conf" >> "$out/$f.nginx.log" 2>&1 & pids+=($!)
    wait_port "$port"
}

cd "$suite" || exit 2
rm -rf svn-test-work
files=("$@"); [ ${#files[@]} -gt 0 ] || mapfile -t files < <(ls ./*_tests.py | sed 's#^\./##')
for f in "${files[@]}"; do
    port=$(free_port); : > "$out/$f.server.log"
    "${as[@]}" mkdir -p svn-test-work
    "start_$which" || echo "$f: the server did not start (see $out/$f.server.log)" >&2
    PATH=$bindir:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin timeout 2400 "${as[@]}" "$python" "$f" --bin="$bindir" --url="http://127.0.0.1:$port" --http-library=serf > "$out/$f.log" 2>&1
    p=$(grep -c '^PASS:' "$out/$f.log"); x=$(grep -c '^FAIL:' "$out/$f.log")
    xf=$(grep -c '^XFAIL:' "$out/$f.log"); s=$(grep -c '^SKIP:' "$out/$f.log")
    echo "$f PASS=$p FAIL=$x XFAIL=$xf SKIP=$s"
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
done | tee "$out/summary.txt"
rm -rf "$cfg"
awk '{for(i=2;i<=NF;i++){split($i,a,"=");c[a[1]]+=a[2]}} END{printf "%d passed, %d failed\n", c["PASS"], c["FAIL"]}' "$out/summary.txt"

# shellcheck shell=bash
# Sourced by bench/serve.sh and bench/commit.sh: starting Apache httpd with mod_dav_svn
# from a generated configuration, finding the port a server listens on, and reading a
# server's CPU time (its children's included) from /proc. The sourcing script has
# sourced common.sh (say, die).

APACHE_BIN=/usr/sbin/apache2
APACHE_MODS=/usr/lib/apache2/modules
# The seeds' "fast" Apache: SVNInMemoryCacheSize is a server-wide directive; the rest go
# inside the <Location>.
APACHE_FAST_SERVER="SVNInMemoryCacheSize 1048576"
APACHE_FAST="SVNCacheFullTexts on
  SVNCacheTextDeltas on
  SVNCacheRevProps on
  SVNBlockRead on
  SVNAllowBulkUpdates Prefer"

# need_apache: dies unless Apache httpd, its event MPM and mod_dav_svn are installed.
need_apache() {
    local f
    for f in "$APACHE_BIN" "$APACHE_MODS/mod_dav_svn.so" "$APACHE_MODS/mod_mpm_event.so"; do
        [[ -e "$f" ]] || die "$f not found (apt-get install -y apache2 libapache2-mod-svn)"
    done
}
apache_version() { "$APACHE_BIN" -v 2>/dev/null | sed -n 's|^Server version: Apache/\([^ ]*\).*|\1|p'; }

# free_port: a TCP port nothing listens on (for Apache, which cannot be given port 0).
free_port() {
    local p lo=20000 hi=50000 eph
    # Below the kernel's ephemeral range where there is room: a port the range hands to an
    # outgoing connection between this check and the server's bind fails the bind (seen
    # on a machine busy with other clients).
    eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    ((eph > lo + 2000)) && hi=$eph
    for _ in $(seq 1 200); do
        p=$((lo + RANDOM % (hi - lo)))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# port_of PID: the TCP port the process listens on (from /proc, no tools needed).
port_of() {
    local pid=$1 inodes hex
    inodes=$(find "/proc/$pid/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | sed 's/socket:\[\(.*\)\]/\1/')
    [[ -n "$inodes" ]] || return 1
    hex=$(awk -v ino=" $(echo "$inodes" | tr '\n' ' ')" '$4 == "0A" && index(ino, " " $10 " ") { split($2, a, ":"); print a[2]; exit }' /proc/net/tcp)
    [[ -n "$hex" ]] || return 1
    echo $((16#$hex))
}

# http_port_of FILE: the port `svelto serve --http-listen` announced on its standard error.
http_port_of() { sed -n 's/^.*http listening on .*:\([0-9]*\)$/\1/p' "$1" 2>/dev/null | head -n 1; }

# ticks PID: CPU ticks (user+system) of the process, of its reaped children (cutime,
# cstime) and of its live or zombie children: a forking svnserve's connections and
# Apache's children count.
ticks() {
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v p="$1" '
        { id = $1; sub(/^.*\) /, ""); if (id == p || $2 == p) t += $12 + $13 + $14 + $15 }
        END { print t + 0 }'
}

# open_to_daemon PATH...: as root, Apache's children run as daemon, who must read and
# write the repositories (FSFS's lock files, new revisions): the paths become writable by
# all, their parents searchable.
open_to_daemon() {
    [[ $(id -u) == 0 ]] || return 0
    local p d
    for p in "$@"; do
        chmod -R a+rwX "$p"
        d=$p
        while [[ $d != / ]]; do d=$(dirname "$d"); chmod a+x "$d" 2>/dev/null || true; done
    done
}

# apache_conf S ROOT PORT DIR [PASSWD]: writes DIR/httpd.conf, Apache serving ROOT as
# SVNParentPath at / on 127.0.0.1:PORT; S apache-fast adds the seeds' "fast" directives.
# With PASSWD, every request must log in (AuthType Basic, AuthUserFile PASSWD, Require
# valid-user). The caller makes the repositories and DIR readable (open_to_daemon).
apache_conf() {
    local s=$1 root=$2 port=$3 dir=$4 passwd=${5:-} user="" fast="" fast_server="" auth="" mods=""
    mkdir -p "$dir/run"
    if [[ $(id -u) == 0 ]]; then
        # Apache will not serve as root.
        user="User daemon
Group daemon"
    fi
    [[ $s == apache-fast ]] && fast=$APACHE_FAST fast_server=$APACHE_FAST_SERVER
    if [[ -n "$passwd" ]]; then
        mods="LoadModule auth_basic_module $APACHE_MODS/mod_auth_basic.so
LoadModule authn_core_module $APACHE_MODS/mod_authn_core.so
LoadModule authn_file_module $APACHE_MODS/mod_authn_file.so
LoadModule authz_user_module $APACHE_MODS/mod_authz_user.so"
        auth="AuthType Basic
  AuthName \"bench\"
  AuthUserFile $passwd
  Require valid-user"
    fi
    cat >"$dir/httpd.conf" <<EOC
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile $dir/run/httpd.pid
DefaultRuntimeDir $dir/run
ErrorLog $dir/error.log
LogLevel warn
$user
LoadModule mpm_event_module $APACHE_MODS/mod_mpm_event.so
LoadModule authz_core_module $APACHE_MODS/mod_authz_core.so
$mods
LoadModule dav_module $APACHE_MODS/mod_dav.so
LoadModule dav_svn_module $APACHE_MODS/mod_dav_svn.so
$fast_server
<Location />
  DAV svn
  SVNParentPath $root
  $fast
  $auth
</Location>
EOC
}

# apache_start DIR STDERR: starts Apache with DIR/httpd.conf (apache_conf) in the
# background and waits until it listens; sets APACHE_PID and APACHE_PORT. A port taken
# between free_port and Apache's bind is replaced by another (up to 5 times). Dies with
# its logs otherwise.
apache_start() {
    local dir=$1 err=$2 port i try
    port=$(sed -n 's/^Listen 127.0.0.1:\([0-9]*\)$/\1/p' "$dir/httpd.conf")
    for try in 1 2 3 4 5; do
        "$APACHE_BIN" -DFOREGROUND -f "$dir/httpd.conf" 2>"$err" &
        APACHE_PID=$!
        for i in $(seq 1 600); do
            kill -0 "$APACHE_PID" 2>/dev/null || break
            # Listening, and Apache itself (its pid file is written once it has bound).
            if [[ -s "$dir/run/httpd.pid" && "$(cat "$dir/run/httpd.pid" 2>/dev/null)" == "$APACHE_PID" ]] &&
                (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                APACHE_PORT=$port
                return 0
            fi
            sleep 0.1
        done
        wait "$APACHE_PID" 2>/dev/null || true
        grep -q "Address already in use" "$err" 2>/dev/null || break
        port=$(free_port) || break
        say "Apache's port was taken meanwhile; trying $port (attempt $((try + 1)))"
        sed -i "s/^Listen 127.0.0.1:[0-9]*$/Listen 127.0.0.1:$port/" "$dir/httpd.conf"
    done
    cat "$err" "$dir/error.log" >&2 2>/dev/null || true
    die "Apache ($dir/httpd.conf) did not start listening"
}

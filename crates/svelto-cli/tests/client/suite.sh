#!/usr/bin/env bash
# Subversion 1.14.2's command-line suite against svnserve, twice per test file: with the
# stock `svn`, then with suite-svn.py in front of it (every `svn checkout` the tests make
# done by `svelto checkout`); prints per test file the tests whose outcome differs.
#
#   SVELTO=target/release/svelto SUITE=/work/svn-suite \
#       crates/svelto-cli/tests/client/suite.sh checkout_tests.py update_tests.py ...
#
# FILE_TIMEOUT (3600): seconds each side of a test file may take.
# SUITE (a built copy of ../shared/suite) is copied into WORK (default a new directory
# under /tmp, deleted at the end unless KEEP=1); logs go to OUT (default
# ./suite-out/client): FILE.stock.log, FILE.svelto.log, FILE.wrap.log (which checkouts
# Svelto made, which went to the stock client and why), summary.txt.
set -u
here=$(dirname "$(readlink -f "$0")")
src=$(readlink -f "${SUITE:?set SUITE to a built copy of the suite (the directory holding subversion/)}")
svelto=$(readlink -f "${SVELTO:-target/release/svelto}")
[ -x "$svelto" ] || { echo "no svelto binary at $svelto (set SVELTO)" >&2; exit 2; }
for t in svn svnserve svnadmin python3; do
    command -v "$t" >/dev/null || { echo "suite.sh needs $t (Debian: subversion, python3)" >&2; exit 2; }
done
out=$(readlink -f -m "${OUT:-suite-out/client}"); mkdir -p "$out"
work=$(mktemp -d "${WORK:-/tmp}/client-suite.XXXXXX")
cleanup() { [ "${KEEP:-0}" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT
cp -a "$src/." "$work/"
suite=$work/subversion/tests/cmdline
[ -d "$suite" ] || { echo "no subversion/tests/cmdline in $src" >&2; exit 2; }
for side in stock svelto; do
    mkdir -p "$work/bin-$side"
    for b in svn svnadmin svnlook svnsync svnrdump svnmucc svnversion svndumpfilter svnfsfs svnbench svnauthz svnauthz-validate; do
        [ -e "/usr/bin/$b" ] && ln -s "/usr/bin/$b" "$work/bin-$side/$b"
    done
done
rm "$work/bin-svelto/svn"
cp "$here/suite-svn.py" "$work/bin-svelto/svn"
chmod +x "$work/bin-svelto/svn"

files=("$@"); [ ${#files[@]} -gt 0 ] || files=(checkout_tests.py update_tests.py basic_tests.py)
cd "$suite" || exit 2
: >"$out/summary.txt"
for f in "${files[@]}"; do
    for side in stock svelto; do
        rm -rf svn-test-work
        port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
        svnserve -d --foreground -T -r "$suite" --listen-host 127.0.0.1 --listen-port "$port" \
            >>"$out/svnserve.log" 2>&1 &
        spid=$!
        for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
        : >"$out/$f.wrap.log"
        SVELTO="$svelto" SVELTO_WRAP_LOG="$out/$f.wrap.log" \
            timeout "${FILE_TIMEOUT:-3600}" python3 "$f" --bin="$work/bin-$side" --url="svn://127.0.0.1:$port" \
            >"$out/$f.$side.log" 2>&1
        kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
    done
    count() { grep -c "^$1:" "$out/$f.$2.log"; }
    outcomes() { grep -E '^(PASS|FAIL|XFAIL|XPASS|SKIP):' "$out/$f.$1.log" | sed 's/  */ /g' | sort -k3; }
    echo "$f stock PASS=$(count PASS stock) FAIL=$(count FAIL stock)" \
        "svelto PASS=$(count PASS svelto) FAIL=$(count FAIL svelto)" \
        "checkouts by svelto=$(grep -c '^svelto' "$out/$f.wrap.log") by svn=$(grep -c '^stock' "$out/$f.wrap.log")" |
        tee -a "$out/summary.txt"
    diff <(outcomes stock) <(outcomes svelto) | grep '^[<>]' | tee -a "$out/summary.txt"
done

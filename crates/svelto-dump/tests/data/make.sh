#!/bin/sh
# Regenerates the dumpfile fixtures in this directory with the real Subversion tools.
#
#   sh crates/svelto-dump/tests/data/make.sh
#
# Builds a tiny repository through file:// URLs (adds, properties, a copy, a delete,
# a replace, a binary file, an empty file, a non-ASCII path), then writes:
#   full.dump         svnadmin dump                       (format 2)
#   deltas.dump       svnadmin dump --deltas              (format 3)
#   incremental.dump  svnadmin dump --incremental -r 2:HEAD
#   rdump.dump        svnrdump dump file://...            (format 3, svnrdump's header order)
# Revision dates are pinned (a pre-revprop-change hook allows it) so the outputs only
# change when Subversion's writer does; the UUID is pinned too.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
for tool in svnadmin svnrdump svn svnmucc; do
    command -v "$tool" >/dev/null || { echo "make.sh: $tool is not installed" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LANG=C.UTF-8 LC_ALL=C.UTF-8
repo="$work/repo"
url="file://$repo"
cfg="$work/config"
mkdir "$cfg"
svn_() { svn --config-dir "$cfg" --non-interactive "$@"; }
mucc() { svnmucc --config-dir "$cfg" --non-interactive --username svelto -U "$url" "$@" >/dev/null; }

svnadmin create "$repo"
svnadmin setuuid "$repo" 3f1b5e7a-9c2d-4e8f-a1b0-5d6c7e8f9a0b
printf '#!/bin/sh\nexit 0\n' > "$repo/hooks/pre-revprop-change"
chmod +x "$repo/hooks/pre-revprop-change"

printf 'hello\nworld\n' > "$work/hello.txt"
printf '' > "$work/empty.txt"
# Every byte value, twice, so the file is binary by any rule.
awk 'BEGIN { for (r = 0; r < 2; r++) for (i = 0; i < 256; i++) printf "%c", i }' > "$work/blob.bin"
printf 'line 1\nline 2\nline 3\nline 4\n' > "$work/lines.txt"
printf 'line 1\nline two\nline 3\nline 4\nline 5\n' > "$work/lines2.txt"
printf 'replacement\n' > "$work/repl.txt"

# r1: skeleton, a text file with properties, an empty file, a binary file.
mucc -m "Initial layout" \
    mkdir trunk mkdir branches mkdir tags \
    put "$work/hello.txt" trunk/hello.txt \
    propset svn:eol-style native trunk/hello.txt \
    propset user:note "multi
line value" trunk/hello.txt \
    put "$work/empty.txt" trunk/empty.txt \
    put "$work/blob.bin" trunk/blob.bin \
    propset svn:mime-type application/octet-stream trunk/blob.bin \
    put "$work/lines.txt" trunk/lines.txt \
    put "$work/hello.txt" "trunk/sp ace ü.txt" \
    propset svn:ignore "*.o
*.tmp
" trunk
# r2: text change, property change and property deletion.
mucc -m "Edit lines, change props" \
    put "$work/lines2.txt" trunk/lines.txt \
    propset user:note "changed" trunk/hello.txt \
    propdel svn:eol-style trunk/hello.txt
# r3: branch (directory copy) and a file copy with a text change.
mucc -m "Branch" \
    cp 2 trunk branches/b1 \
    cp 2 trunk/hello.txt trunk/hello-copy.txt \
    put "$work/repl.txt" trunk/hello-copy.txt
# r4: delete a file and a directory.
mucc -m "Delete" rm trunk/empty.txt rm tags
# r5: replace a file with a copy (replace-with-history) and another without history.
mucc -m "Replace" \
    rm trunk/hello.txt cp 1 trunk/lines.txt trunk/hello.txt \
    rm branches/b1/blob.bin put "$work/repl.txt" branches/b1/blob.bin
# r6: a property-only change on a directory, and a revision without a log message.
mucc -m "" propset user:dirprop "x" branches/b1

i=0
while [ $i -le 6 ]; do
    svn_ propset --revprop -r $i svn:date "2020-01-0$((i + 1))T12:00:00.000000Z" "$url" >/dev/null
    i=$((i + 1))
done

svnadmin dump -q "$repo" > "$here/full.dump"
svnadmin dump -q --deltas "$repo" > "$here/deltas.dump"
svnadmin dump -q --incremental -r 2:HEAD "$repo" > "$here/incremental.dump"
svnrdump dump -q --config-dir "$cfg" --non-interactive "$url" > "$here/rdump.dump"
echo "make.sh: wrote $(ls "$here"/*.dump | wc -l) dumps into $here"

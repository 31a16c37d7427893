#!/bin/sh
# Regenerates the svndiff fixtures in this directory with the stock Subversion tools.
#
#   dump-deltas.dump   `svnadmin dump --deltas` of the repository below: every file
#                      version after the first is an svndiff0 stream against the previous one.
#   fsfs7/revs/N       FSFS format 7 (`--compatible-version=1.9`) revision files: text
#                      representations are svndiff1 (zlib) `DELTA` reps.
#   fsfs8/revs/N       FSFS format 8 (1.10+ default) revision files: svndiff2 (LZ4) reps.
#
# The three revisions: r1 adds small.txt (~50 KB of text), big.txt (~230 KB of text, so
# three windows), bin.dat (gzip output) and empty.txt; r2 inserts, deletes and changes lines
# in both texts, patches and extends bin.dat and gives empty.txt content; r3 moves a block of
# big.txt to its start. The tests check every reconstructed text against the MD5/SHA-1 that
# Subversion recorded beside it.
#
# Needs svnadmin, svnmucc, awk, sed, gzip, dd. Run from anywhere: sh tests/data/make.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Deterministic text: numbered lines with pseudo-random words (LCG exact in double precision).
lines() { # count seed
    awk -v n="$1" -v s="$2" 'BEGIN {
        split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu", w, " ");
        for (i = 1; i <= n; i++) {
            s = (s * 69069 + 1) % 4294967296; a = int(s / 65536) % 12 + 1;
            s = (s * 69069 + 1) % 4294967296; b = int(s / 65536) % 12 + 1;
            s = (s * 69069 + 1) % 4294967296;
            printf "%06d %s %s %d: the quick brown fox jumps over the lazy dog\n", i, w[a], w[b], int(s / 65536);
        }
    }'
}

lines 700 1 > small.v1
sed -e '3i this line was inserted near the start' -e '300,309d' -e '500s/fox/cat/' small.v1 > small.v2

lines 3200 2 > big.v1
lines 400 3 > block.txt
{ sed -n '1,1500p' big.v1; cat block.txt; sed -n '1501,2000p' big.v1; sed -n '2500,3200p' big.v1; } > big.v2
{ sed -n '2801,3100p' big.v2; sed -n '1,2800p' big.v2; sed -n '3101,$p' big.v2; } > big.v3

gzip -n -9 -c big.v1 > bin.v1
cp bin.v1 bin.v2
printf 'PATCHED BYTES IN THE MIDDLE OF A BINARY FILE' | dd of=bin.v2 bs=1 seek=20000 conv=notrunc 2>/dev/null
head -c 3000 small.v1 >> bin.v2

: > empty.v1
printf 'hello\n' > empty.v2

for name in fsfs7 fsfs8; do
    if [ "$name" = fsfs7 ]; then
        svnadmin create --compatible-version=1.9 "$name"
    else
        svnadmin create "$name"
    fi
    url="file://$work/$name"
    svnmucc -U "$url" -m r1 put small.v1 small.txt put big.v1 big.txt put bin.v1 bin.dat \
        put empty.v1 empty.txt > /dev/null
    svnmucc -U "$url" -m r2 put small.v2 small.txt put big.v2 big.txt put bin.v2 bin.dat \
        put empty.v2 empty.txt > /dev/null
    svnmucc -U "$url" -m r3 put big.v3 big.txt > /dev/null
    rm -rf "$here/$name"
    mkdir -p "$here/$name/revs"
    cp "$name"/db/revs/0/1 "$name"/db/revs/0/2 "$name"/db/revs/0/3 "$here/$name/revs/"
    chmod u+w "$here/$name"/revs/*
done
svnadmin dump --deltas -q fsfs8 > "$here/dump-deltas.dump"
ls -l "$here"/dump-deltas.dump "$here"/fsfs7/revs "$here"/fsfs8/revs

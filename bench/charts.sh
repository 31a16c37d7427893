#!/usr/bin/env bash
# bench/charts.sh DIR: PNG charts from the medians that serve.sh and run write in DIR.
#
#   DIR/serve-SIZE.tsv  ->  DIR/serve-SIZE-ratio.png: per operation, Svelto's median wall
#                           time divided by the best svnserve configuration's, hot and cold
#   DIR/scaling.tsv     ->  DIR/scaling-OP.png: median wall time against the number of
#                           revisions in the history, one line per server
#
# Uses gnuplot (Debian's gnuplot-nox, installed when missing).
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME=charts.sh
# shellcheck source=bench/common.sh
source "$BENCH/common.sh"
DIR=${1:-}
[[ -d "$DIR" ]] || { echo "usage: bench/charts.sh DIR" >&2; exit 2; }
need_package gnuplot gnuplot-nox

# The medians file's columns: size mode op label server median min max server_cpu peak_mb.
for tsv in "$DIR"/serve-*.tsv; do
    [[ -e "$tsv" ]] || continue
    png=${tsv%.tsv}-ratio.png
    dat=$(mktemp)
    # One line per operation: label, hot ratio, cold ratio (NaN when not run).
    awk -F'\t' '
        $5 == "svelto" { sv[$2 "," $3] = $6; next }
        $5 ~ /^svnserve/ { k = $2 "," $3; if (!(k in best) || $6 < best[k]) best[k] = $6 }
        !($3 in seen) { seen[$3] = 1; order[++n] = $3; label[$3] = $4 }
        END {
            for (i = 1; i <= n; i++) {
                op = order[i]; printf "\"%s\"", label[op]
                for (m = 1; m <= 2; m++) {
                    k = (m == 1 ? "hot" : "cold") "," op
                    if ((k in sv) && (k in best) && best[k] > 0) printf " %.3f", sv[k] / best[k]; else printf " NaN"
                }
                printf "\n"
            }
        }' "$tsv" >"$dat"
    size=$(cut -f1 "$tsv" | head -n 1)
    bars="\"$dat\" using 2:xtic(1) title \"hot\" lc rgb \"#1f77b4\""
    if grep -q $'\tcold\t' "$tsv"; then
        bars="$bars"', "" using 3 title "cold (restart, page cache dropped)" lc rgb "#ff7f0e"'
    fi
    gnuplot <<EOF
set terminal pngcairo size 1200,650 font ",10"
set output "$png"
set title "svelto serve vs the best svnserve configuration per operation ($size): median wall time ratio, below 1 = Svelto faster"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 left noenhanced
set ylabel "Svelto ÷ best svnserve"
set yrange [0:*]
set grid ytics
set key outside bottom center horizontal
set bmargin 9
set rmargin 8
plot $bars, 1 with lines dt 2 lc rgb "black" title "equal"
EOF
    rm -f "$dat"
    say "wrote $png"
done

# scaling.tsv columns: revisions op label server median_wall.
if [[ -s "$DIR/scaling.tsv" ]]; then
    cut -f2 "$DIR/scaling.tsv" | sort -u | while read -r op; do
        png=$DIR/scaling-$op.png
        label=$(awk -F'\t' -v op="$op" '$2 == op { print $3; exit }' "$DIR/scaling.tsv" | sed 's/ r[0-9]*→r[0-9]*//')
        plots=""
        tmpd=$(mktemp -d)
        while read -r s; do
            awk -F'\t' -v op="$op" -v s="$s" '$2 == op && $4 == s { print $1, $5 }' "$DIR/scaling.tsv" | sort -n >"$tmpd/$s"
            plots="$plots${plots:+, }\"$tmpd/$s\" using 1:2 with linespoints lw 2 title \"$s\""
        done < <(awk -F'\t' -v op="$op" '$2 == op { print $4 }' "$DIR/scaling.tsv" | sort -u)
        gnuplot <<EOF
set terminal pngcairo size 800,500 font ",10"
set output "$png"
set title "$label: median wall time against history length" noenhanced
set xlabel "revisions in the history"
set ylabel "seconds"
set logscale x
set grid
set key top left noenhanced
plot $plots
EOF
        rm -rf "$tmpd"
        say "wrote $png"
    done
fi

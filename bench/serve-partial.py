#!/usr/bin/env python3
"""bench/serve-partial.py RAW.tsv: the table of an interrupted bench/serve.sh run, from the
raw records it collects in SCRATCH/serve.tsv (copy the file before the run is restarted:
serve.sh empties it when it starts).

Columns of a record: mode (hot, cold, first), run (0 = the warm-up), server, operation,
client wall s, client user s, client sys s, client max RSS KB, server CPU s, server RSS
before, after and peak KB, failed clients. Prints a markdown table of the hot runs 1..N:
per server the median server CPU s (median client wall s) and the peak resident MB, the
floor's wall alone, and the ratios svelto / svnserve-T, svelto-http / svelto and
svelto-http / apache-fast of the server CPU medians. Servers missing from the file show "-".
"""
import collections
import statistics
import sys

SERVERS = ["svnserve-T", "svelto", "apache", "apache-fast", "svelto-http", "floor"]
RATIOS = [("svelto", "svnserve-T"), ("svelto-http", "svelto"), ("svelto-http", "apache-fast")]


def main(path):
    runs = collections.defaultdict(list)
    ops = []
    with open(path) as f:
        for line in f:
            r = line.rstrip("\n").split("\t")
            if len(r) < 13:
                continue
            mode, run, server, op = r[0], int(r[1]), r[2], r[3]
            if op not in ops:
                ops.append(op)
            if mode == "hot" and run > 0:
                runs[(server, op)].append((float(r[4]), float(r[8]), int(r[11])))

    def med(server, op, i):
        v = [x[i] for x in runs[(server, op)]]
        return statistics.median(v) if v else None

    head = ["operation"] + SERVERS + [f"{a} ÷ {b}, CPU" for a, b in RATIOS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for op in ops:
        cells = [op]
        for s in SERVERS:
            if not runs[(s, op)]:
                cells.append("–")
            elif s == "floor":
                cells.append("(%.2f)" % med(s, op, 0))
            else:
                peak = max(x[2] for x in runs[(s, op)]) / 1024
                cells.append("%.2f (%.2f), %d" % (med(s, op, 1), med(s, op, 0), peak))
        for a, b in RATIOS:
            x, y = med(a, op, 1), med(b, op, 1)
            cells.append("–" if x is None or not y else "%.2f" % (x / y))
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench/serve-partial.py RAW.tsv")
    main(sys.argv[1])

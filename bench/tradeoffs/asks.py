#!/usr/bin/env python3
"""Where the asks of multi-objective runs went, from the CSV files the
benchmark's -trials flag writes (DIR/PROBLEM-ACQUISITION-SEED.csv: the
point's coordinates, then its values):

    python3 bench/tradeoffs/asks.py DIR

Per problem and acquisition, over the asks after the initial design: the
share beyond the benchmark's reference point in some objective (they add
no hypervolume) and the share that joined the Pareto front when asked;
the median number of points of the final front inside the reference box;
for DTLZ2, the median distance term g = sum_{i>=3} (x_i - 1/2)^2 of those
front points (0 on the true front).
"""
import csv
import glob
import statistics
import sys

PROBLEMS = [("branin-currin", (18, 6), 2, 5), ("zdt1", (11, 11), 6, 12),
            ("zdt2", (11, 11), 6, 12), ("dtlz2", (1.1, 1.1, 1.1), 6, 12)]


def dominates(a, b):
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))


def main():
    d = sys.argv[1]
    for p, ref, dim, init in PROBLEMS:
        for a in ["scalarize", "hvi"]:
            files = sorted(glob.glob("%s/%s-%s-*.csv" % (d, p, a)))
            if not files:
                continue
            beyond = joined = asks = 0
            inbox, gs = [], []
            for f in files:
                rows = [list(map(float, r)) for r in csv.reader(open(f))]
                vs = [r[dim:] for r in rows]
                for i in range(init, len(vs)):
                    asks += 1
                    beyond += any(v >= r for v, r in zip(vs[i], ref))
                    joined += not any(dominates(w, vs[i]) or w == vs[i] for w in vs[:i])
                n = 0
                for r, v in zip(rows, vs):
                    if all(x < q for x, q in zip(v, ref)) and not any(dominates(w, v) for w in vs):
                        n += 1
                        if p == "dtlz2":
                            gs.append(sum((x - 0.5) ** 2 for x in r[2:dim]))
                inbox.append(n)
            line = "%-13s %-9s runs %2d: asks beyond the reference point %3.0f%%, joined the front %3.0f%%; front points inside the box %g" % (
                p, a, len(files), 100 * beyond / asks, 100 * joined / asks, statistics.median(inbox))
            if gs:
                line += "; their median g %.3f" % statistics.median(gs)
            print(line)


if __name__ == "__main__":
    main()

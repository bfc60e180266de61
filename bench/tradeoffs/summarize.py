#!/usr/bin/env python3
"""Median tables of side_by_side.sh's JSON lines (Markdown on stdout).

    python3 bench/tradeoffs/summarize.py OUT.jsonl [MORE.jsonl ...]
"""
import collections
import json
import statistics
import sys


def method(r):
    if r["tool"] == "bkb":
        if r["policy"] != "bkb":
            return "bkb random search"
        # Several objectives: runs without the field were made before the
        # hypervolume improvement existed, with random scalarizations.
        multi = any("hypervolume" in c for c in r["checkpoints"])
        if multi and r.get("mo_acquisition", "scalarize") == "scalarize":
            return "bkb, scalarizations"
        return "bkb"
    return {"tpe": "Optuna TPE", "nsga2": "Optuna NSGA-II", "motpe": "Optuna MOTPE",
            "random": "Optuna random"}[r["policy"]]


def fmt(v, digits=3):
    if v is None:
        return "-"
    if v == float("inf"):
        return "none feasible"
    return "%.*g" % (digits, v)


def col(t):
    return "T=%d" % t[0] if not t[1] else "T=%d of %d" % t


def main():
    runs = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.strip()]
    by = collections.defaultdict(list)
    for r in runs:
        for c in r["checkpoints"]:
            # bkb's exploration depends on its budget: with several
            # objectives, its checkpoint before the end of a longer run is
            # a column of its own ("T=100 of 300"); Optuna's samplers and
            # random search do not know the budget.
            budget = 0
            if r["tool"] == "bkb" and r["policy"] == "bkb" and "hypervolume" in c and c["t"] < r["T"]:
                budget = r["T"]
            key = (r["problem"], (c["t"], budget), method(r))
            # A peer's 100th trial of a 300-trial run is its 100-trial
            # run (same seed, same draws): count each seed once.
            if any(q["seed"] == r["seed"] for q, _ in by[key]):
                continue
            by[key].append((r, c))
    problems = []
    for r in runs:
        if r["problem"] not in problems:
            problems.append(r["problem"])
    order = ["bkb", "bkb, scalarizations", "Optuna TPE", "Optuna NSGA-II", "Optuna MOTPE", "bkb random search", "Optuna random"]
    for p in problems:
        ts = sorted({t for (q, t, _) in by if q == p})
        methods = [m for m in order if any((p, t, m) in by for t in ts)]
        constrained = any("gap" in c or "infeasible_share" in c for (q, _, _), v in by.items() if q == p for _, c in v)
        print("\n**%s**\n" % p)
        if constrained:
            print("| method | " + " | ".join(col(t) + " gap (median)" for t in ts) + " | " +
                  " | ".join(col(t) + " infeasible asks" for t in ts) + " | seeds | CPU s/run |")
            print("|---" * (2 + 2 * len(ts) + 1) + "|")
        else:
            mx = next(c["max_hypervolume"] for (q, _, _), v in by.items() if q == p for _, c in v)
            print("| method | " + " | ".join(col(t) + " hypervolume (median)" for t in ts) + " | seeds | CPU s/run |")
            print("|---" * (2 + len(ts) + 1) + "|")
        for m in methods:
            cells, shares, seeds, cpu = [], [], 0, []
            for t in ts:
                v = by.get((p, t, m), [])
                if not v:
                    cells.append("-")
                    shares.append("-")
                    continue
                seeds = max(seeds, len(v))
                if constrained:
                    gaps = [c.get("gap", float("inf")) for _, c in v]
                    cells.append(fmt(statistics.median(gaps)) + (" (%d/%d none feasible)" % (sum(g == float("inf") for g in gaps), len(gaps)) if any(g == float("inf") for g in gaps) else ""))
                    shares.append("%.0f%%" % (100 * statistics.median(c["infeasible_share"] for _, c in v)))
                else:
                    cells.append(fmt(statistics.median(c["hypervolume"] for _, c in v), 4))
                if t == ts[-1] or not cpu:
                    cpu = [r["cpu_seconds"] for r, _ in v]
            row = [m] + cells + (shares if constrained else []) + [str(seeds), "%.2f" % statistics.median(cpu)]
            print("| " + " | ".join(row) + " |")
        if not constrained:
            print("\nThe front's own hypervolume: %.4g." % mx)


if __name__ == "__main__":
    main()

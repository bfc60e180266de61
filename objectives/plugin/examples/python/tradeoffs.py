#!/usr/bin/env python3
"""Constrained and multi-objective test problems as a bkb plugin (stdlib only).

    python3 tradeoffs.py branin-disk   Branin (minimize) under Gardner et al.
                                       2014's disk constraint
                                       (x1-2.5)^2 + (x2-7.5)^2 - 50 <= 0:
                                       {"y": f, "constraints": [c]}
    python3 tradeoffs.py branin-currin BraninCurrin, two objectives to
                                       minimize on [0,1]^2:
                                       {"y": [branin, currin]}

A constraint value is feasible when <= 0. Long-lived protocol only: one
JSON request per line on stdin, one reply per line on stdout.
"""
import json
import math
import sys


def branin(x1, x2):
    b = 5.1 / (4.0 * math.pi ** 2)
    c = 5.0 / math.pi
    t = 1.0 / (8.0 * math.pi)
    return (x2 - b * x1 ** 2 + c * x1 - 6.0) ** 2 + 10.0 * (1.0 - t) * math.cos(x1) + 10.0


def currin(u, v):
    # Currin et al. 1991's exponential function on [0,1]^2.
    v = max(v, 1e-10)
    return (1 - math.exp(-1 / (2 * v))) * (2300 * u ** 3 + 1900 * u ** 2 + 2092 * u + 60) / (
        100 * u ** 3 + 500 * u ** 2 + 4 * u + 20)


def branin_disk(p):
    x1, x2 = p["x1"], p["x2"]
    return {"y": branin(x1, x2), "constraints": [(x1 - 2.5) ** 2 + (x2 - 7.5) ** 2 - 50]}


def branin_currin(p):
    u, v = p["x1"], p["x2"]
    # BraninCurrin (Belakaria et al. 2019): Branin rescaled to [0,1]^2.
    return {"y": [branin(15 * u - 5, 15 * v), currin(u, v)]}


PROBLEMS = {"branin-disk": branin_disk, "branin-currin": branin_currin}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in PROBLEMS:
        sys.exit("usage: tradeoffs.py " + "|".join(sorted(PROBLEMS)))
    f = PROBLEMS[sys.argv[1]]
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = f(req["params"])
        except Exception as e:  # reported as a failed evaluation
            reply = {"error": str(e)}
        reply["id"] = req["id"]
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()

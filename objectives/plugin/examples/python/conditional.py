#!/usr/bin/env python3
"""A conditional objective as a bkb plugin (Python 3, stdlib only).

A synthetic validation error of an SVM-like model over the space of
examples/cond_space.json: the kernel chooses which parameters exist (gamma
for rbf; degree for poly, and coef0 for degrees 3 and 4 only), and every
request's "params" holds exactly the parameters active for its point:

    {"id": 7, "x": [2, 3.2, 0.03, 3, 0.5], "params": {"kernel": "poly", "C": 3.2, "degree": 3, "coef0": 0.5}}

("x" keeps one number per parameter: an inactive one holds a placeholder,
which the objective must not read.) To MINIMIZE: the best is 0.04, with
kernel poly, degree 3, coef0 0.4 and C 10; rbf reaches 0.05 (gamma 0.01),
linear 0.2. A parameter that should not be there is an error: the plugin
checks that it is sent the active set only.
"""
import json
import math
import sys

ACTIVE = {"linear": set(), "rbf": {"gamma"}, "poly": {"degree"}}


def error(p):
    want = {"kernel", "C"} | ACTIVE[p["kernel"]]
    if p.get("degree") in (3, 4):
        want.add("coef0")
    if set(p) != want:
        raise ValueError("params %s, want %s" % (sorted(p), sorted(want)))
    e = 0.1 * (math.log10(p["C"]) - 1) ** 2
    if p["kernel"] == "linear":
        return 0.2 + e
    if p["kernel"] == "rbf":
        return 0.05 + e + 0.08 * (math.log10(p["gamma"]) + 2) ** 2
    e += 0.08 + 0.02 * (p["degree"] - 3) ** 2
    if "coef0" in p:
        e += 0.1 * (p["coef0"] - 0.4) ** 2 - 0.04
    return e


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        try:
            out = {"id": req.get("id"), "y": error(req["params"])}
        except Exception as exc:  # report, do not die: the caller goes on
            out = {"id": req.get("id"), "error": str(exc)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

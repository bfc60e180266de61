#!/usr/bin/env python3
"""Branin-Hoo test function as a bkb objective plugin (Python 3, stdlib only).

The plugin returns the VALUE of the objective; whether it is maximized or
minimized is decided by the caller (the bkb command line), not here. Branin is
a function to MINIMIZE: its global minimum 0.397887 is reached at
(-pi, 12.275), (pi, 2.275) and (9.42478, 2.475). The usual domain is
x1 in [-5, 10], x2 in [0, 15].

Long-lived protocol (the default): one JSON request per line on stdin,
    {"id": 7, "x": [x1, x2], "params": {"x1": ..., "x2": ...}}
one JSON reply per line on stdout (flushed at once),
    {"id": 7, "y": 12.3}      or      {"id": 7, "error": "message"}
Exit when stdin is closed. Anything you want to log goes to STDERR: stray
lines on stdout are protocol errors. NaN/Inf may be sent as strings
("NaN", "Inf", "-Inf") and are treated as failed evaluations.

One-shot mode (BKB_PLUGIN_MODE=one-shot, or when called with arguments):
    python3 branin.py 3.14159 2.275
prints the value as the last line of stdout.
"""
import json
import math
import os
import sys


def branin(x1, x2):
    a = 1.0
    b = 5.1 / (4.0 * math.pi ** 2)
    c = 5.0 / math.pi
    r = 6.0
    s = 10.0
    t = 1.0 / (8.0 * math.pi)
    return a * (x2 - b * x1 ** 2 + c * x1 - r) ** 2 + s * (1.0 - t) * math.cos(x1) + s


def evaluate(x):
    if len(x) != 2:
        raise ValueError("branin takes 2 coordinates, got %d" % len(x))
    return branin(float(x[0]), float(x[1]))


def number(y):
    # JSON has no NaN or infinities: send them as strings.
    if math.isnan(y):
        return "NaN"
    if math.isinf(y):
        return "Inf" if y > 0 else "-Inf"
    return y


def long_lived():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        rid = req.get("id")
        try:
            y = evaluate(req["x"])
            out = {"id": rid, "y": number(y)}
        except Exception as exc:  # report, do not die: the caller goes on
            out = {"id": rid, "error": str(exc)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


def one_shot(args):
    y = evaluate([float(a) for a in args])
    print(repr(y) if math.isfinite(y) else number(y))


if __name__ == "__main__":
    if os.environ.get("BKB_PLUGIN_MODE") == "one-shot" or len(sys.argv) > 1:
        one_shot(sys.argv[1:])
    else:
        long_lived()

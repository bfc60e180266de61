#!/usr/bin/env python3
"""A model trained epoch by epoch, as a bkb objective plugin that reports
its learning curve and stops when told (Python 3, stdlib only).

Ridge regression fitted by stochastic gradient descent on a fixed synthetic
data set (200 training and 100 validation rows, 8 features); the value, to
MINIMIZE, is the validation mean squared error after the last of 20 epochs.
The search space (a space file for the bkb command line) is

    {"params": [
      {"name": "lr", "type": "float", "low": 1e-4, "high": 0.5, "log": true},
      {"name": "l2", "type": "float", "low": 1e-6, "high": 1, "log": true}]}

After every epoch the plugin writes its validation error as an
intermediate value, {"id": 7, "step": 3, "value": 0.42}, and looks at its
standard input: a line {"id": 7, "prune": true} means the study's pruner
stopped the trial, and the plugin answers {"id": 7, "pruned": true} and
waits for the next request. Otherwise it replies {"id": 7, "y": ...} after
the last epoch. A plugin that never looks is stopped all the same: it is
killed after a grace period and restarted.

    bkb optimize --space sgd_space.json --pruner median -- python3 sgd_curve.py
"""
import json
import math
import random
import select
import sys

EPOCHS = 20


def data():
    rng = random.Random(0)
    w = [rng.gauss(0, 1) for _ in range(8)]
    rows = []
    for _ in range(300):
        x = [rng.gauss(0, 1) for _ in range(8)]
        rows.append((x, sum(a * b for a, b in zip(w, x)) + rng.gauss(0, 0.5)))
    return rows[:200], rows[200:]


TRAIN, VALID = data()


def mse(w, rows):
    e = sum((sum(a * b for a, b in zip(w, x)) - y) ** 2 for x, y in rows) / len(rows)
    return min(e, 1e6) if math.isfinite(e) else 1e6


def pruned(req_id):
    """Reports whether the caller asked to stop evaluation req_id."""
    ready, _, _ = select.select([sys.stdin], [], [], 0)
    if not ready:
        return False
    line = sys.stdin.readline()
    if not line.strip():
        return False  # end of input: finish this evaluation, then exit
    msg = json.loads(line)
    return msg.get("id") == req_id and msg.get("prune") is True


def train(req):
    lr, l2 = req["params"]["lr"], req["params"]["l2"]
    rng = random.Random(1)
    w = [0.0] * 8
    order = list(range(len(TRAIN)))
    for epoch in range(EPOCHS):
        rng.shuffle(order)
        for i in order:
            x, y = TRAIN[i]
            err = sum(a * b for a, b in zip(w, x)) - y
            w = [wi - lr * (err * xi + l2 * wi) for wi, xi in zip(w, x)]
            if not all(math.isfinite(wi) and abs(wi) < 1e6 for wi in w):
                w = [1e6] * 8  # diverged
                break
        value = mse(w, VALID)
        print(json.dumps({"id": req["id"], "step": epoch, "value": value}), flush=True)
        if pruned(req["id"]):
            return {"id": req["id"], "pruned": True}
    return {"id": req["id"], "y": value}


def main():
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        if not line.strip():
            continue
        req = json.loads(line)
        if req.get("prune"):
            continue  # a stop for an evaluation already over
        try:
            reply = train(req)
        except Exception as e:  # report, don't crash: the optimizer records a failed trial
            reply = {"id": req.get("id"), "error": str(e)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()

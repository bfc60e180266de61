#!/usr/bin/env python3
"""A toy "validation loss" with typed hyperparameters, as a bkb objective
plugin (Python 3, stdlib only): how a plugin reads a log-scale float, an
integer and a categorical parameter.

The study's search space (a space file for the bkb command line) is

    {"params": [
      {"name": "lr", "type": "float", "low": 1e-5, "high": 1, "log": true},
      {"name": "layers", "type": "int", "low": 1, "high": 8},
      {"name": "activation", "type": "categorical",
       "choices": ["relu", "tanh", "sigmoid"]}]}

and every request carries the parameters, each in its own type, in
"params": lr as a JSON number, layers as a JSON integer, activation as its
label:

    {"id": 7, "x": [0.003, 4, 0], "params": {"lr": 0.003, "layers": 4, "activation": "relu"}}

("x" is the point as the optimizer stores it, a categorical as the index of
its choice: read "params".) The loss, to MINIMIZE, is

    (log10(lr) + 2.5)^2 + 0.05 (layers - 4)^2 + {relu: 0, tanh: 0.25, sigmoid: 0.5}

with its minimum 0 at lr = 10^-2.5, layers = 4, activation = relu.

Long-lived mode (the default): one JSON request per line on stdin, one JSON
reply per line on stdout, {"id": 7, "y": 0.25} or {"id": 7, "error": "..."}.
One-shot mode (BKB_PLUGIN_MODE=one-shot): the parameters are in the
environment variable BKB_PARAMS, the result is the last line of stdout:

    BKB_PLUGIN_MODE=one-shot BKB_PARAMS='{"lr":0.003,"layers":4,"activation":"tanh"}' python3 toy_model.py
"""
import json
import math
import os
import sys

PENALTY = {"relu": 0.0, "tanh": 0.25, "sigmoid": 0.5}


def loss(params):
    lr = params["lr"]
    layers = params["layers"]
    activation = params["activation"]
    # Be strict about the types: a float where an integer belongs means the
    # caller's search space does not match this plugin.
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
        raise ValueError("lr must be a positive number, got %r" % (lr,))
    if isinstance(layers, bool) or not isinstance(layers, int):
        raise ValueError("layers must be an integer, got %r" % (layers,))
    if activation not in PENALTY:
        raise ValueError("activation must be one of %s, got %r" % (sorted(PENALTY), activation))
    return (math.log10(lr) + 2.5) ** 2 + 0.05 * (layers - 4) ** 2 + PENALTY[activation]


def long_lived():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        rid = req.get("id")
        try:
            out = {"id": rid, "y": loss(req["params"])}
        except Exception as exc:  # report, do not die: the caller goes on
            out = {"id": rid, "error": "%s: %s" % (type(exc).__name__, exc)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


def one_shot():
    try:
        print(json.dumps({"y": loss(json.loads(os.environ["BKB_PARAMS"]))}))
    except Exception as exc:
        print(json.dumps({"error": "%s: %s" % (type(exc).__name__, exc)}))


if __name__ == "__main__":
    if os.environ.get("BKB_PLUGIN_MODE") == "one-shot":
        one_shot()
    else:
        long_lived()

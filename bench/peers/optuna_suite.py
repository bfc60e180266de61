#!/usr/bin/env python3
"""Optuna 3.1 (Debian's python3-optuna) on a test function of this project, minimized, noise-free.

Usage: OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 optuna_suite.py \
           tpe|mtpe|cmaes PEERFN NAME[:DIM] T1[/T2...] SEED

PEERFN is the peerfn binary (go build -o peerfn ./bench/peerfn): it evaluates the function as
package objectives defines it, so both sides of the comparison see the same values. Prints one
JSON line: peer, problem, seed, checkpoints, simple regret (best f - min) and cumulative regret at
each checkpoint, and the CPU milliseconds per trial of this process (the sampler's cost).
The samplers are Optuna's defaults: TPESampler(seed), TPESampler(multivariate=True, seed),
CmaEsSampler(seed).
"""
import json
import subprocess
import sys
import time

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)
samp, peerfn, name, ts, seed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
checkpoints = [int(t) for t in ts.split("/")]
T = max(checkpoints)
info = json.loads(subprocess.run([peerfn, "-info", name], check=True, capture_output=True, text=True).stdout)
proc = subprocess.Popen([peerfn, name], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
vals = []


def objective(trial):
    x = [trial.suggest_float("x%d" % j, lo, hi) for j, (lo, hi) in enumerate(zip(info["lower"], info["upper"]))]
    proc.stdin.write(" ".join(repr(v) for v in x) + "\n")
    v = float(proc.stdout.readline())
    vals.append(v)
    return v


if samp == "tpe":
    sampler = optuna.samplers.TPESampler(seed=seed)
elif samp == "mtpe":
    sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True)
elif samp == "cmaes":
    sampler = optuna.samplers.CmaEsSampler(seed=seed)
else:
    sys.exit("unknown sampler " + samp)
cpu0 = time.process_time()
study = optuna.create_study(sampler=sampler, direction="minimize")
study.optimize(objective, n_trials=T)
cpu = time.process_time() - cpu0
proc.stdin.close()
proc.wait()
fmin = info["min"]
simple, cum = [], []
for k in checkpoints:
    simple.append(max(min(vals[:k]) - fmin, 0.0))
    cum.append(sum(v - fmin for v in vals[:k]))
print(json.dumps({"peer": "optuna-" + samp, "problem": info["name"], "seed": seed, "checkpoints": checkpoints,
                  "simple": simple, "cum": cum, "cpu_ms_per_trial": 1e3 * cpu / T}))

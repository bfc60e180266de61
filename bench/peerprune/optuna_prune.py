#!/usr/bin/python3
"""Optuna 3.1 (Debian python3-optuna) on the learning-curve benchmark of
docs/pruning.md: TPE with no pruner, MedianPruner, SuccessiveHalvingPruner
or HyperbandPruner, on the same tasks as the Go side:

  --task hartmann3: bench.CurveTask (Hartmann 3, 27 steps, noise 0.02 drawn
      from (seed, trial, step) as bench.CurveNoise does);
  --task elevators: bench.SGDTask (mini-batch SGD with momentum on the
      elevators rows built into online/data, 27 epochs, the same rows, the
      same standardization and the same visiting order per epoch).

Usage:
  /usr/bin/python3 optuna_prune.py [--task hartmann3] [--methods none,median,hyperband]
      [--seeds 10] [--trials 40] [--step-budget 0]
  /usr/bin/python3 optuna_prune.py --noise SEED TRIAL STEP   (one noise draw, for the Go test)
  /usr/bin/python3 optuna_prune.py --sgd-curve LR L2 MOMENTUM SEED TRIAL  (one curve, for the Go test)

Each run asks trials one at a time, reports every step and stops a trial
when should_prune() says so; it stops after --trials trials or, with
--step-budget B > 0, once B steps are spent (at most 10x --trials trials,
as bench.RunPrune). One JSON object per run on stdout: method, seed,
trials, pruned, steps, best (the best final value of a complete trial).
Single-threaded: run with OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1.
"""
import argparse
import gzip
import json
import math
import os

M64 = (1 << 64) - 1
A4 = [1.0, 1.2, 3.0, 3.2]
H3A = [[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]]
H3P = [[0.3689, 0.1170, 0.2673], [0.4699, 0.4387, 0.7470], [0.1091, 0.8732, 0.5547], [0.0381, 0.5743, 0.8828]]
STEPS, NOISE = 27, 0.02


def hartmann3(x):
    return -sum(al * math.exp(-sum(a * (xj - p) ** 2 for a, xj, p in zip(ai, x, pi)))
                for al, ai, pi in zip(A4, H3A, H3P))


def splitmix(z):
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def curve_noise(seed, trial, step):
    h = splitmix(seed ^ splitmix(((trial << 20) & M64) ^ step))
    u1 = ((h >> 11) + 0.5) / (1 << 53)
    u2 = ((splitmix(h) >> 11) + 0.5) / (1 << 53)
    return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)


def value(x, step, seed, trial):
    amp, tau = 0.5 + 1.5 * x[0], 2 + 10 * x[2]
    return hartmann3(x) + amp * math.exp(-step / tau) + NOISE * curve_noise(seed, trial, step)


class SGD:
    """bench.SGDTask: linear least squares by mini-batch SGD on elevators."""

    def __init__(self):
        import numpy as np
        self.np = np
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "online", "data", "elevators.csv.gz")
        with gzip.open(path, "rt") as f:
            d = np.array([[float(v) for v in line.strip().rstrip(",").split(",")] for line in f if line.strip()])
        X, y = d[:, :-1], d[:, -1]
        i = np.arange(len(y))
        tr, va = i % 4 == 1, i % 8 == 0
        m = X[tr].mean(0)
        s = np.sqrt(((X[tr] - m) ** 2).mean(0))
        s[s == 0] = 1
        self.xt, self.yt = (X[tr] - m) / s, y[tr]
        self.xv, self.yv = (X[va] - m) / s, y[va]
        self.epochs, self.batch = 27, 32

    def shuffle(self, n, seed, trial, epoch):
        p = list(range(n))
        h = splitmix(seed ^ splitmix((((trial << 20) & M64) ^ epoch) ^ 0x5EED))
        for i in range(n - 1, 0, -1):
            h = splitmix(h)
            j = h % (i + 1)
            p[i], p[j] = p[j], p[i]
        return p

    def start(self, x, seed, trial):
        np = self.np
        lr, l2, mom = x
        d = self.xt.shape[1]
        w, v = np.zeros(d + 1), np.zeros(d + 1)
        state = {"diverged": False}

        def step(epoch):
            nonlocal w, v
            if state["diverged"]:
                return 10.0
            order = np.array(self.shuffle(len(self.yt), seed, trial, epoch))
            for b in range(0, len(order), self.batch):
                idx = order[b:b + self.batch]
                xb, yb = self.xt[idx], self.yt[idx]
                e = xb @ w[:d] + w[d] - yb
                g = np.empty(d + 1)
                g[:d] = xb.T @ e / len(idx) + l2 * w[:d]
                g[d] = e.mean()
                v = mom * v - lr * g
                w = w + v
            with np.errstate(all="ignore"):
                mse = float(np.mean((self.xv @ w[:d] + w[d] - self.yv) ** 2))
            if not math.isfinite(mse) or mse > 10:
                state["diverged"] = True
                return 10.0
            return mse
        return step


def run(method, seed, trials, step_budget, task="hartmann3", sgd=None):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    pruner = {
        "none": optuna.pruners.NopPruner(),
        "median": optuna.pruners.MedianPruner(),
        "asha": optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3),
        "hyperband": optuna.pruners.HyperbandPruner(min_resource=1, max_resource=STEPS, reduction_factor=3),
    }[method]
    study = optuna.create_study(study_name="curve", sampler=optuna.samplers.TPESampler(seed=seed), pruner=pruner)
    budget = 10 * trials if step_budget > 0 else trials
    steps = STEPS
    out = {"method": method, "seed": seed, "trials": 0, "pruned": 0, "steps": 0, "best": math.inf}
    while out["trials"] < budget and (step_budget <= 0 or out["steps"] < step_budget):
        t = study.ask()
        if task == "elevators":
            x = [t.suggest_float("lr", 1e-5, 0.1, log=True), t.suggest_float("l2", 1e-6, 0.1, log=True),
                 t.suggest_float("momentum", 0, 0.95)]
            curve = sgd.start(x, seed, t.number)
        else:
            x = [t.suggest_float("x%d" % i, 0, 1) for i in range(3)]
            curve = (lambda x, n: lambda step: value(x, step, seed, n))(x, t.number)
        out["trials"] += 1
        pruned = False
        for step in range(steps):
            v = curve(step)
            out["steps"] += 1
            t.report(v, step)
            if t.should_prune():
                pruned = True
                break
        if pruned:
            out["pruned"] += 1
            study.tell(t, state=optuna.trial.TrialState.PRUNED)
        else:
            out["best"] = min(out["best"], v)
            study.tell(t, v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", default="none,median,hyperband")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--step-budget", type=int, default=0)
    ap.add_argument("--task", default="hartmann3", choices=["hartmann3", "elevators"])
    ap.add_argument("--noise", type=int, nargs=3)
    ap.add_argument("--sgd-curve", type=float, nargs=5)
    a = ap.parse_args()
    if a.noise:
        print(repr(curve_noise(*a.noise)))
        return
    if a.sgd_curve:
        lr, l2, mom, seed, trial = a.sgd_curve
        c = SGD().start([lr, l2, mom], int(seed), int(trial))
        print(json.dumps([c(e) for e in range(27)]))
        return
    sgd = SGD() if a.task == "elevators" else None
    for seed in range(1, a.seeds + 1):
        for m in a.methods.split(","):
            r = run(m, seed, a.trials, a.step_budget, a.task, sgd)
            r["task"] = a.task
            print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()

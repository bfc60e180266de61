#!/usr/bin/env python3
"""Optuna 3.1 on the problems of bench/tradeoffs (the same definitions,
written independently here), printing the JSON of the Go command.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 optuna_tradeoffs.py \
        SAMPLER PROBLEM T SEED [CHECKPOINTS]

SAMPLER: tpe (constrained problems: TPE with constraints_func; several
objectives: Optuna 3.1's multi-objective TPE), motpe (MOTPESampler),
nsga2 (NSGAIISampler, with constraints_func on constrained problems) or
random. Every objective is minimized; a constraint is feasible when <= 0.
"""
import json
import math
import resource
import sys
import time
import warnings

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)
warnings.filterwarnings("ignore")


def branin(x1, x2):
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def currin(u, v):
    v = max(v, 1e-10)
    return (1 - math.exp(-1 / (2 * v))) * (2300 * u ** 3 + 1900 * u ** 2 + 2092 * u + 60) / (
        100 * u ** 3 + 500 * u ** 2 + 4 * u + 20)


def zdt(second):
    def f(x):
        g = 1 + 9 * sum(x[1:]) / (len(x) - 1)
        return [x[0], second(x[0], g)], None
    return f


def dtlz2(x):
    g = sum((v - 0.5) ** 2 for v in x[2:])
    a, b = x[0] * math.pi / 2, x[1] * math.pi / 2
    return [(1 + g) * math.cos(a) * math.cos(b), (1 + g) * math.cos(a) * math.sin(b), (1 + g) * math.sin(a)], None


# name: (lower, upper, objectives, f, optimum or reference point, max hypervolume)
PROBLEMS = {
    "branin-disk": ([-5, 0], [10, 15], 1,
                    lambda x: ([branin(x[0], x[1])], [(x[0] - 2.5) ** 2 + (x[1] - 7.5) ** 2 - 50]), 0.39788735772973816, None),
    "gardner1": ([0, 0], [6, 6], 1,
                 lambda x: ([math.cos(2 * x[0]) * math.cos(x[1]) + math.sin(x[0])],
                            [math.cos(x[0]) * math.cos(x[1]) - math.sin(x[0]) * math.sin(x[1]) - 0.5]), -2.0, None),
    "gardner2": ([0, 0], [6, 6], 1,
                 lambda x: ([math.sin(x[0]) + x[1]], [math.sin(x[0]) * math.sin(x[1]) + 0.95]), math.asin(0.95) - 1, None),
    "branin-currin": ([0, 0], [1, 1], 2,
                      lambda x: ([branin(15 * x[0] - 5, 15 * x[1]), currin(x[0], x[1])], None), [18, 6], 59.36011874867746),
    "zdt1": ([0] * 6, [1] * 6, 2, zdt(lambda f1, g: g * (1 - math.sqrt(f1 / g))), [11, 11], 121 - 1 / 3),
    "zdt2": ([0] * 6, [1] * 6, 2, zdt(lambda f1, g: g * (1 - (f1 / g) ** 2)), [11, 11], 121 - 2 / 3),
    "dtlz2": ([0] * 6, [1] * 6, 3, dtlz2, [1.1, 1.1, 1.1], 1.331 - math.pi / 6),
}


def dominates(a, b):
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))


def hypervolume(points, ref):
    """Exact hypervolume (minimization) by slicing along the last objective."""
    pts = [p for p in points if all(v < r for v, r in zip(p, ref))]
    pts = [p for p in pts if not any(dominates(q, p) for q in pts)]
    if not pts:
        return 0.0
    if len(ref) == 1:
        return ref[0] - min(p[0] for p in pts)
    if len(ref) == 2:
        vol, top = 0.0, ref[1]
        for p in sorted(pts):
            if p[1] < top:
                vol += (ref[0] - p[0]) * (top - p[1])
                top = p[1]
        return vol
    pts.sort(key=lambda p: p[-1])
    vol = 0.0
    for i, p in enumerate(pts):
        nxt = pts[i + 1][-1] if i + 1 < len(pts) else ref[-1]
        if nxt > p[-1]:
            vol += (nxt - p[-1]) * hypervolume([q[:-1] for q in pts[:i + 1]], ref[:-1])
    return vol


def main():
    sampler_name, name, T, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    checks = [int(c) for c in sys.argv[5].split(",")] if len(sys.argv) > 5 else [T]
    lower, upper, nobj, f, target, max_hv = PROBLEMS[name]
    constrained = nobj == 1
    cons_func = (lambda t: t.user_attrs["constraints"]) if constrained else None
    if sampler_name == "tpe":
        sampler = optuna.samplers.TPESampler(seed=seed, constraints_func=cons_func)
    elif sampler_name == "motpe":
        sampler = optuna.samplers.MOTPESampler(seed=seed)
    elif sampler_name == "nsga2":
        sampler = optuna.samplers.NSGAIISampler(seed=seed, constraints_func=cons_func)
    elif sampler_name == "random":
        sampler = optuna.samplers.RandomSampler(seed=seed)
    else:
        sys.exit("unknown sampler " + sampler_name)
    study = optuna.create_study(sampler=sampler, directions=["minimize"] * nobj)
    records = []

    def objective(trial):
        x = [trial.suggest_float("x%d" % (i + 1), lo, hi) for i, (lo, hi) in enumerate(zip(lower, upper))]
        vals, cons = f(x)
        if cons is not None:
            trial.set_user_attr("constraints", cons)
        records.append((vals, cons))
        return vals[0] if nobj == 1 else vals

    start, cpu0 = time.time(), resource.getrusage(resource.RUSAGE_SELF)
    study.optimize(objective, n_trials=T)
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    out = {"tool": "optuna " + optuna.__version__, "problem": name, "policy": sampler_name, "seed": seed, "T": T,
           "checkpoints": [], "seconds": time.time() - start,
           "cpu_seconds": (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)}
    for n in checks:
        c = {"t": n}
        if constrained:
            feas = [v[0] for v, cs in records[:n] if all(x <= 0 for x in cs)]
            c["infeasible_share"] = 1 - len(feas) / n
            if feas:
                c["best_feasible"] = min(feas)
                c["gap"] = min(feas) - target
        else:
            c["hypervolume"] = hypervolume([v for v, _ in records[:n]], target)
            c["max_hypervolume"] = max_hv
        out["checkpoints"].append(c)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

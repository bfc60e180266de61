#!/usr/bin/env python3
"""Optuna 3.1's TPE on a long noisy Hartmann 6 study: the sampler's CPU per trial late in the run.

Usage: OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 tpe_long.py T SEED NOISE_SD

Hartmann 6 (minimized) with Gaussian noise of standard deviation NOISE_SD added to each value
(0.033 is 1% of the function's range over its box, as `bkb bench --long --regret-noise 0.01`),
seeded by SEED. Prints one JSON object: the simple regret of the evaluated points (noise-free
values), and the process CPU seconds per trial (time.process_time: the sampler and the
objective, the objective's share negligible) over the whole run and over its last 500 trials
(its last tenth when T < 5,000), for docs/long-studies.md's side-by-side with bkb.
"""
import json
import sys
import time

import numpy as np
import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)
T, seed, sd = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8],
              [17, 8, 0.05, 10, 0.1, 14]])
P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                     [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
FMIN = -3.32237
rng = np.random.default_rng(seed)
values, cpu = [], []


def objective(trial):
    x = np.array([trial.suggest_float("x%d" % j, 0.0, 1.0) for j in range(6)])
    v = -np.sum(ALPHA * np.exp(-np.sum(A * (x - P) ** 2, axis=1)))
    values.append(v)
    cpu.append(time.process_time())
    return v + sd * rng.standard_normal()


study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed), direction="minimize")
start = time.process_time()
study.optimize(objective, n_trials=T)
late = min(500, max(T // 10, 1))
print(json.dumps({
    "peer": "optuna-tpe", "T": T, "seed": seed, "noise_sd": sd,
    "simple_regret": float(min(values) - FMIN),
    "cpu_ms_per_trial": 1e3 * (cpu[-1] - start) / T,
    "cpu_ms_per_trial_last": 1e3 * (cpu[-1] - cpu[-late - 1]) / late,
    "last_trials": late,
}))

"""One Optuna objective, two samplers: Optuna's TPE and bkb's BkbSampler.

    python3 examples/optuna_side_by_side.py --objective branin --trials 40 --seeds 5
    python3 examples/optuna_side_by_side.py --objective svc --trials 30 --seeds 3

The objective and the study are the same; only the sampler line differs:

    optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    optuna.create_study(sampler=BkbSampler(seed=seed, budget=n_trials))

BkbSampler starts `bkb serve` from the `bkb` on PATH (or --bkb PATH).
branin: minimize Branin on [-5, 10] x [0, 15] (minimum 0.397887). svc:
maximize the 3-fold cross-validated accuracy of a scikit-learn SVC on 600
digits (C and gamma on a log scale, the kernel a categorical; Debian:
apt-get install python3-sklearn). Prints a Markdown table: the best value
of each seed, their mean, and the seconds of a whole study.
"""

import argparse
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import optuna  # noqa: E402

from bkb_client.optuna import BkbSampler  # noqa: E402


def branin(trial):
    x1 = trial.suggest_float("x1", -5, 10)
    x2 = trial.suggest_float("x2", 0, 15)
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 ** 2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def svc_objective():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import SVC

    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]

    def objective(trial):
        C = trial.suggest_float("C", 1e-2, 1e3, log=True)
        gamma = trial.suggest_float("gamma", 1e-5, 1e-1, log=True)
        kernel = trial.suggest_categorical("kernel", ["rbf", "sigmoid"])
        return cross_val_score(SVC(C=C, gamma=gamma, kernel=kernel), X, y, cv=3).mean()

    return objective


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objective", choices=["branin", "svc"], default="branin")
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--bkb", default=None, help="the bkb binary (default: bkb on PATH)")
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    if args.objective == "branin":
        objective, direction = branin, "minimize"
    else:
        objective, direction = svc_objective(), "maximize"

    samplers = {
        "TPESampler(seed=s)": lambda s: optuna.samplers.TPESampler(seed=s),
        "BkbSampler(seed=s, budget=%d)" % args.trials: lambda s: BkbSampler(seed=s, budget=args.trials, bkb_path=args.bkb),
    }
    print("| sampler | %s | mean | seconds per study |" % " | ".join("seed %d" % s for s in range(1, args.seeds + 1)))
    print("|---|%s---|---|" % ("---|" * args.seeds))
    for label, make in samplers.items():
        bests, seconds = [], []
        for seed in range(1, args.seeds + 1):
            sampler = make(seed)
            t0 = time.monotonic()
            study = optuna.create_study(direction=direction, sampler=sampler)
            study.optimize(objective, n_trials=args.trials)
            seconds.append(time.monotonic() - t0)
            bests.append(study.best_value)
            if isinstance(sampler, BkbSampler):
                sampler.close()
        print("| `%s` | %s | %.6g | %.2f |" % (label, " | ".join("%.6g" % b for b in bests), statistics.mean(bests),
                                              statistics.mean(seconds)), flush=True)


if __name__ == "__main__":
    main()

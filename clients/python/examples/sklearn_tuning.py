"""Tune a scikit-learn support vector classifier with `bkb serve`.

Start a server, then run this example:

    bkb serve --dir studies &
    python3 examples/sklearn_tuning.py --url http://127.0.0.1:8080 --trials 30

It maximizes the 3-fold cross-validated accuracy of an SVC on the digits
data set that ships with scikit-learn (no download) over C, gamma (both on
a log scale) and the kernel.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import bkb_client  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import cross_val_score  # noqa: E402
from sklearn.svm import SVC  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=os.environ.get("BKB_URL", "http://127.0.0.1:8080"))
    ap.add_argument("--token", default=os.environ.get("BKB_TOKEN"))
    ap.add_argument("--study", default="sklearn-svc")
    ap.add_argument("--trials", type=int, default=30)
    args = ap.parse_args()

    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]  # a few seconds per study

    client = bkb_client.Client(args.url, token=args.token)
    study = client.create_study(
        args.study,
        [
            bkb_client.Float("C", 1e-2, 1e3, log=True),
            bkb_client.Float("gamma", 1e-5, 1e-1, log=True),
            bkb_client.Categorical("kernel", ["rbf", "sigmoid"]),
        ],
        direction="maximize",
        budget=args.trials,
        seed=1,
        load_if_exists=True,
    )

    def objective(trial):
        p = trial.params
        model = SVC(C=p["C"], gamma=p["gamma"], kernel=p["kernel"])
        return cross_val_score(model, X, y, cv=3).mean()

    best = study.optimize(objective)
    print(json.dumps({"best_accuracy": best["value"], "params": best["params"], "trial": best["trial"]}))


if __name__ == "__main__":
    main()

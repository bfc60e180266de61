"""One of several clients optimizing one study at once (a test of the
server's guarantees): evaluates n trials with Study.optimize and prints, as
one JSON object, the trials it evaluated and their values."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import bkb_client  # noqa: E402


def main():
    url, name, n, ident = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    study = bkb_client.Client(url, token=os.environ.get("BKB_TOKEN")).study(name)
    told = []

    def f(trial):
        p = trial.params
        assert isinstance(p["x"], float) and isinstance(p["n"], int) and isinstance(p["c"], str), p
        v = (p["x"] - 0.5) ** 2 + 0.1 * (p["n"] - 3) ** 2 + (0 if p["c"] == "b" else 0.5) + int(ident) * 1e-9
        told.append({"trial": trial.number, "value": v})
        return v

    study.optimize(f, n_trials=n)
    print(json.dumps({"client": ident, "told": told}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Tuning tasks: bkb against Optuna 3.1's samplers on real model tuning and on 20-100 parameters.

Two suites, each split into a tuning half and a held-out half. The split was
written here on 2026-11-28, before any run of this file was read; constants of
bkb may be chosen on the tuning half only, the held-out half is reported as it
comes out.

Real tasks ("tasks"): scikit-learn models on data that ships with Debian's
python3-sklearn (load_* without download) or ../shared/data. Each mixes integer,
log-scaled and categorical parameters, is deterministic in its parameters
(random_state fixed, n_jobs=1, the same stratified or plain K-fold split for
every trial) and its objective is the cross-validated error, minimized
(1 - accuracy for classifiers, 1 - R^2 for regressors).

    TUNING_TASKS  = hgb-diabetes, svc-breast, knn-wine, mlp-breast
    HELDOUT_TASKS = hgb-breast, rf-wine, svr-housing, logreg-wine

High-dimensional problems ("hd"): continuous boxes of 20, 50 and 100
parameters, some with few relevant inputs (a 2-, 3- or 6-dimensional function
on fixed coordinates, the others ignored), some all relevant. The value is the
simple regret f - min f.

    TUNING_HD  = hart3-in-50, rosen-20, styb-50, levy-100
    HELDOUT_HD = branin-in-20, hart6-in-100, levy-50, styb-100

Costly tasks (added 2026-11-29, split before any run): an evaluation takes
0.1 to 10 s, growing with boosting rounds or trees, on ../shared/data.

    COSTLY_TUNING  = hgb-parkinsons
    COSTLY_HELDOUT = rf-spambase

Usage (single-threaded on both sides, alternating samplers within each seed):

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 GOMAXPROCS=1 nice -n 10 \\
        /usr/bin/python3 bench/peers/tuning.py run BKB PROBLEM[,PROBLEM...] SEEDS T1/T2 [SAMPLERS] > out.jsonl
    /usr/bin/python3 bench/peers/tuning.py table out.jsonl [...]
    /usr/bin/python3 bench/peers/tuning.py diag out.jsonl [...]
    /usr/bin/python3 bench/peers/tuning.py count out.jsonl [...]

BKB is the bkb binary (go build -o bkb ./cmd/bkb). SEEDS is N (1..N) or A-B.
SAMPLERS (comma-separated, default all) are bkb (defaults: the current
configuration version), tpe (TPESampler(seed)), mtpe (TPESampler(seed,
multivariate=True)), cmaes (CmaEsSampler(seed): categoricals, which it cannot
model, are sampled by its independent sampler, RandomSampler, as Optuna does
it with a warning), random (RandomSampler(seed)); bkb-initN (bkb with --init N, a diagnosis,
not in the default list); bkb-policy-NAME (bkb with --policy NAME, a diagnosis, not in the
default list); bkb-vN (bkb with --config-version N, not in the default list); bkb-flags:FLAGS (bkb
with FLAGS, split at spaces, e.g. "bkb-flags:--fit scalar"; a diagnosis, not in the default list). Each run prints one JSON
line: sampler, problem, seed, the best value at each checkpoint, the sampler's
CPU seconds (bkb: the bkb process; Optuna: this process less the objective),
the objective's CPU seconds, and every trial (parameters, value, CPU seconds)
for `diag`. `table` prints per problem and checkpoint the median best of each
sampler, the two-sided Mann-Whitney p of bkb against each peer
(scipy.stats.mannwhitneyu; `table --ref SAMPLER FILES...` compares SAMPLER,
e.g. bkb-v9, against the others instead) and each sampler's total objective CPU over its
runs. `diag` prints how each sampler spent its trials on the categoricals and
on costly configurations. `count` prints, per half, on how many rows (problem
and checkpoint) each sampler's median best is the lowest of all samplers (a
tie counts for each sampler in it), and how far that count is from chance: a
bootstrap that redraws the seeds (one draw for every sampler and row of a
half, among the seeds all of them have; B = 2000, fixed seed) gives each
sampler's mean count and the share of draws in which it is the lowest on at
least 2/3 of the rows.
"""
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "data"))


sys.path.insert(0, HERE)
from conditional import C, F, I  # noqa: E402  the space-file parameters, as conditional.py writes them


# ---------------------------------------------------------------- real tasks

SPACES = {
    "hgb-diabetes": [F("learning_rate", 0.01, 1.0, log=True), I("max_leaf_nodes", 2, 64, log=True),
                     I("min_samples_leaf", 1, 100, log=True), F("l2", 1e-6, 10.0, log=True),
                     I("max_iter", 10, 300, log=True), C("loss", ["squared_error", "absolute_error", "poisson"])],
    "hgb-breast": [F("learning_rate", 0.01, 1.0, log=True), I("max_leaf_nodes", 2, 64, log=True),
                   I("min_samples_leaf", 1, 100, log=True), F("l2", 1e-6, 10.0, log=True),
                   I("max_iter", 10, 300, log=True), C("class_weight", ["none", "balanced"])],
    "svc-breast": [F("C", 1e-3, 1e3, log=True), F("gamma", 1e-5, 10.0, log=True),
                   C("kernel", ["rbf", "poly", "sigmoid"]), I("degree", 2, 5),
                   C("scaler", ["standard", "minmax", "none"])],
    "svr-housing": [F("C", 1e-2, 1e3, log=True), F("gamma", 1e-4, 10.0, log=True), F("epsilon", 1e-3, 1.0, log=True),
                    C("scaler", ["standard", "minmax", "none"]), I("degree", 1, 3)],
    "knn-wine": [I("k", 1, 50, log=True), C("weights", ["uniform", "distance"]), I("p", 1, 4),
                 C("scaler", ["standard", "minmax", "none"])],
    "mlp-breast": [I("hidden", 2, 64, log=True), I("layers", 1, 3), F("alpha", 1e-6, 10.0, log=True),
                   F("lr_init", 1e-4, 0.3, log=True), C("activation", ["relu", "tanh", "logistic"])],
    "rf-wine": [I("n_estimators", 5, 200, log=True), I("max_depth", 1, 20), I("min_samples_leaf", 1, 20, log=True),
                C("max_features", ["sqrt", "log2", "all"]), C("criterion", ["gini", "entropy"])],
    "logreg-wine": [F("C", 1e-4, 1e3, log=True), C("penalty", ["l1", "l2"]), I("poly_degree", 1, 3),
                    C("scaler", ["standard", "minmax", "none"]), C("class_weight", ["none", "balanced"])],
    # Costly tasks (added 2026-11-29, split before any run): the evaluation's
    # seconds grow steeply with a parameter that also lowers the error
    # (boosting rounds, trees), on the larger data sets of ../shared/data.
    "hgb-parkinsons": [F("learning_rate", 0.01, 1.0, log=True), I("max_leaf_nodes", 2, 128, log=True),
                       I("min_samples_leaf", 1, 100, log=True), F("l2", 1e-6, 10.0, log=True),
                       I("max_iter", 10, 500, log=True), C("loss", ["squared_error", "absolute_error"])],
    "rf-spambase": [I("n_estimators", 5, 300, log=True), I("max_depth", 1, 30), I("min_samples_leaf", 1, 50, log=True),
                    C("max_features", ["sqrt", "log2", "all"]), C("criterion", ["gini", "entropy"])],
}
TUNING_TASKS = ["hgb-diabetes", "svc-breast", "knn-wine", "mlp-breast"]
HELDOUT_TASKS = ["hgb-breast", "rf-wine", "svr-housing", "logreg-wine"]

_data = {}


def dataset(name):
    """(X, y, classification) of a data set, loaded once."""
    if name in _data:
        return _data[name]
    import numpy as np
    from sklearn import datasets
    if name in ("housing", "parkinsons", "spambase"):
        import gzip
        a = np.loadtxt(gzip.open(os.path.join(SHARED, name + ".csv.gz"), "rt"), delimiter=",")
        r = (a[:, :-1], a[:, -1], name == "spambase")
    else:
        x, y = getattr(datasets, "load_" + {"breast": "breast_cancer"}.get(name, name))(return_X_y=True)
        r = (x, y, name != "diabetes")
    _data[name] = r
    return r


def scaler(kind):
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    return {"standard": StandardScaler(), "minmax": MinMaxScaler(), "none": None}[kind]


def task_error(task, p):
    import warnings
    import numpy as np
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    model, data = task.split("-")
    x, y, clf = dataset(data)
    steps = []
    if model == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
        kw = dict(learning_rate=p["learning_rate"], max_leaf_nodes=int(p["max_leaf_nodes"]),
                  min_samples_leaf=int(p["min_samples_leaf"]), l2_regularization=p["l2"],
                  max_iter=int(p["max_iter"]), early_stopping=False, random_state=0)
        if clf:
            m = HistGradientBoostingClassifier(class_weight=None if p["class_weight"] == "none" else "balanced", **kw)
        else:
            m = HistGradientBoostingRegressor(loss=p["loss"], **kw)
    elif model == "svc":
        from sklearn.svm import SVC
        steps.append(scaler(p["scaler"]))
        m = SVC(C=p["C"], gamma=p["gamma"], kernel=p["kernel"], degree=int(p["degree"]), max_iter=100000)
    elif model == "svr":
        from sklearn.preprocessing import PolynomialFeatures
        from sklearn.svm import SVR
        steps.append(scaler(p["scaler"]))
        if int(p["degree"]) > 1:
            steps.append(PolynomialFeatures(int(p["degree"]), include_bias=False))
        m = SVR(C=p["C"], gamma=p["gamma"], epsilon=p["epsilon"], max_iter=100000)
    elif model == "knn":
        from sklearn.neighbors import KNeighborsClassifier
        steps.append(scaler(p["scaler"]))
        m = KNeighborsClassifier(n_neighbors=int(p["k"]), weights=p["weights"], p=int(p["p"]), n_jobs=1)
    elif model == "mlp":
        from sklearn.neural_network import MLPClassifier
        steps.append(scaler("standard"))
        m = MLPClassifier(hidden_layer_sizes=(int(p["hidden"]),) * int(p["layers"]), alpha=p["alpha"],
                          learning_rate_init=p["lr_init"], activation=p["activation"], max_iter=100, random_state=0)
    elif model == "rf":
        from sklearn.ensemble import RandomForestClassifier
        m = RandomForestClassifier(n_estimators=int(p["n_estimators"]), max_depth=int(p["max_depth"]),
                                   min_samples_leaf=int(p["min_samples_leaf"]),
                                   max_features=None if p["max_features"] == "all" else p["max_features"],
                                   criterion=p["criterion"], random_state=0, n_jobs=1)
    elif model == "logreg":
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import PolynomialFeatures
        if int(p["poly_degree"]) > 1:
            steps.append(PolynomialFeatures(int(p["poly_degree"]), include_bias=False))
        steps.append(scaler(p["scaler"]))
        # liblinear shuffles the data: without random_state, by numpy's global
        # generator, which made the same parameters give different errors
        m = LogisticRegression(C=p["C"], penalty=p["penalty"], solver="liblinear", max_iter=500,
                               class_weight=None if p["class_weight"] == "none" else "balanced", random_state=0)
    else:
        raise ValueError(task)
    steps = [s for s in steps if s is not None]
    cv = StratifiedKFold(3, shuffle=True, random_state=0) if clf else KFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = cross_val_score(make_pipeline(*steps, m), x, y, cv=cv, n_jobs=1, error_score=-1.0)
    v = float(1 - np.mean(s))
    return min(v, 2.0) if math.isfinite(v) else 2.0  # a diverged regressor's R^2 capped


# ---------------------------------------------------------------- 20-100 parameters


def branin(x1, x2):
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10 - 0.397887357729738


HART3 = ([[3, 10, 30], [0.1, 10, 35], [3, 10, 30], [0.1, 10, 35]],
         [[0.3689, 0.117, 0.2673], [0.4699, 0.4387, 0.747], [0.1091, 0.8732, 0.5547], [0.03815, 0.5743, 0.8828]], 3.86278214782076)
HART6 = ([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]],
         [[0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886], [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
          [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650], [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381]], 3.32236801141551)


def hartmann(h, x):
    a, p, fmin = h
    c = [1, 1.2, 3, 3.2]
    return fmin - sum(c[i] * math.exp(-sum(a[i][j] * (x[j] - p[i][j]) ** 2 for j in range(len(x)))) for i in range(4))


def rosen(x):
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(len(x) - 1))


def styb(x):
    return sum(v ** 4 - 16 * v ** 2 + 5 * v for v in x) / 2 + 39.16616570377142 * len(x)


def levy(x):
    w = [1 + (v - 1) / 4 for v in x]
    s = math.sin(math.pi * w[0]) ** 2 + (w[-1] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[-1]) ** 2)
    for v in w[:-1]:
        s += (v - 1) ** 2 * (1 + 10 * math.sin(math.pi * v + 1) ** 2)
    return s


def relevant(d, k, salt):
    """k fixed coordinates among d (a seeded draw that does not change between runs)."""
    import random
    return sorted(random.Random(1000 * d + salt).sample(range(d), k))


def hd_problem(name):
    """(dimension, lower, upper, f) of a problem; f returns the regret."""
    kind, d = name.rsplit("-", 1)
    d = int(d)
    if kind == "hart3-in":
        idx = relevant(d, 3, 3)
        return d, 0.0, 1.0, lambda x: hartmann(HART3, [x[i] for i in idx])
    if kind == "hart6-in":
        idx = relevant(d, 6, 6)
        return d, 0.0, 1.0, lambda x: hartmann(HART6, [x[i] for i in idx])
    if kind == "branin-in":
        idx = relevant(d, 2, 2)  # the box [0, 1]^d mapped onto Branin's on its two coordinates
        return d, 0.0, 1.0, lambda x: branin(-5 + 15 * x[idx[0]], 15 * x[idx[1]])
    if kind == "rosen":
        return d, -5.0, 10.0, rosen
    if kind == "styb":
        return d, -5.0, 5.0, styb
    if kind == "levy":
        return d, -10.0, 10.0, levy
    if kind == "levyshift":  # a diagnosis: Levy with its minimum moved off the box's centre
        import random
        r = random.Random(7000 + d)
        shift = [r.uniform(-5, 5) for _ in range(d)]
        return d, -10.0, 10.0, lambda x: levy([v - s for v, s in zip(x, shift)])
    raise ValueError(name)


TUNING_HD = ["hart3-in-50", "rosen-20", "styb-50", "levy-100"]
HELDOUT_HD = ["branin-in-20", "hart6-in-100", "levy-50", "styb-100"]
COSTLY_TUNING, COSTLY_HELDOUT = ["hgb-parkinsons"], ["rf-spambase"]
TUNING = TUNING_TASKS + TUNING_HD + COSTLY_TUNING
# not in either half: problems for diagnosing a result, never for choosing a constant
DIAGNOSIS_HD = ["levyshift-50", "levyshift-100"]
HELDOUT = HELDOUT_TASKS + HELDOUT_HD + COSTLY_HELDOUT
ORDER = TUNING + HELDOUT + DIAGNOSIS_HD  # the order of the problems in tables


def space_of(problem):
    if problem in SPACES:
        return SPACES[problem]
    d, lo, hi, _ = hd_problem(problem)
    return [F("x%03d" % j, lo, hi) for j in range(d)]


_hd = {}


def evaluate(problem, p):
    if problem in SPACES:
        return task_error(problem, p)
    if problem not in _hd:
        _hd[problem] = hd_problem(problem)
    d, _, _, f = _hd[problem]
    return f([p["x%03d" % j] for j in range(d)])


def typed(space, p):
    return {q["name"]: (int(round(p[q["name"]])) if q["type"] == "int" else p[q["name"]]) for q in space}


# ---------------------------------------------------------------- runs


def run_bkb(bkb, problem, seed, T, extra=()):
    with tempfile.TemporaryDirectory() as d:
        sp = os.path.join(d, "space.json")
        with open(sp, "w") as f:
            json.dump({"params": space_of(problem)}, f)
        study = os.path.join(d, "s.jsonl")
        log = os.path.join(d, "trials.jsonl")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([bkb, "optimize", "--space", sp, "-T", str(T), "--seed", str(seed), "--study", study, "-q",
                        "--timeout", "30m", *extra, "--", sys.executable, os.path.abspath(__file__), "plugin", problem, log],
                       check=True, stdout=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        trials = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
    total = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    obj = sum(t["cpu"] for t in trials)
    # the plugin's own interpreter (start-up, imports) is not the sampler's cost either:
    # count it with the objective's process, not with bkb
    return trials, max(total - obj - trials[0].get("boot", 0.0) if trials else total, 0.0), obj


def run_optuna(variant, problem, seed, T):
    import warnings
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.simplefilter("ignore")
    S = optuna.samplers
    sampler = {"tpe": lambda: S.TPESampler(seed=seed),
               "mtpe": lambda: S.TPESampler(seed=seed, multivariate=True),
               "cmaes": lambda: S.CmaEsSampler(seed=seed),
               "random": lambda: S.RandomSampler(seed=seed)}[variant]()
    space = space_of(problem)
    trials = []

    def objective(trial):
        p = {}
        for q in space:
            if q["type"] == "categorical":
                p[q["name"]] = trial.suggest_categorical(q["name"], q["choices"])
            elif q["type"] == "int":
                p[q["name"]] = trial.suggest_int(q["name"], q["low"], q["high"], log=q.get("log", False))
            else:
                p[q["name"]] = trial.suggest_float(q["name"], q["low"], q["high"], log=q.get("log", False))
        t0 = time.process_time()
        v = evaluate(problem, p)
        c = time.process_time() - t0
        trials.append({"params": p if problem in SPACES else {}, "y": v, "cpu": c})
        return v

    evaluate(problem, typed(space, {q["name"]: (q["choices"][0] if q["type"] == "categorical" else q["low"]) for q in space}))  # imports and data, outside the clock
    cpu0 = time.process_time()
    study = optuna.create_study(sampler=sampler, direction="minimize")
    study.optimize(objective, n_trials=T)
    cpu = time.process_time() - cpu0
    return trials, cpu - sum(t["cpu"] for t in trials), sum(t["cpu"] for t in trials)


def plugin(problem, log):
    """The bkb plugin: one JSON request per line; one trial a line into LOG."""
    space = space_of(problem)
    t0 = time.process_time()
    evaluate(problem, typed(space, {q["name"]: (q["choices"][0] if q["type"] == "categorical" else q["low"]) for q in space}))
    boot = time.process_time()
    with open(log, "w") as out:
        for line in sys.stdin:
            req = json.loads(line)
            p = typed(space, req["params"])
            c0 = time.process_time()
            y = evaluate(problem, p)
            c = time.process_time() - c0
            rec = {"params": p if problem in SPACES else {}, "y": y, "cpu": c}
            if boot is not None:
                rec["boot"], boot = boot, None
            out.write(json.dumps(rec) + "\n")
            out.flush()
            print(json.dumps({"id": req["id"], "y": y}), flush=True)


SAMPLERS = ["bkb", "tpe", "mtpe", "cmaes", "random", "bkb-init20", "bkb-v9"]


def in_order(names):
    """The sampler names in SAMPLERS's order, the others (bkb-initN, bkb-vN, ...) after them, sorted."""
    return [s for s in SAMPLERS if s in names] + sorted(set(names) - set(SAMPLERS))


def seeds_of(s):
    if "-" in s:
        a, b = s.split("-")
        return range(int(a), int(b) + 1)
    return range(1, int(s) + 1)


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "plugin":
        return plugin(sys.argv[2], sys.argv[3])
    if cmd == "eval":  # tuning.py eval PROBLEM '{"param": value, ...}'
        t0 = time.process_time()
        print(evaluate(sys.argv[2], json.loads(sys.argv[3])), time.process_time() - t0)
        return
    if cmd == "run":
        bkb, problems, seeds, ts = sys.argv[2], sys.argv[3].split(","), seeds_of(sys.argv[4]), sys.argv[5]
        samplers = sys.argv[6].split(",") if len(sys.argv) > 6 else SAMPLERS[:5]
        cps = [int(t) for t in ts.split("/")]
        T = max(cps)
        for problem in problems:
            for seed in seeds:
                for s in samplers:  # alternating within each seed
                    w0 = time.time()
                    if s == "bkb":
                        trials, cpu, obj = run_bkb(bkb, problem, seed, T)
                    elif s == "bkb-cost":  # bkb with cost-aware asks (--cost-aware)
                        trials, cpu, obj = run_bkb(bkb, problem, seed, T, ("--cost-aware",))
                    elif s.startswith("bkb-flags:"):  # a diagnosis: bkb with these flags ("bkb-flags:--fit scalar")
                        trials, cpu, obj = run_bkb(bkb, problem, seed, T, tuple(s[len("bkb-flags:"):].split()))
                    elif s.startswith("bkb-init"):  # a diagnosis: bkb with another initial design size
                        trials, cpu, obj = run_bkb(bkb, problem, seed, T, ("--init", s[len("bkb-init"):]))
                    elif s.startswith("bkb-policy-"):  # a diagnosis: bkb with another policy
                        trials, cpu, obj = run_bkb(bkb, problem, seed, T, ("--policy", s[len("bkb-policy-"):]))
                    elif s.startswith("bkb-v"):  # bkb at another configuration version
                        trials, cpu, obj = run_bkb(bkb, problem, seed, T, ("--config-version", s[len("bkb-v"):]))
                    else:
                        trials, cpu, obj = run_optuna(s, problem, seed, T)
                    vals = [t["y"] for t in trials]
                    print(json.dumps({"sampler": s, "problem": problem, "seed": seed, "T": T,
                                      "best": {str(t): min(vals[:t]) for t in cps}, "sampler_cpu": cpu,
                                      "objective_cpu": obj, "wall": time.time() - w0, "trials": trials}), flush=True)
        return
    files, ref = sys.argv[2:], "bkb"
    if files[:1] == ["--ref"]:
        ref, files = files[1], files[2:]
    rows, seen = [], set()
    for f in files:  # the first run of a (sampler, problem, seed) counts
        for l in open(f):
            if l.strip():
                r = json.loads(l)
                k = (r["sampler"], r["problem"], r["seed"])
                if k not in seen:
                    seen.add(k)
                    rows.append(r)
    if cmd == "table":
        return table(rows, ref)
    if cmd == "diag":
        return diag(rows)
    if cmd == "count":
        return count(rows)
    sys.exit(__doc__)


def half(problem):
    if problem in DIAGNOSIS_HD:
        return "diagnosis"
    return "tuning" if problem in TUNING else "held-out"


def fmt(v):
    return "%.4g" % v


def table(rows, ref="bkb"):
    import statistics
    from scipy.stats import mannwhitneyu
    by, cpu = {}, {}
    for r in rows:
        for t, v in r["best"].items():
            by.setdefault((r["problem"], int(t)), {}).setdefault(r["sampler"], []).append(v)
        c = cpu.setdefault(r["problem"], {}).setdefault(r["sampler"], [0.0, 0.0, 0])
        c[0] += r["objective_cpu"]
        c[1] += r["sampler_cpu"]
        c[2] += 1
    samplers = in_order({s for v in by.values() for s in v})
    if ref in samplers:  # the reference first
        samplers.remove(ref)
        samplers.insert(0, ref)
    peers = [s for s in samplers if s != ref]
    for h in ("tuning", "held-out", "diagnosis"):
        keys = sorted([k for k in by if half(k[0]) == h], key=lambda k: (ORDER.index(k[0]), k[1]))
        if not keys:
            continue
        print("%s half: median best (CV error, or regret on the hd problems) and p of %s against each peer\n" % (h, ref))
        print("| problem | T | seeds (%s) | " % ref + " | ".join(samplers) + " | " + " | ".join("p vs " + s for s in peers) + " |")
        print("|---|---:|---:|" + "---:|" * (len(samplers) + len(peers)))
        for k in keys:
            d = by[k]
            b = d.get(ref, [])
            cells = [(fmt(statistics.median(d[s])) + ("" if len(d[s]) == len(b) else " (%d seeds)" % len(d[s]))) if s in d else ""
                     for s in samplers]
            ps = ["%.2g" % mannwhitneyu(b, d[s], alternative="two-sided").pvalue if b and s in d else "" for s in peers]
            print("| %s | %d | %d | %s | %s |" % (k[0], k[1], len(b), " | ".join(cells), " | ".join(ps)))
        print("\nobjective CPU seconds summed over each sampler's runs (sampler CPU in parentheses), at the largest T\n")
        print("| problem | " + " | ".join(samplers) + " | bkb / TPE objective CPU |")
        print("|---|" + "---:|" * (len(samplers) + 1))
        for p in sorted({k[0] for k in keys}, key=ORDER.index):
            c = cpu[p]
            ratio = "%.2f" % (c["bkb"][0] / c["tpe"][0]) if p in SPACES and "bkb" in c and "tpe" in c and c["tpe"][0] > 0 else ""
            print("| %s | %s | %s |" % (p, " | ".join("%.0f (%.0f)" % (c[s][0], c[s][1]) if s in c else "" for s in samplers), ratio))
        print()


def count(rows, boot=2000):
    """Rows where each sampler's median is the lowest, observed and under a
    paired bootstrap of the seeds (see the module's docstring)."""
    import random
    import statistics
    by = {}
    for r in rows:
        for t, v in r["best"].items():
            by.setdefault((r["problem"], int(t)), {}).setdefault(r["sampler"], {})[r["seed"]] = v
    for h in ("tuning", "held-out", "diagnosis"):
        keys = sorted([k for k in by if half(k[0]) == h], key=lambda k: (ORDER.index(k[0]), k[1]))
        if not keys:
            continue
        samplers = in_order({s for k in keys for s in by[k]})
        need = math.ceil(2 * len(keys) / 3)
        # The seeds every sampler has on every row: a draw picks among them, one draw for all the
        # rows, so that a run read at two checkpoints, and a sampler beside its peers, stay paired.
        common = sorted(set.intersection(*(set(v) for k in keys for v in by[k].values())))

        def lowest(meds):
            return {s: sum(1 for k in keys if s in meds[k] and meds[k][s] <= min(meds[k].values())) for s in samplers}

        if not common:
            print("%s half: no seed that every sampler has on every row; no bootstrap\n" % h)
            continue
        observed = lowest({k: {s: statistics.median(v.values()) for s, v in by[k].items()} for k in keys})
        rng = random.Random(1)
        total = {s: 0 for s in samplers}
        hits = {s: 0 for s in samplers}
        for _ in range(boot):
            draw = [rng.choice(common) for _ in common]
            meds = {k: {s: statistics.median(v[i] for i in draw) for s, v in by[k].items()} for k in keys}
            c = lowest(meds)
            for s in samplers:
                total[s] += c[s]
                hits[s] += c[s] >= need
        print("%s half: rows (of %d) where each sampler's median best is the lowest, ties counting for each; "
              "paired bootstrap of %d seeds, B = %d\n" % (h, len(keys), len(common), boot))
        print("| sampler | lowest | mean over the draws | draws lowest on at least %d of %d rows |" % (need, len(keys)))
        print("|---|---:|---:|---:|")
        for s in samplers:
            print("| %s | %d | %.2f | %.3f |" % (s, observed[s], total[s] / boot, hits[s] / boot))
        print()


def diag(rows):
    """How each sampler used its trials: per categorical, the share of each
    choice in trials 1-10 and 11-30 (over all seeds; bkb's initial design is
    2 trials per parameter, TPE's 10, CMA-ES's 1); the share of trials after
    30 on the run's most used choice (lock-in); the median objective CPU per
    trial in the first 30 and after; the trial that found the final best."""
    import statistics
    by = {}
    for r in rows:
        by.setdefault(r["problem"], {}).setdefault(r["sampler"], []).append(r)
    for p in sorted(by, key=ORDER.index):
        space = space_of(p)
        cats = [q for q in space if q["type"] == "categorical"]
        print("## %s (%s)\n" % (p, half(p)))
        head = ["sampler"] + [x for q in cats for x in ("%s in 1-10" % q["name"], "%s in 11-30" % q["name"])] + ["%s lock after 30" % q["name"] for q in cats] + \
               ["CPU/trial 1-30 ms", "CPU/trial 31+ ms", "median integers 31+", "median trial of best", "categories of the best (seeds 1-5)"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for s in in_order(by[p]):
            runs = sorted(by[p][s], key=lambda r: r["seed"])
            cells = [s]
            for q in cats:
                for a, b in ((0, 10), (10, 30)):
                    cnt = {c: 0 for c in q["choices"]}
                    n = 0
                    for r in runs:
                        for t in r["trials"][a:b]:
                            cnt[t["params"][q["name"]]] += 1
                            n += 1
                    cells.append(" ".join("%s %.0f%%" % (c, 100 * v / max(n, 1)) for c, v in cnt.items()))
            for q in cats:
                locks = []
                for r in runs:
                    tail = [t["params"][q["name"]] for t in r["trials"][30:]]
                    if tail:
                        locks.append(max(tail.count(c) for c in q["choices"]) / len(tail))
                cells.append("%.0f%%" % (100 * statistics.median(locks)) if locks else "")
            early = [t["cpu"] for r in runs for t in r["trials"][:30]]
            late = [t["cpu"] for r in runs for t in r["trials"][30:]]
            cells.append("%.0f" % (1e3 * statistics.median(early)) if early else "")
            cells.append("%.0f" % (1e3 * statistics.median(late)) if late else "")
            ints = [q["name"] for q in space if q["type"] == "int"]
            cells.append(" ".join("%s %g" % (n, statistics.median([t["params"][n] for r in runs for t in r["trials"][30:]]))
                                  for n in ints) if late and ints and runs[0]["trials"][0]["params"] else "")
            at = []
            bestcats = []
            for r in runs:
                ys = [t["y"] for t in r["trials"]]
                i = ys.index(min(ys))
                at.append(i + 1)
                if cats:
                    bestcats.append("/".join(str(r["trials"][i]["params"][q["name"]])[:6] for q in cats))
            cells.append("%.0f" % statistics.median(at))
            cells.append(", ".join(bestcats[:5]))
            print("| " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()

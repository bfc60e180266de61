#!/usr/bin/python3
"""Regenerates optuna_pruning.json: pruning decisions of Optuna's pruners
on scripted studies, the reference of study/prune_test.go.

Each case is a sequence of events (ask, report, tell, prune) on hand-built
learning curves, several trials running at once; a trial stops (prune) as
soon as should_prune() says so, else completes with its last value. The
Go test replays the events and compares every decision.

Run: /usr/bin/python3 study/testdata/optuna_pruning.py > study/testdata/optuna_pruning.json
(Debian python3-optuna 3.1; standard library otherwise).
"""
import json
import math
import random

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


def curves(rng, n, steps, skip):
    out = []
    for _ in range(n):
        a, b, tau = rng.uniform(0, 1), rng.uniform(0.2, 2), rng.uniform(1, 8)
        pts = []
        for s in range(steps):
            if skip and s > 0 and rng.random() < 0.3:
                continue  # not every step is reported
            pts.append((s, round(a + b * math.exp(-s / tau) + rng.gauss(0, 0.05), 6)))
        out.append(pts)
    return out


def run(name, pruner, spec, direction, seed, n=14, steps=27, parallel=4, skip=False):
    rng = random.Random(seed)
    cs = curves(rng, n, steps, skip)
    if direction == "maximize":
        cs = [[(s, -v) for s, v in c] for c in cs]
    study = optuna.create_study(study_name=name, direction=direction, pruner=pruner,
                                sampler=optuna.samplers.RandomSampler(seed=0))
    events, running, nxt = [], {}, 0
    while nxt < n or running:
        if nxt < n and len(running) < parallel and (not running or rng.random() < 0.4):
            t = study.ask()
            assert t.number == nxt
            running[nxt] = (t, 0)
            events.append({"op": "ask", "trial": nxt})
            nxt += 1
            continue
        k = rng.choice(sorted(running))
        t, i = running[k]
        s, v = cs[k][i]
        t.report(v, s)
        p = bool(t.should_prune())
        events.append({"op": "report", "trial": k, "step": s, "value": v, "prune": p})
        if p:
            study.tell(t, state=optuna.trial.TrialState.PRUNED)
            events.append({"op": "prune", "trial": k})
            del running[k]
        elif i + 1 == len(cs[k]):
            study.tell(t, v)
            events.append({"op": "tell", "trial": k, "value": v})
            del running[k]
        else:
            running[k] = (t, i + 1)
    return {"name": name, "direction": direction, "pruner": spec, "events": events}


P = optuna.pruners
cases = [
    run("median-default", P.MedianPruner(), "median", "minimize", 1),
    run("median-warmup", P.MedianPruner(n_startup_trials=3, n_warmup_steps=4, interval_steps=3),
        "median:startup=3,warmup=4,interval=3", "minimize", 2, skip=True),
    run("median-max", P.MedianPruner(n_startup_trials=2, n_warmup_steps=1), "median:startup=2,warmup=1",
        "maximize", 3),
    run("asha", P.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3), "asha:min=1,eta=3", "minimize", 4, n=20),
    run("asha-rate", P.SuccessiveHalvingPruner(min_resource=2, reduction_factor=2, min_early_stopping_rate=1),
        "asha:min=2,eta=2,rate=1", "maximize", 5, n=16, skip=True),
    run("hyperband", P.HyperbandPruner(min_resource=1, max_resource=27, reduction_factor=3),
        "hyperband:min=1,max=27,eta=3", "minimize", 6, n=24),
    run("hyperband-auto", P.HyperbandPruner(min_resource=1, reduction_factor=3),
        "hyperband:min=1,eta=3", "minimize", 7, n=24),
]
print(json.dumps({"optuna": optuna.__version__, "cases": cases}, indent=None))

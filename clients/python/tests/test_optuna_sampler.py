"""Tests of bkb_client.optuna.BkbSampler, an Optuna sampler backed by bkb.

They need Optuna (Debian: apt-get install python3-optuna) and a bkb binary,
named by BKB_PATH (cmd/bkb's TestOptunaSampler builds one and sets it):

    BKB_PATH=$(go env GOPATH)/bin/bkb /usr/bin/python3 -m unittest -v test_optuna_sampler

The distributions' mapping needs Optuna only; the import test neither.
"""

import contextlib
import json
import logging
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
# The Branin of the example plugin: the same function evaluates the Optuna
# objective and, as a plugin, the command line's run.
BRANIN_PLUGIN = os.path.join(HERE, "..", "..", "..", "objectives", "plugin", "examples", "python", "branin.py")
sys.path.insert(0, os.path.dirname(BRANIN_PLUGIN))

try:
    import optuna
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
    from optuna.trial import TrialState
except ImportError:  # pragma: no cover - skipped below
    optuna = None

BKB = os.environ.get("BKB_PATH")

if optuna is not None:
    from bkb_client import optuna as bkb_optuna  # noqa: E402
    from bkb_client.optuna import BkbSampler  # noqa: E402

    optuna.logging.set_verbosity(optuna.logging.ERROR)  # no tracebacks of the failing trials

needs_optuna = unittest.skipUnless(optuna is not None, "optuna is not installed (Debian: apt-get install python3-optuna)")
needs_bkb = unittest.skipUnless(optuna is not None and BKB, "needs optuna and BKB_PATH (a bkb binary; cmd/bkb's TestOptunaSampler sets it)")


class ImportTest(unittest.TestCase):
    def test_client_imports_without_optuna(self):
        # optuna made unimportable: the client still imports, and only
        # bkb_client.optuna asks for it.
        code = ("import sys; sys.modules['optuna'] = None; sys.path.insert(0, %r); import bkb_client\n"
                "try:\n    bkb_client.BkbSampler\nexcept ImportError:\n    print('lazy')\n") % os.path.join(HERE, "..")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "lazy")


@needs_optuna
class CodecTest(unittest.TestCase):
    """Optuna's distributions as bkb's parameters, and back."""

    def codec(self, dist, name="p"):
        c = bkb_optuna._codec(name, dist)
        self.assertIsNotNone(c, dist)
        return c

    def test_float(self):
        c = self.codec(FloatDistribution(-5, 10))
        self.assertEqual(c.spec, {"name": "p", "type": "float", "low": -5, "high": 10})
        self.assertEqual(c.decode(3.25), 3.25)
        c = self.codec(FloatDistribution(1e-5, 1e-1, log=True))
        self.assertEqual(c.spec, {"name": "p", "type": "float", "low": 1e-5, "high": 1e-1, "log": True})
        c = self.codec(FloatDistribution(0, 1, step=0.25))
        self.assertEqual(c.spec["step"], 0.25)
        self.assertEqual(c.decode(1.0000000000000002), 1.0)  # clipped into the bounds

    def test_int(self):
        c = self.codec(IntDistribution(1, 8))
        self.assertEqual(c.spec, {"name": "p", "type": "int", "low": 1, "high": 8})
        self.assertEqual(c.decode(3.0), 3)
        self.assertIsInstance(c.decode(3.0), int)
        c = self.codec(IntDistribution(1, 1024, log=True))
        self.assertEqual(c.spec["log"], True)
        # bkb's integers have no step: a stepped float on the same grid.
        c = self.codec(IntDistribution(0, 10, step=2))
        self.assertEqual(c.spec, {"name": "p", "type": "float", "low": 0, "high": 10, "step": 2})
        self.assertEqual(c.decode(6.000000000000001), 6)
        self.assertIsInstance(c.decode(4.0), int)

    def test_categorical(self):
        c = self.codec(CategoricalDistribution(["rbf", "linear"]))
        self.assertEqual(c.spec["choices"], ["rbf", "linear"])
        self.assertEqual(c.decode("linear"), "linear")
        c = self.codec(CategoricalDistribution([16, 32, 0.5]))
        self.assertEqual(c.spec["choices"], [16, 32, 0.5])
        self.assertEqual(c.decode(32), 32)
        self.assertEqual(c.decode(32.0), 32)
        # None, booleans and mixed choices: labels, mapped back by position.
        dist = CategoricalDistribution([None, True, False, "a", 1])
        c = self.codec(dist)
        self.assertEqual(c.spec["choices"], ["None", "True", "False", "a", "1"])
        for label, choice in zip(c.spec["choices"], dist.choices):
            self.assertIs(c.decode(label), choice) if choice in (None, True, False) else self.assertEqual(c.decode(label), choice)
        # Labels that collide ("1" and 1) are numbered.
        c = self.codec(CategoricalDistribution(["1", 1]))
        self.assertEqual(c.spec["choices"], ["0: '1'", "1: 1"])
        self.assertEqual(c.decode("1: 1"), 1)
        with self.assertRaises(ValueError):
            c.decode("2")

    def test_left_to_the_independent_sampler(self):
        self.assertIsNone(bkb_optuna._codec("p", FloatDistribution(1, 1)))  # a single value
        self.assertIsNone(bkb_optuna._codec("p", CategoricalDistribution(["only"])))
        self.assertIsNone(bkb_optuna._codec("p\n", FloatDistribution(0, 1)))  # bkb refuses the name
        self.assertIsNone(bkb_optuna._codec("p", FloatDistribution(0, 1e200)))

    def test_study_name(self):
        self.assertEqual(bkb_optuna._bkb_name("my study/v2"), "optuna-my_study_v2")
        self.assertLessEqual(len(bkb_optuna._bkb_name("x" * 500)), 128)


def branin_objective(trial):
    from branin import branin

    return branin(trial.suggest_float("x1", -5, 10), trial.suggest_float("x2", 0, 15))


def quad(trial):
    x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
    return (x - 0.3) ** 2 + (y - 0.6) ** 2


XY = None if optuna is None else {"x": FloatDistribution(0, 1), "y": FloatDistribution(0, 1)}


@needs_bkb
class SamplerTest(unittest.TestCase):
    def sampler(self, **kw):
        kw.setdefault("bkb_path", BKB)
        s = BkbSampler(**kw)
        self.addCleanup(s.close)
        return s

    @contextlib.contextmanager
    def warnings_of(self, logger):
        """The WARNING lines logged on an Optuna logger."""
        lines = []

        class H(logging.Handler):
            def emit(self, record):
                lines.append(record.getMessage())

        h = H(logging.WARNING)
        lg = logging.getLogger(logger)
        level = optuna.logging.get_verbosity()
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        lg.addHandler(h)
        try:
            yield lines
        finally:
            lg.removeHandler(h)
            optuna.logging.set_verbosity(level)

    def bkb_trials(self, sampler):
        return {t.number: t for t in sampler.bkb_study.trials}

    # (a) --------------------------------------------------------------

    def cli_run(self, tmp, *args):
        """The trials of a `bkb optimize` run (bkb export's JSON)."""
        journal = os.path.join(tmp, "cli-%d.jsonl" % len(os.listdir(tmp)))
        subprocess.run([BKB, "optimize", "--study", journal, "--progress", "none"] + list(args),
                       check=True, capture_output=True, timeout=300)
        out = subprocess.run([BKB, "export", "--study", journal, "--out", "-", "--format", "json"],
                             check=True, capture_output=True, timeout=60)
        return json.loads(out.stdout)

    def optuna_branin(self, seed, budget, objective, storage=None):
        sampler = self.sampler(seed=seed, budget=budget,
                               search_space={"x1": FloatDistribution(-5, 10), "x2": FloatDistribution(0, 15)})
        study = optuna.create_study(sampler=sampler, storage=storage)
        study.optimize(objective, n_trials=budget)
        if storage:  # read back from the database
            study = optuna.load_study(study_name=study.study_name, storage=storage)
        trials = study.trials
        self.assertEqual(len(trials), budget)
        return trials

    def assert_same_points(self, trials, cli):
        self.assertEqual(len(trials), len(cli))
        for t, r in zip(trials, cli):
            self.assertEqual(t.number, r["trial"])
            self.assertEqual(t.system_attrs["bkb:trial"], r["trial"])
            got = [t.params["x1"].hex(), t.params["x2"].hex()]
            want = [float(v).hex() for v in r["x"]]
            self.assertEqual(got, want, "trial %d: Optuna asked %r, the command line %r" % (t.number, t.params, r["x"]))

    def test_branin_asks_the_command_lines_points(self):
        """40 trials of Branin with BkbSampler(seed=3, budget=40) ask the
        points of `bkb optimize --space SPACE --seed 3 -T 40 -- branin.py`
        bit for bit, on Optuna's in-memory storage and on SQLite: the same
        configuration (the space, the seed and the budget, on which the
        beta schedule depends) and the same values, the plugin's Branin
        evaluating both."""
        seed, budget = 3, 40
        tmp = tempfile.mkdtemp(prefix="bkb-optuna-test-")
        self.addCleanup(shutil.rmtree, tmp, True)
        space = os.path.join(tmp, "space.json")
        with open(space, "w") as f:
            json.dump({"params": [{"name": "x1", "type": "float", "low": -5, "high": 10},
                                  {"name": "x2", "type": "float", "low": 0, "high": 15}]}, f)
        cli = self.cli_run(tmp, "--space", space, "--seed", str(seed), "-T", str(budget), "--", sys.executable, BRANIN_PLUGIN)
        for storage in (None, "sqlite:///" + os.path.join(tmp, "optuna.db")):
            with self.subTest(storage=storage or "in-memory"):
                trials = self.optuna_branin(seed, budget, branin_objective, storage)
                self.assert_same_points(trials, cli)
                self.assertEqual([t.value for t in trials], [r["value"] for r in cli])

    def test_branin_builtin(self):
        """Against `bkb optimize -f branin --seed 3 -T 40`, Go's own
        Branin, the Python objective must compute Go's values. Go folds the
        constants 5.1/(4 pi^2), 5/pi and 10(1 - 1/(8 pi)) exactly and
        rounds them once (Python rounds every operation): with Go's
        float64 constants written out, the values differ only where Go's
        math.Cos and the C library's cos differ in the last ulp. The points
        agree bit for bit up to the first such value (the next point
        depends on it) and may drift apart after it: for seed 3 one value
        differs (trial 21) and all 40 points still agree; for seeds 1, 2, 4
        and 5 the first 12, 18, 27 and 9 points agree (glibc, amd64). With
        the constants computed in Python, values differ by 1e-14 and the
        points drift from trial 5 on. Bit-for-bit equality needs
        bit-for-bit values: test_branin_asks_the_command_lines_points."""
        seed, budget = 3, 40
        tmp = tempfile.mkdtemp(prefix="bkb-optuna-test-")
        self.addCleanup(shutil.rmtree, tmp, True)
        cli = self.cli_run(tmp, "-f", "branin", "--seed", str(seed), "-T", str(budget))
        b, c, k = 0.12918450914398066, 1.5915494309189533, 9.602112642270262  # Go's float64 constants

        def go_branin(trial):
            x1, x2 = trial.suggest_float("x1", -5, 10), trial.suggest_float("x2", 0, 15)
            u = x2 - b * x1 * x1 + c * x1 - 6.0
            return u * u + k * math.cos(x1) + 10.0

        trials = self.optuna_branin(seed, budget, go_branin)
        first = next((i for i, (t, r) in enumerate(zip(trials, cli)) if t.value != r["value"]), budget - 1)
        self.assert_same_points(trials[:first + 1], cli[:first + 1])
        for t, r in zip(trials[:first + 1], cli):
            self.assertLessEqual(abs(t.value - r["value"]), 2 * math.ulp(r["value"]), "trial %d" % t.number)

    # (b) --------------------------------------------------------------

    def test_two_objectives_pareto_front(self):
        sampler = self.sampler(seed=2, budget=24)
        study = optuna.create_study(sampler=sampler, directions=["minimize", "maximize"])

        def obj(t):
            x, y = t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)
            return x ** 2 + y, (1 - x) ** 2 + x * y

        study.optimize(obj, n_trials=24)
        self.assertEqual(sampler.bkb_study.directions, ["minimize", "maximize"])
        complete = [t for t in study.trials if t.state == TrialState.COMPLETE]
        front = study.best_trials
        self.assertTrue(front)

        def dominates(a, b):  # a dominates b (minimize, maximize)
            ge = a.values[0] <= b.values[0] and a.values[1] >= b.values[1]
            return ge and (a.values[0] < b.values[0] or a.values[1] > b.values[1])

        for f in front:
            self.assertFalse(any(dominates(t, f) for t in complete), "trial %d is dominated" % f.number)
        # bkb was told both values, and finds the same front.
        bk = self.bkb_trials(sampler)
        self.assertNotIn("bkb:trial", study.trials[0].system_attrs)  # the independent sampler's
        for t in complete[1:]:
            b = bk[t.system_attrs["bkb:trial"]]
            self.assertEqual(b.values, list(t.values))
        # bkb's front is that of the trials it asked (not the first).
        asked = complete[1:]
        want = {t.system_attrs["bkb:trial"] for t in asked if not any(dominates(u, t) for u in asked)}
        self.assertEqual(set(sampler.bkb_study.summary().get("pareto_front") or []), want)

    # (c) --------------------------------------------------------------

    def test_raising_objective(self):
        """As with Optuna's own samplers: optimize raises the objective's
        exception, the trial is FAIL; bkb's trial is failed with the
        message. A NaN value fails the trial and the run goes on."""

        def run(sampler):
            study = optuna.create_study(sampler=sampler)

            def obj(t):
                v = quad(t)
                if t.number == 3:
                    raise ValueError("diverged at trial %d" % t.number)
                return v

            with self.assertRaises(ValueError) as cm:
                study.optimize(obj, n_trials=10)
            return study, str(cm.exception)

        ref_study, ref_msg = run(optuna.samplers.RandomSampler(seed=1))
        sampler = self.sampler(seed=1, search_space=XY)
        study, msg = run(sampler)
        self.assertEqual(msg, ref_msg)
        self.assertEqual([t.state for t in study.trials], [t.state for t in ref_study.trials])
        self.assertEqual(study.trials[3].state, TrialState.FAIL)
        b = self.bkb_trials(sampler)[study.trials[3].system_attrs["bkb:trial"]]
        self.assertEqual(b.state, "failed")
        self.assertEqual(b.error, "ValueError: diverged at trial 3")
        # catch= goes on, and a NaN fails its trial with Optuna's message.
        study.optimize(lambda t: float("nan") if t.number == 5 else quad(t), n_trials=3, catch=(ValueError,))
        t5 = study.trials[5]
        self.assertEqual(t5.state, TrialState.FAIL)
        b = self.bkb_trials(sampler)[t5.system_attrs["bkb:trial"]]
        self.assertEqual((b.state, b.error), ("failed", "The value nan is not acceptable."))
        self.assertEqual(study.trials[6].state, TrialState.COMPLETE)
        # By hand (ask and tell), the message says it is Optuna's failure.
        t = study.ask()
        quad(t)
        study.tell(t, state=TrialState.FAIL)
        b = self.bkb_trials(sampler)[study.trials[-1].system_attrs["bkb:trial"]]
        self.assertEqual((b.state, b.error), ("failed", "Optuna trial %d failed" % t.number))

    # (d) --------------------------------------------------------------

    def test_n_jobs(self):
        """Two threads: every Optuna trial has its own bkb trial, none lost
        or twice, and bkb holds what Optuna holds."""
        n = 16
        sampler = self.sampler(seed=4, search_space=XY)
        study = optuna.create_study(sampler=sampler)
        in_flight, most = [0], [0]
        lock = threading.Lock()

        def obj(t):
            with lock:
                in_flight[0] += 1
                most[0] = max(most[0], in_flight[0])
            time.sleep(0.05)
            v = quad(t)
            with lock:
                in_flight[0] -= 1
            return v

        study.optimize(obj, n_trials=n, n_jobs=2)
        trials = study.trials
        self.assertEqual(len(trials), n)
        self.assertEqual(most[0], 2, "the two jobs never overlapped")
        numbers = sorted(t.system_attrs["bkb:trial"] for t in trials)
        self.assertEqual(numbers, list(range(n)))
        bk = self.bkb_trials(sampler)
        self.assertEqual(len(bk), n)
        for t in trials:
            self.assertEqual(t.state, TrialState.COMPLETE)
            b = bk[t.system_attrs["bkb:trial"]]
            self.assertEqual((b.state, b.value, b.params), ("complete", t.value, t.params))

    def test_heartbeats(self):
        """A trial longer than the server's heartbeat grace (1.5 s here)
        keeps its bkb trial: the sampler heartbeats it, so that the other
        job's asks never get it again."""
        sampler = self.sampler(seed=12, search_space=XY, server_args=["--heartbeat-grace", "1500ms"])
        study = optuna.create_study(sampler=sampler)

        def obj(t):
            time.sleep(4.0 if t.number == 0 else 0.1)
            return quad(t)

        study.optimize(obj, n_trials=30, n_jobs=2)  # the other job asks for 3 s
        numbers = [t.system_attrs["bkb:trial"] for t in study.trials]
        self.assertEqual(sorted(numbers), list(range(30)), "a bkb trial was handed out twice")
        bk = self.bkb_trials(sampler)
        for t in study.trials:
            b = bk[t.system_attrs["bkb:trial"]]
            self.assertEqual((b.state, b.value), ("complete", t.value))

    # (e) --------------------------------------------------------------

    def test_median_pruner(self):
        """Optuna's MedianPruner decides; the sampler tells bkb the pruned
        trials with their learning curves."""
        sampler = self.sampler(seed=5, search_space=XY)
        study = optuna.create_study(sampler=sampler, pruner=optuna.pruners.MedianPruner(n_startup_trials=3))

        def obj(t):
            v = quad(t)
            for step in range(8):
                loss = v + 1.0 / (step + 1)
                t.report(loss, step)
                if t.should_prune():
                    raise optuna.TrialPruned()
            return v

        study.optimize(obj, n_trials=16)
        pruned = [t for t in study.trials if t.state == TrialState.PRUNED]
        self.assertTrue(pruned, "MedianPruner pruned nothing in 16 trials")
        bk = self.bkb_trials(sampler)
        for t in study.trials:
            b = bk[t.system_attrs["bkb:trial"]]
            want = "pruned" if t.state == TrialState.PRUNED else "complete"
            self.assertEqual(b.state, want, "Optuna trial %d" % t.number)
            if t.state == TrialState.PRUNED:
                self.assertEqual(b.intermediate_values, t.intermediate_values)

    # constraints, the first trial, conditional parameters, url= --------

    def test_constraints(self):
        def constraints(frozen):
            return [frozen.params["x"] + frozen.params["y"] - 1.0]

        sampler = self.sampler(seed=6, budget=12, search_space=XY, constraints_func=constraints, n_constraints=1)
        study = optuna.create_study(sampler=sampler)
        study.optimize(quad, n_trials=12)
        self.assertEqual(sampler.bkb_study.constraints, 1)
        bk = self.bkb_trials(sampler)
        for t in study.trials:
            self.assertEqual(t.system_attrs["constraints"], (t.params["x"] + t.params["y"] - 1.0,))
            b = bk[t.system_attrs["bkb:trial"]]
            self.assertEqual(b.constraints, list(t.system_attrs["constraints"]))
            self.assertEqual(b.feasible, t.system_attrs["constraints"][0] <= 0)
        # Without n_constraints, with search_space=, the count is unknown.
        bad = self.sampler(seed=6, search_space=XY, constraints_func=constraints)
        with self.assertRaisesRegex(ValueError, "n_constraints"):
            optuna.create_study(sampler=bad).optimize(quad, n_trials=1)

    def test_first_trial_and_conditional_parameters(self):
        """Without search_space=, the first trial is the independent
        sampler's and fixes the space; a parameter outside it (a branch
        of a conditional space) is sampled independently, with a warning."""
        sampler = self.sampler(seed=7)
        study = optuna.create_study(sampler=sampler)

        def obj(t):
            kind = t.suggest_categorical("kind", ["a", "b"])
            x = t.suggest_float("x", -2, 2)
            if t.number == 0:
                return x * x
            if kind == "b":
                return x * x + t.suggest_float("extra", 0, 1)
            return x * x + 0.5

        with self.warnings_of("optuna.bkb_client") as warned:
            study.optimize(obj, n_trials=12)
        trials = study.trials
        self.assertNotIn("bkb:trial", trials[0].system_attrs)
        self.assertEqual([t.system_attrs["bkb:trial"] for t in trials[1:]], list(range(11)))
        self.assertEqual(list(sampler.bkb_study._types), ["kind", "x"])
        bk = self.bkb_trials(sampler)
        for t in trials[1:]:
            b = bk[t.system_attrs["bkb:trial"]]
            self.assertEqual(b.params, {"kind": t.params["kind"], "x": t.params["x"]})
        if any("extra" in t.params for t in trials):
            self.assertTrue(any("'extra'" in w for w in warned), warned)

    def test_conditions(self):
        """search_space= with conditions= (bkb's conditional parameters):
        every parameter the objective's branches suggest is bkb's, bkb's
        trials hold the active ones only, and a branch that suggests a
        parameter inactive at bkb's point is told failed."""
        space = {"kernel": CategoricalDistribution(["linear", "rbf", "poly"]),
                 "C": FloatDistribution(1e-3, 1e3, log=True),
                 "gamma": FloatDistribution(1e-4, 10, log=True),
                 "degree": IntDistribution(2, 5)}
        conditions = {"gamma": ("kernel", ["rbf"]), "degree": ("kernel", ["poly"])}
        sampler = self.sampler(seed=13, search_space=space, conditions=conditions)
        study = optuna.create_study(sampler=sampler)

        def obj(t):
            kernel = t.suggest_categorical("kernel", ["linear", "rbf", "poly"])
            v = (math.log10(t.suggest_float("C", 1e-3, 1e3, log=True)) - 1) ** 2
            if kernel == "rbf":
                v += (math.log10(t.suggest_float("gamma", 1e-4, 10, log=True)) + 2) ** 2
            elif kernel == "poly":
                v += abs(t.suggest_int("degree", 2, 5) - 3) + 0.5
            else:
                v += 1.0
            return v

        with self.warnings_of("optuna.bkb_client") as warned:
            study.optimize(obj, n_trials=20)
        self.assertEqual(warned, [])  # nothing sampled independently
        stored = {p["name"]: p.get("condition") for p in sampler.bkb_study.summary()["space"]["params"]}
        self.assertEqual(stored, {"kernel": None, "C": None, "gamma": {"parent": "kernel", "values": ["rbf"]},
                                  "degree": {"parent": "kernel", "values": ["poly"]}})
        bk = self.bkb_trials(sampler)
        kernels = set()
        for t in study.trials:
            b = bk[t.system_attrs["bkb:trial"]]
            self.assertEqual((b.state, b.value, b.params), ("complete", t.value, t.params))
            kernels.add(t.params["kernel"])
        self.assertEqual(kernels, {"linear", "rbf", "poly"})

        def wrong(t):  # gamma for every kernel
            t.suggest_categorical("kernel", ["linear", "rbf", "poly"])
            t.suggest_float("C", 1e-3, 1e3, log=True)
            return t.suggest_float("gamma", 1e-4, 10, log=True)

        study.optimize(wrong, n_trials=6)
        self.assertNotEqual({t.params["kernel"] for t in study.trials[20:]}, {"rbf"})
        for t in study.trials[20:]:
            b = self.bkb_trials(sampler)[t.system_attrs["bkb:trial"]]
            if t.params["kernel"] == "rbf":
                self.assertEqual(b.state, "complete")
            else:
                self.assertEqual(b.state, "failed")
                self.assertIn("gamma=%r, inactive at bkb's point (its condition: kernel in ['rbf'])" % t.params["gamma"], b.error)
        with self.assertRaisesRegex(ValueError, "conditions= needs search_space="):
            BkbSampler(conditions=conditions)
        with self.assertRaisesRegex(ValueError, "want \\(parent, \\[values\\]\\)"):
            BkbSampler(search_space=space, conditions={"gamma": ("nope", ["rbf"])})

    def test_enqueued_and_changed_distributions(self):
        """bkb is told only trials evaluated at its points: an enqueued
        trial is not asked of bkb, and a trial whose distribution changed
        so that bkb's value fell outside it is told failed."""
        sampler = self.sampler(seed=10, search_space=XY)
        study = optuna.create_study(sampler=sampler)
        study.enqueue_trial({"x": 0.5, "y": 0.5})
        study.optimize(quad, n_trials=3)
        trials = study.trials
        self.assertEqual(trials[0].params, {"x": 0.5, "y": 0.5})
        self.assertNotIn("bkb:trial", trials[0].system_attrs)
        self.assertEqual([t.system_attrs["bkb:trial"] for t in trials[1:]], [0, 1])

        def narrowed(t):
            return t.suggest_float("x", 0, 1e-9) + t.suggest_float("y", 0, 1)

        study.optimize(narrowed, n_trials=1)
        t = study.trials[-1]
        self.assertEqual(t.state, TrialState.COMPLETE)
        self.assertLessEqual(t.params["x"], 1e-9)
        b = self.bkb_trials(sampler)[t.system_attrs["bkb:trial"]]
        self.assertEqual(b.state, "failed")
        self.assertIn("evaluated another point: x=", b.error)
        self.assertEqual(b.params["y"], t.params["y"])

    def test_ask_and_tell(self):
        """Optuna's ask-and-tell interface: ask asks bkb, tell tells it,
        several trials in flight."""
        sampler = self.sampler(seed=11, search_space=XY)
        study = optuna.create_study(sampler=sampler)
        trials = [study.ask() for _ in range(3)]
        values = [quad(t) for t in trials]
        for t, v in reversed(list(zip(trials, values))):
            study.tell(t, v)
        bk = self.bkb_trials(sampler)
        self.assertEqual(len(bk), 3)
        for ft, v in zip(study.trials, values):
            b = bk[ft.system_attrs["bkb:trial"]]
            self.assertEqual((b.state, b.value, b.params), ("complete", v, ft.params))

    def test_url_and_resume(self):
        """A server of one's own (url=), an Optuna study on SQLite resumed
        by another sampler: the same bkb study continues; a study with
        another space gets a bkb study of its own."""
        tmp = tempfile.mkdtemp(prefix="bkb-optuna-url-")
        self.addCleanup(shutil.rmtree, tmp, True)
        server = bkb_optuna._Server(BKB, os.path.join(tmp, "studies"))
        self.addCleanup(server.stop)
        storage = "sqlite:///" + os.path.join(tmp, "optuna.db")
        s1 = BkbSampler(url=server.url, seed=8, search_space=XY)
        study = optuna.create_study(study_name="resumed", sampler=s1, storage=storage)
        study.optimize(quad, n_trials=4)
        self.assertEqual(s1.bkb_study.name, "optuna-resumed")
        s2 = BkbSampler(url=server.url, seed=8, search_space=XY)
        study = optuna.load_study(study_name="resumed", sampler=s2, storage=storage)
        study.optimize(quad, n_trials=3)
        self.assertEqual(s2.bkb_study.name, "optuna-resumed")
        self.assertEqual([t.system_attrs["bkb:trial"] for t in study.trials], list(range(7)))
        self.assertEqual(len(s2.bkb_study.trials), 7)
        s3 = BkbSampler(url=server.url, seed=8, search_space={"x": FloatDistribution(0, 2), "y": FloatDistribution(0, 1)},
                        study_name="optuna-resumed")
        optuna.create_study(sampler=s3).optimize(lambda t: t.suggest_float("x", 0, 2), n_trials=1)
        self.assertEqual(s3.bkb_study.name, "optuna-resumed-2")
        self.assertEqual(s1.url, server.url)

    def wait_gone(self, pid, tmp, seconds=20):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                if not os.path.exists(tmp):
                    return
            time.sleep(0.05)
        self.fail("bkb serve (pid %d) still runs, or %s still exists, %g s on" % (pid, tmp, seconds))

    def test_server_stops(self):
        """The sampler's own server stops at close(), when Python exits,
        and when Python is killed (SIGTERM, SIGKILL: no finalizer runs; the
        watchdog sees its stdin closed)."""
        sampler = self.sampler(seed=9, search_space=XY)
        optuna.create_study(sampler=sampler).optimize(quad, n_trials=2)
        pid, tmp = sampler._server.pid, sampler._server.tmp
        os.kill(pid, 0)  # runs
        sampler.close()
        self.wait_gone(pid, tmp)
        code = ("import sys, time, optuna; sys.path.insert(0, %r)\n"
                "from bkb_client.optuna import BkbSampler\n"
                "s = BkbSampler(bkb_path=%r, seed=1)\n"
                "optuna.logging.set_verbosity(optuna.logging.WARNING)\n"
                "optuna.create_study(sampler=s).optimize(lambda t: t.suggest_float('x', 0, 1), n_trials=3)\n"
                "print(s._server.pid, s._server.tmp, flush=True)\n"
                "if sys.argv[1] == 'wait':\n"
                "    time.sleep(600)\n") % (os.path.join(HERE, ".."), BKB)
        out = subprocess.run([sys.executable, "-c", code, "exit"], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        pid, tmp = out.stdout.split()
        self.wait_gone(int(pid), tmp)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with self.subTest(signal=sig.name):
                p = subprocess.Popen([sys.executable, "-c", code, "wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                try:
                    line = p.stdout.readline()
                    self.assertTrue(line, p.stderr.read() if p.poll() is not None else "no output")
                    pid, tmp = line.split()
                    os.kill(int(pid), 0)
                    p.send_signal(sig)
                    p.wait(30)
                finally:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
                    p.stdout.close()
                    p.stderr.close()
                self.wait_gone(int(pid), tmp)

    def test_ctrl_c(self):
        """A Ctrl-C (SIGINT to Python alone: the server runs in a session
        of its own) during a trial: Optuna records it failed and raises
        KeyboardInterrupt, bkb's trial is failed, the server stops."""
        tmp = tempfile.mkdtemp(prefix="bkb-optuna-int-")
        self.addCleanup(shutil.rmtree, tmp, True)
        code = ("import signal, sys, time, optuna; sys.path.insert(0, %r)\n"
                "signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal\n"
                "from bkb_client.optuna import BkbSampler\n"
                "optuna.logging.set_verbosity(optuna.logging.ERROR)\n"
                "s = BkbSampler(bkb_path=%r, dir=%r, seed=1, search_space={'x': optuna.distributions.FloatDistribution(0, 1)})\n"
                "def obj(t):\n"
                "    x = t.suggest_float('x', 0, 1)\n"
                "    if t.number == 2:\n"
                "        print(s._server.pid, s._server.tmp, flush=True)\n"
                "        time.sleep(60)\n"
                "    return x\n"
                "optuna.create_study(study_name='int', sampler=s).optimize(obj, n_trials=5)\n") % (os.path.join(HERE, ".."), BKB, tmp)
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            pid, stmp = p.stdout.readline().split()
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertIn("KeyboardInterrupt", err)
        self.wait_gone(int(pid), stmp)
        with open(os.path.join(tmp, "optuna-int.jsonl")) as f:
            last = json.loads(f.read().splitlines()[-1])
        self.assertEqual((last["kind"], last["trial"], last["error"]), ("fail", 2, "KeyboardInterrupt: "))

    def test_missing_bkb(self):
        s = BkbSampler(bkb_path=os.path.join(tempfile.gettempdir(), "no-such-bkb-binary"), search_space=XY)
        with self.assertRaisesRegex(RuntimeError, "cannot start"):
            optuna.create_study(sampler=s).optimize(quad, n_trials=1)


if __name__ == "__main__":
    unittest.main()

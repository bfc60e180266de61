"""Tests of the client against a running server: BKB_URL names it (the Go
test serve/python_test.go starts one on loopback and runs these)."""

import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import bkb_client  # noqa: E402
from bkb_client import Categorical, Float, Int  # noqa: E402

URL = os.environ.get("BKB_URL")
PREFIX = os.environ.get("BKB_STUDY_PREFIX", "pytest-")

SPACE = [Float("x", -2.0, 2.0), Int("n", 1, 5), Categorical("c", ["a", "b", "c"]), Float("lr", 1e-4, 1.0, log=True)]


def f(p):
    return (p["x"] - 0.5) ** 2 + 0.1 * (p["n"] - 3) ** 2 + (0 if p["c"] == "b" else 0.5)


@unittest.skipUnless(URL, "BKB_URL is not set: no server to test against")
class ClientTest(unittest.TestCase):
    def setUp(self):
        self.client = bkb_client.Client(URL, token=os.environ.get("BKB_TOKEN"), retry_seconds=5)

    def study(self, name, **kw):
        name = PREFIX + name
        try:
            self.client.delete_study(name)
        except bkb_client.BkbError:
            pass
        return self.client.create_study(name, SPACE, **kw)

    def test_ask_tell_types(self):
        s = self.study("types", budget=6, seed=2)
        t = s.ask()
        self.assertIsInstance(t.params["x"], float)
        self.assertIsInstance(t.params["lr"], float)
        self.assertIsInstance(t.params["n"], int)
        self.assertIn(t.params["c"], ["a", "b", "c"])
        s.tell(t, f(t.params))
        s.tell(t, f(t.params))  # a retry is accepted
        with self.assertRaises(bkb_client.BkbError) as cm:
            s.tell(t, f(t.params) + 1)
        self.assertEqual(cm.exception.status, 409)
        batch = s.ask(5)
        self.assertEqual(len(batch), 5)
        self.assertEqual(len({b.number for b in batch}), 5)
        with self.assertRaises(bkb_client.StudyComplete) as cm:
            s.ask()
        self.assertEqual(cm.exception.pending, 5)
        for b in batch:
            self.assertFalse(b.report(1, 0.25))  # no pruner: never stop
            s.tell(b, failed="diverged") if b.number == batch[0].number else s.tell(b, f(b.params))
        trials = s.trials()
        self.assertEqual([t["state"] for t in trials].count("complete"), 5)
        self.assertEqual([t["state"] for t in trials].count("failed"), 1)
        self.assertEqual(trials[2]["intermediate"], {"1": 0.25})
        self.assertIsInstance(trials[0]["params"]["x"], float)

    def test_optimize(self):
        s = self.study("optimize", budget=15, seed=3)
        calls = []

        def obj(trial):
            calls.append(trial.number)
            if trial.number == 4:
                raise ValueError("bad point")
            return f(trial.params)

        best = s.optimize(obj, catch=(ValueError,))
        self.assertEqual(sorted(calls), list(range(15)))
        states = [t["state"] for t in s.trials()]
        self.assertEqual(states.count("complete"), 14)
        self.assertEqual(states[4], "failed")
        values = [t["value"] for t in s.trials() if t["state"] == "complete"]
        self.assertEqual(best["value"], min(values))
        s.extend(17)
        s.optimize(lambda t: f(t.params), n_trials=1)
        self.assertEqual(s.summary()["counts"].get("complete"), 15)

    def test_threads(self):
        s = self.study("threads", budget=24, seed=4)
        errors = []

        def run():
            try:
                s.optimize(lambda t: f(t.params))
            except Exception as e:  # pragma: no cover
                errors.append(e)

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        trials = s.trials()
        self.assertEqual(sorted(t["trial"] for t in trials), list(range(24)))
        self.assertTrue(all(t["state"] == "complete" for t in trials))

    def test_attrs_and_errors(self):
        s = self.study("attrs", budget=3)
        s.set_attr("dataset", "digits-v2")
        t = s.ask()
        s.set_attr("note", {"gpu": 1}, trial=t)
        self.assertEqual(s.summary()["attrs"][0]["value"], "digits-v2")
        self.assertEqual([x for x in s.trials() if x["trial"] == t.number][0]["attrs"], {"note": {"gpu": 1}})
        with self.assertRaises(bkb_client.BkbError) as cm:
            self.client.create_study(PREFIX + "../escape", SPACE)
        self.assertEqual(cm.exception.status, 400)
        with self.assertRaises(bkb_client.BkbError) as cm:
            self.client.study(PREFIX + "missing")
        self.assertEqual(cm.exception.status, 404)
        with self.assertRaises(ValueError):
            s.tell(t)
        s.tell(t, float("nan"))  # recorded as failed, not a crash
        self.assertEqual(s.trials()[0]["state"], "failed")
        names = [x["name"] for x in self.client.studies()]
        self.assertIn(PREFIX + "attrs", names)
        self.client.delete_study(PREFIX + "attrs")
        self.assertNotIn(PREFIX + "attrs", [x["name"] for x in self.client.studies()])


if __name__ == "__main__":
    unittest.main()

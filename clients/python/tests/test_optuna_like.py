"""Tests of the client's Optuna-like surface: failures re-raised or caught,
several objectives and constraints, report/should_prune with a median
pruner, timeout, callbacks, verbose, best_* and trials; and, without a bkb
server, a dead server and the lease and Content-Type the client sends.
BKB_URL names a running server (serve/python_test.go starts one)."""

import contextlib
import http.server
import io
import json
import os
import socket
import sys
import threading
import time
import unittest
import unittest.mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import bkb_client  # noqa: E402
from bkb_client import Float  # noqa: E402

URL = os.environ.get("BKB_URL")
PREFIX = os.environ.get("BKB_STUDY_PREFIX", "pytest-")
SPACE = [Float("x", 0.0, 1.0), Float("y", 0.0, 1.0)]


def quad(p):
    return (p["x"] - 0.3) ** 2 + (p["y"] - 0.6) ** 2


@unittest.skipUnless(URL, "BKB_URL is not set: no server to test against")
class OptunaLikeTest(unittest.TestCase):
    def setUp(self):
        self.client = bkb_client.Client(URL, token=os.environ.get("BKB_TOKEN"))

    def study(self, name, **kw):
        name = PREFIX + name
        try:
            self.client.delete_study(name)
        except bkb_client.BkbError:
            pass
        kw.setdefault("seed", 5)
        return self.client.create_study(name, SPACE, **kw)

    def test_raising_objective_reraises(self):
        s = self.study("reraise", budget=10)

        def obj(t):
            if t.number == 2:
                raise ValueError("bad point %d" % t.number)
            return quad(t.params)

        with self.assertRaises(ValueError) as cm:
            s.optimize(obj)
        self.assertEqual(str(cm.exception), "bad point 2")
        trials = s.trials
        self.assertEqual([t.state for t in trials], ["complete", "complete", "failed"])
        self.assertEqual(trials[2].error, "ValueError: bad point 2")
        self.assertEqual(s.trial(2).error, "ValueError: bad point 2")
        # A KeyboardInterrupt too is recorded, then raised.
        with self.assertRaises(KeyboardInterrupt):
            s.optimize(lambda t: (_ for _ in ()).throw(KeyboardInterrupt()))
        self.assertEqual(s.trials[3].state, "failed")
        self.assertEqual(s.trials[3].error, "KeyboardInterrupt: ")

    def test_catch_goes_on(self):
        s = self.study("catch", budget=8)
        seen = []

        def obj(t):
            seen.append(t.number)
            if t.number % 3 == 1:
                raise RuntimeError("diverged")
            return quad(t.params)

        s.optimize(obj, catch=(RuntimeError,))
        self.assertEqual(seen, list(range(8)))
        states = [t.state for t in s.trials]
        self.assertEqual(states.count("failed"), 3)
        self.assertTrue(all(t.error == "RuntimeError: diverged" for t in s.trials if t.state == "failed"))
        # An exception outside catch still stops the run.
        s.extend(9)
        with self.assertRaises(KeyError):
            s.optimize(lambda t: {}["missing"], catch=(RuntimeError,))

    def test_best_params_value_trial(self):
        s = self.study("best", budget=12)
        with self.assertRaises(ValueError):
            s.best_value
        self.assertIsNone(s.best_trial)
        best = s.optimize(quad_trial)
        values = [t.value for t in s.trials]
        self.assertEqual(s.best_value, min(values))
        self.assertEqual(best.number, s.best_trial.number)
        self.assertEqual(s.best_params, s.best_trial.params)
        self.assertIsInstance(s.best_params["x"], float)
        self.assertEqual(quad(s.best_params), s.best_value)
        self.assertEqual([t.number for t in s.best_trials], [s.best_trial.number])
        self.assertEqual(s.directions, ["minimize"])

    def test_directions_and_constraints(self):
        s = self.study("mo", budget=14, directions=["minimize", "maximize"], constraints=1)
        self.assertEqual(s.directions, ["minimize", "maximize"])
        self.assertEqual(s.constraints, 1)

        def obj(t):
            x, y = t.params["x"], t.params["y"]
            t.set_constraints([x + y - 1.5])
            return [x, x * y]

        self.assertIsNone(s.optimize(obj))
        trials = s.trials
        self.assertEqual(len(trials), 14)
        for t in trials:
            x, y = t.params["x"], t.params["y"]
            self.assertEqual(t.values, [x, x * y])
            self.assertEqual(t.constraints, [x + y - 1.5])
            self.assertEqual(t.feasible, x + y <= 1.5)
        front = s.best_trials
        self.assertTrue(front)
        feasible = [t for t in trials if t.feasible]
        for f in front:  # no feasible trial dominates a point of the front
            self.assertTrue(f.feasible)
            for o in feasible:
                self.assertFalse(o.values[0] <= f.values[0] and o.values[1] >= f.values[1] and o.values != f.values)
        sm = s.summary()
        self.assertEqual(sorted(t.number for t in front), sm["pareto_front"])
        self.assertGreater(sm["hypervolume"], 0)
        with self.assertRaises(RuntimeError):
            s.best_trial
        # By hand: tell with a list of values and constraints.
        s.extend(15)
        t = s.ask()
        told = s.tell(t, [0.5, 0.25], constraints=[-1])
        self.assertEqual(told.values, [0.5, 0.25])
        self.assertEqual(told.constraints, [-1.0])
        with self.assertRaises(bkb_client.BkbError) as cm:
            s.tell(t, 0.5)  # one value for two objectives
        self.assertEqual(cm.exception.status, 400)

    def test_report_should_prune(self):
        s = self.study("prune", budget=8, policy="random", pruner={"kind": "median", "startup_trials": 2})
        curves = []

        def obj(t):
            # Trial k's curve: (k % 2 + 1) / (step + 1): odd trials are twice
            # as bad at every step, so the median rule stops them.
            for step in range(5):
                v = (t.number % 2 + 1) / (step + 1)
                t.report(step, v)
                if t.should_prune():
                    curves.append((t.number, step))
                    raise bkb_client.TrialPruned()
            return v

        s.optimize(obj)
        states = {t.number: t.state for t in s.trials}
        pruned = sorted(n for n, st in states.items() if st == "pruned")
        self.assertEqual(pruned, [n for n, _ in curves])
        self.assertTrue(pruned, "no trial pruned: %s" % states)
        self.assertTrue(all(n % 2 == 1 for n in pruned), states)
        self.assertTrue(all(states[n] == "complete" for n in range(8) if n % 2 == 0), states)
        t = s.trials[pruned[0]]
        self.assertEqual(t.intermediate_values, {0: 2.0})
        # A trial without reports is never pruned.
        s.extend(9)
        t = s.ask()
        self.assertFalse(t.should_prune())

    def test_timeout(self):
        s = self.study("timeout", budget=100)
        start = time.monotonic()
        s.optimize(lambda t: (time.sleep(0.3), quad(t.params))[1], timeout=1.0)
        took = time.monotonic() - start
        n = len(s.trials)
        self.assertLess(took, 5.0)
        self.assertGreaterEqual(n, 2)
        self.assertLess(n, 10)
        self.assertTrue(all(t.state == "complete" for t in s.trials))

    def test_callbacks_and_verbose(self):
        s = self.study("verbose", budget=4)
        got = []
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            s.optimize(quad_trial, callbacks=[lambda st, t: got.append((st.name, t.number, t.state))], verbose=True)
        self.assertEqual(got, [(s.name, k, "complete") for k in range(4)])
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 4, lines)
        self.assertTrue(lines[0].startswith("trial 0 value "), lines[0])
        self.assertIn("best trial", lines[-1])

    def test_ask_zero(self):
        s = self.study("askzero", budget=3)
        for n in (0, -1, True, 1.5):
            with self.assertRaises(ValueError):
                s.ask(n)
        self.assertEqual(len(s.trials), 0)
        self.assertEqual(len(s.ask(1)), 1)


def quad_trial(t):
    return quad(t.params)


class DeadServerTest(unittest.TestCase):
    def test_dead_server_fails_fast(self):
        with socket.socket() as sk:  # a port nothing listens on
            sk.bind(("127.0.0.1", 0))
            port = sk.getsockname()[1]
        c = bkb_client.Client("http://127.0.0.1:%d" % port)
        start = time.monotonic()
        with self.assertRaises(bkb_client.ServerUnreachable) as cm:
            c.studies()
        took = time.monotonic() - start
        self.assertLess(took, 10)
        self.assertIn("cannot reach the bkb server at http://127.0.0.1:%d" % port, str(cm.exception))
        self.assertIn("connection refused", str(cm.exception))
        self.assertIsInstance(cm.exception, ConnectionError)

    def test_silent_server_times_out(self):
        # A socket that listens but never answers: the kernel accepts the
        # connection, the client gives up after timeout with a clear error.
        with socket.socket() as sk:
            sk.bind(("127.0.0.1", 0))
            sk.listen(4)
            c = bkb_client.Client("http://127.0.0.1:%d" % sk.getsockname()[1], timeout=0.5)
            start = time.monotonic()
            with self.assertRaises(bkb_client.BkbError) as cm:
                c.studies()
            self.assertLess(time.monotonic() - start, 5)
        self.assertIn("did not answer GET /api/studies within 0.5 s", str(cm.exception))


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A fake server whose asks carry a lease, recording every request."""

    seen = []

    def log_message(self, *a):
        pass

    def _answer(self, obj):
        b = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        self.seen.append(("GET", self.path, dict(self.headers), None))
        if self.path.endswith("/api/studies"):
            self._answer({"studies": []})
        elif self.path.endswith("/lease"):
            self._answer({"name": "lease", "direction": "minimize", "space": {"params": [{"name": "x", "type": "float"}]}})
        else:
            self._answer({"trial": 0, "state": "complete", "params": {"x": 0.5}, "value": 1.0})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n)) if n else None
        self.seen.append(("POST", self.path, dict(self.headers), body))
        if self.path.endswith("/ask"):
            self._answer({"trials": [{"trial": 0, "params": {"x": 0.5}, "x": [0.5], "lease": "s3cret"}], "heartbeat_seconds": 0.05})
        elif self.path.endswith("/report"):
            self._answer({"trial": 0, "step": body["step"], "prune": False})
        else:
            self._answer({"trial": 0, "state": "complete", "params": {"x": 0.5}, "value": 1.0})


class LeaseTest(unittest.TestCase):
    def test_lease_and_content_type(self):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            _Recorder.seen = []
            s = bkb_client.Client("http://127.0.0.1:%d" % srv.server_address[1]).study("lease")

            def obj(t):
                self.assertEqual(t.lease, "s3cret")
                t.report(0, 2.0)
                time.sleep(0.2)  # a heartbeat or more
                return 1.0

            s.optimize(obj, n_trials=1)
            s.tell(0, 1.0)  # a bare number has no lease
        finally:
            srv.shutdown()
            srv.server_close()
        posts = [(p, h, b) for m, p, h, b in _Recorder.seen if m == "POST"]
        kinds = [p.rsplit("/", 1)[1] for p, _, _ in posts]
        self.assertEqual(kinds[:2], ["ask", "report"])
        self.assertIn("heartbeat", kinds)
        self.assertEqual(kinds[-2:], ["tell", "tell"])
        for p, h, b in posts:
            self.assertEqual(h.get("Content-Type"), "application/json", p)
            if p.endswith("/ask"):
                continue
            if p == posts[-1][0] and b == {"value": 1.0}:
                continue
            self.assertEqual(h.get("X-BKB-Lease"), "s3cret", p)
            self.assertEqual(b.get("lease"), "s3cret", p)
        self.assertEqual(posts[-1][2], {"value": 1.0})
        self.assertNotIn("X-BKB-Lease", posts[-1][1])


class ProxyTest(unittest.TestCase):
    def test_proxy_from_the_environment(self):
        # The recorder plays an HTTP proxy: it is sent the absolute URL.
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        env = {"http_proxy": "http://127.0.0.1:%d" % srv.server_address[1], "no_proxy": "", "NO_PROXY": ""}
        try:
            _Recorder.seen = []
            with unittest.mock.patch.dict(os.environ, env):
                self.assertEqual(bkb_client.Client("http://bkb.invalid:8080").studies(), [])
                with socket.socket() as sk:
                    sk.bind(("127.0.0.1", 0))
                    port = sk.getsockname()[1]
                # no_proxy: the server itself, here nothing listens.
                with unittest.mock.patch.dict(os.environ, {"no_proxy": "127.0.0.1"}):
                    with self.assertRaises(bkb_client.ServerUnreachable):
                        bkb_client.Client("http://127.0.0.1:%d" % port, retry_seconds=0.2).studies()
        finally:
            srv.shutdown()
            srv.server_close()
        self.assertEqual([(m, p) for m, p, _, _ in _Recorder.seen], [("GET", "http://bkb.invalid:8080/api/studies")])


if __name__ == "__main__":
    unittest.main()

"""Python client of `bkb serve`: Bayesian optimization (BKB, GP-UCB) over HTTP.

Standard library only. A study lives in the server's storage (a directory of
journals or PostgreSQL); any number of clients, in any number of processes
or machines, share it: every trial number is handed out once, and every
value told is stored before the server answers.

    import bkb_client

    client = bkb_client.Client("http://127.0.0.1:8080")
    study = client.create_study("demo", [
        bkb_client.Float("lr", 1e-4, 1e-1, log=True),
        bkb_client.Int("depth", 1, 8),
        bkb_client.Categorical("kernel", ["rbf", "linear"]),
    ], direction="minimize", budget=50)
    best = study.optimize(lambda t: train(**t.params))

Or by hand: trial = study.ask(); study.tell(trial, value).
"""

import json
import math
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = [
    "Client",
    "Study",
    "Trial",
    "Float",
    "Int",
    "Categorical",
    "BkbError",
    "StudyComplete",
]

__version__ = "0.1.0"


class BkbError(Exception):
    """An error answer of the server: .status is the HTTP status."""

    def __init__(self, status, message, code=None, pending=0):
        super().__init__("%s (HTTP %d)" % (message, status))
        self.status = status
        self.message = message
        self.code = code
        self.pending = pending


class StudyComplete(BkbError):
    """Every trial of the study's budget has been handed out."""


def Float(name, low, high, log=False, step=None):
    """A real parameter in [low, high] (log: searched on a log scale)."""
    p = {"name": name, "type": "float", "low": low, "high": high, "log": bool(log)}
    if step:
        p["step"] = step
    return p


def Int(name, low, high, log=False):
    """An integer parameter in [low, high]."""
    return {"name": name, "type": "int", "low": low, "high": high, "log": bool(log)}


def Categorical(name, choices):
    """A parameter taking one of choices (strings or numbers)."""
    return {"name": name, "type": "categorical", "choices": list(choices)}


_RETRYABLE = (urllib.error.URLError, ConnectionError, TimeoutError, OSError)


class Client:
    """A connection to a `bkb serve` server.

    url: the server's address; token: the bearer token (a server off
    loopback requires one); retry_seconds: how long a request is retried
    while the server cannot be reached (a restart), with backoff.
    """

    def __init__(self, url="http://127.0.0.1:8080", token=None, timeout=60.0, retry_seconds=60.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retry_seconds = retry_seconds

    def _request(self, method, path, body=None, query=None):
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body, allow_nan=False).encode()
        deadline = time.monotonic() + self.retry_seconds
        wait = 0.05
        while True:
            req = urllib.request.Request(url, data=data, method=method)
            req.add_header("Accept", "application/json")
            if data is not None:
                req.add_header("Content-Type", "application/json")
            if self.token:
                req.add_header("Authorization", "Bearer " + self.token)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                    return json.loads(raw) if raw else None
            except urllib.error.HTTPError as e:
                raw = e.read()
                try:
                    err = json.loads(raw)
                except ValueError:
                    err = {"error": raw.decode(errors="replace") or e.reason}
                if e.code in (502, 503, 504) and time.monotonic() < deadline:
                    pass  # a proxy in front of a restarting server
                else:
                    cls = StudyComplete if err.get("code") == "complete" else BkbError
                    raise cls(e.code, err.get("error", ""), err.get("code"), err.get("pending", 0)) from None
            except _RETRYABLE:
                if time.monotonic() >= deadline:
                    raise
            time.sleep(wait * (0.5 + random.random()))
            wait = min(wait * 2, 2.0)

    @staticmethod
    def _path(name):
        return "/api/studies/" + urllib.parse.quote(name, safe="")

    def studies(self):
        """The studies of the server's storage, as dictionaries."""
        return self._request("GET", "/api/studies")["studies"]

    def create_study(self, name, space, direction="minimize", budget=0, policy=None, seed=None, load_if_exists=False, **config):
        """Create the study name on the space (a list of Float, Int and
        Categorical parameters) and return it. Other keyword arguments are
        fields of the study's configuration (see `bkb create-study -h`)."""
        cfg = dict(config)
        cfg["space"] = {"params": list(space)}
        cfg["direction"] = direction
        cfg["budget"] = budget
        if policy:
            cfg["policy"] = policy
        if seed is not None:
            cfg["seed"] = seed
        try:
            self._request("POST", "/api/studies", {"name": name, "config": cfg})
        except BkbError as e:
            if not (load_if_exists and e.status == 409):
                raise
        return self.study(name)

    def study(self, name):
        """The existing study name."""
        return Study(self, name, self._request("GET", self._path(name)))

    def delete_study(self, name):
        """Delete a study with its trials and attributes."""
        self._request("DELETE", self._path(name))


class Trial:
    """A trial handed out: .number, .params (typed: float, int, str)."""

    def __init__(self, study, number, params):
        self.study = study
        self.number = number
        self.params = params

    def report(self, step, value):
        """Record an intermediate value (also a heartbeat). Returns True when
        the study's pruner says the trial should stop: then call
        study.prune(trial)."""
        return self.study.report(self, step, value)

    def __repr__(self):
        return "Trial(%d, %r)" % (self.number, self.params)


class Study:
    """A study on the server. Safe to use from several threads."""

    def __init__(self, client, name, summary):
        self.client = client
        self.name = name
        self._path = client._path(name)
        self._types = {p["name"]: p.get("type", "float") for p in (summary.get("space") or {}).get("params", [])}
        self.direction = summary.get("direction", "minimize")
        self.heartbeat_seconds = 20.0

    def _typed(self, params):
        out = {}
        for k, v in params.items():
            t = self._types.get(k, "float")
            if t == "float":
                v = float(v)
            elif t == "int":
                v = int(v)
            out[k] = v
        return out

    def ask(self, n=None):
        """Hand out the next trial (n=None), or a list of up to n trials.
        Raises StudyComplete once the budget is handed out (its .pending
        counts trials still being evaluated)."""
        resp = self.client._request("POST", self._path + "/ask", {"n": n or 1})
        self.heartbeat_seconds = resp.get("heartbeat_seconds") or self.heartbeat_seconds
        trials = [Trial(self, t["trial"], self._typed(t["params"])) for t in resp["trials"]]
        return trials if n is not None else trials[0]

    @staticmethod
    def _number(trial):
        return trial.number if isinstance(trial, Trial) else int(trial)

    def tell(self, trial, value=None, failed=None, seconds=None):
        """Record a trial's value, or failed="reason". A retry with the same
        outcome is accepted."""
        if (value is None) == (failed is None):
            raise ValueError("tell: give exactly one of value and failed")
        body = {}
        if value is not None:
            value = float(value)
            if math.isnan(value) or math.isinf(value):
                body["failed"] = "the objective returned %r" % value
            else:
                body["value"] = value
        else:
            body["failed"] = str(failed) or "failed"
        if seconds is not None:
            body["seconds"] = float(seconds)
        return self.client._request("POST", "%s/trials/%d/tell" % (self._path, self._number(trial)), body)

    def report(self, trial, step, value):
        """Record an intermediate value of a pending trial at step; returns
        True when the study's pruner says the trial should stop."""
        r = self.client._request("POST", "%s/trials/%d/report" % (self._path, self._number(trial)), {"step": int(step), "value": float(value)})
        return bool(r.get("prune")) if isinstance(r, dict) else False

    def prune(self, trial):
        """Record the trial as pruned (stopped early on a report's advice)."""
        return self.client._request("POST", "%s/trials/%d/tell" % (self._path, self._number(trial)), {"pruned": True})

    def heartbeat(self, trial):
        """Tell the server the trial's evaluation is alive."""
        self.client._request("POST", "%s/trials/%d/heartbeat" % (self._path, self._number(trial)))

    def trials(self):
        """Every trial, as dictionaries (params typed)."""
        out = self.client._request("GET", self._path + "/trials")["trials"]
        for t in out:
            t["params"] = self._typed(t["params"])
        return out

    @property
    def best_trial(self):
        """The best complete trial (a dictionary), or None."""
        try:
            t = self.client._request("GET", self._path + "/best")
        except BkbError as e:
            if e.status == 404:
                return None
            raise
        t["params"] = self._typed(t["params"])
        return t

    def summary(self):
        """The study's summary: counts, budget, best, importance."""
        return self.client._request("GET", self._path)

    def set_attr(self, key, value, trial=None):
        """Set a user attribute of the study, or of a trial (value None
        deletes it)."""
        body = {"key": key, "value": value}
        if trial is not None:
            body["trial"] = self._number(trial)
        self.client._request("PUT", self._path + "/attrs", body)

    def extend(self, budget):
        """Raise the study's budget of trials to budget."""
        return self.client._request("POST", self._path + "/budget", {"budget": int(budget)})

    def _keepalive(self, trial, stop):
        while not stop.wait(self.heartbeat_seconds):
            try:
                self.heartbeat(trial)
            except BkbError:
                return  # completed elsewhere
            except Exception:
                pass

    def optimize(self, func, n_trials=None, catch=(Exception,), wait_seconds=0.2):
        """Evaluate trials with func(trial) -> float until n_trials are done
        by this call (None: until the study's budget is used up), and
        return the best trial. An exception in catch records the trial as
        failed; others are recorded and raised. While func runs, a thread
        heartbeats the trial, so that a client that dies leaves a trial the
        server hands out again."""
        done = 0
        while n_trials is None or done < n_trials:
            try:
                trial = self.ask()
            except StudyComplete as e:
                if e.pending > 0 and n_trials is None:
                    time.sleep(wait_seconds)  # another client's trial may come back
                    continue
                break
            stop = threading.Event()
            beat = threading.Thread(target=self._keepalive, args=(trial, stop), daemon=True)
            beat.start()
            start = time.monotonic()
            try:
                value = func(trial)
            except catch as e:
                stop.set()
                self._finish(trial, failed="%s: %s" % (type(e).__name__, e), seconds=time.monotonic() - start)
                done += 1
                continue
            except BaseException as e:
                stop.set()
                self._finish(trial, failed="%s: %s" % (type(e).__name__, e), seconds=time.monotonic() - start)
                raise
            finally:
                stop.set()
            self._finish(trial, value=value, seconds=time.monotonic() - start)
            done += 1
        return self.best_trial

    def _finish(self, trial, value=None, failed=None, seconds=None):
        try:
            self.tell(trial, value=value, failed=failed, seconds=seconds)
        except BkbError as e:
            if e.status != 409:  # 409: completed by another client meanwhile
                raise

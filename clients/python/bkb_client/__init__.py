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
    study.optimize(lambda t: train(**t.params))
    print(study.best_value, study.best_params)

Or by hand: trial = study.ask(); study.tell(trial, value). The names follow
Optuna's where they mean the same: optimize's n_trials, timeout, catch and
callbacks, trial.report and trial.should_prune with TrialPruned,
study.best_trial, best_value, best_params, best_trials and trials.
"""

import http.client
import json
import math
import random
import socket
import sys
import threading
import time
import urllib.parse
import urllib.request

__all__ = [
    "Client",
    "Study",
    "Trial",
    "FrozenTrial",
    "Float",
    "Int",
    "Categorical",
    "BkbError",
    "StudyComplete",
    "ServerUnreachable",
    "TrialPruned",
]

__version__ = "0.2.0"


def __getattr__(name):
    # bkb_client.optuna.BkbSampler, an Optuna sampler, imports Optuna:
    # loaded on first use only, so that the client needs nothing but the
    # standard library.
    if name in ("optuna", "BkbSampler"):
        import importlib

        mod = importlib.import_module(".optuna", __name__)
        return mod if name == "optuna" else mod.BkbSampler
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


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


class ServerUnreachable(BkbError, ConnectionError):
    """The server could not be reached (.status is 0): nothing listens at
    the address, or it did not accept the connection within the connect
    timeout, for retry_seconds."""

    def __init__(self, url, reason, seconds):
        BkbError.__init__(self, 0, "cannot reach the bkb server at %s: %s (tried for %.1f s; is `bkb serve` running there?)" % (url, reason, seconds))

    def __str__(self):
        return self.message


class TrialPruned(Exception):
    """Raised by an objective to stop its trial early, as Optuna's
    TrialPruned: optimize records the trial as pruned and goes on."""


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


# Errors of a connection that may come back (a server restarting).
_RETRYABLE = (ConnectionError, TimeoutError, socket.timeout, socket.gaierror, OSError, http.client.RemoteDisconnected)


class Client:
    """A connection to a `bkb serve` server.

    url: the server's address; token: the bearer token (a server off
    loopback requires one); timeout: seconds to wait for an answer once
    connected; connect_timeout: seconds to wait for the connection itself;
    retry_seconds: how long a request is retried while the server cannot
    be reached (a restart), with backoff, before ServerUnreachable. The
    defaults fail within about 5 s on a dead server; set retry_seconds=60
    to ride through a server's restart. A proxy named by the environment
    (http_proxy, https_proxy, no_proxy) is used as urllib would.
    """

    def __init__(self, url="http://127.0.0.1:8080", token=None, timeout=60.0, retry_seconds=5.0, connect_timeout=3.0):
        self.url = url.rstrip("/")
        u = urllib.parse.urlsplit(self.url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("url %r: want http://HOST:PORT or https://HOST:PORT" % url)
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port
        self._base = u.path.rstrip("/")
        self._proxy = None
        proxy = urllib.request.getproxies().get(u.scheme)
        if proxy and not urllib.request.proxy_bypass(u.hostname):
            pu = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
            if pu.hostname:
                self._proxy = (pu.hostname, pu.port or 80)
        self.token = token
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.retry_seconds = retry_seconds

    def _connection(self):
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        if self._proxy and self._https:
            conn = cls(self._proxy[0], self._proxy[1], timeout=self.connect_timeout)
            conn.set_tunnel(self._host, self._port)
        elif self._proxy:
            conn = cls(self._proxy[0], self._proxy[1], timeout=self.connect_timeout)
        else:
            conn = cls(self._host, self._port, timeout=self.connect_timeout)
        conn.connect()
        conn.sock.settimeout(self.timeout)
        return conn

    def _request(self, method, path, body=None, query=None, headers=None):
        url = self._base + path
        if self._proxy and not self._https:
            url = self.url + path  # a proxy is sent the absolute URL
        if query:
            url += "?" + urllib.parse.urlencode(query)
        if body is None and method in ("POST", "PUT", "DELETE"):
            body = {}
        data = None if body is None else json.dumps(body, allow_nan=False).encode()
        start = time.monotonic()
        deadline = start + self.retry_seconds
        wait = 0.05
        while True:
            hdrs = {"Accept": "application/json"}
            if data is not None:
                hdrs["Content-Type"] = "application/json"
            if self.token:
                hdrs["Authorization"] = "Bearer " + self.token
            hdrs.update(headers or {})
            try:
                conn = self._connection()
            except _RETRYABLE as e:
                if time.monotonic() >= deadline:
                    raise ServerUnreachable(self.url, _reason(e), time.monotonic() - start) from None
            else:
                try:
                    conn.request(method, url, body=data, headers=hdrs)
                    resp = conn.getresponse()
                    raw = resp.read()
                    status = resp.status
                except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                    # The server went away mid-request (a restart): retried;
                    # a tell or an ask is safe to repeat.
                    conn.close()
                    if time.monotonic() >= deadline:
                        raise ServerUnreachable(self.url, _reason(e), time.monotonic() - start) from None
                    status = None
                except socket.timeout:
                    conn.close()
                    raise BkbError(0, "the bkb server at %s accepted the connection but did not answer %s %s within %g s" % (self.url, method, path, self.timeout)) from None
                else:
                    conn.close()
                    if status < 300:
                        return json.loads(raw) if raw else None
                    try:
                        err = json.loads(raw)
                        if not isinstance(err, dict):
                            raise ValueError
                    except ValueError:
                        err = {"error": raw.decode(errors="replace") or resp.reason}
                    if not (status in (502, 503, 504) and time.monotonic() < deadline):  # else a proxy before a restarting server
                        cls = StudyComplete if err.get("code") == "complete" else BkbError
                        raise cls(status, err.get("error", ""), err.get("code"), err.get("pending", 0))
            time.sleep(wait * (0.5 + random.random()))
            wait = min(wait * 2, 1.0)

    @staticmethod
    def _path(name):
        return "/api/studies/" + urllib.parse.quote(name, safe="")

    def studies(self):
        """The studies of the server's storage, as dictionaries."""
        return self._request("GET", "/api/studies")["studies"]

    def create_study(self, name, space, direction="minimize", budget=0, policy=None, seed=None, load_if_exists=False,
                     directions=None, constraints=0, **config):
        """Create the study name on the space (a list of Float, Int and
        Categorical parameters) and return it.

        directions: a list of "minimize"/"maximize", one per objective,
        for a study of several objectives (the objective then returns one
        value per entry, and the result is study.best_trials, the Pareto
        front). constraints: the number of constraint values c_j(x) each
        evaluation gives (trial.set_constraints), feasible when all are
        <= 0. Other keyword arguments are fields of the study's
        configuration (see `bkb create-study -h`)."""
        cfg = dict(config)
        cfg["space"] = {"params": list(space)}
        if directions is not None:
            directions = [str(d) for d in directions]
            if not directions:
                raise ValueError("directions: want at least one direction")
            direction = directions[0]
            if len(directions) > 1:
                cfg["directions"] = directions
        cfg["direction"] = direction
        cfg["budget"] = budget
        if constraints:
            cfg["constraints"] = int(constraints)
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


def _reason(e):
    if isinstance(e, (socket.timeout, TimeoutError)):
        return "no connection within the connect timeout"
    if isinstance(e, ConnectionRefusedError):
        return "connection refused"
    return str(e) or type(e).__name__


class Trial:
    """A trial handed out: .number, .params (typed: float, int, str)."""

    def __init__(self, study, number, params, lease=None):
        self.study = study
        self.number = number
        self.params = params
        self.lease = lease
        self._prune = None  # the pruner's decision at the latest report
        self._constraints = None

    def report(self, step, value):
        """Record an intermediate value at step (also a heartbeat). Returns
        the study's pruner's decision, which should_prune() then gives."""
        self._prune = self.study.report(self, step, value)
        return self._prune

    def should_prune(self):
        """Whether the study's pruner stops the trial at its latest report
        (raise TrialPruned then, as with Optuna); False before any report
        and without a pruner."""
        if self._prune is None:
            r = self.study.client._request("GET", "%s/trials/%d/should-prune" % (self.study._path, self.number))
            self._prune = bool(r.get("prune"))
        return self._prune

    def set_constraints(self, constraints):
        """Set the constraint values c_j(x) of this evaluation, for
        optimize on a constrained study (feasible when all are <= 0)."""
        self._constraints = [float(c) for c in constraints]

    def __repr__(self):
        return "Trial(%d, %r)" % (self.number, self.params)


class FrozenTrial(dict):
    """A trial as the server lists it: a dictionary (the API's fields:
    "trial", "state", "params", "value", "values", "constraints",
    "infeasible", "error", "seconds", "intermediate", "attrs") with
    Optuna-like attributes."""

    number = property(lambda self: self.get("trial"))
    state = property(lambda self: self.get("state"))
    params = property(lambda self: self.get("params") or {})
    value = property(lambda self: self.get("value"))
    constraints = property(lambda self: self.get("constraints"))
    error = property(lambda self: self.get("error"))
    seconds = property(lambda self: self.get("seconds"))
    user_attrs = property(lambda self: self.get("attrs") or {})

    @property
    def values(self):
        """Every objective's value (a one-element list with one
        objective), None unless complete."""
        if self.get("values"):
            return list(self["values"])
        return None if self.get("value") is None else [self["value"]]

    @property
    def feasible(self):
        return not self.get("infeasible")

    @property
    def intermediate_values(self):
        """The reported values, by step (int)."""
        return {int(k): v for k, v in (self.get("intermediate") or {}).items()}


class _TrialList(list):
    """The trials; calling it returns itself, so that study.trials()
    (this client's first versions) and study.trials (Optuna's) both work."""

    def __call__(self):
        return self


def _sequence(v):
    """Whether an objective's result is several values (a list, a tuple,
    a NumPy array of one dimension...) rather than one number."""
    if isinstance(v, (list, tuple)):
        return True
    if isinstance(v, (str, bytes, dict)):
        return False
    try:
        iter(v)
        len(v)
    except TypeError:
        return False
    return True


class Study:
    """A study on the server. Safe to use from several threads."""

    def __init__(self, client, name, summary):
        self.client = client
        self.name = name
        self._path = client._path(name)
        self._types = {p["name"]: p.get("type", "float") for p in (summary.get("space") or {}).get("params", [])}
        self.direction = summary.get("direction", "minimize")
        self.directions = list(summary.get("directions") or [self.direction])
        self.constraints = summary.get("constraints", 0)
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

    def _frozen(self, t):
        t = FrozenTrial(t)
        t["params"] = self._typed(t.get("params") or {})
        return t

    def ask(self, n=None):
        """Hand out the next trial (n=None), or a list of n trials (fewer
        when the budget runs out). Raises StudyComplete once the budget is
        handed out (its .pending counts trials still being evaluated)."""
        if n is not None:
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError("ask(n=%r): want n >= 1 trials (or None for one)" % (n,))
        resp = self.client._request("POST", self._path + "/ask", {"n": 1 if n is None else n})
        self.heartbeat_seconds = resp.get("heartbeat_seconds") or self.heartbeat_seconds
        lease = resp.get("lease")
        trials = [Trial(self, t["trial"], self._typed(t["params"]), t.get("lease", lease)) for t in resp["trials"]]
        return trials if n is not None else trials[0]

    @staticmethod
    def _number(trial):
        return trial.number if isinstance(trial, Trial) else int(trial)

    def _trial_post(self, trial, what, body):
        """A POST on one trial, with the trial's lease (when the ask gave
        one) as the JSON field "lease" and the header X-BKB-Lease."""
        lease = getattr(trial, "lease", None)
        headers = None
        if lease:
            body = dict(body or {})
            body["lease"] = lease
            headers = {"X-BKB-Lease": str(lease)}
        return self.client._request("POST", "%s/trials/%d/%s" % (self._path, self._number(trial), what), body, headers=headers)

    def tell(self, trial, value=None, failed=None, seconds=None, values=None, constraints=None):
        """Record a trial's value (a list of values, or values=, with
        several objectives; constraints= the constraint values of a
        constrained study), or failed="reason". A value that is NaN or
        infinite records a failure. A retry with the same outcome is
        accepted. Returns the trial as stored (a FrozenTrial)."""
        if value is not None and _sequence(value):
            if values is not None:
                raise ValueError("tell: give value or values, not both")
            value, values = None, value
        given = sum(x is not None for x in (value, values, failed))
        if given != 1:
            raise ValueError("tell: give exactly one of value, values and failed")
        body = {}
        if failed is not None:
            body["failed"] = str(failed) or "failed"
        else:
            vs = [float(value)] if value is not None else [float(v) for v in values]
            bad = [v for v in vs if math.isnan(v) or math.isinf(v)]
            if bad:
                body["failed"] = "the objective returned %r" % (bad[0],)
            elif values is not None and (len(vs) > 1 or len(self.directions) > 1):
                body["values"] = vs
            else:
                body["value"] = vs[0]
            if constraints is not None and "failed" not in body:
                body["constraints"] = [float(c) for c in constraints]
        if seconds is not None:
            body["seconds"] = float(seconds)
        return self._frozen(self._trial_post(trial, "tell", body))

    def report(self, trial, step, value):
        """Record an intermediate value of a pending trial at step; returns
        True when the study's pruner says the trial should stop."""
        r = self._trial_post(trial, "report", {"step": int(step), "value": float(value)})
        return bool(r.get("prune")) if isinstance(r, dict) else False

    def prune(self, trial):
        """Record the trial as pruned (stopped early on a report's advice)."""
        return self._trial_post(trial, "tell", {"pruned": True})

    def heartbeat(self, trial):
        """Tell the server the trial's evaluation is alive."""
        self._trial_post(trial, "heartbeat", {})

    @property
    def trials(self):
        """Every trial, as FrozenTrial dictionaries (params typed; with
        values, constraints, error, intermediate values, attributes)."""
        return _TrialList(self._frozen(t) for t in self.client._request("GET", self._path + "/trials")["trials"])

    def trial(self, number):
        """One trial (a FrozenTrial)."""
        return self._frozen(self.client._request("GET", "%s/trials/%d" % (self._path, int(number))))

    def _single(self, what):
        if len(self.directions) > 1:
            raise RuntimeError("study %s has %d objectives: it has no single %s; use best_trials (the Pareto front)" % (self.name, len(self.directions), what))

    @property
    def best_trial(self):
        """The best complete feasible trial (a FrozenTrial), or None when
        there is none yet. RuntimeError with several objectives."""
        self._single("best trial")
        try:
            t = self.client._request("GET", self._path + "/best")
        except BkbError as e:
            if e.status == 404:
                return None
            raise
        return self._frozen(t)

    def _best(self):
        t = self.best_trial
        if t is None:
            raise ValueError("study %s has no complete feasible trial yet" % self.name)
        return t

    @property
    def best_value(self):
        """The best trial's value; ValueError when there is none yet."""
        return self._best().value

    @property
    def best_params(self):
        """The best trial's parameters; ValueError when there is none yet."""
        return self._best().params

    @property
    def best_trials(self):
        """With several objectives, the trials on the Pareto front of the
        complete feasible trials; with one, the best trial (a list of at
        most one)."""
        if len(self.directions) < 2:
            t = self.best_trial
            return [] if t is None else [t]
        front = set(self.summary().get("pareto_front") or [])
        return [t for t in self.trials if t.number in front]

    def summary(self):
        """The study's summary: counts, budget, best, importance, and with
        several objectives the Pareto front and its hypervolume."""
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

    def optimize(self, func, n_trials=None, timeout=None, catch=(), callbacks=None, verbose=False, wait_seconds=0.2):
        """Evaluate trials with func(trial) until n_trials are done by this
        call, timeout seconds have passed (no trial is asked after it; the
        one under way finishes), or the study's budget is used up, and
        return the best trial (None with several objectives).

        func returns the value, or with several objectives a list of
        values; on a constrained study it calls trial.set_constraints.
        An exception raised by func records the trial as failed with its
        message and is raised again, unless it is an instance of one of
        catch (then the run goes on); TrialPruned records the trial as
        pruned. callbacks are called as cb(study, frozen_trial) after
        each trial; verbose prints one line per trial on stderr. While
        func runs, a thread heartbeats the trial, so that a client that
        dies leaves a trial the server hands out again."""
        if isinstance(catch, type):
            catch = (catch,)
        catch = tuple(catch or ())
        start = time.monotonic()
        done = 0
        while n_trials is None or done < n_trials:
            if timeout is not None and time.monotonic() - start >= timeout:
                break
            try:
                trial = self.ask()
            except StudyComplete as e:
                if e.pending > 0 and n_trials is None and (timeout is None or time.monotonic() - start < timeout):
                    time.sleep(wait_seconds)  # another client's trial may come back
                    continue
                break
            stop = threading.Event()
            beat = threading.Thread(target=self._keepalive, args=(trial, stop), daemon=True)
            beat.start()
            t0 = time.monotonic()
            try:
                result = func(trial)
            except TrialPruned:
                stop.set()
                frozen = self._frozen(self._finish(trial, pruned=True) or {"trial": trial.number, "state": "pruned", "params": trial.params})
            except BaseException as e:
                stop.set()
                msg = "%s: %s" % (type(e).__name__, e)
                frozen = self._finish(trial, failed=msg, seconds=time.monotonic() - t0)
                if not (isinstance(e, Exception) and isinstance(e, catch)):
                    raise
                frozen = self._frozen(frozen or {"trial": trial.number, "state": "failed", "params": trial.params, "error": msg})
            else:
                stop.set()
                kw = {"values": list(result)} if _sequence(result) else {"value": result}
                frozen = self._finish(trial, constraints=trial._constraints, seconds=time.monotonic() - t0, **kw)
                frozen = self._frozen(frozen or {"trial": trial.number, "params": trial.params})
            finally:
                stop.set()
            done += 1
            if verbose:
                print(self._line(frozen), file=sys.stderr, flush=True)
            for cb in callbacks or ():
                cb(self, frozen)
        return None if len(self.directions) > 1 else self.best_trial

    def _line(self, t):
        """One line about a finished trial, for optimize(verbose=True)."""
        state = t.state or "?"
        if state == "complete":
            vals = t.get("values") or [t.value]
            what = "value %s" % _fmt(vals[0]) if len(vals) == 1 else "values [%s]" % ", ".join(_fmt(v) for v in vals)
            if t.get("infeasible"):
                what += " (infeasible)"
        elif state == "failed":
            what = "failed: %s" % t.error
        else:
            what = state
        line = "trial %d %s, params %s" % (t.number, what, json.dumps(t.params, sort_keys=True))
        if len(self.directions) < 2:
            b = self.best_trial
            if b is not None:
                line += "; best trial %d, value %s" % (b.number, _fmt(b.value))
        return line

    def _finish(self, trial, value=None, failed=None, seconds=None, values=None, constraints=None, pruned=False):
        try:
            if pruned:
                return self.prune(trial)
            return self.tell(trial, value=value, failed=failed, seconds=seconds, values=values, constraints=constraints)
        except BkbError as e:
            if e.status != 409:  # 409: completed by another client meanwhile
                raise
            return None


def _fmt(v):
    return "%.6g" % v if isinstance(v, float) else str(v)

"""An Optuna sampler backed by bkb: BkbSampler.

    import optuna
    from bkb_client.optuna import BkbSampler

    study = optuna.create_study(sampler=BkbSampler(seed=1))
    study.optimize(objective, n_trials=40)

Every trial's parameters in the sampler's search space are chosen by a bkb
study (BKB, GP-UCB, ...; Calandriello et al. 2019) over HTTP: the sampler
asks bkb in sample_relative and tells it the outcome in after_trial. Without
url=, the sampler starts its own `bkb serve` on a temporary directory of
journals (a `bkb` found on PATH, or bkb_path=) and stops it at exit.

The search space is fixed once, by the first trial that needs it: either
search_space= (then bkb chooses every trial, the first included), or the
parameters of the first complete trial (Optuna's intersection search space,
as Optuna's own relative samplers; that first trial is sampled by the
independent sampler). Parameters outside that space, and every trial once
the bkb study's budget is handed out, are sampled by the independent
sampler (RandomSampler(seed) by default). With conditions=, parameters of
search_space= are bkb's conditional ones, as the objective's branches are.
See docs/optuna.md.

This module imports optuna; `import bkb_client` does not.
"""

import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.trial import TrialState

try:  # Optuna >= 3.2
    from optuna.search_space import IntersectionSearchSpace
except ImportError:  # Optuna 3.0, 3.1
    from optuna.samplers import IntersectionSearchSpace

from . import BkbError, Client, StudyComplete

__all__ = ["BkbSampler"]

# Under Optuna's logger, so that optuna.logging.set_verbosity applies.
_logger = optuna.logging.get_logger("optuna.bkb_client")

# The trial system attributes the sampler sets: the bkb server, study and
# trial number that chose an Optuna trial's relative parameters.
URL_ATTR = "bkb:url"
STUDY_ATTR = "bkb:study"
TRIAL_ATTR = "bkb:trial"

# bkb's bounds on parameter bounds (study.MaxAbsBound, and 2^53 for
# integers): a parameter beyond them stays with the independent sampler.
_MAX_ABS_BOUND = 1e150
_MAX_EXACT_INT = 2 ** 53


def _bad_name(name):
    return not isinstance(name, str) or not name.strip() or any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in name)


class _Codec:
    """A distribution's bkb parameter (spec), the way back from bkb's value
    to Optuna's (decode), and for a parent of conditions (categorical or
    integer), the way from Optuna's value to bkb's (encode)."""

    def __init__(self, spec, decode, encode=None):
        self.spec = spec
        self.decode = decode
        self.encode = encode


def _is_number(c):
    return isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c) and abs(c) <= _MAX_EXACT_INT


def _codec(name, dist):
    """The codec of an Optuna distribution, or None when bkb cannot take it
    (it is then sampled independently)."""
    if _bad_name(name) or dist.single():
        return None
    if isinstance(dist, FloatDistribution):
        if max(abs(dist.low), abs(dist.high)) > _MAX_ABS_BOUND:
            return None
        spec = {"name": name, "type": "float", "low": dist.low, "high": dist.high}
        if dist.log:
            spec["log"] = True
        if dist.step is not None:
            spec["step"] = dist.step
        lo, hi = dist.low, dist.high
        # bkb's values are within the bounds; the clip only guards the
        # last ulp of a stepped value (low + k step, rounded).
        return _Codec(spec, lambda v: min(max(float(v), lo), hi))
    if isinstance(dist, IntDistribution):
        if max(abs(dist.low), abs(dist.high)) > _MAX_EXACT_INT:
            return None
        lo, hi, step = dist.low, dist.high, dist.step
        if step == 1:
            spec = {"name": name, "type": "int", "low": lo, "high": hi}
            if dist.log:
                spec["log"] = True
            return _Codec(spec, lambda v: min(max(int(round(float(v))), lo), hi), encode=int)
        # bkb's integers have no step: a stepped integer is bkb's stepped
        # float on the same grid low, low + step, ..., high (Optuna makes
        # high - low a multiple of step), mapped back to the integer.
        spec = {"name": name, "type": "float", "low": lo, "high": hi, "step": step}
        return _Codec(spec, lambda v: min(max(lo + step * int(round((float(v) - lo) / step)), lo), hi))
    if isinstance(dist, CategoricalDistribution):
        choices = list(dist.choices)
        strings = all(isinstance(c, str) and not _bad_name(c) for c in choices) and len(set(choices)) == len(choices)
        numbers = all(_is_number(c) for c in choices) and len({float(c) for c in choices}) == len(choices)
        if strings or numbers:
            enc = choices
        else:
            # bkb's choices are strings or numbers: anything else (None, a
            # bool, a mix) is a label, its repr, mapped back by position.
            enc = [c if isinstance(c, str) and not _bad_name(c) else repr(c) for c in choices]
            if len(set(enc)) != len(enc):
                enc = ["%d: %r" % (i, c) for i, c in enumerate(choices)]
        spec = {"name": name, "type": "categorical", "choices": enc}

        def decode(v):
            for i, e in enumerate(enc):
                if (isinstance(e, str) and e == v) or (not isinstance(e, str) and not isinstance(v, str) and float(e) == float(v)):
                    return choices[i]
            raise ValueError("bkb returned %r for parameter %r, not one of %r" % (v, name, enc))

        def encode(v):
            for i, c in enumerate(choices):
                if c is v or (type(c) is type(v) and c == v):
                    return enc[i]
            raise ValueError("%r is not a choice of parameter %r: %r" % (v, name, choices))

        return _Codec(spec, decode, encode)
    return None


def _canon(p):
    """A bkb parameter in a comparable form (the server normalizes the
    space it stores: integers as floats, false and zero fields omitted)."""
    choices = p.get("choices")
    if choices is not None:
        choices = [c if isinstance(c, str) else float(c) for c in choices]
    cond = p.get("condition")
    if cond:
        cond = (cond.get("parent"), [v if isinstance(v, str) else float(v) for v in cond.get("values") or []])
    return (p.get("name"), p.get("type", "float"), float(p.get("low") or 0), float(p.get("high") or 0),
            bool(p.get("log")), float(p.get("step") or 0), choices, cond)


_NAME_BAD = re.compile(r"[^A-Za-z0-9._-]")


def _bkb_name(optuna_name):
    """A bkb study name (1 to 128 letters, digits, '.', '_' and '-', not
    starting with '.' or '-') for an Optuna study name."""
    n = "optuna-" + _NAME_BAD.sub("_", optuna_name or "study")
    return n[:120]


# The watchdog between Python and its `bkb serve`: it starts the server
# (argv[2:]), its output to TMP/serve.log and its pid in TMP/serve.pid
# (argv[1] is TMP), and stops it when its stdin reaches end of file, which
# happens when the sampler closes it and when the Python process that holds
# the other end dies in any way (exit, SIGTERM, kill -9), then removes TMP.
_WATCHDOG = r"""
import os, shutil, signal, subprocess, sys, threading
tmp = sys.argv[1]
log = open(os.path.join(tmp, "serve.log"), "ab", buffering=0)
try:
    p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
except OSError as e:
    log.write(("cannot start %s: %s\n" % (sys.argv[2], e)).encode())
    sys.exit(127)
with open(os.path.join(tmp, "serve.pid"), "w") as f:
    f.write("%d\n" % p.pid)
lock = threading.Lock()
def stop(*_):
    with lock:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    os._exit(0)
def watch():
    try:
        while sys.stdin.buffer.read(65536):
            pass
    except Exception:
        pass
    stop()
signal.signal(signal.SIGTERM, stop)
threading.Thread(target=watch, daemon=True).start()
code = p.wait()
with lock:
    pass
sys.exit(code)
"""


class _Server:
    """A `bkb serve` on a loopback port the kernel chose (--addr
    127.0.0.1:0: the server prints the address it listens on), behind a
    watchdog that stops it when this process ends, however it ends."""

    def __init__(self, bkb_path=None, directory=None, timeout=30.0, args=()):
        exe = bkb_path or shutil.which("bkb")
        if not exe:
            raise RuntimeError("BkbSampler: no `bkb` on PATH: build it (go build -o bkb ./cmd/bkb in a clone of bkb) and put it "
                               "on PATH, or pass bkb_path= (the bkb binary) or url= (a running `bkb serve`)")
        if not os.access(exe, os.X_OK) or os.path.isdir(exe):
            raise RuntimeError("BkbSampler: cannot start %s serve: not an executable file" % exe)
        self.tmp = tempfile.mkdtemp(prefix="bkb-optuna-")
        self.dir = directory or os.path.join(self.tmp, "studies")
        self.log_path = os.path.join(self.tmp, "serve.log")
        # A session of its own: the terminal's Ctrl-C reaches Python
        # (Optuna records the trial as failed and the sampler tells bkb)
        # and not the server, which the finalizer stops.
        self.proc = subprocess.Popen([sys.executable, "-c", _WATCHDOG, self.tmp, exe, "serve", "--dir", self.dir,
                                      "--addr", "127.0.0.1:0"] + list(args),
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        self._finalizer = weakref.finalize(self, _stop_server, self.proc, self.tmp)
        try:
            self.url = self._wait(timeout)
        except BaseException:
            self.stop()
            raise

    @property
    def pid(self):
        """The pid of the bkb serve process, None before it started."""
        try:
            with open(os.path.join(self.tmp, "serve.pid")) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def _log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def _wait(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            m = re.search(r" at (http://[^/\s]+)/", self._log())
            if m:
                url = m.group(1)
                break
            if self.proc.poll() is not None:
                raise RuntimeError("BkbSampler: bkb serve exited with status %s:\n%s" % (self.proc.returncode, self._log().strip()))
            if time.monotonic() > deadline:
                raise RuntimeError("BkbSampler: bkb serve printed no address within %g s:\n%s" % (timeout, self._log().strip()))
            time.sleep(0.02)
        client = Client(url, retry_seconds=max(1.0, deadline - time.monotonic()))
        client._request("GET", "/api/info")
        return url

    def stop(self):
        self._finalizer()


def _stop_server(proc, tmp):
    """Stop the server: the watchdog, its stdin closed, stops it gracefully
    (SIGTERM: it finishes the requests under way; killed after 10 s) and
    removes its temporary directory."""
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.terminate()
        proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)


def _failure_message(trial):
    """The message of a failed trial. Optuna 3.x hands samplers no
    exception: the sampler reads it from Optuna's optimize loop, the
    caller of after_trial (the local func_err of _run_trial, or the
    value-conversion message of _tell_with_warning). With study.tell by
    hand there is none, and the message says so."""
    f = sys._getframe(1)
    conversion = None
    for _ in range(8):
        if f is None:
            break
        loc = f.f_locals
        if f.f_code.co_name == "_run_trial" and isinstance(loc.get("func_err"), BaseException):
            e = loc["func_err"]
            return "%s: %s" % (type(e).__name__, e)
        if f.f_code.co_name == "_tell_with_warning" and isinstance(loc.get("values_conversion_failure_message"), str):
            conversion = loc["values_conversion_failure_message"]
        f = f.f_back
    return conversion or "Optuna trial %d failed" % trial.number


class BkbSampler(BaseSampler):
    """An Optuna sampler whose suggestions come from a bkb study.

    url: a running `bkb serve` (token= off loopback); without it the
    sampler starts `bkb serve --dir DIR --addr 127.0.0.1:0` from bkb_path
    (default: `bkb` on PATH), DIR a temporary directory (or dir=, which
    keeps the journals: a resumed Optuna study then continues the same bkb
    study), and stops it at exit or close(); server_args are more flags of
    bkb serve (["--heartbeat-grace", "5m"]).

    seed: the bkb study's seed (and the independent sampler's). budget: the
    bkb study's budget of trials (0: none); give Optuna's n_trials here to
    run bkb exactly as `bkb optimize -T n_trials` (its beta schedule and
    arm reserve depend on it); once it is handed out, trials are sampled
    independently. policy and other keyword arguments are fields of the
    bkb study's JSON configuration (serve/openapi.json, docs/optuna.md).

    search_space: a dict of Optuna distributions; bkb then chooses every
    trial, the first included. conditions: with it, bkb's conditional
    parameters (docs/conditional.md), {child: (parent, [values])}: child
    exists only where the categorical or integer parent takes one of
    values, as the objective's branches say; bkb's trials then hold the
    active parameters only. Without it, the space is the parameters of
    the first complete trial (Optuna's intersection search space), which
    the independent sampler chose. The space never changes afterwards:
    parameters outside it go to independent_sampler (default
    RandomSampler(seed)).

    constraints_func: as TPESampler's and NSGAIISampler's, c(frozen_trial)
    returning a sequence of floats, feasible when all are <= 0; stored in
    the trial's system attribute "constraints" and told to bkb.
    n_constraints: their number, needed with search_space= (the bkb study
    is created before any trial ran); otherwise read from the first trial.

    study_name: the bkb study's name (default "optuna-" + the Optuna
    study's name; an existing bkb study of that name with the same space
    and directions is continued, else a suffix "-2", "-3", ... is added).
    """

    def __init__(self, *, url=None, token=None, seed=None, budget=0, policy=None, search_space=None,
                 conditions=None, constraints_func=None, n_constraints=None, independent_sampler=None, study_name=None,
                 bkb_path=None, dir=None, server_args=(), warn_independent_sampling=True, **config):
        self._url = url
        self._token = token
        self._seed = seed
        self._budget = int(budget or 0)
        self._policy = policy
        self._config = config
        self._search_space = dict(search_space) if search_space is not None else None
        self._conditions = dict(conditions or {})
        if self._conditions and self._search_space is None:
            raise ValueError("BkbSampler: conditions= needs search_space= (the parameters they relate)")
        for child, cond in self._conditions.items():
            if child not in self._search_space or not isinstance(cond, (tuple, list)) or len(cond) != 2 \
                    or cond[0] not in self._search_space or not isinstance(cond[1], (tuple, list)) or not cond[1]:
                raise ValueError("BkbSampler: conditions[%r] = %r: want (parent, [values]), both parameters of "
                                 "search_space" % (child, cond))
        self._constraints_func = constraints_func
        self._n_constraints = n_constraints
        self._independent = independent_sampler if independent_sampler is not None else RandomSampler(seed=seed)
        self._study_name = study_name
        self._bkb_path = bkb_path
        self._dir = dir
        self._server_args = list(server_args)
        self._warn_independent = warn_independent_sampling

        self._lock = threading.RLock()
        self._intersection = IntersectionSearchSpace()
        self._server = None
        self._client = None
        self._bkb = None            # the bkb_client.Study
        self._optuna_study = None   # (study id, name) of the Optuna study it serves
        self._space = None          # name -> distribution, fixed at creation
        self._codecs = None         # name -> _Codec
        self._pending = {}          # bkb trial number -> bkb_client.Trial
        self._asked = {}            # bkb trial number -> the parameters it gave Optuna
        self._by_trial_id = {}      # Optuna trial id -> bkb trial number
        self._warned = set()
        self._beat = None
        self._beat_stop = threading.Event()

    # --- the server and the bkb study -------------------------------------

    @property
    def url(self):
        """The bkb server's URL (the sampler's own server once started)."""
        return self._url or (self._server.url if self._server else None)

    @property
    def bkb_study(self):
        """The bkb_client.Study the sampler asks, None before the first
        trial that needs it."""
        return self._bkb

    def client(self):
        """The bkb_client.Client of the sampler's server (started if need be)."""
        with self._lock:
            if self._client is None:
                if self._url is None:
                    self._server = _Server(self._bkb_path, self._dir, args=self._server_args)
                self._client = Client(self.url, token=self._token)
            return self._client

    def close(self):
        """Stop the heartbeats, and the server the sampler started."""
        self._beat_stop.set()
        if self._server is not None:
            self._server.stop()

    def _constraint_count(self, study):
        if self._constraints_func is None:
            return 0
        if self._n_constraints is not None:
            return int(self._n_constraints)
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
            c = t.system_attrs.get("constraints")
            if c is not None:
                return len(c)
        raise ValueError("BkbSampler: constraints_func with search_space=: give n_constraints= (the bkb study is "
                         "created before any trial has constraint values)")

    def _create(self, study, space):
        codecs = {n: _codec(n, d) for n, d in space.items()}
        codecs = {n: c for n, c in codecs.items() if c is not None}
        if not codecs:
            return False
        params = [dict(c.spec) for c in codecs.values()]
        for p in params:
            if p["name"] in self._conditions:
                parent, values = self._conditions[p["name"]]
                pc = codecs.get(parent)
                if pc is None or pc.encode is None:
                    raise ValueError("BkbSampler: the condition of %r names %r, which is not a categorical or integer "
                                     "parameter of bkb's space (a stepped integer is a stepped float there)" % (p["name"], parent))
                p["condition"] = {"parent": parent, "values": [pc.encode(v) for v in values]}
        directions = ["maximize" if d == optuna.study.StudyDirection.MAXIMIZE else "minimize" for d in study.directions]
        constraints = self._constraint_count(study)
        client = self.client()
        base = self._study_name or _bkb_name(study.study_name)
        cfg = dict(self._config)
        if self._policy:
            cfg["policy"] = self._policy
        for k in range(1, 1000):
            name = base if k == 1 else "%s-%d" % (base, k)
            try:
                bkb = client.create_study(name, params, budget=self._budget, seed=self._seed,
                                          directions=directions, constraints=constraints, **cfg)
                try:
                    bkb.set_attr("optuna.study_name", study.study_name)
                except BkbError:
                    pass  # a storage without attributes
                break
            except BkbError as e:
                if e.status != 409:
                    raise BkbError(e.status, "BkbSampler: creating bkb study %s: %s" % (name, e.message)) from None
            # It exists: continued when it is the same space and directions
            # (a resumed Optuna study), else the next name.
            bkb = client.study(name)
            stored = (bkb.summary().get("space") or {}).get("params") or []
            if [_canon(p) for p in stored] == [_canon(p) for p in params] and bkb.directions == directions and bkb.constraints == constraints:
                break
        else:
            raise RuntimeError("BkbSampler: no free bkb study name after %s-999" % base)
        self._bkb = bkb
        self._space = {n: space[n] for n in codecs}
        self._codecs = codecs
        self._optuna_study = (study._study_id, study.study_name)
        _logger.info("BkbSampler: bkb study %s at %s over %s" % (bkb.name, client.url, ", ".join(codecs)))
        return True

    def _check_study(self, study):
        if self._optuna_study is not None and self._optuna_study != (study._study_id, study.study_name):
            raise ValueError("BkbSampler: this sampler serves Optuna study %r: create one sampler per study" % (self._optuna_study[1],))

    # --- Optuna's sampler interface -------------------------------------

    def reseed_rng(self):
        # The bkb study's choices depend on its records only: only the
        # independent sampler is reseeded (Optuna's n_jobs > 1).
        self._independent.reseed_rng()

    def infer_relative_search_space(self, study, trial):
        with self._lock:
            self._check_study(study)
            if self._space is not None:
                return dict(self._space)
            if self._search_space is not None:
                space = self._search_space
            else:
                space = self._intersection.calculate(study, ordered_dict=True)
            return {n: d for n, d in space.items() if _codec(n, d) is not None}

    def sample_relative(self, study, trial, search_space):
        if not search_space:
            return {}
        with self._lock:
            self._check_study(study)
            if self._bkb is None and not self._create(study, search_space):
                return {}
            # bkb is told only trials evaluated at its own points: not a
            # trial whose space lacks some of bkb's (another thread fixed
            # the space while this trial inferred its own, or a wrapper such
            # as PartialFixedSampler fixed some), nor an enqueued trial
            # (study.enqueue_trial) fixing some of them.
            fixed = trial.system_attrs.get("fixed_params") or {}
            if any(search_space.get(n) != d or n in fixed for n, d in self._space.items()):
                return {}
            try:
                t = self._bkb.ask()
            except StudyComplete:
                if "budget" not in self._warned:
                    self._warned.add("budget")
                    _logger.warning("BkbSampler: bkb study %s has handed out its budget of %d trials: trial %d and "
                                    "the next are sampled by %s" % (self._bkb.name, self._budget, trial.number,
                                                                   type(self._independent).__name__))
                return {}
            params = {n: self._codecs[n].decode(t.params[n]) for n in self._space if n in t.params}
            self._pending[t.number] = t
            self._asked[t.number] = params
            self._by_trial_id[trial._trial_id] = t.number
            study._storage.set_trial_system_attr(trial._trial_id, URL_ATTR, self.url)
            study._storage.set_trial_system_attr(trial._trial_id, STUDY_ATTR, self._bkb.name)
            study._storage.set_trial_system_attr(trial._trial_id, TRIAL_ATTR, t.number)
            self._start_heartbeats()
            return params

    def sample_independent(self, study, trial, param_name, param_distribution):
        if self._warn_independent and self._space is not None and param_name not in self._space and param_name not in self._warned:
            self._warned.add(param_name)
            _logger.warning("BkbSampler: parameter %r (first in trial %d) is outside the bkb study's space (%s): it is "
                            "sampled by %s" % (param_name, trial.number, ", ".join(self._space),
                                               type(self._independent).__name__))
        return self._independent.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values):
        constraints = None
        if self._constraints_func is not None and state in (TrialState.COMPLETE, TrialState.PRUNED):
            constraints = self._constraints(study, trial, state)
        with self._lock:
            number = self._by_trial_id.pop(trial._trial_id, None)
            if number is None:
                # Asked by another sampler (study.tell in another process):
                # told here only if it is the same bkb study on the same
                # server.
                attrs = trial.system_attrs
                if self._bkb is None or attrs.get(STUDY_ATTR) != self._bkb.name or attrs.get(URL_ATTR) != self.url:
                    return  # sampled independently, or by another bkb study
                number = attrs.get(TRIAL_ATTR)
                if number is None:
                    return
            bt = self._pending.pop(number, number)
            asked = self._asked.pop(number, None)
            bkb = self._bkb
        # A parameter Optuna suggested with another value than bkb's (a
        # distribution changed since the space was fixed, so that bkb's
        # value fell outside it and the independent sampler chose): the
        # point evaluated is not bkb's, and bkb is told it failed rather
        # than a value at a point it did not ask.
        # Likewise a parameter bkb's conditions made inactive at its point
        # that the objective suggested all the same.
        other = sorted(n for n, v in (asked or {}).items() if n in trial.params and trial.params[n] != v)
        inactive = sorted(n for n in (self._space or {}) if asked is not None and n not in asked and n in trial.params)
        try:
            if other or inactive:
                why = ["%s=%r, not bkb's %r" % (n, trial.params[n], asked[n]) for n in other]
                why += ["%s=%r, inactive at bkb's point (its condition: %s in %r)" % (
                    n, trial.params[n], self._conditions[n][0], list(self._conditions[n][1]))
                    if n in self._conditions else "%s=%r, not in bkb's point" % (n, trial.params[n]) for n in inactive]
                bkb.tell(bt, failed="Optuna trial %d evaluated another point: %s" % (trial.number, "; ".join(why)))
            elif state == TrialState.COMPLETE:
                kw = {"values": list(values)} if len(values) > 1 else {"value": values[0]}
                if bkb.constraints:
                    kw["constraints"] = list(constraints) if constraints is not None else None
                bkb.tell(bt, **kw)
            elif state == TrialState.PRUNED:
                # Its learning curve, so that bkb's model is told the last
                # value (docs/pruning.md, tell=last), then the pruning.
                for step in sorted(trial.intermediate_values):
                    v = trial.intermediate_values[step]
                    if isinstance(v, (int, float)) and math.isfinite(v):
                        bkb.report(bt, step, v)
                bkb.prune(bt)
            else:
                bkb.tell(bt, failed=_failure_message(trial))
        except BkbError as e:
            if e.status != 409:
                raise
            warnings.warn("BkbSampler: bkb trial %d of Optuna trial %d was already finished: %s" % (number, trial.number, e.message))

    def _constraints(self, study, trial, state):
        try:
            from optuna.samplers._base import _process_constraints_after_trial
        except ImportError:  # pragma: no cover - another Optuna
            _process_constraints_after_trial = None
        if _process_constraints_after_trial is not None:
            # Optuna's own: the same checks and the same system attribute
            # as TPESampler and NSGAIISampler.
            _process_constraints_after_trial(self._constraints_func, study, trial, state)
            return study._storage.get_trial_system_attrs(trial._trial_id).get("constraints")
        c = tuple(float(x) for x in self._constraints_func(trial))
        if any(math.isnan(x) for x in c):
            raise ValueError("Constraint values cannot be NaN.")
        study._storage.set_trial_system_attr(trial._trial_id, "constraints", c)
        return c

    # --- heartbeats -------------------------------------------------------

    def _start_heartbeats(self):
        """A thread that heartbeats the bkb trials under evaluation, so
        that the server does not hand them out again after its grace
        (a trial of Optuna that runs for longer than a minute)."""
        if self._beat is not None:
            return
        ref = weakref.ref(self)
        stop = self._beat_stop
        first = self._bkb.heartbeat_seconds or 20.0  # a third of the server's grace

        def beat():
            interval = first
            while not stop.wait(interval):
                s = ref()
                if s is None:
                    return
                with s._lock:
                    trials = list(s._pending.values())
                    bkb = s._bkb
                del s
                interval = bkb.heartbeat_seconds or interval
                for t in trials:
                    try:
                        bkb.heartbeat(t)
                    except Exception:
                        pass  # told meanwhile, or the server is gone

        self._beat = threading.Thread(target=beat, name="bkb-heartbeat", daemon=True)
        self._beat.start()

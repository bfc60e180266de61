package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/study"
)

const matrixPython = `
import json, sys

def sq(a):
    return a * a

def remap(x):
    if len(x) == 4:
        # the conditional space: b when k is p, c when k is q
        return [x[0], x[3] if x[1] == 1 else x[2], x[1]]
    return x

def evaluate(kind, x):
    x = remap(x)
    f1 = sq(x[0] - 0.7) + sq(x[1] - 1.3)
    f2 = sq(x[0] + 1) + sq(x[1] - 3)
    if len(x) > 2:
        f1 = f1 + sq(x[2] - 1)
        f2 = f2 + sq(x[2])
    if kind == "multi":
        return {"y": [f1, f2]}
    if kind == "constrained":
        return {"y": f1, "constraints": [0.5 - x[0]]}
    return {"y": f1}

if __name__ == "__main__":
    kind, log = sys.argv[1], sys.argv[2]
    for line in sys.stdin:
        req = json.loads(line)
        out = evaluate(kind, req["x"])
        out["id"] = req["id"]
        with open(log, "a") as f:
            f.write(json.dumps(req["x"]) + "\n")
        print(json.dumps(out), flush=True)
`

// matrixPythonDriver runs phases through the Python client: argv is the
// server URL, the study name, the kind, the space file, the config JSON
// (or "" to load), the trials to complete, the budget to extend to (0:
// none) and the evaluation log.
const matrixPythonDriver = `
import json, sys
sys.path.insert(0, sys.argv[9])
import bkb_client
from matrix_plugin import evaluate, remap, sq

url, name, kind, space_file, cfg, upto, extend, log = sys.argv[1:9]
upto, extend = int(upto), int(extend)
client = bkb_client.Client(url, retry_seconds=5)
space = json.load(open(space_file))["params"]
if cfg:
    cfg = json.loads(cfg)
    cfg.pop("space", None)
    study = client.create_study(name, space, **cfg)
else:
    study = client.study(name)
if extend:
    study.extend(extend)

def x_of(params):
    x = []
    for p in space:
        if p["name"] not in params:
            x.append(None)  # inactive
            continue
        v = params[p["name"]]
        x.append(float(p["choices"].index(v)) if p["type"] == "categorical" else float(v))
    return x

def done():
    ts = study.trials
    ts = ts() if callable(ts) else ts
    return sum(1 for t in ts if t["state"] in ("complete", "pruned"))

while done() < upto:
    t = study.ask()
    x = x_of(t.params)
    with open(log, "a") as f:
        f.write(json.dumps(x) + "\n")
    out = evaluate(kind, x)
    if kind == "pruned":
        y = out["y"]
        stop = False
        # the curve, as in Go: f1 + ((4-s)*0.25)*(1+x1^2)
        r = remap(x)
        for s in range(4):
            v = y + ((4 - s) * 0.25) * (1 + r[1] * r[1])
            if t.report(s, v):
                stop = True
                break
        if stop:
            study.prune(t)
            continue
    # the evaluation time, as matrixSeconds computes it
    seconds = 0.25 + sq(x[0] + 2) if kind == "costly" else None
    if isinstance(out["y"], list):
        study.tell(t, values=out["y"], constraints=out.get("constraints"))
    elif "constraints" in out:
        study.tell(t, value=out["y"], constraints=out["constraints"])
    else:
        study.tell(t, value=out["y"], seconds=seconds)

# What the client shows of the trials, for the Go side to check.
ts = study.trials
ts = ts() if callable(ts) else ts
print("TRIALS " + json.dumps([dict(t) for t in ts]))
`

// phase advances the study through door until upto trials are complete
// or pruned; a crash then asks one more trial that is never told.
func (e *matrixEnv) phase(door string, create bool, upto int, extend int, crash bool) {
	e.t.Helper()
	switch door {
	case "go":
		e.phaseGo(create, upto, extend, crash)
	case "http":
		e.phaseHTTP(create, upto, extend)
	case "python":
		e.phasePython(create, upto, extend)
	case "cli":
		e.phaseCLI(create, upto, extend)
	case "worker":
		e.phaseWorker(upto)
	}
}

func (e *matrixEnv) count() {
	e.mu.Lock()
	e.evals++
	e.mu.Unlock()
}

func (e *matrixEnv) phaseGo(create bool, upto, extend int, crash bool) {
	ctx := context.Background()
	st := e.open(!create && e.sc.Interrupt == "crash")
	defer st.Close()
	var s *study.Study
	var err error
	if create {
		s, err = study.Create(ctx, st, e.name, e.cfg)
	} else {
		s, err = study.Load(ctx, st, e.name, study.Options{Budget: extend})
	}
	if err != nil {
		e.t.Fatalf("%v: go: %v", e.sc, err)
	}
	for completed(s.Trials()) < upto {
		tr, err := s.Ask(ctx)
		if err != nil {
			e.t.Fatalf("%v: go: ask: %v", e.sc, err)
		}
		e.count()
		value, values, cons, curve := matrixEval(e.sc.Kind, tr.X)
		pruned := false
		for step, v := range curve {
			if err := tr.Report(ctx, step, v); err != nil {
				e.t.Fatalf("%v: go: report: %v", e.sc, err)
			}
			if tr.ShouldPrune() {
				pruned = true
				break
			}
		}
		if pruned {
			err = s.Prune(ctx, tr.Number)
		} else {
			err = s.TellOutcome(ctx, tr.Number, study.Outcome{Value: value, Values: values, Constraints: cons, Seconds: matrixSeconds(e.sc.Kind, tr.X)})
		}
		if err != nil {
			e.t.Fatalf("%v: go: tell: %v", e.sc, err)
		}
	}
	// A Go program that asks in a loop saves the rest of its snapshot
	// before it exits (what Run and the server do), so that the
	// snapshot interruptions find one to lose, damage or leave stale.
	if err := s.Checkpoint(ctx); err != nil {
		e.t.Fatalf("%v: go: checkpoint: %v", e.sc, err)
	}
	if crash {
		// A worker that asks and dies: its id names a process that no
		// longer runs (the journal finds it stopped).
		dead := exec.Command("true")
		if err := dead.Run(); err != nil {
			e.t.Fatal(err)
		}
		c, err := study.Load(ctx, st, e.name, study.Options{Worker: fmt.Sprintf("%s:%d:0badc0de", hostname(), dead.Process.Pid)})
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := c.Ask(ctx); err != nil {
			e.t.Fatalf("%v: crash ask: %v", e.sc, err)
		}
	}
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return strings.ReplaceAll(h, ":", "_")
}

func completed(ts []study.TrialResult) int {
	n := 0
	for _, t := range ts {
		if t.State == study.Complete || t.State == study.Pruned {
			n++
		}
	}
	return n
}

func (e *matrixEnv) phaseHTTP(create bool, upto, extend int) {
	st := e.open()
	defer st.Close()
	srv, err := serve.New(serve.Options{Storage: st})
	if err != nil {
		e.t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	call := func(path string, body any, out any) int {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, ts.URL+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := ts.Client().Do(req)
		if err != nil {
			e.t.Fatalf("%v: http %s: %v", e.sc, path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			e.t.Fatalf("%v: http %s: %d %s", e.sc, path, resp.StatusCode, raw)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				e.t.Fatalf("%v: http %s: %v: %s", e.sc, path, err, raw)
			}
		}
		return resp.StatusCode
	}
	base := "/api/studies/" + e.name
	if create {
		// The configuration a client sends: no version, no defaults.
		call("/api/studies", map[string]any{"name": e.name, "config": e.cfg}, nil)
	}
	if extend > 0 {
		call(base+"/budget", map[string]any{"budget": extend}, nil)
	}
	done := func() int {
		resp, err := ts.Client().Get(ts.URL + base + "/trials")
		if err != nil {
			e.t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Trials []struct {
				State string `json:"state"`
			} `json:"trials"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			e.t.Fatal(err)
		}
		n := 0
		for _, t := range out.Trials {
			if t.State == "complete" || t.State == "pruned" {
				n++
			}
		}
		return n
	}
	for done() < upto {
		var asked struct {
			Trials []struct {
				Number int       `json:"trial"`
				X      []float64 `json:"x"`
				Lease  string    `json:"lease"`
			} `json:"trials"`
		}
		call(base+"/ask", map[string]any{"n": 1}, &asked)
		tr := asked.Trials[0]
		e.count()
		value, values, cons, curve := matrixEval(e.sc.Kind, tr.X)
		tpath := fmt.Sprintf("%s/trials/%d", base, tr.Number)
		pruned := false
		for step, v := range curve {
			var rep struct {
				Prune bool `json:"prune"`
			}
			call(tpath+"/report", withLease(map[string]any{"step": step, "value": v}, tr.Lease), &rep)
			if rep.Prune {
				pruned = true
				break
			}
		}
		body := withLease(map[string]any{"seconds": matrixSeconds(e.sc.Kind, tr.X)}, tr.Lease)
		switch {
		case pruned:
			body["pruned"] = true
		case values != nil:
			body["values"] = values
		default:
			body["value"] = value
			if cons != nil {
				body["constraints"] = cons
			}
		}
		call(tpath+"/tell", body, nil)
	}
}

// withLease adds a trial's lease to a request body, when the server gave
// one.
func withLease(body map[string]any, lease string) map[string]any {
	if lease != "" {
		body["lease"] = lease
	}
	return body
}

func (e *matrixEnv) phasePython(create bool, upto, extend int) {
	ts := e.pythonServer()
	defer ts.Close()
	cfg := ""
	if create {
		b, _ := json.Marshal(e.cfg)
		cfg = string(b)
	}
	client, _ := filepath.Abs(filepath.Join("..", "..", "clients", "python"))
	cmd := exec.Command("python3", filepath.Join(e.dir, "matrix_driver.py"), ts.URL, e.name, e.sc.Kind, filepath.Join(e.dir, "space.json"),
		cfg, strconv.Itoa(upto), strconv.Itoa(extend), filepath.Join(e.dir, "evals.log"), client)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+e.dir)
	out, err := cmd.Output()
	if err != nil {
		e.t.Fatalf("%v: python: %v\n%s%s", e.sc, err, out, stderrOf(err))
	}
	_, list, ok := bytes.Cut(out, []byte("TRIALS "))
	if !ok {
		e.t.Fatalf("%v: python printed no trials: %s", e.sc, out)
	}
	e.shown = nil
	if err := json.Unmarshal(list, &e.shown); err != nil {
		e.t.Fatalf("%v: python's trials: %v", e.sc, err)
	}
}

func stderrOf(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}

// pythonServer serves the study for a Python phase (closed with it).
func (e *matrixEnv) pythonServer() *httptest.Server {
	st := e.open()
	srv, err := serve.New(serve.Options{Storage: st})
	if err != nil {
		e.t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	e.t.Cleanup(func() { st.Close() })
	return ts
}

// phaseCLI drives the study with bkb create-study, ask, report and tell,
// as a shell loop would (the tests' process stands in for the shell).
func (e *matrixEnv) phaseCLI(create bool, upto, extend int) {
	if create {
		e.bkb(append(append([]string{"create-study"}, e.where()...), e.cliConfig()...)...)
	}
	budget := []string{}
	if extend > 0 {
		budget = []string{"--budget", strconv.Itoa(extend)}
	}
	for e.completed() < upto {
		out, _ := e.bkb(append(append([]string{"ask"}, e.where()...), budget...)...)
		var a askReply
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			e.t.Fatalf("%v: ask printed %q: %v", e.sc, out, err)
		}
		e.count()
		value, values, cons, curve := matrixEval(e.sc.Kind, a.X)
		trial := strconv.Itoa(a.Trial)
		pruned := false
		for step, v := range curve {
			_, code := e.bkb(append(append([]string{"report"}, e.where()...), "--trial", trial, "--step", strconv.Itoa(step), "--value", fmtFloat(v))...)
			if code == 3 {
				pruned = true
				break
			}
		}
		args := append(append([]string{"tell"}, e.where()...), "--trial", trial, "--seconds", fmtFloat(matrixSeconds(e.sc.Kind, a.X)))
		switch {
		case pruned:
			args = append(args, "--pruned")
		case values != nil:
			args = append(args, "--values", fmtFloat(values[0])+","+fmtFloat(values[1]))
		default:
			args = append(args, "--value", fmtFloat(value))
			if cons != nil {
				args = append(args, "--constraints", fmtFloat(cons[0]))
			}
		}
		e.bkb(args...)
	}
}

// completed counts the study's complete and pruned trials.
func (e *matrixEnv) completed() int {
	st := e.open()
	defer st.Close()
	s, err := study.Load(context.Background(), st, e.name)
	if err != nil {
		e.t.Fatalf("%v: load: %v", e.sc, err)
	}
	return completed(s.Trials())
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// phaseWorker runs bkb worker with the plugin to the study's budget.
func (e *matrixEnv) phaseWorker(upto int) {
	plugin := []string{"--", "python3", filepath.Join(e.dir, "matrix_plugin.py"), e.sc.Kind, filepath.Join(e.dir, "evals.log")}
	args := append(append([]string{"worker", "--progress", "none", "--stale", "requeue"}, e.where()...), plugin...)
	e.bkb(args...)
}

//go:build e2e

package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
)

// clientDir is the Python client's directory.
var clientDir = filepath.Join("..", "clients", "python")

// python returns a Python 3 interpreter that can import every module of
// mods, or skips the test: BKB_PYTHON if set, else python3 on PATH, else
// Debian's /usr/bin/python3 (where apt-get puts python3-sklearn).
func python(t *testing.T, mods ...string) string {
	t.Helper()
	var cands []string
	if p := os.Getenv("BKB_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/bin/python3")
	imports := "import json"
	for _, m := range mods {
		imports += "; import " + m
	}
	found := false
	for _, p := range cands {
		if _, err := os.Stat(p); err != nil {
			if _, err := exec.LookPath(p); err != nil {
				continue
			}
		}
		found = true
		if exec.Command(p, "-c", imports).Run() == nil {
			return p
		}
	}
	if !found {
		t.Skip("no python3 found (set BKB_PYTHON): the Python client is not tested")
	}
	t.Skipf("no python3 with %v (Debian: apt-get install python3-sklearn): skipped", mods)
	return ""
}

// clientLeases skips a test of the Python client against the server until
// the client sends each trial's lease (the "lease" of the ask's answer,
// as the X-BKB-Lease header or a "lease" field), which the server requires
// of a pending trial's heartbeat, report and tell (lease.go): without it
// every tell is a 403. The client's maintainers add it; the tests then
// run again by themselves.
func clientLeases(t *testing.T) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(clientDir, "bkb_client", "__init__.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "lease") {
		t.Skip("the Python client does not send trial leases yet (X-BKB-Lease), which the server requires: skipped until it does")
	}
}

// pyServer starts a server on loopback over st.
func pyServer(t *testing.T, st storage.Storage, opt serve.Options) string {
	t.Helper()
	opt.Storage = st
	srv, err := serve.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

func runPython(t *testing.T, py string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", py, args, err, out.String(), errb.String())
	}
	return out.String()
}

// TestPythonClient runs the client's unit tests against a server on a
// directory of journals.
func TestPythonClient(t *testing.T) {
	t.Parallel()
	py := python(t)
	clientLeases(t)
	d, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	url := pyServer(t, d, serve.Options{})
	runPython(t, py, []string{"BKB_URL=" + url, "PYTHONDONTWRITEBYTECODE=1"}, "-m", "unittest", "discover", "-s", filepath.Join(clientDir, "tests"), "-p", "test_*.py")
}

// TestPythonInstall installs the client with pip, offline (--no-index),
// into a temporary directory and imports it from there.
func TestPythonInstall(t *testing.T) {
	t.Parallel()
	py := python(t)
	if exec.Command(py, "-m", "pip", "--version").Run() != nil {
		t.Skip("pip is missing for " + py)
	}
	target := t.TempDir()
	src := t.TempDir() // a copy, so that the build leaves nothing in the repository
	if err := os.CopyFS(src, os.DirFS(clientDir)); err != nil {
		t.Fatal(err)
	}
	runPython(t, py, []string{"PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1"}, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", target, src)
	out := runPython(t, py, []string{"PYTHONPATH=" + target}, "-c", "import bkb_client, os; print(os.path.dirname(bkb_client.__file__))")
	if got := strings.TrimSpace(out); got != filepath.Join(target, "bkb_client") {
		t.Fatalf("imported from %s, want the installed copy in %s", got, target)
	}
}

// TestPythonSklearn runs the scikit-learn example (a smaller budget).
func TestPythonSklearn(t *testing.T) {
	t.Parallel()
	py := python(t, "sklearn")
	clientLeases(t)
	d, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	url := pyServer(t, d, serve.Options{})
	out := runPython(t, py, []string{"PYTHONDONTWRITEBYTECODE=1"}, filepath.Join(clientDir, "examples", "sklearn_tuning.py"), "--url", url, "--trials", "20")
	var res struct {
		Best   float64        `json:"best_accuracy"`
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &res); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	// An SVC with tuned C and gamma reaches > 90% on digits; chance is 10%.
	if res.Best < 0.9 || res.Params["kernel"] == nil {
		t.Fatalf("best accuracy %v with %v after 20 trials, want > 0.9", res.Best, res.Params)
	}
}

// TestPythonFleet runs 8 Python clients x 50 trials on one study, on a
// journal and on PostgreSQL: exactly the budget, no trial twice, every
// value a client told stored.
func TestPythonFleet(t *testing.T) {
	t.Parallel()
	py := python(t)
	clientLeases(t)
	t.Run("journal", func(t *testing.T) {
		t.Parallel()
		d, err := storage.OpenDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		fleet(t, py, d, "fleet")
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		u := os.Getenv("BKB_POSTGRES_URL")
		if u == "" {
			t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL server to test against (.ci/run starts one and sets it)")
		}
		st, err := postgres.Open(context.Background(), u, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		name := fmt.Sprintf("serve25-fleet-%08x", rand.Uint32())
		defer st.DeleteStudy(context.Background(), name)
		fleet(t, py, st, name)
	})
}

func fleet(t *testing.T, py string, st storage.Storage, name string) {
	const clients, each = 8, 50
	url := pyServer(t, st, serve.Options{})
	c := &client{t: t, base: url, http: httptestClient()}
	cfg := testConfig(clients * each)
	c.must("POST", "/api/studies", map[string]any{"name": name, "config": cfg}, nil, 201)
	var wg sync.WaitGroup
	outs := make([]string, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = runPython(t, py, []string{"PYTHONDONTWRITEBYTECODE=1"}, filepath.Join(clientDir, "tests", "fleet_worker.py"), url, name, fmt.Sprint(each), fmt.Sprint(i))
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	told := map[int]float64{}
	for _, out := range outs {
		var r struct {
			Told []struct {
				Trial int
				Value float64
			}
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil {
			t.Fatalf("client output %q: %v", out, err)
		}
		if len(r.Told) != each {
			t.Errorf("a client evaluated %d trials, want %d", len(r.Told), each)
		}
		for _, x := range r.Told {
			if _, dup := told[x.Trial]; dup {
				t.Fatalf("trial %d evaluated by two clients", x.Trial)
			}
			told[x.Trial] = x.Value
		}
	}
	var trials struct{ Trials []serve.TrialJSON }
	c.must("GET", "/api/studies/"+name+"/trials", nil, &trials, 200)
	if len(trials.Trials) != clients*each {
		t.Fatalf("%d trials stored, want the budget %d", len(trials.Trials), clients*each)
	}
	nums := make([]int, 0, len(trials.Trials))
	for _, tr := range trials.Trials {
		nums = append(nums, tr.Number)
		v, ok := told[tr.Number]
		if tr.State != "complete" || tr.Value == nil || !ok || *tr.Value != v {
			t.Fatalf("trial %d: stored %s %v, told %v (%v)", tr.Number, tr.State, tr.Value, v, ok)
		}
	}
	sort.Ints(nums)
	for i, n := range nums {
		if n != i {
			t.Fatalf("trial numbers %v... are not 0..%d", nums[:i+1], clients*each-1)
		}
	}
}

func httptestClient() *http.Client { return &http.Client{Timeout: time.Minute} }

// TestPythonVanishedClient: a Python client that asks a trial and dies
// without a tell leaves the trial to another client once the grace has
// passed (here 300 ms, real time): the study still completes its budget,
// with that trial's point evaluated by the survivor.
func TestPythonVanishedClient(t *testing.T) {
	t.Parallel()
	py := python(t)
	clientLeases(t)
	d, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	url := pyServer(t, d, serve.Options{Grace: 300 * time.Millisecond})
	c := &client{t: t, base: url, http: httptestClient()}
	c.must("POST", "/api/studies", map[string]any{"name": "vanish", "config": testConfig(6)}, nil, 201)
	env := []string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH=" + clientDir}
	out := runPython(t, py, env, "-c", `import bkb_client, os, sys
t = bkb_client.Client(sys.argv[1]).study("vanish").ask()
print(t.number, flush=True)
os._exit(0)  # dies without a tell
`, url)
	lost := strings.TrimSpace(out)
	out = runPython(t, py, env, "-c", `import bkb_client, json, sys
s = bkb_client.Client(sys.argv[1]).study("vanish")
seen = []
def f(t):
    seen.append(t.number)
    return t.params["x"] ** 2
s.optimize(f)
print(json.dumps(seen))
`, url)
	var seen []int
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &seen); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if fmt.Sprint(seen) == "" || !strings.Contains(" "+strings.Trim(fmt.Sprint(seen), "[]")+" ", " "+lost+" ") {
		t.Fatalf("the survivor evaluated trials %v, not the vanished client's trial %s", seen, lost)
	}
	var trials struct{ Trials []serve.TrialJSON }
	c.must("GET", "/api/studies/vanish/trials", nil, &trials, 200)
	if len(trials.Trials) != 6 {
		t.Fatalf("%d trials, want the budget 6", len(trials.Trials))
	}
	for _, tr := range trials.Trials {
		if tr.State != "complete" {
			t.Fatalf("trial %d is %s", tr.Number, tr.State)
		}
	}
}

package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/pareto"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// tradeoffsPlugin is the command line of the constrained and
// multi-objective example plugin, or skips the test without python3.
func tradeoffsPlugin(t *testing.T, problem string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the example plugin is a Python script")
	}
	script, err := filepath.Abs("../../objectives/plugin/examples/python/tradeoffs.py")
	if err != nil {
		t.Fatal(err)
	}
	return py + " " + script + " " + problem
}

func TestConstrainedOptimizeCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.jsonl")
	r := runBKB(t, nil, "optimize", "--plugin", tradeoffsPlugin(t, "branin-disk"), "--lower", "-5,0", "--upper", "10,15",
		"--constraints", "1", "-T", "20", "--study", path, "--json", "--progress", "none")
	if r.code != 0 {
		t.Fatalf("optimize: code %d\n%s", r.code, r.stderr)
	}
	res := decodeResult(t, r.stdout)
	if res.Constraints != 1 || res.Feasible == nil || *res.Feasible+res.Infeasible != 20 {
		t.Fatalf("constraints %d, feasible %v, infeasible %d; want 1 constraint and 20 trials counted", res.Constraints, res.Feasible, res.Infeasible)
	}
	if res.Best == nil {
		t.Fatal("no best point")
	}
	if x := res.Best.X; (x[0]-2.5)*(x[0]-2.5)+(x[1]-7.5)*(x[1]-7.5) > 50 {
		t.Fatalf("best point %v is infeasible", x)
	}
	n := 0
	for _, rec := range readJournal(t, path) {
		if rec.Kind == storage.KindTell {
			n++
			c := (rec.X[0]-2.5)*(rec.X[0]-2.5) + (rec.X[1]-7.5)*(rec.X[1]-7.5) - 50
			if len(rec.Constraints) != 1 || math.Abs(rec.Constraints[0]-c) > 1e-9*math.Max(1, math.Abs(c)) {
				t.Fatalf("trial %d: stored constraints %v, want [%v]", rec.Trial, rec.Constraints, c)
			}
		}
	}
	if n != 20 {
		t.Fatalf("%d tell records, want 20", n)
	}
	// Resumed with a larger budget: the constraint values are read back.
	r = runBKB(t, nil, "optimize", "--study", path, "--resume", "-T", "24", "--json", "--progress", "none")
	if r.code != 0 {
		t.Fatalf("resume: code %d\n%s", r.code, r.stderr)
	}
	if res := decodeResult(t, r.stdout); res.Feasible == nil || *res.Feasible+res.Infeasible != 24 {
		t.Fatalf("after resuming: feasible %v infeasible %d, want 24 trials counted", res.Feasible, res.Infeasible)
	}
}

func TestMultiObjectiveCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, trace, plot := filepath.Join(dir, "m.jsonl"), filepath.Join(dir, "m.csv"), filepath.Join(dir, "m.png")
	space := filepath.Join(dir, "space.json")
	if err := os.WriteFile(space, []byte(`{"params":[{"name":"x1","low":0,"high":1},{"name":"x2","low":0,"high":1}],"directions":["minimize","minimize"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBKB(t, nil, "optimize", "--plugin", tradeoffsPlugin(t, "branin-currin"), "--space", space,
		"-T", "16", "--study", path, "--json", "--progress", "none", "--trace", trace, "--plot", plot)
	if r.code != 0 {
		t.Fatalf("optimize: code %d\n%s", r.code, r.stderr)
	}
	res := decodeResult(t, r.stdout)
	if len(res.Directions) != 2 || len(res.Front) == 0 || res.Hypervolume == nil || !(*res.Hypervolume > 0) || res.Best != nil {
		t.Fatalf("directions %v, front %v, hypervolume %v, best %v", res.Directions, res.Front, res.Hypervolume, res.Best)
	}
	// The front against the definition, on every trial of the trace.
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"value_1", "value_2", "hypervolume"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("trace header %v lacks %s", rows[0], h)
		}
	}
	var pts [][]float64
	for _, row := range rows[1:] {
		pts = append(pts, []float64{parseF(t, row[col["value_1"]]), parseF(t, row[col["value_2"]])})
	}
	if got, want := len(pareto.Front(pts)), len(res.Front); got != want {
		t.Fatalf("front of the trace has %d points, the result %d", got, want)
	}
	last := parseF(t, rows[len(rows)-1][col["hypervolume"]])
	if math.Abs(last-*res.Hypervolume) > 1e-9*last {
		t.Fatalf("trace ends at hypervolume %v, the result says %v", last, *res.Hypervolume)
	}
	if st, err := os.Stat(plot); err != nil || st.Size() == 0 {
		t.Fatalf("plot: %v", err)
	}
	r = runBKB(t, nil, "status", "--study", path)
	if r.code != 0 || !strings.Contains(r.stdout, "Pareto front:") || !strings.Contains(r.stdout, "hypervolume") {
		t.Fatalf("status: code %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestTellConstraintsCLI(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "at.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", path, "--lower", "0,0", "--upper", "1,1", "--constraints", "2", "-T", "5"); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	if r := runBKB(t, nil, "ask", "--study", path); r.code != 0 {
		t.Fatalf("ask: %s", r.stderr)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--value", "1"}, "tell 2 constraint values, got 0"},
		{[]string{"--value", "1", "--constraints", "1"}, "got 1"},
		{[]string{"--value", "1", "--constraints", "1,x"}, `"x" is not a number`},
		{[]string{"--values", "1,2", "--constraints", "1,1"}, "one objective"},
		{[]string{"--failed", "boom", "--constraints", "1,1"}, "not with --failed"},
	}
	for _, c := range cases {
		r := runBKB(t, nil, append([]string{"tell", "--study", path, "--trial", "0"}, c.args...)...)
		if r.code == 0 {
			t.Fatalf("tell %v: no error", c.args)
		}
		checkOneErrorLine(t, r, c.want)
	}
	if r := runBKB(t, nil, "tell", "--study", path, "--trial", "0", "--value", "1", "--constraints", "-1,0.5"); r.code != 0 {
		t.Fatalf("tell: %s", r.stderr)
	}
	r := runBKB(t, nil, "status", "--study", path)
	if !strings.Contains(r.stdout, "no feasible trial: the one complete trial violates a constraint") || strings.Contains(r.stdout, "at trial") {
		t.Fatalf("status of an infeasible-only study:\n%s", r.stdout)
	}
	r = runBKB(t, nil, "status", "--study", path, "--json")
	if res := decodeResult(t, r.stdout); res.Best != nil || res.Feasible == nil || *res.Feasible != 0 || res.Infeasible != 1 {
		t.Fatalf("status --json: best %v feasible %v infeasible %d", res.Best, res.Feasible, res.Infeasible)
	}
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := parseDecimal(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestMOAcquisitionCLI checks --mo-acquisition and the space file's
// "mo_acquisition": stored in the study's configuration (the default of a
// new study with several objectives is the hypervolume improvement), and
// refused without several objectives, with an unknown name, or when the
// flag and the file disagree.
func TestMOAcquisitionCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stored := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var h struct {
			Config struct {
				MOAcquisition string `json:"mo_acquisition"`
			} `json:"config"`
		}
		if err := json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[0]), &h); err != nil {
			t.Fatal(err)
		}
		return h.Config.MOAcquisition
	}
	space := filepath.Join(dir, "space.json")
	if err := os.WriteFile(space, []byte(`{"params":[{"name":"x1","low":0,"high":1}],"directions":["minimize","maximize"],"mo_acquisition":"scalarize"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lower", "0", "--upper", "1", "--directions", "minimize,maximize"}, study.MOHypervolume},
		{[]string{"--lower", "0", "--upper", "1", "--directions", "minimize,maximize", "--mo-acquisition", "scalarize"}, study.MOScalarize},
		{[]string{"--space", space}, study.MOScalarize},
	} {
		path := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		if r := runBKB(t, nil, append([]string{"create-study", "--study", path, "-T", "5"}, c.args...)...); r.code != 0 {
			t.Fatalf("create-study %v: %s", c.args, r.stderr)
		}
		if got := stored(path); got != c.want {
			t.Fatalf("create-study %v: stored mo_acquisition %q, want %q", c.args, got, c.want)
		}
	}
	for i, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lower", "0", "--upper", "1", "--mo-acquisition", "hvi"}, "needs several objectives"},
		{[]string{"--lower", "0", "--upper", "1", "--directions", "minimize,maximize", "--mo-acquisition", "ehvi"}, `"ehvi"`},
		{[]string{"--space", space, "--mo-acquisition", "hvi"}, "differs from the space file"},
	} {
		r := runBKB(t, nil, append([]string{"create-study", "--study", filepath.Join(dir, fmt.Sprintf("bad%d.jsonl", i)), "-T", "5"}, c.args...)...)
		if r.code == 0 {
			t.Fatalf("create-study %v: no error", c.args)
		}
		checkOneErrorLine(t, r, c.want)
	}
}

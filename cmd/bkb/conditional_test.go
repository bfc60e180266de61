package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// condSpaceFile chooses a sub-function: "a" has x1 and x2, "b" has y and
// a shape whose choice "sq" has a scale s of its own (a chained condition).
const condSpaceFile = `{"params":[
  {"name":"fn","type":"categorical","choices":["a","b"]},
  {"name":"x1","low":0,"high":1,"condition":{"parent":"fn","values":["a"]}},
  {"name":"x2","low":0,"high":1,"condition":{"parent":"fn","values":["a"]}},
  {"name":"y","low":-2,"high":2,"condition":{"parent":"fn","values":["b"]}},
  {"name":"shape","type":"categorical","choices":["sq","abs"],"condition":{"parent":"fn","values":["b"]}},
  {"name":"s","type":"int","low":1,"high":4,"condition":{"parent":"shape","values":["sq"]}}
]}`

// condPlugin logs the params of every request to $LOG and returns a
// value of the active ones; a parameter it does not expect is an error.
const condPlugin = `import json, os, sys
log = open(os.environ["LOG"], "a")
for line in sys.stdin:
    req = json.loads(line)
    p = req["params"]
    log.write(json.dumps(sorted(p)) + "\n"); log.flush()
    if p["fn"] == "a":
        y = 1 + (p["x1"] - 0.3) ** 2 + (p["x2"] - 0.7) ** 2
    elif p["shape"] == "abs":
        y = 0.2 + abs(p["y"] - 1)
    else:
        y = p["s"] * (p["y"] - 1) ** 2
    print(json.dumps({"id": req["id"], "y": y}), flush=True)
`

// condActiveNames is the active set of params in condSpaceFile.
func condActiveNames(p map[string]any) []string {
	out := []string{"fn"}
	if p["fn"] == "a" {
		out = append(out, "x1", "x2")
	} else {
		out = append(out, "y", "shape")
		if p["shape"] == "sq" {
			out = append(out, "s")
		}
	}
	sort.Strings(out)
	return out
}

// TestConditionalPlugin: bkb optimize on a conditional space sends a
// plugin the active parameters only; ask prints only them, and export
// leaves the inactive ones empty (and reads back with --import).
func TestConditionalPlugin(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	dir := t.TempDir()
	space, plugin := filepath.Join(dir, "cond.json"), filepath.Join(dir, "cond.py")
	if err := os.WriteFile(space, []byte(condSpaceFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plugin, []byte(condPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "params.log")
	s := filepath.Join(dir, "cond.jsonl")
	r := runBKB(t, []string{"LOG=" + logPath}, "optimize", "--space", space, "--study", s, "-T", "20", "--json", "--progress", "none", "--", "python3", plugin)
	if r.code != 0 {
		t.Fatalf("optimize: %s", r.stderr)
	}
	res := decodeResult(t, r.stdout)
	if res.Complete != 20 {
		t.Fatalf("%d complete trials of 20:\n%s", res.Complete, r.stderr)
	}
	if got, want := keysOf(res.Best.Params), condActiveNames(res.Best.Params); !reflect.DeepEqual(got, want) {
		t.Errorf("best params %v, want the active set %v", res.Best.Params, want)
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sent := 0
	for sc := bufio.NewScanner(f); sc.Scan(); sent++ {
		var names []string
		if err := json.Unmarshal(sc.Bytes(), &names); err != nil {
			t.Fatal(err)
		}
		if want := [][]string{{"fn", "x1", "x2"}, {"fn", "shape", "y"}, {"fn", "s", "shape", "y"}}; !slicesContain(want, names) {
			t.Errorf("the plugin got params %v", names)
		}
	}
	if sent != 20 {
		t.Errorf("the plugin got %d requests, want 20", sent)
	}
	// The journal's asks hold the active parameters too.
	_, recs, err := storage.ReadFile(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if len(rec.Params) == 0 {
			continue
		}
		var p map[string]any
		if err := json.Unmarshal(rec.Params, &p); err != nil {
			t.Fatal(err)
		}
		if got, want := keysOf(p), condActiveNames(p); !reflect.DeepEqual(got, want) {
			t.Errorf("journal params %v, want %v", p, want)
		}
	}
	// ask: the active parameters only.
	a := filepath.Join(dir, "ask.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", a, "--space", space, "-T", "5"); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	for range 3 {
		r = runBKB(t, nil, "ask", "--study", a)
		var rep struct {
			X      []float64      `json:"x"`
			Params map[string]any `json:"params"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("ask: %q: %v", r.stdout, err)
		}
		if got, want := keysOf(rep.Params), condActiveNames(rep.Params); !reflect.DeepEqual(got, want) || len(rep.X) != 6 {
			t.Errorf("ask: params %v (want %v), x %v", rep.Params, want, rep.X)
		}
	}
	// export: inactive parameters are empty cells, and the CSV imports.
	out := filepath.Join(dir, "cond.csv")
	if r := runBKB(t, nil, "export", "--study", s, "--out", out); r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for j, h := range rows[0] {
		col[h] = j
	}
	for _, row := range rows[1:] {
		if fn := row[col["fn"]]; fn == "a" && (row[col["y"]] != "" || row[col["shape"]] != "" || row[col["x1"]] == "") ||
			fn == "b" && (row[col["x1"]] != "" || row[col["y"]] == "" || (row[col["shape"]] == "abs") != (row[col["s"]] == "")) {
			t.Errorf("export row %v (header %v)", row, rows[0])
		}
	}
	imp := filepath.Join(dir, "imp.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", imp, "--space", space, "-T", "40", "--import", out); r.code != 0 {
		t.Fatalf("create-study --import of the export: %s", r.stderr)
	}
}

func keysOf(p map[string]any) []string {
	out := make([]string, 0, len(p))
	for k := range p {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func slicesContain(sets [][]string, s []string) bool {
	for _, x := range sets {
		if reflect.DeepEqual(x, s) {
			return true
		}
	}
	return false
}

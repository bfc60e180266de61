package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

const typedSpace = `{"params":[
  {"name":"lr","type":"float","low":1e-4,"high":1,"log":true},
  {"name":"layers","type":"int","low":1,"high":6},
  {"name":"act","type":"categorical","choices":["relu","tanh","gelu"]},
  {"name":"drop","type":"float","low":0,"high":0.5,"step":0.1}
]}`

// TestTypedRoundTrip: every parameter type goes through the space file,
// the journal, a plugin (which rejects a value not in its own type: an
// integer that is not a JSON integer, a categorical that is not a label),
// resume, and ask.
func TestTypedRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	space := writeFile(t, dir, "space.json", typedSpace)
	s := filepath.Join(dir, "typed.jsonl")
	env := []string{"BKB_TEST_PLUGIN=typed"}
	args := []string{"optimize", "--space", space, "--study", s, "-T", "12", "--json", "--progress", "none", "--", testExe(t)}
	r := runBKB(t, env, args...)
	if r.code != 0 {
		t.Fatalf("optimize: %s", r.stderr)
	}
	r = runBKB(t, env, "optimize", "--study", s, "--resume", "-T", "25", "--json", "--progress", "none")
	if r.code != 0 {
		t.Fatalf("resume: %s", r.stderr)
	}
	res := decodeResult(t, r.stdout)
	if res.Complete != 25 || res.Failed != 0 {
		t.Fatalf("%d complete, %d failed (a plugin that got a value in the wrong type fails it):\n%s", res.Complete, res.Failed, r.stderr)
	}
	if _, ok := res.Best.Params["layers"].(float64); !ok || strings.Contains(r.stdout, `"layers": 3.`) {
		t.Errorf("best params %v", res.Best.Params)
	}
	for _, rec := range readJournal(t, s) {
		if rec.Kind != storage.KindAsk {
			continue
		}
		var p map[string]json.RawMessage
		if err := json.Unmarshal(rec.Params, &p); err != nil {
			t.Fatalf("journal params %s: %v", rec.Params, err)
		}
		if a := string(p["act"]); a != `"relu"` && a != `"tanh"` && a != `"gelu"` || strings.Contains(string(p["layers"]), ".") {
			t.Errorf("journal params %s", rec.Params)
		}
	}
	// ask prints typed params too.
	a := filepath.Join(dir, "ask.jsonl")
	if r := runBKB(t, nil, "create-study", "--study", a, "--space", space, "-T", "5"); r.code != 0 {
		t.Fatalf("create-study: %s", r.stderr)
	}
	r = runBKB(t, nil, "ask", "--study", a)
	var rep struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || strings.Contains(string(rep.Params["layers"]), ".") || !strings.HasPrefix(string(rep.Params["act"]), `"`) {
		t.Errorf("ask: %s %v", r.stdout, err)
	}
	if r := runBKB(t, nil, "ask", "--study", a, "--format", "tsv"); r.code != 0 || len(strings.Split(strings.TrimSpace(r.stdout), "\t")) != 5 {
		t.Errorf("ask tsv: %q", r.stdout)
	}
}

// TestLibraryMatchesCLI: a study configured by hand through the Go API
// chooses the same points as `bkb optimize` with the same seed.
func TestLibraryMatchesCLI(t *testing.T) {
	t.Parallel()
	s := filepath.Join(t.TempDir(), "cli.jsonl")
	if r := runBKB(t, nil, "optimize", "-f", "hartmann3", "-T", "30", "--seed", "4", "-q", "--study", s); r.code != 0 {
		t.Fatalf("optimize: %s", r.stderr)
	}
	var cli [][]float64
	for _, rec := range readJournal(t, s) {
		if rec.Kind == storage.KindAsk {
			cli = append(cli, rec.X)
		}
	}
	f, _ := objectives.Lookup("hartmann3")
	space, err := study.Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lib, err := study.Create(ctx, storage.NewMemory(), "lib", study.Config{Space: space, Budget: 30, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.Optimize(ctx, func(_ context.Context, tr *study.Trial) (float64, error) { return f.Value(tr.X), nil }, 0); err != nil {
		t.Fatal(err)
	}
	trials := lib.Trials()
	if len(trials) != len(cli) {
		t.Fatalf("%d trials through the library, %d through the CLI", len(trials), len(cli))
	}
	for i, tr := range trials {
		for j := range tr.X {
			if tr.X[j] != cli[i][j] {
				t.Fatalf("trial %d: library %v, CLI %v", i, tr.X, cli[i])
			}
		}
	}
}

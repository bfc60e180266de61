package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// moStudy creates in dir a two-objective study name of budget 10 and
// completes n trials of it (a study that keeps no snapshot).
func moStudy(t *testing.T, dir, name string, n int) {
	t.Helper()
	ctx := context.Background()
	d, err := storage.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := study.Box([]string{"x", "y"}, []float64{0, 0}, []float64{1, 1})
	s, err := study.Create(ctx, d, name, study.Config{Space: sp, Budget: 10, Seed: 2,
		Directions: []study.Direction{study.Minimize, study.Minimize}})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		tr, err := s.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		x, y := tr.X[0], tr.X[1]
		if err := s.TellOutcome(ctx, tr.Number, study.Outcome{Values: []float64{x + y*y, (1-x)*(1-x) + y}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStatusModelJSON: `bkb status --json` on a two-objective study
// prints the directions, the front and a model object with snake_case
// names and the values of the study's model (rebuilt from the records,
// the study keeping no snapshot), not zeros.
func TestStatusModelJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	moStudy(t, dir, "m", 8)
	r := runBKB(t, nil, "status", "--study", filepath.Join(dir, "m.jsonl"), "--json")
	if r.code != 0 {
		t.Fatalf("status: code %d\n%s", r.code, r.stderr)
	}
	var out struct {
		Directions []string                   `json:"directions"`
		Front      []struct{ Trial int }      `json:"pareto_front"`
		Model      map[string]json.RawMessage `json:"model"`
		Fits       []json.RawMessage          `json:"length_scale_fits"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(out.Directions) != 2 || len(out.Front) == 0 {
		t.Fatalf("directions %v, front %v", out.Directions, out.Front)
	}
	for _, k := range []string{"observations", "dictionary_size", "dictionary_changes", "sum_variance", "jitter", "variance_clamps", "retry_jitter"} {
		if _, ok := out.Model[k]; !ok {
			t.Errorf("model has no %q: %s", k, r.stdout)
		}
	}
	var obs, dict int
	json.Unmarshal(out.Model["observations"], &obs)
	json.Unmarshal(out.Model["dictionary_size"], &dict)
	// The posterior takes a tell in at the next ask: 7 or 8 of the 8.
	if obs < 7 || obs > 8 || dict < 1 {
		t.Errorf("model: %d observations, dictionary of %d; want the complete trials (7 or 8) and a dictionary", obs, dict)
	}
	if len(out.Fits) == 0 {
		t.Errorf("no length-scale fits after 8 trials (the initial design is 5)")
	}
}

// TestStatusBudgetInForce: after the server (POST /api/studies/b/budget,
// in process) extended a study's budget, status, `bkb studies` and the
// server agree on the extended budget.
func TestStatusBudgetInForce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	moStudy(t, dir, "b", 2)
	d, err := storage.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv, err := serve.New(serve.Options{Storage: d})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/api/studies/b/budget", strings.NewReader(`{"budget": 25}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("extend: %v %v", err, resp)
	}
	resp.Body.Close()
	r := runBKB(t, nil, "status", "--study", filepath.Join(dir, "b.jsonl"), "--json")
	if r.code != 0 {
		t.Fatalf("status: code %d\n%s", r.code, r.stderr)
	}
	if res := decodeResult(t, r.stdout); res.Budget != 25 {
		t.Errorf("status: budget %d, want 25", res.Budget)
	}
	r = runBKB(t, nil, "studies", "--dir", dir, "--json")
	var rows []struct{ Budget int }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || rows[0].Budget != 25 {
		t.Errorf("studies: %v %s", err, r.stdout)
	}
	resp, err = ts.Client().Get(ts.URL + "/api/studies/b")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum struct{ Budget int }
	if err := json.NewDecoder(resp.Body).Decode(&sum); err != nil || sum.Budget != 25 {
		t.Errorf("server: budget %d (%v)", sum.Budget, err)
	}
}

// TestStudiesSeveralObjectives: `bkb studies` shows a study of several
// objectives with its directions and the size of its Pareto front, not
// the best value of its first objective.
func TestStudiesSeveralObjectives(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	moStudy(t, dir, "m", 8)
	d, err := storage.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := study.Load(context.Background(), d, "m")
	if err != nil {
		t.Fatal(err)
	}
	front, err := s.ParetoFront()
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	r := runBKB(t, nil, "studies", "--dir", dir, "--json")
	var rows []struct {
		Directions []string `json:"directions"`
		Best       *float64 `json:"best"`
		Front      *int     `json:"pareto_front_size"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("studies --json: %v %s", err, r.stdout)
	}
	if got := rows[0]; len(got.Directions) != 2 || got.Best != nil || got.Front == nil || *got.Front != len(front) {
		t.Errorf("studies --json: %s; want directions, no best, a front of %d", r.stdout, len(front))
	}
	r = runBKB(t, nil, "studies", "--dir", dir)
	if !strings.Contains(r.stdout, "min,min") || !strings.Contains(r.stdout, fmt.Sprintf("front of %d", len(front))) {
		t.Errorf("studies:\n%s", r.stdout)
	}
}

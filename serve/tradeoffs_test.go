package serve_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/serve"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// twoObjectiveConfig is a two-objective study (both minimized) on the
// unit square with one constraint, feasible when x + y <= 1.5.
func twoObjectiveConfig(budget int) map[string]any {
	return map[string]any{
		"space": map[string]any{"params": []any{
			map[string]any{"name": "x", "low": 0, "high": 1},
			map[string]any{"name": "y", "low": 0, "high": 1},
		}},
		"directions":  []string{"minimize", "minimize"},
		"constraints": 1,
		"policy":      "random",
		"budget":      budget,
		"seed":        3,
	}
}

// TestTwoObjectivesOverHTTP drives a constrained two-objective study
// over HTTP: created with directions and constraints, asked, told
// values and constraint values; the trials list and the single trial
// show them (and infeasibility, failures with their message, times),
// the summary shows the directions, the Pareto front and its
// hypervolume, and the front is the non-dominated feasible trials.
func TestTwoObjectivesOverHTTP(t *testing.T) {
	t.Parallel()
	d, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newServer(t, serve.Options{Storage: d})
	var created serve.Summary
	c.must("POST", "/api/studies", map[string]any{"name": "mo", "config": twoObjectiveConfig(8)}, &created, 201)
	if fmt.Sprint(created.Directions) != "[minimize minimize]" || created.Constraints != 1 {
		t.Fatalf("created: directions %v, constraints %d", created.Directions, created.Constraints)
	}
	var a asked
	c.must("POST", "/api/studies/mo/ask", map[string]any{"n": 7}, &a, 200)
	if len(a.Trials) != 7 {
		t.Fatalf("asked %d trials, want 7", len(a.Trials))
	}
	lease := map[int]string{}
	for _, tr := range a.Trials {
		lease[tr.Trial] = tr.Lease
	}
	// The values told, by trial: 0..4 complete (3 infeasible), 5 failed,
	// 6 pending.
	told := map[int][2]float64{0: {1, 4}, 1: {2, 2}, 2: {4, 1}, 3: {0.5, 0.5}, 4: {3, 3}}
	for trial, v := range told {
		cons := -1.0
		if trial == 3 {
			cons = 0.25 // infeasible: it would dominate every other trial
		}
		var tj serve.TrialJSON
		c.must("POST", fmt.Sprintf("/api/studies/mo/trials/%d/tell", trial),
			map[string]any{"values": []float64{v[0], v[1]}, "constraints": []float64{cons}, "seconds": 1.5, "lease": lease[trial]}, &tj, 200)
		if !slices.Equal(tj.Values, v[:]) || tj.Infeasible != (trial == 3) {
			t.Fatalf("tell of trial %d answered %+v", trial, tj)
		}
	}
	// One value for two objectives, or no constraint value: 400.
	if code, _ := c.do("POST", "/api/studies/mo/trials/6/tell", map[string]any{"value": 1.0, "lease": lease[6]}, nil); code != 400 {
		t.Errorf("a single value for two objectives: status %d, want 400", code)
	}
	if code, _ := c.do("POST", "/api/studies/mo/trials/6/tell", map[string]any{"values": []float64{1, 2}, "lease": lease[6]}, nil); code != 400 {
		t.Errorf("no constraint values in a constrained study: status %d, want 400", code)
	}
	c.must("POST", "/api/studies/mo/trials/5/tell", map[string]any{"failed": "ValueError: diverged", "lease": lease[5]}, nil, 200)

	var list struct{ Trials []serve.TrialJSON }
	c.must("GET", "/api/studies/mo/trials", nil, &list, 200)
	if len(list.Trials) != 7 {
		t.Fatalf("%d trials listed, want 7", len(list.Trials))
	}
	for _, tr := range list.Trials {
		switch v, ok := told[tr.Number]; {
		case ok:
			if tr.State != "complete" || !slices.Equal(tr.Values, v[:]) || len(tr.Constraints) != 1 || tr.Infeasible != (tr.Number == 3) ||
				tr.Seconds != 1.5 || tr.Value == nil || *tr.Value != v[0] {
				t.Errorf("trial %d listed as %+v, told %v", tr.Number, tr, v)
			}
		case tr.Number == 5:
			if tr.State != "failed" || tr.Error != "ValueError: diverged" || tr.Values != nil {
				t.Errorf("failed trial listed as %+v", tr)
			}
		default:
			if tr.State != "pending" {
				t.Errorf("trial %d is %s, want pending", tr.Number, tr.State)
			}
		}
	}
	var one serve.TrialJSON
	c.must("GET", "/api/studies/mo/trials/2", nil, &one, 200)
	if one.Number != 2 || !slices.Equal(one.Values, []float64{4, 1}) || one.Constraints[0] != -1 {
		t.Errorf("GET trial 2: %+v", one)
	}
	c.must("GET", "/api/studies/mo/trials/99", nil, nil, 404)

	var sum serve.Summary
	c.must("GET", "/api/studies/mo", nil, &sum, 200)
	// Trials 0, 1 and 2 trade off; 4 is dominated by 1; 3 is infeasible.
	if !slices.Equal(sum.ParetoFront, []int{0, 1, 2}) {
		t.Errorf("Pareto front %v, want [0 1 2]", sum.ParetoFront)
	}
	// The reference point: the worst feasible values (4 and 4) moved out
	// by a tenth of their ranges (3): (4.3, 4.3). Against it the front
	// (1,4), (2,2), (4,1) covers 1*0.3 + 2*2 ... computed exactly:
	// x from 1 to 2 up to 4.3-4 = 0.3, x from 2 to 4 up to 2.3, x from 4
	// to 4.3 up to 3.3.
	want := 1*0.3 + 2*2.3 + 0.3*3.3
	if sum.Hypervolume == nil || math.Abs(*sum.Hypervolume-want) > 1e-9 {
		t.Errorf("hypervolume %v, want %v", sum.Hypervolume, want)
	}
	if fmt.Sprint(sum.Directions) != "[minimize minimize]" || len(sum.Reference) != 2 {
		t.Errorf("summary: directions %v, reference %v", sum.Directions, sum.Reference)
	}
	// The list of studies carries the same.
	var studies struct{ Studies []serve.Summary }
	c.must("GET", "/api/studies", nil, &studies, 200)
	if len(studies.Studies) != 1 || !slices.Equal(studies.Studies[0].ParetoFront, []int{0, 1, 2}) {
		t.Errorf("studies list: %+v", studies.Studies)
	}
}

// TestDirectionsOfOneObjective: a study with one objective lists its
// direction in "directions" too, and has no front.
func TestDirectionsOfOneObjective(t *testing.T) {
	t.Parallel()
	c, _ := newServer(t, serve.Options{})
	cfg := testConfig(3)
	cfg["direction"] = "maximize"
	var sum serve.Summary
	c.must("POST", "/api/studies", map[string]any{"name": "one", "config": cfg}, &sum, 201)
	if fmt.Sprint(sum.Directions) != "[maximize]" || sum.ParetoFront != nil || sum.Hypervolume != nil {
		t.Fatalf("summary of a one-objective study: directions %v, front %v, hypervolume %v", sum.Directions, sum.ParetoFront, sum.Hypervolume)
	}
}

// TestAskZero: an explicit "n": 0 hands out nothing (400); a missing n
// is one trial.
func TestAskZero(t *testing.T) {
	t.Parallel()
	c, _ := newServer(t, serve.Options{})
	c.must("POST", "/api/studies", map[string]any{"name": "z", "config": testConfig(3)}, nil, 201)
	c.must("POST", "/api/studies/z/ask", map[string]any{"n": 0}, nil, 400)
	var a asked
	c.must("POST", "/api/studies/z/ask", map[string]any{}, &a, 200)
	if len(a.Trials) != 1 || a.Trials[0].Trial != 0 {
		t.Fatalf("ask without n: %+v, want trial 0", a)
	}
}

// TestBudgetInForce: after an extension, the study's summary, the list
// of studies and study.StoredBudget give the extended budget, also from
// a second server on the same storage that had the study cached.
func TestBudgetInForce(t *testing.T) {
	t.Parallel()
	d, err := storage.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newServer(t, serve.Options{Storage: d})
	other, _ := newServer(t, serve.Options{Storage: d})
	c.must("POST", "/api/studies", map[string]any{"name": "b", "config": testConfig(3)}, nil, 201)
	var sum serve.Summary
	other.must("GET", "/api/studies/b", nil, &sum, 200) // cached there at budget 3
	c.must("POST", "/api/studies/b/budget", map[string]any{"budget": 9}, nil, 200)
	for _, cl := range []*client{c, other} {
		cl.must("GET", "/api/studies/b", nil, &sum, 200)
		var studies struct{ Studies []serve.Summary }
		cl.must("GET", "/api/studies", nil, &studies, 200)
		if sum.Budget != 9 || studies.Studies[0].Budget != 9 {
			t.Errorf("%s: budget %d in the summary, %d in the list, want 9", cl.base, sum.Budget, studies.Studies[0].Budget)
		}
	}
	if b, err := study.StoredBudget(t.Context(), d, "b"); err != nil || b != 9 {
		t.Errorf("StoredBudget = %d, %v; want 9", b, err)
	}
}

// TestCreateCurrentVersion: a configuration created over HTTP without a
// "version" is a new study of the current version (the library's zero
// value), not a stored configuration of version 1; so a study of several
// objectives with the default policy (BKB, growing candidates) can be
// created. An explicit version is kept.
func TestCreateCurrentVersion(t *testing.T) {
	t.Parallel()
	c, _ := newServer(t, serve.Options{})
	cfg := twoObjectiveConfig(5)
	delete(cfg, "policy")
	var sum serve.Summary
	c.must("POST", "/api/studies", map[string]any{"name": "v", "config": cfg}, nil, 201)
	c.must("GET", "/api/studies/v", nil, &sum, 200)
	if sum.Config == nil || sum.Config.Version != study.CurrentVersion || sum.Config.Candidates != study.CandidatesGrow || sum.Policy != "bkb" {
		t.Fatalf("created without a version: %+v", sum.Config)
	}
	old := testConfig(3)
	old["version"] = 1
	c.must("POST", "/api/studies", map[string]any{"name": "v1", "config": old}, nil, 201)
	c.must("GET", "/api/studies/v1", nil, &sum, 200)
	if sum.Config.Version != 1 {
		t.Fatalf("created with version 1: version %d", sum.Config.Version)
	}
}

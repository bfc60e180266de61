package study

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bkb-go/bkb/pareto"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
)

// braninDisk is Branin under Gardner et al. 2014's disk constraint
// (x1 - 2.5)^2 + (x2 - 7.5)^2 <= 50, whose constrained minimum is
// Branin's, 0.397887, at (pi, 2.275).
func braninDisk(tr *Trial) (float64, float64) {
	x1, x2 := tr.Params.Float("x1"), tr.Params.Float("x2")
	b := 5.1 / (4 * math.Pi * math.Pi)
	c := 5 / math.Pi
	f := math.Pow(x2-b*x1*x1+c*x1-6, 2) + 10*(1-1/(8*math.Pi))*math.Cos(x1) + 10
	return f, (x1-2.5)*(x1-2.5) + (x2-7.5)*(x2-7.5) - 50
}

func constrainedObjective(_ context.Context, tr *Trial) (float64, error) {
	f, c := braninDisk(tr)
	tr.SetConstraints(c)
	return f, nil
}

func TestConstrainedStudy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := braninConfig(t)
	cfg.Budget, cfg.Constraints = 40, 1
	s, err := Create(ctx, storage.NewMemory(), "c", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(ctx, constrainedObjective, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	best, ok := s.Best()
	if !ok {
		t.Fatal("no best feasible trial")
	}
	if best.Infeasible || len(best.Constraints) != 1 || best.Constraints[0] > 0 {
		t.Fatalf("best trial %+v is not feasible", best)
	}
	infeasible := 0
	for _, tr := range s.Trials() {
		_, c := braninDisk(&Trial{Params: tr.Params})
		if tr.Constraints[0] != c || tr.Infeasible != (c > 0) {
			t.Fatalf("trial %d: constraints %v infeasible %v, want [%v]", tr.Number, tr.Constraints, tr.Infeasible, c)
		}
		if tr.Infeasible {
			infeasible++
			if Better(tr.Value, best.Value, Minimize) {
				continue // an infeasible trial may beat the best feasible one
			}
		}
	}
	// 40 trials find the constrained minimum 0.398 within 0.1 (a random
	// search of 40 points is about 1.5 away).
	if gap := best.Value - 0.397887; gap > 0.1 {
		t.Errorf("best feasible value %v: gap %v to the constrained minimum", best.Value, gap)
	}
	t.Logf("best feasible %.4f, %d of 40 trials infeasible", best.Value, infeasible)
}

// TestConstraintValuesSurviveResume: a constrained study run in two
// processes (the second loading the first's journal) stores the same
// constraint values and asks the same points as one uninterrupted run.
func TestConstraintValuesSurviveResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := braninConfig(t)
	cfg.Budget, cfg.Constraints, cfg.Directions = 24, 1, []Direction{Minimize, Maximize}
	obj := func(_ context.Context, tr *Trial) (float64, error) {
		f, c := braninDisk(tr)
		tr.SetConstraints(c)
		tr.SetValues(f, tr.Params.Float("x1"))
		return f, nil
	}
	whole, err := Create(ctx, storage.NewMemory(), "w", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.Run(ctx, obj, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	open := func() storage.Storage {
		st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	first, err := Create(ctx, st, "s", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Run(ctx, obj, RunOptions{Trials: 13}); err != nil {
		t.Fatal(err)
	}
	st.(interface{ Close() error }).Close()
	st = open()
	defer st.(interface{ Close() error }).Close()
	second, err := Load(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range second.Trials() {
		_, c := braninDisk(&Trial{Params: tr.Params})
		if len(tr.Constraints) != 1 || tr.Constraints[0] != c || len(tr.Values) != 2 || tr.Values[1] != tr.Params.Float("x1") {
			t.Fatalf("trial %d after loading: constraints %v values %v", tr.Number, tr.Constraints, tr.Values)
		}
	}
	if err := second.Run(ctx, obj, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	a, b := whole.Trials(), second.Trials()
	if len(a) != len(b) {
		t.Fatalf("%d trials resumed, %d uninterrupted", len(b), len(a))
	}
	for i := range a {
		if !slices.Equal(a[i].X, b[i].X) || !slices.Equal(a[i].Constraints, b[i].Constraints) || !slices.Equal(a[i].Values, b[i].Values) {
			t.Fatalf("trial %d: resumed %v %v %v, uninterrupted %v %v %v", i, b[i].X, b[i].Values, b[i].Constraints, a[i].X, a[i].Values, a[i].Constraints)
		}
	}
}

func TestInfeasibleOnlyStudyHasNoBest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := braninConfig(t)
	cfg.Budget, cfg.Constraints = 16, 2
	s, err := Create(ctx, storage.NewMemory(), "i", cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(ctx, func(_ context.Context, tr *Trial) (float64, error) {
		tr.SetConstraints(-1, 1+tr.Params.Float("x1")*tr.Params.Float("x1"))
		return tr.Params.Float("x2"), nil
	}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := s.Best(); ok {
		t.Fatalf("Best = trial %d (constraints %v) in a study without a feasible trial", b.Number, b.Constraints)
	}
	if _, err := s.ParetoFront(); !errors.Is(err, ErrNoFeasible) {
		t.Fatalf("ParetoFront: %v, want ErrNoFeasible", err)
	}
	for _, tr := range s.Trials() {
		if tr.State != Complete || !tr.Infeasible {
			t.Fatalf("trial %d: %v infeasible %v", tr.Number, tr.State, tr.Infeasible)
		}
	}
}

// zdt1 is Zitzler, Deb and Thiele 2000's ZDT1 on [0,1]^d, both minimized.
func zdt1(x []float64) (float64, float64) {
	g := 0.0
	for _, v := range x[1:] {
		g += v
	}
	g = 1 + 9*g/float64(len(x)-1)
	return x[0], g * (1 - math.Sqrt(x[0]/g))
}

func TestMultiObjectiveStudy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, err := Box(nil, []float64{0, 0, 0}, []float64{1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Space: sp, Budget: 40, Seed: 3, Directions: []Direction{Minimize, Maximize}}
	s, err := Create(ctx, storage.NewMemory(), "m", cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(ctx, func(_ context.Context, tr *Trial) (float64, error) {
		f1, f2 := zdt1(tr.X)
		tr.SetValues(f1, -f2) // the second objective maximized
		return 0, nil
	}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	front, err := s.ParetoFront()
	if err != nil {
		t.Fatal(err)
	}
	trials := s.Trials()
	inFront := map[int]bool{}
	for _, f := range front {
		inFront[f.Number] = true
	}
	// The front against the definition, on the values as told.
	for _, a := range trials {
		dominated := false
		for _, b := range trials {
			if pareto.Dominates([]float64{b.Values[0], -b.Values[1]}, []float64{a.Values[0], -a.Values[1]}) {
				dominated = true
			}
		}
		if dominated == inFront[a.Number] {
			t.Fatalf("trial %d (values %v): in front %v, dominated %v", a.Number, a.Values, inFront[a.Number], dominated)
		}
		if a.Value != a.Values[0] {
			t.Fatalf("trial %d: value %v, first objective %v", a.Number, a.Value, a.Values[0])
		}
	}
	ref := []float64{1.1, -11} // f1 <= 1.1, f2 <= 11 (the second maximized as -f2)
	hv, err := s.Hypervolumes(ref)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(hv); i++ {
		if hv[i] < hv[i-1] {
			t.Fatalf("hypervolume fell from %v to %v at trial %d", hv[i-1], hv[i], i)
		}
	}
	// The random design alone (the first Init trials) against the run.
	init := s.Config().Init
	if !(hv[len(hv)-1] > hv[init-1]) {
		t.Errorf("hypervolume %v after %d trials, %v after the design", hv[len(hv)-1], len(hv), hv[init-1])
	}
	t.Logf("front of %d trials, hypervolume %.4f (design %.4f)", len(front), hv[len(hv)-1], hv[init-1])
}

func TestTradeoffConfigAndTellErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"exact policy", func(c *Config) { c.Constraints, c.Policy = 1, "gp-ucb" }, "need policy bkb"},
		{"fixed candidates", func(c *Config) { c.Directions, c.Candidates = []Direction{Minimize, Minimize}, CandidatesFixed }, "candidates grow"},
		{"too many objectives", func(c *Config) { c.Directions = make([]Direction, 5) }, "at most 4"},
		{"bad direction", func(c *Config) { c.Directions = []Direction{Minimize, "up"} }, `directions[1] is "up"`},
		{"conflict", func(c *Config) { c.Direction, c.Directions = Maximize, []Direction{Minimize, Minimize} }, "differs"},
		{"negative", func(c *Config) { c.Constraints = -1 }, "constraints must be"},
	}
	for _, c := range cases {
		cfg := braninConfig(t)
		c.edit(&cfg)
		err := cfg.Normalize()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Normalize: %v, want an error with %q", c.name, err, c.want)
		}
	}
	cfg := braninConfig(t)
	cfg.Constraints = 2
	s, err := Create(ctx, storage.NewMemory(), "e", cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Ask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tells := []struct {
		o    Outcome
		want string
	}{
		{Outcome{Value: 1}, "tell 2 constraint values, got 0"},
		{Outcome{Value: 1, Constraints: []float64{1}}, "got 1"},
		{Outcome{Value: 1, Constraints: []float64{1, math.NaN()}}, "constraint 1 is NaN"},
		{Outcome{Value: 1, Values: []float64{1, 2}, Constraints: []float64{1, 2}}, "one objective"},
	}
	for _, c := range tells {
		if err := s.TellOutcome(ctx, tr.Number, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("TellOutcome(%+v): %v, want an error with %q", c.o, err, c.want)
		}
	}
	if err := s.TellOutcome(ctx, tr.Number, Outcome{Value: 1, Constraints: []float64{-1, 0}}); err != nil {
		t.Fatal(err)
	}
	if b, ok := s.Best(); !ok || b.Infeasible {
		t.Fatalf("Best = %+v, %v: want the feasible trial (constraints <= 0)", b, ok)
	}
}

// TestTradeoffsWorkersAndPostgres: a study with constraints and two
// objectives, run by two workers (on PostgreSQL when BKB_POSTGRES_URL is
// set, else in memory), completes its budget with every value stored, and
// a study loaded from the storage replays to the same trials and
// chooses the stored points.
func TestTradeoffsWorkersAndPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var st storage.Storage = storage.NewMemory()
	name := "w"
	if url := os.Getenv("BKB_POSTGRES_URL"); url != "" {
		pg, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close() })
		st, name = pg, fmt.Sprintf("tradeoffs-%d", time.Now().UnixNano())
	} else {
		t.Log("BKB_POSTGRES_URL is not set: in memory only")
	}
	cfg := braninConfig(t)
	cfg.Budget, cfg.Constraints, cfg.Directions = 24, 1, []Direction{Minimize, Minimize}
	s, err := Create(ctx, st, name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(ctx, func(_ context.Context, tr *Trial) (float64, error) {
		f, c := braninDisk(tr)
		tr.SetConstraints(c)
		tr.SetValues(f, tr.Params.Float("x2"))
		return f, nil
	}, RunOptions{Workers: 2, Trials: 20})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(ctx, st, name)
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Trials(), loaded.Trials()
	if len(a) != 20 || len(b) != 20 {
		t.Fatalf("%d and %d trials, want 20", len(a), len(b))
	}
	for i := range a {
		if a[i].State != Complete || len(a[i].Values) != 2 || len(a[i].Constraints) != 1 ||
			!slices.Equal(a[i].Values, b[i].Values) || !slices.Equal(a[i].Constraints, b[i].Constraints) {
			t.Fatalf("trial %d: %v %v %v, loaded %v %v", i, a[i].State, a[i].Values, a[i].Constraints, b[i].Values, b[i].Constraints)
		}
	}
	// The next ask of the study that ran, replayed by a loaded study: its
	// engine chooses the same point (no divergence).
	if _, err := s.Ask(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := Load(ctx, st, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Ask(ctx); err != nil {
		t.Fatal(err)
	}
	if d := again.Info().Diverged; d != 0 {
		t.Fatalf("%d stored asks differ from what the replay chooses", d)
	}
}

// TestRunWithoutConstraintValuesFails: an objective that does not set the
// declared constraint values (or objective values) fails its trial, with a
// message that says what is missing, and the run goes on.
func TestRunWithoutConstraintValuesFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Constraints = 1 }, "tell 1 constraint values, got 0"},
		{func(c *Config) { c.Directions = []Direction{Minimize, Minimize} }, "tell 2 values, got 0"},
	} {
		cfg := braninConfig(t)
		cfg.Budget = 3
		c.edit(&cfg)
		s, err := Create(ctx, storage.NewMemory(), "f", cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(ctx, func(context.Context, *Trial) (float64, error) { return 1, nil }, RunOptions{}); !errors.Is(err, ErrNoCompleteTrial) {
			t.Fatalf("Run: %v, want ErrNoCompleteTrial", err)
		}
		for _, tr := range s.Trials() {
			if tr.State != Failed || !strings.Contains(tr.Error, c.want) {
				t.Fatalf("trial %d: %v %q, want failed with %q", tr.Number, tr.State, tr.Error, c.want)
			}
		}
	}
}

// TestHypervolumesMixedDirections: the hypervolume trace of trials with a
// minimized and a maximized objective, an infeasible and a failed trial,
// worked out by hand.
func TestHypervolumesMixedDirections(t *testing.T) {
	t.Parallel()
	cfg := Config{Directions: []Direction{Minimize, Maximize}, Constraints: 1}
	trials := []TrialResult{
		{Number: 0, State: Complete, Values: []float64{1, 5}, Constraints: []float64{-1}},
		{Number: 1, State: Complete, Values: []float64{0, 9}, Constraints: []float64{2}, Infeasible: true},
		{Number: 2, State: Failed},
		{Number: 3, State: Complete, Values: []float64{2, 7}, Constraints: []float64{0}},
		{Number: 4, State: Complete, Values: []float64{2.5, 4.5}, Constraints: []float64{-3}}, // dominated
	}
	// Against (3, 4): trial 0 alone covers [1,3] x [4,5], area 2; trial 3
	// adds [2,3] x [5,7], area 2.
	hv, err := Hypervolumes(cfg, trials, []float64{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{2, 2, 2, 4, 4}; !slices.Equal(hv, want) {
		t.Fatalf("Hypervolumes = %v, want %v", hv, want)
	}
	front, err := ParetoFront(cfg, trials)
	if err != nil {
		t.Fatal(err)
	}
	if len(front) != 2 || front[0].Number != 0 || front[1].Number != 3 {
		t.Fatalf("ParetoFront = %v, want trials 0 and 3", front)
	}
	// The worst feasible values, 2.5 and 4.5, moved out by a tenth of the
	// ranges 1.5 and 2.5.
	ref, err := DefaultReference(cfg, trials)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(ref[0]-2.65) > 1e-12 || math.Abs(ref[1]-4.25) > 1e-12 {
		t.Fatalf("DefaultReference = %v, want [2.65 4.25]", ref)
	}
}

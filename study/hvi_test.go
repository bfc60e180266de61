package study

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// branin2 is a two-objective toy on [0,1]^2 (the first minimized, the
// second maximized) for the replay test.
func branin2(x []float64) []float64 {
	a := (x[0]-0.3)*(x[0]-0.3) + (x[1]-0.6)*(x[1]-0.6)
	b := math.Sin(3*x[0]) + x[1]*x[1]
	return []float64{a, b}
}

// TestStoredMultiObjectiveKeepsScalarizations checks the gate of the
// hypervolume improvement: a study with several objectives stored without
// "mo_acquisition" (every journal written before it existed) loads with
// MOScalarize and asks the points the code of commit 466545e asked for
// it (trials 15 to 20, printed by that code on an AVX2/FMA build), while a
// new study gets MOHypervolume and asks others.
func TestStoredMultiObjectiveKeepsScalarizations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, err := Box(nil, []float64{0, 0}, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	// Version 4: the default of the code that recorded the points.
	cfg := Config{Version: 4, Space: sp, Budget: 20, Seed: 7, Directions: []Direction{Minimize, Maximize}}
	fresh, err := Create(ctx, storage.NewMemory(), "g", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := fresh.Config().MOAcquisition; got != MOHypervolume {
		t.Fatalf("a new study's mo_acquisition is %q, want %q", got, MOHypervolume)
	}
	// The configuration as the code before the field stored it.
	var stored map[string]any
	if err := json.Unmarshal(fresh.header.Config, &stored); err != nil {
		t.Fatal(err)
	}
	if stored["mo_acquisition"] != MOHypervolume {
		t.Fatalf("stored mo_acquisition %v, want %q", stored["mo_acquisition"], MOHypervolume)
	}
	delete(stored, "mo_acquisition")
	raw, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	st := storage.NewMemory()
	if _, err := st.CreateStudy(ctx, "g", raw); err != nil {
		t.Fatal(err)
	}
	old, err := Load(ctx, st, "g")
	if err != nil {
		t.Fatal(err)
	}
	if got := old.Config().MOAcquisition; got != MOScalarize {
		t.Fatalf("a stored study without mo_acquisition loads with %q, want %q", got, MOScalarize)
	}
	want := [][]float64{{0.27586330407687487, 0.59608860262481678}, {0.28442275640246772, 0.59930196665780955},
		{0.28016862995181141, 0.59857098503947292}, {0.47118941329837694, 1}, {0.52367741050492811, 1}, {0.52384354983459258, 1}}
	run := func(s *Study) [][]float64 {
		var xs [][]float64
		for i := 0; i < cfg.Budget; i++ {
			tr, err := s.Ask(ctx)
			if err != nil {
				t.Fatal(err)
			}
			xs = append(xs, tr.X)
			if err := s.TellOutcome(ctx, tr.Number, Outcome{Values: branin2(tr.X)}); err != nil {
				t.Fatal(err)
			}
		}
		return xs
	}
	got := run(old)
	// Reloaded from its own records: the same trials, the same next ask
	// rule (the loaded configuration is stored nowhere new).
	again, err := Load(ctx, st, "g")
	if err != nil {
		t.Fatal(err)
	}
	if again.Config().MOAcquisition != MOScalarize || len(again.Trials()) != cfg.Budget {
		t.Fatalf("reloaded: mo_acquisition %q, %d trials", again.Config().MOAcquisition, len(again.Trials()))
	}
	newPts := run(fresh)
	if slices.EqualFunc(got, newPts, slices.Equal) {
		t.Fatal("the hypervolume improvement asked the same 20 points as the scalarizations: the gate is not tested")
	}
	from := cfg.Budget - len(want)
	for i, w := range want {
		x := got[from+i]
		for j := range w {
			if math.Abs(x[j]-w[j]) > 1e-9*(1+math.Abs(w[j])) {
				t.Fatalf("trial %d: %v, recorded %v", from+i+1, x, w)
			}
		}
	}
}

// TestMOAcquisitionConfig checks the configuration's field: an unknown
// name and a name without several objectives are refused, and an explicit
// choice is kept.
func TestMOAcquisitionConfig(t *testing.T) {
	t.Parallel()
	sp, err := Box(nil, []float64{0}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	two := []Direction{Minimize, Minimize}
	for _, c := range []struct {
		cfg  Config
		want string // "" : an error
	}{
		{Config{Space: sp, Directions: two}, MOHypervolume},
		{Config{Space: sp, Directions: two, MOAcquisition: MOScalarize}, MOScalarize},
		{Config{Space: sp, Directions: two, MOAcquisition: "ehvi"}, ""},
		{Config{Space: sp, MOAcquisition: MOHypervolume}, ""},
		{Config{Space: sp, Directions: []Direction{Minimize}, MOAcquisition: MOScalarize}, ""},
	} {
		err := c.cfg.Normalize()
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%+v: no error", c.cfg.MOAcquisition)
		case c.want != "" && (err != nil || c.cfg.MOAcquisition != c.want):
			t.Errorf("%v: %q, %v; want %q", c.cfg.Directions, c.cfg.MOAcquisition, err, c.want)
		}
	}
}

package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/bkb-go/bkb/candidates"
	"github.com/bkb-go/bkb/internal/snapenc"
	"github.com/bkb-go/bkb/objectives"
)

// lowerLate sets the late posterior's thresholds for a test (which must
// not be parallel: they are the package's) and restores them at its end.
func lowerLate(t *testing.T, start, near, rebuild int) {
	t.Cleanup(LowerLateForTest(start, near, rebuild))
}

// TestLateLocal: a version 11 study past late.start runs on the local
// posterior: its dictionary holds at most late.near observations' points,
// every late ask that is not a local quadratic step lies in the box the
// near points span around the incumbent, and a study encoded mid-way
// through the late phase (between rebuilds) and decoded asks the
// uninterrupted run's points bit for bit; version 10 on the same seed
// keeps the global posterior (its dictionary is drawn from every point).
func TestLateLocal(t *testing.T) {
	lowerLate(t, 60, 40, 16)
	f, err := objectives.Lookup("hartmann3")
	if err != nil {
		t.Fatal(err)
	}
	space, err := Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	const budget, cut = 130, 101
	value := func(tr *testTrial, rng *rand.Rand) float64 { return f.Value(tr.X) + 0.04*rng.NormFloat64() }
	run := func(version, stop int) (*testStudy, [][]float64) {
		s, err := newTestStudy(Config{Space: space, Budget: budget, Seed: 5, Version: version})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		var xs [][]float64
		lateAsks := 0
		defer func() {
			if version == 11 && stop > late.start+10 && lateAsks == 0 {
				t.Errorf("version 11: no late ask checked")
			}
		}()
		for i := 0; i < stop; i++ {
			tr, err := s.Ask()
			if err != nil {
				t.Fatal(err)
			}
			xs = append(xs, tr.X)
			if r := s.eng.ref; r.lateLocal(i) && s.eng.rule != "a local quadratic step" {
				// The ask is in the box of the late candidates around the
				// late incumbent (the polish's penalty keeps it there up
				// to L-BFGS's last step: a tenth of the box allowed).
				var weights []float64
				if r.hp != nil {
					weights = candidates.ARDWeights(r.hp.LengthScales)
				}
				h, inc := r.lateHalfWidths(weights), r.lateIncumbent(s.eng)
				u := s.eng.enc[tr.Arm*s.eng.e : (tr.Arm+1)*s.eng.e]
				for j := range u {
					if d := math.Abs(u[j] - inc[j]); d > 1.1*h[j]+1e-12 {
						t.Fatalf("version %d ask %d: coordinate %d is %v from the incumbent, the box's half-width %v", version, i, j, d, h[j])
					}
				}
				lateAsks++
			}
			if err := s.Tell(tr.Number, value(tr, rng)); err != nil {
				t.Fatal(err)
			}
		}
		return s, xs
	}
	ref, want := run(11, budget)
	r := ref.eng.ref
	if r.lateInc == nil {
		t.Fatal("version 11 never ran the late posterior")
	}
	if n := r.dtc.Len(); n > late.near+late.rebuild {
		t.Errorf("late posterior of %d observations, want at most %d", n, late.near+late.rebuild)
	}
	old, _ := run(10, budget)
	if old.eng.ref.lateInc != nil || old.eng.ref.dtc.Len() < budget-1 {
		t.Errorf("version 10: late posterior %v, %d observations in the posterior, want none and all", old.eng.ref.lateInc, old.eng.ref.dtc.Len())
	}

	// Encoded at cut and decoded: the same points.
	s, got := run(11, cut)
	if s.eng.ref.lateSeen == s.eng.ref.lateBuilt {
		t.Fatalf("the cut at %d is at a rebuild: move it", cut)
	}
	w := snapenc.NewWriter(nil)
	if err := s.eng.Encode(w); err != nil {
		t.Fatal(err)
	}
	e2, err := Decode(&s.cfg, snapenc.NewReader(w.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	s.eng = e2
	rng := rand.New(rand.NewPCG(5, 6))
	for range cut {
		rng.NormFloat64()
	}
	for i := cut; i < budget; i++ {
		tr, err := s.Ask()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tr.X)
		if err := s.Tell(tr.Number, value(tr, rng)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range want {
		if !slices.EqualFunc(got[i], want[i], func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
			t.Fatalf("trial %d: %v after a snapshot at %d, %v uninterrupted", i, got[i], cut, want[i])
		}
	}
}

// TestNearest: nearest equals a stable sort of all the distances.
func TestNearest(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	e := &Engine{e: 3}
	for i := range 500 {
		x := []float64{float64(rng.IntN(5)) / 4, rng.Float64(), rng.Float64()}
		e.enc = append(e.enc, x...)
		e.succ = append(e.succ, observation{arm: i})
	}
	c, w := []float64{0.5, 0.5, 0.5}, []float64{1, 2, 0.5}
	dist := func(i int) float64 {
		var s float64
		for j := range c {
			d := (e.enc[i*3+j] - c[j]) * w[j]
			s += d * d
		}
		return s
	}
	all := make([]int, 500)
	for i := range all {
		all[i] = i
	}
	sort.SliceStable(all, func(a, b int) bool { return dist(all[a]) < dist(all[b]) })
	for _, k := range []int{1, 7, 64, 499, 500} {
		got, d2 := nearest(e, c, w, k)
		if !slices.Equal(got, all[:k]) {
			t.Errorf("k = %d: %v, want %v", k, got, all[:k])
		}
		for j, i := range got {
			if d2[j] != dist(i) {
				t.Errorf("k = %d: distance of %d is %v, want %v", k, i, d2[j], dist(i))
			}
		}
	}
}

package engine

import (
	"math"
	"testing"

	"github.com/bkb-go/bkb/space"
)

// freshSpace is a space of 12 x 3 x 4 = 144 configurations: integers and a
// categorical, as a k-NN task's (neighbours, weights, Minkowski power).
func freshSpace(t *testing.T) Space {
	t.Helper()
	s, err := space.NewSpace(
		space.Int("k", 1, 12),
		space.Categorical("w", "a", "b", "c"),
		space.Int("p", 1, 4),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// plateauValue is deterministic with plateaus (equal values over ranges of
// k), as cross-validation errors are: the values a fit reads as noise.
func plateauValue(p Params) float64 {
	v := math.Floor(math.Abs(float64(p.Int("k"))-7)/3) * 0.1
	if p.String("w") != "b" {
		v += 0.05
	}
	return v + math.Abs(float64(p.Int("p")-2))*0.02
}

// runStudy runs a test study of cfg to its budget, f giving each trial's
// value.
func runStudy(t *testing.T, cfg Config, f func(*testTrial) float64) *testStudy {
	t.Helper()
	s, err := newTestStudy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Optimize(func(tr *testTrial) (float64, error) { return f(tr), nil }, 0); err != nil {
		t.Fatal(err)
	}
	return s
}

// repeats runs a study of version v on freshSpace for budget trials of f
// and returns how many asks repeated a configuration asked before.
func repeats(t *testing.T, version int, seed uint64, budget int, f func(Params) float64) (int, *testStudy) {
	t.Helper()
	seen := map[string]bool{}
	n := 0
	s := runStudy(t, Config{Space: freshSpace(t), Budget: budget, Seed: seed, Version: version}, func(tr *testTrial) float64 {
		k := PointKey(tr.X)
		if seen[k] {
			n++
		}
		seen[k] = true
		return f(tr.Params)
	})
	return n, s
}

// bowlSpace and bowl are a 2-d box and a deterministic value on it whose
// asks of growing candidates never repeat a point.
func bowlSpace(t *testing.T) Space {
	t.Helper()
	sp, err := space.NewSpace(space.Float("x", -2, 2), space.Float("y", -1, 3))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func bowl(x []float64) float64 {
	return (x[0]-0.3)*(x[0]-0.3) + (x[1]-1)*(x[1]-1) + 0.1*math.Sin(5*x[0])
}

// TestFreshAsksNoRepeats: on a deterministic objective over 144
// configurations, version 12's 60 asks hold at most one repeated
// configuration (counted by brute force over the asked points), where
// version 11 repeats more on the same seeds (else this problem would not
// test the rule).
func TestFreshAsksNoRepeats(t *testing.T) {
	t.Parallel()
	old := 0
	for seed := uint64(1); seed <= 3; seed++ {
		// At most one repeat: before any, a fit that reads the plateaus as
		// heavy noise may ask one, whose equal value then marks the
		// objective deterministic.
		n12, s := repeats(t, 12, seed, 60, plateauValue)
		if n12 > 1 || n12 == 1 && !s.eng.repeatsEqual {
			t.Errorf("seed %d: version 12 repeated %d configurations of 60 asks (repeats equal: %v)", seed, n12, s.eng.repeatsEqual)
		}
		if s.eng.repeatsDiffer {
			t.Errorf("seed %d: a deterministic objective's records read as noisy", seed)
		}
		n11, _ := repeats(t, 11, seed, 60, plateauValue)
		old += n11
	}
	if old == 0 {
		t.Fatal("version 11 repeated no configuration on seeds 1-3: the problem does not exercise fresh asks")
	}
}

// TestFreshAsksExhausted: a space of 6 configurations and a budget of 12
// asks every configuration once in the first 6 asks that follow the
// design's, then repeats without an error.
func TestFreshAsksExhausted(t *testing.T) {
	t.Parallel()
	sp, err := space.NewSpace(space.Int("a", 1, 3), space.Categorical("c", "x", "y"))
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	runStudy(t, Config{Space: sp, Budget: 12, Seed: 1, Version: 12}, func(tr *testTrial) float64 {
		asked = append(asked, PointKey(tr.X))
		return float64(tr.Params.Int("a")) + map[string]float64{"x": 0, "y": 0.5}[tr.Params.String("c")]
	})
	if len(asked) != 12 {
		t.Fatalf("%d asks, want 12", len(asked))
	}
	distinct := map[string]bool{}
	for _, k := range asked {
		distinct[k] = true
	}
	if len(distinct) != 6 {
		t.Errorf("%d distinct configurations of 6 asked in 12 trials", len(distinct))
	}
}

// tellAgain tells the configuration of trial i once more, as an enqueued
// trial, with value v.
func tellAgain(t *testing.T, s *testStudy, i int, v float64) {
	t.Helper()
	x, tr := s.xs[i], s.next
	s.next++
	for _, ev := range []Event{{Kind: KindEnqueue, Trial: tr, Arm: -1, X: x}, {Kind: KindAsk, Trial: tr, Arm: -1, X: x}, {Kind: KindTell, Trial: tr, Arm: -1, X: x, Y: &v}} {
		if err := s.eng.Apply(ev); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFreshAsksReadTheRecords: two evaluations of one configuration that
// differ mark the objective noisy, and the asks may repeat again; two that
// are equal mark it deterministic. Whatever the fit says.
func TestFreshAsksReadTheRecords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		delta      float64
		wantFresh  bool
		wantDiffer bool
	}{
		{"equal", 0, true, false},
		{"differ", 1e-9, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, s := repeats(t, 12, 1, 20, plateauValue)
			if s.eng.repeatsDiffer {
				t.Fatal("a deterministic objective's records read as noisy")
			}
			s.cfg.Budget = 0
			tellAgain(t, s, 3, plateauValue(s.cfg.Space.ParamsOf(s.xs[3]))+tc.delta)
			if got := s.eng.ref.freshAsks(s.eng); got != tc.wantFresh || s.eng.repeatsDiffer != tc.wantDiffer {
				t.Errorf("freshAsks %v, repeatsDiffer %v; want %v, %v", got, s.eng.repeatsDiffer, tc.wantFresh, tc.wantDiffer)
			}
		})
	}
}

// TestFreshAsksContinuous: on a continuous space whose asks never repeat a
// point, version 12 asks version 11's points bit for bit: only the head of
// the candidates that would repeat is left out, and the pool kept for the
// next ask is the same.
func TestFreshAsksContinuous(t *testing.T) {
	t.Parallel()
	run := func(version int) []string {
		var keys []string
		runStudy(t, Config{Space: bowlSpace(t), Budget: 60, Seed: 5, Version: version}, func(tr *testTrial) float64 {
			keys = append(keys, PointKey(tr.X))
			return bowl(tr.X)
		})
		return keys
	}
	a, b := run(11), run(12)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("trial %d: version 12 asked another point than version 11", i)
		}
	}
}

// fixedRun runs a study of version v on a fixed set of arms Sobol arms
// of bowlSpace with policy for budget trials of bowl and returns the
// asked arms.
func fixedRun(t *testing.T, version int, policy string, budget, arms int) ([]int, *testStudy) {
	t.Helper()
	var asked []int
	s := runStudy(t, Config{Space: bowlSpace(t), Budget: budget, Seed: 4, Version: version, Policy: policy,
		Candidates: CandidatesFixed, Arms: Arms{Kind: "sobol", N: arms}}, func(tr *testTrial) float64 {
		asked = append(asked, tr.Arm)
		return bowl(tr.X)
	})
	return asked, s
}

// TestFreshArms: on a fixed candidate set, version 13 asks 40 distinct
// arms of 64 in 40 trials on a deterministic objective, with every
// policy, and asks version 12's arms up to the first that version 12
// asks again (counted by brute force over the asked arms). Version 12
// must repeat, or the second part would pass vacuously.
func TestFreshArms(t *testing.T) {
	t.Parallel()
	repeated := 0
	for _, policy := range []string{"bkb", "gp-ucb", "thompson", "ei", "bbkb", "random"} {
		a13, _ := fixedRun(t, 13, policy, 40, 64)
		a12, _ := fixedRun(t, 12, policy, 40, 64)
		seen := map[int]bool{}
		for i, a := range a13 {
			if seen[a] {
				t.Errorf("%s: trial %d asks arm %d again (version 13)", policy, i, a)
			}
			seen[a] = true
		}
		seen = map[int]bool{}
		for i, a := range a12 {
			if seen[a] {
				repeated++
				break
			}
			if a13[i] != a {
				t.Errorf("%s: trial %d: version 13 asks arm %d, version 12 arm %d (not a repeat)", policy, i, a13[i], a)
				break
			}
			seen[a] = true
		}
	}
	if repeated == 0 {
		t.Fatal("version 12 repeated no arm with any policy: the problem does not exercise fresh arms")
	}
}

// TestFreshArmsExhausted: 16 arms and 30 trials ask every arm in the first
// 17 trials (one repeat may be the test of the noise, freshAsks), then
// repeat without an error.
func TestFreshArmsExhausted(t *testing.T) {
	t.Parallel()
	asked, s := fixedRun(t, 13, "bkb", 30, 16)
	if len(asked) != 30 {
		t.Fatalf("%d asks, want 30", len(asked))
	}
	first := map[int]bool{}
	for _, a := range asked[:17] {
		first[a] = true
	}
	if len(first) != 16 {
		t.Errorf("%d distinct arms of 16 in the first 17 trials", len(first))
	}
	if !s.eng.repeatsEqual || s.eng.repeatsDiffer {
		t.Errorf("after the repeats, repeatsEqual %v and repeatsDiffer %v; want true, false", s.eng.repeatsEqual, s.eng.repeatsDiffer)
	}
}

// TestFreshArmsReadTheRecords: on a fixed set as on growing candidates, an
// evaluation of an arm that differs from its first marks the objective
// noisy, and repeats are asked again; an equal one marks it deterministic.
func TestFreshArmsReadTheRecords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		delta     float64
		wantFresh bool
	}{
		{"equal", 0, true},
		{"differ", 1e-9, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, s := fixedRun(t, 13, "bkb", 20, 64)
			if s.eng.repeatsDiffer {
				t.Fatal("a deterministic objective's records read as noisy")
			}
			s.cfg.Budget = 0
			tellAgain(t, s, 3, bowl(s.xs[3])+tc.delta)
			if got := s.eng.freshArms(); got != tc.wantFresh {
				t.Errorf("freshArms %v, want %v", got, tc.wantFresh)
			}
		})
	}
}

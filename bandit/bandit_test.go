package bandit

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
)

func randArms(seed uint64, n, d int) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.Float64())
		}
	}
	return x
}

// bumpy is a smooth test reward on [0,1]^d with its maximum 1 at c.
type bumpy struct {
	c     []float64
	noise float64
	rng   *rand.Rand
}

func (b *bumpy) value(x []float64) float64 {
	var s float64
	for i, v := range x {
		s += (v - b.c[i]) * (v - b.c[i])
	}
	return math.Exp(-8*s) + 0.3*math.Sin(7*x[0])
}

func (b *bumpy) Evaluate(_ context.Context, x []float64) (float64, error) {
	return b.value(x) + b.noise*b.rng.NormFloat64(), nil
}

func newBumpy(seed uint64) *bumpy {
	return &bumpy{c: []float64{0.3, 0.7}, noise: 0.05, rng: rand.New(rand.NewPCG(seed, 2))}
}

func play(t *testing.T, p Policy, arms *mat.Dense, steps int, seed uint64) []int {
	t.Helper()
	obj := newBumpy(seed)
	tr, err := Run(context.Background(), p, arms, obj, RunOptions{Steps: steps, Noiseless: obj.value})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, len(tr.Steps))
	for i, s := range tr.Steps {
		out[i] = s.Arm
	}
	return out
}

func TestSameSeedSameArms(t *testing.T) {
	t.Parallel()
	arms := randArms(1, 300, 2)
	ctors := map[string]func() (Policy, error){
		"gp-ucb":      func() (Policy, error) { return NewGPUCB(arms, Options{Seed: 5}) },
		"bkb":         func() (Policy, error) { return NewBKB(arms, Options{Seed: 5}) },
		"bkb-incr":    func() (Policy, error) { return NewBKB(arms, Options{Seed: 5, Incremental: true}) },
		"thompson":    func() (Policy, error) { return NewThompson(arms, Options{Seed: 5}, false) },
		"ei":          func() (Policy, error) { return NewEI(arms, Options{Seed: 5}) },
		"random":      func() (Policy, error) { return NewRandom(300, 5) },
		"bkb-seed-6?": nil,
	}
	for name, ctor := range ctors {
		if ctor == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p1, err := ctor()
			if err != nil {
				t.Fatal(err)
			}
			p2, _ := ctor()
			a1, a2 := play(t, p1, arms, 60, 9), play(t, p2, arms, 60, 9)
			if fmt.Sprint(a1) != fmt.Sprint(a2) {
				t.Fatalf("same seed, different arms:\n%v\n%v", a1, a2)
			}
		})
	}
	// A different seed must change BKB's run (else the seed is ignored).
	p1, _ := NewBKB(arms, Options{Seed: 5})
	p2, _ := NewBKB(arms, Options{Seed: 6})
	if fmt.Sprint(play(t, p1, arms, 30, 9)) == fmt.Sprint(play(t, p2, arms, 30, 9)) {
		t.Error("seeds 5 and 6 chose the same arms")
	}
}

// With qbar so large that every observed arm stays in the dictionary, the
// DTC posterior is the exact one (lambda*sigma~^2 = sigma^2) and BKB must
// choose GP-UCB's arms, given beta on the same scale (the GP scale).
func TestBKBWithFullDictionaryIsGPUCB(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		arms := randArms(seed, 200, 2)
		opt := Options{Seed: seed, Qbar: 1e12, Lambda: 0.01}
		g, _ := NewGPUCB(arms, opt)
		b, _ := NewBKB(arms, opt)
		ag, ab := play(t, g, arms, 80, seed), play(t, b, arms, 80, seed)
		if fmt.Sprint(ag) != fmt.Sprint(ab) {
			t.Fatalf("seed %d: GP-UCB %v\nBKB %v", seed, ag, ab)
		}
		if s := b.Stats(); s.DictionarySize != distinct(ab) {
			t.Fatalf("dictionary %d, distinct arms %d", s.DictionarySize, distinct(ab))
		}
	}
}

func distinct(a []int) int {
	m := map[int]bool{}
	for _, v := range a {
		m[v] = true
	}
	return len(m)
}

// The policy's posterior after N tells equals the gp package's.
func TestPosteriorAfterTells(t *testing.T) {
	t.Parallel()
	arms := randArms(4, 100, 3)
	k := kernel.Matern{Nu: 2.5, LengthScale: 0.4}
	p, err := NewGPUCB(arms, Options{Kernel: k, Lambda: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := gp.NewExact(k, 3, 0.02)
	rng := rand.New(rand.NewPCG(7, 7))
	for s := 0; s < 40; s++ {
		i, y := rng.IntN(100), rng.NormFloat64()
		if err := p.Tell(i, y); err != nil { // told without asking: warm start
			t.Fatal(err)
		}
		ref.Observe(arms.RawRowView(i), y)
	}
	for i := 0; i < 100; i++ {
		m, v, _ := ref.Predict(arms.RawRowView(i))
		if math.Abs(p.Means()[i]-m) > 1e-9 || math.Abs(p.Variances()[i]-v) > 1e-9 {
			t.Fatalf("arm %d: policy (%v, %v), gp (%v, %v)", i, p.Means()[i], p.Variances()[i], m, v)
		}
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	if _, err := NewBKB(mat.NewDense(1, 1, nil), Options{Qbar: -1}); err == nil {
		t.Error("negative qbar accepted")
	}
	if _, err := NewGPUCB(nil, Options{}); err == nil {
		t.Error("nil arm set accepted")
	}
	if _, err := NewRandom(0, 1); err == nil {
		t.Error("empty arm set accepted")
	}
	p, _ := NewBKB(randArms(1, 10, 2), Options{})
	if err := p.Tell(10, 1); err == nil {
		t.Error("out-of-range arm accepted")
	}
	if err := p.Tell(1, math.NaN()); err == nil {
		t.Error("NaN reward accepted")
	}
}

// Consecutive Asks without Tells form a batch: conditioned on the pending
// arms, GP-UCB does not ask for the same arm twice.
func TestBatchAsk(t *testing.T) {
	t.Parallel()
	arms := randArms(3, 150, 2)
	for _, mk := range []func() (*GP, error){
		func() (*GP, error) { return NewGPUCB(arms, Options{Seed: 1}) },
		func() (*GP, error) { return NewBKB(arms, Options{Seed: 1}) },
	} {
		p, _ := mk()
		obj := newBumpy(1)
		for s := 0; s < 10; s++ {
			a, _ := p.Ask()
			y, _ := obj.Evaluate(context.Background(), arms.RawRowView(a))
			p.Tell(a, y)
		}
		seen := map[int]bool{}
		for s := 0; s < 5; s++ {
			a, err := p.Ask()
			if err != nil {
				t.Fatal(err)
			}
			if seen[a] {
				t.Fatalf("%s: batch repeated arm %d", p.Name(), a)
			}
			seen[a] = true
		}
	}
}

// The incremental implementations choose exactly the arms of the
// rebuild-every-step implementations (the algorithms as the papers state
// them) on the same seeds: the speed is not bought with a different
// algorithm.
func TestIncrementalEqualsRebuild(t *testing.T) {
	t.Parallel()
	arms := randArms(8, 400, 2)
	for _, tc := range []struct {
		name string
		mk   func(Options) (*GP, error)
		opt  Options
	}{
		{"gp-ucb", func(o Options) (*GP, error) { return NewGPUCB(arms, o) }, Options{Seed: 3}},
		{"bkb", func(o Options) (*GP, error) { return NewBKB(arms, o) }, Options{Seed: 3}},
		{"bkb-incremental", func(o Options) (*GP, error) { return NewBKB(arms, o) }, Options{Seed: 3, Incremental: true}},
	} {
		fast, _ := tc.mk(tc.opt)
		slow := tc.opt
		slow.Rebuild = true
		ref, _ := tc.mk(slow)
		a, b := play(t, fast, arms, 120, 4), play(t, ref, arms, 120, 4)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%s: incremental %v\nrebuild %v", tc.name, a, b)
		}
		if tc.name != "gp-ucb" && ref.dtc.Rebuilds() < 120 {
			t.Fatalf("%s: rebuild mode rebuilt only %d times", tc.name, ref.dtc.Rebuilds())
		}
	}
}

package acquisition

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestUCB(t *testing.T) {
	t.Parallel()
	dst := make([]float64, 3)
	UCB(dst, []float64{1, 0, -1}, []float64{4, 0, -1e-18}, 0.5)
	for i, want := range []float64{2, 0, -1} {
		if dst[i] != want {
			t.Errorf("UCB[%d] = %v, want %v", i, dst[i], want)
		}
	}
}

// Expected improvement against a Monte Carlo estimate of
// E[max(f - best - xi, 0)], f ~ N(mu, var).
func TestExpectedImprovementMonteCarlo(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct{ mu, v, best, xi float64 }{{0, 1, 0, 0}, {1, 0.25, 2, 0.1}, {-1, 4, 0.5, 0}, {3, 1, 0, 0}}
	for _, c := range cases {
		dst := make([]float64, 1)
		ExpectedImprovement(dst, []float64{c.mu}, []float64{c.v}, c.best, c.xi)
		const n = 400000
		var s, s2 float64
		for i := 0; i < n; i++ {
			f := c.mu + math.Sqrt(c.v)*rng.NormFloat64()
			g := math.Max(f-c.best-c.xi, 0)
			s += g
			s2 += g * g
		}
		mean := s / n
		se := math.Sqrt((s2/n - mean*mean) / n)
		if math.Abs(dst[0]-mean) > 5*se+1e-12 {
			t.Errorf("%+v: EI %v, Monte Carlo %v +- %v", c, dst[0], mean, se)
		}
	}
	// Zero variance: the improvement itself.
	dst := make([]float64, 2)
	ExpectedImprovement(dst, []float64{2, -1}, []float64{0, 0}, 1, 0)
	if dst[0] != 1 || dst[1] != 0 {
		t.Errorf("EI with zero variance = %v, want [1 0]", dst)
	}
}

func TestThompsonMoments(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 100000
	mean, vari := make([]float64, n), make([]float64, n)
	for i := range mean {
		mean[i], vari[i] = 2, 9
	}
	dst := make([]float64, n)
	Thompson(dst, mean, vari, 0.5, rng)
	var s, s2 float64
	for _, v := range dst {
		s += v
		s2 += v * v
	}
	m := s / n
	sd := math.Sqrt(s2/n - m*m)
	if math.Abs(m-2) > 0.03 || math.Abs(sd-1.5) > 0.03 {
		t.Errorf("Thompson draws: mean %v sd %v, want 2 and 1.5", m, sd)
	}
}

func TestArgmax(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, c := range []struct {
		x    []float64
		want int
	}{
		{nil, -1},
		{[]float64{nan, nan}, -1},
		{[]float64{1, 3, 3, 2}, 1},        // ties: lowest index
		{[]float64{nan, 1, nan, 5, 5}, 3}, // NaN never chosen
		{[]float64{math.Inf(-1), math.Inf(-1)}, 0},
		{[]float64{math.Inf(-1), 0, math.Inf(1)}, 2},
	} {
		if got := Argmax(c.x); got != c.want {
			t.Errorf("Argmax(%v) = %d, want %d", c.x, got, c.want)
		}
	}
}

func TestBetaSchedules(t *testing.T) {
	t.Parallel()
	s := State{T: 100, Arms: 1000, SumVar: 12, Lambda: 0.04, Kappa2: 1}
	// Theorem 4.1 of seed 004, computed by hand: alpha = 3 for eps = 0.5.
	b := BKBTheorem{F: 2, Delta: 0.1, Eps: 0.5, Xi: 0.2}
	want := 2*0.2*math.Sqrt(3*math.Log(100)*12+math.Log(10)) + (1+1/math.Sqrt(0.5))*0.2*2
	if got := b.Beta(s); math.Abs(got-want) > 1e-12 {
		t.Errorf("BKBTheorem = %v, want %v", got, want)
	}
	if err := b.Validate(); err != nil {
		t.Error(err)
	}
	if err := (BKBTheorem{Eps: 1, Delta: 0.1}).Validate(); err == nil {
		t.Error("eps = 1 accepted")
	}
	bb := BatchBKB{F: 2, Delta: 0.1, Xi: 0.2}
	want = 0.2*2 + math.Sqrt(0.04*(12*math.Log(100)+math.Log(10)))
	if got := bb.Beta(s); math.Abs(got-want) > 1e-12 {
		t.Errorf("BatchBKB = %v, want %v", got, want)
	}
	g := GPUCBFinite{Delta: 0.1}
	want = math.Sqrt(2 * math.Log(1000*1e4*math.Pi*math.Pi/0.6))
	if got := g.Beta(s); math.Abs(got-want) > 1e-12 {
		t.Errorf("GPUCBFinite = %v, want %v", got, want)
	}
	if Constant(2.5).Beta(s) != 2.5 {
		t.Error("Constant")
	}
	// Beta grows with t (more data, more confidence needed).
	s2 := s
	s2.T = 1000
	if b.Beta(s2) <= b.Beta(s) || g.Beta(s2) <= g.Beta(s) {
		t.Error("theoretical betas must grow with t")
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("mismatched lengths did not panic")
		}
	}()
	UCB(make([]float64, 2), make([]float64, 3), make([]float64, 3), 1)
}

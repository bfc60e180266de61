package objectives

import (
	"context"
	"math"
	"strings"
	"testing"
)

var (
	_ Objective = (*Reward)(nil)
	_ Objective = (*GPSample)(nil)
	_ Objective = ObjectiveFunc(nil)
)

func TestObjectiveFunc(t *testing.T) {
	t.Parallel()
	var o Objective = ObjectiveFunc(func(_ context.Context, x []float64) (float64, error) { return x[0] * 2, nil })
	if y, err := o.Evaluate(context.Background(), []float64{3}); y != 6 || err != nil {
		t.Fatalf("Evaluate = %v, %v", y, err)
	}
}

func TestRewardReproducible(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	x := []float64{0.2, 0.3, 0.4}
	draw := func(seed uint64) []float64 {
		r, err := NewReward(Hartmann3(), 0.1, seed)
		if err != nil {
			t.Fatal(err)
		}
		ys := make([]float64, 50)
		for i := range ys {
			if ys[i], err = r.Evaluate(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		return ys
	}
	a, b, c := draw(3), draw(3), draw(4)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 3 draw %d: %v then %v", i, a[i], b[i])
		}
	}
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("seeds 3 and 4 agree on %d of %d draws", same, len(a))
	}
}

func TestRewardNoiseStatistics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, std := range []float64{0.01, 0.5, 3} {
		f := Branin()
		r, err := NewReward(f, std, 11)
		if err != nil {
			t.Fatal(err)
		}
		x := []float64{1, 2}
		mean := -f.Value(x)
		if r.Noiseless(x) != mean || r.NoiseStd() != std {
			t.Fatalf("Noiseless %v != %v or NoiseStd %v != %v", r.Noiseless(x), mean, r.NoiseStd(), std)
		}
		const n = 20000
		var s, s2 float64
		for range n {
			y, err := r.Evaluate(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			s += y - mean
			s2 += (y - mean) * (y - mean)
		}
		m := s / n
		sd := math.Sqrt(s2/n - m*m)
		// Standard errors: std/sqrt(n) for the mean, about std/sqrt(2n)
		// for the standard deviation; allow 4 of them.
		if math.Abs(m) > 4*std/math.Sqrt(n) {
			t.Errorf("std %v: mean noise %v", std, m)
		}
		if math.Abs(sd-std) > 4*std/math.Sqrt(2*n) {
			t.Errorf("std %v: empirical std %v", std, sd)
		}
	}
}

func TestRewardNoiseless(t *testing.T) {
	t.Parallel()
	f := Ackley(3)
	r, err := NewReward(f, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.5, -1, 2}
	y, err := r.Evaluate(context.Background(), x)
	if err != nil || y != -f.Value(x) {
		t.Fatalf("Evaluate = %v, %v; want %v", y, err, -f.Value(x))
	}
	if r.Optimum() != -f.MinValue || r.Dim() != 3 || r.Function().Name != "ackley" {
		t.Fatalf("Optimum %v, Dim %d, Function %v", r.Optimum(), r.Dim(), r.Function())
	}
	// The reward keeps its own copy of the function's scalars.
	f.MinValue = 7
	if r.Optimum() == -7 {
		t.Fatal("Reward shares the Function")
	}
}

func TestRewardErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    *Function
		std  float64
		want string
	}{
		{nil, 0, "nil"},
		{&Function{Dim: 2}, 0, "uninitialised"},
		{Branin(), -1, "noise std"},
		{Branin(), math.NaN(), "noise std"},
		{Branin(), math.Inf(1), "noise std"},
	} {
		if _, err := NewReward(tc.f, tc.std, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewReward(%v, %v) error %v, want %q", tc.f, tc.std, err, tc.want)
		}
	}

	r, err := NewReward(Branin(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		x    []float64
		want string
	}{
		{context.Background(), []float64{1}, "dimension 1, want 2"},
		{context.Background(), nil, "dimension 0, want 2"},
		{context.Background(), []float64{1, math.NaN()}, "coordinate 1"},
		{context.Background(), []float64{math.Inf(-1), 0}, "coordinate 0"},
		{cancelled, []float64{1, 2}, "canceled"},
	} {
		if _, err := r.Evaluate(tc.ctx, tc.x); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Evaluate(%v) error %v, want %q", tc.x, err, tc.want)
		}
	}
}

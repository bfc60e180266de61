package objectives

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// TestGPSampleCovariance checks that across many seeds the sampled values
// have mean 0 and covariance k(x_i, x_j).
func TestGPSampleCovariance(t *testing.T) {
	t.Parallel()
	k := kernel.RBF{LengthScale: 0.3, Variance: 2}
	arms := mat.NewDense(6, 2, []float64{
		0, 0,
		0.1, 0,
		0.5, 0.5,
		1, 0.2,
		0.9, 0.9,
		0.3, 0.8,
	})
	n, _ := arms.Dims()
	const seeds = 4000
	mean := make([]float64, n)
	cov := mat.NewDense(n, n, nil)
	for s := range uint64(seeds) {
		g, err := NewGPSample(k, arms, s)
		if err != nil {
			t.Fatal(err)
		}
		v := g.Values()
		for i := range v {
			mean[i] += v[i] / seeds
			for j := range v {
				cov.Set(i, j, cov.At(i, j)+v[i]*v[j]/seeds)
			}
		}
	}
	// Standard error of a sample mean is sqrt(2/4000) ~ 0.022, of a sample
	// second moment at most about 2 sqrt(2)/sqrt(4000) ~ 0.045.
	for i := range n {
		if math.Abs(mean[i]) > 0.1 {
			t.Errorf("mean of f(x_%d) = %v, want 0", i, mean[i])
		}
		for j := range n {
			want := k.Eval(arms.RawRowView(i), arms.RawRowView(j))
			if got := cov.At(i, j) - mean[i]*mean[j]; math.Abs(got-want) > 0.2 {
				t.Errorf("cov(f(x_%d), f(x_%d)) = %.3f, want %.3f", i, j, got, want)
			}
		}
	}
}

func TestGPSampleEvaluate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	arms, err := Sobol(Box{Lower: []float64{-1, -1}, Upper: []float64{1, 1}}, 64, 5)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGPSample(kernel.Matern{Nu: 2.5, LengthScale: 0.5}, arms, 9)
	if err != nil {
		t.Fatal(err)
	}
	vals := g.Values()
	for i := range vals {
		x := slices.Clone(arms.RawRowView(i))
		y, err := g.Evaluate(ctx, x)
		if err != nil || y != vals[i] {
			t.Fatalf("Evaluate(arm %d) = %v, %v; want %v", i, y, err, vals[i])
		}
	}
	if g.Optimum() != slices.Max(vals) || vals[g.ArgMax()] != g.Optimum() {
		t.Fatalf("Optimum %v, ArgMax %d, max %v", g.Optimum(), g.ArgMax(), slices.Max(vals))
	}
	if g.Dim() != 2 || !mat.Equal(g.Arms(), arms) {
		t.Fatal("Dim or Arms wrong")
	}
	if j := g.Jitter(); !(j > 0 && j <= 1e-4) {
		t.Fatalf("Jitter %v", j)
	}
	// Values returns a copy.
	vals[0] = 1e9
	if g.Values()[0] == 1e9 {
		t.Fatal("Values shares its slice")
	}
	// Same seed, same function; another seed, another.
	g2, _ := NewGPSample(kernel.Matern{Nu: 2.5, LengthScale: 0.5}, arms, 9)
	g3, _ := NewGPSample(kernel.Matern{Nu: 2.5, LengthScale: 0.5}, arms, 10)
	if !slices.Equal(g.Values(), g2.Values()) || slices.Equal(g.Values(), g3.Values()) {
		t.Fatal("GPSample not determined by its seed")
	}

	x := slices.Clone(arms.RawRowView(3))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		x    []float64
		want string
	}{
		{ctx, []float64{x[0], math.Nextafter(x[1], 2)}, "not one of the 64 arms"},
		{ctx, []float64{5, 5}, "not one of"},
		{ctx, x[:1], "dimension 1, want 2"},
		{ctx, []float64{math.NaN(), 0}, "coordinate 0"},
		{cancelled, x, "canceled"},
	} {
		if _, err := g.Evaluate(tc.ctx, tc.x); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Evaluate(%v) error %v, want %q", tc.x, err, tc.want)
		}
	}
}

func TestGPSampleDuplicatesAndSignedZero(t *testing.T) {
	t.Parallel()
	arms := mat.NewDense(5, 1, []float64{0, 1, 0, 2, 1})
	g, err := NewGPSample(kernel.RBF{LengthScale: 1}, arms, 1)
	if err != nil {
		t.Fatal(err)
	}
	v := g.Values()
	if v[0] != v[2] || v[1] != v[4] || v[0] == v[1] {
		t.Fatalf("duplicate arms got values %v", v)
	}
	y, err := g.Evaluate(context.Background(), []float64{math.Copysign(0, -1)})
	if err != nil || y != v[0] {
		t.Fatalf("Evaluate(-0) = %v, %v; want %v", y, err, v[0])
	}
}

// shrunk is k(x, y) - eps [x == y]: on a numerically low-rank kernel matrix
// its smallest eigenvalues are about -eps.
type shrunk struct {
	k   kernel.Kernel
	eps float64
}

func (s shrunk) Eval(x, y []float64) float64 {
	v := s.k.Eval(x, y)
	if x[0] == y[0] {
		v -= s.eps
	}
	return v
}

func TestGPSampleJitterGrows(t *testing.T) {
	t.Parallel()
	// 200 points on [0, 1] with length scale 1: K is numerically of low
	// rank, so K - 1e-7 I is indefinite and the jitter must grow past 1e-7.
	arms, err := Grid(Box{Lower: []float64{0}, Upper: []float64{1}}, 200)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGPSample(shrunk{kernel.RBF{LengthScale: 1}, 1e-7}, arms, 3)
	if err != nil {
		t.Fatal(err)
	}
	if j := g.Jitter(); j < 1e-7 || j > 1.1e-5 {
		t.Fatalf("jitter %v, want 1e-6 or 1e-5 (times the mean diagonal)", j)
	}
	for i, v := range g.Values() {
		if math.IsNaN(v) || math.Abs(v) > 10 {
			t.Fatalf("value %d = %v", i, v)
		}
	}
	// With the plain kernel the smallest jitter is enough.
	g, err = NewGPSample(kernel.RBF{LengthScale: 1}, arms, 3)
	if err != nil || g.Jitter() != 1e-10 {
		t.Fatalf("plain RBF: jitter %v, error %v", g.Jitter(), err)
	}
}

// notPD is a symmetric kernel whose matrices are not positive semi-definite.
type notPD struct{}

func (notPD) Eval(x, y []float64) float64 {
	if x[0] == y[0] {
		return 1
	}
	return 2
}

type nanKernel struct{}

func (nanKernel) Eval(x, y []float64) float64 { return math.NaN() }

func TestGPSampleErrors(t *testing.T) {
	t.Parallel()
	arms := mat.NewDense(3, 1, []float64{0, 1, 2})
	for _, tc := range []struct {
		name string
		k    kernel.Kernel
		arms *mat.Dense
		want string
	}{
		{"nil kernel", nil, arms, "nil kernel"},
		{"bad kernel", kernel.RBF{LengthScale: -1}, arms, "length scale"},
		{"nil arms", kernel.RBF{LengthScale: 1}, nil, "no arms"},
		{"empty arms", kernel.RBF{LengthScale: 1}, &mat.Dense{}, "no arms"},
		{"NaN arm", kernel.RBF{LengthScale: 1}, mat.NewDense(2, 1, []float64{0, math.NaN()}), "arm 1, coordinate 0"},
		{"not PD", notPD{}, arms, "not positive definite"},
		{"NaN kernel", nanKernel{}, arms, "kernel matrix entry (0, 0)"},
		{"zero kernel", kernel.Linear{}, mat.NewDense(2, 1, []float64{0, 0}), "mean diagonal"},
	} {
		if _, err := NewGPSample(tc.k, tc.arms, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

package kernel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func ardKernels() []struct {
	name string
	k    ARDGradienter
} {
	return []struct {
		name string
		k    ARDGradienter
	}{
		{"RBFARD", RBFARD{LengthScales: []float64{0.1, 0.3, 1}, Variance: 1.7}},
		{"Matern52ARD", Matern52ARD{LengthScales: []float64{0.1, 0.3, 1}, Variance: 0.6}},
		{"RBFARD/wide", RBFARD{LengthScales: []float64{2, 0.05, 0.7}, Variance: 1}},
		{"Matern52ARD/wide", Matern52ARD{LengthScales: []float64{2, 0.05, 0.7}, Variance: 3}},
	}
}

// With all length scales equal the ARD kernels are the isotropic ones.
func TestARDReducesToIsotropic(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{1, 2, 5} {
		for _, l := range []float64{0.05, 0.4, 3} {
			ls := make([]float64, d)
			for i := range ls {
				ls[i] = l
			}
			pairs := []struct {
				name     string
				ard, iso Kernel
			}{
				{"RBF", RBFARD{LengthScales: ls, Variance: 1.3}, RBF{LengthScale: l, Variance: 1.3}},
				{"Matern52", Matern52ARD{LengthScales: ls, Variance: 0.4}, Matern{Nu: 2.5, LengthScale: l, Variance: 0.4}},
			}
			for _, p := range pairs {
				for range 50 {
					x := randPoints(rng, 2, d, -1, 1)
					a, b := x.RawRowView(0), x.RawRowView(1)
					got, want := p.ard.Eval(a, b), p.iso.Eval(a, b)
					if math.Abs(got-want) > 1e-14*math.Max(1, want) {
						t.Fatalf("%s d=%d l=%v: ARD %v, isotropic %v", p.name, d, l, got, want)
					}
				}
			}
		}
	}
}

// Hand-computed values with distinct length scales.
func TestARDClosedForms(t *testing.T) {
	t.Parallel()
	x, y := []float64{0, 0}, []float64{1, 1}
	ls := []float64{1, 2}
	// r^2 = 1 + 1/4 = 1.25.
	if got, want := (RBFARD{LengthScales: ls, Variance: 2}).Eval(x, y), 2*math.Exp(-0.625); math.Abs(got-want) > 1e-15 {
		t.Errorf("RBFARD = %v, want %v", got, want)
	}
	s := math.Sqrt(5 * 1.25)
	want := 2 * (1 + s + s*s/3) * math.Exp(-s)
	if got := (Matern52ARD{LengthScales: ls, Variance: 2}).Eval(x, y); math.Abs(got-want) > 1e-15 {
		t.Errorf("Matern52ARD = %v, want %v", got, want)
	}
}

func TestARDGramMatricesArePD(t *testing.T) {
	t.Parallel()
	for _, tc := range ardKernels() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for seed := range 5 {
				rng := rand.New(rand.NewPCG(uint64(seed), 9))
				x := randPoints(rng, 80, 3, 0, 1)
				k := mat.NewDense(80, 80, nil)
				Matrix(k, tc.k, x, x)
				if !mat.Equal(k, k.T()) {
					t.Fatal("Gram matrix not symmetric")
				}
				lmin, tr := minEigen(t, k)
				if lmin < -1e-10*tr {
					t.Errorf("seed %d: smallest eigenvalue %v < -1e-10 * trace (%v)", seed, lmin, tr)
				}
				// A small jitter must make it Cholesky-factorable.
				for i := range 80 {
					k.Set(i, i, k.At(i, i)+1e-8*tr/80)
				}
				var ch mat.Cholesky
				if !ch.Factorize(mat.NewSymDense(80, k.RawMatrix().Data)) {
					t.Errorf("seed %d: Cholesky failed", seed)
				}
			}
		})
	}
}

// EvalGrad against central finite differences in log length scale, and its
// value against Eval.
func TestARDGradientFiniteDifferences(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range ardKernels() {
		for trial := range 30 {
			x := randPoints(rng, 2, 3, 0, 1)
			a, b := x.RawRowView(0), x.RawRowView(1)
			if trial == 0 {
				b = a // r = 0: the gradient is 0
			}
			g := make([]float64, 3)
			v := tc.k.EvalGrad(g, a, b)
			if e := tc.k.Eval(a, b); math.Abs(v-e) > 1e-15*math.Max(1, e) {
				t.Errorf("%s: EvalGrad value %v, Eval %v", tc.name, v, e)
			}
			for i := range 3 {
				const h = 1e-5
				fd := (evalLogShift(tc.k, i, h, a, b) - evalLogShift(tc.k, i, -h, a, b)) / (2 * h)
				if math.Abs(g[i]-fd) > 1e-7*math.Max(1, math.Abs(fd)) {
					t.Errorf("%s trial %d: dk/dlog l_%d = %v, finite difference %v", tc.name, trial, i, g[i], fd)
				}
			}
		}
	}
}

// evalLogShift evaluates k with length scale i multiplied by e^h.
func evalLogShift(k Kernel, i int, h float64, a, b []float64) float64 {
	switch k := k.(type) {
	case RBFARD:
		ls := append([]float64(nil), k.LengthScales...)
		ls[i] *= math.Exp(h)
		return RBFARD{LengthScales: ls, Variance: k.Variance}.Eval(a, b)
	case Matern52ARD:
		ls := append([]float64(nil), k.LengthScales...)
		ls[i] *= math.Exp(h)
		return Matern52ARD{LengthScales: ls, Variance: k.Variance}.Eval(a, b)
	}
	panic("unknown kernel")
}

func TestARDValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		k    Kernel
		want string // "" for valid
	}{
		{"ok", RBFARD{LengthScales: []float64{1, 2}, Variance: 1}, ""},
		{"ok matern", Matern52ARD{LengthScales: []float64{0.1}, Variance: 0.5}, ""},
		{"zero variance", RBFARD{LengthScales: []float64{1}}, "variance"},
		{"zero variance matern", Matern52ARD{LengthScales: []float64{1}}, "variance"},
		{"nan variance", RBFARD{LengthScales: []float64{1}, Variance: math.NaN()}, "variance"},
		{"no length scales", RBFARD{Variance: 1}, "at least one"},
		{"no length scales matern", Matern52ARD{Variance: 1}, "at least one"},
		{"negative length scale", RBFARD{LengthScales: []float64{1, -1}, Variance: 1}, "length scale 1"},
		{"inf length scale", Matern52ARD{LengthScales: []float64{math.Inf(1)}, Variance: 1}, "length scale 0"},
		{"zero length scale", Matern52ARD{LengthScales: []float64{0.5, 0}, Variance: 1}, "length scale 1"},
	}
	for _, tc := range tests {
		err := Validate(tc.k)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestARDPanicsOnDimensionMismatch(t *testing.T) {
	t.Parallel()
	k := RBFARD{LengthScales: []float64{1, 1}, Variance: 1}
	m := Matern52ARD{LengthScales: []float64{1, 1}, Variance: 1}
	expectPanics(t, []panicCase{
		{"rbf x/y", func() { k.Eval([]float64{1, 2}, []float64{1}) }},
		{"rbf length scales", func() { k.Eval([]float64{1, 2, 3}, []float64{1, 2, 3}) }},
		{"matern length scales", func() { m.Eval([]float64{1}, []float64{1}) }},
		{"grad length", func() { m.EvalGrad(make([]float64, 1), []float64{1, 2}, []float64{1, 2}) }},
		{"frequency length", func() { k.SampleFrequency(make([]float64, 3), rand.New(rand.NewPCG(1, 1))) }},
	})
}

func TestARDDoesNotAllocate(t *testing.T) {
	x, y, g := []float64{0.1, 0.2, 0.3}, []float64{0.3, 0.1, 0.9}, make([]float64, 3)
	for _, tc := range ardKernels() {
		k := tc.k
		if a := testing.AllocsPerRun(100, func() { k.Eval(x, y); k.EvalGrad(g, x, y) }); a != 0 {
			t.Errorf("%s: %v allocations per Eval+EvalGrad", tc.name, a)
		}
	}
}

// Bochner: E[cos(omega.(x-y))] = k(x, y)/k(0) for the ARD spectral samplers.
func TestARDSpectralSamplers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		k    SpectralSampler
	}{
		{"RBFARD", RBFARD{LengthScales: []float64{0.5, 1, 2}, Variance: 2}},
		{"Matern52ARD", Matern52ARD{LengthScales: []float64{0.3, 1.2, 0.8}, Variance: 0.5}},
	}
	deltas := [][]float64{{0.1, 0, 0}, {0.3, -0.4, 0.2}, {0, 0.5, -0.5}, {-0.2, 1.2, 0.6}}
	const n = 40000
	for i, tc := range tests {
		rng := rand.New(rand.NewPCG(13, uint64(i)))
		omega := make([]float64, 3)
		sums := make([]float64, len(deltas))
		for range n {
			tc.k.SampleFrequency(omega, rng)
			for j, dl := range deltas {
				sums[j] += math.Cos(dot(omega, dl))
			}
		}
		zero := []float64{0, 0, 0}
		if s, want := tc.k.Scale(), tc.k.Eval(zero, zero); s != want {
			t.Errorf("%s: Scale = %v, k(0, 0) = %v", tc.name, s, want)
		}
		tol := 4 / math.Sqrt(n)
		for j, dl := range deltas {
			got, want := sums[j]/n, tc.k.Eval(zero, dl)/tc.k.Scale()
			if math.Abs(got-want) > tol {
				t.Errorf("%s delta %v: mean cos = %v, k/k(0) = %v (tolerance %v)", tc.name, dl, got, want, tol)
			}
		}
	}
}

package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// allKernels lists one or more valid instances of every kernel of the
// package, used by the generic property tests.
func allKernels() []struct {
	name string
	k    Kernel
} {
	return []struct {
		name string
		k    Kernel
	}{
		{"RBF", RBF{LengthScale: 0.8}},
		{"RBF/var", RBF{LengthScale: 1.7, Variance: 2.5}},
		{"Matern0.5", Matern{Nu: 0.5, LengthScale: 0.9}},
		{"Matern1.5", Matern{Nu: 1.5, LengthScale: 1.1, Variance: 0.7}},
		{"Matern2.5", Matern{Nu: 2.5, LengthScale: 0.6}},
		{"Linear", Linear{}},
		{"Linear/offset", Linear{Variance: 2, Offset: 0.5}},
		{"Polynomial2", Polynomial{Degree: 2, Offset: 1}},
		{"Polynomial3", Polynomial{Degree: 3, Scale: 0.5, Offset: 0.2}},
		{"Taylor0", TaylorKernel{Degree: 0, Sigma: 1}},
		{"Taylor3", TaylorKernel{Degree: 3, Sigma: 1.3, Variance: 1.5}},
	}
}

func randPoints(rng *rand.Rand, n, d int, lo, hi float64) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			x.Set(i, j, lo+(hi-lo)*rng.Float64())
		}
	}
	return x
}

func TestClosedForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		k    Kernel
		x, y []float64
		want float64
	}{
		// exp(-1/2)
		{"RBF unit", RBF{LengthScale: 1}, []float64{0, 0}, []float64{1, 0}, 0.6065306597126334},
		// ||x-y||^2 = 8, 8/(2*4) = 1: 3 e^-1
		{"RBF scaled", RBF{LengthScale: 2, Variance: 3}, []float64{1, 2}, []float64{3, 0}, 1.103638323514327},
		{"RBF same point", RBF{LengthScale: 0.3, Variance: 4}, []float64{1, -2, 3}, []float64{1, -2, 3}, 4},
		// r = 5: e^-5
		{"Matern0.5", Matern{Nu: 0.5, LengthScale: 1}, []float64{0, 0}, []float64{3, 4}, 0.006737946999085467},
		// r/l = 1: (1+sqrt3) e^-sqrt3
		{"Matern1.5", Matern{Nu: 1.5, LengthScale: 2}, []float64{1, 1}, []float64{1, 3}, 0.4833577245965077},
		// r/l = 1/2, s = sqrt5/2: (1+s+s^2/3) e^-s
		{"Matern2.5", Matern{Nu: 2.5, LengthScale: 2}, []float64{0, 0}, []float64{0.6, 0.8}, 0.8286491424181255},
		{"Matern2.5 var", Matern{Nu: 2.5, LengthScale: 2, Variance: 2}, []float64{0, 0}, []float64{0.6, 0.8}, 2 * 0.8286491424181255},
		// 2*11 + 1
		{"Linear", Linear{Variance: 2, Offset: 1}, []float64{1, 2}, []float64{3, 4}, 23},
		// (0.5*11 + 1)^2
		{"Polynomial", Polynomial{Degree: 2, Scale: 0.5, Offset: 1}, []float64{1, 2}, []float64{3, 4}, 42.25},
		{"Polynomial cubic", Polynomial{Degree: 3}, []float64{1, 1}, []float64{1, 1}, 8},
		// exp(-(1+1/4)/2) (1 + 1/2 + 1/8)
		{"Taylor2", TaylorKernel{Degree: 2, Sigma: 1}, []float64{1, 0}, []float64{0.5, 0}, 0.8697998213433592},
		// degree 0: the envelope alone, exp(-(1+1/4)/2)
		{"Taylor0", TaylorKernel{Degree: 0, Sigma: 1, Variance: 2}, []float64{1, 0}, []float64{0, 0.5}, 2 * math.Exp(-0.625)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := Validate(tc.k); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got := tc.k.Eval(tc.x, tc.y)
			if math.Abs(got-tc.want) > 1e-14*math.Max(1, math.Abs(tc.want)) {
				t.Errorf("Eval = %.17g, want %.17g", got, tc.want)
			}
			if back := tc.k.Eval(tc.y, tc.x); back != got {
				t.Errorf("Eval(y, x) = %.17g, Eval(x, y) = %.17g", back, got)
			}
		})
	}
}

func TestSymmetryAndDiag(t *testing.T) {
	t.Parallel()
	for _, tc := range allKernels() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(1, 2))
			x := randPoints(rng, 30, 4, -1.5, 1.5)
			for i := range 30 {
				xi := x.RawRowView(i)
				for j := range 30 {
					xj := x.RawRowView(j)
					if a, b := tc.k.Eval(xi, xj), tc.k.Eval(xj, xi); math.Abs(a-b) > 1e-15*math.Max(1, math.Abs(a)) {
						t.Fatalf("k(x%d, x%d) = %v != k(x%d, x%d) = %v", i, j, a, j, i, b)
					}
				}
				if a, b := Diag(tc.k, xi), tc.k.Eval(xi, xi); math.Abs(a-b) > 1e-14*math.Max(1, math.Abs(b)) {
					t.Fatalf("Diag(x%d) = %v, Eval(x%d, x%d) = %v", i, a, i, i, b)
				}
			}
		})
	}
}

func minEigen(t *testing.T, k *mat.Dense) (minEig, trace float64) {
	t.Helper()
	n, _ := k.Dims()
	sym := mat.NewSymDense(n, nil)
	for i := range n {
		trace += k.At(i, i)
		for j := i; j < n; j++ {
			sym.SetSym(i, j, k.At(i, j))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, false) {
		t.Fatal("EigenSym failed")
	}
	vals := eig.Values(nil)
	return vals[0], trace
}

func TestKernelMatricesArePSD(t *testing.T) {
	t.Parallel()
	for _, tc := range allKernels() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for seed, d := range []int{1, 3, 6} {
				rng := rand.New(rand.NewPCG(uint64(seed), 7))
				// Include a near-duplicate to stress the smallest eigenvalues.
				x := randPoints(rng, 60, d, -1, 1)
				x.SetRow(59, x.RawRowView(0))
				x.Set(59, 0, x.At(59, 0)+1e-9)
				k := mat.NewDense(60, 60, nil)
				Matrix(k, tc.k, x, x)
				lmin, tr := minEigen(t, k)
				if lmin < -1e-10*tr {
					t.Errorf("d = %d: smallest eigenvalue %v < -1e-10 * trace (%v)", d, lmin, tr)
				}
			}
		})
	}
}

func TestBatchHelpersAgreeWithEval(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	x := randPoints(rng, 17, 3, -2, 2)
	y := randPoints(rng, 11, 3, -2, 2)
	// A view with a stride larger than its width.
	big := randPoints(rng, 9, 5, -2, 2)
	view := big.Slice(1, 8, 1, 4).(*mat.Dense)
	for _, tc := range allKernels() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, pair := range []struct {
				name string
				a, b *mat.Dense
			}{{"XX", x, x}, {"XY", x, y}, {"YX", y, x}, {"view", view, x}, {"viewview", view, view}} {
				ra, _ := pair.a.Dims()
				rb, _ := pair.b.Dims()
				km := mat.NewDense(ra, rb, nil)
				Matrix(km, tc.k, pair.a, pair.b)
				col := make([]float64, ra)
				for j := range rb {
					bj := mat.Row(nil, j, pair.b)
					Column(col, tc.k, pair.a, bj)
					for i := range ra {
						ai := mat.Row(nil, i, pair.a)
						want := tc.k.Eval(ai, bj)
						if got := km.At(i, j); got != want {
							t.Fatalf("%s: Matrix[%d][%d] = %v, Eval = %v", pair.name, i, j, got, want)
						}
						if col[i] != want {
							t.Fatalf("%s: Column[%d] = %v, Eval = %v", pair.name, i, col[i], want)
						}
					}
				}
				diag := make([]float64, ra)
				Diagonal(diag, tc.k, pair.a)
				for i := range ra {
					ai := mat.Row(nil, i, pair.a)
					if want := tc.k.Eval(ai, ai); math.Abs(diag[i]-want) > 1e-14*math.Max(1, math.Abs(want)) {
						t.Fatalf("%s: Diagonal[%d] = %v, Eval = %v", pair.name, i, diag[i], want)
					}
				}
			}
		})
	}
}

// valueRaw is a RawMatrixer of a non-comparable value type.
type valueRaw struct{ g blas64.General }

func (v valueRaw) RawMatrix() blas64.General { return v.g }

func TestMatrixSameInput(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 6))
	x := randPoints(rng, 8, 3, -1, 1)
	want := mat.NewDense(8, 8, nil)
	Matrix(want, RBF{LengthScale: 1}, x, mat.DenseCopyOf(x))
	for _, tc := range []struct {
		name string
		a, b mat.RawMatrixer
	}{
		{"same pointer", x, x},
		{"value type, same data", valueRaw{x.RawMatrix()}, valueRaw{x.RawMatrix()}},
		{"distinct headers, same data", x.Slice(0, 8, 0, 3).(*mat.Dense), x},
	} {
		got := mat.NewDense(8, 8, nil)
		Matrix(got, RBF{LengthScale: 1}, tc.a, tc.b)
		if !mat.Equal(got, want) {
			t.Errorf("%s: Matrix differs from the one of a copy", tc.name)
		}
	}
	// Overlapping but different rows are not mirrored.
	y := x.Slice(1, 8, 0, 3).(*mat.Dense)
	z := x.Slice(0, 7, 0, 3).(*mat.Dense)
	got := mat.NewDense(7, 7, nil)
	Matrix(got, RBF{LengthScale: 1}, y, z)
	for i := range 7 {
		for j := range 7 {
			if w := (RBF{LengthScale: 1}).Eval(y.RawRowView(i), z.RawRowView(j)); got.At(i, j) != w {
				t.Fatalf("overlapping views: K[%d][%d] = %v, want %v", i, j, got.At(i, j), w)
			}
		}
	}
}

func TestBatchHelpersPanicOnShape(t *testing.T) {
	t.Parallel()
	x := mat.NewDense(3, 2, nil)
	y := mat.NewDense(4, 3, nil)
	k := RBF{LengthScale: 1}
	tests := []panicCase{
		{"Matrix cols", func() { Matrix(mat.NewDense(3, 4, nil), k, x, y) }},
		{"Matrix dst", func() { Matrix(mat.NewDense(3, 2, nil), k, x, x) }},
		{"Column dst", func() { Column(make([]float64, 2), k, x, []float64{0, 0}) }},
		{"Column y", func() { Column(make([]float64, 3), k, x, []float64{0, 0, 0}) }},
		{"Diagonal dst", func() { Diagonal(make([]float64, 4), k, x) }},
	}
	expectPanics(t, tests)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		k    Kernel
		ok   bool
	}{
		{"nil", nil, false},
		{"RBF ok", RBF{LengthScale: 1}, true},
		{"RBF zero length", RBF{}, false},
		{"RBF negative length", RBF{LengthScale: -1}, false},
		{"RBF NaN length", RBF{LengthScale: nan}, false},
		{"RBF Inf length", RBF{LengthScale: inf}, false},
		{"RBF negative variance", RBF{LengthScale: 1, Variance: -2}, false},
		{"RBF Inf variance", RBF{LengthScale: 1, Variance: inf}, false},
		{"Matern ok", Matern{Nu: 1.5, LengthScale: 1}, true},
		{"Matern nu 1", Matern{Nu: 1, LengthScale: 1}, false},
		{"Matern nu 0", Matern{LengthScale: 1}, false},
		{"Matern bad length", Matern{Nu: 2.5}, false},
		{"Matern bad variance", Matern{Nu: 0.5, LengthScale: 1, Variance: nan}, false},
		{"Linear ok", Linear{}, true},
		{"Linear negative variance", Linear{Variance: -1}, false},
		{"Linear negative offset", Linear{Offset: -1}, false},
		{"Linear NaN offset", Linear{Offset: nan}, false},
		{"Linear Inf offset", Linear{Offset: inf}, false},
		{"Polynomial ok", Polynomial{Degree: 2}, true},
		{"Polynomial degree 0", Polynomial{}, false},
		{"Polynomial negative scale", Polynomial{Degree: 2, Scale: -1}, false},
		{"Polynomial negative offset", Polynomial{Degree: 2, Offset: -0.5}, false},
		{"Taylor ok", TaylorKernel{Degree: 3, Sigma: 1}, true},
		{"Taylor degree 0 ok", TaylorKernel{Sigma: 2}, true},
		{"Taylor negative degree", TaylorKernel{Degree: -1, Sigma: 1}, false},
		{"Taylor zero sigma", TaylorKernel{Degree: 2}, false},
		{"Taylor negative variance", TaylorKernel{Degree: 2, Sigma: 1, Variance: -1}, false},
		{"no validator", plainKernel{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Validate(tc.k)
			if tc.ok && err != nil {
				t.Errorf("Validate = %v, want nil", err)
			}
			if !tc.ok && err == nil {
				t.Error("Validate = nil, want an error")
			}
		})
	}
}

// plainKernel is a user kernel without Validate or Diag.
type plainKernel struct{}

func (plainKernel) Eval(x, y []float64) float64 { return 1 + dot(x, y) }

func TestMaternLimits(t *testing.T) {
	t.Parallel()
	const l = 1.3
	rbf := RBF{LengthScale: l}
	m05 := Matern{Nu: 0.5, LengthScale: l}
	m15 := Matern{Nu: 1.5, LengthScale: l}
	m25 := Matern{Nu: 2.5, LengthScale: l}
	origin := []float64{0, 0}
	at := func(k Kernel, r float64) float64 { return k.Eval(origin, []float64{r * 0.6, r * 0.8}) }

	t.Run("nu=0.5 is the exponential kernel", func(t *testing.T) {
		t.Parallel()
		for _, r := range []float64{0, 0.1, 1, 3, 10} {
			if got, want := at(m05, r), math.Exp(-r/l); math.Abs(got-want) > 1e-15 {
				t.Errorf("r = %v: %v, want %v", r, got, want)
			}
		}
	})
	t.Run("behaviour at the origin", func(t *testing.T) {
		t.Parallel()
		// 1 - k(r) ~ c r^p: the exponential kernel has a cusp (p = 1,
		// c = 1/l); nu = 3/2, 5/2 and the RBF are smooth (p = 2, c = 3/2,
		// 5/6 and 1/2 over l^2).
		const r = 1e-4
		tests := []struct {
			name string
			k    Kernel
			p, c float64
		}{
			{"0.5", m05, 1, 1 / l},
			{"1.5", m15, 2, 1.5 / (l * l)},
			{"2.5", m25, 2, 5.0 / 6 / (l * l)},
			{"rbf", rbf, 2, 0.5 / (l * l)},
		}
		for _, tc := range tests {
			got := (1 - at(tc.k, r)) / math.Pow(r, tc.p)
			if math.Abs(got-tc.c) > 1e-3*tc.c {
				t.Errorf("nu = %s: (1-k(r))/r^%v = %v, want %v", tc.name, tc.p, got, tc.c)
			}
		}
	})
	t.Run("monotone and bounded", func(t *testing.T) {
		t.Parallel()
		for _, k := range []Kernel{m05, m15, m25} {
			prev := at(k, 0)
			if prev != 1 {
				t.Fatalf("%v: k(0) = %v", k, prev)
			}
			for r := 0.05; r < 20; r += 0.05 {
				v := at(k, r)
				if !(v < prev) || v <= 0 {
					t.Fatalf("%v: k(%v) = %v not in (0, k(r-h) = %v)", k, r, v, prev)
				}
				prev = v
			}
		}
	})
	t.Run("increasing nu approaches the RBF", func(t *testing.T) {
		t.Parallel()
		for _, r := range []float64{0.2, 0.5, 1} {
			g := at(rbf, r)
			e05, e15, e25 := math.Abs(at(m05, r)-g), math.Abs(at(m15, r)-g), math.Abs(at(m25, r)-g)
			if !(e25 < e15 && e15 < e05) {
				t.Errorf("r = %v: |k_nu - k_rbf| = %v, %v, %v for nu = 0.5, 1.5, 2.5, want decreasing", r, e05, e15, e25)
			}
		}
	})
	t.Run("invalid nu panics in Eval", func(t *testing.T) {
		t.Parallel()
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		Matern{Nu: 2, LengthScale: 1}.Eval(origin, origin)
	})
}

func TestSpectralSamplers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		k    SpectralSampler
	}{
		{"RBF", RBF{LengthScale: 0.7, Variance: 2}},
		{"Matern0.5", Matern{Nu: 0.5, LengthScale: 1.3}},
		{"Matern1.5", Matern{Nu: 1.5, LengthScale: 0.9, Variance: 3}},
		{"Matern2.5", Matern{Nu: 2.5, LengthScale: 1.1}},
	}
	deltas := [][]float64{{0.1, 0, 0}, {0.3, -0.4, 0.2}, {1, 0.5, -0.5}, {-0.8, 1.2, 0.6}, {2, 0, 1}}
	const n = 40000
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(11, uint64(i)))
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
				t.Errorf("Scale = %v, k(0, 0) = %v", s, want)
			}
			tol := 4 / math.Sqrt(n)
			for j, dl := range deltas {
				got := sums[j] / n
				want := tc.k.Eval(zero, dl) / tc.k.Scale()
				if math.Abs(got-want) > tol {
					t.Errorf("delta %v: mean cos = %v, k/k(0) = %v (tolerance %v)", dl, got, want, tol)
				}
			}
		})
	}
}

// panicCase is a call that must panic (a programmer error: wrong
// dimensions or lengths).
type panicCase struct {
	name string
	f    func()
}

// expectPanics runs every case in a subtest and fails those that do not
// panic.
func expectPanics(t *testing.T, cases []panicCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.f()
		})
	}
}

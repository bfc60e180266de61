package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// binom returns binom(n, k) for small arguments.
func binom(n, k int) int {
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}

// taylorPhi is the paper's redundant map (seed 000, appendix code
// taylor_phi): all ordered k-tuples of coordinates for k = 0..M, the degree-k
// block divided by sigma^k sqrt(k!), times the envelope. It has
// sum_k d^k columns and induces the same kernel as the compact map.
func taylorPhi(x []float64, m int, sigma float64) []float64 {
	res := []float64{1}
	mm := []float64{1}
	for k := 1; k <= m; k++ {
		next := make([]float64, 0, len(mm)*len(x))
		for _, a := range mm { // flatten(outer(mm, x))
			for _, b := range x {
				next = append(next, a*b)
			}
		}
		mm = next
		q := math.Pow(sigma, float64(k)) * math.Sqrt(math.Gamma(float64(k+1)))
		for _, v := range mm {
			res = append(res, v/q)
		}
	}
	env := math.Exp(-dot(x, x) / (2 * sigma * sigma))
	for i := range res {
		res[i] *= env
	}
	return res
}

// randBall draws a point uniformly from the ball of the given radius
// (direction from normals, radius u^(1/d)), which unlike rejection from the
// cube works in high dimension.
func randBall(rng *rand.Rand, d int, radius float64) []float64 {
	x := make([]float64, d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	s := radius * math.Pow(rng.Float64(), 1/float64(d)) / math.Sqrt(dot(x, x))
	for i := range x {
		x[i] *= s
	}
	return x
}

func TestTaylorFeatureCountAndOrder(t *testing.T) {
	t.Parallel()
	for d := 1; d <= 6; d++ {
		for m := 0; m <= 6; m++ {
			t.Run(fmt.Sprintf("d=%d/M=%d", d, m), func(t *testing.T) {
				t.Parallel()
				tg, err := NewTaylorGaussian(d, m, 1)
				if err != nil {
					t.Fatal(err)
				}
				want := binom(m+d, d)
				if tg.Dim() != want || TaylorFeatureCount(d, m).Int64() != int64(want) {
					t.Fatalf("Dim = %d, TaylorFeatureCount = %v, want binom(%d, %d) = %d",
						tg.Dim(), TaylorFeatureCount(d, m), m+d, d, want)
				}
				if tg.InputDim() != d || tg.Degree() != m || tg.Sigma() != 1 || tg.Variance() != 1 {
					t.Fatalf("accessors: %d %d %v %v", tg.InputDim(), tg.Degree(), tg.Sigma(), tg.Variance())
				}
				// Every multi-index with |k| <= M appears once, degree by degree.
				seen := map[string]bool{}
				k := make([]int, d)
				prevDeg := 0
				for j := range tg.Dim() {
					tg.MultiIndex(j, k)
					deg := 0
					for _, e := range k {
						if e < 0 {
							t.Fatalf("feature %d: multi-index %v", j, k)
						}
						deg += e
					}
					if deg > m || deg < prevDeg {
						t.Fatalf("feature %d: multi-index %v of degree %d after degree %d (M = %d)", j, k, deg, prevDeg, m)
					}
					prevDeg = deg
					key := fmt.Sprint(k)
					if seen[key] {
						t.Fatalf("feature %d: multi-index %v repeated", j, k)
					}
					seen[key] = true
				}
			})
		}
	}
	// The table of seed000.md.
	for _, c := range []struct{ d, m, want int }{
		{5, 2, 21}, {5, 4, 126}, {8, 3, 165}, {9, 4, 715}, {18, 2, 190}, {18, 4, 7315}, {22, 3, 2300}, {22, 4, 14950},
	} {
		if got := TaylorFeatureCount(c.d, c.m).Int64(); got != int64(c.want) {
			t.Errorf("TaylorFeatureCount(%d, %d) = %d, want %d", c.d, c.m, got, c.want)
		}
	}
	if TaylorFeatureCount(-1, 2) != nil || TaylorFeatureCount(2, -1) != nil || TaylorFeatureCount(math.MaxInt, 1) != nil {
		t.Error("TaylorFeatureCount accepts negative arguments")
	}
}

func TestTaylorFeaturesMatchEq6(t *testing.T) {
	t.Parallel()
	// g_k(x) = prod_i psi_{k_i}(x_i), psi_t(z) = z^t/(sigma^t sqrt(t!)) exp(-z^2/(2 sigma^2)).
	psi := func(tt int, z, sigma float64) float64 {
		return math.Pow(z/sigma, float64(tt)) / math.Sqrt(math.Gamma(float64(tt+1))) * math.Exp(-z*z/(2*sigma*sigma))
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, c := range []struct {
		d, m  int
		sigma float64
	}{{1, 8, 0.7}, {3, 5, 1.3}, {4, 4, 2}, {70, 2, 3}} {
		tg, err := NewTaylorGaussian(c.d, c.m, c.sigma)
		if err != nil {
			t.Fatal(err)
		}
		phi := make([]float64, tg.Dim())
		k := make([]int, c.d)
		for range 5 {
			x := randBall(rng, c.d, 1.5)
			tg.Map(phi, x)
			for j, got := range phi {
				tg.MultiIndex(j, k)
				want := 1.0
				for i, e := range k {
					want *= psi(e, x[i], c.sigma)
				}
				if math.Abs(got-want) > 1e-13*math.Abs(want)+1e-300 {
					t.Fatalf("d=%d M=%d: g_%v(x) = %v, Eq. 6 gives %v", c.d, c.m, k, got, want)
				}
			}
		}
	}
}

func TestTaylorInnerProductIsTaylorKernel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d, m            int
		sigma, variance float64
		radius          float64
	}{
		{1, 0, 1, 1, 1},
		{1, 10, 0.5, 1, 1},
		{2, 3, 1, 2.5, 1.5},
		{3, 6, 1.3, 1, 1.7},
		{5, 4, 0.8, 1, 1},
		{8, 3, 2, 0.3, 3},
		{18, 2, 1.5, 1, 2},
		{45, 3, 2, 1, 2}, // d*M = 135: Map without the stack table
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("d=%d/M=%d", tc.d, tc.m), func(t *testing.T) {
			t.Parallel()
			tg, err := NewTaylorGaussian(tc.d, tc.m, tc.sigma)
			if err != nil {
				t.Fatal(err)
			}
			if tc.variance != 1 {
				if tg, err = tg.WithVariance(tc.variance); err != nil {
					t.Fatal(err)
				}
			}
			kern := tg.Kernel()
			want := TaylorKernel{Degree: tc.m, Sigma: tc.sigma, Variance: tc.variance}
			if kern != want {
				t.Fatalf("Kernel() = %+v, want %+v", kern, want)
			}
			rng := rand.New(rand.NewPCG(uint64(tc.d), uint64(tc.m)))
			px, py := make([]float64, tg.Dim()), make([]float64, tg.Dim())
			for range 50 {
				x, y := randBall(rng, tc.d, tc.radius), randBall(rng, tc.d, tc.radius)
				tg.Map(px, x)
				tg.Map(py, y)
				if got, want := dot(px, py), kern.Eval(x, y); math.Abs(got-want) > 1e-12 {
					t.Fatalf("phi(x).phi(y) = %.17g, TaylorKernel = %.17g", got, want)
				}
				if got, want := dot(px, px), kern.Diag(x); math.Abs(got-want) > 1e-12 {
					t.Fatalf("phi(x).phi(x) = %.17g, TaylorKernel.Diag = %.17g", got, want)
				}
			}
		})
	}
}

func TestTaylorMatchesPaperRedundantMap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	for d := 1; d <= 4; d++ {
		for m := 0; m <= 5; m++ {
			sigma := 0.9 + 0.2*float64(d)
			tg, err := NewTaylorGaussian(d, m, sigma)
			if err != nil {
				t.Fatal(err)
			}
			size := 0
			for k := 0; k <= m; k++ {
				size += int(math.Pow(float64(d), float64(k)))
			}
			px, py := make([]float64, tg.Dim()), make([]float64, tg.Dim())
			for range 20 {
				x, y := randBall(rng, d, 1.2), randBall(rng, d, 1.2)
				rx, ry := taylorPhi(x, m, sigma), taylorPhi(y, m, sigma)
				if len(rx) != size {
					t.Fatalf("reference map has %d columns, want %d", len(rx), size)
				}
				tg.Map(px, x)
				tg.Map(py, y)
				if a, b := dot(px, py), dot(rx, ry); math.Abs(a-b) > 1e-9 {
					t.Fatalf("d=%d M=%d: compact %.17g, paper's map %.17g", d, m, a, b)
				}
			}
		}
	}
}

func TestTaylorErrorAgainstLemma13(t *testing.T) {
	t.Parallel()
	// Random pairs in [-1,1]^3 with sigma = 1.3 and R = sqrt(3), as in
	// seed000.md section 9; the maximal error falls with M and stays below
	// (R/sigma)^(2M+2)/(M+1)!.
	const d, sigma = 3, 1.3
	radius := math.Sqrt(d)
	rbf := RBF{LengthScale: sigma}
	xs, ys := fixedPairs(13, 2000, d)
	// The worst case of the cube: x = y at a corner, z = x.y/sigma^2 = R^2/sigma^2.
	corner, opposite := []float64{1, 1, 1}, []float64{-1, -1, -1}
	xs = append(xs, corner, corner, opposite)
	ys = append(ys, corner, opposite, []float64{-1, 1, -1})
	prev := math.Inf(1)
	for m := 1; m <= 10; m++ {
		tg, err := NewTaylorGaussian(d, m, sigma)
		if err != nil {
			t.Fatal(err)
		}
		px, py := make([]float64, tg.Dim()), make([]float64, tg.Dim())
		var maxErr float64
		for p := range xs {
			tg.Map(px, xs[p])
			tg.Map(py, ys[p])
			maxErr = math.Max(maxErr, math.Abs(dot(px, py)-rbf.Eval(xs[p], ys[p])))
		}
		bound := TaylorErrorBound(m, radius, sigma)
		t.Logf("M = %2d: r = %4d, max |k - k_M| = %.2e, bound %.2e", m, tg.Dim(), maxErr, bound)
		if maxErr > bound {
			t.Errorf("M = %d: max error %v exceeds the Lemma 13 bound %v", m, maxErr, bound)
		}
		if maxErr >= prev {
			t.Errorf("M = %d: max error %v did not decrease from %v", m, maxErr, prev)
		}
		prev = maxErr
	}
	// At the corner x = y the error is e^-z sum_{j>M} z^j/j!, z = 3/1.69.
	z := 3 / (sigma * sigma)
	want := 1 - math.Exp(-z)*expSeries(z, 10)
	if math.Abs(prev-want) > 1e-12 {
		t.Errorf("M = 10: max error %v, want the corner value %v", prev, want)
	}
}

func TestTaylorErrorBound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		m             int
		radius, sigma float64
		want          float64
	}{
		{0, 1, 1, 1},               // 1/1!
		{1, 1, 1, 0.5},             // 1/2!
		{2, 2, 1, 64.0 / 6},        // 2^6/3!
		{3, 0.5, 0.25, 256.0 / 24}, // 2^8/4!
		{4, 0, 1, 0},
		// seed000.md section 9 table (R = sqrt 3, sigma = 1.3).
		{2, math.Sqrt(3), 1.3, 0.93},
		{10, math.Sqrt(3), 1.3, 1.4e-5},
	}
	for _, tc := range tests {
		got := TaylorErrorBound(tc.m, tc.radius, tc.sigma)
		tol := 1e-13 * tc.want
		if tc.m >= 2 && tc.radius == math.Sqrt(3) {
			tol = 0.05 * tc.want // the table has two digits
		}
		if math.Abs(got-tc.want) > tol {
			t.Errorf("TaylorErrorBound(%d, %v, %v) = %v, want %v", tc.m, tc.radius, tc.sigma, got, tc.want)
		}
	}
	for _, bad := range [][3]float64{{-1, 1, 1}, {2, -1, 1}, {2, 1, 0}, {2, math.NaN(), 1}} {
		if v := TaylorErrorBound(int(bad[0]), bad[1], bad[2]); !math.IsNaN(v) {
			t.Errorf("TaylorErrorBound(%v) = %v, want NaN", bad, v)
		}
	}
	// Large degrees do not overflow.
	if v := TaylorErrorBound(200, 10, 1); math.IsInf(v, 0) || math.IsNaN(v) || v <= 0 {
		t.Errorf("TaylorErrorBound(200, 10, 1) = %v", v)
	}

	if m := TaylorDegree(math.Sqrt(3), 1.3, 1e-4); m != 9 ||
		TaylorErrorBound(m, math.Sqrt(3), 1.3) > 1e-4 || TaylorErrorBound(m-1, math.Sqrt(3), 1.3) <= 1e-4 {
		t.Errorf("TaylorDegree(sqrt 3, 1.3, 1e-4) = %d", m)
	}
	if m := TaylorDegree(0, 1, 1e-9); m != 0 {
		t.Errorf("TaylorDegree(0, 1, 1e-9) = %d, want 0", m)
	}
	if m := TaylorDegree(1, 1, 0); m != -1 {
		t.Errorf("TaylorDegree(1, 1, 0) = %d, want -1", m)
	}
	// Theorem 4: ceil(max(8 R^2/sigma^2, 2 log(n/min(lambda, 1)))).
	if m := TaylorTheoryDegree(1, 1, 1000, 1); m != 14 { // 2 log 1000 = 13.8
		t.Errorf("TaylorTheoryDegree(1, 1, 1000, 1) = %d, want 14", m)
	}
	if m := TaylorTheoryDegree(2, 1, 10, 5); m != 32 { // 8*4 = 32
		t.Errorf("TaylorTheoryDegree(2, 1, 10, 5) = %d, want 32", m)
	}
	if m := TaylorTheoryDegree(1, 1, 0, 1); m != -1 {
		t.Errorf("TaylorTheoryDegree with n = 0 = %d, want -1", m)
	}
}

func TestNewTaylorGaussianErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		d, m    int
		sigma   float64
		wantErr string
	}{
		{"zero dimension", 0, 2, 1, "input dimension"},
		{"negative degree", 2, -1, 1, "degree"},
		{"zero sigma", 2, 2, 0, "sigma"},
		{"NaN sigma", 2, 2, math.NaN(), "sigma"},
		{"Inf sigma", 2, 2, math.Inf(1), "sigma"},
		{"too many features", 30, 10, 1, "847660528"}, // binom(40, 10)
		{"overflowing count", 1000, 1000, 1, "features"},
		{"huge count", 1 << 40, 1 << 40, 1, "about 10^"},
		{"huge dimension", 1 << 60, 1, 1, "cap"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg, err := NewTaylorGaussian(tc.d, tc.m, tc.sigma)
			if err == nil || tg != nil {
				t.Fatalf("NewTaylorGaussian = %v, %v, want an error", tg, err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not mention %q", err, tc.wantErr)
			}
		})
	}
	tg, err := NewTaylorGaussian(2, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := tg.WithVariance(v); err == nil {
			t.Errorf("WithVariance(%v) did not fail", v)
		}
	}
}

func TestTaylorMapPanics(t *testing.T) {
	t.Parallel()
	tg, err := NewTaylorGaussian(3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []panicCase{
		{"x", func() { tg.Map(make([]float64, tg.Dim()), make([]float64, 2)) }},
		{"dst", func() { tg.Map(make([]float64, tg.Dim()+1), make([]float64, 3)) }},
		{"MultiIndex", func() { tg.MultiIndex(0, make([]int, 2)) }},
	}
	expectPanics(t, tests)
}

func TestTaylorWithVarianceSharesTables(t *testing.T) {
	t.Parallel()
	tg, err := NewTaylorGaussian(3, 3, 1.1)
	if err != nil {
		t.Fatal(err)
	}
	tv, err := tg.WithVariance(4)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Variance() != 1 || tv.Variance() != 4 {
		t.Fatalf("variances %v, %v", tg.Variance(), tv.Variance())
	}
	x := []float64{0.2, -0.5, 0.7}
	a, b := make([]float64, tg.Dim()), make([]float64, tv.Dim())
	tg.Map(a, x)
	tv.Map(b, x)
	for j := range a {
		if math.Abs(b[j]-2*a[j]) > 1e-15 {
			t.Fatalf("feature %d: %v != 2 * %v", j, b[j], a[j])
		}
	}
}

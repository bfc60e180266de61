package chol

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomSPD returns a random n x n SPD matrix (row-major) built as B B^T + I.
func randomSPD(rng *rand.Rand, n int) []float64 {
	b := mat.NewDense(n, n+2, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n+2; j++ {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	var a mat.Dense
	a.Mul(b, b.T())
	for i := 0; i < n; i++ {
		a.Set(i, i, a.At(i, i)+1)
	}
	return a.RawMatrix().Data
}

// reconstruct returns L L^T for the factor.
func reconstruct(f *Factor) *mat.Dense {
	n := f.Size()
	l := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			l.Set(i, j, f.At(i, j))
		}
	}
	var a mat.Dense
	a.Mul(l, l.T())
	return &a
}

func maxDiff(a *mat.Dense, b []float64) float64 {
	r, c := a.Dims()
	var m float64
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m = math.Max(m, math.Abs(a.At(i, j)-b[i*c+j]))
		}
	}
	return m
}

func TestAppendEqualsFactorize(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 5, 40} {
		a := randomSPD(rng, n)
		var inc, full Factor
		for k := 0; k < n; k++ {
			col := make([]float64, k)
			for j := 0; j < k; j++ {
				col[j] = a[k*n+j]
			}
			inc.Append(col, a[k*n+k])
		}
		if err := full.Factorize(a, n, n); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				if d := math.Abs(inc.At(i, j) - full.At(i, j)); d > 1e-10*math.Abs(full.At(i, i)) {
					t.Fatalf("n=%d: L[%d][%d] incremental %v full %v", n, i, j, inc.At(i, j), full.At(i, j))
				}
			}
		}
		if d := maxDiff(reconstruct(&full), a); d > 1e-10*float64(n) {
			t.Errorf("n=%d: ||L L^T - A|| = %g", n, d)
		}
		// Solve against a dense solve.
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		x := append([]float64(nil), b...)
		inc.Solve(x)
		var want mat.VecDense
		if err := want.SolveVec(mat.NewDense(n, n, a), mat.NewVecDense(n, b)); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if math.Abs(x[i]-want.AtVec(i)) > 1e-9*(1+math.Abs(want.AtVec(i))) {
				t.Fatalf("n=%d: solve[%d] = %v want %v", n, i, x[i], want.AtVec(i))
			}
		}
		var lu mat.LU
		lu.Factorize(mat.NewDense(n, n, a))
		ld, _ := lu.LogDet()
		if d := math.Abs(inc.LogDet() - ld); d > 1e-9*math.Abs(ld)+1e-9 {
			t.Errorf("n=%d: logdet %v want %v", n, inc.LogDet(), ld)
		}
	}
}

// RankOneUpdate against the updated matrix refactored, on orders that
// exercise its blocks of four rows and the rows after them.
func TestRankOneUpdate(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 4, 5, 7, 30} {
		rankOneCase(t, n)
	}
}

func rankOneCase(t *testing.T, n int) {
	rng := rand.New(rand.NewPCG(3, uint64(n)))
	a := randomSPD(rng, n)
	var f Factor
	if err := f.Factorize(a, n, n); err != nil {
		t.Fatal(err)
	}
	for rep := 0; rep < 5; rep++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a[i*n+j] += x[i] * x[j]
			}
		}
		f.RankOneUpdate(x)
	}
	if d := maxDiff(reconstruct(&f), a); d > 1e-9 {
		t.Errorf("n=%d: ||L L^T - A|| = %g after rank-one updates", n, d)
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	n := 12
	for _, j := range []int{0, 4, n - 1} {
		a := randomSPD(rng, n)
		var f Factor
		if err := f.Factorize(a, n, n); err != nil {
			t.Fatal(err)
		}
		// A vector b and its embedding z = L^{-1} b.
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		z := append([]float64(nil), b...)
		f.SolveL(z)
		rots := f.Remove(j, nil)
		// Reference: the matrix without row/column j.
		m := n - 1
		ar := make([]float64, 0, m*m)
		br := make([]float64, 0, m)
		for r := 0; r < n; r++ {
			if r == j {
				continue
			}
			br = append(br, b[r])
			for c := 0; c < n; c++ {
				if c != j {
					ar = append(ar, a[r*n+c])
				}
			}
		}
		if d := maxDiff(reconstruct(&f), ar); d > 1e-10 {
			t.Fatalf("j=%d: ||L'L'^T - A_{-j}|| = %g", j, d)
		}
		for i := 0; i < m; i++ {
			if f.At(i, i) <= 0 {
				t.Fatalf("j=%d: non-positive diagonal %v at %d", j, f.At(i, i), i)
			}
		}
		for _, r := range rots {
			r.Apply(z)
		}
		want := append([]float64(nil), br...)
		f.SolveL(want)
		for i := 0; i < m; i++ {
			if math.Abs(z[i]-want[i]) > 1e-10 {
				t.Fatalf("j=%d: rotated z[%d] = %v want %v", j, i, z[i], want[i])
			}
		}
	}
}

func TestJitter(t *testing.T) {
	t.Parallel()
	// A duplicate point with no noise: A = [[1,1],[1,1]] is singular.
	var f Factor
	f.Append(nil, 1)
	d := f.Append([]float64{1}, 1)
	if !(d > 0) || math.IsInf(d, 0) {
		t.Fatalf("pivot %v", d)
	}
	if _, c := f.Jitter(); c != 1 {
		t.Fatalf("jitter count %d, want 1", c)
	}
	// Factorize of a singular matrix succeeds with jitter.
	var g Factor
	if err := g.Factorize([]float64{1, 1, 1, 1}, 2, 2); err != nil {
		t.Fatal(err)
	}
	if tot, _ := g.Jitter(); tot <= 0 {
		t.Fatal("no jitter recorded for a singular matrix")
	}
	// An indefinite matrix is an error.
	var h Factor
	if err := h.Factorize([]float64{1, 0, 0, -1}, 2, 2); err == nil {
		t.Fatal("indefinite matrix factorized")
	}
}

// TestSolveLMultiEqualsSolveL: the grouped forward substitution gives
// SolveL's floats bit for bit, for any group size and order.
func TestSolveLMultiEqualsSolveL(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, m := range []int{1, 3, 17, 64, 130} {
		f := multiFactor(m, rng)
		for _, group := range []int{1, 2, 5, 8} {
			xs := make([][]float64, group)
			want := make([][]float64, group)
			for r := range xs {
				xs[r] = make([]float64, m)
				for j := range xs[r] {
					xs[r][j] = rng.NormFloat64()
				}
				want[r] = slices.Clone(xs[r])
				f.SolveL(want[r])
			}
			f.SolveLMulti(xs)
			for r := range xs {
				for j := range xs[r] {
					if math.Float64bits(xs[r][j]) != math.Float64bits(want[r][j]) {
						t.Fatalf("m %d, group %d: vector %d coordinate %d is %v, SolveL gives %v", m, group, r, j, xs[r][j], want[r][j])
					}
				}
			}
		}
	}
}

// multiFactor is the factor of B B^T + m I for a random m x m B.
func multiFactor(m int, rng *rand.Rand) *Factor {
	b := make([]float64, m*m)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	a := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			var s float64
			for k := 0; k < m; k++ {
				s += b[i*m+k] * b[j*m+k]
			}
			a[i*m+j] = s
		}
		a[i*m+i] += float64(m)
	}
	var f Factor
	if err := f.Factorize(a, m, m); err != nil {
		panic(err)
	}
	return &f
}

// BenchmarkSolveLMulti: 700 solves of order 575 (the candidates an ask
// scores late in a long study), one at a time and in groups.
func BenchmarkSolveLMulti(b *testing.B) {
	const m, nb = 575, 700
	rng := rand.New(rand.NewPCG(3, 4))
	f := multiFactor(m, rng)
	xs := make([][]float64, nb)
	for i := range xs {
		xs[i] = make([]float64, m)
		for j := range xs[i] {
			xs[i][j] = rng.NormFloat64()
		}
	}
	work := make([][]float64, nb)
	for i := range work {
		work[i] = make([]float64, m)
	}
	for _, group := range []int{1, 8} {
		b.Run(fmt.Sprintf("group=%d", group), func(b *testing.B) {
			for it := 0; it < b.N; it++ {
				for i := range xs {
					copy(work[i], xs[i])
				}
				for lo := 0; lo < nb; lo += group {
					if group == 1 {
						f.SolveL(work[lo])
						continue
					}
					f.SolveLMulti(work[lo:min(lo+group, nb)])
				}
			}
		})
	}
}

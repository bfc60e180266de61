package online

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/bkb-go/bkb/kernel"
	"gonum.org/v1/gonum/mat"
)

// full enables the full-dataset tests (minutes): go test ./online -full.
var full = flag.Bool("full", false, "run the full-dataset checks against the papers' tables")

// synth returns n points in [-1, 1]^d with smooth targets in about [0, 1]
// plus noise, from seed.
func synth(n, d int, noise float64, seed uint64) *Dataset {
	rng := rand.New(rand.NewPCG(seed, 17))
	ds := &Dataset{Name: "synth", N: n, D: d, Task: Regression, X: make([]float64, n*d), Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		x := ds.X[i*d : (i+1)*d]
		var s float64
		for j := range x {
			x[j] = 2*rng.Float64() - 1
			s += x[j] * float64(j+1)
		}
		ds.Y[i] = 0.5 + 0.3*math.Sin(2*s/float64(d)) + 0.2*x[0]*x[d-1] + noise*rng.NormFloat64()
	}
	return ds
}

// synthClass returns labels sign(f(x) + noise) in {-1, +1}.
func synthClass(n, d int, seed uint64) *Dataset {
	ds := synth(n, d, 0.05, seed)
	ds.Task = Classification
	for i, y := range ds.Y {
		ds.Y[i] = sign(y - 0.5)
	}
	return ds
}

// sharedDir returns the shared data directory: ../shared/data of the
// project root (a checkout next to shared/), or of its parent (a git
// worktree one level deeper).
func sharedDir() string {
	for _, d := range []string{filepath.Join("..", "..", "shared", "data"), filepath.Join("..", "..", "..", "shared", "data")} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return filepath.Join("..", "..", "shared", "data")
}

// loadShared returns <sharedDir>/<name>.csv.gz, or skips the test.
func loadShared(t testing.TB, name string) *Dataset {
	t.Helper()
	ds, err := LoadCSV(filepath.Join(sharedDir(), name+".csv.gz"))
	if err != nil {
		t.Skipf("shared dataset %s not available: %v", name, err)
	}
	return ds
}

// solveSym solves A x = b for a symmetric positive-definite A (n x n,
// row-major) with gonum's Cholesky, the from-scratch reference.
func solveSym(t testing.TB, a []float64, n int, b []float64) []float64 {
	t.Helper()
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, a[i*n+j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		t.Fatalf("reference matrix of order %d is not positive definite", n)
	}
	var x mat.VecDense
	if err := ch.SolveVecTo(&x, mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
		t.Fatal(err)
	}
	return x.RawVector().Data
}

func maxAbs(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

func matVec(a [][]float64, x []float64) []float64 {
	y := make([]float64, len(a))
	for i, row := range a {
		y[i] = dot(row, x)
	}
	return y
}

func matMul(a, b [][]float64) [][]float64 {
	c := make([][]float64, len(a))
	for i := range a {
		c[i] = make([]float64, len(b[0]))
		for l, v := range a[i] {
			axpy(v, b[l], c[i])
		}
	}
	return c
}

func transpose(a [][]float64) [][]float64 {
	t := make([][]float64, len(a[0]))
	for j := range t {
		t[j] = make([]float64, len(a))
		for i := range a {
			t[j][i] = a[i][j]
		}
	}
	return t
}

func toDense(a [][]float64) *mat.Dense {
	n := len(a)
	m := mat.NewDense(n, len(a[0]), nil)
	for i := range a {
		m.SetRow(i, a[i])
	}
	return m
}

func invert(t testing.TB, a [][]float64) [][]float64 {
	t.Helper()
	var inv mat.Dense
	if err := inv.Inverse(toDense(a)); err != nil {
		t.Fatalf("reference inverse: %v", err)
	}
	out := make([][]float64, len(a))
	for i := range out {
		out[i] = mat.Row(nil, i, &inv)
	}
	return out
}

func gram(k kernel.Kernel, pts [][]float64) [][]float64 {
	g := make([][]float64, len(pts))
	for i := range g {
		g[i] = make([]float64, len(pts))
		for j := range g[i] {
			g[i][j] = k.Eval(pts[i], pts[j])
		}
	}
	return g
}

// eigenProj returns the rows of Sigma^{-1/2} U^T for K_S = U Sigma U^T, the
// paper's Nystrom feature map of seed 002, Section 4.2.
func eigenProj(t testing.TB, k kernel.Kernel, pts [][]float64) [][]float64 {
	t.Helper()
	n := len(pts)
	g := gram(k, pts)
	sym := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, g[i][j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		t.Fatal("reference eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)
	p := make([][]float64, n)
	for r := 0; r < n; r++ {
		p[r] = make([]float64, n)
		for i := 0; i < n; i++ {
			p[r][i] = u.At(i, r) / math.Sqrt(vals[r])
		}
	}
	return p
}

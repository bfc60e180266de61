package chol

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestRotateRowsEqualsDense checks RotateRows against Q A Q^T formed
// densely (reference: gonum Mul), for the rotation sequences a removal
// produces (K = j..n-2 in order) and for random ones, and that the result
// is a valid factor: lower triangular, positive diagonal, and its leading
// block (Truncate) the factor of the leading block of Q A Q^T.
func TestRotateRowsEqualsDense(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{2, 3, 9, 40} {
		for trial := 0; trial < 4; trial++ {
			a := randomSPD(rng, n)
			var f Factor
			if err := f.Factorize(a, n, n); err != nil {
				t.Fatal(err)
			}
			var rots []Rotation
			if trial%2 == 0 {
				for k := rng.IntN(n - 1); k < n-1; k++ {
					th := rng.Float64() * 2 * math.Pi
					rots = append(rots, Rotation{K: k, C: math.Cos(th), S: math.Sin(th)})
				}
			} else {
				for r := 0; r < 2*n; r++ {
					th := rng.Float64() * 2 * math.Pi
					rots = append(rots, Rotation{K: rng.IntN(n - 1), C: math.Cos(th), S: math.Sin(th)})
				}
			}
			q := mat.NewDense(n, n, nil)
			for i := 0; i < n; i++ {
				q.Set(i, i, 1)
			}
			col := make([]float64, n)
			for j := 0; j < n; j++ { // Q's columns are the rotations applied to e_j
				for i := range col {
					col[i] = 0
				}
				col[j] = 1
				for _, r := range rots {
					r.Apply(col)
				}
				for i := 0; i < n; i++ {
					q.Set(i, j, col[i])
				}
			}
			var want, tmp mat.Dense
			tmp.Mul(q, mat.NewDense(n, n, a))
			want.Mul(&tmp, q.T())
			f.RotateRows(rots)
			got := reconstruct(&f)
			if d := maxDiff(got, want.RawMatrix().Data); d > 1e-10*float64(n) {
				t.Errorf("n=%d trial %d: |L L^T - Q A Q^T| = %g", n, trial, d)
			}
			for i := 0; i < n; i++ {
				if f.At(i, i) <= 0 {
					t.Errorf("n=%d: diagonal %d is %g", n, i, f.At(i, i))
				}
				raw, s := f.Raw()
				for j := i + 1; j < n; j++ {
					if raw[i*s+j] != 0 {
						t.Errorf("n=%d: entry (%d,%d) above the diagonal is %g", n, i, j, raw[i*s+j])
					}
				}
			}
			f.Truncate(n - 1)
			lead := mat.DenseCopyOf(want.Slice(0, n-1, 0, n-1))
			if d := maxDiff(reconstruct(&f), lead.RawMatrix().Data); d > 1e-10*float64(n) {
				t.Errorf("n=%d: truncated factor off by %g", n, d)
			}
		}
	}
}

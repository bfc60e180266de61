// Package chol is a growable lower-triangular Cholesky factor L (L L^T = A)
// with the incremental operations the sketching core needs: appending a
// row and column to A, rank-one updates, and deleting a row and column with
// Givens retriangularization.
//
// gonum's mat.Cholesky supports rank-one updates but not growing or
// shrinking the factored matrix in place, and it stores the upper factor
// behind an interface that allocates on the paths we call every step; the
// exact GP, the DTC posterior and the online learners each extend a factor
// once per observation, so this small type is written by hand on top of
// gonum's BLAS (triangular solves) and LAPACK (full factorizations).
package chol

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// ErrNotPositiveDefinite is returned (wrapped) when a matrix stays
// numerically indefinite after the largest jitter that is tried.
var ErrNotPositiveDefinite = errors.New("matrix is not positive definite")

// Factor is a lower-triangular Cholesky factor L of an n x n symmetric
// positive-definite matrix A, stored row-major with a spare capacity so that
// Append costs O(n) amortised copying plus the caller's O(n^2) solve.
// The zero value is an empty factor ready to use.
type Factor struct {
	n, stride int
	data      []float64
	jitter    float64 // total jitter added to the diagonal of A so far
	jittered  int     // number of diagonal entries that needed jitter
	rot       []float64
}

// Size returns n, the order of the factored matrix.
func (f *Factor) Size() int { return f.n }

// Jitter returns the total amount added to A's diagonal to keep it positive
// definite, and how many times jitter was needed.
func (f *Factor) Jitter() (total float64, count int) { return f.jitter, f.jittered }

// Reset empties the factor, keeping its storage.
func (f *Factor) Reset() {
	f.n = 0
	f.jitter, f.jittered = 0, 0
}

// At returns L[i][j].
func (f *Factor) At(i, j int) float64 {
	if i >= f.n || j >= f.n || i < 0 || j < 0 {
		panic(fmt.Sprintf("chol: index (%d,%d) out of range for order %d", i, j, f.n))
	}
	if j > i {
		return 0
	}
	return f.data[i*f.stride+j]
}

// Row returns row i of L, of length i+1 (its diagonal last). It aliases the
// factor's storage.
func (f *Factor) Row(i int) []float64 { return f.data[i*f.stride : i*f.stride+i+1] }

// Raw returns the storage of L: entry (i, j), j <= i, is data[i*stride+j].
func (f *Factor) Raw() (data []float64, stride int) { return f.data, f.stride }

func (f *Factor) grow(n int) {
	if n <= f.stride {
		return
	}
	s := 2 * f.stride
	if s < 16 {
		s = 16
	}
	for s < n {
		s *= 2
	}
	d := make([]float64, s*s)
	for i := 0; i < f.n; i++ {
		copy(d[i*s:i*s+i+1], f.data[i*f.stride:i*f.stride+i+1])
	}
	f.data, f.stride = d, s
}

// Reserve makes room for a factor of order n without further allocation.
func (f *Factor) Reserve(n int) { f.grow(n) }

// SolveL overwrites x with L^{-1} x. len(x) must be Size().
func (f *Factor) SolveL(x []float64) {
	if f.n == 0 {
		return
	}
	// Row-oriented forward substitution with the AVX2 inner product (a
	// dictionary change does two or three of these per point, O(m^2)
	// each; gonum's Dtrsv is SSE2).
	n, s, L := f.n, f.stride, f.data
	x = x[:n]
	for i := 0; i < n; i++ {
		x[i] = (x[i] - Dot(L[i*s:i*s+i], x[:i])) / L[i*s+i]
	}
}

// SolveLMulti overwrites each x of xs with L^{-1} x: the same floats as
// SolveL(x) (the same rows in the same order, the same inner products),
// with each row of L read once for all of xs while it is in cache. A
// posterior scoring hundreds of candidates solves them in groups of 8:
// 1.9x faster than one at a time at order 575 (BenchmarkSolveLMulti).
// Each len(x) must be at least Size().
func (f *Factor) SolveLMulti(xs [][]float64) {
	n, s, L := f.n, f.stride, f.data
	for i := 0; i < n; i++ {
		row, d := L[i*s:i*s+i], L[i*s+i]
		// Three right-hand sides at a time, then two, then one (Dot3,
		// Dot2: each sum has Dot's bits).
		k := 0
		for ; k+2 < len(xs); k += 3 {
			a, b, c := xs[k], xs[k+1], xs[k+2]
			sa, sb, sc := Dot3(row, a[:i], b[:i], c[:i])
			a[i] = (a[i] - sa) / d
			b[i] = (b[i] - sb) / d
			c[i] = (c[i] - sc) / d
		}
		switch len(xs) - k {
		case 2:
			a, b := xs[k], xs[k+1]
			sa, sb := Dot2(row, a[:i], b[:i])
			a[i] = (a[i] - sa) / d
			b[i] = (b[i] - sb) / d
		case 1:
			x := xs[k]
			x[i] = (x[i] - Dot(row, x[:i])) / d
		}
	}
}

// SolveLT overwrites x with L^{-T} x. len(x) must be Size().
func (f *Factor) SolveLT(x []float64) {
	if f.n == 0 {
		return
	}
	// Back substitution by rows of L (contiguous): x_i is final once the
	// rows below have been subtracted, then row i is subtracted from the
	// rest.
	n, s, L := f.n, f.stride, f.data
	x = x[:n]
	for i := n - 1; i >= 0; i-- {
		x[i] /= L[i*s+i]
		Axpy(-x[i], L[i*s:i*s+i], x[:i])
	}
}

// Solve overwrites x with A^{-1} x.
func (f *Factor) Solve(x []float64) {
	f.SolveL(x)
	f.SolveLT(x)
}

// LogDet returns log det A = 2 sum log L_ii.
func (f *Factor) LogDet() float64 {
	var s float64
	for i := 0; i < f.n; i++ {
		s += math.Log(f.data[i*f.stride+i])
	}
	return 2 * s
}

// MinPivot is the relative floor below which a new pivot d^2 is treated as
// numerically zero and replaced by jitter (relative to the new diagonal
// entry of A).
const MinPivot = 1e-12

// AppendSolved appends a row and column to A given l = L^{-1} a (the
// already solved off-diagonal part, len Size()) and the new diagonal entry
// ann of A. The new pivot is d = sqrt(ann - ||l||^2). When d^2 is below
// MinPivot*|ann| (a duplicate point with no noise, say) it is raised to that
// floor and the jitter is recorded. It returns d. l is copied.
func (f *Factor) AppendSolved(l []float64, ann float64) (d float64) {
	return f.AppendSolvedFloor(l, ann, MinPivot)
}

// AppendSolvedFloor is AppendSolved with the relative pivot floor rel:
// d^2 is raised to at least rel*|ann|. A matrix with no ridge on its
// diagonal (a Nystrom K_SS) needs a floor above the rounding noise of
// ||l||^2, which grows with the condition number of the factor.
func (f *Factor) AppendSolvedFloor(l []float64, ann, rel float64) (d float64) {
	if len(l) != f.n {
		panic(fmt.Sprintf("chol: appended row has length %d, want %d", len(l), f.n))
	}
	var ss float64
	for _, v := range l {
		ss += v * v
	}
	d2 := ann - ss
	floor := rel * math.Abs(ann)
	if floor == 0 {
		floor = rel
	}
	if !(d2 >= floor) { // also catches NaN
		if math.IsNaN(d2) {
			panic("chol: NaN pivot")
		}
		f.jitter += floor - d2
		f.jittered++
		d2 = floor
	}
	d = math.Sqrt(d2)
	f.grow(f.n + 1)
	row := f.data[f.n*f.stride : f.n*f.stride+f.n+1]
	copy(row, l)
	row[f.n] = d
	f.n++
	return d
}

// Append appends a row and column (a, ann) to A: a holds A's new
// off-diagonal column (len Size()) and is overwritten with l = L^{-1} a.
// It costs O(n^2) and returns the new pivot d.
func (f *Factor) Append(a []float64, ann float64) (d float64) {
	f.SolveL(a)
	return f.AppendSolved(a[:f.n], ann)
}

// RankOneUpdate replaces A by A + x x^T in O(n^2). x is overwritten.
// It is the Givens-style update of Golub & Van Loan (6.5.4) reordered by
// rows: row i needs the rotations (c_k, s_k) of the columns k < i, which
// rows k < i produced, so L is read row by row, contiguously, instead of
// down its columns (a stride of the capacity per element).
func (f *Factor) RankOneUpdate(x []float64) {
	n, s, L := f.n, f.stride, f.data
	if cap(f.rot) < 2*n {
		f.rot = make([]float64, 2*n, 4*n)
	}
	cs := f.rot[:2*n]
	cinv, sn := cs[:n], cs[n:]
	// Each row's pass over the earlier columns is a serial chain through
	// its x_i (two dependent floating-point operations per element), so
	// rows go four at a time, their chains interleaved, up to the first
	// column of the block; the few columns inside the block follow row by
	// row. The arithmetic of every element is the same as one row at a
	// time.
	i := 0
	for ; i+3 < n; i += 4 {
		r0 := L[i*s : i*s+i+1]
		r1 := L[(i+1)*s : (i+1)*s+i+2]
		r2 := L[(i+2)*s : (i+2)*s+i+3]
		r3 := L[(i+3)*s : (i+3)*s+i+4]
		x0, x1, x2, x3 := x[i], x[i+1], x[i+2], x[i+3]
		ci, sk := cinv[:i], sn[:i]
		r0, r1, r2, r3 = r0[:i+1], r1[:i+2], r2[:i+3], r3[:i+4]
		for k := range ci {
			c, t := ci[k], sk[k]
			l0, l1, l2, l3 := r0[k], r1[k], r2[k], r3[k]
			r0[k] = (l0 + t*x0) * c
			r1[k] = (l1 + t*x1) * c
			r2[k] = (l2 + t*x2) * c
			r3[k] = (l3 + t*x3) * c
			x0 = (x0 - t*l0) * c
			x1 = (x1 - t*l1) * c
			x2 = (x2 - t*l2) * c
			x3 = (x3 - t*l3) * c
		}
		xs := [4]float64{x0, x1, x2, x3}
		for q := 0; q < 4; q++ {
			row := L[(i+q)*s : (i+q)*s+i+q+1]
			xi := xs[q]
			for k := i; k < i+q; k++ {
				l := row[k]
				row[k] = (l + sn[k]*xi) * cinv[k]
				xi = (xi - sn[k]*l) * cinv[k]
			}
			f.rankOneFinish(row, i+q, xi, x, cinv, sn)
		}
	}
	for ; i < n; i++ {
		row := L[i*s : i*s+i+1]
		xi := x[i]
		for k := 0; k < i; k++ {
			// With c^2 - s^2 = 1 the textbook pair
			//   l' = (l + s x)/c,  x' = c x - s l'
			// is x' = (x - s l)/c: both from (l, x) with multiplications by
			// 1/c, which keeps divisions off the serial chain through x.
			l := row[k]
			row[k] = (l + sn[k]*xi) * cinv[k]
			xi = (xi - sn[k]*l) * cinv[k]
		}
		f.rankOneFinish(row, i, xi, x, cinv, sn)
	}
}

// rankOneFinish ends row i of RankOneUpdate: its diagonal entry and the
// rotation of column i.
func (f *Factor) rankOneFinish(row []float64, i int, xi float64, x, cinv, sn []float64) {
	lii := row[i]
	r := math.Hypot(lii, xi)
	cinv[i], sn[i] = lii/r, xi/lii
	row[i] = r
	x[i] = xi
}

// Rotation is a Givens rotation acting on coordinates (K, K+1):
// (u, v) -> (C u + S v, -S u + C v).
type Rotation struct {
	K    int
	C, S float64
}

// Apply applies the rotation to coordinates K, K+1 of z.
func (r Rotation) Apply(z []float64) {
	u, v := z[r.K], z[r.K+1]
	z[r.K] = r.C*u + r.S*v
	z[r.K+1] = -r.S*u + r.C*v
}

// Remove deletes row and column j of A. L with row j deleted is upper
// Hessenberg in its trailing block; Givens rotations of columns (k, k+1),
// k = j..n-2, restore triangular form: L_{-j} G = [L' 0]. The rotations are
// appended to rots (which may be nil) and returned: any vector z = L^{-1} b
// maps to the new factor's z' = (G^T z)[:n-1], obtained by applying the
// rotations in order and dropping the last coordinate. O(n^2).
func (f *Factor) Remove(j int, rots []Rotation) []Rotation {
	n, s, L := f.n, f.stride, f.data
	if j < 0 || j >= n {
		panic(fmt.Sprintf("chol: remove index %d out of range for order %d", j, n))
	}
	// Shift rows j+1..n-1 up by one; each keeps its i+1 entries (one more
	// than a row at its new position holds, the Hessenberg entry).
	for i := j + 1; i < n; i++ {
		copy(L[(i-1)*s:(i-1)*s+i+1], L[i*s:i*s+i+1])
	}
	for k := j; k < n-1; k++ {
		a, b := L[k*s+k], L[k*s+k+1]
		r := math.Hypot(a, b)
		c, sn := 1.0, 0.0
		if r != 0 {
			c, sn = a/r, b/r
		}
		// Rotate columns k, k+1 on rows k..n-2 (rows above have zeros there).
		for i := k; i < n-1; i++ {
			u, v := L[i*s+k], L[i*s+k+1]
			L[i*s+k] = c*u + sn*v
			L[i*s+k+1] = -sn*u + c*v
		}
		L[k*s+k+1] = 0
		if L[k*s+k] < 0 { // keep a positive diagonal: flip the sign of column k
			for i := k; i < n-1; i++ {
				L[i*s+k] = -L[i*s+k]
			}
			c, sn = -c, -sn
		}
		rots = append(rots, Rotation{K: k, C: c, S: sn})
	}
	f.n--
	return rots
}

// Factorize replaces the factor by the Cholesky factor of the n x n
// symmetric matrix whose lower triangle is a (row-major, stride lda). If
// the factorization fails, jitter eps*mean(diag) is added to the diagonal
// with eps = 1e-10, 1e-9, ..., 1e-4; if that still fails the error wraps
// ErrNotPositiveDefinite. a is not modified.
func (f *Factor) Factorize(a []float64, n, lda int) error {
	f.Reset()
	f.grow(n)
	f.n = n
	var mean float64
	for i := 0; i < n; i++ {
		mean += a[i*lda+i]
	}
	if n > 0 {
		mean = math.Abs(mean) / float64(n)
	}
	if mean == 0 {
		mean = 1
	}
	for eps := 0.0; ; {
		for i := 0; i < n; i++ {
			copy(f.data[i*f.stride:i*f.stride+i+1], a[i*lda:i*lda+i+1])
			f.data[i*f.stride+i] += eps * mean
		}
		sym := blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: f.stride, Data: f.data}
		// lapack64.Potrf works on row-major storage: Lower here means the
		// lower triangle of the row-major array, which is what we hold.
		if _, ok := lapack64.Potrf(sym); ok {
			if eps > 0 {
				f.jitter += eps * mean * float64(n)
				f.jittered += n
			}
			for i := 0; i < n; i++ { // clear the strict upper part Potrf left
				row := f.data[i*f.stride : i*f.stride+n]
				for j := i + 1; j < n; j++ {
					row[j] = 0
				}
			}
			return nil
		}
		switch {
		case eps == 0:
			eps = 1e-10
		case eps < 1e-4:
			eps *= 10
		default:
			f.Reset()
			return fmt.Errorf("chol: order %d, jitter up to %g of the mean diagonal: %w", n, eps, ErrNotPositiveDefinite)
		}
	}
}

// RotateRows replaces A by Q A Q^T, where Q applies the rotations in
// order (each acting on coordinates (K, K+1) as Rotation.Apply does), and
// keeps L its Cholesky factor without refactoring: Q L is lower triangular
// except for one entry above the diagonal per rotation, which a rotation
// of the columns (K, K+1) removes again (Q L G G^T L^T Q^T = Q A Q^T for
// orthogonal G). Each rotation costs O(n), so the rotations that a
// removal from a Nystrom dictionary produces (Remove) cost O(n^2) in all,
// instead of the O(n^3) of forming and refactoring Q A Q^T.
func (f *Factor) RotateRows(rots []Rotation) {
	n, s, L := f.n, f.stride, f.data
	for _, q := range rots {
		k := q.K
		if k < 0 || k+1 >= n {
			panic(fmt.Sprintf("chol: rotation on (%d,%d) out of range for order %d", k, k+1, n))
		}
		// Rows k and k+1: row k has entries 0..k, row k+1 entries 0..k+1;
		// the rotated row k gains the entry (k, k+1).
		rk, rk1 := L[k*s:k*s+k+2], L[(k+1)*s:(k+1)*s+k+2]
		rk[k+1] = 0
		for c := 0; c <= k+1; c++ {
			u, v := rk[c], rk1[c]
			rk[c] = q.C*u + q.S*v
			rk1[c] = -q.S*u + q.C*v
		}
		// Column rotation on (k, k+1) zeroing L[k][k+1]; rows above k are
		// zero in both columns.
		a, b := rk[k], rk[k+1]
		r := math.Hypot(a, b)
		if r == 0 {
			continue
		}
		c, sn := a/r, b/r
		for i := k; i < n; i++ {
			u, v := L[i*s+k], L[i*s+k+1]
			L[i*s+k] = c*u + sn*v
			L[i*s+k+1] = -sn*u + c*v
		}
		rk[k+1] = 0
		// Keep the diagonal positive: flipping the sign of a column of L
		// leaves L L^T unchanged.
		for _, j := range [2]int{k, k + 1} {
			if L[j*s+j] < 0 {
				for i := j; i < n; i++ {
					L[i*s+j] = -L[i*s+j]
				}
			}
		}
	}
}

// Truncate keeps the leading n x n block of A: the leading block of a
// lower-triangular factor is the factor of the leading block. O(1).
func (f *Factor) Truncate(n int) {
	if n < 0 || n > f.n {
		panic(fmt.Sprintf("chol: truncate to %d, order %d", n, f.n))
	}
	f.n = n
}

// CondEstimate returns max_i L_ii / min_i L_ii, a cheap lower bound on
// the condition number of L (the square root of A's), which bounds how much
// a triangular solve amplifies rounding. It is 1 for an empty factor.
func (f *Factor) CondEstimate() float64 {
	if f.n == 0 {
		return 1
	}
	lo, hi := math.Inf(1), 0.0
	for i := 0; i < f.n; i++ {
		d := f.data[i*f.stride+i]
		lo, hi = math.Min(lo, d), math.Max(hi, d)
	}
	return hi / lo
}

// AddJitter records jitter added to A's diagonal by the caller (count
// pivots, total amount), so that Jitter reports it.
func (f *Factor) AddJitter(total float64, count int) {
	f.jitter += total
	f.jittered += count
}

// SolveLPrefix overwrites x[:p] with L_p^{-1} x[:p], L_p the leading p x p
// block of L (the factor of A's leading block). O(p^2).
func (f *Factor) SolveLPrefix(x []float64, p int) {
	if p < 0 || p > f.n {
		panic(fmt.Sprintf("chol: prefix %d of order %d", p, f.n))
	}
	if p == 0 {
		return
	}
	blas64.Implementation().Dtrsv(blas.Lower, blas.NoTrans, blas.NonUnit, p, f.data, f.stride, x[:p], 1)
}

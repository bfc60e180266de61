package gp

import (
	"fmt"
	"math"
	"slices"

	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
)

// Rotation is a Givens rotation on coordinates (K, K+1) of an embedding,
// produced when a point leaves a Nystrom dictionary (see Nystrom.Remove).
type Rotation = chol.Rotation

// Nystrom is the Cholesky-form Nystrom embedding on a dictionary S of
// inducing points, in Cholesky form (as the authors' BKB code keeps it):
//
//	z(x) = L^{-1} k_S(x),  L L^T = K_SS,
//
// so that z(x).z(y) = k_S(x)^T K_SS^{-1} k_S(y), the Nystrom kernel.
// Appending a point to S appends one coordinate to every embedding and
// leaves the others unchanged; removing one applies Givens rotations to the
// trailing coordinates. It is the sketching core that the DTC posterior,
// BKB and the online learners (PKAWV-Nystrom, AOGD/NONS-ALD) share.
type Nystrom struct {
	k      kernel.Kernel
	dim    int
	points []float64 // |S| x dim, row-major
	diag   []float64 // k(s, s) for s in S
	l      chol.Factor
	work   []float64

	// exact selects the exact core that DTC uses: a point whose pivot
	// is below the rounding noise of its computation is floored (see
	// addExact), or, when a point of S has its coordinates, "dead": it
	// stays in S (so positions and indices are unchanged) but
	// contributes no direction. A dead point's row of L is the unit row
	// and its entry of every kernel column is 0, so every embedding's
	// coordinate for it is exactly 0. Under legacy, every point below
	// the noise is dead. Without exact (the online learners), Add floors
	// the pivot at PivotFloor instead.
	exact bool
	dead  []bool
	ndead int
	// near reports that the last addExact's pivot was below nearPivot
	// (dead or not): the point is near-dependent on S, and whether it is
	// dead may depend on the order of S (see DTC).
	near bool
	// legacy selects the rule of configuration versions up to 4 (see
	// DTC.SetLegacyCore): noise 8 (p+1) eps k(x,x) and the
	// forward-error test of legacyPivotSuspect.
	legacy  bool
	suspect bool // legacy: the last addExact's pivot was within its forward error
	// floored marks the inducing points whose squared pivot was at most
	// pivotNoise and that have no twin (a point of S with the same
	// coordinates) before them: they keep a direction of their own, with
	// the squared pivot pivotNoise (see addExact). nfloor counts them.
	floored []bool
	nfloor  int
	// twinRows makes Embed return, for a point with the coordinates of a
	// live inducing point, that point's row of L (set by the DTC while a
	// pivot of S is near-dependent; see Embed).
	twinRows bool
	// dropDead: every point below the noise is dead, none floored (the
	// rule of study configuration versions 5 to 7; DTC.SetDeadPivots).
	dropDead bool
}

// NewNystrom returns an empty embedding for points of dimension dim.
func NewNystrom(k kernel.Kernel, dim int) (*Nystrom, error) {
	if err := kernel.Validate(k); err != nil {
		return nil, err
	}
	if dim <= 0 {
		return nil, fmt.Errorf("gp: point dimension must be positive, got %d", dim)
	}
	return &Nystrom{k: k, dim: dim}, nil
}

// Kernel returns the kernel.
func (n *Nystrom) Kernel() kernel.Kernel { return n.k }

// Dim returns the dimension of the points.
func (n *Nystrom) Dim() int { return n.dim }

// Size returns |S|, the length of every embedding.
func (n *Nystrom) Size() int { return n.l.Size() }

// Point returns inducing point j. It aliases internal storage.
func (n *Nystrom) Point(j int) []float64 { return n.points[j*n.dim : (j+1)*n.dim] }

// Jitter reports the jitter added to K_SS's diagonal (total, and how many
// pivots needed it): a point numerically in the span of S gets a tiny
// pivot instead of a failed factorization.
func (n *Nystrom) Jitter() (total float64, count int) { return n.l.Jitter() }

// KernelColumn writes dst[j] = k(s_j, x) for every inducing point.
func (n *Nystrom) KernelColumn(dst, x []float64) {
	for j := range dst[:n.Size()] {
		dst[j] = n.k.Eval(n.points[j*n.dim:(j+1)*n.dim], x)
	}
	if n.ndead > 0 {
		for j, dd := range n.dead {
			if dd {
				dst[j] = 0
			}
		}
	}
}

// twin returns the position of the first live inducing point with x's
// coordinates, or -1.
func (n *Nystrom) twin(x []float64) int {
	for j := 0; j < n.Size(); j++ {
		if !n.dead[j] && slices.Equal(n.points[j*n.dim:(j+1)*n.dim], x[:n.dim]) {
			return j
		}
	}
	return -1
}

// Embed writes z(x) = L^{-1} k_S(x) into dst (length Size()) and returns
// the Nystrom residual k(x,x) - ||z(x)||^2 >= 0 (up to rounding), the
// squared distance of phi(x) from the span of S: the "approximate linear
// dependence" test of Li and Liao (ICML 2023) and the DTC correction term of Calandriello et al. (COLT 2019).
// O(|S| d + |S|^2).
func (n *Nystrom) Embed(dst, x []float64) (residual float64) {
	if len(x) != n.dim {
		panic(fmt.Sprintf("gp: point has dimension %d, want %d", len(x), n.dim))
	}
	m := n.Size()
	dst = dst[:m]
	if n.twinRows {
		if j := n.twin(x); j >= 0 {
			// The row of L itself: the triangular solve would give it
			// only up to its rounding, and a floored pivot divides that
			// rounding by sqrt(eps k(x,x)).
			copy(dst, n.l.Row(j))
			clear(dst[j+1:])
			var ss float64
			for _, v := range dst {
				ss += v * v
			}
			return kernel.Diag(n.k, x) - ss
		}
	}
	n.KernelColumn(dst, x)
	n.l.SolveL(dst)
	var ss float64
	for _, v := range dst {
		ss += v * v
	}
	return kernel.Diag(n.k, x) - ss
}

// EmbedMulti writes z(xs[i]) into dsts[i] for every i, the floats Embed
// writes one at a time: the kernel columns first, then the triangular
// solves in one pass over L for the group (chol.Factor.SolveLMulti, which
// computes SolveL's floats), so that a rebuild of thousands of rows reads
// L once per group instead of once per row. Twins of a pivot take
// Embed's own path. The residuals are not returned.
func (n *Nystrom) EmbedMulti(dsts, xs [][]float64) {
	m := n.Size()
	group := dsts[:0:0]
	for i, x := range xs {
		if len(x) != n.dim {
			panic(fmt.Sprintf("gp: point has dimension %d, want %d", len(x), n.dim))
		}
		if n.twinRows && n.twin(x) >= 0 {
			n.Embed(dsts[i], x)
			continue
		}
		n.KernelColumn(dsts[i][:m], x)
		group = append(group, dsts[i][:m])
	}
	n.l.SolveLMulti(group)
}

// Add appends x to S. z must be z(x) under the current S (as from Embed),
// or nil to compute it. It returns the new pivot d = sqrt(k(x,x)-||z||^2)
// (floored by jitter when x is numerically in the span of S): every
// embedding z(y) gains the coordinate (k(x,y) - z(x).z(y)) / d.
func (n *Nystrom) Add(x, z []float64) (pivot float64) {
	if len(x) != n.dim {
		panic(fmt.Sprintf("gp: point has dimension %d, want %d", len(x), n.dim))
	}
	if z == nil {
		if cap(n.work) < n.Size()+1 {
			n.work = make([]float64, 2*n.Size()+16)
		}
		z = n.work[:n.Size()]
		n.Embed(z, x)
	}
	kxx := kernel.Diag(n.k, x)
	if n.exact {
		pivot, _ = n.addExact(x, z, kxx)
		return pivot
	}
	pivot = n.l.AppendSolvedFloor(z, kxx, PivotFloor)
	n.points = append(n.points, x...)
	n.diag = append(n.diag, kxx)
	n.dead = append(n.dead, false)
	n.floored = append(n.floored, false)
	return pivot
}

// pivotNoise is the squared pivot at or below which a point is floored
// (or dead, when a point of S has its coordinates): one unit in the last
// place of k(x,x), eps k(x,x). The squared pivot d^2 = k(x,x) -
// ||z(x)||^2 is a difference from k(x,x), and float64 cannot tell a d^2
// below k(x,x)'s own rounding from 0. A floored point keeps its direction
// with d^2 set to this noise: its row of L changes k(x,x) by at most the
// noise, and its coordinate in another point's embedding is their
// residual cross-term over sqrt(noise), which the pivot cancels to first
// order (see DTC), so the choice matters little: on the 1,000 -short
// sequences of the differential test the worst case is 0.22 of its bound
// with this floor, 0.19 and 0.18 with 0.1 and 1e-4 times it, 0.6 with 10
// times it (a larger floor moves k(x,x) further). This one is the
// rounding of k(x,x) itself, and keeps a floored coordinate made of
// rounding (about eps k over the pivot) below sqrt(eps k).
//
// Dropping the point instead (the rule before floored points) was
// measured on the randomized differential test against a 256-bit
// reference (TestDifferentialAgainstBigFloat, 1,000 sequences): 11
// cases beyond 10x the error of the authors' eigenvalue threshold (max *
// m * eps, their stable_invert_root) with a threshold of 2 eps k (1 +
// ||a||_1)^2, 8 with 4 eps k and 6 with eps k; the old 8 (p+1) eps k
// dropped points whose removal moved variances by 7e-6 at lambda = 1e-6.
// In the canonical order of a rebuild (largest residual first) the
// computed residuals stay accurate to a few eps k (pivoted Cholesky's
// backward error; Higham 2002, ch. 10).
func pivotNoise(kxx float64) float64 {
	const eps = 0x1p-52
	return eps * math.Abs(kxx)
}

// nearPivot is the squared pivot below which a point is near-dependent
// on S: sqrt(noise * k(x,x)), the geometric middle between the rounding
// noise and k(x,x) (1.5e-8 k(x,x)). Adding a point y to S changes
// another point p's squared pivot from d_p^2 to d_p^2 d_y'^2 / d_y^2
// (d_y, d_y': y's pivot without and with p; the determinant of their
// 2 x 2 Schur complement), which stays above nearPivot^2 / k(x,x) =
// noise when both are above nearPivot: while every pivot is above it, an
// addition in any position leaves every point live. Below it, the DTC
// takes its decisions in one canonical order (DTC.rebuild); the
// differential test checks that the two paths then agree.
func nearPivot(kxx, noise float64) float64 { return math.Sqrt(noise * math.Abs(kxx)) }

// addExact appends x in the exact core: a live point with its true pivot,
// or, when the squared pivot is at most pivotNoise, a floored one (its row
// of L is z, zeroed at the other floored points' positions, then the
// pivot sqrt(pivotNoise); z is changed in place), or, when a live point
// of S has x's coordinates (or under legacy), a dead one (unit row of L,
// zero coordinate in every embedding). It returns the pivot (+Inf for a
// dead point, so that every new coordinate (k - z_p.z)/pivot is 0), and
// sets n.near when the squared pivot is below nearPivot. O(m) (O(m d)
// more for a floored or dead point).
func (n *Nystrom) addExact(x, z []float64, kxx float64) (pivot float64, dead bool) {
	m := n.Size()
	var ss float64
	for _, v := range z[:m] {
		ss += v * v
	}
	d2 := kxx - ss
	noise := pivotNoise(kxx)
	n.near = nearDependent(d2, kxx)
	dead = !(d2 > noise)
	floored := false
	if n.legacy {
		dead = !(d2 > legacyPivotNoise(kxx, m))
		n.suspect = !dead && n.legacyPivotSuspect(d2, kxx, m)
	} else if dead && noise > 0 && !n.dropDead && n.twin(x) < 0 {
		// Floored: x keeps a direction of its own, orthogonal to the
		// other floored points' (its row of L is 0 at their positions),
		// with the squared pivot noise. Its row then reproduces every
		// kernel value k(x, y) of the points outside the floored ones to
		// rounding, and k(x,x) to within noise: the factor is that of
		// K_SS with the floored block changed by at most a few eps k,
		// where dropping x would change k(x, y) by its residual
		// cross-term, up to sqrt(eps) k (see DTC).
		dead, floored = false, true
		ss = 0
		for j, v := range z[:m] {
			if n.floored[j] {
				z[j], v = 0, 0
			}
			ss += v * v
		}
	}
	if floored {
		// The pivot is set, not computed: ss + noise - ss can round to 0.
		n.l.AppendSolvedFloor(z[:m], ss+noise, 0)
		pivot = math.Sqrt(noise)
		n.l.Row(m)[m] = pivot
		n.nfloor++
	} else if dead {
		if cap(n.work) < m {
			n.work = make([]float64, 2*m+16)
		}
		w := n.work[:m]
		for j := range w {
			w[j] = 0
		}
		n.l.AppendSolvedFloor(w, 1, 0)
		n.ndead++
		pivot = math.Inf(1)
	} else {
		pivot = n.l.AppendSolvedFloor(z[:m], kxx, 0)
	}
	n.points = append(n.points, x...)
	n.diag = append(n.diag, kxx)
	n.dead = append(n.dead, dead)
	n.floored = append(n.floored, floored)
	return pivot, dead
}

// legacyPivotNoise is the noise of the legacy rule: 8 (p+1) eps k(x,x),
// Cholesky's backward error with a safety margin, whatever x's
// coefficients on S.
func legacyPivotNoise(kxx float64, p int) float64 {
	const eps = 0x1p-52
	return 8 * eps * float64(p+1) * math.Abs(kxx)
}

// legacyPivotSuspect reports, under the legacy rule, whether a squared
// pivot d2 above legacyPivotNoise is within the forward error of the
// triangular solve, estimated as that noise times the ratio of the
// largest to the smallest live pivot; the DTC then rebuilt in pivoted
// order.
func (n *Nystrom) legacyPivotSuspect(d2, kxx float64, p int) bool {
	lo, hi := math.Inf(1), 0.0
	for j := 0; j < p; j++ {
		if n.dead[j] {
			continue
		}
		d := n.l.At(j, j)
		lo, hi = math.Min(lo, d), math.Max(hi, d)
	}
	cond := 1.0
	if hi > 0 {
		cond = hi / lo
	}
	return d2 < legacyPivotNoise(kxx, p)*cond
}

// legacyLiveAt reports, under the legacy rule, whether the inducing point
// at position p, a dead one, would now be live if it were appended after
// the points before it (a removal can take away the point it depended
// on). O(p^2 + p d).
func (n *Nystrom) legacyLiveAt(p int, work []float64) bool {
	z := work[:p]
	x := n.Point(p)
	for j := 0; j < p; j++ {
		if n.dead[j] {
			z[j] = 0
		} else {
			z[j] = n.k.Eval(n.Point(j), x)
		}
	}
	n.l.SolveLPrefix(z, p)
	var ss float64
	for _, v := range z {
		ss += v * v
	}
	d2 := n.diag[p] - ss
	return d2 > legacyPivotNoise(n.diag[p], p) && !n.legacyPivotSuspect(d2, n.diag[p], p)
}

// Dead reports whether inducing point j contributes no direction (exact
// core only; see DTC).
func (n *Nystrom) Dead(j int) bool { return n.dead[j] }

// PivotFloor is the relative floor of a new inducing point's squared
// pivot k(x,x) - ||z(x)||^2. K_SS has no ridge, and for points nearly in
// the span of S (near-duplicates, dense grids with a long length scale)
// the computed residual is rounding noise, about cond(K_SS) * 1e-16
// relative; building the next pivots on it amplifies the noise until the
// embeddings overflow. Flooring at 1e-8 acts as a jitter of at most
// 1e-8 k(x,x) on such points only, and is reported by Jitter.
const PivotFloor = 1e-8

// NewCoordinate returns the coordinate that an embedding z(y) (under the
// dictionary before the last Add) gains from the point added last: kxy is
// k(x_new, y), zx the row of L for the new point (Row(Size()-1)).
func NewCoordinate(kxy float64, lrow []float64, zy []float64) float64 {
	m := len(lrow) - 1
	s := kxy
	for j, v := range lrow[:m] {
		s -= v * zy[j]
	}
	return s / lrow[m]
}

// LastRow returns the last row of L: the embedding of the newest inducing
// point under the previous dictionary, followed by its pivot.
func (n *Nystrom) LastRow() []float64 { return n.l.Row(n.Size() - 1) }

// Remove deletes inducing point j from S and returns the Givens rotations
// (appended to rots) that map every old embedding z to the new one:
// apply them in order, then drop the last coordinate. O(|S|^2).
func (n *Nystrom) Remove(j int, rots []Rotation) []Rotation {
	m := n.Size()
	if j < 0 || j >= m {
		panic(fmt.Sprintf("gp: dictionary index %d out of range [0,%d)", j, m))
	}
	rots = n.l.Remove(j, rots)
	copy(n.points[j*n.dim:], n.points[(j+1)*n.dim:])
	n.points = n.points[:(m-1)*n.dim]
	copy(n.diag[j:], n.diag[j+1:])
	n.diag = n.diag[:m-1]
	if n.dead[j] {
		n.ndead--
	}
	copy(n.dead[j:], n.dead[j+1:])
	n.dead = n.dead[:m-1]
	if n.floored[j] {
		n.nfloor--
	}
	copy(n.floored[j:], n.floored[j+1:])
	n.floored = n.floored[:m-1]
	return rots
}

// Reset empties the dictionary.
func (n *Nystrom) Reset() {
	n.l.Reset()
	n.points = n.points[:0]
	n.diag = n.diag[:0]
	n.dead = n.dead[:0]
	n.ndead = 0
	n.floored = n.floored[:0]
	n.nfloor = 0
}

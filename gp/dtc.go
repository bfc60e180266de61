package gp

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/internal/chol"
	"github.com/bkb-go/bkb/kernel"
)

// Uniform is the randomness dictionary resampling draws from;
// *rand.Rand of math/rand/v2 satisfies it.
type Uniform interface {
	Float64() float64
}

// DTC is the deterministic-training-conditional (Nystrom) approximation of
// the GP posterior on a dictionary S of inducing points, the posterior of
// BKB (Calandriello et al., COLT 2019, Eq. 4):
//
//	z(x)          = L^{-1} k_S(x),  L L^T = K_SS       (Nystrom embedding)
//	V             = Z^T W Z + lambda I                 (W: observation counts)
//	mu~(x)        = z(x)^T V^{-1} Z^T W ybar
//	sigma~^2(x)   = (k(x,x) - ||z(x)||^2)/lambda + z(x)^T V^{-1} z(x)
//
// sigma~^2 is on the 1/lambda scale of the paper: lambda*sigma~^2
// approximates the GP variance, and with every observed point in S it
// equals it exactly.
//
// Every observed point, and every candidate of SetCandidates, is a row
// whose embedding, mean and variance are kept current:
//   - an observation with S unchanged is a rank-one update of V; every
//     row's variance drops by (z(x)^T v)^2/(1 + z_n^T v), v = V^{-1} z_n,
//     and its mean moves by (z(x)^T v)(y - mu~(x_n))/(1 + z_n^T v):
//     one pass, O(A m + m^2);
//   - a point entering S appends one coordinate to every row; the
//     variance changes by a Schur-complement term: O(A m);
//   - a point leaving S rotates the trailing coordinates of every row
//     (Givens) and drops the last: O(A m), and V's factor follows the
//     rotations in O(m^2) (chol.Factor.RotateRows), never refactored;
//   - all of one step's changes share one pass over the rows
//     (changes.go), O(A (k+j) m) arithmetic for k points in and j out;
//   - a change of more than a third of S rebuilds everything, O(A m^2).
//
// The core is exact: an inducing point whose squared pivot
// k(x,x) - ||z(x)||^2 is at most eps k(x,x) (pivotNoise: below the
// rounding of k(x,x) itself, where float64 cannot tell it from 0) is
// floored: it keeps a direction of its own, orthogonal to the other
// floored points' (its row of L is 0 at their positions), with the
// squared pivot set to eps k(x,x). A point with the same coordinates as
// a point already in S is dead instead: it stays in S but contributes no
// direction (it has none of its own). With the row of L itself as the
// embedding of a point of S (and of any point with its coordinates,
// Predict included), the factor reproduces every kernel value k(x, y)
// with y outside the floored points to rounding, and changes only the
// block among floored points, by a few eps k: with every observed point
// in S the DTC posterior is the exact GP's for a kernel matrix perturbed
// at the level of its own rounding.
//
// Dropping such a point instead (its observations entering only through
// their projection on the other directions) changes k(x, p) by the
// residual cross-term k(x,p) - z(x).z(p), up to sqrt(eps) k: to first
// order in it, mu~(x) moves by that term times n_p (ybar_p -
// mu~(p))/lambda and sigma~^2(x) by twice that term times n_p
// z(p)^T V^{-1} z(x)/lambda, which a small lambda makes large (with the
// drop the differential test measured errors up to 2e-5, 12.5x its
// bound). A floored point keeps both terms: its coordinate at x is that
// cross-term over its pivot, and at itself the pivot, so the pivot
// cancels to first order (it enters at second order, through
// n_p eps k/lambda).
//
// Near-dependent points have one rule, applied identically by the
// incremental and the rebuilt paths: while every pivot of S is above
// nearPivot (sqrt(eps) k(x,x), about 1.5e-8 k(x,x)), no point can be
// floored in any order of S, and changes are incremental; once a point
// below it is in S (a near-duplicate, a dense cluster), S's factor is
// rebuilt in one canonical order (largest residual first, ties to the
// lowest row, pivotedOrder) and every later change of S is made by such
// a rebuild until no pivot is below it. The decisions are then a
// function of S and the data, whatever the order of the edits that led
// there.
//
// What it costs in practice is measured: the differential test
// (TestDifferentialAgainstBigFloat) finds the DTC with every observed
// point in S within max(1e-8, 10x the error of the float64 eigenvalue
// threshold: max * m * eps, the BKB authors' code) in every case, at
// most 0.31 of that bound (3,000 sequences of 60 operations, 2,957 of
// them with a floored point).
//
// DTC is not safe for concurrent use.
type DTC struct {
	k      kernel.Kernel
	dim    int
	lambda float64

	ny *Nystrom
	r  *rows // candidates (the first nc rows) then other observed points
	nc int

	count    []int
	ysum     []float64
	thresh   []float64 // per-row uniform threshold of ResampleIncremental, NaN until drawn
	observed []int     // rows with count > 0, in order of first observation
	nobs     int
	extra    map[string]int // non-candidate observed points, by coordinates

	dict []int // dictionary position -> row
	pos  []int // row -> dictionary position, or -1

	v       []float64 // scratch for V, m x m, full symmetric, stride vstride
	vstride int
	vf      chol.Factor // V = R R^T
	b       []float64   // Z^T W ybar
	beta    []float64   // V^{-1} b

	changes  int
	rebuilds int
	// sinceChange counts observations since S last changed.
	sinceChange int
	// rebuildAlways makes every observation and dictionary change rebuild
	// the posterior from scratch, as the paper's algorithm does.
	rebuildAlways bool

	w1, w2, w3 []float64
	sel        []int // rows selected by the last resampling
	obsPass    observePass
	wg         sync.WaitGroup

	// One step's dictionary changes (changes.go).
	ops        []chgOp
	rotBuf     []Rotation
	arena      []float64
	mark       []bool // rows brought up to date while ops are planned
	pendingAdd []int
	chg        chgPass
	revived    int

	// Resampling as Algorithm 1 states it: the inclusion probabilities
	// use sigma~_t, the variances before the newest observation. preVar
	// holds them for the rows of observed (same order), preValid says
	// whether an observation was made since the last resampling.
	preVar        []float64
	preValid      bool
	leverageAfter bool

	suspect  bool // a point added in this step's changes is near-dependent
	repivots int  // rebuilds in canonical order that near-dependent points caused
	// near: a pivot of S's factor is below nearPivot (set by rebuild);
	// every change of S is then made by a rebuild.
	near bool
	// dropNear keeps near-dependent points out of S (SetDropNearDependent);
	// dropped counts the additions it refused.
	dropNear   bool
	dropped    int
	addDropped int // additions refused in the current applyChanges
	clamps     int // negative variances set to 0

	// A deferred per-observation pass (see observeRow and flush).
	obsPending bool
	obsV       []float64

	want                     []bool // scratch flags of SetDictionary
	remBuf, addBuf, orderBuf []int
	condJitter               int // jitter of ConditionalVariances' factorizations

	// PredictBatch's scratch: a group's embeddings and V-solves.
	batchBuf       [][]float64
	batchZ, batchQ [][]float64
	batchIdx       [predictGroup]int
}

// observePass is the per-observation pass over all rows (see observeRow).
type observePass struct {
	r           *rows
	v           []float64
	gain, denom float64
	clamped     atomic.Int64
}

func (p *observePass) run(lo, hi int) {
	r, v, m := p.r, p.v, len(p.v)
	var clamped int64
	for j := lo; j < hi; j++ {
		s := chol.Dot(v[:m], r.slot(j)[:m])
		r.mean[j] += s * p.gain
		vj := r.vari[j] - s*s/p.denom
		if vj < 0 {
			vj = 0
			clamped++
		}
		r.vari[j] = vj
	}
	if clamped > 0 {
		p.clamped.Add(clamped)
	}
}

// NewDTC returns a DTC posterior with prior kernel k on points of dimension
// dim, noise lambda > 0 (the DTC variance divides by it) and an empty
// dictionary.
func NewDTC(k kernel.Kernel, dim int, lambda float64) (*DTC, error) {
	ny, err := NewNystrom(k, dim)
	if err != nil {
		return nil, err
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("gp: DTC needs a finite noise variance lambda > 0, got %v", lambda)
	}
	ny.exact = true
	g := &DTC{k: k, dim: dim, lambda: lambda, ny: ny, extra: map[string]int{}}
	g.r = &rows{d: dim}
	return g, nil
}

// SetCandidates attaches a candidate set (rows of x) whose posterior means
// and variances are kept current. It must be called before any observation.
func (g *DTC) SetCandidates(x *mat.Dense) error {
	if g.nobs > 0 || g.r.n() > 0 {
		return fmt.Errorf("gp: SetCandidates after observations")
	}
	if _, c := x.Dims(); c != g.dim {
		return fmt.Errorf("gp: candidates have dimension %d, want %d", c, g.dim)
	}
	r, err := newRows(g.k, x)
	if err != nil {
		return err
	}
	for i := range r.vari {
		r.vari[i] = r.kdiag[i] / g.lambda
	}
	g.r = r
	g.nc = r.n()
	g.count = make([]int, g.nc)
	g.ysum = make([]float64, g.nc)
	g.thresh = make([]float64, g.nc)
	g.pos = make([]int, g.nc)
	for i := range g.pos {
		g.pos[i] = -1
		g.thresh[i] = math.NaN()
	}
	return nil
}

// Dim returns the dimension of the points.
func (g *DTC) Dim() int { return g.dim }

// Lambda returns the noise variance lambda.
func (g *DTC) Lambda() float64 { return g.lambda }

// Kernel returns the prior kernel.
func (g *DTC) Kernel() kernel.Kernel { return g.k }

// Len returns the number of observations, repeats included.
func (g *DTC) Len() int { return g.nobs }

// NumCandidates returns the number of candidates.
func (g *DTC) NumCandidates() int { return g.nc }

// Means returns mu~ of every candidate. The slice aliases internal state;
// it is valid until the next call that adds a non-candidate point.
func (g *DTC) Means() []float64 { g.flush(); return g.r.mean[:g.nc] }

// Variances returns sigma~^2 (1/lambda scale) of every candidate, aliasing
// internal state like Means.
func (g *DTC) Variances() []float64 { g.flush(); return g.r.vari[:g.nc] }

// DictionarySize returns m = |S|.
func (g *DTC) DictionarySize() int { return len(g.dict) }

// Dictionary returns the rows in S. A row below NumCandidates is that
// candidate's index. The slice aliases internal state.
func (g *DTC) Dictionary() []int { return g.dict }

// InDictionary reports whether row i is in S.
func (g *DTC) InDictionary(i int) bool { return i >= 0 && i < len(g.pos) && g.pos[i] >= 0 }

// DictionaryChanges returns how many points have entered or left S so far.
func (g *DTC) DictionaryChanges() int { return g.changes }

// Rebuilds returns how many times the posterior was rebuilt from scratch.
func (g *DTC) Rebuilds() int { return g.rebuilds }

// Jitter reports jitter added to K_SS (points numerically in span of S).
func (g *DTC) Jitter() (total float64, count int) { return g.ny.Jitter() }

// Count returns how many times row i was observed.
func (g *DTC) Count(i int) int { return g.count[i] }

// EffectiveDimension returns sum over observations of sigma~^2(x_s), the
// estimate of d_eff = Tr(K_T (K_T + lambda I)^{-1}) that BKB's Theorem 4.1
// beta uses (each sigma~^2 of an observed point is its approximate ridge
// leverage score).
func (g *DTC) EffectiveDimension() float64 {
	g.flush()
	var s float64
	for _, i := range g.observed {
		s += float64(g.count[i]) * g.r.vari[i]
	}
	return s
}

func (g *DTC) buf(p *[]float64, n int) []float64 {
	if cap(*p) < n {
		*p = make([]float64, n, 2*n+16)
	}
	return (*p)[:n]
}

// solveV writes V^{-1} x into dst (which may alias x).
func (g *DTC) solveV(dst, x []float64) []float64 {
	copy(dst, x)
	g.vf.Solve(dst)
	return dst
}

// addRow appends a non-candidate point as a row, with its embedding and
// posterior under the current state.
func (g *DTC) addRow(x []float64) int {
	m := g.ny.Size()
	z := g.buf(&g.w1, m)
	res := g.ny.Embed(z, x)
	q := g.solveV(g.buf(&g.w2, m), z)
	// The residual is not clamped on its own: see Predict.
	var vari float64
	if g.ny.legacy {
		vari = clampVar(res, &g.clamps)/g.lambda + dot(z, q)
	} else {
		vari = clampVar(res/g.lambda+dot(z, q), &g.clamps)
	}
	i := g.r.add(x, kernel.Diag(g.k, x), z, dot(z, g.beta), vari)
	g.count = append(g.count, 0)
	g.ysum = append(g.ysum, 0)
	g.thresh = append(g.thresh, math.NaN())
	g.pos = append(g.pos, -1)
	return i
}

func pointKey(x []float64) string {
	b := make([]byte, 0, 8*len(x))
	for _, v := range x {
		u := math.Float64bits(v)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56))
	}
	return string(b)
}

// Observe adds the observation y at point x (not necessarily a candidate;
// a new point becomes a row of its own) and returns its row.
func (g *DTC) Observe(x []float64, y float64) (row int, err error) {
	g.flush() // a new row is computed from the current V and beta
	if err := checkPoint(x, g.dim); err != nil {
		return -1, err
	}
	if err := checkValue(y); err != nil {
		return -1, err
	}
	key := pointKey(x)
	i, ok := g.extra[key]
	if !ok {
		i = g.addRow(x)
		g.extra[key] = i
	}
	return i, g.observeRow(i, y)
}

// ObserveCandidate adds the observation y at candidate i. O(A m + m^2).
func (g *DTC) ObserveCandidate(i int, y float64) error {
	if i < 0 || i >= g.nc {
		return fmt.Errorf("gp: candidate %d out of range [0,%d)", i, g.nc)
	}
	if err := checkValue(y); err != nil {
		return err
	}
	return g.observeRow(i, y)
}

func (g *DTC) observeRow(i int, y float64) error {
	g.flush()
	g.snapshotPre(i)
	if g.rebuildAlways {
		if g.count[i] == 0 {
			g.observed = append(g.observed, i)
		}
		g.count[i]++
		g.ysum[i] += y
		g.nobs++
		return g.rebuild()
	}
	m := g.ny.Size()
	r := g.r
	g.sinceChange++
	if g.sinceChange == compactAfter {
		r.compact()
	}
	zn := r.load(g.buf(&g.w1, m), i, m)
	v := g.solveV(g.buf(&g.w2, m), zn)
	denom := 1 + dot(zn, v)
	resid := y - r.mean[i]
	// V += zn zn^T (on its factor), b += zn y.
	for a := 0; a < m; a++ {
		g.b[a] += zn[a] * y
	}
	if m > 0 {
		x := g.buf(&g.w3, m)
		copy(x, zn)
		g.vf.RankOneUpdate(x)
		g.solveV(g.beta, g.b)
	}
	if g.count[i] == 0 {
		g.observed = append(g.observed, i)
	}
	g.count[i]++
	g.ysum[i] += y
	g.nobs++
	if m == 0 {
		return nil
	}
	// The pass over the rows is deferred: if a dictionary change follows
	// (the resampling right after the observation), it is fused into the
	// change's pass (changes.go); otherwise the next read of the means or
	// variances runs it (flush).
	g.obsV = append(g.obsV[:0], v...)
	g.obsPass.r, g.obsPass.v, g.obsPass.gain, g.obsPass.denom = r, g.obsV, resid/denom, denom
	g.obsPending = true
	return nil
}

// flush runs the deferred per-observation pass, if any: one pass over the
// rows, O(A m).
func (g *DTC) flush() {
	if !g.obsPending {
		return
	}
	g.obsPending = false
	runRows(g.r.n(), &g.obsPass, &g.wg)
	g.clamps += int(g.obsPass.clamped.Swap(0))
}

// snapshotPre records, before each observation (of row i), the variances
// sigma~_t of the observed rows and of row i (Algorithm 1 draws S_{t+1}
// with them). O(n) for n observed rows; with several observations before
// one resampling (a batch), the variances before the last one are used.
func (g *DTC) snapshotPre(i int) {
	g.preVar = g.preVar[:0]
	for _, j := range g.observed {
		g.preVar = append(g.preVar, g.r.vari[j])
	}
	if g.count[i] == 0 {
		g.preVar = append(g.preVar, g.r.vari[i])
	}
	g.preValid = true
}

// compactAfter is the number of observations with S unchanged after which
// the embedding rows are compacted to their length. While S changes, rows
// keep spare capacity so that a new coordinate moves nothing; once S is
// stable a contiguous layout makes the per-step pass one sequential
// stream, which measured 2.8x faster than rows with gaps (A = 100,000,
// m = 224, stride 303: 17.6 ms against 6.3 ms per observation).
const compactAfter = 8

// SetLegacyCore selects the exact core as it was before near-dependent
// points had one rule (configuration versions up to 4 of a study replay
// with it): a point is dead below 8 (p+1) eps k(x,x) whatever its
// coefficients on S; a new pivot within an estimate of its forward error
// triggers a rebuild in pivoted order, while other near-dependent points
// are added in arrival order, so that the incremental and rebuilt paths
// may decide differently; and the Nystrom residual is clamped at 0 on its
// own in Predict, in a rebuild and for a new point's row, which loses the
// cancellation of its rounding with z^T V^{-1} z (see Predict). It must
// be called before the first observation.
func (g *DTC) SetLegacyCore(on bool) { g.ny.legacy = on }

// LegacyCore reports whether the posterior uses the exact core of
// configuration versions up to 4 (SetLegacyCore).
func (g *DTC) LegacyCore() bool { return g.ny.legacy }

// SetDeadPivots keeps the exact core's rule of configuration versions 5
// to 7 of a study: every point whose squared pivot is at most eps k(x,x)
// is dead (it stays in S and contributes no direction) instead of
// floored, and points of S are embedded by the triangular solve. Studies
// of those versions replay with it. It must be called before the first
// observation; it has no effect under SetLegacyCore.
func (g *DTC) SetDeadPivots(on bool) { g.ny.dropDead = on }

// SetRebuildAlways makes the posterior rebuild from scratch after every
// observation and dictionary change (O(A m^2) each), as BKB's Algorithm 1
// states it, instead of updating incrementally. The results are the same
// up to rounding; only the cost differs. It exists for the scaling
// benchmarks.
func (g *DTC) SetRebuildAlways(on bool) { g.rebuildAlways = on }

// SetDropNearDependent keeps near-dependent points out of S: a point
// whose squared pivot against the rest of S is below nearPivot (1.5e-8
// k(x,x)) is left out, in the canonical order of a rebuild (pivoted
// Cholesky truncated at that tolerance) and when a change adds it. S then
// never holds a near-dependent point, so every change of S is made
// incrementally (without it, the exact core rebuilds the posterior on
// every change while S holds one, O((A + t) m^2) each, which dominated
// long studies whose asks cluster near an optimum). The posterior is the
// exact DTC posterior on the S kept. What a dropped point would add is
// bounded by its squared pivot: with d^2 < 1.5e-8 k(x,x) its inducing
// direction moves no kernel value by more than that, far below the
// noise floors of the study (1e-5 k or more). Only the exact core
// (SetLegacyCore off) drops; Dropped counts the refused additions.
func (g *DTC) SetDropNearDependent(on bool) { g.dropNear = on }

// Dropped returns how many additions to S SetDropNearDependent refused.
func (g *DTC) Dropped() int { return g.dropped }

// nearDependent reports whether a point of prior variance kxx and
// squared pivot d2 against S is near-dependent (nearPivot).
func nearDependent(d2, kxx float64) bool { return !(d2 >= nearPivot(kxx, pivotNoise(kxx))) }

// Rebuild recomputes the whole posterior from the data and S, as the
// paper's algorithm does every step: O(A m^2 + n m^2 + m^3). Incremental
// updates make it unnecessary; it is the reference the tests compare
// against and the "paper" mode of the benchmarks.
func (g *DTC) Rebuild() error { return g.rebuild() }

// rebuildGroup is the number of rows a rebuild solves together (as
// PredictBatch scores candidates: chol.Factor.SolveLMulti).
const rebuildGroup = 8

func (g *DTC) rebuild() error {
	g.obsPending = false // everything is recomputed
	g.rebuilds++
	g.sinceChange = 0
	r := g.r
	g.pivotedOrder()
	m := g.ny.Size()
	r.ensureCoords(m)
	r.m = m
	// The rows in groups of rebuildGroup: Embed's floats, with one pass
	// over L per group (Nystrom.EmbedMulti).
	parallelFor(r.n(), func(lo, hi int) {
		zs, xs := make([][]float64, rebuildGroup), make([][]float64, rebuildGroup)
		for i := range zs {
			zs[i] = make([]float64, m)
		}
		for j := lo; j < hi; j += rebuildGroup {
			k := min(rebuildGroup, hi-j)
			for i := 0; i < k; i++ {
				xs[i] = r.point(j + i)
			}
			g.ny.EmbedMulti(zs[:k], xs[:k])
			for i := 0; i < k; i++ {
				r.store(j+i, zs[i])
			}
		}
	})
	g.ensureV(m)
	vs := g.vstride
	for a := 0; a < m; a++ {
		va := g.v[a*vs : a*vs+m]
		for c := range va {
			va[c] = 0
		}
		va[a] = g.lambda
	}
	g.b = append(g.b[:0], make([]float64, m)...)
	z := make([]float64, m)
	for _, j := range g.observed {
		r.load(z, j, m)
		w := float64(g.count[j])
		for a := 0; a < m; a++ {
			wa := w * z[a]
			// The lower triangle only: Factorize reads nothing else of
			// V, and each of its entries is summed as before.
			// The lower triangle only: Factorize reads nothing else of
			// V, and each of its entries is summed as before (unfused).
			chol.AxpyUnfused(wa, z[:a+1], g.v[a*vs:a*vs+a+1])
			g.b[a] += z[a] * g.ysum[j]
		}
	}
	if err := g.vf.Factorize(g.v, m, vs); err != nil {
		// V >= lambda I with lambda > 0 in exact arithmetic; only
		// non-finite embeddings get here.
		return fmt.Errorf("gp: DTC rebuild with %d inducing points: %w", m, err)
	}
	g.beta = append(g.beta[:0], make([]float64, m)...)
	g.solveV(g.beta, g.b)
	var clamped atomic.Int64
	defer func() { g.clamps += int(clamped.Load()) }()
	legacy := g.ny.legacy
	parallelFor(r.n(), func(lo, hi int) {
		qs, zs := make([][]float64, rebuildGroup), make([][]float64, rebuildGroup)
		for i := range qs {
			qs[i], zs[i] = make([]float64, m), make([]float64, m)
		}
		for j0 := lo; j0 < hi; j0 += rebuildGroup {
			k := min(rebuildGroup, hi-j0)
			for i := 0; i < k; i++ {
				r.load(zs[i], j0+i, m)
				copy(qs[i], zs[i])
			}
			g.vf.SolveLMulti(qs[:k]) // SolveL's floats, one pass over V's factor
			for i := 0; i < k; i++ {
				j, q, z := j0+i, qs[i], zs[i]
				// The residual is not clamped on its own: see Predict.
				res := r.kdiag[j] - dot(z, z)
				if legacy && res < 0 {
					res = 0
					clamped.Add(1)
				}
				v := res/g.lambda + dot(q, q)
				if v < 0 {
					v = 0
					clamped.Add(1)
				}
				r.vari[j] = v
				r.mean[j] = dot(g.beta, z)
			}
		}
	})
	return nil
}

// pivotedOrder rebuilds the Nystrom factor on S with the points in
// greedy pivoted-Cholesky order (largest remaining residual
// k(x,x) - ||z(x)||^2 first) and reorders the dictionary to match. The
// DTC posterior does not depend on the order of S, but its rounding does:
// in arrival order a sorted 1-D grid is extrapolated point by point and
// its pivots reach a plateau of rounding (d^2 ~ eps^(2/3)); in pivoted
// order the pivots decrease and those below pivotNoise are all at the end.
// O(m^2 d + m^3).
func (g *DTC) pivotedOrder() {
	r := g.r
	m := len(g.dict)
	g.ny.Reset()
	rest := append([]int(nil), g.dict...)
	zs := make([][]float64, m)
	res := make([]float64, m)
	for k, i := range rest {
		zs[k] = make([]float64, 0, m)
		res[k] = r.kdiag[i]
	}
	idx := make([]int, m)
	for k := range idx {
		idx[k] = k
	}
	g.dict = g.dict[:0]
	g.near = false
	drop := g.dropNear && !g.ny.legacy
	for len(idx) > 0 {
		if drop {
			// Truncated at the near tolerance: the points whose residual
			// against the pivots so far is below it leave S.
			kept := idx[:0]
			for _, k := range idx {
				if i := rest[k]; nearDependent(res[k], r.kdiag[i]) {
					g.pos[i] = -1
					g.dropped++
				} else {
					kept = append(kept, k)
				}
			}
			idx = kept
			if len(idx) == 0 {
				break
			}
		}
		// The largest residual, ties to the lowest row: the order, and so
		// every decision, depends on S as a set, not on its order.
		b := 0
		for k := range idx {
			rk, rb := res[idx[k]], res[idx[b]]
			if rk > rb || (rk == rb && !g.ny.legacy && rest[idx[k]] < rest[idx[b]]) {
				b = k
			}
		}
		kb := idx[b]
		idx[b] = idx[len(idx)-1]
		idx = idx[:len(idx)-1]
		i := rest[kb]
		xp := r.point(i)
		zp := zs[kb]
		d, dead := g.ny.addExact(xp, zp, r.kdiag[i])
		g.near = g.near || g.ny.near && !drop
		g.dict = append(g.dict, i)
		for _, k := range idx {
			c := 0.0
			if !dead {
				c = (g.k.Eval(r.point(rest[k]), xp) - dot(zp, zs[k])) / d
			}
			zs[k] = append(zs[k], c)
			res[k] -= c * c
		}
	}
	for p, i := range g.dict {
		g.pos[i] = p
	}
	g.ny.twinRows = g.near && !g.ny.legacy && !g.ny.dropDead
}

// Predict returns mu~(x) and sigma~^2(x) (1/lambda scale). O(m d + m^2).
func (g *DTC) Predict(x []float64) (mean, variance float64, err error) {
	if err := checkPoint(x, g.dim); err != nil {
		return 0, 0, err
	}
	m := g.ny.Size()
	z := make([]float64, m)
	res := g.ny.Embed(z, x)
	q := append([]float64(nil), z...)
	g.vf.SolveL(q)
	// The Nystrom residual is not clamped on its own. Along a
	// near-dependent direction of S (near-duplicate inducing points) the
	// computed coordinate of z carries the rounding of its pivot, up to a
	// percent at a pivot of 1e-13 k(x,x), and the residual can come out
	// negative; the same error enters z^T V^{-1} z with the opposite sign
	// (V is lambda I along that direction), so the sum is accurate while a
	// clamped residual is not (a variance 0.4% off at lambda = 8e-3 with
	// two observations 1.8e-7 apart, TestNearDuplicateGrowOneAtATime). The
	// candidates' rows, updated incrementally, never clamp it either.
	if g.ny.legacy {
		return dot(z, g.beta), math.Max(res, 0)/g.lambda + dot(q, q), nil
	}
	return dot(z, g.beta), math.Max(res/g.lambda+dot(q, q), 0), nil
}

// PredictBatch writes Predict(xs[i]) into mean[i] and variance[i], the
// same floats, with the triangular solves of up to predictGroup points
// made together (chol.Factor.SolveLMulti reads each row of a factor once
// for the group): the candidates of an ask are scored about 1.4x faster
// at m = 575 than one at a time. It stops at the first point that is not
// of the posterior's dimension or not finite.
func (g *DTC) PredictBatch(xs [][]float64, mean, variance []float64) error {
	if len(mean) < len(xs) || len(variance) < len(xs) {
		return fmt.Errorf("gp: PredictBatch: %d points, %d means and %d variances", len(xs), len(mean), len(variance))
	}
	m := g.ny.Size()
	for lo := 0; lo < len(xs); lo += predictGroup {
		hi := min(lo+predictGroup, len(xs))
		zs, qs := g.batchZ[:0], g.batchQ[:0]
		var res [predictGroup]float64
		for i := lo; i < hi; i++ {
			if err := checkPoint(xs[i], g.dim); err != nil {
				return err
			}
			if g.ny.twinRows && g.ny.twin(xs[i]) >= 0 {
				// Embed's own path (the row of L): one at a time.
				var err error
				if mean[i], variance[i], err = g.Predict(xs[i]); err != nil {
					return err
				}
				continue
			}
			k := len(zs)
			if k >= len(g.batchBuf) {
				g.batchBuf = append(g.batchBuf, nil)
			}
			buf := g.buf(&g.batchBuf[k], 2*m)
			z := buf[:m]
			g.ny.KernelColumn(z, xs[i])
			zs = append(zs, z)
			qs = append(qs, buf[m:2*m])
			g.batchIdx[k] = i
		}
		g.ny.l.SolveLMulti(zs)
		for k, z := range zs {
			// Embed's residual and Predict's copy of z, as they compute them.
			var ss float64
			for _, v := range z {
				ss += v * v
			}
			res[k] = kernel.Diag(g.ny.k, xs[g.batchIdx[k]]) - ss
			copy(qs[k], z)
		}
		g.vf.SolveLMulti(qs)
		for k, z := range zs {
			i, q := g.batchIdx[k], qs[k]
			mean[i] = dot(z, g.beta)
			if g.ny.legacy {
				variance[i] = math.Max(res[k], 0)/g.lambda + dot(q, q)
			} else {
				variance[i] = math.Max(res[k]/g.lambda+dot(q, q), 0)
			}
		}
		g.batchZ, g.batchQ = zs[:0], qs[:0]
	}
	return nil
}

// predictGroup is the number of points PredictBatch solves together (8:
// BenchmarkSolveLMulti in internal/chol is flat from 8 to 32).
const predictGroup = 8

// CoreOptions are the numerics of a DTC's exact core that stored studies
// of older configuration versions replay with (SetLegacyCore,
// SetDeadPivots, SetDropNearDependent), given at construction as one set.
type CoreOptions struct {
	LegacyCore, DeadPivots, DropNearDependent bool
}

// NewDTCWith is NewDTC with the core's numerics set from o.
func NewDTCWith(k kernel.Kernel, dim int, lambda float64, o CoreOptions) (*DTC, error) {
	g, err := NewDTC(k, dim, lambda)
	if err != nil {
		return nil, err
	}
	g.SetLegacyCore(o.LegacyCore)
	g.SetDeadPivots(o.DeadPivots)
	g.SetDropNearDependent(o.DropNearDependent)
	return g, nil
}

package gp

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/internal/testtier"
	"github.com/bkb-go/bkb/kernel"
)

// The randomized differential test of the DTC against an independent
// reference in higher precision: random sequences of observations (of
// candidates, of new points, of near-duplicates and of points with
// identical coordinates), fresh and incremental resamplings and arbitrary
// dictionary edits, with RBF length scales 1e-3..1e3 on the unit box,
// kernel variances 0.5..20 and lambda 1e-8..10. The reference is the DTC
// posterior (with S = every observed point, the exact GP) solved densely
// in diffPrec-bit floating point, the kernel itself evaluated in that
// precision (math/big). The yardstick for ill-conditioned cases is the
// BKB authors' float64 method (an eigendecomposition of K_SS with the
// eigenvalues below max * m * eps dropped, diffPinv).

const diffPrec = 256

func dbf(x float64) *big.Float { return new(big.Float).SetPrec(diffPrec).SetFloat64(x) }

// diffExp returns e^x for x <= 0 in diffPrec bits (halving to below
// 2^-20, a Taylor series to the precision, squaring back). Below -4000
// it returns 0: far below anything float64 can represent.
func diffExp(x *big.Float) *big.Float {
	if x.Cmp(dbf(-4000)) < 0 {
		return dbf(0)
	}
	r := new(big.Float).SetPrec(diffPrec).Set(x)
	k := 0
	lim := dbf(0x1p-20)
	for new(big.Float).Abs(r).Cmp(lim) > 0 {
		r.Quo(r, dbf(2))
		k++
	}
	sum, term := dbf(1), dbf(1)
	tiny := dbf(math.Ldexp(1, -diffPrec-8))
	for n := 1; n < 40; n++ {
		term.Mul(term, r)
		term.Quo(term, dbf(float64(n)))
		sum.Add(sum, term)
		if new(big.Float).Abs(term).Cmp(tiny) < 0 {
			break
		}
	}
	for ; k > 0; k-- {
		sum.Mul(sum, sum)
	}
	return sum
}

// diffRBF evaluates k in diffPrec bits.
func diffRBF(k kernel.RBF, x, y []float64) *big.Float {
	d := dbf(0)
	for i := range x {
		t := new(big.Float).SetPrec(diffPrec).Sub(dbf(x[i]), dbf(y[i]))
		d.Add(d, t.Mul(t, t))
	}
	ll := dbf(k.LengthScale)
	ll.Mul(ll, ll)
	d.Quo(d, ll.Mul(ll, dbf(2)))
	e := diffExp(d.Neg(d))
	return e.Mul(e, dbf(kernel.Diag(k, nil)))
}

// diffSolve solves a x = b (a n x n row-major; both destroyed) by
// Gaussian elimination with partial pivoting in diffPrec bits.
func diffSolve(a []*big.Float, b [][]*big.Float, n int) {
	t := new(big.Float).SetPrec(diffPrec)
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if new(big.Float).Abs(a[r*n+c]).Cmp(new(big.Float).Abs(a[p*n+c])) > 0 {
				p = r
			}
		}
		if p != c {
			for j := 0; j < n; j++ {
				a[p*n+j], a[c*n+j] = a[c*n+j], a[p*n+j]
			}
			for _, v := range b {
				v[p], v[c] = v[c], v[p]
			}
		}
		for r := c + 1; r < n; r++ {
			f := new(big.Float).SetPrec(diffPrec).Quo(a[r*n+c], a[c*n+c])
			for j := c; j < n; j++ {
				a[r*n+j].Sub(a[r*n+j], t.Mul(f, a[c*n+j]))
			}
			for _, v := range b {
				v[r].Sub(v[r], t.Mul(f, v[c]))
			}
		}
	}
	for c := n - 1; c >= 0; c-- {
		for _, v := range b {
			for j := c + 1; j < n; j++ {
				v[c].Sub(v[c], t.Mul(a[c*n+j], v[j]))
			}
			v[c].Quo(v[c], a[c*n+c])
		}
	}
}

// diffInputs is a DTC's data: inducing points s, distinct observed points
// xs with counts w and sums of values ysum.
type diffInputs struct {
	s, xs [][]float64
	w     []int
	ysum  []float64
}

// Points with identical coordinates (candidates may repeat) are merged:
// they are one inducing point, and one observed point with the counts
// and sums added, for the DTC as for the exact GP.
func diffInputsOf(g *DTC) (in diffInputs) {
	seen := map[string]int{}
	for _, i := range g.dict {
		key := pointKey(g.r.point(i))
		if _, ok := seen[key]; !ok {
			seen[key] = len(in.s)
			in.s = append(in.s, g.r.point(i))
		}
	}
	clear(seen)
	for _, i := range g.observed {
		key := pointKey(g.r.point(i))
		if j, ok := seen[key]; ok {
			in.w[j] += g.count[i]
			in.ysum[j] += g.ysum[i]
			continue
		}
		seen[key] = len(in.xs)
		in.xs = append(in.xs, g.r.point(i))
		in.w = append(in.w, g.count[i])
		in.ysum = append(in.ysum, g.ysum[i])
	}
	return in
}

// diffRef returns the DTC mean and variance (1/lambda scale) at each query
// point in diffPrec bits:
//
//	M     = K_SX W K_XS + lambda K_SS
//	mean  = k_S(x)^T M^{-1} K_SX ysum
//	var   = (k(x,x) - k_S(x)^T K_SS^{-1} k_S(x))/lambda + k_S(x)^T M^{-1} k_S(x)
//
// With S = the observed points it is the exact GP's posterior.
func diffRef(k kernel.RBF, in diffInputs, lambda float64, q [][]float64) (mean, vari []float64) {
	m, n := len(in.s), len(in.xs)
	t := new(big.Float).SetPrec(diffPrec)
	ksx := make([][]*big.Float, m)
	for a := range in.s {
		ksx[a] = make([]*big.Float, n)
		for j := range in.xs {
			ksx[a][j] = diffRBF(k, in.s[a], in.xs[j])
		}
	}
	kss := make([]*big.Float, m*m)
	for a := 0; a < m; a++ {
		for c := 0; c <= a; c++ {
			kss[a*m+c] = diffRBF(k, in.s[a], in.s[c])
			kss[c*m+a] = kss[a*m+c]
		}
	}
	mm := make([]*big.Float, m*m)
	kk := make([]*big.Float, m*m)
	for a := 0; a < m; a++ {
		for c := 0; c < m; c++ {
			v := new(big.Float).SetPrec(diffPrec).Mul(kss[a*m+c], dbf(lambda))
			for j := 0; j < n; j++ {
				t.Mul(ksx[a][j], ksx[c][j])
				v.Add(v, t.Mul(t, dbf(float64(in.w[j]))))
			}
			mm[a*m+c] = v
			kk[a*m+c] = new(big.Float).Copy(kss[a*m+c])
		}
	}
	rhs := make([]*big.Float, m)
	for a := 0; a < m; a++ {
		rhs[a] = dbf(0)
		for j := 0; j < n; j++ {
			rhs[a].Add(rhs[a], t.Mul(ksx[a][j], dbf(in.ysum[j])))
		}
	}
	kq := make([][]*big.Float, len(q))
	b1 := [][]*big.Float{rhs}
	var b2 [][]*big.Float
	for i, x := range q {
		kq[i] = make([]*big.Float, m)
		c1, c2 := make([]*big.Float, m), make([]*big.Float, m)
		for a := range in.s {
			kq[i][a] = diffRBF(k, in.s[a], x)
			c1[a] = new(big.Float).Copy(kq[i][a])
			c2[a] = new(big.Float).Copy(kq[i][a])
		}
		b1 = append(b1, c1)
		b2 = append(b2, c2)
	}
	diffSolve(mm, b1, m)
	diffSolve(kk, b2, m)
	dotb := func(x, y []*big.Float) *big.Float {
		s := dbf(0)
		for i := range x {
			s.Add(s, t.Mul(x[i], y[i]))
		}
		return s
	}
	for i := range q {
		mu, _ := dotb(kq[i], b1[0]).Float64()
		res := dbf(kernel.Diag(k, nil))
		res.Sub(res, dotb(kq[i], b2[i]))
		res.Quo(res, dbf(lambda))
		res.Add(res, dotb(kq[i], b1[i+1]))
		v, _ := res.Float64()
		mean, vari = append(mean, mu), append(vari, v)
	}
	return mean, vari
}

// diffPinv is the DTC posterior computed as the BKB authors' code does,
// in float64: K_SS's eigenvalues below max * m * eps dropped (their
// stable_invert_root), the embedding K_XS U S^{-1/2}, V = Z^T W Z +
// lambda I solved by Cholesky.
func diffPinv(k kernel.Kernel, in diffInputs, lambda float64, q [][]float64) (mean, vari []float64) {
	s := in.s
	m := len(s)
	kss := mat.NewSymDense(m, nil)
	for a := range s {
		for c := 0; c <= a; c++ {
			kss.SetSym(a, c, k.Eval(s[a], s[c]))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(kss, true) {
		panic("eigen")
	}
	vals := es.Values(nil)
	var u mat.Dense
	es.VectorsTo(&u)
	mx := 0.0
	for _, v := range vals {
		mx = math.Max(mx, v)
	}
	thresh := mx * float64(m) * 0x1p-52
	var keep []int
	for i, v := range vals {
		if v > thresh {
			keep = append(keep, i)
		}
	}
	r := len(keep)
	embed := func(x []float64) []float64 {
		z := make([]float64, r)
		for c, e := range keep {
			var sum float64
			for a := range s {
				sum += k.Eval(s[a], x) * u.At(a, e)
			}
			z[c] = sum / math.Sqrt(vals[e])
		}
		return z
	}
	v := mat.NewSymDense(max(r, 1), nil)
	bv := make([]float64, max(r, 1))
	for j, x := range in.xs {
		z := embed(x)
		for a := 0; a < r; a++ {
			bv[a] += z[a] * in.ysum[j]
			for c := 0; c <= a; c++ {
				v.SetSym(a, c, v.At(a, c)+float64(in.w[j])*z[a]*z[c])
			}
		}
	}
	for a := 0; a < max(r, 1); a++ {
		v.SetSym(a, a, v.At(a, a)+lambda)
	}
	var ch mat.Cholesky
	if !ch.Factorize(v) {
		panic("chol")
	}
	var beta mat.VecDense
	_ = ch.SolveVecTo(&beta, mat.NewVecDense(len(bv), bv))
	for _, x := range q {
		z := append(embed(x), make([]float64, max(r, 1)-r)...)
		zv := mat.NewVecDense(len(z), z)
		var g mat.VecDense
		_ = ch.SolveVecTo(&g, zv)
		mean = append(mean, mat.Dot(zv, &beta))
		vari = append(vari, (kernel.Diag(k, x)-mat.Dot(zv, zv))/lambda+mat.Dot(zv, &g))
	}
	return mean, vari
}

// diffErr is the error of (gm, gv) against (wm, wv): means relative to
// the values' scale ys, variances relative to themselves (a variance of 0
// where the reference's is positive is an error of 1).
func diffErr(gm, gv, wm, wv []float64, ys float64) float64 {
	var e float64
	for i := range gv {
		e = math.Max(e, math.Abs(gm[i]-wm[i])/ys)
		e = math.Max(e, math.Abs(gv[i]-wv[i])/math.Abs(wv[i]))
	}
	return e
}

// diffResult is what one sequence measured.
type diffResult struct {
	exactErr, pinvExactErr float64 // S = all observed: DTC and pinv against the reference
	rebuiltErr             float64 // incremental vs rebuilt, worst over the checks
	rebuiltDrop            bool    // a point was dead at the worst check
	rebuiltTol             float64
	predictErr             float64
	zeroVar                int
	dead, floored          int
}

type diffCase struct {
	seed   uint64
	d, a   int
	k      kernel.RBF
	lambda float64
	ops    int
}

func (c diffCase) String() string {
	return fmt.Sprintf("seed %d (d=%d A=%d l=%.4g var=%.4g lambda=%.3g ops=%d)", c.seed, c.d, c.a, c.k.LengthScale, c.k.Variance, c.lambda, c.ops)
}

func newDiffCase(seed uint64, ops int) diffCase {
	rng := rand.New(rand.NewPCG(seed, 2121))
	return diffCase{
		seed:   seed,
		d:      1 + rng.IntN(2),
		a:      4 + rng.IntN(8),
		k:      kernel.RBF{LengthScale: math.Pow(10, -3+6*rng.Float64()), Variance: 0.5 * math.Pow(40, rng.Float64())},
		lambda: math.Pow(10, -8+9*rng.Float64()),
		ops:    ops,
	}
}

// nearPoint returns p moved by l * 10^U(-9,-2) in a random direction, or
// p itself (identical coordinates) one time in four.
func nearPoint(rng *rand.Rand, p []float64, l float64) []float64 {
	q := append([]float64(nil), p...)
	if rng.IntN(4) == 0 {
		return q
	}
	off := l * math.Pow(10, -9+7*rng.Float64())
	for i := range q {
		q[i] += off * rng.NormFloat64()
	}
	return q
}

// runDiff plays one random sequence and checks it (fail reports a
// violated bound with the case).
func runDiff(t *testing.T, c diffCase, fail func(string, ...any)) (res diffResult) {
	rng := rand.New(rand.NewPCG(c.seed, 4242))
	_ = rng.IntN(2) // decorrelate from newDiffCase
	cand := randPoints(rng, c.a, c.d)
	// A third of the candidates are near-duplicates (or identical) of others.
	for i := c.a - c.a/3; i < c.a; i++ {
		copy(cand.RawRowView(i), nearPoint(rng, cand.RawRowView(rng.IntN(c.a-c.a/3)), c.k.LengthScale))
	}
	g, _ := NewDTC(c.k, c.d, c.lambda)
	if err := g.SetCandidates(cand); err != nil {
		t.Fatal(err)
	}
	w := make([]float64, c.d)
	for i := range w {
		w[i] = rng.NormFloat64() / math.Max(c.k.LengthScale, 0.2)
	}
	ymax := 1.0
	value := func(p []float64) float64 {
		var u float64
		for i := range p {
			u += w[i] * p[i]
		}
		y := 2*math.Sin(u) + math.Sqrt(c.lambda)*rng.NormFloat64()
		ymax = math.Max(ymax, math.Abs(y))
		return y
	}
	var extra [][]float64
	check := func() {
		e, drop, tol := diffRebuilt(g, c, ymax)
		if e > tol {
			fail("incremental vs rebuilt %.3g above %.3g (dead points: %v)", e, tol, drop)
		}
		if e > res.rebuiltErr {
			res.rebuiltErr, res.rebuiltDrop, res.rebuiltTol = e, drop, tol
		}
	}
	for s := 0; s < c.ops; s++ {
		switch u := rng.IntN(10); {
		case u < 6 || g.nobs == 0:
			i := rng.IntN(c.a)
			if err := g.ObserveCandidate(i, value(cand.RawRowView(i))); err != nil {
				fail("%v", err)
			}
		default:
			var p []float64
			switch {
			case u == 6 || len(extra) == 0:
				p = randPoints(rng, 1, c.d).RawRowView(0)
			case u == 7:
				p = extra[rng.IntN(len(extra))]
			default: // near an observed point
				p = nearPoint(rng, g.r.point(g.observed[rng.IntN(len(g.observed))]), c.k.LengthScale)
			}
			extra = append(extra, p)
			if _, err := g.Observe(p, value(p)); err != nil {
				fail("%v", err)
			}
		}
		var err error
		switch rng.IntN(5) {
		case 0:
			_, _, err = g.Resample(rng, 0.5+3*rng.Float64())
		case 1:
			_, _, err = g.ResampleIncremental(rng, 0.5+3*rng.Float64())
		case 2:
			var dict []int
			for _, i := range g.Dictionary() {
				if rng.IntN(4) > 0 {
					dict = append(dict, i)
				}
			}
			for _, i := range g.observed {
				if !g.InDictionary(i) && rng.IntN(3) == 0 {
					dict = append(dict, i)
				}
			}
			_, _, err = g.SetDictionary(dict)
		case 3:
			// Grow S one point at a time.
			for _, i := range g.observed {
				if !g.InDictionary(i) {
					_, _, err = g.SetDictionary(append(append([]int(nil), g.dict...), i))
					break
				}
			}
		default:
			_, _, err = g.SetDictionary(g.observed)
		}
		if err != nil {
			fail("%v", err)
		}
		if rng.IntN(8) == 0 {
			check()
		}
	}
	check()
	// S = every observed point, reached incrementally: the exact GP.
	if _, _, err := g.SetDictionary(g.observed); err != nil {
		fail("%v", err)
	}
	check()
	var q [][]float64
	for i := 0; i < c.a; i++ {
		q = append(q, cand.RawRowView(i))
	}
	// New points: random, and near (or at) observed points.
	for i := 0; i < 3; i++ {
		q = append(q, randPoints(rng, 1, c.d).RawRowView(0))
		q = append(q, nearPoint(rng, g.r.point(g.observed[rng.IntN(len(g.observed))]), c.k.LengthScale))
	}
	gm := append([]float64(nil), g.Means()...)
	gv := append([]float64(nil), g.Variances()...)
	var pe float64
	predM, predV := make([]float64, len(q)), make([]float64, len(q))
	for j, x := range q {
		mu, v, err := g.Predict(x)
		if err != nil {
			fail("%v", err)
		}
		predM[j], predV[j] = mu, v
		if j < c.a {
			e := math.Max(math.Abs(mu-gm[j])/ymax, math.Abs(v-gv[j])/(g.r.kdiag[j]/c.lambda))
			pe = math.Max(pe, e)
		} else {
			gm, gv = append(gm, mu), append(gv, v)
		}
	}
	res.predictErr = pe
	// PredictBatch: Predict's floats, bit for bit (twins of inducing
	// points among q take Embed's own path).
	bm, bv := make([]float64, len(q)), make([]float64, len(q))
	if err := g.PredictBatch(q, bm, bv); err != nil {
		fail("PredictBatch: %v", err)
	}
	for j := range q {
		if math.Float64bits(bm[j]) != math.Float64bits(predM[j]) || math.Float64bits(bv[j]) != math.Float64bits(predV[j]) {
			fail("PredictBatch at point %d: (%v, %v), Predict (%v, %v)", j, bm[j], bv[j], predM[j], predV[j])
			break
		}
	}
	// EmbedMulti (a rebuild's rows in groups): Embed's floats, bit for
	// bit, the dictionary's own points (twins) among them.
	xs := slices.Clone(q)
	for j := 0; j < g.ny.Size(); j++ {
		xs = append(xs, g.ny.Point(j))
	}
	zs := make([][]float64, len(xs))
	for j := range zs {
		zs[j] = make([]float64, g.ny.Size())
	}
	g.ny.EmbedMulti(zs, xs)
	one := make([]float64, g.ny.Size())
	for j, x := range xs {
		g.ny.Embed(one, x)
		for a := range one {
			if math.Float64bits(one[a]) != math.Float64bits(zs[j][a]) {
				fail("EmbedMulti at point %d, coordinate %d: %v, Embed %v", j, a, zs[j][a], one[a])
				break
			}
		}
	}
	for _, i := range g.observed {
		if !(g.r.vari[i] > 0) {
			res.zeroVar++
		}
	}
	in := diffInputsOf(g)
	wm, wv := diffRef(c.k, in, c.lambda, q)
	pm, pv := diffPinv(c.k, in, c.lambda, q)
	res.exactErr = diffErr(gm, gv, wm, wv, ymax)
	res.pinvExactErr = diffErr(pm, pv, wm, wv, ymax)
	res.dead, res.floored = g.ny.ndead, g.ny.nfloor
	return res
}

// diffRebuilt compares every row with a rebuild from scratch of the same
// data and S, and returns the error, whether either has dead points (a
// point with the coordinates of another point of S, which adds nothing),
// and the bound, 1e-9.
func diffRebuilt(g *DTC, c diffCase, ymax float64) (e float64, drop bool, tol float64) {
	g.flush()
	h := g.cloneForTest()
	if err := h.Rebuild(); err != nil {
		return math.Inf(1), false, 0
	}
	for j := range g.r.mean {
		scale := g.r.kdiag[j] / g.lambda
		e = math.Max(e, math.Max(math.Abs(g.r.mean[j]-h.r.mean[j])/ymax, math.Abs(g.r.vari[j]-h.r.vari[j])/scale))
	}
	return e, g.ny.ndead > 0 || h.ny.ndead > 0, 1e-9
}

// TestDifferentialAgainstBigFloat runs diffSequences random sequences
// (BKB_DIFF_SEQUENCES overrides; -short runs fewer and shorter ones: 1000
// of 25 operations in the end-to-end tier, the first 250 of them in the
// short tier).
func TestDifferentialAgainstBigFloat(t *testing.T) {
	t.Parallel()
	n, ops := 3000, 60
	if testing.Short() {
		n, ops = 1000, 25
	}
	if testtier.ShortTier() {
		n = 250
	}
	if s := os.Getenv("BKB_DIFF_SEQUENCES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("BKB_DIFF_SEQUENCES=%q: %v", s, err)
		}
		n = v
	}
	var exactRatio, rebuiltNoDrop, rebuiltDrop, predict []float64
	bad, withFloor, floorRatio := 0, 0, 0.0
	for seed := 0; seed < n; seed++ {
		c := newDiffCase(uint64(seed), ops)
		fail := func(format string, args ...any) {
			t.Helper()
			bad++
			if bad <= 20 {
				t.Errorf("%v: "+format, append([]any{c}, args...)...)
			}
		}
		r := runDiff(t, c, fail)
		// The bound: within 10x of the float64 eigenvalue threshold's
		// error (and 1e-8), in every case, with or without floored
		// pivots (a near-duplicate whose squared pivot is below
		// eps k(x,x)).
		tol := math.Max(1e-8, 10*r.pinvExactErr)
		if r.exactErr > tol {
			fail("S = all observed: DTC vs exact GP %.3g, float64 eigenvalue threshold %.3g (floored %d, dead %d)", r.exactErr, r.pinvExactErr, r.floored, r.dead)
		}
		if r.floored > 0 {
			withFloor++
			floorRatio = math.Max(floorRatio, r.exactErr/tol)
		}
		if r.zeroVar > 0 {
			fail("%d observed arms with variance 0", r.zeroVar)
		}
		if r.predictErr > 1e-10 {
			fail("Predict vs the candidates' values: %.3g", r.predictErr)
		}
		exactRatio = append(exactRatio, r.exactErr/tol)
		if r.rebuiltDrop {
			rebuiltDrop = append(rebuiltDrop, r.rebuiltErr)
		} else {
			rebuiltNoDrop = append(rebuiltNoDrop, r.rebuiltErr)
		}
		predict = append(predict, r.predictErr)
	}
	for _, s := range []struct {
		name string
		v    []float64
	}{{"DTC vs exact GP / bound", exactRatio}, {"incremental vs rebuilt, no point dead", rebuiltNoDrop},
		{"incremental vs rebuilt, a twin dead", rebuiltDrop}, {"Predict vs candidates", predict}} {
		if len(s.v) == 0 {
			continue
		}
		sort.Float64s(s.v)
		q := func(p float64) float64 { return s.v[int(p*float64(len(s.v)-1))] }
		t.Logf("%s over %d sequences: median %.2g, 99%% %.2g, max %.2g", s.name, len(s.v), q(0.5), q(0.99), q(1))
	}
	t.Logf("%d sequences of %d operations, %d ending with a floored pivot (DTC vs exact GP at most %.2g of the bound there): %d violations", n, ops, withFloor, floorRatio, bad)
}

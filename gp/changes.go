package gp

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/bkb-go/bkb/internal/chol"
)

// Dictionary changes of the DTC posterior: all of one step's
// changes, k points in and j out, cost one pass over the rows.
//
// A change is planned on the small side first (the factor of K_SS, the
// factor R of V, b and beta, O(m^2) each) and recorded as an op. The rows
// of observed points (and of points entering S) are needed by later ops
// (a new point's column of V sums over them), so they are brought up to
// date op by op as the ops are planned, O(n m) per op for n observed
// rows. Every other row is then read once and all ops applied to it while
// it is in cache: O((k+j) m) arithmetic per row and one pass of memory
// traffic, instead of k+j passes.

// chgOp is one planned change of S, applied to a row by apply.
type chgOp struct {
	remove bool
	m      int // |S| before the op
	rots   []Rotation
	// Removal: the coordinate c that is dropped (after the rotations)
	// changes the variance by c^2/lambda - (c - gv.z')^2/schur.
	// Addition: the new coordinate c = (k(x,x_p) - zp.z)/d (0 for a dead
	// point) changes it by -c^2/lambda + (c - gv.z)^2/schur.
	gv    []float64
	schur float64
	zp    []float64
	d     float64
	xp    []float64
	dead  bool
	// The mean moves by coef*t, t = c - gv.z (block inverse of V):
	// addition coef = alpha = (b_new - u.beta)/schur, the new entry of
	// beta; removal coef = -beta_last, the rotated beta's last entry.
	coef float64
	// early holds an addition's new coordinate of each observed row (in
	// the order of DTC.observed), computed while planning it.
	early []float64
}

// apply applies the op to the embedding row (capacity >= max(m, m+1)) of
// the point x and returns the new variance and mean, each updated in O(1)
// from the inner products the new coordinate needs anyway.
func (o *chgOp) apply(g *DTC, row, x []float64, vari, mean float64) (float64, float64) {
	lam := g.lambda
	if o.remove {
		// The rotations of one removal act on consecutive coordinate pairs
		// (K = j, j+1, ..., m-2; chol.Factor.Remove), so they are applied
		// as one sweep carrying the running coordinate in a register, and
		// gv.z' is accumulated on the way.
		mm := o.m - 1
		k0 := mm
		if len(o.rots) > 0 {
			k0 = o.rots[0].K
		}
		return o.removeTail(row, chol.Dot(o.gv[:k0], row[:k0]), lam, vari, mean)
	}
	m := o.m
	if o.dead {
		row[m] = 0
		return vari, mean
	}
	pz, gz := chol.Dot(o.zp, row[:m]), chol.Dot(o.gv, row[:m])
	c := (g.k.Eval(x, o.xp) - pz) / o.d
	row[m] = c
	t := c - gz
	return vari - c*c/lam + t*t/o.schur, mean + o.coef*t
}

// chgPass applies every planned op to the rows not brought up to date in
// planning, in place.
//
// The ops' inner products are batched: every inner product that a row
// needs is a linear functional of the row as it was before the ops, or as
// it is after the removals, so the ops' vectors are stacked into two small
// matrices (prepare) and each pair of rows multiplies them in one
// matrix-vector product (chol.GemvRows2: AVX2/FMA, each load of the ops'
// vectors serving two rows; 41 Gflop/s at m = 400 with 16 vectors, against
// 16-18 for gonum's SSE2 Dgemv and 5-7 for the scalar loop that applied
// op after op before; chol's BenchmarkKernels):
//   - f1 (before the ops, width k1): the deferred observation's v[:k1]
//     and each removal's gv over the prefix its rotations do not touch
//     (removals are planned from the back of S, so every later removal's
//     prefix is untouched by the earlier ones; when a revival breaks that
//     order the removals fall back to chgOp.apply);
//   - f2 (after the removals, width m1): each addition's zp[:m1] and
//     gv[:m1]; the few coordinates appended by earlier additions of the
//     step are added by short dots.
//
// What stays per row and per op is O(1) work, the kernel evaluation of an
// addition and the Givens sweep of a removal (two rows interleaved).
type chgPass struct {
	g       *DTC
	obs     bool // a deferred observation pass is fused into this one
	clamped atomic.Int64

	m0     int       // coordinates before the ops
	k1     int       // width of f1
	n1     int       // rows of f1 (0: no batched prefix)
	f1     []float64 // n1 x k1, row-major
	batchR bool      // removals' prefixes are in f1
	nrem   int       // leading removal ops
	m1     int       // coordinates after the removals
	n2     int       // rows of f2: 2 per addition
	f2     []float64 // n2 x m1
}

// prepare stacks the ops' vectors into f1 and f2 (from the step's arena).
func (p *chgPass) prepare() {
	g := p.g
	ops := g.ops
	p.m0 = g.r.m
	if len(ops) > 0 {
		p.m0 = ops[0].m
	}
	if p.obs {
		p.m0 = len(g.obsPass.v)
	}
	p.nrem = 0
	for p.nrem < len(ops) && ops[p.nrem].remove {
		p.nrem++
	}
	p.m1 = p.m0 - p.nrem
	if p.nrem < len(ops) {
		p.m1 = ops[p.nrem].m
	}
	// Removals' prefixes: op r's prefix [0, k0_r) must not be touched by
	// the rotations of the removals before it (which start at their k0).
	p.batchR = p.nrem > 0
	k1, lowest := 0, p.m0
	for r := 0; r < p.nrem; r++ {
		k0 := ops[r].prefix()
		if k0 > lowest {
			p.batchR = false
			break
		}
		lowest = min(lowest, ops[r].rotStart())
		k1 = max(k1, k0)
	}
	p.n1, p.k1 = 0, 0
	if p.batchR {
		p.k1 = max(k1, 1) // a BLAS matrix has at least one column; m0 >= 1 here
		k1 = p.k1
		p.n1 = p.nrem
		if p.obs {
			p.n1++
		}
		p.f1 = g.floats(p.n1 * k1)
		q := 0
		if p.obs {
			copy(p.f1[:k1], g.obsPass.v[:k1])
			q = 1
		}
		for r := 0; r < p.nrem; r++ {
			dst := p.f1[(q+r)*k1 : (q+r+1)*k1]
			k0 := ops[r].prefix()
			copy(dst, ops[r].gv[:k0])
			for i := k0; i < k1; i++ {
				dst[i] = 0
			}
		}
	}
	nadd := len(ops) - p.nrem
	p.n2 = 0
	if nadd > 0 && p.m1 > 0 {
		p.n2 = 2 * nadd
		p.f2 = g.floats(p.n2 * p.m1)
		for a := 0; a < nadd; a++ {
			o := &ops[p.nrem+a]
			zr := p.f2[2*a*p.m1 : (2*a+1)*p.m1]
			gr := p.f2[(2*a+1)*p.m1 : (2*a+2)*p.m1]
			if o.dead {
				for i := range zr {
					zr[i], gr[i] = 0, 0
				}
				continue
			}
			copy(zr, o.zp[:p.m1])
			copy(gr, o.gv[:p.m1])
		}
	}
}

// prefix is the length of a removal's prefix that its rotations leave
// unchanged (its gv.z over it is in f1).
func (o *chgOp) prefix() int {
	if len(o.rots) > 0 {
		return o.rots[0].K
	}
	return o.m - 1
}

// rotStart is the first coordinate a removal changes.
func (o *chgOp) rotStart() int { return o.prefix() }

// removeTail applies a removal whose prefix inner product gz (gv.z over
// [0, prefix)) is already known: the Givens sweep carrying the running
// coordinate in a register, accumulating the rest of gv.z'.
func (o *chgOp) removeTail(row []float64, gz, lam, vari, mean float64) (float64, float64) {
	mm := o.m - 1
	if len(o.rots) > 0 {
		k0 := o.rots[0].K
		seg := row[k0 : mm+1]
		gv := o.gv[k0:mm]
		rots := o.rots[:len(seg)-1]
		u := seg[0]
		for i, q := range rots {
			v := seg[i+1]
			w := q.C*u + q.S*v
			u = -q.S*u + q.C*v
			seg[i] = w
			gz += gv[i] * w
		}
		seg[len(seg)-1] = u
	}
	c := row[mm]
	row[mm] = 0
	t := c - gz
	return vari + c*c/lam - t*t/o.schur, mean + o.coef*t
}

// scratchPool holds chgPass.run's scratch for the batched inner products
// (one per goroutine of a pass; a stack array would escape through the
// BLAS call and allocate on every step).
var scratchPool = sync.Pool{New: func() any { s := make([]float64, 64); return &s }}

func (p *chgPass) run(lo, hi int) {
	g := p.g
	r := g.r
	bp := scratchPool.Get().(*[]float64)
	defer scratchPool.Put(bp)
	need := 2 * (p.n1 + p.n2)
	if cap(*bp) < need {
		*bp = make([]float64, need)
	}
	y := (*bp)[:need]
	ya1, yb1 := y[:p.n1], y[p.n1:2*p.n1]
	ya2, yb2 := y[2*p.n1:2*p.n1+p.n2], y[2*p.n1+p.n2:]
	var clamped int64
	finish := func(j int, v, mu float64) {
		if v < 0 {
			v = 0
			clamped++
		}
		r.vari[j], r.mean[j] = v, mu
	}
	// Rows go in pairs, so that each load of the ops' vectors serves two
	// rows (chol.GemvRows2).
	pend := -1
	for j := lo; j < hi; j++ {
		if g.early(j) {
			continue
		}
		if pend < 0 {
			pend = j
			continue
		}
		ra, rb := r.slot(pend), r.slot(j) // stride >= every op's width (applyChanges)
		if p.n1 > 0 {
			chol.GemvRows2(p.f1, p.n1, p.k1, p.k1, ra[:p.k1], rb[:p.k1], ya1, yb1)
		}
		va, mua, vb, mub := p.before2(ra, rb, r.point(pend), r.point(j), r.vari[pend], r.mean[pend], r.vari[j], r.mean[j], ya1, yb1)
		if p.n2 > 0 {
			chol.GemvRows2(p.f2, p.n2, p.m1, p.m1, ra[:p.m1], rb[:p.m1], ya2, yb2)
		}
		va, mua = p.after(ra, r.point(pend), va, mua, ya2)
		vb, mub = p.after(rb, r.point(j), vb, mub, yb2)
		finish(pend, va, mua)
		finish(j, vb, mub)
		pend = -1
	}
	if pend >= 0 {
		row := r.slot(pend)
		if p.n1 > 0 {
			chol.GemvRows(p.f1, p.n1, p.k1, p.k1, row[:p.k1], ya1)
		}
		v, mu := p.before(row, r.point(pend), r.vari[pend], r.mean[pend], ya1)
		if p.n2 > 0 {
			chol.GemvRows(p.f2, p.n2, p.m1, p.m1, row[:p.m1], ya2)
		}
		v, mu = p.after(row, r.point(pend), v, mu, ya2)
		finish(pend, v, mu)
	}
	if clamped > 0 {
		p.clamped.Add(clamped)
	}
}

// before applies the deferred observation and the removals to a row
// (of the point x), given y1 = f1 times the row as it was.
func (p *chgPass) before(row, x []float64, v, mu float64, y1 []float64) (float64, float64) {
	g := p.g
	q := 0
	if p.obs {
		// The deferred observation's rank-one update, on the embedding
		// before the changes.
		obsV := g.obsPass.v
		var s float64
		if p.n1 > 0 {
			s = y1[0] + chol.Dot(obsV[p.k1:p.m0], row[p.k1:p.m0])
			q = 1
		} else {
			s = chol.Dot(obsV, row[:p.m0])
		}
		v -= s * s / g.obsPass.denom
		mu += s * g.obsPass.gain
	}
	ops := g.ops
	for k := 0; k < p.nrem; k++ {
		if p.batchR {
			v, mu = ops[k].removeTail(row, y1[q+k], g.lambda, v, mu)
		} else {
			v, mu = ops[k].apply(g, row, x, v, mu)
		}
	}
	return v, mu
}

// before2 is before for two rows at once: their Givens sweeps are
// interleaved, so that the two dependency chains (each rotation needs the
// coordinate the previous one produced) overlap.
func (p *chgPass) before2(ra, rb, xa, xb []float64, va, mua, vb, mub float64, ya, yb []float64) (float64, float64, float64, float64) {
	if !p.batchR {
		va, mua = p.before(ra, xa, va, mua, ya)
		vb, mub = p.before(rb, xb, vb, mub, yb)
		return va, mua, vb, mub
	}
	g := p.g
	q := 0
	if p.obs {
		obsV := g.obsPass.v
		sa := ya[0] + chol.Dot(obsV[p.k1:p.m0], ra[p.k1:p.m0])
		sb := yb[0] + chol.Dot(obsV[p.k1:p.m0], rb[p.k1:p.m0])
		va -= sa * sa / g.obsPass.denom
		mua += sa * g.obsPass.gain
		vb -= sb * sb / g.obsPass.denom
		mub += sb * g.obsPass.gain
		q = 1
	}
	ops := g.ops
	lam := g.lambda
	for k := 0; k < p.nrem; k++ {
		o := &ops[k]
		ga, gb := ya[q+k], yb[q+k]
		mm := o.m - 1
		if len(o.rots) > 0 {
			k0 := o.rots[0].K
			sa, sb := ra[k0:mm+1], rb[k0:mm+1]
			sb = sb[:len(sa)]
			gv := o.gv[k0:mm]
			rots := o.rots[:len(sa)-1]
			gv = gv[:len(rots)]
			ua, ub := sa[0], sb[0]
			for i, q := range rots {
				wa := q.C*ua + q.S*sa[i+1]
				wb := q.C*ub + q.S*sb[i+1]
				ua = -q.S*ua + q.C*sa[i+1]
				ub = -q.S*ub + q.C*sb[i+1]
				sa[i], sb[i] = wa, wb
				ga += gv[i] * wa
				gb += gv[i] * wb
			}
			sa[len(sa)-1], sb[len(sb)-1] = ua, ub
		}
		ca, cb := ra[mm], rb[mm]
		ra[mm], rb[mm] = 0, 0
		ta, tb := ca-ga, cb-gb
		va += ca*ca/lam - ta*ta/o.schur
		vb += cb*cb/lam - tb*tb/o.schur
		mua += o.coef * ta
		mub += o.coef * tb
	}
	return va, mua, vb, mub
}

// after applies the additions to a row, given y2 = f2 times the row after
// the removals.
func (p *chgPass) after(row, x []float64, v, mu float64, y2 []float64) (float64, float64) {
	g := p.g
	ops := g.ops
	if p.n2 == 0 {
		for k := p.nrem; k < len(ops); k++ {
			v, mu = ops[k].apply(g, row, x, v, mu)
		}
		return v, mu
	}
	lam, m1 := g.lambda, p.m1
	for a, k := 0, p.nrem; k < len(ops); a, k = a+1, k+1 {
		o := &ops[k]
		m := o.m
		if o.dead {
			row[m] = 0
			continue
		}
		pz, gz := y2[2*a], y2[2*a+1]
		if m > m1 {
			dp, dg := dot2(o.zp[m1:m], o.gv[m1:m], row[m1:m])
			pz += dp
			gz += dg
		}
		c := (g.k.Eval(x, o.xp) - pz) / o.d
		row[m] = c
		t := c - gz
		v += t*t/o.schur - c*c/lam
		mu += o.coef * t
	}
	return v, mu
}

// early reports whether row j is brought up to date while ops are planned.
func (g *DTC) early(j int) bool { return g.count[j] > 0 || g.mark[j] }

// ensureV makes room for an m x m V. Its contents are not kept: V is only
// formed from the data by rebuild.
func (g *DTC) ensureV(m int) {
	if m <= g.vstride {
		return
	}
	s := max(2*g.vstride, 16, m)
	g.v, g.vstride = make([]float64, s*s), s
}

// applyEarly applies the op just planned to the rows of observed points
// and of points entering S.
func (g *DTC) applyEarly(o *chgOp) {
	r := g.r
	one := func(j int) {
		v, mu := o.apply(g, r.slot(j), r.point(j), r.vari[j], r.mean[j])
		r.mean[j] = mu
		if v < 0 {
			v = 0
			g.clamps++
		}
		r.vari[j] = v
	}
	if o.early != nil {
		// An addition whose new coordinate planAdd computed for each
		// observed row: what apply does, from that coordinate on.
		lam := g.lambda
		for k, j := range g.observed {
			row, c := r.slot(j), o.early[k]
			row[o.m] = c
			t := c - chol.Dot(o.gv, row[:o.m])
			v := r.vari[j] - c*c/lam + t*t/o.schur
			r.mean[j] += o.coef * t
			if v < 0 {
				v = 0
				g.clamps++
			}
			r.vari[j] = v
		}
	} else {
		for _, j := range g.observed {
			one(j)
		}
	}
	for _, j := range g.pendingAdd {
		if g.count[j] == 0 {
			one(j)
		}
	}
}

// planRemove takes row i out of S on the small side: the Nystrom factor
// is retriangularized by Givens rotations (Nystrom.Remove), the factor of
// V follows them without refactoring (chol.RotateRows; V' = Q V Q^T's
// leading block), b is rotated and beta re-solved. O(m^2).
func (g *DTC) planRemove(i int) {
	m := g.ny.Size()
	j := g.pos[i]
	start := len(g.rotBuf)
	g.rotBuf = g.ny.Remove(j, g.rotBuf)
	rots := g.rotBuf[start:]
	g.vf.RotateRows(rots)
	for _, q := range rots {
		q.Apply(g.b)
		q.Apply(g.beta)
	}
	mm := m - 1
	last := g.vf.Row(mm)
	gv := g.floats(mm)
	copy(gv, last[:mm])
	d := last[mm]
	g.vf.Truncate(mm)
	// With V_rot = R R^T, u = R11 r and s = ||r||^2 + d^2 (r, d: the last
	// row of R), so V'^{-1} u = R11^{-T} r and the Schur complement
	// s - u^T V'^{-1} u is d^2.
	g.vf.SolveLT(gv)
	// beta' = beta_1 + gv beta_last (block inverse), and every mean moves
	// by -beta_last t.
	bl := g.beta[mm]
	g.b = g.b[:mm]
	g.beta = g.beta[:mm]
	for a, v := range gv {
		g.beta[a] += v * bl
	}
	g.ops = append(g.ops, chgOp{remove: true, m: m, rots: rots, gv: gv, schur: d * d, coef: -bl})
	g.dict = append(g.dict[:j], g.dict[j+1:]...)
	for p := j; p < len(g.dict); p++ {
		g.pos[g.dict[p]] = p
	}
	g.pos[i] = -1
	g.changes++
	g.applyEarly(&g.ops[len(g.ops)-1])
}

// planAdd puts row i into S on the small side: a new pivot of K_SS, a new
// row and column of V (from the observed rows' new coordinates) appended
// to its factor, b and beta extended. O(n m + m^2).
func (g *DTC) planAdd(i int) {
	m := g.ny.Size()
	r := g.r
	zp := r.load(g.floats(m), i, m)
	drop := g.dropNear && !g.ny.legacy
	if drop && nearDependent(r.kdiag[i]-dot(zp, zp), r.kdiag[i]) {
		// SetDropNearDependent: the point stays out of S.
		g.dropped++
		g.addDropped++
		return
	}
	xp := r.point(i)
	d, dead := g.ny.addExact(xp, zp, r.kdiag[i])
	if g.ny.legacy {
		g.suspect = g.suspect || g.ny.suspect
	} else {
		g.suspect = g.suspect || g.ny.near && !drop
	}
	o := chgOp{m: m, zp: zp, d: d, xp: xp, dead: dead}
	u := g.floats(m)
	for a := range u {
		u[a] = 0
	}
	s := g.lambda
	var bn float64
	if !dead {
		// The observed rows' new coordinates are kept for applyEarly,
		// which would otherwise compute them again.
		cs := g.floats(len(g.observed))
		o.early = cs
		for k, j := range g.observed {
			c := (g.k.Eval(r.point(j), xp) - r.dotRow(j, zp)) / d
			cs[k] = c
			wc := float64(g.count[j]) * c
			r.axpyRow(u, wc, j)
			s += wc * c
			bn += c * g.ysum[j]
		}
	}
	// w = R^{-1} u is both the new row of V's factor and half of
	// gv = V^{-1} u = R^{-T} w; the Schur complement s - u.gv = s - ||w||^2
	// is the new pivot squared. Two triangular solves instead of four.
	ub := dot(u, g.beta)
	g.vf.SolveL(u)
	gv := g.floats(m)
	copy(gv, u)
	g.vf.SolveLT(gv)
	o.gv = gv
	o.schur = s - dot(u, u)
	g.vf.AppendSolved(u, s)
	// beta' = [beta - gv alpha; alpha], alpha = (b_new - u.beta)/schur,
	// and every mean moves by alpha t.
	alpha := (bn - ub) / o.schur
	for a, v := range gv {
		g.beta[a] -= v * alpha
	}
	o.coef = alpha
	g.b = append(g.b, bn)
	g.beta = append(g.beta, alpha)
	g.ops = append(g.ops, o)
	g.pos[i] = m
	g.dict = append(g.dict, i)
	g.changes++
	g.applyEarly(&g.ops[len(g.ops)-1])
}

// floats returns n float64s from the per-step arena (reset by
// applyChanges), so that planning allocates nothing once warm.
func (g *DTC) floats(n int) []float64 {
	if len(g.arena)+n > cap(g.arena) {
		// Earlier ops keep slices of the old arena; a new one is
		// started and the old stays alive until the step ends.
		g.arena = make([]float64, 0, max(2*cap(g.arena), n, 1024))
	}
	s := g.arena[len(g.arena) : len(g.arena)+n]
	g.arena = g.arena[:len(g.arena)+n]
	return s
}

// applyChanges removes the rows rem from S and adds the rows add, in one
// pass over the rows (see the top of this file). It is only called while
// every pivot of S is above nearPivot (DTC.near is false), so no point of
// S is dead; if an added point is near-dependent, the posterior is
// rebuilt in canonical order afterwards. (Under SetLegacyCore, dead
// points whose anchor left S are revived here instead.)
func (g *DTC) applyChanges(rem, add []int) error {
	r := g.r
	m0 := g.ny.Size()
	g.ops = g.ops[:0]
	g.suspect = false
	g.addDropped = 0
	// A deferred observation pass is fused into this one: the rows used
	// while planning get its variance update now, the others in chgPass.
	obs := g.obsPending
	g.obsPending = false
	if obs {
		o := &g.obsPass
		early := func(j int) {
			s := r.dotRow(j, o.v)
			r.mean[j] += s * o.gain
			r.vari[j] = clampVar(r.vari[j]-s*s/o.denom, &g.clamps)
		}
		for _, j := range g.observed {
			early(j)
		}
		for _, j := range add {
			if g.count[j] == 0 {
				early(j)
			}
		}
	}
	g.rotBuf = g.rotBuf[:0]
	g.arena = g.arena[:0]
	g.pendingAdd = add
	if len(g.mark) < r.n() {
		g.mark = append(g.mark, make([]bool, r.n()-len(g.mark))...)
	}
	for _, i := range add {
		g.mark[i] = true
	}
	// Removals first (from the back, so fewer coordinates rotate), then
	// revivals, then additions: the width never exceeds m0 + adds.
	width := max(m0, m0-len(rem)+len(add)) + 1
	r.ensureCoords(width)
	for k := len(rem) - 1; k >= 0; k-- {
		g.planRemove(rem[k])
	}
	if len(rem) > 0 && g.ny.ndead > 0 && g.ny.legacy {
		// Legacy: dead points whose anchor left S are re-tested and, when
		// they now carry a direction, moved to the end of S.
		var revive []int
		w := g.floats(g.ny.Size())
		for p, i := range g.dict {
			if g.ny.dead[p] && g.ny.legacyLiveAt(p, w) {
				revive = append(revive, i)
			}
		}
		for k := len(revive) - 1; k >= 0; k-- {
			g.planRemove(revive[k])
		}
		if len(revive) > 0 {
			g.revived += len(revive)
			g.changes -= 2 * len(revive) // a move, not a change of S
			for _, i := range revive {
				g.mark[i] = true
			}
			add = append(append([]int(nil), add...), revive...)
			g.pendingAdd = add
		}
	}
	for _, i := range add {
		g.planAdd(i)
	}
	r.m = g.ny.Size()
	// beta was carried through the ops by block updates; re-solve it once
	// so that rounding does not accumulate across steps.
	g.solveV(g.beta, g.b)
	g.chg.g, g.chg.obs = g, obs
	g.chg.prepare()
	runRows(r.n(), &g.chg, &g.wg)
	g.clamps += int(g.chg.clamped.Swap(0))
	for _, i := range add {
		g.mark[i] = false
	}
	g.pendingAdd = nil
	g.sinceChange = 0
	if g.suspect {
		// A new point is near-dependent on S: its decision (dead or live)
		// is taken in the canonical order of a rebuild.
		g.repivots++
		if err := g.rebuild(); err != nil {
			return err
		}
	}
	return nil
}

// SetDictionary makes S the given rows (in that order for new points).
// Changes are applied incrementally in one pass over the rows, O(A m)
// for the pass plus O((k+j) m) per row for k points in and j out; when
// more than a third of S changes the posterior is rebuilt (O(A m^2)).
// It returns how many points entered and left S.
func (g *DTC) SetDictionary(rows []int) (added, removed int, err error) {
	// want marks the rows of the new S (a scratch flag per row, cleared
	// on return, instead of a map per call).
	if len(g.want) < g.r.n() {
		g.want = append(g.want, make([]bool, g.r.n()-len(g.want))...)
	}
	want := g.want
	defer func() {
		for _, i := range rows {
			if i >= 0 && i < len(want) {
				want[i] = false
			}
		}
	}()
	for k, i := range rows {
		if i < 0 || i >= g.r.n() {
			return 0, 0, fmt.Errorf("gp: dictionary row %d out of range [0,%d)", i, g.r.n())
		}
		if want[i] {
			rows = rows[:k] // clear only what was set
			return 0, 0, fmt.Errorf("gp: dictionary row %d listed twice", i)
		}
		want[i] = true
	}
	rem := g.remBuf[:0]
	for _, i := range g.dict {
		if !want[i] {
			rem = append(rem, i)
		}
	}
	add := g.addBuf[:0]
	for _, i := range rows {
		if g.pos[i] < 0 {
			add = append(add, i)
		}
	}
	g.remBuf, g.addBuf = rem, add
	n := len(add) + len(rem)
	if n == 0 {
		return 0, 0, nil
	}
	// While S has a near-dependent point, every change is made by a
	// rebuild: which points are dead is decided in its canonical order,
	// the same whatever the order of the edits that led to S (DTC).
	if g.rebuildAlways || (g.near && !g.ny.legacy) || 3*n > len(g.dict)+3 {
		for _, i := range rem {
			g.pos[i] = -1
		}
		kept := g.dict[:0]
		for _, i := range g.dict {
			if want[i] {
				kept = append(kept, i)
			}
		}
		g.dict = append(kept, add...)
		for p, i := range g.dict {
			g.pos[i] = p
		}
		g.changes += n
		if err := g.rebuild(); err != nil {
			return 0, 0, err
		}
		if g.dropNear {
			// The rebuild may have left near-dependent points out:
			// count what actually entered and left.
			added, removed = 0, len(rem)
			for _, i := range add {
				if g.pos[i] >= 0 {
					added++
				}
			}
			removed += len(kept) - (len(g.dict) - added)
			return added, removed, nil
		}
		return len(add), len(rem), nil
	}
	err = g.applyChanges(rem, add)
	return len(add) - g.addDropped, len(rem), err
}

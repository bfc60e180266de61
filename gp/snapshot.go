package gp

import (
	"math"

	"github.com/bkb-go/bkb/internal/snapenc"
	"github.com/bkb-go/bkb/kernel"
)

// dtcStateVersion is the layout of EncodeState; a snapshot of another
// layout is refused (its study then replays its records instead).
const dtcStateVersion = 3

// EncodeState appends the posterior's complete state to w: the
// candidates and observed points, the dictionary and its factor, V's
// factor, the embedding, means and variances, the counters and the
// resampling state, so that DecodeDTC returns a posterior that makes,
// from then on, exactly the computations this one makes (the same
// floats in the same order). O((A + t) m) bytes for A candidates, t
// observed points and m inducing points. The kernel is not encoded: the
// caller rebuilds it (DecodeDTC's k).
func (g *DTC) EncodeState(w *snapenc.Writer) {
	w.Int(dtcStateVersion)
	w.Int(g.dim)
	w.Float(g.lambda)
	// The Nystrom factor on S.
	ny := g.ny
	w.Floats(ny.points)
	w.Floats(ny.diag)
	ny.l.Encode(w)
	w.Bool(ny.exact)
	w.Bools(ny.dead)
	w.Int(ny.ndead)
	w.Bool(ny.near)
	w.Bool(ny.legacy)
	w.Bool(ny.suspect)
	w.Bools(ny.floored)
	w.Int(ny.nfloor)
	w.Bool(ny.twinRows)
	w.Bool(ny.dropDead)
	// The rows: points, k(x,x), the first m coordinates of each embedding
	// row (the rest of a row's storage is not state: a coordinate is
	// written before it is read), means and variances, and the layout.
	r := g.r
	w.Floats(r.x)
	w.Floats(r.kdiag)
	w.Int(r.stride)
	w.Int(r.m)
	w.Floats(r.mean)
	w.Floats(r.vari)
	for j := 0; j < r.n(); j++ {
		w.Floats(r.slot(j)[:r.m])
	}
	w.Int(g.nc)
	w.Ints(g.count)
	w.Floats(g.ysum)
	w.Floats(g.thresh)
	w.Ints(g.observed)
	w.Int(g.nobs)
	w.Ints(g.dict)
	w.Ints(g.pos)
	// V's scratch (g.v) is overwritten before every use: only its size
	// is state (ensureV grows it).
	w.Int(g.vstride)
	g.vf.Encode(w)
	w.Floats(g.b)
	w.Floats(g.beta)
	w.Int(g.changes)
	w.Int(g.rebuilds)
	w.Int(g.sinceChange)
	w.Bool(g.rebuildAlways)
	w.Floats(g.preVar)
	w.Bool(g.preValid)
	w.Bool(g.leverageAfter)
	w.Bool(g.suspect)
	w.Bool(g.near)
	w.Int(g.repivots)
	w.Int(g.clamps)
	w.Int(g.revived)
	w.Int(g.condJitter)
	w.Bool(g.dropNear)
	w.Int(g.dropped)
	// A deferred observation pass.
	w.Bool(g.obsPending)
	w.Floats(g.obsV)
	w.Float(g.obsPass.gain)
	w.Float(g.obsPass.denom)
}

// DecodeDTC returns the posterior that EncodeState wrote, with kernel k
// (the kernel of the encoded posterior: the caller keeps its parameters).
func DecodeDTC(k kernel.Kernel, rd *snapenc.Reader) (*DTC, error) {
	if v := rd.Int(); v != dtcStateVersion && rd.Err() == nil {
		rd.Fail("DTC state layout %d, this build reads %d", v, dtcStateVersion)
	}
	dim, lambda := rd.Int(), rd.Float()
	if err := rd.Err(); err != nil {
		return nil, err
	}
	g, err := NewDTC(k, dim, lambda)
	if err != nil {
		return nil, err
	}
	ny := g.ny
	ny.points = rd.Floats()
	ny.diag = rd.Floats()
	ny.l.Decode(rd)
	ny.exact = rd.Bool()
	ny.dead = rd.Bools()
	ny.ndead = rd.Int()
	ny.near = rd.Bool()
	ny.legacy = rd.Bool()
	ny.suspect = rd.Bool()
	ny.floored = rd.Bools()
	ny.nfloor = rd.Int()
	ny.twinRows = rd.Bool()
	ny.dropDead = rd.Bool()
	r := g.r
	r.x = rd.Floats()
	r.kdiag = rd.Floats()
	stride, m := rd.Int(), rd.Int()
	r.mean = rd.Floats()
	r.vari = rd.Floats()
	n := len(r.kdiag)
	if rd.Err() == nil && (len(r.x) != n*dim || len(r.mean) != n || len(r.vari) != n || m < 0 || stride < m ||
		m != ny.l.Size() || len(ny.points) != m*dim || len(ny.diag) != m) {
		rd.Fail("DTC rows: %d points of %d coordinates, embedding %d of stride %d, |S| %d", n, len(r.x), m, stride, ny.l.Size())
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if stride > 0 {
		r.setStride(stride)
	}
	r.m = m
	for j := 0; j < n && rd.Err() == nil; j++ {
		if m == 0 {
			if k := rd.Len(8); k != 0 {
				rd.Fail("embedding row %d has %d coordinates, want 0", j, k)
			}
			continue
		}
		rd.FloatsInto(r.slot(j)[:m])
	}
	g.nc = rd.Int()
	g.count = rd.Ints()
	g.ysum = rd.Floats()
	g.thresh = rd.Floats()
	g.observed = rd.Ints()
	g.nobs = rd.Int()
	g.dict = rd.Ints()
	g.pos = rd.Ints()
	g.vstride = rd.Int()
	if g.vstride < 0 || g.vstride > 1<<20 {
		rd.Fail("V stride %d", g.vstride)
	} else if g.vstride > 0 {
		g.v = make([]float64, g.vstride*g.vstride)
	}
	g.vf.Decode(rd)
	g.b = rd.Floats()
	g.beta = rd.Floats()
	g.changes = rd.Int()
	g.rebuilds = rd.Int()
	g.sinceChange = rd.Int()
	g.rebuildAlways = rd.Bool()
	g.preVar = rd.Floats()
	g.preValid = rd.Bool()
	g.leverageAfter = rd.Bool()
	g.suspect = rd.Bool()
	g.near = rd.Bool()
	g.repivots = rd.Int()
	g.clamps = rd.Int()
	g.revived = rd.Int()
	g.condJitter = rd.Int()
	g.dropNear = rd.Bool()
	g.dropped = rd.Int()
	g.obsPending = rd.Bool()
	g.obsV = rd.Floats()
	g.obsPass.r, g.obsPass.v = r, g.obsV
	g.obsPass.gain, g.obsPass.denom = rd.Float(), rd.Float()
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if g.nc > n || len(g.count) != n || len(g.ysum) != n || len(g.thresh) != n || len(g.pos) != n ||
		len(g.dict) != m || len(g.b) != m || len(g.beta) != m || g.vf.Size() != m && m > 0 ||
		len(ny.dead) != 0 && len(ny.dead) != m || len(ny.floored) != len(ny.dead) {
		rd.Fail("DTC state sizes disagree (%d rows, %d candidates, |S| %d)", n, g.nc, m)
		return nil, rd.Err()
	}
	nf := 0
	for _, f := range ny.floored {
		if f {
			nf++
		}
	}
	if nf != ny.nfloor {
		rd.Fail("%d floored pivots marked, %d counted", nf, ny.nfloor)
		return nil, rd.Err()
	}
	for p, i := range g.dict {
		if i < 0 || i >= n || g.pos[i] != p {
			rd.Fail("dictionary position %d: row %d", p, i)
			return nil, rd.Err()
		}
	}
	for _, i := range g.observed {
		if i < 0 || i >= n {
			rd.Fail("observed row %d of %d", i, n)
			return nil, rd.Err()
		}
	}
	for i := g.nc; i < n; i++ {
		g.extra[pointKey(r.point(i))] = i
	}
	for _, v := range g.thresh {
		if !(math.IsNaN(v) || v >= 0 && v <= 1) {
			rd.Fail("resampling threshold %v", v)
			return nil, rd.Err()
		}
	}
	return g, nil
}

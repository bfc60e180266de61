package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// Candidate sets that change during a run: AddCandidates
// embeds new candidates in the current posterior without a rebuild, and
// RetireCandidates drops candidates that can no longer win, so that the
// memory a long run holds stays bounded by the live candidates (plus the
// observed points, which the posterior needs).

// appendRows appends the rows of x (checked) to r with the given
// posterior for each, computed by fill(i, point, kxx, z) into z (length
// r.m) returning (mean, variance).
func appendRows(k kernel.Kernel, r *rows, x *mat.Dense, dim int, fill func(p []float64, kxx float64, z []float64) (float64, float64)) (first int, err error) {
	n, c := x.Dims()
	if c != dim {
		return 0, fmt.Errorf("gp: candidates have dimension %d, want %d", c, dim)
	}
	raw := x.RawMatrix()
	for i := 0; i < n; i++ {
		p := raw.Data[i*raw.Stride : i*raw.Stride+dim]
		if err := checkPoint(p, dim); err != nil {
			return 0, fmt.Errorf("gp: candidate %d: %w", i, err)
		}
	}
	first = r.n()
	z := make([]float64, r.m)
	for i := 0; i < n; i++ {
		p := raw.Data[i*raw.Stride : i*raw.Stride+dim]
		kxx := kernel.Diag(k, p)
		mean, vari := fill(p, kxx, z)
		r.add(p, kxx, z, mean, vari)
	}
	return first, nil
}

// AddCandidates appends the rows of x to the candidate set, at any time,
// and returns the index of the first: they get indices first, first+1,
// ... and their posterior is the one they would have had as candidates
// from the start (to rounding). Each costs O(t^2 + t d): c(x) = L^{-1}
// k_t(x), a triangular solve against the factor, then the mean c.alpha
// and variance k(x,x) - ||c||^2. Nothing is rebuilt.
func (g *Exact) AddCandidates(x *mat.Dense) (first int, err error) {
	if g.cand == nil {
		g.cand = &rows{d: g.dim}
		g.cand.m = g.Len()
	}
	return appendRows(g.k, g.cand, x, g.dim, func(p []float64, kxx float64, z []float64) (float64, float64) {
		c := g.embed(z, p)
		v := kxx - dot(c, c)
		return dot(c, g.alpha), clampVar(v, &g.clamps)
	})
}

// RetireCandidates removes the listed candidates (for example those whose
// upper confidence bound is below the best lower bound, which can no
// longer win) and compacts the others: candidate j gets index
// newIndex[j], or -1 if retired; the order of the survivors is kept.
// The storage is reused, so adding and retiring candidates keeps memory
// bounded by the most candidates held at once. O(A t).
func (g *Exact) RetireCandidates(retire []int) (newIndex []int, err error) {
	if g.cand == nil {
		return nil, fmt.Errorf("gp: no candidate set")
	}
	n := g.cand.n()
	drop := make([]bool, n)
	for _, i := range retire {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("gp: retired candidate %d out of range [0,%d)", i, n)
		}
		drop[i] = true
	}
	newIndex = make([]int, n)
	order := make([]int, 0, n)
	for i := 0; i < n; i++ {
		newIndex[i] = -1
		if !drop[i] {
			newIndex[i] = len(order)
			order = append(order, i)
		}
	}
	g.cand.gather(order, nil)
	return newIndex, nil
}

// gather rearranges the rows so that new row k is old row order[k]
// (rows not listed are dropped). Rows whose new position is after their
// old one must be given in saved (old row -> copy), taken before; every
// other move is to a lower or equal position, done in increasing order,
// in place. extra moves per-row slices the caller keeps alongside.
func (r *rows) gather(order []int, saved map[int]*savedRow) {
	for k, i := range order {
		if s, ok := saved[i]; ok {
			r.put(k, s)
			continue
		}
		if k == i {
			continue
		}
		copy(r.x[k*r.d:(k+1)*r.d], r.x[i*r.d:(i+1)*r.d])
		r.kdiag[k], r.mean[k], r.vari[k] = r.kdiag[i], r.mean[i], r.vari[i]
		copy(r.slot(k)[:r.m], r.slot(i)[:r.m])
	}
	n := len(order)
	r.x, r.kdiag, r.mean, r.vari = r.x[:n*r.d], r.kdiag[:n], r.mean[:n], r.vari[:n]
	if r.stride > 0 {
		nc := (n + r.rpc - 1) / r.rpc
		for c := nc; c < len(r.chunks); c++ {
			r.chunks[c] = nil
		}
		r.chunks = r.chunks[:nc]
		if nc > 0 {
			r.chunks[nc-1] = r.chunks[nc-1][:(n-(nc-1)*r.rpc)*r.stride]
		}
	}
}

type savedRow struct {
	x, z            []float64
	kxx, mean, vari float64
	count           int
	ysum, thresh    float64
}

func (r *rows) save(i int) *savedRow {
	return &savedRow{
		x:   append([]float64(nil), r.point(i)...),
		z:   r.load(make([]float64, r.m), i, r.m),
		kxx: r.kdiag[i], mean: r.mean[i], vari: r.vari[i],
	}
}

func (r *rows) put(k int, s *savedRow) {
	copy(r.x[k*r.d:(k+1)*r.d], s.x)
	r.store(k, s.z)
	r.kdiag[k], r.mean[k], r.vari[k] = s.kxx, s.mean, s.vari
}

// AddCandidates appends the rows of x to the candidate set, at any time,
// and returns the index of the first; their posterior is the one they
// would have had as candidates from the start (to rounding). Each is
// embedded in the current dictionary's basis, z = L^{-1} k_S(x), with
// mean beta.z and variance (k(x,x) - ||z||^2)/lambda + ||R^{-1} z||^2 from
// the current factor R of V: O(m d + m^2) per point, never a rebuild.
// Rows of points passed to Observe that are not candidates move up to
// make room (their row numbers, as Observe returned them, change by the
// number added; Dictionary reports the new ones).
func (g *DTC) AddCandidates(x *mat.Dense) (first int, err error) {
	g.flush()
	if _, c := x.Dims(); c != g.dim {
		return 0, fmt.Errorf("gp: candidates have dimension %d, want %d", c, g.dim)
	}
	r := g.r
	nOld, nc := r.n(), g.nc
	q := make([]float64, g.ny.Size())
	if _, err := appendRows(g.k, r, x, g.dim, func(p []float64, kxx float64, z []float64) (float64, float64) {
		res := g.ny.Embed(z, p)
		copy(q, z)
		g.vf.SolveL(q)
		return dot(z, g.beta), clampVar(res, &g.clamps)/g.lambda + dot(q, q)
	}); err != nil {
		return 0, err
	}
	k := r.n() - nOld
	g.count = append(g.count, make([]int, k)...)
	g.ysum = append(g.ysum, make([]float64, k)...)
	for j := 0; j < k; j++ {
		g.thresh = append(g.thresh, math.NaN())
		g.pos = append(g.pos, -1)
	}
	if nOld > nc {
		// New rows were appended after the non-candidate rows: rotate
		// them into place, the candidates first.
		order := make([]int, 0, r.n())
		saved := map[int]*savedRow{}
		for i := 0; i < nc; i++ {
			order = append(order, i)
		}
		for i := nOld; i < r.n(); i++ {
			order = append(order, i)
		}
		for i := nc; i < nOld; i++ {
			order = append(order, i)
			saved[i] = g.saveRow(i)
		}
		g.gatherRows(order, saved)
	}
	g.nc += k
	return nc, nil
}

// RetireCandidates removes the listed candidates and compacts the others:
// candidate j gets index newIndex[j] (in the same order), or -1 if
// retired. A retired candidate that was observed, or is in S, stays as a
// non-candidate row (the posterior needs its data), after the remaining
// candidates; the others are freed, their storage reused by later
// AddCandidates, so memory stays bounded by the candidates held at once
// plus the observed points. O(A m).
func (g *DTC) RetireCandidates(retire []int) (newIndex []int, err error) {
	g.flush()
	nc := g.nc
	drop := make([]bool, nc)
	for _, i := range retire {
		if i < 0 || i >= nc {
			return nil, fmt.Errorf("gp: retired candidate %d out of range [0,%d)", i, nc)
		}
		drop[i] = true
	}
	newIndex = make([]int, nc)
	var order, keepData []int
	for i := 0; i < nc; i++ {
		newIndex[i] = -1
		if !drop[i] {
			newIndex[i] = len(order)
			order = append(order, i)
		} else if g.count[i] > 0 || g.pos[i] >= 0 {
			keepData = append(keepData, i)
		}
	}
	newNC := len(order)
	saved := map[int]*savedRow{}
	for _, i := range keepData {
		saved[i] = g.saveRow(i)
		order = append(order, i)
	}
	for i := nc; i < g.r.n(); i++ {
		order = append(order, i)
	}
	g.gatherRows(order, saved)
	for _, i := range keepData {
		k := pointKey(g.r.point(newRowOf(order, i)))
		if _, ok := g.extra[k]; !ok {
			g.extra[k] = newRowOf(order, i)
		}
	}
	g.nc = newNC
	return newIndex, nil
}

func newRowOf(order []int, old int) int {
	for k, i := range order {
		if i == old {
			return k
		}
	}
	return -1
}

func (g *DTC) saveRow(i int) *savedRow {
	s := g.r.save(i)
	s.count, s.ysum, s.thresh = g.count[i], g.ysum[i], g.thresh[i]
	return s
}

// gatherRows rearranges every per-row slice (see rows.gather) and remaps
// the row numbers held in the dictionary, the observed list and the map
// of non-candidate points.
func (g *DTC) gatherRows(order []int, saved map[int]*savedRow) {
	n := g.r.n()
	newRow := make([]int, n)
	for i := range newRow {
		newRow[i] = -1
	}
	for k, i := range order {
		newRow[i] = k
	}
	for k, i := range order {
		if s, ok := saved[i]; ok {
			g.count[k], g.ysum[k], g.thresh[k] = s.count, s.ysum, s.thresh
		} else if k != i {
			g.count[k], g.ysum[k], g.thresh[k] = g.count[i], g.ysum[i], g.thresh[i]
		}
	}
	m := len(order)
	g.r.gather(order, saved)
	g.count, g.ysum, g.thresh = g.count[:m], g.ysum[:m], g.thresh[:m]
	for p, i := range g.dict {
		g.dict[p] = newRow[i]
	}
	obs := g.observed[:0]
	var pre []float64
	for k, i := range g.observed {
		if j := newRow[i]; j >= 0 {
			obs = append(obs, j)
			if g.preValid && k < len(g.preVar) {
				pre = append(pre, g.preVar[k])
			}
		}
	}
	g.observed = obs
	if g.preValid {
		g.preVar = append(g.preVar[:0], pre...)
	}
	for key, i := range g.extra {
		if j := newRow[i]; j >= 0 {
			g.extra[key] = j
		} else {
			delete(g.extra, key)
		}
	}
	g.pos = g.pos[:m]
	for i := range g.pos {
		g.pos[i] = -1
	}
	for p, i := range g.dict {
		g.pos[i] = p
	}
	if len(g.mark) > m {
		g.mark = g.mark[:m]
	}
}

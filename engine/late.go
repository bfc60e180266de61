package engine

import (
	"container/heap"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/bkb-go/bkb/gp"
)

// A local posterior late in a run (configuration version 11,
// Rules.LateLocal). BKB's dictionary follows the effective dimension of all the
// observed points at the ridge lambda, which grows with t as the points
// cover more regions at the kernel's scale: on Hartmann 6 at 1% noise it
// held 430-630 points by t = 10,000, and the policy's cost per trial,
// O(m^2) per scored candidate and O(t m^2) per redraw of S, grew with it
// (docs/long-studies.md, "A coarser sketch"). Late in a run the asks are in
// the incumbent's basin, so from lateStartAt observations on (a third of
// the budget, from lateMin to lateStart; lateStart without a budget) the
// posterior is BKB's on the lateNear observations nearest the incumbent
// (in the distance scaled by the fitted length scales), rebuilt every lateRebuild
// observations and after each refit, and updated by BKB's rule in between;
// the asks are trust-region candidates and polishes inside the box those
// points span (half its half-widths, at most the trust region's), with
// the pool, the local quadratic steps and the exploitation asks as before,
// and no global candidates or probes. This is TuRBO's local model
// (Eriksson et al. 2019) around the incumbent, with BKB's dictionary on
// its points: the cost of a late trial follows lateNear, not t. The
// posterior keeps that many points because its mean averages the noise
// over them: with 256 points it found 2-4 times worse points than the
// global posterior at 10,000 trials. The constants were chosen on seeds
// 1-3 of Hartmann 6 (docs/long-studies.md, "A local posterior late in a
// run"), among 256, 1,024 and 2,048 points and a start at 1,000, 2,000, a
// fifth or a third of the budget.
const (
	lateStart   = 5000
	lateMin     = 1000
	lateShare   = 3
	lateNear    = 1024
	lateRebuild = 256
	// lateBoxShare is the share of the near points' half-widths that
	// the candidates span.
	lateBoxShare = 0.5
)

// late holds lateStart, lateMin, lateNear and lateRebuild; a test lowers
// them (in a test that is not parallel: they are the package's).
var late = struct{ start, min, near, rebuild int }{lateStart, lateMin, lateNear, lateRebuild}

// lateLocal reports whether the posterior at t observations is the local
// one: BKB's, without conditions, several objectives or constraints.
func (r *refiner) lateLocal(t int) bool {
	return r.cfg.rules().LateLocal && t >= r.lateStartAt() && r.usesDTC() && r.cond == nil && !r.cfg.Tradeoffs()
}

// lateStartAt is the observations from which the posterior is local: a
// lateShare of the budget, at least lateMin and at most lateStart, or
// lateStart without a budget. A third of the budget is where horizonBeta
// starts to decay and local steps begin (localStartShare): on Hartmann 6
// at 1% noise version 10 was in the optimum's basin by t = 1,667 of a
// 5,000-trial run on seeds 1-3, and on seed 1 not at t = 1,000, where a
// late phase from a fifth of the budget kept it in the wrong basin
// (docs/long-studies.md). Past lateStart the global posterior costs 20-50
// ms per trial.
func (r *refiner) lateStartAt() int {
	if r.cfg.Budget > 0 && late.min < late.start {
		return min(max(late.min, r.cfg.Budget/lateShare), late.start)
	}
	return late.start
}

// syncLate brings the local posterior up to t observations.
func (r *refiner) syncLate(e *Engine, t int) error {
	due, cold := r.fitDue(t)
	if due {
		if err := r.refit(e, cold); err != nil {
			return err
		}
	}
	if due || r.lateInc == nil || t-r.lateBuilt >= late.rebuild {
		return r.rebuildLate(e)
	}
	for i := r.lateSeen; i < t; i++ {
		o := e.succ[i]
		if err := r.observe(e.enc[o.arm*e.e:(o.arm+1)*e.e], r.toldValue(e.reward(o.value))); err != nil {
			return err
		}
	}
	r.lateSeen = t
	return nil
}

// rebuildLate makes the local posterior afresh: BKB's on the lateNear
// observations nearest the incumbent (the previous local posterior's, or
// the best observed point at the first build), its dictionary drawn from
// the previous one's points as a refit's is (rebuild); then the incumbent,
// the near point of best posterior mean, and the box the points span.
func (r *refiner) rebuildLate(e *Engine) error {
	k, lambda, err := r.kernelAndNoise()
	if err != nil {
		return err
	}
	r.kern, r.lambda = k, lambda
	t := len(e.succ)
	center := r.lateInc
	if center == nil {
		center = e.bestObserved()
	}
	w := make([]float64, e.e)
	for j := range w {
		w[j] = 1
		if r.hp != nil {
			w[j] = 1 / r.hp.LengthScales[j]
		}
	}
	near, _ := nearest(e, center, w, min(late.near, t))
	slices.Sort(near) // observed in the order of the records
	g, err := gp.NewDTCWith(k, e.e, lambda, r.cfg.coreOptions())
	if err != nil {
		return err
	}
	rowPoint, err := r.observeForDraw(g, e, near, r.dictionaryKeys(r.dtc))
	if err != nil {
		return err
	}
	r.rsSrc = rand.NewPCG(r.cfg.Seed^streamResample, uint64(t))
	r.rs = rand.New(r.rsSrc)
	g.SetLeverageAfterObservation(true)
	_, _, err = g.Resample(r.rs, r.cfg.Qbar)
	g.SetLeverageAfterObservation(false)
	if err != nil {
		return err
	}
	r.dtc, r.rowPoint, r.gain = g, rowPoint, 0
	r.lateBuilt, r.lateSeen = t, t
	// The incumbent and the box.
	pts := make([][]float64, 0, len(near))
	for _, row := range slices.Sorted(maps.Keys(rowPoint)) {
		pts = append(pts, rowPoint[row])
	}
	ms, vs := make([]float64, len(pts)), make([]float64, len(pts))
	if err := g.PredictBatch(pts, ms, vs); err != nil {
		return err
	}
	bi := 0
	for i := range pts {
		if ms[i] > ms[bi] {
			bi = i
		}
	}
	inc := slices.Clone(pts[bi])
	h := make([]float64, e.e)
	for _, x := range pts {
		for j := range x {
			h[j] = math.Max(h[j], math.Abs(x[j]-inc[j]))
		}
	}
	r.lateInc, r.lateHalf = inc, h
	return nil
}

// lateIncumbent returns the incumbent of a late ask: of the incumbent of
// the last rebuild and the points observed since, the one of best
// posterior mean (the earliest of ties).
func (r *refiner) lateIncumbent(e *Engine) []float64 {
	best := r.lateInc
	bv, _ := r.predict(best)
	for i := r.lateBuilt; i < len(e.succ); i++ {
		o := e.succ[i]
		x := e.enc[o.arm*e.e : (o.arm+1)*e.e]
		if m, _ := r.predict(x); m > bv {
			best, bv = x, m
		}
	}
	return best
}

// lateHalfWidths returns the half-widths of a late ask's candidates:
// lateBoxShare of the near points' half-widths, at most the trust
// region's radius times the ARD weights.
func (r *refiner) lateHalfWidths(weights []float64) []float64 {
	w := make([]float64, r.d)
	for j := range w {
		wj := 1.0
		if weights != nil {
			wj = weights[j]
		}
		// Floored: a coordinate on which every near point agrees (a
		// discrete one, often) keeps a positive weight, which
		// candidates.TrustRegion requires; its draws snap back to the
		// point's level.
		w[j] = math.Max(math.Min(r.region.Radius*wj, lateBoxShare*r.lateHalf[j]), lateMinHalf)
	}
	return w
}

// lateMinHalf is the least half-width of a late ask's candidates.
const lateMinHalf = 1e-9

// latePenalty is the polish's pull back into the box of half-widths h
// around center: the acquisition less a steep quadratic in the excess,
// so that L-BFGS stays where the local posterior has data.
func latePenalty(x, center, h []float64) float64 {
	var s float64
	for j, v := range x {
		if ex := math.Abs(v-center[j]) - h[j]; ex > 0 {
			q := ex / math.Max(h[j], 1e-9)
			s += q * q
		}
	}
	return 1000 * s
}

// nearest returns the indices of the k observations nearest c in the
// distance scaled by w (nil: unscaled), nearest first, ties to the earlier
// observation, and their squared distances: a bounded max-heap
// (container/heap), O(t log k).
func nearest(e *Engine, c, w []float64, k int) (idx []int, dist2 []float64) {
	h := make(farthestFirst, 0, k)
	for i, o := range e.succ {
		x := e.enc[o.arm*e.e : (o.arm+1)*e.e]
		var s float64
		for j := range x {
			d := x[j] - c[j]
			if w != nil {
				d *= w[j]
			}
			s += d * d
		}
		it := nearItem{s, i}
		switch {
		case len(h) < k:
			heap.Push(&h, it)
		case k > 0 && it.before(h[0]):
			h[0] = it
			heap.Fix(&h, 0)
		}
	}
	slices.SortFunc(h, func(a, b nearItem) int {
		switch {
		case a.before(b):
			return -1
		case b.before(a):
			return 1
		}
		return 0
	})
	idx, dist2 = make([]int, len(h)), make([]float64, len(h))
	for j, it := range h {
		idx[j], dist2[j] = it.i, it.d
	}
	return idx, dist2
}

// nearItem is an observation's squared distance d and index i.
type nearItem struct {
	d float64
	i int
}

// before orders by distance, ties by index: a total order, so that the
// nearest k are one set whatever the heap does.
func (a nearItem) before(b nearItem) bool { return a.d < b.d || a.d == b.d && a.i < b.i }

// farthestFirst is a max-heap of nearItems (heap.Interface).
type farthestFirst []nearItem

func (h farthestFirst) Len() int           { return len(h) }
func (h farthestFirst) Less(i, j int) bool { return h[j].before(h[i]) }
func (h farthestFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *farthestFirst) Push(x any)        { *h = append(*h, x.(nearItem)) }
func (h *farthestFirst) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// inBox reports whether x is in the box of half-widths h around c.
func inBox(x, c, h []float64) bool {
	for j, v := range x {
		if math.Abs(v-c[j]) > h[j] {
			return false
		}
	}
	return true
}

// LowerLateForTest sets the observations from which version 11's posterior
// is local (whatever the budget), the near points it holds and its rebuild
// period, so that tests of other packages reach the late phase in a short
// study, and returns the function that restores them. Not safe while any
// study runs: call it from a test that is not parallel.
func LowerLateForTest(start, near, rebuild int) (restore func()) {
	saved := late
	late.start, late.min, late.near, late.rebuild = start, start, near, rebuild
	return func() { late = saved }
}

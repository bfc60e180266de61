package bandit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/acquisition"
	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
)

// PointPolicy chooses points of the unit box [0,1]^d rather than arms of
// a finite set: the interface of policies that discretise the domain
// themselves, such as Ada-BKB. Rewards are maximised. A caller with
// another box maps [0,1]^d onto it (x_i -> lo_i + x_i (hi_i - lo_i)).
type PointPolicy interface {
	// Ask returns the next point to evaluate, a fresh slice in [0,1]^d.
	Ask() ([]float64, error)
	// Tell records the reward y observed at x (any point of the box).
	Tell(x []float64, y float64) error
	// Name identifies the policy ("ada-bkb").
	Name() string
}

// AdaBKBOptions configures NewAdaBKB. The embedded Options are those of
// BKB; the default kernel is RBF with length scale 0.2 (the unit box).
type AdaBKBOptions struct {
	Options
	// N is the number of children of a split cell (default 3, the
	// authors' choice: with N odd the middle child keeps its parent's
	// center, so the evaluations there carry over).
	N int
	// HMax is the maximal depth of the tree (default 5 d: every side can
	// be split about 5 times, to 3^-5 of the box with N = 3; deeper trees
	// cost more leaves for little gain at T <= 500: on a 2-D test 10 d gave
	// 10^4 leaves and 8x the time for a simple regret of 5e-7 against 2e-5).
	HMax int
	// F scales the kernel bound V(cell) = F d_k(center, corner): a bound
	// on the RKHS norm of the reward, in the reward's units (default 2,
	// for rewards standardised to unit variance; the authors' code uses
	// F = 1 with the looser g(r) = sqrt(2) r / l for the RBF kernel). Too
	// small an F prunes and stops refining too early: on Hartmann 3
	// (standardised, T = 300, 3 seeds) F = 1 and 1.5 stopped at a simple
	// regret of 0.42 on every seed, F = 2 reached 0.001-0.004; larger F
	// costs more leaves.
	F float64
	// MaxLeaves bounds the leaf set (default 2,000), and with it memory and
	// the per-step cost: a split that would exceed it first retires the
	// leaves with the smallest upper bound I. Measured on Hartmann 3,
	// Branin and Hartmann 6 (T = 500, 3 seeds): 2,000 gave the simple
	// regret of 5,000 at half the time; stopping splits at the cap instead
	// of retiring left Hartmann 3 at 0.001-0.004 against 0.0003-0.0005.
	MaxLeaves int
	// NoPrune keeps every leaf (for tests and comparisons).
	NoPrune bool
}

// adaCell is a node of the partition tree: a box [lo, hi] with its center
// as the representative point.
type adaCell struct {
	lo, hi, x []float64
	level     int
	v         float64 // F d_k(x, corner): sup of |f(y) - f(x)| over the cell for ||f||_H <= F
	parentU   float64 // parent's UCB when it was split (+Inf for the root)
	parentV   float64 // parent's v
	mean, sd  float64 // posterior at x; sd on the UCB's scale
	ucb, idx  float64 // UCB at x and the cell's upper bound I
}

// AdaBKB is Ada-BKB (Rando, Carratino, Villa, Rosasco, "Ada-BKB: scalable
// Gaussian process optimization on continuous domains by adaptive
// discretization", AISTATS 2022; the authors' code
// github.com/Akatsuki96/adabkb, optimizer/adabkb.py) over [0,1]^d.
//
// It keeps a partition of the box into cells (a tree; the root is the box
// and a split cuts a cell into N equal children along its longest side)
// and runs BKB, the DTC posterior with dictionary resampling after every
// observation, on the cells' centers. Each cell has the upper bound
//
//	I(cell) = min(u(x) + V(cell), u(parent) + V(parent))
//
// (adabkb.py, __update_I, adds V(cell) to both terms; both bounds hold,
// and the tighter one prunes more), with u the UCB at a center and V(cell) a bound
// on how far f can move from the center inside the cell: for ||f||_H <= F,
// |f(y) - f(x)| <= F d_k(x, y), d_k(x, y)^2 = k(x,x) + k(y,y) - 2k(x,y)
// (the paper's Assumption on g), and for a stationary kernel decreasing in
// every coordinate distance (RBF, Matern, ARD or not) the supremum over the
// cell is at a corner, so V(cell) = F d_k(center, corner) exactly. The
// authors use the looser g(v_1 rho^h) = sqrt(2)/l v_1 rho^h per level.
//
// Ask takes the leaf with the largest I; if its confidence width
// beta sd is at most V(cell) (the center is known as well as the cell's
// size allows) and its depth is below HMax, it is split and the choice
// repeated; otherwise its center is returned (adabkb.py, step). After
// every Tell the posterior at every leaf's center is recomputed and leaves
// whose I is below the best lower bound u - 2 beta sd over the leaves are
// pruned (adabkb.py, __prune_leafset): under valid confidence bounds they
// cannot hold the maximum. The leaf with the best lower bound is never
// pruned.
//
// Cost: the leaves' posteriors use gp.DTC.Predict, O(m d + m^2) per leaf
// and two allocations each, so a step costs O(L (m d + m^2)) for L leaves
// plus an O(n m) DTC update; a future incremental candidate API of gp
// would make it O(L m).
//
// AdaBKB is sequential: an Ask without a Tell in between returns the same
// point again (pending points are not conditioned on). It is deterministic
// under Options.Seed and not safe for concurrent use.
type AdaBKB struct {
	opt     AdaBKBOptions
	dim     int
	dtc     *gp.DTC
	rng     *rand.Rand
	kappa2  float64
	cells   []adaCell
	leaves  []int // indices into cells
	beta    float64
	best    int // leaf (index into leaves' cells) with the best lower bound, -1 if none
	pruned  int
	retired int
	splits  int
}

// NewAdaBKB returns Ada-BKB on [0,1]^dim.
func NewAdaBKB(dim int, opt AdaBKBOptions) (*AdaBKB, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("bandit: Ada-BKB needs a positive dimension, got %d", dim)
	}
	if opt.Kernel == nil {
		opt.Kernel = kernel.RBF{LengthScale: 0.2}
	}
	corners := mat.NewDense(2, dim, nil)
	for j := 0; j < dim; j++ {
		corners.Set(1, j, 1)
	}
	opt.defaults(corners)
	if opt.N == 0 {
		opt.N = 3
	}
	if opt.HMax == 0 {
		opt.HMax = 5 * dim
	}
	if opt.F == 0 {
		opt.F = 2
	}
	if opt.MaxLeaves == 0 {
		opt.MaxLeaves = 2000
	}
	switch {
	case opt.N < 2:
		return nil, fmt.Errorf("bandit: Ada-BKB needs N >= 2 children per split, got %d", opt.N)
	case opt.HMax < 0:
		return nil, fmt.Errorf("bandit: Ada-BKB max depth must be >= 0, got %d", opt.HMax)
	case !(opt.F > 0) || math.IsInf(opt.F, 0):
		return nil, fmt.Errorf("bandit: Ada-BKB bound F must be positive and finite, got %v", opt.F)
	case opt.MaxLeaves < 1:
		return nil, fmt.Errorf("bandit: Ada-BKB max leaves must be >= 1, got %d", opt.MaxLeaves)
	}
	if err := opt.validate(); err != nil {
		return nil, err
	}
	g, err := gp.NewDTCWith(opt.Kernel, dim, opt.Lambda, gp.CoreOptions{LegacyCore: opt.LegacyCore, DeadPivots: opt.DeadPivots})
	if err != nil {
		return nil, err
	}
	p := &AdaBKB{opt: opt, dim: dim, dtc: g, best: -1,
		rng: rand.New(rand.NewPCG(opt.Seed, 0x61_64_61))}
	lo, hi := make([]float64, dim), make([]float64, dim)
	for j := range hi {
		hi[j] = 1
	}
	root := p.newCell(lo, hi, 0, math.Inf(1), math.Inf(1))
	p.kappa2 = kernel.Diag(opt.Kernel, root.x)
	p.beta = p.betaNow()
	if err := p.predict(&root); err != nil {
		return nil, err
	}
	p.cells = append(p.cells, root)
	p.leaves = []int{0}
	return p, nil
}

// Name returns "ada-bkb".
func (p *AdaBKB) Name() string { return "ada-bkb" }

// Dim returns the dimension d of the box.
func (p *AdaBKB) Dim() int { return p.dim }

// Posterior returns the DTC posterior on the evaluated points.
func (p *AdaBKB) Posterior() *gp.DTC { return p.dtc }

// Leaves returns the current leaves' cells as [lo, hi] boxes (copies).
func (p *AdaBKB) Leaves() (lo, hi [][]float64) {
	for _, c := range p.leaves {
		lo = append(lo, append([]float64(nil), p.cells[c].lo...))
		hi = append(hi, append([]float64(nil), p.cells[c].hi...))
	}
	return lo, hi
}

// AdaStats reports the state of the partition.
type AdaStats struct {
	Leaves, Cells, Splits, Pruned, MaxDepth int
	// Retired counts leaves dropped to stay under MaxLeaves.
	Retired int
}

// TreeStats reports the partition's size.
func (p *AdaBKB) TreeStats() AdaStats {
	s := AdaStats{Leaves: len(p.leaves), Cells: len(p.cells), Splits: p.splits, Pruned: p.pruned, Retired: p.retired}
	for _, c := range p.leaves {
		s.MaxDepth = max(s.MaxDepth, p.cells[c].level)
	}
	return s
}

// Stats reports the posterior's state.
func (p *AdaBKB) Stats() Stats {
	_, j := p.dtc.Jitter()
	return Stats{Observations: p.dtc.Len(), DictionarySize: p.dtc.DictionarySize(),
		DictionaryChanges: p.dtc.DictionaryChanges(), SumVariance: p.dtc.EffectiveDimension(), Jitter: j}
}

func (p *AdaBKB) newCell(lo, hi []float64, level int, parentU, parentV float64) adaCell {
	x := make([]float64, p.dim)
	corner := make([]float64, p.dim)
	for j := range x {
		x[j] = 0.5 * (lo[j] + hi[j])
		corner[j] = hi[j]
	}
	k := p.opt.Kernel
	dk2 := kernel.Diag(k, x) + kernel.Diag(k, corner) - 2*k.Eval(x, corner)
	return adaCell{lo: lo, hi: hi, x: x, level: level, v: p.opt.F * math.Sqrt(math.Max(dk2, 0)),
		parentU: parentU, parentV: parentV}
}

// betaNow is the UCB's beta, as for BKB (on the GP scale unless PaperScale).
func (p *AdaBKB) betaNow() float64 {
	s := acquisition.State{T: p.dtc.Len(), Arms: max(len(p.leaves), 1), Lambda: p.opt.Lambda, Kappa2: p.kappa2, SumVar: p.dtc.EffectiveDimension()}
	return p.opt.Beta.Beta(s)
}

// predict updates the cell's posterior, UCB and upper bound I.
func (p *AdaBKB) predict(c *adaCell) error {
	mu, v, err := p.dtc.Predict(c.x)
	if err != nil {
		return err
	}
	sd := math.Sqrt(math.Max(v, 0))
	if !p.opt.PaperScale {
		sd *= math.Sqrt(p.opt.Lambda)
	}
	c.mean, c.sd = mu, sd
	c.ucb = mu + p.beta*sd
	c.idx = math.Min(c.ucb+c.v, c.parentU+c.parentV)
	return nil
}

// split replaces leaf position li by the cell's N children along its
// longest side (adabkb.py GreedyExpansion, _standard_split).
func (p *AdaBKB) split(li int) error {
	ci := p.leaves[li]
	c := p.cells[ci]
	side, long := 0, -1.0
	for j := range c.lo {
		if w := c.hi[j] - c.lo[j]; w > long {
			side, long = j, w
		}
	}
	n := p.opt.N
	p.leaves = append(p.leaves[:li], p.leaves[li+1:]...)
	for i := 0; i < n; i++ {
		lo := append([]float64(nil), c.lo...)
		hi := append([]float64(nil), c.hi...)
		lo[side] = c.lo[side] + long*float64(i)/float64(n)
		hi[side] = c.lo[side] + long*float64(i+1)/float64(n)
		if i == n-1 {
			hi[side] = c.hi[side]
		}
		child := p.newCell(lo, hi, c.level+1, c.ucb, c.v)
		if err := p.predict(&child); err != nil {
			return err
		}
		p.cells = append(p.cells, child)
		p.leaves = append(p.leaves, len(p.cells)-1)
	}
	p.splits++
	return nil
}

// Ask returns the center of the leaf with the largest upper bound,
// splitting leaves whose center is known well enough on the way.
func (p *AdaBKB) Ask() ([]float64, error) {
	for {
		li := p.argmaxLeaf()
		if li < 0 {
			return nil, errors.New("bandit: Ada-BKB: every upper bound is NaN")
		}
		c := &p.cells[p.leaves[li]]
		// The root is evaluated once before it may be split (adabkb.py,
		// step: level > 0 or num_eval > 0).
		expand := p.beta*c.sd <= c.v && c.level < p.opt.HMax && p.dtc.Len() > 0
		if expand && len(p.leaves)+p.opt.N-1 > p.opt.MaxLeaves {
			li = p.retire(li, len(p.leaves)+p.opt.N-1-p.opt.MaxLeaves)
			expand = li >= 0
		}
		if !expand {
			return append([]float64(nil), c.x...), nil
		}
		if err := p.split(li); err != nil {
			return nil, err
		}
	}
}

// retire removes the k leaves with the smallest upper bound I, never
// leaf position keep nor the leaf with the best lower bound, to make room
// under MaxLeaves (retire candidates that can no longer win; the
// lowest I is the least likely to hold the maximum). It returns keep's new
// position, or -1 when too few leaves can go.
func (p *AdaBKB) retire(keep, k int) int {
	if len(p.leaves)-2 < k {
		return -1
	}
	keepCell := p.leaves[keep]
	for ; k > 0; k-- {
		worst, wv := -1, math.Inf(1)
		for li, ci := range p.leaves {
			if ci == keepCell || ci == p.best {
				continue
			}
			if v := p.cells[ci].idx; worst < 0 || v < wv {
				worst, wv = li, v
			}
		}
		if worst < 0 {
			break
		}
		p.leaves = append(p.leaves[:worst], p.leaves[worst+1:]...)
		p.retired++
	}
	return slices.Index(p.leaves, keepCell)
}

func (p *AdaBKB) argmaxLeaf() int {
	best, bv := -1, math.Inf(-1)
	for li, ci := range p.leaves {
		v := p.cells[ci].idx
		if v > bv || (best < 0 && v == bv) {
			best, bv = li, v
		}
	}
	return best
}

// Tell records reward y at x, resamples the dictionary, recomputes every
// leaf's posterior and prunes.
func (p *AdaBKB) Tell(x []float64, y float64) error {
	if len(x) != p.dim {
		return fmt.Errorf("bandit: Ada-BKB: point has dimension %d, want %d", len(x), p.dim)
	}
	for j, v := range x {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("bandit: Ada-BKB: coordinate %d of the point is %v, outside [0,1]", j, v)
		}
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("bandit: Ada-BKB: reward is %v", y)
	}
	if _, err := p.dtc.Observe(x, y); err != nil {
		return fmt.Errorf("bandit: Ada-BKB: %w", err)
	}
	var err error
	if p.opt.Incremental {
		_, _, err = p.dtc.ResampleIncremental(p.rng, p.opt.Qbar)
	} else {
		_, _, err = p.dtc.Resample(p.rng, p.opt.Qbar)
	}
	if err != nil {
		return fmt.Errorf("bandit: Ada-BKB resampling: %w", err)
	}
	p.beta = p.betaNow()
	bestL, bestLCB := -1, math.Inf(-1)
	for li, ci := range p.leaves {
		c := &p.cells[ci]
		if err := p.predict(c); err != nil {
			return err
		}
		if l := c.mean - p.beta*c.sd; l > bestLCB {
			bestL, bestLCB = li, l
		}
	}
	p.best = -1
	if bestL >= 0 {
		p.best = p.leaves[bestL]
	}
	if !p.opt.NoPrune && bestL >= 0 {
		kept := p.leaves[:0]
		for li, ci := range p.leaves {
			if li == bestL || !(p.cells[ci].idx < bestLCB) {
				kept = append(kept, ci)
			} else {
				p.pruned++
			}
		}
		p.leaves = kept
	}
	p.compact()
	return nil
}

// compact drops the cells that are no longer leaves (split, pruned or
// retired) once they outnumber the leaves: children keep what they need of
// their parent (its UCB and V), so memory stays O(MaxLeaves).
func (p *AdaBKB) compact() {
	if len(p.cells) <= 2*len(p.leaves)+64 {
		return
	}
	cells := make([]adaCell, len(p.leaves))
	best := -1
	for li, ci := range p.leaves {
		cells[li] = p.cells[ci]
		if ci == p.best {
			best = li
		}
		p.leaves[li] = li
	}
	p.cells, p.best = cells, best
}

// BestLowerBound returns the center of the leaf with the largest lower
// confidence bound u - 2 beta sd, the recommendation, and that bound.
func (p *AdaBKB) BestLowerBound() (x []float64, lcb float64) {
	if p.best < 0 {
		return nil, math.Inf(-1)
	}
	c := p.cells[p.best]
	return append([]float64(nil), c.x...), c.mean - p.beta*c.sd
}

// PointTrace is the record of RunPoints: a Trace whose steps have Arm -1,
// and the points evaluated.
type PointTrace struct {
	Trace
	Points [][]float64
}

// RunPoints plays a PointPolicy against obj for steps steps, as Run does
// for arm policies. best is the known best noise-free reward (for
// regret; NaN if unknown) and noiseless, when set, the noise-free reward
// of a point of the unit box.
func RunPoints(ctx context.Context, p PointPolicy, obj Objective, steps int, best float64, noiseless func([]float64) float64) (*PointTrace, error) {
	if steps <= 0 {
		return nil, fmt.Errorf("bandit: budget must be positive, got %d steps", steps)
	}
	tr := &PointTrace{Trace: Trace{Policy: p.Name(), Best: best, Steps: make([]Step, 0, steps)}}
	stats, _ := p.(StatsReporter)
	cum, bestPlayed := 0.0, math.Inf(-1)
	for t := 1; t <= steps; t++ {
		if err := ctx.Err(); err != nil {
			return tr, err
		}
		start := time.Now()
		x, err := p.Ask()
		if err != nil {
			return tr, fmt.Errorf("step %d: ask: %w", t, err)
		}
		el := time.Since(start)
		y, err := obj.Evaluate(ctx, x)
		if err != nil {
			return tr, fmt.Errorf("step %d: %w", t, err)
		}
		start = time.Now()
		if err := p.Tell(x, y); err != nil {
			return tr, fmt.Errorf("step %d: %w", t, err)
		}
		el += time.Since(start)
		st := Step{T: t, Arm: -1, Y: y, Value: math.NaN(), Regret: math.NaN(), CumRegret: math.NaN(), SimpleRegret: math.NaN(), Seconds: el.Seconds()}
		if noiseless != nil {
			st.Value = noiseless(x)
			bestPlayed = math.Max(bestPlayed, st.Value)
			if !math.IsNaN(best) {
				st.Regret = best - st.Value
				cum += st.Regret
				st.CumRegret = cum
				st.SimpleRegret = best - bestPlayed
			}
		}
		if stats != nil {
			s := stats.Stats()
			st.DictionarySize, st.DictionaryChanges = s.DictionarySize, s.DictionaryChanges
		}
		tr.Steps = append(tr.Steps, st)
		tr.Points = append(tr.Points, x)
	}
	return tr, nil
}

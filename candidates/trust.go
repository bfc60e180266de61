package candidates

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// TROptions configure TrustRegion. The zero value is TuRBO's sampler.
type TROptions struct {
	// Weights scale the half-width per coordinate: coordinate i moves
	// within center[i] +- radius*Weights[i]. nil means 1 everywhere;
	// ARDWeights gives TuRBO's length-scale weights.
	Weights []float64
	// PerturbProb is the probability that a continuous or discrete
	// coordinate is perturbed (at least one always is); 0 means TuRBO's
	// min(1, 20/k), k the number of such coordinates.
	PerturbProb float64
	// FlipProb is the probability that a categorical group changes to
	// another category, and that a perturbed discrete coordinate whose
	// draw snapped back to the center's level moves to a neighboring level
	// instead (so that a region narrower than the level spacing can still
	// leave it). 0 means 0.1; negative means never.
	FlipProb float64
}

// ARDWeights returns TuRBO's trust-region weights for fitted length scales,
// w_i = l_i / (prod_j l_j)^(1/d) (Eriksson et al. 2019, section 2): the
// region is longer along dimensions the model finds smooth and its volume
// does not depend on the overall scale of the length scales. Entries for
// coordinates without a meaningful length scale may be set to 1 afterwards.
func ARDWeights(lengthScales []float64) []float64 {
	w := make([]float64, len(lengthScales))
	var s float64
	for _, l := range lengthScales {
		s += math.Log(l)
	}
	g := math.Exp(s / float64(len(lengthScales)))
	for i, l := range lengthScales {
		w[i] = l / g
	}
	return w
}

// TrustRegion fills every row of dst with a candidate near center, a valid
// point of dom, as TuRBO does (Eriksson et al. 2019, section 2 and its
// appendix on high dimensions): each continuous or discrete coordinate is
// perturbed with probability PerturbProb (at least one is) to a uniform draw
// from [center - radius*w, center + radius*w] clipped to [0, 1]; a discrete
// draw is snapped to its nearest level; each categorical group is changed,
// with probability FlipProb, to another category drawn uniformly. Every row
// is a valid point of dom. radius is the half-width (Region.Radius).
func TrustRegion(dst *mat.Dense, dom Domain, center []float64, radius float64, rng *rand.Rand, opt TROptions) error {
	if err := dom.Validate(); err != nil {
		return err
	}
	if err := dom.Check(center); err != nil {
		return fmt.Errorf("candidates: center: %w", err)
	}
	if !(radius > 0) || math.IsInf(radius, 0) {
		return fmt.Errorf("candidates: radius must be positive and finite, got %v", radius)
	}
	if dst == nil {
		return errors.New("candidates: nil destination")
	}
	if _, c := dst.Dims(); c != dom.Dim() {
		return fmt.Errorf("candidates: destination has %d columns, domain %d", c, dom.Dim())
	}
	if opt.Weights != nil && len(opt.Weights) != dom.Dim() {
		return fmt.Errorf("candidates: %d weights for %d coordinates", len(opt.Weights), dom.Dim())
	}
	for i, w := range opt.Weights {
		if !(w > 0) || math.IsInf(w, 0) {
			return fmt.Errorf("candidates: weight %d must be positive and finite, got %v", i, w)
		}
	}
	if opt.PerturbProb < 0 || opt.PerturbProb > 1 || math.IsNaN(opt.PerturbProb) {
		return fmt.Errorf("candidates: PerturbProb must be in [0, 1], got %v", opt.PerturbProb)
	}
	var units []int // continuous and discrete coordinates
	for i, c := range dom.Coords {
		if c.Group < 0 {
			units = append(units, i)
		}
	}
	groups := dom.groups()
	p := opt.PerturbProb
	if p == 0 && len(units) > 0 {
		p = math.Min(1, 20/float64(len(units)))
	}
	flip := opt.FlipProb
	switch {
	case flip == 0:
		flip = 0.1
	case flip < 0 || math.IsNaN(flip):
		flip = 0
	}
	rows, _ := dst.Dims()
	for r := range rows {
		x := dst.RawRowView(r)
		copy(x, center)
		moved := false
		for _, i := range units {
			if rng.Float64() < p {
				perturb(x, i, dom.Coords[i], center[i], radius*weight(opt.Weights, i), flip, rng)
				moved = true
			}
		}
		if !moved && len(units) > 0 {
			i := units[rng.IntN(len(units))]
			perturb(x, i, dom.Coords[i], center[i], radius*weight(opt.Weights, i), flip, rng)
		}
		for _, g := range groups {
			if flip > 0 && rng.Float64() < flip {
				cur := 0
				for k, i := range g {
					if center[i] == 1 {
						cur = k
					}
				}
				next := rng.IntN(len(g) - 1)
				if next >= cur {
					next++
				}
				x[g[cur]], x[g[next]] = 0, 1
			}
		}
	}
	return nil
}

func weight(w []float64, i int) float64 {
	if w == nil {
		return 1
	}
	return w[i]
}

// perturb draws coordinate i uniformly from [c - h, c + h] clipped to
// [0, 1], snapping a discrete coordinate to its nearest level (and, with
// probability flip, to a neighbor if that is the center's level).
func perturb(x []float64, i int, co Coord, c, h float64, flip float64, rng *rand.Rand) {
	lo, hi := math.Max(0, c-h), math.Min(1, c+h)
	v := lo + (hi-lo)*rng.Float64()
	if co.Levels == nil {
		x[i] = math.Min(math.Max(v, 0), 1)
		return
	}
	j := nearestLevel(co.Levels, v)
	if co.Levels[j] == c && len(co.Levels) > 1 && flip > 0 && rng.Float64() < flip {
		switch {
		case j == 0:
			j = 1
		case j == len(co.Levels)-1:
			j--
		case rng.IntN(2) == 0:
			j--
		default:
			j++
		}
	}
	x[i] = co.Levels[j]
}

// Region is TuRBO's trust-region radius schedule (Eriksson et al. 2019,
// section 2): after SuccessTol consecutive improvements the radius doubles
// (up to Max), after FailureTol consecutive non-improvements it halves, and
// when it falls below Min the region restarts at Init. Radius is the
// half-width passed to TrustRegion.
type Region struct {
	Radius              float64
	Init, Min, Max      float64
	SuccessTol          int
	FailureTol          int
	Successes, Failures int // current runs of consecutive outcomes
	Restarts            int // times the radius fell below Min
}

// NewRegion returns TuRBO-1's defaults for a d-dimensional problem with one
// evaluation per step, as half-widths: Init 0.4, Min 0.5^8, Max 0.8 (side
// lengths 0.8, 0.5^7 and 1.6 in the paper), SuccessTol 3 and FailureTol
// max(4, d).
func NewRegion(d int) Region {
	return Region{
		Radius:     0.4,
		Init:       0.4,
		Min:        math.Pow(0.5, 8),
		Max:        0.8,
		SuccessTol: 3,
		FailureTol: max(4, d),
	}
}

// Update records whether the last evaluation improved on the incumbent
// (TuRBO counts an improvement of more than 1e-3 |best|; the caller decides)
// and reports whether the region restarted.
func (r *Region) Update(improved bool) (restarted bool) {
	if improved {
		r.Successes++
		r.Failures = 0
	} else {
		r.Failures++
		r.Successes = 0
	}
	if r.Successes >= r.SuccessTol {
		r.Radius = math.Min(2*r.Radius, r.Max)
		r.Successes = 0
	}
	if r.Failures >= r.FailureTol {
		r.Radius /= 2
		r.Failures = 0
	}
	if r.Radius < r.Min {
		r.Radius = r.Init
		r.Successes, r.Failures = 0, 0
		r.Restarts++
		return true
	}
	return false
}

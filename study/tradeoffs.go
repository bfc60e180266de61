package study

import (
	"fmt"
	"math"
	"slices"

	"github.com/bkb-go/bkb/pareto"
)

// outcomeFields returns the Values and Constraints of a tell record:
// values only for several objectives.
func (s *Study) outcomeFields(values, cons []float64) ([]float64, []float64) {
	if !s.cfg.MultiObjective() {
		values = nil
	}
	return slices.Clone(values), slices.Clone(cons)
}

// sameOutcome reports whether a complete trial was told these values and
// constraint values (a repeated tell).
func sameOutcome(t *TrialResult, values, cons []float64) bool {
	return (len(t.Values) == 0 || slices.Equal(t.Values, values)) && slices.Equal(t.Constraints, cons)
}

// SetValues sets the values of every objective of a study with several
// objectives, for an Objective run by Run: the value the Objective
// returns is then ignored.
func (t *Trial) SetValues(values ...float64) { t.values = slices.Clone(values) }

// SetConstraints sets the constraint values c_j(x) of a constrained
// study (feasible when every one is <= 0), for an Objective run by Run.
func (t *Trial) SetConstraints(c ...float64) { t.constraints = slices.Clone(c) }

// minimized returns a trial's objective values with every objective
// minimized (maximized ones negated).
func minimized(c *Config, t TrialResult) []float64 {
	ds := c.ObjectiveDirections()
	vals := t.Values
	if len(vals) == 0 {
		vals = []float64{t.Value}
	}
	out := make([]float64, len(ds))
	for k, d := range ds {
		out[k] = vals[k]
		if d == Maximize {
			out[k] = -vals[k]
		}
	}
	return out
}

// ParetoFront returns the complete feasible trials no other complete
// feasible trial dominates, by trial number (for one objective: the best
// trials). ErrNoFeasible when there is none.
func (s *Study) ParetoFront() ([]TrialResult, error) { return ParetoFront(s.cfg, s.Trials()) }

// ParetoFront is Study.ParetoFront on trials of a study of configuration
// cfg (from Study.Trials).
func ParetoFront(cfg Config, trials []TrialResult) ([]TrialResult, error) {
	var ok []TrialResult
	var pts [][]float64
	for _, t := range trials {
		if t.State == Complete && !t.Infeasible {
			ok = append(ok, t)
			pts = append(pts, minimized(&cfg, t))
		}
	}
	if len(ok) == 0 {
		return nil, ErrNoFeasible
	}
	var out []TrialResult
	for _, i := range pareto.Front(pts) {
		out = append(out, ok[i])
	}
	return out, nil
}

// DefaultReference returns the reference point of the hypervolume: the
// worst value of each objective over the complete feasible trials, moved
// out by a tenth of the values' range (1 where the range is 0), in each
// objective's own direction. ErrNoFeasible when there is no such trial.
func (s *Study) DefaultReference() ([]float64, error) { return DefaultReference(s.cfg, s.Trials()) }

// DefaultReference is Study.DefaultReference on trials of a study of
// configuration cfg.
func DefaultReference(cfg Config, trials []TrialResult) ([]float64, error) {
	ds := cfg.ObjectiveDirections()
	lo := make([]float64, len(ds))
	hi := make([]float64, len(ds))
	for k := range ds {
		lo[k], hi[k] = math.Inf(1), math.Inf(-1)
	}
	n := 0
	for _, t := range trials {
		if t.State != Complete || t.Infeasible {
			continue
		}
		n++
		for k, v := range minimized(&cfg, t) {
			lo[k], hi[k] = math.Min(lo[k], v), math.Max(hi[k], v)
		}
	}
	if n == 0 {
		return nil, ErrNoFeasible
	}
	ref := make([]float64, len(ds))
	for k, d := range ds {
		margin := 0.1 * (hi[k] - lo[k])
		if margin == 0 {
			margin = 1
		}
		ref[k] = hi[k] + margin
		if d == Maximize {
			ref[k] = -ref[k]
		}
	}
	return ref, nil
}

// Hypervolumes returns, for every trial in number order, the hypervolume
// against ref (in the objectives' own units and directions) of the
// complete feasible trials up to it: the trace of a multi-objective
// study's progress.
func (s *Study) Hypervolumes(ref []float64) ([]float64, error) {
	return Hypervolumes(s.cfg, s.Trials(), ref)
}

// Hypervolumes is Study.Hypervolumes on trials (by number, from
// Study.Trials) of a study of configuration cfg.
func Hypervolumes(cfg Config, trials []TrialResult, ref []float64) ([]float64, error) {
	ds := cfg.ObjectiveDirections()
	if len(ref) != len(ds) {
		return nil, fmt.Errorf("study: reference point of %d values for %d objectives", len(ref), len(ds))
	}
	mref := make([]float64, len(ref))
	for k, d := range ds {
		mref[k] = ref[k]
		if d == Maximize {
			mref[k] = -ref[k]
		}
	}
	out := make([]float64, len(trials))
	var pts [][]float64
	var last float64
	for i, t := range trials {
		if t.State == Complete && !t.Infeasible {
			pts = append(pts, minimized(&cfg, t))
			// Only the front matters: keep it small.
			front := pareto.Front(pts)
			kept := make([][]float64, len(front))
			for j, f := range front {
				kept[j] = pts[f]
			}
			pts = kept
			hv, err := pareto.Hypervolume(pts, mref)
			if err != nil {
				return nil, err
			}
			last = hv
		}
		out[i] = last
	}
	return out, nil
}

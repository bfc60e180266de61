package study

import (
	"context"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/bandit"
)

// Trials returns every trial, by number.
func (s *Study) Trials() []TrialResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]TrialResult, 0, len(s.trials))
	for _, t := range s.trials {
		if t != nil {
			c := *s.withParams(t)
			c.X = slices.Clone(t.X)
			c.Values, c.Constraints = slices.Clone(t.Values), slices.Clone(t.Constraints)
			c.Intermediate = slices.Clone(t.Intermediate)
			out = append(out, c)
		}
	}
	return out
}

// Best returns the complete feasible trial with the best value (the
// lowest when minimizing; with several objectives, of the first: see
// ParetoFront), the earliest among equals; false when no trial is
// complete and feasible.
func (s *Study) Best() (TrialResult, bool) {
	var best TrialResult
	found := false
	for _, t := range s.Trials() {
		if t.State == Complete && !t.Infeasible && (!found || Better(t.Value, best.Value, s.cfg.Direction)) {
			best, found = t, true
		}
	}
	return best, found
}

// Better reports whether value a beats b in direction d.
func Better(a, b float64, d Direction) bool {
	if math.IsNaN(b) {
		return !math.IsNaN(a)
	}
	if d == Maximize {
		return a > b
	}
	return a < b
}

// Refresh reads the records other processes stored since the last call
// (Trials and Best then include them).
func (s *Study) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.st.Records(ctx, s.name, len(s.records))
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := s.commit(r, true); err != nil {
			return err
		}
	}
	return nil
}

// Info is what a study reports about its model, for progress displays and
// summaries.
type Info struct {
	Arms          int         // candidates
	PolicySeconds float64     // time spent in the policy by this process
	LengthScale   float64     // the kernel's current length scale
	Fits          []FitResult // length-scale fits so far
	Stats         bandit.Stats
	// Diverged counts stored asks whose point differs from what this
	// build chooses (a study written by another version): their points are
	// used all the same.
	Diverged int
	// Ignored counts stored values beyond ±MaxAbsValue (written by an
	// earlier version), treated as failed evaluations.
	Ignored int
	// AsOf, when positive, says that the model fields come from the
	// study's newest snapshot, taken after its first AsOf records (a
	// Study that has not built its engine reads them there rather than
	// replay the records); 0 with Arms 0: no model information.
	AsOf int
	// Warp is the output transform fitted to the values (nil when the
	// study does not warp them, Config.Warp none).
	Warp *Warp
}

// Info returns the study's model information.
func (s *Study) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng == nil {
		// No replay for a summary: the newest snapshot's, else none.
		return s.snapshotInfo()
	}
	e := s.eng
	_, n, _ := e.Arms()
	return Info{Arms: n, PolicySeconds: e.PolicySeconds(), LengthScale: e.LengthScale(), Fits: slices.Clone(e.Fits()),
		Stats: e.Stats(), Diverged: e.Diverged(), Ignored: e.Ignored(), Warp: e.WarpInfo()}
}

// ModelInfo returns the study's model information from its engine, which
// it builds if needed (from the newest usable snapshot and the records
// after it, else by replaying every record: as long as an Ask of a study
// that keeps no snapshot), where Info reads only a snapshot's readable
// part.
func (s *Study) ModelInfo(ctx context.Context) (Info, error) {
	s.mu.Lock()
	if err := s.ensureEngine(ctx); err != nil {
		s.mu.Unlock()
		return Info{}, err
	}
	s.mu.Unlock()
	return s.Info(), nil
}

// Arms returns the candidate set: one point per row (values per
// parameter), including points added by Enqueue and ImportCSV.
func (s *Study) Arms() *mat.Dense {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ensureEngine(context.Background()) != nil {
		return nil
	}
	vals, n, p := s.eng.Arms()
	return mat.NewDense(n, p, slices.Clone(vals))
}

// BatchSize returns the average size of the completed batches of a
// batched policy (bbkb), over the policy's rebuilds too (a rebuild, at a
// refit or a refresh of the reward scale, starts a new batch); false for
// other policies.
func (s *Study) BatchSize() (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ensureEngine(context.Background()) != nil {
		return 0, false
	}
	return s.eng.BatchSize()
}

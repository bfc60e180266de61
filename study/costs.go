package study

import (
	"context"

	"github.com/bkb-go/bkb/engine"
)

// Costs splits the time a study's policy took in this process
// (engine.Costs).
type Costs = engine.Costs

// Costs returns the study's policy time and its parts, in seconds.
func (s *Study) Costs() Costs {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ensureEngine(context.Background()) != nil {
		return Costs{}
	}
	return s.eng.Costs()
}

// evaluationSeconds is a completed (or pruned) trial's evaluation time as
// its record holds it, what a cost-aware study's engine weighs
// (Config.CostAware); 0 for a trial without one.
func (s *Study) evaluationSeconds(trial int) float64 {
	if trial < 0 || trial >= len(s.trials) || s.trials[trial] == nil {
		return 0
	}
	if t := s.trials[trial]; t.State == Complete || t.State == Pruned {
		return t.Seconds
	}
	return 0
}

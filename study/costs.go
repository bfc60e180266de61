package study

import "context"

// Costs splits the time a study's policy took in this process.
type Costs struct {
	// Policy is all the time spent choosing points and learning from
	// evaluations (Info.PolicySeconds).
	Policy float64
	// Fit is the part spent fitting hyperparameters.
	Fit float64
	// Candidates is the part spent growing and scoring candidates
	// (version 2 with candidates grow), the polish included.
	Candidates float64
}

// Costs returns the study's policy time and its parts, in seconds.
func (s *Study) Costs() Costs {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ensureEngine(context.Background()) != nil {
		return Costs{}
	}
	e := s.eng
	c := Costs{Policy: e.policySeconds, Fit: e.fitSeconds}
	if e.ref != nil {
		c.Fit += e.ref.fitSecs
		c.Candidates = e.ref.growSec
	}
	return c
}

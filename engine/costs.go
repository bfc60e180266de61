package engine

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

// Costs returns the engine's policy time and its parts, in seconds.
func (e *Engine) Costs() Costs {
	c := Costs{Policy: e.policySeconds, Fit: e.fitSeconds}
	if e.ref != nil {
		c.Fit += e.ref.fitSecs
		c.Candidates = e.ref.growSec
	}
	return c
}

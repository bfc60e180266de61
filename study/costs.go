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

package engine

import (
	"math"
	"testing"
)

// TestNoiseRules checks version 4's rules against hand values.
func TestNoiseRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		B, rho, u float64
		ask       int
		floor     float64
		thompson  bool
	}{
		{2, 1e-7, 0.01, 2, 2 * math.Sqrt(1e-4), false}, // noise-free: no floor to speak of
		{2, 2.5e-4, 0.01, 2, 1, false},                 // 1% noise: B sqrt(0.25)
		{2, 4e-3, 0.2, 2, 2, false},                    // capped at B
		{2, 4e-3, 0.3, 2, 0, false},                    // box not covered
		{2, 0.1, 0.05, 2, 0, true},                     // heavy noise: draws on even asks
		{2, 0.1, 0.05, 3, 0, false},
		{2, 0.1, 0.5, 2, 0, false}, // not covered: UCB
		{2, 0.05, 0.05, 2, 0, false},
	} {
		if got := noisyBetaFloor(c.B, c.rho, c.u); math.Abs(got-c.floor) > 1e-12 {
			t.Errorf("noisyBetaFloor(%v, %v, %v) = %v, want %v", c.B, c.rho, c.u, got, c.floor)
		}
		if got := thompsonAsk(c.rho, c.u, c.ask); got != c.thompson {
			t.Errorf("thompsonAsk(%v, %v, %d) = %v, want %v", c.rho, c.u, c.ask, got, c.thompson)
		}
	}
	for _, c := range []struct {
		v4     bool
		rho    float64
		scaled bool
	}{{false, 0.9, true}, {true, 0.9, false}, {true, 0.5, true}, {true, 0.1, true}, {true, 1e-7, true}} {
		if got := scalesByWideness(c.v4, c.rho); got != c.scaled {
			t.Errorf("scalesByWideness(%v, %v) = %v, want %v", c.v4, c.rho, got, c.scaled)
		}
	}
}

package gp

import (
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/kernel"
)

// A steady-state step (an observation with S unchanged, then a resample
// that changes nothing) allocates nothing, also when the pass is split
// across goroutines (A above parallelMin).
func TestSteadyStepAllocatesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const a = 3 * parallelMin
	cand := randPoints(rng, a, 3)
	ex, _ := NewExact(kernel.RBF{LengthScale: 0.5}, 3, 0.1)
	dt, _ := NewDTC(kernel.RBF{LengthScale: 0.5}, 3, 0.1)
	ex.SetCandidates(cand)
	dt.SetCandidates(cand)
	ex.Reserve(200)
	var dict []int
	for i := 0; i < 20; i++ {
		dt.ObserveCandidate(i, rng.NormFloat64())
		dict = append(dict, i)
	}
	if _, _, err := dt.SetDictionary(dict); err != nil {
		t.Fatal(err)
	}
	src := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 3; i++ { // settle thresholds and buffers
		dt.ObserveCandidate(i, 1)
		dt.ResampleIncremental(src, 1e9)
		ex.ObserveCandidate(i, 1)
	}
	if n := testing.AllocsPerRun(20, func() {
		dt.ObserveCandidate(5, rng.NormFloat64())
		dt.ResampleIncremental(src, 1e9)
	}); n != 0 {
		t.Errorf("DTC step: %v allocations", n)
	}
	if n := testing.AllocsPerRun(20, func() { ex.ObserveCandidate(7, rng.NormFloat64()) }); n != 0 {
		t.Errorf("exact step: %v allocations", n)
	}
}

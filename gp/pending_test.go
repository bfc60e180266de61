package gp

import (
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/kernel"
)

// Conditioning on pending candidates must equal observing them: a GP's
// variance does not depend on the observed values.
func TestConditionalVariancesEqualObserving(t *testing.T) {
	t.Parallel()
	k := kernel.RBF{LengthScale: 0.3}
	rng := rand.New(rand.NewPCG(21, 22))
	cand := randPoints(rng, 50, 2)
	pending := []int{3, 17, 3, 40}
	ex, _ := NewExact(k, 2, 0.05)
	dt, _ := NewDTC(k, 2, 0.05)
	ex.SetCandidates(cand)
	dt.SetCandidates(cand)
	for s := 0; s < 30; s++ {
		i, y := rng.IntN(50), rng.NormFloat64()
		ex.ObserveCandidate(i, y)
		dt.ObserveCandidate(i, y)
	}
	if _, _, err := dt.SetDictionary([]int{pending[0], pending[1], dt.observed[0], dt.observed[1], dt.observed[2]}); err != nil {
		t.Fatal(err)
	}
	for _, post := range []interface {
		ConditionalVariances([]float64, []int) error
		ObserveCandidate(int, float64) error
		Variances() []float64
	}{ex, dt} {
		got := make([]float64, 50)
		if err := post.ConditionalVariances(got, pending); err != nil {
			t.Fatal(err)
		}
		for _, i := range pending {
			post.ObserveCandidate(i, rng.NormFloat64())
		}
		for i, want := range post.Variances() {
			if !close(got[i], want, want+1e-3, 1e-8) {
				t.Fatalf("%T candidate %d: conditional %v, observed %v", post, i, got[i], want)
			}
		}
	}
	if err := ex.ConditionalVariances(make([]float64, 49), nil); err == nil {
		t.Error("wrong destination length accepted")
	}
}

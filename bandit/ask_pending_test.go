package bandit

import (
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestAskAllPending: issue 13. With A = 3 arms, five Asks without a Tell
// handed out pending arms again (1 0 2 0 0); the fourth must fail with an
// error that says why, and a Tell frees an arm again.
func TestAskAllPending(t *testing.T) {
	t.Parallel()
	arms := mat.NewDense(3, 1, []float64{0, 0.5, 1})
	for _, mk := range []func() (*GP, error){
		func() (*GP, error) { return NewGPUCB(arms, Options{Seed: 1}) },
		func() (*GP, error) { return NewBKB(arms, Options{Seed: 1}) },
	} {
		p, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for i := 0; i < 3; i++ {
			a, err := p.Ask()
			if err != nil || seen[a] {
				t.Fatalf("%s: ask %d gave %d (error %v), seen %v", p.Name(), i, a, err, seen)
			}
			seen[a] = true
		}
		if a, err := p.Ask(); err == nil || !strings.Contains(err.Error(), "pending") {
			t.Fatalf("%s: fourth Ask gave arm %d, error %v", p.Name(), a, err)
		}
		if err := p.Tell(1, 0.3); err != nil {
			t.Fatal(err)
		}
		if a, err := p.Ask(); err != nil || a != 1 {
			t.Fatalf("%s: after telling arm 1, Ask gave %d, error %v", p.Name(), a, err)
		}
	}
}

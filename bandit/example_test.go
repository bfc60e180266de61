package bandit_test

import (
	"fmt"
	"math"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/objectives"
)

// Example_askTell drives BKB with the ask/tell interface: the caller owns
// the loop and evaluates the points itself (a simulation, a training run, a
// lab measurement). Rewards are maximized.
func Example_askTell() {
	// 512 candidate points (arms) on the unit square.
	unit := objectives.Box{Lower: []float64{0, 0}, Upper: []float64{1, 1}}
	arms, err := objectives.Sobol(unit, 512, 1)
	if err != nil {
		panic(err)
	}
	// The reward peaks at (0.3, 0.7); the policy does not know that.
	reward := func(x []float64) float64 {
		return math.Exp(-((x[0]-0.3)*(x[0]-0.3) + (x[1]-0.7)*(x[1]-0.7)) / 0.1)
	}
	// Zero options are defaults: RBF kernel with length scale 0.2 of the
	// box, lambda 0.01, beta 2.
	p, err := bandit.NewBKB(arms, bandit.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	best, bestArm := math.Inf(-1), -1
	for t := 0; t < 40; t++ {
		arm, err := p.Ask()
		if err != nil {
			panic(err)
		}
		y := reward(arms.RawRowView(arm))
		if err := p.Tell(arm, y); err != nil {
			panic(err)
		}
		if y > best {
			best, bestArm = y, arm
		}
	}
	x := arms.RawRowView(bestArm)
	fmt.Printf("best point (%.1f, %.1f), reward within 5%% of the peak: %v\n", x[0], x[1], best > 0.95)
	fmt.Println("dictionary smaller than the 40 observations:", p.Stats().DictionarySize < 40)
	// Output:
	// best point (0.3, 0.7), reward within 5% of the peak: true
	// dictionary smaller than the 40 observations: true
}

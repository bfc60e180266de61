package bandit_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/objectives"
)

// ExampleBBKB drives Batched BKB as a pool of workers would: ask while the
// batch rule allows (each arm goes to a free worker), and on ErrBatchFull
// wait for a worker to report before asking again. Here the "workers"
// report in reverse order, which BBKB accepts; the posterior moves once
// per batch.
func ExampleBBKB() {
	unit := objectives.Box{Lower: []float64{0, 0}, Upper: []float64{1, 1}}
	arms, err := objectives.Sobol(unit, 512, 1)
	if err != nil {
		panic(err)
	}
	reward := func(x []float64) float64 {
		return math.Exp(-((x[0]-0.3)*(x[0]-0.3) + (x[1]-0.7)*(x[1]-0.7)) / 0.1)
	}
	p, err := bandit.NewBBKB(arms, bandit.BBKBOptions{Options: bandit.Options{Seed: 1}, Ratio: 4})
	if err != nil {
		panic(err)
	}
	best, evals := math.Inf(-1), 0
	var running []int // arms being evaluated
	for evals < 60 {
		arm, err := p.Ask()
		if errors.Is(err, bandit.ErrBatchFull) {
			// Every free slot waits on the batch: collect the results.
			for k := len(running) - 1; k >= 0; k-- {
				y := reward(arms.RawRowView(running[k]))
				best = math.Max(best, y)
				if err := p.Tell(running[k], y); err != nil {
					panic(err)
				}
				evals++
			}
			running = running[:0]
			continue
		}
		if err != nil {
			panic(err)
		}
		running = append(running, arm)
	}
	s := p.BatchStats()
	fmt.Println("reward within 5% of the peak:", best > 0.95)
	fmt.Println("fewer posterior updates than evaluations:", s.Batches < evals)
	// Output:
	// reward within 5% of the peak: true
	// fewer posterior updates than evaluations: true
}

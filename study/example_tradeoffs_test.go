package study_test

import (
	"fmt"

	"github.com/bkb-go/bkb/study"
)

// The Pareto front and hypervolume trace of a study with two objectives
// (loss minimized, throughput maximized) and a memory constraint, from
// its trials (Study.Trials of a real study).
func ExampleParetoFront() {
	cfg := study.Config{Directions: []study.Direction{study.Minimize, study.Maximize}, Constraints: 1}
	trials := []study.TrialResult{
		{Number: 0, State: study.Complete, Values: []float64{0.30, 120}, Constraints: []float64{-1}},
		{Number: 1, State: study.Complete, Values: []float64{0.10, 400}, Constraints: []float64{2}, Infeasible: true},
		{Number: 2, State: study.Complete, Values: []float64{0.20, 90}, Constraints: []float64{-0.5}},
		{Number: 3, State: study.Complete, Values: []float64{0.35, 100}, Constraints: []float64{0}},
	}
	front, _ := study.ParetoFront(cfg, trials)
	for _, t := range front {
		fmt.Println("trial", t.Number, t.Values)
	}
	hv, _ := study.Hypervolumes(cfg, trials, []float64{0.4, 50})
	fmt.Printf("hypervolume after each trial: %.4g\n", hv)
	// Output:
	// trial 0 [0.3 120]
	// trial 2 [0.2 90]
	// hypervolume after each trial: [7 7 11 11]
}

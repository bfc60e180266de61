package acquisition_test

import (
	"fmt"

	"github.com/bkb-go/bkb/acquisition"
)

// UCB trades the mean against the standard deviation: with beta = 2 the
// uncertain third arm wins over the arm with the best mean.
func ExampleUCB() {
	mean := []float64{0.5, 0.9, 0.4}
	variance := []float64{0.01, 0.01, 0.09}
	score := make([]float64, len(mean))
	acquisition.UCB(score, mean, variance, 2)
	fmt.Printf("scores %.2f, choose arm %d\n", score, acquisition.Argmax(score))
	// Output:
	// scores [0.70 1.10 1.00], choose arm 1
}

// Expected improvement over the best value so far (maximization): an arm
// whose mean is below the best still improves in expectation if its
// variance is large.
func ExampleExpectedImprovement() {
	mean := []float64{0.5, 0.9, 0.4}
	variance := []float64{0.01, 0.01, 0.25}
	score := make([]float64, len(mean))
	acquisition.ExpectedImprovement(score, mean, variance, 0.9, 0)
	fmt.Printf("scores %.4f, choose arm %d\n", score, acquisition.Argmax(score))
	// Output:
	// scores [0.0000 0.0399 0.0417], choose arm 2
}

// A beta schedule reads the state of the run: the constant schedule
// ignores it, GP-UCB's (Srinivas et al., ICML 2010) grows with log t.
func ExampleBeta() {
	s := acquisition.State{T: 100, Arms: 1000, Lambda: 0.01, Kappa2: 1}
	for _, b := range []acquisition.Beta{acquisition.Constant(2), acquisition.GPUCBFinite{Delta: 0.1}} {
		fmt.Printf("%T: %.2f\n", b, b.Beta(s))
	}
	// Output:
	// acquisition.Constant: 2.00
	// acquisition.GPUCBFinite: 6.15
}

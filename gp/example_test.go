package gp_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
)

// The exact posterior of a one-dimensional function after three
// observations: the mean interpolates the data (lambda is small) and the
// variance vanishes at the observed points.
func ExampleExact() {
	g, err := gp.NewExact(kernel.RBF{LengthScale: 0.3}, 1, 1e-6)
	if err != nil {
		panic(err)
	}
	for _, x := range []float64{0.1, 0.5, 0.9} {
		if err := g.Observe([]float64{x}, math.Sin(6*x)); err != nil {
			panic(err)
		}
	}
	for _, x := range []float64{0.5, 0.7} {
		mean, variance, _ := g.Predict([]float64{x})
		fmt.Printf("x=%.1f mean %.3f (sin %.3f) sd %.3f\n", x, mean, math.Sin(6*x), math.Sqrt(variance))
	}
	// Output:
	// x=0.5 mean 0.141 (sin 0.141) sd 0.001
	// x=0.7 mean -0.410 (sin -0.872) sd 0.274
}

// BKB's DTC posterior on a candidate set: after every observation the
// dictionary is resampled by posterior variance, so it stays smaller than
// the number of observations while the posterior follows the data.
func ExampleDTC() {
	const n = 200
	cands := mat.NewDense(n, 1, nil)
	for i := range n {
		cands.Set(i, 0, float64(i)/(n-1))
	}
	g, err := gp.NewDTC(kernel.RBF{LengthScale: 0.2}, 1, 0.01)
	if err != nil {
		panic(err)
	}
	if err := g.SetCandidates(cands); err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for t := range 100 {
		i := (37 * t) % n // a deterministic sweep over the candidates
		if err := g.ObserveCandidate(i, math.Sin(6*cands.At(i, 0))); err != nil {
			panic(err)
		}
		if _, _, err := g.Resample(rng, 2); err != nil {
			panic(err)
		}
	}
	mean := g.Means()[100]
	fmt.Printf("%d observations, dictionary of %d points\n", g.Len(), g.DictionarySize())
	fmt.Printf("mean at x=%.3f: %.2f (sin %.2f)\n", cands.At(100, 0), mean, math.Sin(6*cands.At(100, 0)))
	// Output:
	// 100 observations, dictionary of 41 points
	// mean at x=0.503: 0.13 (sin 0.13)
}

// A joint sample of the DTC posterior is a function: two candidates with
// identical coordinates get the same value (up to rounding), and so does
// At at them.
func ExampleDTC_NewJointSample() {
	g, _ := gp.NewDTC(kernel.RBF{LengthScale: 0.3}, 1, 0.01)
	_ = g.SetCandidates(mat.NewDense(3, 1, []float64{0.2, 0.7, 0.7}))
	for _, x := range []float64{0.1, 0.4, 0.9} {
		row, _ := g.Observe([]float64{x}, x*x)
		_, _, _ = g.SetDictionary(append(g.Dictionary(), row))
	}
	s, err := g.NewJointSample(rand.New(rand.NewPCG(1, 2)), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	vals := make([]float64, 3)
	_ = s.Candidates(vals)
	at, _ := s.At([]float64{0.7})
	fmt.Println(math.Abs(vals[1]-vals[2]) < 1e-12, math.Abs(vals[1]-at) < 1e-12)
	// Output: true true
}

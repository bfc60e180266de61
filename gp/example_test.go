package gp_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/kernel"
)

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

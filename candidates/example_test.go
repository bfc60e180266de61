package candidates_test

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/candidates"
)

// A mixed domain: a continuous parameter, an integer in 1..5 mapped to
// [0, 1], and a 3-way categorical. Trust-region candidates around an
// incumbent are all valid; Polish then maximizes an acquisition over the
// continuous coordinate only.
func Example() {
	dom := candidates.Domain{Coords: append([]candidates.Coord{
		candidates.Continuous(),
		candidates.Discrete(0, 0.25, 0.5, 0.75, 1),
	}, candidates.OneHot(0, 3)...)}
	incumbent := []float64{0.4, 0.5, 0, 1, 0}
	region := candidates.NewRegion(dom.Dim())

	rng := rand.New(rand.NewPCG(1, 2))
	cands := mat.NewDense(100, dom.Dim(), nil)
	if err := candidates.TrustRegion(cands, dom, incumbent, region.Radius, rng, candidates.TROptions{}); err != nil {
		fmt.Println(err)
		return
	}
	valid := 0
	for i := range 100 {
		if dom.Check(cands.RawRowView(i)) == nil {
			valid++
		}
	}
	fmt.Println("valid candidates:", valid)

	// A stand-in posterior: mean peaked at x0 = 0.7, constant variance.
	predict := func(x []float64) (float64, float64, error) {
		return -(x[0] - 0.7) * (x[0] - 0.7), 0.01, nil
	}
	x, _, err := candidates.Polish(candidates.UCB(predict, 2), incumbent, dom, candidates.PolishOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("polished: %.6f %v\n", x[0], x[1:])

	// Three improvements double the radius.
	for range 3 {
		region.Update(true)
	}
	fmt.Println("radius:", region.Radius)
	// Output:
	// valid candidates: 100
	// polished: 0.700000 [0.5 0 1 0]
	// radius: 0.8
}

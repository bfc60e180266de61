package pareto_test

import (
	"fmt"

	"github.com/bkb-go/bkb/pareto"
)

func ExampleHypervolume() {
	// Two objectives, both minimized.
	points := [][]float64{{1, 3}, {2, 2}, {3, 1}, {3, 3}}
	fmt.Println(pareto.Front(points))
	hv, _ := pareto.Hypervolume(points, []float64{4, 4})
	fmt.Println(hv)
	// Output:
	// [0 1 2]
	// 6
}

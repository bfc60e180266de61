package bench_test

import (
	"fmt"

	"github.com/bkb-go/bkb/bench"
)

// The two-sided Mann-Whitney test of the regret tables: five runs of one
// method all below five of another give U = 0, and p = 2/252 (the exact
// probability of either complete separation among the C(10, 5) = 252
// orderings).
func ExampleMannWhitney() {
	u, p, err := bench.MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("U = %g, p = %.4f\n", u, p)
	// Output: U = 0, p = 0.0079
}

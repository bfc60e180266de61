package online_test

import (
	"fmt"
	"math"

	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/online"
)

// Prequential learning: each point is predicted before it is learned. An
// exact kernel ridge regression (Gaussian kernel, ridge 0.01) on a sine
// predicts the later points within a few hundredths.
func Example() {
	l, err := online.NewExact(kernel.RBF{LengthScale: 0.5}, 1, 0.01, online.KRR, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	var lateErr float64
	for t := 0; t < 200; t++ {
		x := []float64{float64(t%50) / 50 * 2 * math.Pi}
		y := math.Sin(x[0])
		if t >= 150 {
			lateErr = max(lateErr, math.Abs(l.Predict(x)-y))
		}
		if err := l.Learn(x, y); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(lateErr < 0.05)
	// Output: true
}

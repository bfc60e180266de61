package hyper_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp/hyper"
)

// Fit ARD hyperparameters to a function of two inputs that ignores the
// second: its fitted length scale comes out much longer than the first.
func ExampleFit() {
	rng := rand.New(rand.NewPCG(1, 1))
	x := mat.NewDense(80, 2, nil)
	y := make([]float64, 80)
	for i := range 80 {
		x.Set(i, 0, rng.Float64())
		x.Set(i, 1, rng.Float64())
		y[i] = math.Sin(6 * x.At(i, 0)) // roughly standardized already
	}
	res, err := hyper.Fit(x, y, hyper.Options{Family: hyper.Matern52, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("second dimension much longer:", res.LengthScales[1] > 5*res.LengthScales[0])
	fmt.Println("nearly noise-free:", res.NoiseVariance < 1e-3)
	fmt.Println("points used:", res.Points)
	k := res.Kernel() // a kernel.Matern52ARD for gp.NewExact(k, 2, res.NoiseVariance)
	_ = k
	// Output:
	// second dimension much longer: true
	// nearly noise-free: true
	// points used: 80
}

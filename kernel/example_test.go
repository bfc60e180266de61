package kernel_test

import (
	"fmt"
	"math"

	"github.com/bkb-go/bkb/kernel"
)

// The Gaussian kernel and its exact Taylor features of degree M (Eq. 6,
// Jézéquel et al., NeurIPS 2019): phi(x).phi(y) equals the truncated kernel k_M, which is within
// (R/sigma)^(2M+2)/(M+1)! of the Gaussian kernel for ||x||, ||y|| <= R.
func ExampleNewTaylorGaussian() {
	const sigma = 1.0
	rbf := kernel.RBF{LengthScale: sigma}
	x, y := []float64{0.3, -0.2}, []float64{-0.1, 0.4}
	fmt.Printf("k(x, y)     = %.6f\n", rbf.Eval(x, y))
	for _, m := range []int{1, 3, 6} {
		tg, err := kernel.NewTaylorGaussian(2, m, sigma)
		if err != nil {
			panic(err)
		}
		px, py := make([]float64, tg.Dim()), make([]float64, tg.Dim())
		tg.Map(px, x)
		tg.Map(py, y)
		var ip float64
		for j := range px {
			ip += px[j] * py[j]
		}
		fmt.Printf("M = %d, r = %2d: phi(x).phi(y) = %.6f, bound %.1e\n",
			m, tg.Dim(), ip, kernel.TaylorErrorBound(m, 0.5, sigma))
	}
	// Output:
	// k(x, y)     = 0.771052
	// M = 1, r =  3: phi(x).phi(y) = 0.766030, bound 3.1e-02
	// M = 3, r = 10: phi(x).phi(y) = 0.771046, bound 1.6e-04
	// M = 6, r = 28: phi(x).phi(y) = 0.771052, bound 1.2e-08
}

// Random Fourier features approximate a shift-invariant kernel; feature j is
// regenerated from (seed, j) alone, as the doubly stochastic gradients of
// Dai et al. (NIPS 2014) require.
func ExampleNewRandomFourier() {
	k := kernel.RBF{LengthScale: 1}
	rf, err := kernel.NewRandomFourier(k, 2, 4096, 1)
	if err != nil {
		panic(err)
	}
	x, y := []float64{0.3, -0.2}, []float64{-0.1, 0.4}
	px, py := make([]float64, rf.Dim()), make([]float64, rf.Dim())
	rf.Map(px, x)
	rf.Map(py, y)
	var ip float64
	for j := range px {
		ip += px[j] * py[j]
	}
	fmt.Printf("k(x, y) = %.4f\n", k.Eval(x, y))
	// The error is O(sqrt(2/D)) = O(0.02).
	fmt.Println("|phi(x).phi(y) - k(x, y)| < 0.05:", math.Abs(ip-k.Eval(x, y)) < 0.05)

	stored, regen := make([]float64, 2), make([]float64, 2)
	b1 := rf.Frequency(100, stored)
	b2 := kernel.FourierFeature(k, 1, 100, regen)
	fmt.Println("feature 100 regenerated exactly:", b1 == b2 && stored[0] == regen[0] && stored[1] == regen[1])
	// Output:
	// k(x, y) = 0.7711
	// |phi(x).phi(y) - k(x, y)| < 0.05: true
	// feature 100 regenerated exactly: true
}

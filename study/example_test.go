package study_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// rffRidge is a small real model: ridge regression on D random Fourier
// features of an RBF or Matérn kernel. It returns the mean squared error on
// the validation set.
func rffRidge(xTrain, yTrain, xVal, yVal [][]float64, k kernel.SpectralSampler, features int, lambda float64) (float64, error) {
	rf, err := kernel.NewRandomFourier(k, len(xTrain[0]), features, 7)
	if err != nil {
		return 0, err
	}
	phi := func(x []float64) []float64 {
		z := make([]float64, features)
		rf.Map(z, x)
		return z
	}
	// (Z^T Z + lambda I) w = Z^T y.
	var a mat.SymDense
	a.ReuseAsSym(features)
	b := mat.NewVecDense(features, nil)
	for i, x := range xTrain {
		z := mat.NewVecDense(features, phi(x))
		a.SymRankOne(&a, 1, z)
		b.AddScaledVec(b, yTrain[i][0], z)
	}
	for j := 0; j < features; j++ {
		a.SetSym(j, j, a.At(j, j)+lambda)
	}
	var ch mat.Cholesky
	if !ch.Factorize(&a) {
		return 0, fmt.Errorf("ridge system not positive definite (lambda %g)", lambda)
	}
	var w mat.VecDense
	if err := ch.SolveVecTo(&w, b); err != nil {
		return 0, err
	}
	mse := 0.0
	for i, x := range xVal {
		d := mat.Dot(&w, mat.NewVecDense(features, phi(x))) - yVal[i][0]
		mse += d * d
	}
	return mse / float64(len(xVal)), nil
}

// Example_tuneModel tunes four hyperparameters of a ridge regression on
// random Fourier features from Go: the number of features (an integer on a
// log scale), the kernel's length scale and the ridge (floats on a log
// scale), and the kernel (a categorical). The study keeps every trial in a
// storage (a journal file with storage.OpenJournalStore, or PostgreSQL, in
// real use) so that a killed tuning run resumes where it stopped.
func Example_tuneModel() {
	// Data: y = sin(6x1) + x2^2 + noise, 200 training and 100 validation rows.
	rng := rand.New(rand.NewPCG(1, 2))
	sample := func(n int) (x, y [][]float64) {
		for i := 0; i < n; i++ {
			x1, x2 := rng.Float64(), rng.Float64()
			x = append(x, []float64{x1, x2})
			y = append(y, []float64{math.Sin(6*x1) + x2*x2 + 0.05*rng.NormFloat64()})
		}
		return x, y
	}
	xTrain, yTrain := sample(200)
	xVal, yVal := sample(100)

	space, err := study.NewSpace(
		study.LogInt("features", 8, 256),
		study.LogFloat("length_scale", 0.01, 10),
		study.LogFloat("lambda", 1e-8, 1),
		study.Categorical("kernel", "rbf", "matern32", "matern52"),
	)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	s, err := study.Create(ctx, storage.NewMemory(), "rff-ridge", study.Config{Space: space, Budget: 40, Seed: 1})
	if err != nil {
		panic(err)
	}
	err = s.Optimize(ctx, func(ctx context.Context, t *study.Trial) (float64, error) {
		ls := t.Params.Float("length_scale")
		var k kernel.SpectralSampler
		switch t.Params.String("kernel") {
		case "rbf":
			k = kernel.RBF{LengthScale: ls}
		case "matern32":
			k = kernel.Matern{Nu: 1.5, LengthScale: ls}
		default:
			k = kernel.Matern{Nu: 2.5, LengthScale: ls}
		}
		return rffRidge(xTrain, yTrain, xVal, yVal, k, t.Params.Int("features"), t.Params.Float("lambda"))
	}, 0)
	if err != nil {
		panic(err)
	}
	best, _ := s.Best()
	p := best.Params
	fmt.Printf("validation MSE %.4f (noise variance 0.0025) at trial %d\n", best.Value, best.Number)
	fmt.Printf("kernel %s, %d features (%T), length scale %.2g, lambda %.1g\n",
		p.String("kernel"), p.Int("features"), p["features"], p.Float("length_scale"), p.Float("lambda"))
	// Output:
	// validation MSE 0.0028 (noise variance 0.0025) at trial 25
	// kernel matern32, 48 features (int), length scale 0.63, lambda 1e-07
}

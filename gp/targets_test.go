package gp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/kernel"
)

// TestTargetWeights checks the means of other targets on the shared
// dictionary: for the posterior's own values they are its means, and with
// every observed point in the dictionary they are the exact GP's means of
// the other target (an independent computation).
func TestTargetWeights(t *testing.T) {
	t.Parallel()
	k := kernel.RBF{LengthScale: 0.3}
	for seed := uint64(0); seed < 5; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		const d, n, lambda = 2, 40, 0.01
		g, err := NewDTC(k, d, lambda)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := NewExact(k, d, lambda)
		if err != nil {
			t.Fatal(err)
		}
		var xs [][]float64
		var ys, y2 []float64
		var rows []int
		for i := 0; i < n; i++ {
			x := []float64{rng.Float64(), rng.Float64()}
			if i%7 == 6 {
				x = xs[rng.IntN(len(xs))] // a repeat
			}
			y := math.Sin(5*x[0]) + 0.1*rng.NormFloat64()
			v := math.Cos(3*x[1]) - x[0]
			row, err := g.Observe(x, y)
			if err != nil {
				t.Fatal(err)
			}
			if err := ex.Observe(x, v); err != nil {
				t.Fatal(err)
			}
			xs, ys, y2 = append(xs, x), append(ys, y), append(y2, v)
			if !slices.Contains(rows, row) {
				rows = append(rows, row)
			}
			if _, _, err := g.Resample(rng, 1); err != nil {
				t.Fatal(err)
			}
		}
		// A sparse dictionary: the own target's means match Predict.
		w, err := g.TargetWeights(xs, ys)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			x := []float64{rng.Float64(), rng.Float64()}
			var got [1]float64
			if err := g.PredictMeans(got[:], x, [][]float64{w}); err != nil {
				t.Fatal(err)
			}
			want, _, _ := g.Predict(x)
			if math.Abs(got[0]-want) > 1e-9 {
				t.Fatalf("seed %d: own target's mean %v, Predict %v", seed, got[0], want)
			}
		}
		// Every observed point in S: the other target's means are exact.
		if _, _, err := g.SetDictionary(rows); err != nil {
			t.Fatal(err)
		}
		w2, err := g.TargetWeights(xs, y2)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			x := []float64{rng.Float64(), rng.Float64()}
			var got [1]float64
			if err := g.PredictMeans(got[:], x, [][]float64{w2}); err != nil {
				t.Fatal(err)
			}
			want, _, _ := ex.Predict(x)
			if math.Abs(got[0]-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Fatalf("seed %d: other target's mean %v, exact GP %v", seed, got[0], want)
			}
		}
		if _, err := g.TargetWeights(xs[1:], y2[1:]); err == nil {
			t.Fatal("TargetWeights with one observation missing: no error")
		}
	}
}

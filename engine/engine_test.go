package engine

import (
	"math"
	"testing"
)

// TestFitLengthScale: the marginal-likelihood fit prefers a short length
// scale for a wiggly function and a long one for a smooth one.
func TestFitLengthScale(t *testing.T) {
	t.Parallel()
	const n = 40
	x := make([]float64, n)
	wiggly, smooth := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i) / (n - 1)
		wiggly[i] = math.Sin(2 * math.Pi * x[i] / 0.15)
		smooth[i] = x[i] - 0.5
	}
	ks := Kernel{Name: "rbf", LengthScale: 0.2}
	w := fitLengthScale(ks, 1e-3, 1, x, wiggly, 0.2)
	s := fitLengthScale(ks, 1e-3, 1, x, smooth, 0.2)
	if !(w.LengthScale < 0.1) || !(s.LengthScale > 0.3) {
		t.Errorf("fitted length scales: wiggly %v (want < 0.1), smooth %v (want > 0.3)", w.LengthScale, s.LengthScale)
	}
	if w.Evaluations != 21 || math.IsInf(w.LogMarginal, 0) {
		t.Errorf("fit: %+v", w)
	}
}

package engine

import (
	"math"
	"slices"
	"testing"
)

// TestPointKey: two points share a key exactly when they have as many
// coordinates and each has the same bits (a signed zero and a NaN
// payload are their own), compared with a brute-force comparison of the
// bits over every pair.
func TestPointKey(t *testing.T) {
	t.Parallel()
	nan2 := math.Float64frombits(0x7ff8000000000abc)
	points := [][]float64{
		nil, {0}, {math.Copysign(0, -1)}, {1}, {math.NaN()}, {nan2}, {1, 2}, {2, 1}, {1, 2, 0},
		{math.Inf(1)}, {math.SmallestNonzeroFloat64}, {0.1 + 0.2}, {0.3}, {1, 2},
	}
	same := func(a, b []float64) bool {
		return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	}
	for i, a := range points {
		for j, b := range points {
			if got, want := PointKey(a) == PointKey(b), same(a, b); got != want {
				t.Errorf("points %d %v and %d %v: keys equal %v, want %v", i, a, j, b, got, want)
			}
		}
	}
}

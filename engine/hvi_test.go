package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/pareto"
)

// TestOptimisticImprovementAgainstBruteForce checks the MOHypervolume
// acquisition on random fronts of 2 and 3 objectives: for a vector no
// front point weakly dominates and better than ref, the hypervolume of the
// front with it minus the front's (pareto.Hypervolume, computed twice);
// for a dominated one, the SMS-EGO penalty written out (non-positive),
// which falls when the vector moves away from the front in any objective.
func TestOptimisticImprovementAgainstBruteForce(t *testing.T) {
	t.Parallel()
	for _, d := range []int{2, 3} {
		rng := rand.New(rand.NewPCG(uint64(d), 5))
		var improving, dominated, beyond int
		for rep := 0; rep < 400; rep++ {
			n := 1 + rng.IntN(20)
			pts := make([][]float64, n)
			for i := range pts {
				pts[i] = make([]float64, d)
				var s float64
				for j := range pts[i] {
					pts[i][j] = rng.Float64()
					s += pts[i][j] * pts[i][j]
				}
				for j := range pts[i] { // near the unit sphere: large fronts
					pts[i][j] /= math.Sqrt(s) * (1 + 0.2*rng.Float64())
				}
			}
			var front [][]float64
			for _, i := range pareto.Front(pts) {
				front = append(front, pts[i])
			}
			ref := make([]float64, d)
			y := make([]float64, d)
			for j := range y {
				ref[j] = 1 + 0.1*rng.Float64()
				y[j] = 1.2 * rng.Float64()
			}
			got := optimisticImprovement(front, y, ref)
			weak := false
			for _, a := range front {
				if dominatesWeakly(a, y) {
					weak = true
				}
			}
			out := false
			for j := range y {
				out = out || y[j] >= ref[j]
			}
			switch {
			case weak:
				dominated++
				var want float64
				for _, a := range front {
					if dominatesWeakly(a, y) {
						p := 1.0
						for j := range y {
							p *= 1 + y[j] - a[j]
						}
						want += 1 - p
					}
				}
				if math.Abs(got-want) > 1e-12 || got > 0 {
					t.Fatalf("d=%d: dominated %v: score %v, penalty %v", d, y, got, want)
				}
				// Worse in one objective: a lower score.
				k := rng.IntN(d)
				y2 := slices.Clone(y)
				y2[k] += 0.05
				if worse := optimisticImprovement(front, y2, ref); !(worse < got) {
					t.Fatalf("d=%d: %v scores %v, worse %v scores %v", d, y, got, y2, worse)
				}
			case out:
				beyond++
				if !(got < 0) {
					t.Fatalf("d=%d: %v beyond ref %v scores %v", d, y, ref, got)
				}
			default:
				improving++
				with, err := pareto.Hypervolume(append(slices.Clone(front), y), ref)
				if err != nil {
					t.Fatal(err)
				}
				without, err := pareto.Hypervolume(front, ref)
				if err != nil {
					t.Fatal(err)
				}
				if want := with - without; math.Abs(got-want) > 1e-12 || !(got > 0) {
					t.Fatalf("d=%d: %v: score %v, hypervolume improvement %v", d, y, got, want)
				}
			}
		}
		if improving < 40 || dominated < 40 || beyond < 10 {
			t.Fatalf("d=%d: %d improving, %d dominated, %d beyond ref: the cases are not all exercised", d, improving, dominated, beyond)
		}
	}
}

func dominatesWeakly(a, b []float64) bool {
	for j := range a {
		if a[j] > b[j] {
			return false
		}
	}
	return true
}

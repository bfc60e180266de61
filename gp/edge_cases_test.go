package gp

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/kernel"
)

// TestObserveNonCandidateEmptyDictionary is a reproduction of a fault found in review:
// Observe of a non-candidate after eight observations with an empty
// dictionary compacted the rows to stride 0 and panicked.
func TestObserveNonCandidateEmptyDictionary(t *testing.T) {
	t.Parallel()
	g, err := NewDTC(kernel.RBF{LengthScale: 0.5}, 1, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetCandidates(mat.NewDense(2, 1, []float64{0, 1})); err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 8; s++ {
		if err := g.ObserveCandidate(0, 1); err != nil {
			t.Fatal(err)
		}
	}
	row, err := g.Observe([]float64{0.5}, 1)
	if err != nil || row != 2 {
		t.Fatalf("Observe: row %d, error %v", row, err)
	}
	// With S empty the DTC variance is the prior's, k(x,x)/lambda.
	if _, v, _ := g.Predict([]float64{0.5}); v != 10 {
		t.Fatalf("variance %v, want the prior 10", v)
	}
}

// TestHugeValuesRejected: values near the float64 range would overflow
// the posterior sums (1e307 over 30 pulls once gave +Inf means).
func TestHugeValuesRejected(t *testing.T) {
	t.Parallel()
	k := kernel.RBF{LengthScale: 0.5}
	cand := mat.NewDense(2, 1, []float64{0, 1})
	ex, _ := NewExact(k, 1, 0.1)
	dt, _ := NewDTC(k, 1, 0.1)
	_ = ex.SetCandidates(cand)
	_ = dt.SetCandidates(cand)
	for _, y := range []float64{1e307, -1e200, math.MaxFloat64} {
		if err := ex.ObserveCandidate(0, y); err == nil || !strings.Contains(err.Error(), "rescale") {
			t.Errorf("Exact accepted %g (error %v)", y, err)
		}
		if err := dt.ObserveCandidate(0, y); err == nil || !strings.Contains(err.Error(), "rescale") {
			t.Errorf("DTC accepted %g (error %v)", y, err)
		}
	}
	// The largest accepted value, 30 times, keeps every mean finite.
	for s := 0; s < 30; s++ {
		if err := ex.ObserveCandidate(s%2, MaxAbsValue); err != nil {
			t.Fatal(err)
		}
		if err := dt.ObserveCandidate(s%2, -MaxAbsValue); err != nil {
			t.Fatal(err)
		}
		if _, _, err := dt.Resample(constUniform(0), 2); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		for _, v := range []float64{ex.Means()[i], dt.Means()[i], ex.Variances()[i], dt.Variances()[i]} {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				t.Fatalf("candidate %d: posterior value %v", i, v)
			}
		}
	}
}

type constUniform float64

func (u constUniform) Float64() float64 { return float64(u) }

// TestNumericsCounted: a factorization retry (pending duplicates with no
// noise) is counted as RetryJitter; clamps count negative variances.
func TestNumericsCounted(t *testing.T) {
	t.Parallel()
	k := kernel.RBF{LengthScale: 0.5}
	ex, _ := NewExact(k, 1, 0)
	if err := ex.SetCandidates(mat.NewDense(3, 1, []float64{0, 0, 1})); err != nil {
		t.Fatal(err)
	}
	if n := ex.Numerics(); n.RetryJitter != 0 {
		t.Fatalf("fresh posterior reports %+v", n)
	}
	dst := make([]float64, 3)
	if err := ex.ConditionalVariances(dst, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	if n := ex.Numerics(); n.RetryJitter == 0 {
		t.Fatalf("duplicate pending points without noise: no jitter counted (%+v)", n)
	}
	// Observing a point twice without noise drives its variance to
	// rounding level; whatever rounding gives, a negative value is
	// clamped and counted, never stored.
	for s := 0; s < 4; s++ {
		_ = ex.ObserveCandidate(0, 1)
	}
	for i, v := range ex.Variances() {
		if v < 0 {
			t.Fatalf("candidate %d: variance %v stored", i, v)
		}
	}
}

// TestFirstDictionaryIsFirstPoint: Algorithm 1 starts from S_1 = {x_1};
// a draw with qbar k(x,x)/lambda < 1 used to leave S empty.
func TestFirstDictionaryIsFirstPoint(t *testing.T) {
	t.Parallel()
	for _, rs := range resamplers {
		g, _ := NewDTC(kernel.RBF{LengthScale: 0.5}, 1, 10) // qbar k/lambda = 0.01
		_ = g.SetCandidates(mat.NewDense(3, 1, []float64{0, 0.5, 1}))
		_ = g.ObserveCandidate(2, 1)
		if _, _, err := rs.f(g, constUniform(0.99), 0.1); err != nil {
			t.Fatal(err)
		}
		if d := g.Dictionary(); len(d) != 1 || d[0] != 2 {
			t.Fatalf("%s: S_1 = %v, want [2]", rs.name, d)
		}
	}
}

// TestResampleUsesVarianceBeforeObservation: the inclusion probabilities
// are qbar sigma~_t^2(x_i) count_i with sigma~_t the posterior before the
// newest observation (Algorithm 1), checked against the exact GP (with
// every observed point in S the DTC is the exact GP) fed all but the
// last observation; SetLeverageAfterObservation switches to the
// posterior after it.
func TestResampleUsesVarianceBeforeObservation(t *testing.T) {
	t.Parallel()
	k := kernel.RBF{LengthScale: 0.3}
	const lambda, qbar = 0.1, 0.3
	cand := mat.NewDense(6, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1})
	arms := []int{0, 3, 3, 5, 1, 3}
	for _, after := range []bool{false, true} {
		g, _ := NewDTC(k, 1, lambda)
		ex, _ := NewExact(k, 1, lambda)
		_ = g.SetCandidates(cand)
		_ = ex.SetCandidates(cand)
		g.SetLeverageAfterObservation(after)
		for s, i := range arms {
			last := s == len(arms)-1
			if !last || after {
				_ = ex.ObserveCandidate(i, float64(s))
			}
			_ = g.ObserveCandidate(i, float64(s))
			if !last {
				if _, _, err := g.SetDictionary(g.observed); err != nil {
					t.Fatal(err)
				}
			}
		}
		g.flush() // as Resample does in the after-order
		for kk, i := range g.observed {
			want := math.Min(1, qbar*ex.Variances()[i]/lambda*float64(g.Count(i)))
			if got := g.inclusion(kk, qbar); math.Abs(got-want) > 1e-9 {
				t.Errorf("after=%v: row %d: inclusion %v, want %v", after, i, got, want)
			}
		}
	}
}

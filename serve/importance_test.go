package serve

import (
	"math"
	"testing"

	"github.com/bkb-go/bkb/study"
)

// TestImportance checks the shares against a hand computation: x with
// l = 0.5 (relevance 4), y with l = 1 (1), c with one-hot scales 1, 1, 0.5
// (2/3 of 1 + 1 + 4 = 4): shares 4/9, 1/9, 4/9.
func TestImportance(t *testing.T) {
	sp, err := study.NewSpace(study.Float("x", 0, 1), study.Float("y", 0, 1), study.Categorical("c", "a", "b", "d"))
	if err != nil {
		t.Fatal(err)
	}
	got := importance(sp, []study.FitResult{{LengthScales: []float64{0.5, 1, 1, 1, 0.5}}})
	want := map[string]float64{"x": 4.0 / 9, "y": 1.0 / 9, "c": 4.0 / 9}
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-12 {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
	if importance(sp, nil) != nil || importance(sp, []study.FitResult{{LengthScale: 0.3}}) != nil {
		t.Error("importance without an ARD fit")
	}
}

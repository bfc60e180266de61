package study

import (
	"context"
	"math"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// TestSlice checks the slice of a smooth 2-d function against the
// function itself: with 40 noise-free evaluations the GP interpolates, so
// its mean along x (y fixed at the best trial's) is close to f there, and
// its uncertainty is small; a categorical slice has one point per choice.
func TestSlice(t *testing.T) {
	ctx := context.Background()
	space, err := NewSpace(Float("x", 0, 1), Float("y", 0, 1), Categorical("c", "p", "q"))
	if err != nil {
		t.Fatal(err)
	}
	f := func(x, y float64, c string) float64 {
		v := math.Sin(3*x) + (y-0.5)*(y-0.5)
		if c == "q" {
			v += 1
		}
		return v
	}
	s, err := Create(ctx, storage.NewMemory(), "slice", Config{Space: space, Budget: 40, Seed: 3, Policy: "random"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Slice("x", 10); err == nil {
		t.Fatal("a slice of a study without trials")
	}
	for {
		tr, err := s.Ask(ctx)
		if err != nil {
			break
		}
		if err := s.Tell(ctx, tr.Number, f(tr.Params.Float("x"), tr.Params.Float("y"), tr.Params.String("c"))); err != nil {
			t.Fatal(err)
		}
	}
	sl, err := s.Slice("x", 21)
	if err != nil {
		t.Fatal(err)
	}
	y, c := sl.At.Float("y"), sl.At.String("c")
	// Calibrated: f within 3 posterior standard deviations (plus the
	// noise floor) everywhere, and close where the best trial is.
	for i, x := range sl.X {
		if err := math.Abs(sl.Mean[i] - f(x, y, c)); !(err <= 3*sl.SD[i]+0.05) {
			t.Errorf("x = %.2f: mean %.3f, f %.3f, sd %.3f: off by more than 3 sd", x, sl.Mean[i], f(x, y, c), sl.SD[i])
		}
	}
	bx := sl.At.Float("x")
	i := int(math.Round(bx * 20))
	if math.Abs(sl.X[i]-bx) < 0.03 && math.Abs(sl.Mean[i]-f(sl.X[i], y, c)) > 0.1 {
		t.Errorf("near the best trial (x = %.3f) the mean %.3f is off f = %.3f", bx, sl.Mean[i], f(sl.X[i], y, c))
	}
	cs, err := s.Slice("c", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.X) != 2 || cs.Labels[1] != "q" {
		t.Fatalf("categorical slice %+v", cs)
	}
	for i, l := range cs.Labels {
		if err := math.Abs(cs.Mean[i] - f(cs.At.Float("x"), cs.At.Float("y"), l)); !(err <= 3*cs.SD[i]+0.05) {
			t.Errorf("c = %s: mean %.3f sd %.3f, f %.3f", l, cs.Mean[i], cs.SD[i], f(cs.At.Float("x"), cs.At.Float("y"), l))
		}
	}
	if _, err := s.Slice("nope", 10); err == nil {
		t.Fatal("a slice of a missing parameter")
	}
}

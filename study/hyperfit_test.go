package study

import (
	"context"
	"math"
	"testing"

	"github.com/bkb-go/bkb/kernel"
	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// TestFitRecoversARD: a study on a function drawn from a GP prior with
// known ARD length scales (objectives.GPSample, RBF, length scales 0.15,
// 0.4 and 2 on the unit cube, noise-free) fits, through its own schedule,
// length scales within a factor 2 of the truth for the two relevant
// coordinates and longer than 0.8 for the nearly irrelevant one, and a
// small noise variance. The reference is the kernel the sample was drawn
// from.
func TestFitRecoversARD(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, err := Box(nil, []float64{0, 0, 0}, []float64{1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	truth := []float64{0.15, 0.4, 2}
	cfg := Config{Space: sp, Arms: Arms{Kind: "random", N: 600}, Candidates: CandidatesFixed, Policy: "gp-ucb",
		Kernel: Kernel{Name: "rbf"}, Budget: 120, Seed: 5, Init: 40}
	if err := cfg.Normalize(); err != nil {
		t.Fatal(err)
	}
	arms, err := cfg.BuildArms()
	if err != nil {
		t.Fatal(err)
	}
	g, err := objectives.NewGPSample(kernel.RBFARD{LengthScales: truth, Variance: 1}, arms, 3)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Create(ctx, storage.NewMemory(), "gp", cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Optimize(ctx, func(ctx context.Context, tr *Trial) (float64, error) { return g.Evaluate(ctx, tr.X) }, 0)
	if err != nil {
		t.Fatal(err)
	}
	fits := s.Info().Fits
	if len(fits) == 0 {
		t.Fatal("no fits")
	}
	last := fits[len(fits)-1]
	t.Logf("%d fits; last at %d observations: length scales %.3g, signal %.3g, noise %.3g", len(fits), last.Observations, last.LengthScales, last.SignalVariance, last.NoiseVariance)
	for i := 0; i < 2; i++ {
		if r := last.LengthScales[i] / truth[i]; r < 0.5 || r > 2 {
			t.Errorf("length scale %d: %.3g, truth %.3g", i, last.LengthScales[i], truth[i])
		}
	}
	if last.LengthScales[2] < 0.8 {
		t.Errorf("irrelevant coordinate: length scale %.3g, want > 0.8", last.LengthScales[2])
	}
	if last.NoiseVariance > 1e-2 || math.IsNaN(last.NoiseVariance) {
		t.Errorf("noise variance %.3g of a noise-free sample", last.NoiseVariance)
	}
}

package study

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// noisyBranin runs a study of Branin with Gaussian noise of sd 30 (10% of
// its range over the box) and returns it with the number of asks on the
// edge x2 = 0 among the last 20 and the Thompson asks.
func noisyBranin(t *testing.T, st storage.Storage, version int, seed uint64) (s *Study, edge, draws int) {
	t.Helper()
	ctx := context.Background()
	f := objectives.Branin()
	sp, err := Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	s, err = Create(ctx, st, "n", Config{Version: version, Space: sp, Budget: 60, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	noise := rand.New(rand.NewPCG(seed, 7))
	for i := 0; i < 60; i++ {
		tr, err := s.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.eng.Sampled() {
			draws++
		}
		if i >= 40 && tr.X[1] == 0 {
			edge++
		}
		if err := s.Tell(ctx, tr.Number, f.Value(tr.X)+30*noise.NormFloat64()); err != nil {
			t.Fatal(err)
		}
	}
	return s, edge, draws
}

// TestVersion4Noisy: on Branin with 10% noise, version 4 makes Thompson
// asks and puts fewer of its last 20 asks on the box's edge x2 = 0, where
// the noisy fit's UCB maximizer runs in version 3 (the optimum is at
// x2 = 2.3 or more); its records replay to the same points.
func TestVersion4Noisy(t *testing.T) {
	t.Parallel()
	var edge3, edge4, draws3, draws4 int
	for seed := uint64(1); seed <= 4; seed++ {
		_, e3, d3 := noisyBranin(t, storage.NewMemory(), 3, seed)
		st := storage.NewMemory()
		_, e4, d4 := noisyBranin(t, st, 4, seed)
		edge3, edge4, draws3, draws4 = edge3+e3, edge4+e4, draws3+d3, draws4+d4
		re, err := Load(context.Background(), st, "n")
		if err != nil {
			t.Fatal(err)
		}
		if d := re.Info().Diverged; d != 0 {
			t.Errorf("seed %d: version 4 replay diverged on %d asks", seed, d)
		}
	}
	t.Logf("asks on x2 = 0 among the last 20 of 4 runs: version 3 %d, version 4 %d; Thompson asks %d, %d", edge3, edge4, draws3, draws4)
	if draws3 != 0 || draws4 < 20 {
		t.Errorf("Thompson asks: version 3 %d (want 0), version 4 %d (want >= 20 of 240)", draws3, draws4)
	}
	if edge4 >= edge3 {
		t.Errorf("asks on the edge x2 = 0: version 4 %d, version 3 %d", edge4, edge3)
	}
}

// TestVersion3Golden: a version 3 study asks, with version 4 the current
// one, the very points it asked before: trials 25 to 30 of a Branin study
// (seed 5, budget 30) for BKB and GP-UCB, noise-free and with values off
// by up to +-30, as printed by the code of commit afd8d26 (version 3 the
// current version).
func TestVersion3Golden(t *testing.T) {
	t.Parallel()
	want := map[string]map[float64][][2]float64{
		"bkb": {
			0: {{-3.2146372683985853, 13.006020030663915}, {-3.2010392843149149, 12.9895718276031}, {-3.2043211539008603, 12.990287545615905},
				{-3.2045047732593757, 12.998309755306948}, {-3.2155007391383581, 13.007151645241432}, {-3.2073289163051037, 12.987919935484276}},
			30: {{-1.890326594179105, 10.598183961189321}, {10, 2.9440486989016685}, {6.4463233588135225, 0},
				{6.3993241623649961, 0}, {6.5342500073769401, 0}, {6.3848798313183739, 0}},
		},
		"gp-ucb": {
			0: {{3.0896519562431681, 2.3033159311565923}, {3.1090952969001027, 2.2751381863691664}, {3.1086771290674555, 2.2753967961267652},
				{3.1083109836780061, 2.275616146721716}, {3.1059032638924613, 2.2775421065769774}, {3.107965918183929, 2.2759112451330363}},
			30: {{6.8897488109124208, 0}, {10, 3.0608252158360791}, {-1.9519173661428497, 10.687173620624762},
				{-2.0306273053251553, 10.845870392778981}, {-1.9788213273535922, 10.740715654087063}, {-2.0563788081535739, 10.897231096326301}},
		},
	}
	f := objectives.Branin()
	for policy, byNoise := range want {
		for noise, pts := range byNoise {
			// Deterministic values off by up to +-noise.
			value := func(i int, x []float64) float64 { return f.Value(x) + noise*float64((i*7919)%13-6)/6 }
			checkGolden(t, Config{Version: 3, Policy: policy, Budget: 30, Seed: 5}, value, pts)
		}
	}
}

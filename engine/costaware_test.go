package engine

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCostCooling: CArBO's alpha (Lee et al. 2020) is 1 at the initial
// design's end, falls linearly to 0 at the budget and stays there.
func TestCostCooling(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t, T, init int
		want       float64
	}{
		{10, 50, 10, 1}, {5, 50, 10, 1}, {30, 50, 10, 0.5}, {40, 50, 10, 0.25},
		{50, 50, 10, 0}, {70, 50, 10, 0}, {3, 5, 5, 0}, {3, 4, 5, 0},
	} {
		if got := costCooling(c.t, c.T, c.init); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("costCooling(%d, %d, %d) = %v, want %v", c.t, c.T, c.init, got, c.want)
		}
	}
}

// TestCostVaries: costs are weighed once the 90th percentile of the
// seconds is at least costSpread times their 10th.
func TestCostVaries(t *testing.T) {
	t.Parallel()
	logs := func(secs ...float64) []float64 {
		out := make([]float64, len(secs))
		for i, s := range secs {
			out[i] = math.Log(s)
		}
		return out
	}
	for _, c := range []struct {
		secs []float64
		want bool
	}{
		{[]float64{1, 1, 1, 1, 1}, false},
		{[]float64{1, 1.5, 2, 3, 3.9}, false},
		{[]float64{1, 1.5, 2, 3, 4.0001}, true},
		{[]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 100}, false},  // one slow outlier in eleven: 90th percentile 1
		{[]float64{0.5, 0.5, 1, 1, 1, 1, 1, 1, 1, 3, 3}, true}, // 10th percentile 0.5, 90th 3
	} {
		if got := costVaries(logs(c.secs...)); got != c.want {
			t.Errorf("costVaries(%v) = %v, want %v", c.secs, got, c.want)
		}
	}
}

// TestCostModelPredicts: the cost model fitted on 30 timed evaluations of
// a known cost, exp(4 x_1) seconds on the unit square (x_2 does not
// matter), predicts the log seconds of 200 new points within 0.25 (root
// mean square), where the mean of the observed log seconds is off by
// about 1.15 (4 times the standard deviation of a uniform variable).
func TestCostModelPredicts(t *testing.T) {
	t.Parallel()
	const n, d = 30, 2
	rng := rand.New(rand.NewPCG(3, 4))
	x, logs := make([]float64, 0, n*d), make([]float64, 0, n)
	for range n {
		a, b := rng.Float64(), rng.Float64()
		x, logs = append(x, a, b), append(logs, 4*a)
	}
	r := &refiner{cfg: &Config{Seed: 9}}
	c, err := r.fitCost(x, logs, d)
	if err != nil {
		t.Fatal(err)
	}
	var se, base float64
	mean := 0.0
	for _, l := range logs {
		mean += l / n
	}
	for range 200 {
		p := []float64{rng.Float64(), rng.Float64()}
		e := c.logSeconds(p) - 4*p[0]
		se += e * e / 200
		base += (mean - 4*p[0]) * (mean - 4*p[0]) / 200
	}
	if rmse := math.Sqrt(se); rmse > 0.25 {
		t.Errorf("cost model's RMSE %.3f in log seconds, want <= 0.25 (the mean's: %.3f)", rmse, math.Sqrt(base))
	}
}

// TestCostAwareConfig: cost_aware is refused, with the reason, where it
// cannot act.
func TestCostAwareConfig(t *testing.T) {
	t.Parallel()
	space, err := Box(nil, []float64{0, 0}, []float64{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  Config
		want string // "" accepted
	}{
		{Config{Budget: 30}, ""},
		{Config{Budget: 30, Policy: "gp-ucb"}, ""},
		{Config{Budget: 30, Policy: "ei"}, "policy bkb or gp-ucb, not ei"},
		{Config{Budget: 30, Policy: "random"}, "not random"},
		{Config{Budget: 30, Candidates: CandidatesFixed}, "candidates grow"},
		{Config{Budget: 30, Version: 1}, "candidates grow"},
		{Config{}, "needs the study's budget"},
		{Config{Budget: 30, Constraints: 1}, "one objective without constraints"},
		{Config{Budget: 30, Directions: []Direction{Minimize, Minimize}}, "one objective without constraints"},
	} {
		cfg := c.cfg
		cfg.Space, cfg.CostAware = space, true
		err := cfg.Normalize()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.cfg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want one with %q", c.cfg, err, c.want)
		}
	}
}

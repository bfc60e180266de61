package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/bkb-go/bkb/objectives"
)

// refLogLik is the Gaussian log likelihood of the costs under the Box-Cox
// model at power lambda, computed independently of warp.go: the
// transformed values y_i = (z_i^lambda - 1)/lambda by math.Pow, their
// maximum-likelihood mean and variance, the normal densities summed, and
// the Jacobian |dy/dc| by central differences of y in c.
func refLogLik(w Warp, costs []float64, lambda float64) float64 {
	y := func(c float64) float64 {
		z := (c - w.Min + w.Delta) / (w.Max - w.Min + w.Delta)
		if lambda == 0 {
			return math.Log(z)
		}
		return (math.Pow(z, lambda) - 1) / lambda
	}
	n := float64(len(costs))
	var m, v, jac float64
	for _, c := range costs {
		m += y(c) / n
	}
	for _, c := range costs {
		v += (y(c) - m) * (y(c) - m) / n
		h := 1e-6 * (c - w.Min + w.Delta)
		jac += math.Log((y(c+h) - y(c-h)) / (2 * h))
	}
	var ll float64
	for _, c := range costs {
		ll += -0.5*math.Log(2*math.Pi*v) - (y(c)-m)*(y(c)-m)/(2*v)
	}
	return ll + jac
}

// lognormalCosts returns n costs exp(s N(0,1)) + 10 (a shifted log-normal:
// values over orders of magnitude for s of a few).
func lognormalCosts(n int, s float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = 10 + math.Exp(s*rng.NormFloat64())
	}
	return out
}

func TestWarpProfileMatchesLikelihood(t *testing.T) {
	t.Parallel()
	costs := lognormalCosts(60, 2, 1)
	w := fitWarp(WarpAuto, costs, warpTest{})
	if !w.Active() {
		t.Fatalf("no warp fitted to log-normal costs: %+v", w)
	}
	z := make([]float64, len(costs))
	var logSum float64
	for i, c := range costs {
		z[i] = w.z(c)
		logSum += math.Log(z[i])
	}
	// The profile differs from the full likelihood by a constant in
	// lambda: compare differences against lambda 1.
	for _, l := range []float64{-1, -0.5, 0, 0.3, 0.7} {
		got := boxCoxProfile(z, logSum, l) - boxCoxProfile(z, logSum, 1)
		want := refLogLik(w, costs, l) - refLogLik(w, costs, 1)
		if math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
			t.Errorf("lambda %v: profile difference %.10g, likelihood difference %.10g", l, got, want)
		}
	}
}

func TestWarpFitMaximizesLikelihood(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		costs []float64
	}{
		{"lognormal s=1", lognormalCosts(50, 1, 2)},
		{"lognormal s=3", lognormalCosts(80, 3, 3)},
		{"goldstein-price", designCosts(t, "goldsteinprice", 40)},
		{"colville", designCosts(t, "colville", 40)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := fitWarp(WarpAuto, tc.costs, warpTest{})
			if !w.Active() {
				t.Fatalf("not warped: %+v", w)
			}
			// Brute force: the likelihood on a grid of step 1e-3.
			bestL, best := 0.0, math.Inf(-1)
			for i := 0; i <= 2000; i++ {
				l := -1 + float64(i)*1e-3
				if v := refLogLik(w, tc.costs, l); v > best {
					bestL, best = l, v
				}
			}
			if math.Abs(w.Lambda-bestL) > 2e-3 {
				t.Errorf("fitted lambda %v, brute-force maximizer %v", w.Lambda, bestL)
			}
			lrt := 2 * (best - refLogLik(w, tc.costs, 1))
			if math.Abs(w.LRT-lrt) > 1e-3*(1+lrt) {
				t.Errorf("likelihood ratio %v, brute force %v", w.LRT, lrt)
			}
		})
	}
}

// designCosts are f at n random points of the function's box.
func designCosts(t *testing.T, name string, n int) []float64 {
	t.Helper()
	f, err := objectives.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := objectives.Uniform(f.Domain(), n, 5)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = f.Value(pts.RawRowView(i))
	}
	return out
}

func TestWarpAutoLeavesGaussianValues(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	costs := make([]float64, 100)
	for i := range costs {
		costs[i] = 5 + rng.NormFloat64()
	}
	if w := fitWarp(WarpAuto, costs, warpTest{}); w.Active() {
		t.Errorf("Gaussian values warped: %v", w)
	}
	// log is forced whatever the likelihood says.
	if w := fitWarp(WarpLog, costs, warpTest{}); !w.Active() || w.Lambda != 0 {
		t.Errorf("warp log: %+v", w)
	}
	// Too few distinct values: no warp.
	if w := fitWarp(WarpLog, []float64{1, 1, 2, 2, 3, 3, 1e6}, warpTest{}); w.Active() {
		t.Errorf("warp of 4 distinct values: %+v", w)
	}
}

func TestWarpApplyIsIncreasing(t *testing.T) {
	t.Parallel()
	w := fitWarp(WarpAuto, designCosts(t, "goldsteinprice", 30), warpTest{})
	if !w.Active() {
		t.Fatal("not warped")
	}
	// From far below the least cost (the linear continuation) to beyond
	// the largest: strictly increasing and continuous at Min.
	prev := math.Inf(-1)
	for c := w.Min - 100*w.Delta; c < 2*w.Max; c += (2*w.Max - w.Min + 100*w.Delta) / 5000 {
		v := w.apply(c)
		if !(v > prev) || math.IsNaN(v) {
			t.Fatalf("w(%v) = %v after %v", c, v, prev)
		}
		prev = v
	}
	h := 1e-9 * w.Delta
	if a, b := w.apply(w.Min-h), w.apply(w.Min+h); math.Abs(a-b) > 1e-6*math.Abs(w.apply(w.Min+w.Delta)-w.apply(w.Min)) {
		t.Errorf("w jumps at Min: %v, %v", a, b)
	}
}

func TestWarpConfig(t *testing.T) {
	t.Parallel()
	sp, _ := Box(nil, []float64{0}, []float64{1})
	for _, tc := range []struct {
		cfg      Config
		want     string
		errMatch string
	}{
		{Config{Space: sp}, WarpAuto, ""},
		{Config{Space: sp, Version: 4}, WarpNone, ""},
		{Config{Space: sp, Version: 5}, WarpNone, ""},
		{Config{Space: sp, Version: 6}, WarpAuto, ""},
		{Config{Space: sp, Version: 6, RawValues: true}, WarpNone, ""},
		{Config{Space: sp, Version: 8}, WarpAuto, ""},
		{Config{Space: sp, Version: 4, Warp: "LOG"}, WarpLog, ""},
		{Config{Space: sp, Version: 1, Warp: "auto"}, WarpAuto, ""},
		{Config{Space: sp, Warp: "box-cox"}, "", "warp \"box-cox\""},
		{Config{Space: sp, Warp: "auto", RawValues: true}, "", "raw values"},
	} {
		err := tc.cfg.Normalize()
		switch {
		case tc.errMatch != "" && (err == nil || !strings.Contains(err.Error(), tc.errMatch)):
			t.Errorf("%+v: error %v, want one with %q", tc.cfg, err, tc.errMatch)
		case tc.errMatch == "" && err != nil:
			t.Errorf("%+v: %v", tc.cfg, err)
		case tc.errMatch == "" && tc.cfg.Warp != tc.want:
			t.Errorf("version %d: warp %q, want %q", tc.cfg.Version, tc.cfg.Warp, tc.want)
		}
	}
}

// TestWarpTestOnFirstEvaluations: from version 8 the test of Warp auto
// reads the first evaluations only. Costs that are Gaussian over the
// first 40 evaluations and then pile up near the least one (what a search
// that has found a basin gives) are warped when the test reads all of
// them (version 7) and not when it reads the first 40; costs of a
// wide-range start are warped either way, with the power fitted on all.
func TestWarpTestOnFirstEvaluations(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	var narrow []float64
	for range 40 {
		narrow = append(narrow, 20+rng.NormFloat64())
	}
	for range 200 {
		narrow = append(narrow, 3+rng.ExpFloat64()*0.5)
	}
	if w := fitWarp(WarpAuto, narrow, warpTest{}); !w.Active() {
		t.Fatalf("version 7's test on all costs: not warped (%v); the test below would not tell the rules apart", w)
	}
	w := fitWarp(WarpAuto, narrow, warpTest{points: 40})
	if w.Active() || w.Observations != len(narrow) {
		t.Errorf("test on the first 40 costs: %+v, want no warp over %d observations", w, len(narrow))
	}
	// A log-normal start (values over orders of magnitude): warped, and
	// the power is the profile likelihood's maximizer over all costs.
	wide := append(lognormalCosts(40, 2, 3), lognormalCosts(200, 0.5, 4)...)
	all := fitWarp(WarpAuto, wide, warpTest{})
	if !all.Active() {
		t.Fatalf("log-normal costs not warped: %v", all)
	}
	w = fitWarp(WarpAuto, wide, warpTest{points: 40})
	if !w.Active() || w.Lambda != all.Lambda || w.Delta != all.Delta || w.Observations != len(wide) {
		t.Errorf("test on the first 40 costs: %+v, want the fit on all %+v", w, all)
	}
	// Fewer costs than the test reads: the test reads them all.
	if a, b := fitWarp(WarpAuto, wide[:30], warpTest{points: 40}), fitWarp(WarpAuto, wide[:30], warpTest{}); a != b {
		t.Errorf("30 costs, test on 40: %+v, want %+v", a, b)
	}
	// The initial design's skewness: the wide start above is right-skewed
	// and keeps its warp; the same costs with the first 10 mirrored (a
	// left-skewed design: most points near the worst costs) are not warped.
	if w := fitWarp(WarpAuto, wide, warpTest{design: 10, points: 40}); !w.Active() {
		t.Errorf("right-skewed design: not warped (%v)", w)
	}
	left := slices.Clone(wide)
	for i := range 10 {
		left[i] = 2*left[0] - left[i]
	}
	if w := fitWarp(WarpAuto, left, warpTest{}); !w.Active() {
		t.Fatalf("the mirrored design without the skewness test: not warped (%v); the test below would not tell the rules apart", w)
	}
	if stat.Skew(left[:10], nil) >= 0 {
		t.Fatalf("mirrored design skewness %v", stat.Skew(left[:10], nil))
	}
	if w := fitWarp(WarpAuto, left, warpTest{design: 10, points: 40}); w.Active() || w.Observations != len(left) {
		t.Errorf("left-skewed design: %+v, want no warp over %d observations", w, len(left))
	}
	for _, tc := range []struct {
		version, init int
		want          warpTest
	}{{6, 10, warpTest{}}, {7, 10, warpTest{}}, {8, 10, warpTest{10, 40}}, {8, 5, warpTest{5, 20}}} {
		c := Config{Version: tc.version, Init: tc.init}
		if got := c.warpTest(); got != tc.want {
			t.Errorf("version %d, init %d: the test reads %+v, want %+v", tc.version, tc.init, got, tc.want)
		}
	}
}

// TestWarpDesignSkewness checks the premise of version 8's first test:
// over points spread across the box (1,024 Sobol points), the values of
// the wide-range functions of the suite's tuning half are right-skewed,
// and those of functions whose box is mostly near their worst values
// (Hartmann, Ackley, Shekel, Michalewicz) are left-skewed.
func TestWarpDesignSkewness(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		right bool
	}{
		{"goldsteinprice", true}, {"threehumpcamel", true}, {"zakharov:4", true},
		{"hartmann3", false}, {"hartmann6", false}, {"ackley:5", false}, {"ackley:10", false},
		{"shekel", false}, {"michalewicz", false},
	} {
		f, err := objectives.Lookup(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		pts, err := objectives.Sobol(f.Domain(), 1024, 3)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := pts.Dims()
		v := make([]float64, n)
		for i := range v {
			v[i] = f.Value(pts.RawRowView(i))
		}
		sk := stat.Skew(v, nil)
		t.Logf("%s: skewness %.2f over %d Sobol points", tc.name, sk, n)
		if (sk > 0) != tc.right {
			t.Errorf("%s: skewness %.3g, want right-skewed %v", tc.name, sk, tc.right)
		}
	}
}

package pruner

import (
	"hash/crc32"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestPercentile: numpy.percentile's values (linear interpolation).
func TestPercentile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    []float64
		q    float64
		want float64
	}{
		{[]float64{3, 1, 2, 10}, 50, 2.5},
		{[]float64{5}, 50, 5},
		{[]float64{1, 2, 3, 4, 5, 6, 7}, 30, 2.8},
	} {
		if got := Percentile(slices.Clone(c.v), c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Percentile(%v, %v) = %v, numpy %v", c.v, c.q, got, c.want)
		}
	}
}

// TestBrackets: Optuna 3.1's trial allocation budgets
// (HyperbandPruner._calculate_trial_allocation_budget) and bracket hash.
func TestBrackets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		max, eta int
		want     []int
	}{
		{27, 3, []int{27, 12, 6, 4}},
		{81, 3, []int{81, 34, 15, 8, 5}},
		{100, 4, []int{64, 22, 8, 4}},
		{10, 2, []int{8, 6, 4, 4}},
	} {
		if got := (HyperbandPruner{MinResource: 1, ReductionFactor: c.eta}).Brackets(c.max); !slices.Equal(got, c.want) {
			t.Errorf("max %d eta %d: budgets %v, Optuna %v", c.max, c.eta, got, c.want)
		}
	}
	// binascii.crc32(b"curve_7") % 17 == 13
	if got := crc32.ChecksumIEEE([]byte("curve_7")) % 17; got != 13 {
		t.Errorf("crc32 %% 17 = %d, Python 13", got)
	}
	if b := Bracket("curve", 7, []int{10, 7}); b != 1 {
		t.Errorf("Bracket = %d, want 1 (13 falls in the second budget)", b)
	}
}

// TestParseFlag: settings, defaults and errors.
func TestParseFlag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want, err string
	}{
		{"none", "none", ""},
		{"", "none", ""},
		{"median", "median:startup=5,warmup=0,interval=1,tell=last", ""},
		{"MEDIAN:startup=3,warmup=10,interval=2,tell=nothing", "median:startup=3,warmup=10,interval=2,tell=nothing", ""},
		{"asha", "asha:min=1,eta=4,rate=0,tell=last", ""},
		{"hyperband", "hyperband:min=1,max=0,eta=3,tell=last", ""},
		{"bound:startup=3", "bound:startup=3,tell=last", ""},
		{"curve", "curve:startup=5,warmup=3,rank=1,tell=last", ""},
		{"curve:rank=3,tell=forecast", "curve:startup=5,warmup=3,rank=3,tell=forecast", ""},
		{"hyperband:min=3,max=2", "", "below min_resource"},
		{"asha:eta=1", "", "reduction_factor = 1"},
		{"median:interval=-1", "", "must not be negative"},
		{"median:interval=x", "", "not name=integer"},
		{"median:foo=1", "", `unknown setting "foo"`},
		{"median:tell=maybe", "", `tell "maybe"`},
		{"sha", "", `unknown pruner "sha"`},
	} {
		got, err := ParseFlag(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseFlag(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || got.String() != c.want):
			t.Errorf("ParseFlag(%q) = %q, %v; want %q", c.in, got.String(), err, c.want)
		}
	}
}

// TestCurveBound: a trial is stopped only when its value minus the best
// improvement of a complete curve from that step on is worse than the
// best final value.
func TestCurveBound(t *testing.T) {
	t.Parallel()
	// Complete curves: 3 -> 1 (gain 2 from step 0, 1 from step 1), 2 -> 1.5.
	s := Study{Trials: []Curve{curve(0, true, 10, 3, 2, 1), curve(1, true, 20, 2, 1.8, 1.5)}}
	p := CurveBound{StartupTrials: 2}
	for _, c := range []struct {
		vals []float64
		want bool
	}{
		{[]float64{2.9}, false},        // 2.9 - 2 = 0.9 < 1: may still win
		{[]float64{3.1}, true},         // 3.1 - 2 = 1.1 > 1
		{[]float64{3.1, 1.9}, false},   // 1.9 - 1 = 0.9
		{[]float64{3.1, 2.2}, true},    // 2.2 - 1 = 1.2
		{[]float64{9, 9, 9}, false},    // the last step: nothing to save
		{[]float64{9, 9, 9, 9}, false}, // no complete trial has step 3
	} {
		if got := p.Prune(s, curve(2, false, 30, c.vals...)); got != c.want {
			t.Errorf("curve %v: prune %v, want %v", c.vals, got, c.want)
		}
	}
	if (CurveBound{StartupTrials: 3}).Prune(s, curve(2, false, 30, 100)) {
		t.Error("pruned with 2 complete trials and 3 startup trials")
	}
}

// curve builds a Curve from values at steps 0, 1, ...
func curve(trial int, complete bool, at int, vals ...float64) Curve {
	c := Curve{Trial: trial, Complete: complete, CompletedAt: at}
	for i, v := range vals {
		c.Steps, c.Values, c.Seq = append(c.Steps, i), append(c.Values, v), append(c.Seq, at-len(vals)+i)
	}
	return c
}

// TestMedianRules: startup trials, warm-up steps and the interval, as
// Optuna's MedianPruner applies them (its docstring's definitions).
func TestMedianRules(t *testing.T) {
	t.Parallel()
	done := []Curve{curve(0, true, 10, 1, 1, 1, 1, 1, 1), curve(1, true, 20, 2, 2, 2, 2, 2, 2), curve(2, true, 30, 3, 3, 3, 3, 3, 3)}
	bad := func(n int) Curve { return curve(3, false, 40, slices.Repeat([]float64{5}, n)...) }
	s := Study{Name: "m", Trials: done}
	for _, c := range []struct {
		p    MedianPruner
		n    int // steps reported by the bad trial
		want bool
	}{
		{MedianPruner{StartupTrials: 3, IntervalSteps: 1}, 1, true},
		{MedianPruner{StartupTrials: 4, IntervalSteps: 1}, 1, false}, // only 3 complete
		{MedianPruner{StartupTrials: 1, WarmupSteps: 2, IntervalSteps: 1}, 2, false},
		{MedianPruner{StartupTrials: 1, WarmupSteps: 2, IntervalSteps: 1}, 3, true},
		{MedianPruner{StartupTrials: 1, WarmupSteps: 0, IntervalSteps: 2}, 2, false}, // step 1: not a check step
		{MedianPruner{StartupTrials: 1, WarmupSteps: 0, IntervalSteps: 2}, 3, true},  // step 2
		{MedianPruner{StartupTrials: 1, IntervalSteps: 1}, 7, false},                 // step 6: no complete trial has it
	} {
		if got := c.p.Prune(s, bad(c.n)); got != c.want {
			t.Errorf("%+v after %d steps: prune %v, want %v", c.p, c.n, got, c.want)
		}
	}
	// A trial whose best value so far beats the median goes on.
	good := curve(3, false, 40, 5, 1.5)
	if (MedianPruner{StartupTrials: 1, IntervalSteps: 1}).Prune(s, good) {
		t.Error("best value 1.5 <= median 2 was pruned")
	}
}

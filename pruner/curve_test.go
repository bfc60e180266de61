package pruner

import (
	"math"
	"testing"
)

// expCurve is A + B exp(-s/tau) at steps 0..n-1 (closed form).
func expCurve(a, b, tau float64, n int) ([]int, []float64) {
	steps := make([]int, n)
	values := make([]float64, n)
	for s := range n {
		steps[s], values[s] = s, a+b*math.Exp(-float64(s)/tau)
	}
	return steps, values
}

// TestFitExpDecayClosedForm: on noise-free curves, with Tau between the
// grid's points, the fit recovers A, B and Tau and the value at a later
// step (the closed form).
func TestFitExpDecayClosedForm(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b, tau float64
		n         int
	}{
		{-3.5, 1.7, 3.7, 6},
		{0.2, 0.9, 0.9, 4},
		{1, 2, 45, 10},  // slow: nearly a line over the steps seen
		{5, -1.5, 6, 8}, // a curve that rises to its limit
		{0.015, 0.3, 1.3, 27},
	} {
		steps, values := expCurve(c.a, c.b, c.tau, c.n)
		fit, ok := FitExpDecay(steps, values)
		if !ok {
			t.Fatalf("%+v: no fit", c)
		}
		want := c.a + c.b*math.Exp(-26/c.tau)
		if math.Abs(fit.Tau-c.tau) > 1e-4*c.tau || math.Abs(fit.A-c.a) > 1e-4*(1+math.Abs(c.b)) ||
			math.Abs(fit.At(26)-want) > 1e-5 || fit.RSS > 1e-12 {
			t.Errorf("%+v: fit A %v B %v Tau %v RSS %v, value at 26 %v (closed form %v)", c, fit.A, fit.B, fit.Tau, fit.RSS, fit.At(26), want)
		}
	}
}

// bruteRSS is the least residual sum of squares of A + B exp(-s/tau)
// over a fine log grid of tau, A and B from the 2x2 normal equations
// (Cramer's rule): an independent reference for FitExpDecay.
func bruteRSS(steps []int, values []float64) float64 {
	best := math.Inf(1)
	for i := range 20001 {
		tau := math.Exp(math.Log(tauMin) + (math.Log(tauMax)-math.Log(tauMin))*float64(i)/20000)
		var n, sz, szz, sy, szy float64
		for k, s := range steps {
			z := math.Exp(-float64(s) / tau)
			n, sz, szz, sy, szy = n+1, sz+z, szz+z*z, sy+values[k], szy+z*values[k]
		}
		det := n*szz - sz*sz
		if math.Abs(det) < 1e-14 {
			continue
		}
		a := (sy*szz - sz*szy) / det
		b := (n*szy - sz*sy) / det
		rss := 0.0
		for k, s := range steps {
			r := values[k] - a - b*math.Exp(-float64(s)/tau)
			rss += r * r
		}
		best = math.Min(best, rss)
	}
	return best
}

// TestFitExpDecayBruteForce: on curves of other shapes (a power law, a
// noisy decay, SGD-like steps), the fit's residual is no worse than that
// of a 20,001-point grid search over Tau.
func TestFitExpDecayBruteForce(t *testing.T) {
	t.Parallel()
	pow := func(n int) ([]int, []float64) {
		steps := make([]int, n)
		values := make([]float64, n)
		for s := range n {
			steps[s], values[s] = s, 0.3+2/math.Sqrt(float64(s)+1)
		}
		return steps, values
	}
	noisy := func(n int) ([]int, []float64) {
		steps, values := expCurve(-1, 2, 4, n)
		for s := range values {
			values[s] += 0.05 * math.Sin(float64(7*s+1))
		}
		return steps, values
	}
	for name, mk := range map[string]func(int) ([]int, []float64){"power law": pow, "noisy": noisy} {
		for _, n := range []int{4, 7, 15, 27} {
			steps, values := mk(n)
			fit, ok := FitExpDecay(steps, values)
			if !ok {
				t.Fatalf("%s %d: no fit", name, n)
			}
			if ref := bruteRSS(steps, values); fit.RSS > ref*(1+1e-6)+1e-15 {
				t.Errorf("%s, %d steps: RSS %v, grid search %v", name, n, fit.RSS, ref)
			}
		}
	}
	if _, ok := FitExpDecay([]int{0, 1, 1}, []float64{1, 2, 3}); ok {
		t.Error("a fit from two distinct steps")
	}
}

// expTrial is a trial whose curve is A + B exp(-s/tau) at steps 0..n-1.
func expTrial(trial int, complete bool, a, b, tau float64, n int) Curve {
	steps, values := expCurve(a, b, tau, n)
	return Curve{Trial: trial, Complete: complete, CompletedAt: 100 + trial, Steps: steps, Values: values}
}

// TestCurveExtrapolationDecisions: decisions on hand-built curves, each
// worked out from the rule by hand.
func TestCurveExtrapolationDecisions(t *testing.T) {
	t.Parallel()
	// Five complete exponential curves over steps 0..9: their early fits
	// extrapolate exactly (errors 0). Finals: 1.000..., 2, 3, 4, 5 (plus
	// the tiny exp(-9/tau) residuals).
	var done []Curve
	for i := range 5 {
		done = append(done, expTrial(i, true, float64(i+1), 2, 2, 10))
	}
	s := Study{Trials: done}
	p := CurveExtrapolation{StartupTrials: 5, WarmupSteps: 3, Rank: 1}
	best := done[0].Values[9]
	for _, c := range []struct {
		name string
		cur  Curve
		want bool
	}{
		{"converging to 1.5", expTrial(9, false, 1.5, 2, 2, 4), true},
		{"converging to 0.8", expTrial(9, false, 0.8, 2, 2, 4), false},
		{"worse than the incumbent now, limit 0.5", expTrial(9, false, 0.5, 5, 2.5, 5), false},
		{"three reports", expTrial(9, false, 3, 2, 2, 3), false},
		{"the last step", expTrial(9, false, 3, 2, 2, 10), false},
	} {
		if got := p.Prune(s, c.cur); got != c.want {
			t.Errorf("%s: prune %v, want %v (incumbent %v)", c.name, got, c.want, best)
		}
	}
	bad := expTrial(9, false, 1.5, 2, 2, 4)
	if (CurveExtrapolation{StartupTrials: 6, WarmupSteps: 3, Rank: 1}).Prune(s, bad) {
		t.Error("pruned with 5 complete trials and 6 startup trials")
	}
	if (CurveExtrapolation{StartupTrials: 5, WarmupSteps: 4, Rank: 1}).Prune(s, bad) {
		t.Error("pruned at step 3 with warm-up 4")
	}
	// Against the second-best final value (about 2), a limit of 1.5 competes.
	if (CurveExtrapolation{StartupTrials: 5, WarmupSteps: 3, Rank: 2}).Prune(s, bad) {
		t.Error("limit 1.5 pruned against the second-best final value 2")
	}
	if !(CurveExtrapolation{StartupTrials: 5, WarmupSteps: 3, Rank: 2}).Prune(s, expTrial(9, false, 2.5, 2, 2, 4)) {
		t.Error("limit 2.5 not pruned against the second-best final value 2")
	}
	// Calibration: a complete trial whose curve dropped by 0.8 after step
	// 5, which no fit of its first reports foresees, ended 0.8 better than
	// its early forecast; a trial forecast within 0.8 of the incumbent is
	// then kept, one forecast 1.3 worse is still pruned.
	late := expTrial(5, true, 4, 2, 2, 10)
	for s := 6; s < 10; s++ {
		late.Values[s] -= 0.8
	}
	s2 := Study{Trials: append(append([]Curve{}, done...), late)}
	if p.Prune(s2, bad) {
		t.Error("limit 1.5 pruned although a complete curve ended 0.8 below its early forecast")
	}
	if !p.Prune(s2, expTrial(9, false, 2.3, 2, 2, 4)) {
		t.Error("limit 2.3 kept although no complete curve ended 1.3 below its forecast")
	}
}

// TestForecast: the extrapolation told to the model.
func TestForecast(t *testing.T) {
	t.Parallel()
	c := expTrial(0, false, 0.7, 1.2, 3, 6)
	if v, ok := Forecast(c, 26); !ok || math.Abs(v-(0.7+1.2*math.Exp(-26.0/3))) > 1e-6 {
		t.Errorf("Forecast = %v, %v; closed form %v", v, ok, 0.7+1.2*math.Exp(-26.0/3))
	}
	if _, ok := Forecast(expTrial(0, false, 0.7, 1.2, 3, 3), 26); ok {
		t.Error("a forecast from three reports")
	}
}

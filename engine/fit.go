package engine

import (
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/gp/hyper"
)

// FitResult is one length-scale fit.
type FitResult struct {
	Observations  int     `json:"observations"`
	LengthScale   float64 `json:"length_scale"`
	LogMarginal   float64 `json:"log_marginal_likelihood"`
	Evaluations   int     `json:"evaluations"`
	PreviousScale float64 `json:"previous_length_scale"`

	// Version 2 ARD fits (LengthScale is then the geometric mean).
	LengthScales   []float64 `json:"length_scales,omitempty"`
	SignalVariance float64   `json:"signal_variance,omitempty"`
	NoiseVariance  float64   `json:"noise_variance,omitempty"`
	Points         int       `json:"points,omitempty"` // observations the fit used
	Cold           bool      `json:"cold,omitempty"`   // a fit from several starts, not warm
	// Warped: the fit was made on warped values (set from configuration
	// version 10 on, whose rule unwarp_sticky reads it).
	Warped bool `json:"warped,omitempty"`
}

// Length scales searched by fitLengthScale, on the unit box.
const (
	minLengthScale = 0.01
	maxLengthScale = 2.0
)

// fitLengthScale maximizes the GP log marginal likelihood of the
// observations (rows of x, dimension d, values y) over the length scale of
// kernel ks, with the noise variance lambda fixed: a grid of 9 log-spaced
// values in [0.01, 2], then a golden-section search on log l in the bracket
// around the best grid point (12 more evaluations). Each evaluation builds
// an exact GP on the t observations, O(t^3), so a fit costs about
// 21 t^3/3 flops: 2 ms at t = 100, 0.2 s at t = 500.
func fitLengthScale(ks Kernel, lambda float64, d int, x, y []float64, current float64) FitResult {
	res := FitResult{PreviousScale: current, LengthScale: current, LogMarginal: math.Inf(-1)}
	lml := func(logL float64) float64 {
		res.Evaluations++
		kern, err := ks.build(math.Exp(logL))
		if err != nil {
			return math.Inf(-1)
		}
		g, err := gp.NewExact(kern, d, lambda)
		if err != nil {
			return math.Inf(-1)
		}
		for i, v := range y {
			if g.Observe(x[i*d:(i+1)*d], v) != nil {
				return math.Inf(-1)
			}
		}
		v := g.LogMarginalLikelihood()
		if math.IsNaN(v) {
			return math.Inf(-1)
		}
		return v
	}
	lo, hi := math.Log(minLengthScale), math.Log(maxLengthScale)
	const grid = 9
	step := (hi - lo) / (grid - 1)
	best, bestV := 0, math.Inf(-1)
	for i := 0; i < grid; i++ {
		if v := lml(lo + float64(i)*step); v > bestV {
			best, bestV = i, v
		}
	}
	if math.IsInf(bestV, -1) {
		return res // keep the current length scale
	}
	a := lo + float64(max(best-1, 0))*step
	b := lo + float64(min(best+1, grid-1))*step
	bestX := lo + float64(best)*step
	const invPhi = 0.6180339887498949
	c, dd := b-invPhi*(b-a), a+invPhi*(b-a)
	fc, fd := lml(c), lml(dd)
	for i := 0; i < 10; i++ {
		if fc > fd {
			b, dd, fd = dd, c, fc
			c = b - invPhi*(b-a)
			fc = lml(c)
		} else {
			a, c, fc = c, dd, fd
			dd = a + invPhi*(b-a)
			fd = lml(dd)
		}
	}
	for _, cand := range []struct{ x, v float64 }{{c, fc}, {dd, fd}} {
		if cand.v > bestV {
			bestX, bestV = cand.x, cand.v
		}
	}
	res.LengthScale, res.LogMarginal = math.Exp(bestX), bestV
	return res
}

// fitARD fits the ARD hyperparameters of a fixed arm set (version 2):
// cold at doubling counts of observations, warm (one L-BFGS run from the
// previous fit) every FitEvery, seeded by the study seed and the count.
func (e *Engine) fitARD() error {
	start := time.Now()
	fam, err := e.cfg.Family()
	if err != nil {
		return err
	}
	t := len(e.succ)
	x := mat.NewDense(t, e.e, nil)
	y := make([]float64, t)
	for i, o := range e.succ {
		x.SetRow(i, e.enc[o.arm*e.e:(o.arm+1)*e.e])
		y[i] = e.told(o.value)
	}
	cold := e.hp == nil || t >= 2*e.lastFull
	opt := hyper.Options{Family: fam, Init: e.hp, Seed: e.cfg.Seed ^ (uint64(t) * 0x9e3779b97f4a7c15) ^ streamFit}
	if e.cfg.Policy == "bkb" || e.cfg.Policy == "bkb-thompson" || e.cfg.Policy == "bbkb" {
		opt.MaxPoints = fitPointsBKB
	}
	if !cold {
		opt.Starts, opt.Screen = 1, -1
	}
	res, err := hyper.Fit(x, y, opt)
	if err != nil {
		return fmt.Errorf("study: hyperparameter fit at %d observations: %w", t, err)
	}
	e.hp = &res.Params
	if cold {
		e.lastFull = t
	}
	e.lengthScale = geoMean(res.LengthScales)
	e.fits = append(e.fits, FitResult{Observations: t, LengthScale: e.lengthScale, LogMarginal: res.LogMarginal,
		Evaluations: res.Evaluations, LengthScales: slices.Clone(res.LengthScales), SignalVariance: res.SignalVariance,
		NoiseVariance: res.NoiseVariance, Points: res.Points, Cold: cold})
	e.fitSeconds += time.Since(start).Seconds()
	return nil
}

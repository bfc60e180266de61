package study

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/bkb-go/bkb/gp"
	"github.com/bkb-go/bkb/gp/hyper"
	"github.com/bkb-go/bkb/kernel"
)

// SliceMaxObservations bounds the observations a Slice conditions on (the
// most recent ones, and the best): an exact GP costs O(t^3).
const SliceMaxObservations = 1000

// Slice is the GP's prediction along one parameter, the others fixed at
// the best trial's values: for a person to see what the model believes,
// not what the policy uses.
type Slice struct {
	Param string    `json:"param"`
	X     []float64 `json:"x"` // the parameter's values (a categorical's choice indices)
	// Labels are the categorical's choices, as text; nil otherwise.
	Labels []string  `json:"labels,omitempty"`
	Mean   []float64 `json:"mean"` // predicted objective values
	SD     []float64 `json:"sd"`   // posterior standard deviations of the mean
	// At is the point the other parameters are fixed at.
	At Params `json:"at"`
	// Observations is the number of evaluations the GP conditioned on.
	Observations int `json:"observations"`
}

// Slice predicts the objective along the parameter param at points values
// (every choice of a categorical, every integer of a small integer range),
// the other parameters fixed at the best trial's. The GP is exact,
// conditioned on up to SliceMaxObservations complete trials, with the
// last fitted hyperparameters (ARD length scales, signal and noise
// variance; Rasmussen and Williams 2006, equations 2.25 and 2.26) on
// values standardized by their mean and standard deviation, or the
// configured kernel before any fit.
func (s *Study) Slice(param string, points int) (Slice, error) {
	sp := s.cfg.Space
	pi := sp.Index(param)
	if pi < 0 {
		return Slice{}, fmt.Errorf("study %s has no parameter %q (it has %v)", s.name, param, sp.Names())
	}
	p := sp.Params[pi]
	best, ok := s.Best()
	if !ok {
		return Slice{}, fmt.Errorf("study %s has no complete trial yet: %w", s.name, ErrNoTrial)
	}
	if p.Condition != nil && !sp.Active(best.X)[pi] {
		// The model does not vary with a parameter where it is inactive.
		return Slice{}, fmt.Errorf("study %s: parameter %q is %w at the best trial %d (it exists when %s)", s.name, param, ErrInactive, best.Number, sp.Describe(pi))
	}
	var obs []TrialResult
	for _, t := range s.Trials() {
		if t.State == Complete && t.Number != best.Number {
			obs = append(obs, t)
		}
	}
	if len(obs) > SliceMaxObservations-1 {
		obs = obs[len(obs)-(SliceMaxObservations-1):]
	}
	obs = append(obs, best)
	mean, sd := 0.0, 0.0
	for _, t := range obs {
		mean += t.Value
	}
	mean /= float64(len(obs))
	for _, t := range obs {
		sd += (t.Value - mean) * (t.Value - mean)
	}
	sd = math.Sqrt(sd / float64(len(obs)))
	if !(sd > 0) {
		sd = 1
	}

	e := sp.EncodedDim()
	hp := hyper.Params{Family: hyper.RBF, SignalVariance: 1, NoiseVariance: s.cfg.Lambda}
	if fam, err := s.cfg.Family(); err == nil {
		hp.Family = fam
	}
	info := s.Info()
	if n := len(info.Fits); n > 0 && len(info.Fits[n-1].LengthScales) == e {
		f := info.Fits[n-1]
		hp.LengthScales, hp.SignalVariance, hp.NoiseVariance = f.LengthScales, f.SignalVariance, f.NoiseVariance
	} else {
		ls := info.LengthScale
		if !(ls > 0) {
			ls = s.cfg.Kernel.LengthScale
		}
		hp.LengthScales = slices.Repeat([]float64{ls}, e)
	}
	if !(hp.NoiseVariance > 0) {
		hp.NoiseVariance = 1e-6
	}
	var k kernel.Kernel = hp.Kernel()
	g, err := gp.NewExact(k, e, hp.NoiseVariance)
	if err != nil {
		return Slice{}, fmt.Errorf("study %s: slice: %w", s.name, err)
	}
	enc := make([]float64, e)
	for _, t := range obs {
		sp.Encode(enc, t.X)
		if err := g.Observe(enc, (t.Value-mean)/sd); err != nil {
			return Slice{}, fmt.Errorf("study %s: slice: %w", s.name, err)
		}
	}

	out := Slice{Param: param, At: best.Params, Observations: len(obs)}
	switch {
	case p.Type == TypeCategorical:
		for i, c := range p.Choices {
			out.X = append(out.X, float64(i))
			out.Labels = append(out.Labels, fmt.Sprint(c))
		}
	case p.Levels() > 0 && p.Levels() <= points:
		for k := 0; k < p.Levels(); k++ {
			if p.Type == TypeInt {
				out.X = append(out.X, p.Low+float64(k))
			} else {
				out.X = append(out.X, p.StepValue(k))
			}
		}
	default:
		if points < 2 {
			return Slice{}, errors.New("study: a slice needs at least 2 points")
		}
		for k := 0; k < points; k++ {
			u := float64(k) / float64(points-1)
			v := p.Low + u*(p.High-p.Low)
			if p.Log {
				v = math.Exp(math.Log(p.Low) + u*(math.Log(p.High)-math.Log(p.Low)))
			}
			if p.Type == TypeInt {
				v = math.Round(v)
				if len(out.X) > 0 && out.X[len(out.X)-1] == v {
					continue
				}
			}
			out.X = append(out.X, math.Min(math.Max(v, p.Low), p.High))
		}
	}
	x := slices.Clone(best.X)
	for _, v := range out.X {
		copy(x, best.X)
		x[pi] = v
		// A parent's other values activate other parameters: they are
		// at their placeholders, as the model saw them (condition.go).
		sp.Canonicalize(x)
		sp.Encode(enc, x)
		m, v2, err := g.Predict(enc)
		if err != nil {
			return Slice{}, fmt.Errorf("study %s: slice: %w", s.name, err)
		}
		out.Mean = append(out.Mean, mean+sd*m)
		out.SD = append(out.SD, sd*math.Sqrt(v2))
	}
	return out, nil
}

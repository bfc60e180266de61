package bandit

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"
)

// Objective is a black-box reward to maximise (objectives.Objective).
type Objective interface {
	Evaluate(ctx context.Context, x []float64) (float64, error)
}

// Step is one row of a run's trace.
type Step struct {
	T      int     // 1-based step
	Arm    int     // arm played
	Y      float64 // observed reward
	Value  float64 // noise-free reward at the arm (NaN when unknown)
	Regret float64 // instantaneous regret: best arm's value - Value (NaN when unknown)
	// CumRegret is the cumulative regret up to this step (NaN when unknown).
	CumRegret float64
	// SimpleRegret is best value - the best Value played so far.
	SimpleRegret      float64
	DictionarySize    int
	DictionaryChanges int
	// Seconds is the policy's time for this step (Ask, Tell and, for a
	// StatsReporter, Stats, which completes BKB's deferred update), without
	// the objective's evaluation.
	Seconds float64
}

// Trace is the record of a run.
type Trace struct {
	Policy string
	// Best is the best noise-free reward over the arm set (NaN when unknown).
	Best  float64
	Steps []Step
}

// CumRegret returns the final cumulative regret (NaN when unknown).
func (t *Trace) CumRegret() float64 {
	if len(t.Steps) == 0 {
		return 0
	}
	return t.Steps[len(t.Steps)-1].CumRegret
}

// MeanSeconds returns the mean policy time per step over steps [from, to).
func (t *Trace) MeanSeconds(from, to int) float64 {
	to = min(to, len(t.Steps))
	if from >= to {
		return math.NaN()
	}
	var s float64
	for _, st := range t.Steps[from:to] {
		s += st.Seconds
	}
	return s / float64(to-from)
}

// RunOptions configures Run.
type RunOptions struct {
	// Steps is the budget T (required).
	Steps int
	// Noiseless, when set, gives the noise-free reward of a point, for
	// regret. It is evaluated once on every arm to find the best arm.
	Noiseless func(x []float64) float64
	// Progress, when set, is called after every step.
	Progress func(Step)
}

// Run plays p against obj on the arms for opt.Steps steps and returns the
// trace. An objective error stops the run and is returned with the trace
// so far; so does a cancelled context.
func Run(ctx context.Context, p Policy, arms *mat.Dense, obj Objective, opt RunOptions) (*Trace, error) {
	if err := checkArms(arms); err != nil {
		return nil, err
	}
	if opt.Steps <= 0 {
		return nil, fmt.Errorf("bandit: budget must be positive, got %d steps", opt.Steps)
	}
	n, _ := arms.Dims()
	tr := &Trace{Policy: p.Name(), Best: math.NaN(), Steps: make([]Step, 0, opt.Steps)}
	var values []float64
	if opt.Noiseless != nil {
		values = make([]float64, n)
		tr.Best = math.Inf(-1)
		for i := range values {
			values[i] = opt.Noiseless(arms.RawRowView(i))
			tr.Best = math.Max(tr.Best, values[i])
		}
	}
	stats, _ := p.(StatsReporter)
	cum, bestPlayed := 0.0, math.Inf(-1)
	for t := 1; t <= opt.Steps; t++ {
		if err := ctx.Err(); err != nil {
			return tr, err
		}
		start := time.Now()
		arm, err := p.Ask()
		if err != nil {
			return tr, fmt.Errorf("step %d: ask: %w", t, err)
		}
		el := time.Since(start)
		y, err := obj.Evaluate(ctx, arms.RawRowView(arm))
		if err != nil {
			return tr, fmt.Errorf("step %d: arm %d: %w", t, arm, err)
		}
		start = time.Now()
		if err := p.Tell(arm, y); err != nil {
			return tr, fmt.Errorf("step %d: %w", t, err)
		}
		// Stats is read inside the timed region: for BKB it runs the
		// observation's deferred pass over the arms (gp.DTC), which the
		// next Ask would run otherwise and which belongs to this step.
		var s Stats
		if stats != nil {
			s = stats.Stats()
		}
		el += time.Since(start)
		st := Step{T: t, Arm: arm, Y: y, Value: math.NaN(), Regret: math.NaN(), CumRegret: math.NaN(), SimpleRegret: math.NaN(), Seconds: el.Seconds()}
		if values != nil {
			st.Value = values[arm]
			st.Regret = tr.Best - st.Value
			cum += st.Regret
			st.CumRegret = cum
			bestPlayed = math.Max(bestPlayed, st.Value)
			st.SimpleRegret = tr.Best - bestPlayed
		}
		if stats != nil {
			st.DictionarySize, st.DictionaryChanges = s.DictionarySize, s.DictionaryChanges
		}
		tr.Steps = append(tr.Steps, st)
		if opt.Progress != nil {
			opt.Progress(st)
		}
	}
	return tr, nil
}

package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/storage"
)

// engine turns a study configuration and the events of a study (asks,
// completed and failed evaluations) into the next arm to evaluate. Its state
// is a deterministic function of the sequence of events, so replaying a
// journal's records rebuilds exactly the state a run had when it wrote them:
// optimize --resume, ask and an uninterrupted run choose the same arms.
//
// The policy sees arms scaled to the unit box (so that the default length
// scale suits every box) and rewards standardized by an affine map fixed
// from the initial design: the first Init asks return distinct random arms,
// and the policy is built when Init evaluations have completed, with
// shift = mean and scale = standard deviation of their rewards (reward =
// value when maximizing, -value when minimizing). Later values are told as
// (reward - shift)/scale. A failed evaluation tells the policy nothing; the
// GP policies keep its arm pending and never ask for it again (until the
// policy is rebuilt by a length-scale fit).
//
// With FitEvery = k, every k-th completed evaluation refreshes the affine
// map from all completed evaluations, refits the length scale and rebuilds
// the policy on every observation.
type engine struct {
	cfg  *studyConfig
	arms *mat.Dense // box coordinates
	unit *mat.Dense // unit-box coordinates, what the policy sees
	n    int

	design     *rand.Rand
	designSeen map[int]bool

	policy      bandit.Policy
	lengthScale float64
	shift       float64
	scale       float64

	// succ holds the completed evaluations in completion order.
	succ []observation
	// PolicySeconds is the time spent in the policy (asks, tells, fits).
	PolicySeconds float64
	// Fits records the length-scale fits.
	Fits []fitResult
}

// observation is one completed evaluation.
type observation struct {
	trial, arm int
	value      float64 // the objective's own value
}

func newEngine(cfg *studyConfig, arms *mat.Dense) *engine {
	n, d := arms.Dims()
	unit := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		src, dst := arms.RawRowView(i), unit.RawRowView(i)
		for j, v := range src {
			dst[j] = (v - cfg.Space.Lower[j]) / (cfg.Space.Upper[j] - cfg.Space.Lower[j])
		}
	}
	return &engine{cfg: cfg, arms: arms, unit: unit, n: n,
		design:     rand.New(rand.NewPCG(cfg.Seed, 0x64_65_73_69_67_6e)), // "design"
		designSeen: map[int]bool{}, lengthScale: cfg.Kernel.LengthScale, scale: 1}
}

// reward maps a value to the maximized reward.
func (e *engine) reward(v float64) float64 {
	if e.cfg.minimize() {
		return -v
	}
	return v
}

// told is the value told to the policy.
func (e *engine) told(v float64) float64 { return (e.reward(v) - e.shift) / e.scale }

// Ask returns the next arm.
func (e *engine) Ask() (int, error) {
	start := time.Now()
	defer func() { e.PolicySeconds += time.Since(start).Seconds() }()
	if e.policy == nil && len(e.succ) >= e.cfg.Init {
		if err := e.activate(); err != nil {
			return -1, err
		}
	}
	if e.policy == nil {
		return e.designArm(), nil
	}
	return e.policy.Ask()
}

// designArm returns a random arm not handed out by the design before (any
// arm once all have been).
func (e *engine) designArm() int {
	if len(e.designSeen) >= e.n {
		return e.design.IntN(e.n)
	}
	for {
		a := e.design.IntN(e.n)
		if !e.designSeen[a] {
			e.designSeen[a] = true
			return a
		}
	}
}

// activate fixes the reward scale from the initial design and builds the
// policy on what has been observed so far.
func (e *engine) activate() error {
	e.standardize(min(len(e.succ), max(e.cfg.Init, 1)))
	if k := e.cfg.FitEvery; k > 0 && len(e.succ) >= max(k, 2) && e.cfg.Policy != "random" {
		e.fit()
	}
	return e.rebuild()
}

// restandardizeDue reports whether t completed evaluations is a point of
// the doubling schedule Init*2^k (k >= 1) at which the affine map of
// rewards is refreshed from all observations and the policy rebuilt. The
// rebuilds cost O(A t^2) for an exact GP, about what the run itself costs.
func (e *engine) restandardizeDue(t int) bool {
	n0 := max(e.cfg.Init, 1)
	if t <= n0 || t%n0 != 0 {
		return false
	}
	q := t / n0
	return q&(q-1) == 0
}

// standardize sets the affine map of rewards from the first k completed
// evaluations: mean 0 and standard deviation 1.
func (e *engine) standardize(k int) {
	if !e.cfg.Standardize || k == 0 {
		return
	}
	r := make([]float64, k)
	for i, o := range e.succ[:k] {
		r[i] = e.reward(o.value)
	}
	e.shift = stat.Mean(r, nil)
	e.scale = 1
	if k > 1 {
		if sd := stat.StdDev(r, nil); sd > 1e-12*math.Max(1, math.Abs(e.shift)) {
			e.scale = sd
		}
	}
}

// rebuild makes a fresh policy with the current length scale and tells it
// every completed evaluation.
func (e *engine) rebuild() error {
	p, err := e.cfg.newPolicy(e.unit, e.lengthScale)
	if err != nil {
		return err
	}
	for _, o := range e.succ {
		if err := p.Tell(o.arm, e.told(o.value)); err != nil {
			return err
		}
	}
	e.policy = p
	return nil
}

// Tell records a completed evaluation.
func (e *engine) Tell(trial, arm int, value float64) error {
	start := time.Now()
	defer func() { e.PolicySeconds += time.Since(start).Seconds() }()
	if arm < 0 || arm >= e.n {
		return fmt.Errorf("trial %d: arm %d out of range [0,%d)", trial, arm, e.n)
	}
	e.succ = append(e.succ, observation{trial: trial, arm: arm, value: value})
	if e.policy == nil {
		return nil
	}
	if err := e.policy.Tell(arm, e.told(value)); err != nil {
		return err
	}
	if e.cfg.Policy == "random" {
		return nil
	}
	t := len(e.succ)
	fitDue := e.cfg.FitEvery > 0 && t%e.cfg.FitEvery == 0
	if fitDue || (e.cfg.Standardize && e.restandardizeDue(t)) {
		// The y scale is refreshed from every observation.
		e.standardize(t)
		if fitDue {
			e.fit()
		}
		return e.rebuild()
	}
	return nil
}

// fit refits the length scale.
func (e *engine) fit() {
	_, d := e.unit.Dims()
	x := make([]float64, 0, len(e.succ)*d)
	y := make([]float64, len(e.succ))
	for i, o := range e.succ {
		x = append(x, e.unit.RawRowView(o.arm)...)
		y[i] = e.told(o.value)
	}
	res := fitLengthScale(e.cfg.Kernel, e.cfg.Lambda, d, x, y, e.lengthScale)
	res.Observations = len(e.succ)
	e.Fits = append(e.Fits, res)
	e.lengthScale = res.LengthScale
}

// Stats returns the policy's statistics (zero before the policy starts or
// for random search).
func (e *engine) Stats() bandit.Stats {
	if s, ok := e.policy.(bandit.StatsReporter); ok {
		return s.Stats()
	}
	return bandit.Stats{}
}

// trialState is what a journal says about one trial.
type trialState struct {
	Trial   int
	Arm     int
	X       []float64
	Status  string // "pending", "complete" or "failed"
	Value   float64
	Error   string
	Seconds float64
	Time    time.Time
}

// trialLog is the table of trials a journal describes.
type trialLog struct {
	trials  []*trialState
	byTrial map[int]*trialState
}

// apply adds record number i (0-based) and returns the trial it concerns.
// It rejects records that contradict the ones before.
func (l *trialLog) apply(i int, r storage.Record, nArms int) (*trialState, error) {
	if l.byTrial == nil {
		l.byTrial = map[int]*trialState{}
	}
	switch r.Kind {
	case storage.KindAsk:
		if r.Trial != len(l.trials) {
			return nil, fmt.Errorf("journal record %d: ask for trial %d, want trial %d", i+1, r.Trial, len(l.trials))
		}
		if r.Arm < 0 || r.Arm >= nArms {
			return nil, fmt.Errorf("journal record %d: trial %d: arm %d is not one of this study's %d arms", i+1, r.Trial, r.Arm, nArms)
		}
		ts := &trialState{Trial: r.Trial, Arm: r.Arm, X: r.X, Status: "pending", Value: math.NaN(), Time: r.Time}
		l.trials = append(l.trials, ts)
		l.byTrial[r.Trial] = ts
		return ts, nil
	case storage.KindTell, storage.KindFail:
		ts := l.byTrial[r.Trial]
		switch {
		case ts == nil:
			return nil, fmt.Errorf("journal record %d: %s for trial %d, which was never asked", i+1, r.Kind, r.Trial)
		case ts.Status != "pending":
			return nil, fmt.Errorf("journal record %d: trial %d completed twice", i+1, r.Trial)
		case r.Arm != ts.Arm:
			return nil, fmt.Errorf("journal record %d: trial %d: %s for arm %d, asked for arm %d", i+1, r.Trial, r.Kind, r.Arm, ts.Arm)
		}
		ts.Seconds, ts.Time = r.Seconds, r.Time
		if r.Kind == storage.KindTell {
			ts.Status, ts.Value = "complete", *r.Y
		} else {
			ts.Status, ts.Error = "failed", r.Error
		}
		return ts, nil
	}
	return nil, fmt.Errorf("journal record %d: unknown kind %q", i+1, r.Kind)
}

// replay feeds a journal's records to the engine, in order, and returns the
// trials in trial order. An ask whose arm is not the one the engine would
// choose (a journal written by another build, or edited) is counted in
// diverged; the journal's arm is used all the same.
func (e *engine) replay(records []storage.Record) (trials []*trialState, diverged int, err error) {
	var log trialLog
	for i, r := range records {
		ts, err := log.apply(i, r, e.n)
		if err != nil {
			return nil, 0, err
		}
		switch r.Kind {
		case storage.KindAsk:
			arm, err := e.Ask()
			if err != nil {
				return nil, 0, err
			}
			if arm != r.Arm {
				diverged++
			}
		case storage.KindTell:
			if err := e.Tell(ts.Trial, ts.Arm, ts.Value); err != nil {
				return nil, 0, err
			}
		}
	}
	return log.trials, diverged, nil
}

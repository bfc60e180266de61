package study

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/storage"
)

// Pruned is the state of a trial stopped early on its intermediate values.
const Pruned State = "pruned"

// ErrPruned is returned by an objective that stopped its trial because
// Trial.ShouldPrune said so (Optuna's TrialPruned): Run records the trial
// as pruned, neither complete nor failed.
var ErrPruned = errors.New("trial pruned")

// ErrNotPending is returned by Report and Prune for a trial that is not
// pending (complete, failed, pruned, or enqueued and not asked yet).
var ErrNotPending = errors.New("trial is not pending")

// StepValue is an intermediate value of a trial.
type StepValue struct {
	Step  int     `json:"step"`
	Value float64 `json:"value"`
}

// Report stores value as the trial's intermediate value at step (an
// epoch, an iteration: any non-negative integer, each reported once) and
// asks the study's pruner whether the trial should stop; ShouldPrune then
// returns the answer. The decision reads the stored values only, so every
// worker sharing the study reaches the same one.
func (t *Trial) Report(ctx context.Context, step int, value float64) error {
	if t.s == nil {
		return errors.New("study: Report on a trial that no study handed out")
	}
	p, err := t.s.Report(ctx, t.Number, step, value)
	if err != nil {
		return err
	}
	t.prune = p
	return nil
}

// ShouldPrune reports whether the study's pruner said, at the trial's
// latest Report, that the trial should stop: the objective then returns
// ErrPruned. It is false before any Report and without a pruner.
func (t *Trial) ShouldPrune() bool { return t.prune }

// Report stores value as the intermediate value at step of the pending
// trial and returns whether the study's pruner says the trial should stop
// (false without a pruner). A step reported before with the same value is
// a no-op; with another value it is an error.
func (s *Study) Report(ctx context.Context, trial, step int, value float64) (prune bool, err error) {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return false, fmt.Errorf("study: trial %d: intermediate value %v at step %d is not finite", trial, value, step)
	}
	if math.Abs(value) > MaxAbsValue {
		return false, fmt.Errorf("study: trial %d: intermediate value %v is beyond ±%g: %w", trial, value, MaxAbsValue, ErrValueRange)
	}
	if step < 0 {
		return false, fmt.Errorf("study: trial %d: step %d is negative", trial, step)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.update(ctx, func() ([]storage.Record, error) {
		t, err := s.pendingTrial(trial, "report")
		if err != nil {
			return nil, err
		}
		for _, sv := range t.Intermediate {
			if sv.Step == step {
				if sv.Value == value {
					return nil, nil
				}
				return nil, fmt.Errorf("study %s: trial %d already reported %v at step %d", s.name, trial, sv.Value, step)
			}
		}
		v := value
		return []storage.Record{{Kind: storage.KindReport, Trial: trial, Arm: t.Arm, X: t.X, Step: step, Y: &v}}, nil
	})
	if err != nil {
		return false, err
	}
	return s.decide(trial, step), nil
}

// ShouldPrune returns the pruner's decision for the trial at its newest
// report, from the records stored up to that report: the decision Report
// returned for it.
func (s *Study) ShouldPrune(trial int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if trial < 0 || trial >= len(s.trials) || s.trials[trial] == nil || len(s.trials[trial].Intermediate) == 0 {
		return false
	}
	iv := s.trials[trial].Intermediate
	return s.decide(trial, iv[len(iv)-1].Step)
}

// pendingTrial returns trial if it is pending; what names the operation
// in errors.
func (s *Study) pendingTrial(trial int, what string) (*TrialResult, error) {
	if trial < 0 || trial >= len(s.trials) || s.trials[trial] == nil {
		return nil, fmt.Errorf("study %s has no trial %d (%d trials so far): %w", s.name, trial, len(s.trials), ErrNoTrial)
	}
	t := s.trials[trial]
	if t.State != Pending {
		return nil, fmt.Errorf("study %s: cannot %s trial %d: it is %s: %w", s.name, what, trial, t.State, ErrNotPending)
	}
	return t, nil
}

// decide runs the study's pruner for trial after its report of step,
// on the curves of the records up to that report (s.mu held). Reports
// stored after it by other trials are left out, so that the decision is
// the one the reporting worker made.
func (s *Study) decide(trial, step int) bool {
	p := s.cfg.Pruner.New()
	if p == nil {
		return false
	}
	// Find the report's position in the records.
	at := -1
	for i := len(s.records) - 1; i >= 0; i-- {
		if r := s.records[i]; r.Kind == storage.KindReport && r.Trial == trial && r.Step == step {
			at = i
			break
		}
	}
	if at < 0 {
		return false
	}
	return p.Prune(s.curves(at+1, trial))
}

// curves returns the pruner's view of the study after its first n
// records: every trial's curve but cur's, and cur's. Values are negated
// for a maximized objective (pruners minimize).
func (s *Study) curves(n, cur int) (pruner.Study, pruner.Curve) {
	sign := 1.0
	if s.cfg.Direction == Maximize {
		sign = -1
	}
	byTrial := map[int]*pruner.Curve{}
	get := func(t int) *pruner.Curve {
		c := byTrial[t]
		if c == nil {
			c = &pruner.Curve{Trial: t}
			byTrial[t] = c
		}
		return c
	}
	for i, r := range s.records[:n] {
		switch r.Kind {
		case storage.KindReport:
			c := get(r.Trial)
			c.Steps = append(c.Steps, r.Step)
			c.Values = append(c.Values, sign**r.Y)
			c.Seq = append(c.Seq, i)
		case storage.KindTell:
			if s.trials[r.Trial] != nil && s.trials[r.Trial].State == Complete {
				c := get(r.Trial)
				c.Complete, c.CompletedAt = true, i
			}
		}
	}
	out := pruner.Study{Name: s.name}
	var curve pruner.Curve
	for t := range len(s.trials) {
		c := byTrial[t]
		if c == nil {
			continue
		}
		if t == cur {
			curve = *c
			continue
		}
		out.Trials = append(out.Trials, *c)
	}
	return out, curve
}

// Prune records the pending trial as pruned (stopped early on its
// intermediate values, as its pruner said). Pruning a pruned trial again
// does nothing.
func (s *Study) Prune(ctx context.Context, trial int) error {
	_, err := s.prune(ctx, trial, -1, false)
	return err
}

// prune stores the prune record of trial; seconds < 0: the time since
// this Study asked it. With owned, a trial this Study no longer owns is
// left alone and note says so.
func (s *Study) prune(ctx context.Context, trial int, seconds float64, owned bool) (note string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seconds < 0 {
		seconds = 0
		if t0, ok := s.started[trial]; ok {
			seconds = time.Since(t0).Seconds()
		}
	}
	_, err = s.update(ctx, func() ([]storage.Record, error) {
		note = ""
		if trial >= 0 && trial < len(s.trials) && s.trials[trial] != nil && s.trials[trial].State == Pruned {
			return nil, nil
		}
		if owned && trial >= 0 && trial < len(s.trials) && s.trials[trial] != nil &&
			(s.trials[trial].State != Pending || s.owner[trial] != s.opts.Worker) {
			note = fmt.Sprintf("trial %d: this worker's pruning is dropped: the trial is %s and belongs to another worker", trial, s.trials[trial].State)
			return nil, nil
		}
		t, err := s.pendingTrial(trial, "prune")
		if err != nil {
			return nil, err
		}
		r := storage.Record{Kind: storage.KindPrune, Trial: trial, Arm: t.Arm, X: t.X, Seconds: seconds}
		if n := len(t.Intermediate); n > 0 {
			v := t.Intermediate[n-1].Value
			r.Step, r.Y = t.Intermediate[n-1].Step, &v
		}
		return []storage.Record{r}, nil
	})
	if err == nil {
		delete(s.started, trial)
	}
	return note, err
}

// prunedForecast is what the model is told about a pruned trial with
// tell=forecast: its curve extrapolated to the last step of the trials
// complete before it was pruned (pruner.Forecast), kept between the best
// final value of those trials and the largest value it reported. It reads
// the records before the trial's prune record only (or all of them while
// that record is being committed), so a replay tells the same value.
func (s *Study) prunedForecast(trial int) (float64, bool) {
	n := len(s.records)
	for i, r := range s.records {
		if r.Kind == storage.KindPrune && r.Trial == trial {
			n = i
			break
		}
	}
	view, cur := s.curves(n, trial)
	finals, final := view.Finals()
	if final < 0 || len(cur.Values) == 0 {
		return 0, false
	}
	best := slices.Min(finals)
	v, ok := pruner.Forecast(cur, final)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	v = math.Min(math.Max(v, best), slices.Max(cur.Values))
	if s.cfg.Direction == Maximize {
		v = -v
	}
	return v, true
}

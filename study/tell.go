package study

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/bkb-go/bkb/engine"
	"github.com/bkb-go/bkb/storage"
)

// Tell records the value of a pending trial. A value beyond ±MaxAbsValue
// is rejected with an error wrapping ErrValueRange and nothing is stored
// (record the trial failed instead). Telling a complete trial the same
// value again does nothing; another value is an error.
func (s *Study) Tell(ctx context.Context, trial int, value float64) error {
	return s.finish(ctx, trial, &value, "", -1, nil, nil)
}

// Fail records that the evaluation of a pending trial failed.
func (s *Study) Fail(ctx context.Context, trial int, reason string) error {
	if reason == "" {
		reason = "failed"
	}
	return s.finish(ctx, trial, nil, reason, -1, nil, nil)
}

// finish stores the outcome of a trial: a value, or a failure. seconds < 0
// means the time since this Study handed the trial out (0 if it did not).
func (s *Study) finish(ctx context.Context, trial int, value *float64, reason string, seconds float64, values, cons []float64) error {
	if value != nil {
		v, err := s.cfg.CheckOutcome(trial, *value, values, cons)
		if err != nil {
			return err
		}
		value = &v
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("study: trial %d: value %v is not finite (record a failed evaluation instead)", trial, v)
		}
		if math.Abs(v) > MaxAbsValue {
			return fmt.Errorf("study: trial %d: value %v is beyond ±%g: %w", trial, v, MaxAbsValue, ErrValueRange)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if seconds < 0 {
		seconds = 0
		if t0, ok := s.started[trial]; ok {
			seconds = time.Since(t0).Seconds()
		}
	}
	_, err := s.update(ctx, func() ([]storage.Record, error) {
		if trial < 0 || trial >= len(s.trials) || s.trials[trial] == nil {
			return nil, fmt.Errorf("study %s has no trial %d (%d trials so far): %w", s.name, trial, len(s.trials), ErrNoTrial)
		}
		t := s.trials[trial]
		switch t.State {
		case Waiting:
			return nil, fmt.Errorf("study %s: trial %d is enqueued and was never asked", s.name, trial)
		case Complete:
			if value != nil && *value == t.Value && sameOutcome(t, values, cons) {
				return nil, nil // told again: nothing to do
			}
			return nil, fmt.Errorf("study %s: trial %d is already complete (value %v)", s.name, trial, t.Value)
		case Failed:
			if value == nil && reason == t.Error {
				return nil, nil
			}
			return nil, fmt.Errorf("study %s: trial %d has already failed (%s)", s.name, trial, t.Error)
		case Pruned:
			return nil, fmt.Errorf("study %s: trial %d was pruned", s.name, trial)
		}
		r := storage.Record{Kind: storage.KindTell, Trial: trial, Arm: t.Arm, X: t.X, Y: value, Seconds: seconds}
		if value == nil {
			r.Kind, r.Error = storage.KindFail, reason
		} else {
			r.Values, r.Constraints = s.outcomeFields(values, cons)
		}
		return []storage.Record{r}, nil
	})
	if err == nil {
		delete(s.started, trial)
	}
	return err
}

// finishOwned stores the outcome of an evaluation of trial that this Study
// asked (Run's workers), by the rule of one live owner per trial: while
// this Study owns the trial (its ask is the trial's latest) the outcome is
// the trial's. Once another worker has asked the trial again (its
// heartbeats lapsed, so it was taken for stopped) or the trial was
// completed or failed in its place, a value is kept as an extra
// observation: a new trial at the same point (enqueue, ask and tell
// records, as ImportCSV writes), counted against the budget; when the
// budget has no room left, or the outcome is a failure, it is dropped.
// note then says what became of it, for the user; late results are never
// an error.
func (s *Study) finishOwned(ctx context.Context, trial int, value *float64, reason string, seconds float64) (note string, err error) {
	return s.finishOwnedWith(ctx, trial, value, reason, seconds, nil, nil)
}

// finishOwnedWith is finishOwned with the values of several objectives and
// the constraint values (tradeoffs.go).
func (s *Study) finishOwnedWith(ctx context.Context, trial int, value *float64, reason string, seconds float64, values, cons []float64) (note string, err error) {
	if value != nil {
		v, err := s.cfg.CheckOutcome(trial, *value, values, cons)
		if err != nil {
			return "", err
		}
		value = &v
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "", fmt.Errorf("study: trial %d: value %v is not finite (record a failed evaluation instead)", trial, v)
		}
		if math.Abs(v) > MaxAbsValue {
			return "", fmt.Errorf("study: trial %d: value %v is beyond ±%g: %w", trial, v, MaxAbsValue, ErrValueRange)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.update(ctx, func() ([]storage.Record, error) {
		note = ""
		if trial < 0 || trial >= len(s.trials) || s.trials[trial] == nil {
			return nil, fmt.Errorf("study %s has no trial %d (%d trials so far): %w", s.name, trial, len(s.trials), ErrNoTrial)
		}
		t := s.trials[trial]
		if t.State == Pending && s.owner[trial] == s.opts.Worker {
			r := storage.Record{Kind: storage.KindTell, Trial: trial, Arm: t.Arm, X: t.X, Y: value, Seconds: seconds}
			if value == nil {
				r.Kind, r.Error = storage.KindFail, reason
			} else {
				r.Values, r.Constraints = s.outcomeFields(values, cons)
			}
			return []storage.Record{r}, nil
		}
		if t.State == Complete && value != nil && *value == t.Value && s.owner[trial] == s.opts.Worker {
			return nil, nil // our own tell, stored by an attempt whose reply was lost
		}
		why := "another worker asked it again after its heartbeats lapsed"
		switch t.State {
		case Complete:
			why = fmt.Sprintf("it was completed by another worker (value %v) after its heartbeats lapsed", t.Value)
		case Failed:
			why = fmt.Sprintf("it was recorded failed (%s)", t.Error)
		case Pruned:
			why = "it was recorded pruned"
		}
		if value == nil {
			note = fmt.Sprintf("trial %d: this worker's failed evaluation (%s) is dropped: %s", trial, reason, why)
			return nil, nil
		}
		if b := s.cfg.Budget; b > 0 && s.nextTrial() >= b {
			note = fmt.Sprintf("trial %d: this worker's value %v is dropped: %s, and the budget of %d trials has no room for it as an extra observation", trial, *value, why, b)
			return nil, nil
		}
		raw, err := json.Marshal(s.cfg.Space.ParamsOf(t.X))
		if err != nil {
			return nil, err
		}
		n := s.nextTrial()
		base := storage.Record{Trial: n, Arm: -1, X: slices.Clone(t.X)}
		enq, ask, tell := base, base, base
		enq.Kind, enq.Params = storage.KindEnqueue, raw
		ask.Kind, ask.Params, ask.Worker = storage.KindAsk, raw, s.opts.Worker
		tell.Kind, tell.Y, tell.Seconds = storage.KindTell, value, seconds
		tell.Values, tell.Constraints = s.outcomeFields(values, cons)
		note = fmt.Sprintf("trial %d: %s; this worker's value %v is kept as trial %d, an extra observation at the same point", trial, why, *value, n)
		return []storage.Record{enq, ask, tell}, nil
	})
	if err != nil {
		return "", err
	}
	delete(s.started, trial)
	return note, nil
}

// Enqueue adds a trial at the given point, handed out by Ask before any
// new suggestion (Optuna's enqueue_trial): a warm start from points known
// to be good. Every parameter must be given, valid for its type. It
// returns the trial's number.
func (s *Study) Enqueue(ctx context.Context, params map[string]any) (int, error) {
	x, err := s.cfg.Space.PointOf(params)
	if err != nil {
		return -1, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	recs, err := s.update(ctx, func() ([]storage.Record, error) {
		raw, err := json.Marshal(s.cfg.Space.ParamsOf(x))
		if err != nil {
			return nil, err
		}
		return []storage.Record{{Kind: storage.KindEnqueue, Trial: s.nextTrial(), Arm: -1, X: x, Params: raw}}, nil
	})
	if err != nil {
		return -1, err
	}
	return recs[0].Trial, nil
}

// ImportCSV adds earlier evaluations as complete trials, from CSV lines
// of one value per parameter (a categorical by its label) then the
// objective's value; a header line naming the columns (the value column
// under any other name) may come first. A header with a column named
// "value" may have other columns, which are ignored, and with a "status"
// column only the rows whose status is "complete" are imported: the CSV
// that bkb export and optimize --trace write reads back as it is. The trials count against the
// budget. It returns the number of trials added.
func (s *Study) ImportCSV(ctx context.Context, r io.Reader, name string) (int, error) {
	if s.cfg.Tradeoffs() {
		return 0, errors.New("study: importing a CSV file into a study with constraints or several objectives is not supported (its rows carry one value)")
	}
	rows, err := engine.ReadCSV(r, s.cfg.Space, name, true)
	if err != nil {
		return 0, err
	}
	for _, row := range rows {
		if math.Abs(row.Value) > MaxAbsValue {
			return 0, fmt.Errorf("study: %s:%d: value %v is beyond ±%g: %w", name, row.Line, row.Value, MaxAbsValue, ErrValueRange)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.update(ctx, func() ([]storage.Record, error) {
		var out []storage.Record
		next := s.nextTrial()
		for i, row := range rows {
			raw, err := json.Marshal(s.cfg.Space.ParamsOf(row.X))
			if err != nil {
				return nil, err
			}
			v := row.Value
			base := storage.Record{Trial: next + i, Arm: -1, X: row.X, Params: raw, Worker: s.opts.Worker}
			enq, ask, tell := base, base, base
			enq.Kind, ask.Kind, tell.Kind, tell.Y = storage.KindEnqueue, storage.KindAsk, storage.KindTell, &v
			enq.Worker, tell.Params, tell.Worker = "", nil, ""
			out = append(out, enq, ask, tell)
		}
		return out, nil
	})
	if err != nil {
		return 0, err
	}
	return len(rows), nil
}

// Outcome is the result of one evaluation, for TellOutcome.
type Outcome struct {
	Value float64 // the objective's value (ignored when Failed or with Values)
	// Values are every objective's values, for a study with several
	// objectives (Config.Directions).
	Values []float64
	// Constraints are the constraint values c_j(x) of a constrained study
	// (Config.Constraints): feasible when every one is <= 0.
	Constraints []float64
	Failed      string  // non-empty: the evaluation failed, with this reason
	Seconds     float64 // evaluation time to record (0: the time since Ask, if this Study asked it)
}

// TellOutcome records the outcome of a pending trial: Tell or Fail with
// the evaluation time of an evaluation made elsewhere.
func (s *Study) TellOutcome(ctx context.Context, trial int, o Outcome) error {
	secs := o.Seconds
	if secs == 0 {
		secs = -1
	}
	if o.Failed != "" {
		return s.finish(ctx, trial, nil, o.Failed, secs, nil, nil)
	}
	v := o.Value
	if len(o.Values) > 0 {
		v = o.Values[0]
	}
	return s.finish(ctx, trial, &v, "", secs, o.Values, o.Constraints)
}

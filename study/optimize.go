package study

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Objective evaluates a trial: it returns the objective's value at
// t.Params, or an error for a failed evaluation. It should return promptly
// when ctx is done.
type Objective func(ctx context.Context, t *Trial) (float64, error)

// RunOptions configure Run.
type RunOptions struct {
	// Trials is the number of trials this call evaluates (0: until the
	// study's budget is reached; then the study must have one).
	Trials int
	// Fatal reports whether an objective's error stops the run instead of
	// failing the trial (the trial then stays pending and a resumed run
	// evaluates it again): for example a plugin that used up its restarts.
	Fatal func(error) bool
	// OnTrial is called after each trial ends (complete or failed), from
	// the goroutine that called Run.
	OnTrial func(TrialResult)
}

// ErrTooManyFailures is returned by Run when the study's MaxFailures
// failed trials are reached.
var ErrTooManyFailures = errors.New("too many failed trials")

// ErrNoCompleteTrial is returned by Run when every trial it evaluated
// failed and the study has no complete trial.
var ErrNoCompleteTrial = errors.New("every trial failed")

// Optimize evaluates n trials of the study with f (n = 0: until the
// study's budget), one at a time, storing each outcome as it arrives. See
// Run.
func (s *Study) Optimize(ctx context.Context, f Objective, n int) error {
	return s.Run(ctx, f, RunOptions{Trials: n})
}

// Run evaluates trials with f until opt.Trials trials were evaluated or
// the study's budget is reached. A trial whose evaluation fails is stored
// as failed (so is a value beyond ±MaxAbsValue) and the run goes on, until
// the study has Config.MaxFailures failed trials. When ctx is done Run
// returns an error wrapping ctx.Err(), leaving the trial being evaluated
// pending: a later Run (in this or another process, after Load) evaluates
// it again. Run returns an error wrapping ErrNoCompleteTrial when the study
// has failed trials and no complete one.
func (s *Study) Run(ctx context.Context, f Objective, opt RunOptions) error {
	if opt.Trials < 0 {
		return fmt.Errorf("study: Run: negative number of trials %d", opt.Trials)
	}
	if opt.Trials == 0 && s.cfg.Budget == 0 {
		return errors.New("study: Run: the study has no budget; give the number of trials")
	}
	ran := 0
	for opt.Trials == 0 || ran < opt.Trials {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("study: stopped after %d trials: %w", ran, err)
		}
		t, err := s.Ask(ctx)
		if errors.Is(err, ErrComplete) {
			break
		}
		if err != nil {
			return err
		}
		t0 := time.Now()
		v, ferr := f(ctx, t)
		secs := time.Since(t0).Seconds()
		ran++
		if ferr != nil && ctx.Err() != nil {
			return fmt.Errorf("study: stopped during trial %d: %w", t.Number, ctx.Err())
		}
		if ferr != nil && opt.Fatal != nil && opt.Fatal(ferr) {
			return fmt.Errorf("trial %d: %w", t.Number, ferr)
		}
		if ferr == nil {
			err = s.finish(ctx, t.Number, &v, "", secs)
			if errors.Is(err, ErrValueRange) {
				ferr = err
			} else if err != nil {
				return err
			}
		}
		if ferr != nil {
			if err := s.finish(ctx, t.Number, nil, oneLine(ferr.Error()), secs); err != nil {
				return err
			}
		}
		if opt.OnTrial != nil {
			if r, ok := s.trial(t.Number); ok {
				opt.OnTrial(r)
			}
		}
		n := s.counts()
		if ferr != nil && s.cfg.MaxFailures > 0 && n[Failed] >= s.cfg.MaxFailures {
			return fmt.Errorf("study: stopping: %d trials failed (max failures %d): %w", n[Failed], s.cfg.MaxFailures, ErrTooManyFailures)
		}
	}
	if n := s.counts(); n[Complete] == 0 && n[Failed] > 0 {
		return fmt.Errorf("study: %d trials failed and none completed: %w", n[Failed], ErrNoCompleteTrial)
	}
	return nil
}

// trial returns one trial's result.
func (s *Study) trial(n int) (TrialResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n >= len(s.trials) || s.trials[n] == nil {
		return TrialResult{}, false
	}
	return *s.trials[n], true
}

// counts returns the number of trials in each state.
func (s *Study) counts() map[State]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count()
}

// oneLine keeps the first line of an error message.
func oneLine(msg string) string {
	for i, c := range msg {
		if c == '\n' {
			return msg[:i]
		}
	}
	return msg
}

package study

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/engine"
	"github.com/bkb-go/bkb/storage"
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
	// Workers is the number of evaluations in flight (default 1). With
	// more, a worker asks for a new trial as soon as it is free: the policy
	// conditions on the pending trials (asynchronous batches), and a
	// batched policy that closed its batch makes the worker wait for a
	// result. The objective is then called from several goroutines.
	Workers int
	// Fatal reports whether an objective's error stops the run instead of
	// failing the trial (the trial then stays pending and a resumed run
	// evaluates it again): for example a plugin that used up its restarts.
	Fatal func(error) bool
	// OnTrial is called after each trial ends (complete or failed), one
	// call at a time.
	OnTrial func(TrialResult)
	// HeartbeatEvery is how often the storage is told that the running
	// trials are alive (default 10 s): well inside the storage's grace
	// period (storage/postgres: 1 minute by default).
	HeartbeatEvery time.Duration
	// OnLate is called, one call at a time, when an evaluation's outcome
	// arrives for a trial this run no longer owns (another worker asked it
	// again after this run's heartbeats lapsed, or it was recorded failed):
	// note says whether the value was kept as an extra trial or dropped.
	// Such outcomes never stop the run.
	OnLate func(trial int, note string)
	// WaitPending makes a worker that finds every trial of the budget
	// asked wait, instead of returning, while trials asked by other
	// workers are pending: they end complete, or their worker stops and
	// this run fails or evaluates them (Options.Stale), so that when the
	// run returns nothing is left pending by a stopped worker. Trials
	// asked without a worker id (bkb ask) are not waited for.
	WaitPending bool
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
// the study's budget is reached, opt.Workers at a time. A trial whose
// evaluation fails is stored as failed (so is a NaN or infinite value, a
// value beyond ±MaxAbsValue, and a panic in f, recovered as a *PanicError
// with the panic's message) and the run goes on, until the study has
// Config.MaxFailures failed trials. When ctx is done Run returns an error
// wrapping ctx.Err(), leaving the trials being evaluated pending: a later
// Run (in this or another process, after Load) evaluates them again. Run
// returns an error wrapping ErrNoCompleteTrial when the study has failed
// trials and no complete one.
func (s *Study) Run(ctx context.Context, f Objective, opt RunOptions) error {
	if opt.Trials < 0 {
		return fmt.Errorf("study: Run: negative number of trials %d", opt.Trials)
	}
	if opt.Trials == 0 && s.cfg.Budget == 0 {
		return errors.New("study: Run: the study has no budget; give the number of trials")
	}
	workers := max(opt.Workers, 1)
	if opt.HeartbeatEvery <= 0 {
		opt.HeartbeatEvery = 10 * time.Second
	}
	r := &runner{s: s, f: f, opt: opt, running: map[int]bool{}, told: make(chan struct{}, 1)}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		r.heartbeats(rctx)
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.work(rctx); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	cancel(nil)
	<-hbDone
	// The asks since the last due snapshot, saved for the next process
	// (also when ctx is done: Ctrl-C is how long runs end). A failure was
	// noted (Options.Notify); the trials are stored all the same.
	_ = s.Checkpoint(context.WithoutCancel(ctx))
	if err := context.Cause(rctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("study: stopped after %d trials: %w", r.ran, err)
	}
	if n := s.counts(); n[Complete] == 0 && n[Failed] > 0 {
		return fmt.Errorf("study: %d trials failed and none completed: %w", n[Failed], ErrNoCompleteTrial)
	}
	return nil
}

// runner is the state Run's workers share.
type runner struct {
	s   *Study
	f   Objective
	opt RunOptions

	mu      sync.Mutex
	started int          // trials handed to workers
	ran     int          // trials finished
	running map[int]bool // trials being evaluated
	told    chan struct{}
}

// claim reserves a trial slot; false when the run has its trials.
func (r *runner) claim() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opt.Trials > 0 && r.started >= r.opt.Trials {
		return false
	}
	r.started++
	return true
}

func (r *runner) unclaim() {
	r.mu.Lock()
	r.started--
	r.mu.Unlock()
}

// work is one worker's loop.
func (r *runner) work(ctx context.Context) error {
	var wait time.Duration // WaitPending's poll interval
	for {
		if ctx.Err() != nil {
			return nil
		}
		if !r.claim() {
			return nil
		}
		t, err := r.s.Ask(ctx)
		switch {
		case errors.Is(err, ErrComplete) && r.opt.WaitPending && r.othersPending():
			// Trials of other workers are pending: wait for them to end,
			// or to be found stale (then the next Ask fails or re-asks
			// them).
			r.unclaim()
			wait = min(max(2*wait, 50*time.Millisecond), time.Second)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
			continue
		case errors.Is(err, ErrComplete):
			r.unclaim()
			return nil
		case errors.Is(err, bandit.ErrBatchFull):
			// The batch is closed: wait for a result (ours or, through the
			// storage, another process's) and ask again.
			r.unclaim()
			select {
			case <-ctx.Done():
				return nil
			case <-r.told:
			case <-time.After(50 * time.Millisecond):
			}
			continue
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := r.evaluate(ctx, t); err != nil {
			return err
		}
	}
}

// evaluate runs the objective on t and stores the outcome.
func (r *runner) evaluate(ctx context.Context, t *Trial) error {
	r.mu.Lock()
	r.running[t.Number] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.running, t.Number)
		r.mu.Unlock()
	}()
	t0 := time.Now()
	v, ferr := callObjective(ctx, r.f, t)
	secs := time.Since(t0).Seconds()
	var panicked *PanicError
	if ferr != nil && ctx.Err() != nil && !errors.As(ferr, &panicked) {
		return nil // interrupted: the trial stays pending
	}
	if ferr != nil && !errors.Is(ferr, ErrPruned) && r.opt.Fatal != nil && r.opt.Fatal(ferr) {
		return fmt.Errorf("trial %d: %w", t.Number, ferr)
	}
	// The outcome is stored even if another worker stops the run now.
	sctx := context.WithoutCancel(ctx)
	var note string
	if errors.Is(ferr, ErrPruned) {
		var err error
		if note, err = r.s.prune(sctx, t.Number, secs, true); err != nil {
			return err
		}
		ferr = nil
	} else if ferr == nil {
		var err error
		note, err = r.s.finishOwnedWith(sctx, t.Number, &v, "", secs, t.values, t.constraints)
		if errors.Is(err, ErrValueRange) || engine.IsOutcomeError(err) {
			ferr = err
		} else if err != nil {
			return err
		}
	}
	if ferr != nil {
		var err error
		if note, err = r.s.finishOwned(sctx, t.Number, nil, oneLine(ferr.Error()), secs); err != nil {
			return err
		}
	}
	if note != "" {
		// Another worker owns the trial now: its outcome is that
		// worker's to report.
		r.mu.Lock()
		if r.opt.OnLate != nil {
			r.opt.OnLate(t.Number, note)
		}
		r.mu.Unlock()
		return nil
	}
	select {
	case r.told <- struct{}{}:
	default:
	}
	r.mu.Lock()
	r.ran++
	if r.opt.OnTrial != nil {
		if res, ok := r.s.trial(t.Number); ok {
			r.opt.OnTrial(res)
		}
	}
	r.mu.Unlock()
	if n := r.s.counts(); ferr != nil && r.s.cfg.MaxFailures > 0 && n[Failed] >= r.s.cfg.MaxFailures {
		return fmt.Errorf("study: stopping: %d trials failed (max failures %d): %w", n[Failed], r.s.cfg.MaxFailures, ErrTooManyFailures)
	}
	return nil
}

// othersPending reports whether a trial asked by a worker (an id
// storage.ParseWorkerID reads) other than this run's goroutines is
// pending: one that will end, or whose worker will be found stopped.
func (r *runner) othersPending() bool {
	r.mu.Lock()
	running := maps.Clone(r.running)
	r.mu.Unlock()
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.trials {
		if t == nil || t.State != Pending || running[t.Number] || s.owner[t.Number] == s.opts.Worker {
			continue
		}
		if _, _, ok := storage.ParseWorkerID(s.owner[t.Number]); ok {
			return true
		}
	}
	return false
}

// PanicError is the error of a trial whose objective panicked: Run
// recovers the panic, records the trial as failed with the panic's message
// and goes on, as for any other failed evaluation.
type PanicError struct {
	Value any    // the value passed to panic
	Stack []byte // the objective's goroutine stack at the panic
}

func (e *PanicError) Error() string { return fmt.Sprintf("objective panicked: %v", e.Value) }

// callObjective calls f, turning a panic into a *PanicError and a value
// that is not finite (NaN, ±Inf) into an error: both fail the trial, as an
// error returned by f does, instead of crashing the caller or stopping the
// run (Optuna records such trials as failed too).
func callObjective(ctx context.Context, f Objective, t *Trial) (v float64, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = 0, &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	v, err = f(ctx, t)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		return v, fmt.Errorf("objective returned %v", v)
	}
	return v, err
}

// heartbeats tells the storage that the running trials are alive until
// ctx is done.
func (r *runner) heartbeats(ctx context.Context) {
	tick := time.NewTicker(r.opt.HeartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r.mu.Lock()
		trials := make([]int, 0, len(r.running))
		for t := range r.running {
			trials = append(trials, t)
		}
		r.mu.Unlock()
		if len(trials) > 0 {
			slices.Sort(trials)
			_ = r.s.st.Heartbeat(ctx, r.s.name, trials) // a missed beat is retried at the next tick
		}
	}
}

// trial returns one trial's result.
func (s *Study) trial(n int) (TrialResult, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n >= len(s.trials) || s.trials[n] == nil {
		return TrialResult{}, false
	}
	return *s.withParams(s.trials[n]), true
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

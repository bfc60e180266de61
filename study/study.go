// Package study is the optimization study: a typed search space, a
// policy (BKB, GP-UCB, ...) on candidates encoded for the GP, value
// standardization, the initial design and length-scale fits, all driven by
// the events of the study kept in a storage.Storage. It is what the bkb
// command runs, and what a Go program uses to tune its own parameters,
// in the spirit of Optuna's study:
//
//	st := storage.NewMemory() // or a journal file, or PostgreSQL
//	s, err := study.Create(ctx, st, "demo", study.Config{Space: space, Budget: 60})
//	err = s.Optimize(ctx, func(ctx context.Context, t *study.Trial) (float64, error) {
//		return train(t.Params.Float("lr"), t.Params.Int("layers"))
//	}, 0)
//	best, _ := s.Best()
//
// Every suggestion is computed from the stored events alone, under the
// storage's lock (storage.Storage.Update): a resumed run, any number of
// workers in other processes or on other machines, and an uninterrupted
// run replay the same events into the same state and choose the same
// points.
//
// # Conditional spaces, not define-by-run
//
// A parameter may exist only for some values of another (Param.When, a
// space file's "condition"; condition.go and docs/conditional.md):
//
//	space, err := study.NewSpace(
//		study.Categorical("kernel", "rbf", "poly"),
//		study.LogFloat("gamma", 1e-3, 1).When("kernel", "rbf"),
//		study.Int("degree", 2, 5).When("kernel", "poly"),
//	)
//
// A trial's Params then hold its active parameters only: Params.Has says
// whether one is, and Trial.GetFloat, GetInt and GetString return an error
// wrapping ErrInactive for a parameter of the space the trial does not
// activate. This is what Optuna's define-by-run trials
// (t.suggest_float("gamma", ...) inside an if) map to here. A true
// define-by-run trial, whose parameters are declared by the objective as
// it runs, does not fit this engine: the GP's encoding, the space-filling
// candidates and the growing candidates are built from the space before
// the first ask, and every process that replays a study rebuilds them
// from its stored configuration, which must therefore hold the whole
// space; a space discovered by the objective would change under the
// stored records. So the space, with its conditions, is declared up front,
// and the objective reads the parameters its branch has.
package study

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/bkb-go/bkb/bandit"
	"github.com/bkb-go/bkb/engine"
	"github.com/bkb-go/bkb/storage"
)

// Errors of a study.
var (
	// ErrComplete is returned by Ask when the study's budget of trials has
	// been asked.
	ErrComplete = errors.New("study is complete")
	// ErrValueRange is returned by Tell for a value beyond ±MaxAbsValue.
	ErrValueRange = engine.ErrValueRange
	// ErrNoTrial is returned for a trial number the study does not have.
	ErrNoTrial = errors.New("no such trial")
	// ErrLazyWithdrawn is returned by Create for a configuration with Lazy
	// or Eliminate: measured side by side, lazy steps cost more CPU than
	// the full scan on most problems and twice its memory on all
	// (docs/scaling.md). Studies stored with them still load and replay.
	ErrLazyWithdrawn = errors.New("study: lazy UCB steps (lazy, eliminate) are withdrawn for new studies: they cost more CPU per step than the full scan in most settings measured and twice its peak memory in all (docs/scaling.md); studies stored with them still replay")
	// ErrReplay marks a stored record the study's policy cannot replay (an
	// arm that is not the record's point in the study's arm set): the
	// journal or database was changed or damaged. It is the records' fault,
	// not the objective's.
	ErrReplay = errors.New("the study's records do not replay")
)

// replayError is an error replaying a stored record; it matches ErrReplay
// and keeps the message of the error it wraps.
type replayError struct{ error }

func (e replayError) Unwrap() error { return e.error }

func (e replayError) Is(target error) bool { return target == ErrReplay }

// State is the state of a trial.
type State string

// Trial states.
const (
	Waiting  State = "waiting"  // enqueued, not asked yet
	Pending  State = "pending"  // asked, being evaluated
	Complete State = "complete" // evaluated, with a value
	Failed   State = "failed"   // the evaluation failed
)

// StalePolicy says what becomes of a trial whose worker stopped (see
// storage.View.Stale).
type StalePolicy int

const (
	// Requeue asks the trial again, at the same point (the default): a
	// resumed run evaluates the trials its killed predecessor left pending.
	Requeue StalePolicy = iota
	// FailStale records the trial as failed.
	FailStale
)

// Options are the per-process options of a Study (not stored).
type Options struct {
	// Worker identifies this process in the trials it asks; default
	// "host:pid:nonce".
	Worker string
	// Stale says what becomes of trials whose worker stopped.
	Stale StalePolicy
	// Budget, when positive, replaces the stored budget for this process:
	// a user extends a finished study.
	Budget int
	// Notify, if set, receives one-line notes a user may want to see: a
	// snapshot that could not be used (the study then replays its
	// records) or saved. The study works the same without it.
	Notify func(msg string)
	// Progress, if set, is called while the engine replays records for
	// more than a second, with the records done and the total, about
	// every 100 ms (and once more at the end).
	Progress func(done, total int)
	// SnapshotEveryAsk saves a snapshot after every ask whose policy step
	// costs more than the save (SnapshotEvery times), for a process that
	// makes one ask and exits (the bkb ask command): the next process then
	// restores it instead of replaying. Without it, a long-lived process
	// (an optimization loop, a worker, the server) saves when the records
	// have grown by an eighth since its newest snapshot, or after
	// MaxReplaySeconds of policy time, and Checkpoint saves the rest: the
	// snapshots written over a study's life then total about nine times
	// the last one, not one per ask (docs/long-studies.md).
	SnapshotEveryAsk bool
}

// Trial is a point handed out for evaluation.
type Trial struct {
	// Number is the trial's number in the study, from 0.
	Number int
	// Params are the point's parameters by name, each in its own type.
	Params Params
	// X holds the point's values, one per parameter in the space's order
	// (a categorical as the index of its choice).
	X []float64
	// Arm is the point's index in the study's candidate set.
	Arm int
	// values and constraints are set by the Objective (SetValues,
	// SetConstraints).
	values, constraints []float64

	s     *Study // the study that asked it (Report)
	prune bool   // the pruner's decision at the latest Report
}

// TrialResult is what a study knows about one trial.
type TrialResult struct {
	Number int       `json:"trial"`
	State  State     `json:"state"`
	Arm    int       `json:"arm"`
	X      []float64 `json:"x"`
	Params Params    `json:"params"`
	Value  float64   `json:"value"` // NaN unless complete
	// Values are every objective's values (several objectives only).
	Values []float64 `json:"values,omitempty"`
	// Constraints are the constraint values c_j(x) (constrained studies).
	Constraints []float64 `json:"constraints,omitempty"`
	// Infeasible marks a complete trial with a constraint value > 0.
	Infeasible bool      `json:"infeasible,omitempty"`
	Error      string    `json:"error,omitempty"`
	Seconds    float64   `json:"seconds,omitempty"`
	Time       time.Time `json:"time"`
	// Intermediate holds the trial's reported values, in report order.
	Intermediate []StepValue `json:"intermediate,omitempty"`
}

// Study is an optimization study on a storage. Its methods are safe for
// concurrent use; every one that changes the study stores its event
// before it returns.
type Study struct {
	st   storage.Storage
	name string
	// cfg is the configuration in force in this process: the stored one,
	// with Options.Budget when it extends the study.
	cfg Config
	// stored is the configuration as stored, which the engine reads:
	// replay depends only on what the records and the header hold, never
	// on a process's options (a local step's start is a share of the
	// budget the study was created with, whichever budget a command
	// extends it to).
	stored Config
	opts   Options

	mu      sync.Mutex
	header  storage.Header
	records []storage.Record // every record applied, in storage order
	trials  []*TrialResult   // by trial number; nil for numbers not seen
	// waiting counts the trials in state Waiting, so that an ask looks
	// for an enqueued point only when there is one (not a scan of every
	// trial of a 100,000-trial study per ask).
	waiting int
	eng     *engine.Engine // nil: rebuild from records before use
	started map[int]time.Time
	// digests[i] is the chained digest of records[:i+1] (snapshot.go).
	digests [][32]byte
	// snapPolicy is the engine's policy time at the newest snapshot this
	// process saved or restored, saveCost the seconds its last save took.
	snapPolicy, saveCost float64
	// snapRecords is the number of records the newest snapshot this
	// process saved or restored covers (0: none).
	snapRecords int
	// written is the bytes of the snapshots this process saved.
	written int
	// saveEvery is engine.SnapshotEvery (snapshotDue); a test sets 0 to
	// see the other rules alone.
	saveEvery float64
	// snapBytes is the size of the newest snapshot's data this process
	// saved or restored: the next encoding starts with that much room.
	snapBytes int
	// spare is a buffer no longer in use that the next snapshot is
	// encoded into (the data of the snapshot restored, once decoded, or
	// of the last one saved) on a storage that keeps snapshots whole
	// only: a long study's snapshot is tens of MB, and fresh memory of
	// that size costs its page faults at every save. A storage with
	// storage.SnapshotStreams needs none: the data is never held whole.
	spare []byte
	// preloaded is the snapshot Ask read before taking the storage's
	// lock, for restore (preloadDone: it was read, whatever it holds).
	preloaded   readSnapshot
	preloadDone bool
	// owner holds the Worker of each trial's latest ask: the trial's
	// owner (a trial re-asked after its worker stopped belongs to the
	// worker that asked it again).
	owner map[int]string
	// ignored counts stored values beyond ±MaxAbsValue (Info.Ignored).
	ignored int
}

// Create creates the study name on st with the configuration cfg
// (normalized: the stored configuration holds every default).
func Create(ctx context.Context, st storage.Storage, name string, cfg Config, opts ...Options) (*Study, error) {
	if cfg.Lazy || cfg.Eliminate {
		return nil, ErrLazyWithdrawn
	}
	if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	s := newStudy(st, name, cfg, opts)
	// Build the arm set first: a bad CSV file must not leave a study.
	eng, err := engine.New(&s.stored)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(s.stored)
	if err != nil {
		return nil, fmt.Errorf("study: %w", err)
	}
	if s.header, err = st.CreateStudy(ctx, name, raw); err != nil {
		return nil, err
	}
	eng.SetForecast(s.prunedForecast)
	eng.SetSeconds(s.evaluationSeconds)
	s.eng = eng
	return s, nil
}

// Load opens the existing study name on st and replays its records. A
// storage holding one study (a journal file) accepts the name "".
func Load(ctx context.Context, st storage.Storage, name string, opts ...Options) (*Study, error) {
	h, err := st.Study(ctx, name)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = h.Name // a storage that holds one study (a journal file)
	}
	cfg, err := DecodeConfig(h.Config)
	if err != nil {
		return nil, fmt.Errorf("study %s: %w", name, err)
	}
	if len(opts) == 0 || opts[0].Budget <= 0 {
		// A budget extended after the creation (Extend) is in force.
		b, err := StoredBudget(ctx, st, name)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, fmt.Errorf("study %s: %w", name, err)
		}
		if b > 0 {
			opts = []Options{withBudget(opts, b)}
		}
	}
	s := newStudy(st, name, *cfg, opts)
	s.header = h
	recs, err := st.Records(ctx, name, 0)
	if err != nil {
		return nil, err
	}
	// The arm set is checked now; the engine is built at the first use
	// that needs the policy (Ask), from the newest snapshot if there is a
	// usable one, so that reading a study's trials costs no replay.
	if _, err := s.cfg.BuildArms(); err != nil {
		return nil, fmt.Errorf("study %s: %w", name, err)
	}
	// The study keeps the records read as its own (Records returns the
	// caller's slice): commit appends each record where it was read
	// from, so a 10,000-trial study is not copied once more.
	s.records = recs[:0]
	s.digests = slices.Grow(s.digests, len(recs))
	for _, r := range recs {
		// What the engine would refuse first is checked without it.
		if err := s.cfg.Space.Check(r.X); err != nil {
			return nil, fmt.Errorf("study %s: trial %d: %s record: %v (the study's records do not fit its search space)", name, r.Trial, r.Kind, engine.TrimStudy(err))
		}
		if err := s.commit(r, false); err != nil {
			return nil, fmt.Errorf("study %s: %w", name, err)
		}
	}
	return s, nil
}

// DecodeConfig reads a stored configuration and checks it. A stored
// configuration without a version is version 1.
func DecodeConfig(raw json.RawMessage) (*Config, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("the study has no bkb configuration")
	}
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("the study's configuration is not a bkb study: %v", err)
	}
	if cfg.Version == 0 {
		// Stored before versions: the fixed-set behavior it was run with
		// (every study bkb stores since has its version).
		cfg.Version = 1
	}
	if cfg.Policy == "" || cfg.Arms.Kind == "" || len(cfg.Space.Params) == 0 {
		return nil, errors.New("the study's configuration is not a bkb study (no policy, arms or space)")
	}
	cfg.StoredTradeoffDefaults()
	if err := cfg.Normalize(); err != nil {
		return nil, fmt.Errorf("the study's configuration is invalid: %v", engine.TrimStudy(err))
	}
	if cfg.Arms.Kind == "csv" && cfg.Arms.SHA256 == "" {
		// bkb stores the hash of every arms file it reads: without it the
		// file is checked against nothing, and any file named in a
		// crafted journal would be read and its lines echoed in errors.
		return nil, errors.New("the study's configuration names an arms file without its SHA-256: it was not written by bkb")
	}
	return &cfg, nil
}

// withBudget returns the first of opts (or the zero Options) with budget.
func withBudget(opts []Options, budget int) Options {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Budget = budget
	return o
}

func newStudy(st storage.Storage, name string, cfg Config, opts []Options) *Study {
	s := &Study{st: st, name: name, cfg: cfg, stored: cfg, started: map[int]time.Time{}, owner: map[int]string{},
		saveEvery: engine.SnapshotEvery}
	if len(opts) > 0 {
		s.opts = opts[0]
	}
	if s.opts.Worker == "" {
		s.opts.Worker = storage.NewWorkerID()
	}
	if s.opts.Budget > 0 {
		s.cfg.Budget = s.opts.Budget
	}
	return s
}

// Name returns the study's name in its storage.
func (s *Study) Name() string { return s.name }

// Config returns the study's configuration, with the budget in force
// (extended, or this process's Options.Budget).
func (s *Study) Config() Config { return s.cfg }

// CreationConfig returns the configuration as stored when the study was
// created (its budget the creation budget, which the engine's rules read).
func (s *Study) CreationConfig() Config { return s.stored }

// Storage returns the storage the study lives in.
func (s *Study) Storage() storage.Storage { return s.st }

// Header returns the study's stored header.
func (s *Study) Header() storage.Header { return s.header }

// commit adds a stored record to the study's state; with engine it is also
// applied to the engine.
func (s *Study) commit(r storage.Record, toEngine bool) error {
	if (r.Kind == storage.KindTell || r.Kind == storage.KindFail || r.Kind == storage.KindReport || r.Kind == storage.KindPrune) && (r.Trial >= len(s.trials) || s.trials[r.Trial] == nil) {
		// The storage accepts such a record; a study never writes one.
		return fmt.Errorf("trial %d: %s record of a trial that was never asked", r.Trial, r.Kind)
	}
	if toEngine && s.eng != nil {
		if err := s.eng.Apply(eventOf(r)); err != nil {
			s.eng = nil
			return replayError{err}
		}
	}
	var prev [32]byte
	if n := len(s.digests); n > 0 {
		prev = s.digests[n-1]
	}
	s.records = append(s.records, r)
	s.digests = append(s.digests, recordDigest(prev, r))
	for len(s.trials) <= r.Trial {
		s.trials = append(s.trials, nil)
	}
	t := s.trials[r.Trial]
	if t == nil {
		// Params are made when a trial is read (withParams): a command
		// on a long study commits every record, and most read no trial.
		t = &TrialResult{Number: r.Trial, Arm: r.Arm, X: slices.Clone(r.X), Value: math.NaN()}
		s.trials[r.Trial] = t
	}
	if r.Kind != storage.KindReport {
		t.Time = r.Time
	}
	wasWaiting := t.State == Waiting
	switch r.Kind {
	case storage.KindEnqueue:
		t.State = Waiting
	case storage.KindAsk:
		t.State, t.Arm = Pending, r.Arm
		s.owner[r.Trial] = r.Worker
	case storage.KindTell:
		t.State, t.Value, t.Seconds = Complete, *r.Y, r.Seconds
		t.Values, t.Constraints, t.Infeasible = r.Values, r.Constraints, !Feasible(r.Constraints)
		if math.Abs(*r.Y) > MaxAbsValue {
			s.ignored++
			t.State, t.Error = Failed, fmt.Sprintf("value %v outside ±%g (stored by an earlier version)", *r.Y, MaxAbsValue)
		}
	case storage.KindFail:
		t.State, t.Error, t.Seconds = Failed, r.Error, r.Seconds
	case storage.KindReport:
		t.Intermediate = append(t.Intermediate, StepValue{Step: r.Step, Value: *r.Y})
	case storage.KindPrune:
		t.State, t.Seconds = Pruned, r.Seconds
	}
	switch isWaiting := t.State == Waiting; {
	case isWaiting && !wasWaiting:
		s.waiting++
	case wasWaiting && !isWaiting:
		s.waiting--
	}
	return nil
}

// withParams returns t with its Params, made once (s.mu is held).
func (s *Study) withParams(t *TrialResult) *TrialResult {
	if t.Params == nil {
		t.Params = s.cfg.Space.ParamsOf(t.X)
	}
	return t
}

// ensureEngine rebuilds the engine if it was dropped (or never built):
// from the newest usable snapshot and the records after it, else from all
// the records.
func (s *Study) ensureEngine(ctx context.Context) error {
	if s.eng != nil {
		return nil
	}
	eng, from := s.restore(ctx)
	if eng == nil {
		var err error
		if eng, err = engine.New(&s.stored); err != nil {
			return err
		}
	}
	eng.SetForecast(s.prunedForecast)
	eng.SetSeconds(s.evaluationSeconds)
	start, shown := time.Now(), time.Time{}
	total := len(s.records) - from
	for i, r := range s.records[from:] {
		if i%32 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("study %s: replay of its records stopped at %d of %d: %w", s.name, i, total, err)
			}
			if now := time.Now(); s.opts.Progress != nil && now.Sub(start) > time.Second && now.Sub(shown) > 100*time.Millisecond {
				s.opts.Progress(i, total)
				shown = now
			}
		}
		if err := eng.Apply(eventOf(r)); err != nil {
			return replayError{err}
		}
	}
	if !shown.IsZero() {
		s.opts.Progress(total, total)
	}
	s.eng = eng
	return nil
}

// catchUp applies the records of v that the study has not seen.
func (s *Study) catchUp(v storage.View) error {
	for i, r := range v.New {
		if v.From+i < len(s.records) {
			continue
		}
		if err := s.commit(r, true); err != nil {
			return err
		}
	}
	return nil
}

// nextTrial is the number of the next new trial.
func (s *Study) nextTrial() int { return len(s.trials) }

// count returns the number of trials in each state.
func (s *Study) count() map[State]int {
	n := map[State]int{}
	for _, t := range s.trials {
		if t != nil {
			n[t.State]++
		}
	}
	return n
}

// update runs fn under the storage's lock after catching up with the
// stored records, and commits the records it returns.
func (s *Study) update(ctx context.Context, fn func() ([]storage.Record, error)) ([]storage.Record, error) {
	recs, err := s.st.Update(ctx, s.name, len(s.records), func(v storage.View) ([]storage.Record, error) {
		if err := s.catchUp(v); err != nil {
			return nil, err
		}
		return fn()
	})
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if err := s.commit(r, true); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// Ask returns the next trial to evaluate: a trial whose worker stopped
// (with the Requeue policy), else the oldest enqueued point, else the
// policy's suggestion. Once the budget's trials have all been asked it
// returns an error wrapping ErrComplete.
func (s *Study) Ask(ctx context.Context) (*Trial, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var (
		pending storage.Record
		done    error // the budget is used: the records hold only fails
	)
	calls := 0
	defer s.preload(ctx)()
	recs, err := s.st.Update(ctx, s.name, len(s.records), func(v storage.View) ([]storage.Record, error) {
		calls++
		if calls > 1 {
			s.eng = nil // the previous call's suggestion was not stored
		}
		done = nil
		if err := s.catchUp(v); err != nil {
			return nil, err
		}
		if err := s.ensureEngine(ctx); err != nil {
			return nil, err
		}
		out, err := s.nextAsk(v.Stale)
		if errors.Is(err, ErrComplete) && len(out) > 0 {
			// The fails of stale trials are stored all the same: at the
			// end of the budget nobody else would ever write them.
			done = err
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		pending = out[len(out)-1]
		return out, nil
	})
	if err != nil {
		// The engine may hold an ask that was not stored: rebuild it from
		// the records before its next use. A budget used up or a full
		// batch is found before anything changes (a rebuild there would
		// replay the whole study at every retry).
		if calls > 0 && !errors.Is(err, ErrComplete) && !errors.Is(err, bandit.ErrBatchFull) {
			s.eng = nil
		}
		return nil, err
	}
	for _, r := range recs {
		// The engine applied the records as nextAsk made them.
		if err := s.commit(r, false); err != nil {
			return nil, err
		}
	}
	if done != nil {
		return nil, done
	}
	s.started[pending.Trial] = time.Now()
	s.saveSnapshot(ctx)
	return &Trial{Number: pending.Trial, Params: s.cfg.Space.ParamsOf(pending.X), X: slices.Clone(pending.X), Arm: pending.Arm, s: s}, nil
}

// nextAsk returns the records of one ask (preceded, with the FailStale
// policy, by fail records of the stale trials), applying them to the
// engine as it makes them. Its last record is the ask. When the budget is
// used it returns the fail records it made with an error wrapping
// ErrComplete. Stale trials this Study asked and still owns are left
// alone: their heartbeats lapsed (a storage outage) while this process
// evaluates them.
func (s *Study) nextAsk(stale []int) ([]storage.Record, error) {
	var out []storage.Record
	emit := func(r storage.Record) error {
		r.Time = time.Now().UTC()
		if err := s.eng.Apply(eventOf(r)); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	}
	ask := func(trial, arm int, x []float64) ([]storage.Record, error) {
		params, err := json.Marshal(s.cfg.Space.ParamsOf(x))
		if err != nil {
			return nil, err
		}
		r := storage.Record{Kind: storage.KindAsk, Trial: trial, Arm: arm, X: slices.Clone(x), Params: params, Worker: s.opts.Worker}
		if err := emit(r); err != nil {
			return nil, err
		}
		return out, nil
	}
	failed := 0
	for _, t := range stale {
		tr := s.trials[t]
		if tr == nil || tr.State != Pending {
			continue
		}
		if _, mine := s.started[t]; mine && s.owner[t] == s.opts.Worker {
			// This process is evaluating it: its heartbeat lapsed (a
			// storage outage), its worker did not stop.
			continue
		}
		if s.opts.Stale == Requeue {
			return ask(t, tr.Arm, tr.X)
		}
		if err := emit(storage.Record{Kind: storage.KindFail, Trial: t, Arm: tr.Arm, X: tr.X,
			Error: "the worker evaluating this trial stopped (no heartbeat within the grace period)"}); err != nil {
			return nil, err
		}
		failed++
	}
	for _, tr := range s.trials {
		if s.waiting == 0 {
			break
		}
		if tr != nil && tr.State == Waiting {
			arm, err := s.eng.ArmOf(tr.X)
			if err != nil {
				return nil, err
			}
			return ask(tr.Number, arm, tr.X)
		}
	}
	if b := s.cfg.Budget; b > 0 && s.nextTrial() >= b {
		if n := s.count()[Pending] - failed; n > 0 {
			return out, fmt.Errorf("study %s: all %d trials of the budget have been asked; %d still pending (tell their results): %w", s.name, b, n, ErrComplete)
		}
		return out, fmt.Errorf("study %s: all %d trials of the budget are done: %w", s.name, b, ErrComplete)
	}
	arm, err := s.eng.Suggest()
	if err != nil {
		return nil, err
	}
	trial := s.nextTrial()
	// Registered here, so that applying the stored ask is a re-ask.
	s.eng.SetPending(trial, arm)
	r := storage.Record{Kind: storage.KindAsk, Trial: trial, Arm: arm, X: slices.Clone(s.eng.Point(arm)), Worker: s.opts.Worker}
	params, err := json.Marshal(s.cfg.Space.ParamsOf(r.X))
	if err != nil {
		return nil, err
	}
	r.Params = params
	r.Time = time.Now().UTC()
	return append(out, r), nil
}

// eventOf is the engine's view of a stored record.
func eventOf(r storage.Record) engine.Event {
	return engine.Event{Kind: r.Kind, Trial: r.Trial, Arm: r.Arm, X: r.X, Y: r.Y, Values: r.Values, Constraints: r.Constraints}
}

// pointKey is a map key of a point's exact values (engine.PointKey).
func pointKey(x []float64) string { return engine.PointKey(x) }

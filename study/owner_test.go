package study

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// deadWorkerID returns a worker id of this host naming a process that has
// exited: its trials are stale in a journal.
func deadWorkerID(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true(1) to get a dead pid: %v", err)
	}
	host, _, _ := storage.ParseWorkerID(storage.NewWorkerID())
	return host + ":" + strconv.Itoa(cmd.Process.Pid) + ":00000000"
}

// journalStudy creates a study with the given budget on a new journal and
// returns an opener of more handles on it (each a process of its own).
func journalStudy(t *testing.T, budget int) func(Options) *Study {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	ctx := context.Background()
	cfg := braninConfig(t)
	cfg.Budget = budget
	st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := Create(ctx, st, "s", cfg); err != nil {
		t.Fatal(err)
	}
	return func(o Options) *Study {
		st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s, err := Load(ctx, st, "", o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// TestRequeueOneOwner: a trial of a stopped worker is asked again by one
// worker only (it owns the trial from then on); the stopped worker's late
// value is kept as an extra trial at the same point, never a second
// completion of the trial and never an error; once the budget is used a
// late value is dropped with a note.
func TestRequeueOneOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := journalStudy(t, 4)
	gone := open(Options{Worker: deadWorkerID(t)})
	t0, err := gone.Ask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := open(Options{Stale: Requeue})
	c := open(Options{Stale: Requeue})
	tb, err := b.Ask(ctx)
	if err != nil || tb.Number != t0.Number {
		t.Fatalf("b asked %+v, %v; want the stale trial %d", tb, err, t0.Number)
	}
	tc, err := c.Ask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tc.Number == t0.Number {
		t.Fatalf("c asked trial %d too, which b owns", tc.Number)
	}
	// The stopped worker's result arrives after all (its process was only
	// partitioned away): an extra trial, not an abort.
	note, err := gone.finishOwned(ctx, t0.Number, ptr(1.5), "", 1)
	if err != nil || note == "" {
		t.Fatalf("late value: note %q, err %v", note, err)
	}
	if note2, err := b.finishOwned(ctx, tb.Number, ptr(2.5), "", 1); err != nil || note2 != "" {
		t.Fatalf("owner's value: note %q, err %v", note2, err)
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	trials := c.Trials()
	if len(trials) != 3 {
		t.Fatalf("%d trials, want 3 (two asked, one extra)", len(trials))
	}
	if tr := trials[t0.Number]; tr.State != Complete || tr.Value != 2.5 {
		t.Errorf("trial %d: %s %v, want complete with the owner's value 2.5", t0.Number, tr.State, tr.Value)
	}
	extra := trials[2]
	if extra.State != Complete || extra.Value != 1.5 || !equalX(extra.X, t0.X) {
		t.Errorf("extra trial %+v, want the late value 1.5 at %v", extra, t0.X)
	}
	// c finishes; a fourth trial uses the budget; a late failure and a
	// late value with no room left are dropped with a note.
	if _, err := c.finishOwned(ctx, tc.Number, ptr(3), "", 1); err != nil {
		t.Fatal(err)
	}
	t3, err := c.Ask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.finishOwned(ctx, t3.Number, ptr(4), "", 1); err != nil {
		t.Fatal(err)
	}
	for _, v := range []*float64{nil, ptr(9)} {
		note, err := gone.finishOwned(ctx, t0.Number, v, "boom", 1)
		if err != nil || note == "" {
			t.Errorf("late outcome %v with the budget used: note %q, err %v", v, note, err)
		}
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(c.Trials()); n != 4 {
		t.Errorf("%d trials, want the budget 4", n)
	}
}

// TestStaleFailAtBudgetEnd: with the FailStale policy, the trials of a
// stopped worker are recorded failed by the next ask even when the budget
// is used (that ask then reports the study complete), not left pending.
func TestStaleFailAtBudgetEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := journalStudy(t, 2)
	gone := open(Options{Worker: deadWorkerID(t)})
	for range 2 {
		if _, err := gone.Ask(ctx); err != nil {
			t.Fatal(err)
		}
	}
	w := open(Options{Stale: FailStale})
	if _, err := w.Ask(ctx); !errors.Is(err, ErrComplete) {
		t.Fatalf("Ask: %v, want ErrComplete", err)
	}
	r := open(Options{})
	for _, tr := range r.Trials() {
		if tr.State != Failed {
			t.Errorf("trial %d is %s, want failed (its worker stopped)", tr.Number, tr.State)
		}
	}
}

// TestLateAfterStaleFail: a value that arrives for a trial recorded failed
// as stale (the worker's heartbeats lapsed) is kept as an extra trial.
func TestLateAfterStaleFail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open := journalStudy(t, 3)
	gone := open(Options{Worker: deadWorkerID(t)})
	t0, err := gone.Ask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := open(Options{Stale: FailStale})
	t1, err := w.Ask(ctx)
	if err != nil || t1.Number == t0.Number {
		t.Fatalf("Ask: %+v, %v", t1, err)
	}
	note, err := gone.finishOwned(ctx, t0.Number, ptr(7), "", 1)
	if err != nil || note == "" {
		t.Fatalf("late value: note %q, err %v", note, err)
	}
	r := open(Options{})
	trials := r.Trials()
	if len(trials) != 3 || trials[t0.Number].State != Failed || trials[2].State != Complete || trials[2].Value != 7 {
		t.Errorf("trials %+v: want trial %d failed and trial 2 holding the late value 7", trials, t0.Number)
	}
}

func ptr(v float64) *float64 { return &v }

func equalX(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lapsed is a storage on which, while on is set, every pending trial is
// stale (its worker's heartbeats lapsed, as in a storage outage).
type lapsed struct {
	storage.Storage
	on atomic.Bool
}

func (l *lapsed) Update(ctx context.Context, name string, from int, fn func(storage.View) ([]storage.Record, error)) ([]storage.Record, error) {
	if !l.on.Load() {
		return l.Storage.Update(ctx, name, from, fn)
	}
	recs, err := l.Storage.Records(ctx, name, 0)
	if err != nil {
		return nil, err
	}
	st, err := storage.Summarize(recs)
	if err != nil {
		return nil, err
	}
	var stale []int
	for _, p := range st.Pending {
		stale = append(stale, p.Trial)
	}
	return l.Storage.Update(ctx, name, from, func(v storage.View) ([]storage.Record, error) {
		v.Stale = stale
		return fn(v)
	})
}

// TestRunLateResult: a Run whose trial is failed as stale by another
// worker while it evaluates it (its heartbeats lapsed) keeps its value as
// an extra trial, reports it through OnLate, and goes on to the budget:
// it is not stopped by "trial 0 has already failed".
func TestRunLateResult(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &lapsed{Storage: storage.NewMemory()}
	cfg := braninConfig(t)
	cfg.Budget = 6
	a, err := Create(ctx, st, "s", cfg, Options{Worker: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	first := true
	err = a.Run(ctx, func(_ context.Context, tr *Trial) (float64, error) {
		if first {
			first = false
			b, err := Load(ctx, st, "s", Options{Worker: "b", Stale: FailStale})
			if err != nil {
				return 0, err
			}
			st.on.Store(true)
			_, err = b.Ask(ctx) // fails trial 0, asks trial 1 (never told)
			st.on.Store(false)
			if err != nil {
				return 0, err
			}
		}
		return float64(tr.Number), nil
	}, RunOptions{OnLate: func(_ int, note string) { notes = append(notes, note) }})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	trials := a.Trials()
	if len(trials) != 6 || trials[0].State != Failed || len(notes) != 1 || !strings.Contains(notes[0], "kept as trial 2") {
		t.Fatalf("trials %+v, notes %q: want trial 0 failed, its value kept as trial 2", trials, notes)
	}
	if trials[2].State != Complete || trials[2].Value != 0 || !equalX(trials[2].X, trials[0].X) {
		t.Errorf("extra trial %+v, want the late value 0 at trial 0's point", trials[2])
	}
}

package study

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bkb-go/bkb/pruner"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
)

// curveObjective reports a learning curve f(x) + c(x) exp(-step/tau(x))
// for steps 0..steps-1 and stops when the pruner says so.
func curveObjective(steps int) Objective {
	return func(ctx context.Context, t *Trial) (float64, error) {
		x, y := t.X[0], t.X[1]
		f := (x-0.3)*(x-0.3) + (y-0.6)*(y-0.6)
		c, tau := 1+x, 2+6*y
		v := 0.0
		for s := range steps {
			v = f + c*math.Exp(-float64(s)/tau)
			if err := t.Report(ctx, s, v); err != nil {
				return 0, err
			}
			if t.ShouldPrune() {
				return 0, ErrPruned
			}
		}
		return v, nil
	}
}

// TestPrunedTrialSurvivesResume: a pruned trial, its intermediate values
// and the pruner's decisions are read back from the journal by a new
// process, which neither evaluates the trial again nor accepts a value
// for it.
func TestPrunedTrialSurvivesResume(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"median:startup=2", "curve:startup=2,tell=forecast"} {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			prunedSurvivesResume(t, spec)
		})
	}
}

func prunedSurvivesResume(t *testing.T, spec string) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	js, err := storage.OpenJournalStore(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := pruneConfig(t, spec, Minimize)
	cfg.Budget = 12
	s, err := Create(ctx, js, "", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Optimize(ctx, curveObjective(10), 8); err != nil {
		t.Fatal(err)
	}
	before := s.Trials()
	pruned := -1
	for _, tr := range before {
		if tr.State == Pruned {
			pruned = tr.Number
		}
	}
	if pruned < 0 {
		t.Fatalf("no trial pruned in %d trials", len(before))
	}
	told, toldOK := s.prunedForecast(pruned)
	js.Close()

	js2, err := storage.OpenJournalStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer js2.Close()
	r, err := Load(ctx, js2, "")
	if err != nil {
		t.Fatal(err)
	}
	after := r.Trials()
	if len(after) != len(before) {
		t.Fatalf("%d trials after resume, want %d", len(after), len(before))
	}
	for i := range before {
		b, a := before[i], after[i]
		if a.State != b.State || fmt.Sprint(a.Intermediate) != fmt.Sprint(b.Intermediate) {
			t.Errorf("trial %d: %s %v after resume, %s %v before", i, a.State, a.Intermediate, b.State, b.Intermediate)
		}
	}
	if v, ok := r.prunedForecast(pruned); ok != toldOK || v != told {
		t.Errorf("trial %d: forecast told %v, %v after resume, %v, %v before", pruned, v, ok, told, toldOK)
	}
	if cfg.Pruner.Tell == pruner.TellForecast {
		// The forecast of the curve's exponential decay, closed form: the
		// objective's curve is f + c exp(-s/tau), told at step 9 (clamped
		// to the best final value so far).
		x, y := before[pruned].X[0], before[pruned].X[1]
		f := (x-0.3)*(x-0.3) + (y-0.6)*(y-0.6)
		want := f + (1+x)*math.Exp(-9/(2+6*y))
		best := math.Inf(1)
		for _, tr := range before[:pruned] {
			if tr.State == Complete {
				best = math.Min(best, tr.Value)
			}
		}
		want = math.Max(want, best)
		if !toldOK || math.Abs(told-want) > 1e-6 {
			t.Errorf("trial %d: forecast told %v, %v; closed form %v", pruned, told, toldOK, want)
		}
		if last := before[pruned].Intermediate[len(before[pruned].Intermediate)-1].Value; told >= last {
			t.Errorf("trial %d: forecast %v is not below the last value %v of a falling curve", pruned, told, last)
		}
	}
	if !r.ShouldPrune(pruned) {
		t.Errorf("trial %d: the resumed study's decision at its last report is not to prune", pruned)
	}
	if err := r.Tell(ctx, pruned, 0.5); err == nil {
		t.Errorf("trial %d: a value for a pruned trial was accepted", pruned)
	}
	tr, err := r.Ask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Number != len(before) {
		t.Errorf("resumed study asked trial %d, want the new trial %d", tr.Number, len(before))
	}
}

// checkOneOutcome fails when a trial of recs has two outcomes (pruned and
// complete, say), a report after its outcome, or none while nothing is
// pending; it returns the number of trials by outcome.
func checkOneOutcome(t *testing.T, recs []storage.Record) map[string]int {
	t.Helper()
	outcome := map[int]string{}
	n := map[string]int{}
	for _, r := range recs {
		switch r.Kind {
		case storage.KindTell, storage.KindFail, storage.KindPrune:
			if prev, ok := outcome[r.Trial]; ok {
				t.Errorf("trial %d: %s after %s", r.Trial, r.Kind, prev)
			}
			outcome[r.Trial] = r.Kind
			n[r.Kind]++
		case storage.KindReport:
			if prev, ok := outcome[r.Trial]; ok {
				t.Errorf("trial %d: report after %s", r.Trial, prev)
			}
		}
	}
	return n
}

// runASHAWorkers runs 4 workers, each with its own storage (as separate
// processes would have), on one study with ASHA, then checks that every
// trial has one outcome and that a fresh reader of the records reaches
// each worker's decisions.
func runASHAWorkers(t *testing.T, open func() storage.Storage) {
	runPruneWorkers(t, open, "asha:min=1,eta=3")
}

// runPruneWorkers is runASHAWorkers with the pruner spec.
func runPruneWorkers(t *testing.T, open func() storage.Storage, spec string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := pruneConfig(t, spec, Minimize)
	cfg.Budget = 40
	name, _, _ := strings.Cut(spec, ":")
	first := open()
	if _, err := Create(ctx, first, name, cfg); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Load(ctx, open(), name)
			if err != nil {
				errs[w] = err
				return
			}
			errs[w] = s.Run(ctx, curveObjective(27), RunOptions{WaitPending: true})
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
	}
	recs, err := first.Records(ctx, name, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := checkOneOutcome(t, recs)
	if n[storage.KindTell]+n[storage.KindPrune] != 40 || n[storage.KindPrune] == 0 || n[storage.KindTell] == 0 {
		t.Errorf("outcomes %v, want 40 trials, some pruned and some complete", n)
	}
	// A new reader recomputes every worker's decision from the records.
	s, err := Load(ctx, first, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range s.Trials() {
		s.mu.Lock()
		for _, sv := range tr.Intermediate {
			last := sv.Step == tr.Intermediate[len(tr.Intermediate)-1].Step
			if got := s.decide(tr.Number, sv.Step); got != (last && tr.State == Pruned) {
				t.Errorf("trial %d (%s) step %d: replayed decision %v", tr.Number, tr.State, sv.Step, got)
			}
		}
		s.mu.Unlock()
	}
}

// TestASHAWorkersJournal: 4 workers with ASHA on one journal file.
func TestASHAWorkersJournal(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "asha.jsonl")
	runASHAWorkers(t, func() storage.Storage {
		js, err := storage.OpenJournalStore(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { js.Close() })
		return js
	})
}

// TestCurveWorkersJournal: 4 workers with the curve extrapolation pruner
// on one journal file.
func TestCurveWorkersJournal(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "curve.jsonl")
	runPruneWorkers(t, func() storage.Storage {
		js, err := storage.OpenJournalStore(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { js.Close() })
		return js
	}, "curve:startup=3,tell=forecast")
}

// TestASHAWorkersPostgres: 4 workers with ASHA, then with the curve
// extrapolation pruner, on one PostgreSQL study each,
// in a schema of its own.
func TestASHAWorkersPostgres(t *testing.T) {
	base := os.Getenv("BKB_POSTGRES_URL")
	if base == "" {
		t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL to test on")
	}
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to BKB_POSTGRES_URL: %v", err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("bkbprune_%d_%08x", os.Getpid(), rand.Uint32())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(ctx, base); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	open := func() storage.Storage {
		st, err := postgres.Open(ctx, u.String(), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	runASHAWorkers(t, open)
	runPruneWorkers(t, open, "curve:startup=3,tell=forecast")
}

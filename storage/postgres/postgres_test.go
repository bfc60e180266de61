package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bkb-go/bkb/internal/testtier"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
	"github.com/bkb-go/bkb/storage/storagetest"
)

// Environment: the server (BKB_POSTGRES_URL, set by .ci/run), and, for
// worker processes, the URL of their test's schema and the grace.
const (
	envURL     = "BKB_POSTGRES_URL"
	envRestart = "BKB_POSTGRES_RESTART_CMD"
	envWorkURL = "BKB_PGTEST_URL"
	envGrace   = "BKB_PGTEST_GRACE"
)

func TestMain(m *testing.M) {
	storagetest.WorkerMain(func() (storage.Storage, error) {
		grace, err := time.ParseDuration(os.Getenv(envGrace))
		if err != nil {
			return nil, err
		}
		return postgres.Open(context.Background(), os.Getenv(envWorkURL), postgres.Options{HeartbeatGrace: grace, MaxConns: 2})
	})
	os.Exit(m.Run())
}

// serverURL returns BKB_POSTGRES_URL or skips the test.
func serverURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(envURL)
	if u == "" {
		t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL server to test against (.ci/run starts one and sets it)")
	}
	return u
}

// newSchema creates a schema of its own for the test (dropped at its end)
// and returns the URL that uses it: every test starts from an empty
// database, as a first worker would.
func newSchema(t *testing.T) string {
	t.Helper()
	base := serverURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", envURL, err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("bkbtest_%d_%08x", os.Getpid(), rand.Uint32())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, base)
		if err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", envURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func openStore(t *testing.T, u string, opt postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), u, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// waitRestartGrace waits, if needed, until the server has been up for
// longer than the default heartbeat grace (a minute): until then no trial
// is stale (every trial has a grace from the server's start), which the
// conformance suite's stale checks would take for a bug. A restart by
// TestRestart or TestOutageGrace of an earlier run (.ci/run runs this
// package in its short and its end-to-end tier) or by another user of the
// server is waited out.
func waitRestartGrace(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, serverURL(t))
	if err != nil {
		t.Fatalf("connect to %s: %v", envURL, err)
	}
	var wait float64
	err = conn.QueryRow(ctx, `SELECT extract(epoch FROM pg_postmaster_start_time() + interval '61 seconds' - statement_timestamp())::float8`).Scan(&wait)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if wait > 0 {
		t.Logf("the server started less than a minute ago: waiting %.1f s for the heartbeat grace after its start to pass", wait)
		time.Sleep(time.Duration(wait * float64(time.Second)))
	}
}

func TestConformance(t *testing.T) {
	serverURL(t)
	waitRestartGrace(t)
	storagetest.Run(t, storagetest.Backend{
		New: func(t *testing.T) func() storage.Storage {
			u := newSchema(t)
			return func() storage.Storage { return openStore(t, u, postgres.Options{}) }
		},
		DeadWorker: func(*testing.T) string { return "elsewhere:1:dead" },
		// Make the trial's heartbeat, and its ask, an hour old.
		Expire: func(t *testing.T, s storage.Storage, name string, trial int) {
			ctx := context.Background()
			p := s.(*postgres.Store).Pool()
			for _, q := range []string{
				`UPDATE bkb_heartbeats SET last = last - interval '1 hour' WHERE trial = $1 AND study_id = (SELECT id FROM bkb_studies WHERE name = $2)`,
				`UPDATE bkb_records SET stored = stored - interval '1 hour' WHERE trial = $1 AND study_id = (SELECT id FROM bkb_studies WHERE name = $2)`,
			} {
				if _, err := p.Exec(ctx, q, trial, name); err != nil {
					t.Fatal(err)
				}
			}
		},
	})
}

// TestStaleGrace: with a short grace, a trial whose worker stops
// heartbeating becomes stale once the grace has passed on the database's
// clock, and not before.
func TestStaleGrace(t *testing.T) {
	u := newSchema(t)
	s := openStore(t, u, postgres.Options{HeartbeatGrace: 300 * time.Millisecond})
	ctx := context.Background()
	if _, err := s.CreateStudy(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "s", 0, func(storage.View) ([]storage.Record, error) {
		return []storage.Record{{Kind: storage.KindAsk, Trial: 0, Arm: -1, X: []float64{1}, Worker: "w"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	stale := func() []int {
		var got []int
		if _, err := s.Update(ctx, "s", 0, func(v storage.View) ([]storage.Record, error) { got = v.Stale; return nil, nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := s.Heartbeat(ctx, "s", []int{0}); err != nil {
		t.Fatal(err)
	}
	if got := stale(); len(got) != 0 {
		t.Fatalf("stale right after a heartbeat: %v", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(stale()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("not stale 5 s after the last heartbeat with a 300 ms grace")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConcurrentOpen: many workers opening a new database at once all
// succeed, and the schema is created once, at the current version.
func TestConcurrentOpen(t *testing.T) {
	u := newSchema(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := postgres.Open(context.Background(), u, postgres.Options{MaxConns: 1})
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	s := openStore(t, u, postgres.Options{})
	var n, v int
	if err := s.Pool().QueryRow(context.Background(), `SELECT count(*), max(version) FROM bkb_schema_version`).Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != 1 || v != postgres.SchemaVersion {
		t.Fatalf("schema_version: %d rows, version %d; want 1 row, %d", n, v, postgres.SchemaVersion)
	}
	// Snapshots are stored out of line, uncompressed ('e', external).
	var storage string
	if err := s.Pool().QueryRow(context.Background(),
		`SELECT attstorage::text FROM pg_attribute WHERE attrelid = 'bkb_snapshots'::regclass AND attname = 'data'`).Scan(&storage); err != nil {
		t.Fatal(err)
	}
	if storage != "e" {
		t.Errorf("bkb_snapshots.data has storage %q, want e (external)", storage)
	}
}

// TestCopyJournal: a journal study copied into PostgreSQL and back is the
// same records, field for field.
func TestCopyJournal(t *testing.T) {
	u := newSchema(t)
	ctx := context.Background()
	dir := t.TempDir()
	src, err := storage.OpenJournalStore(filepath.Join(dir, "src.jsonl"), storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.CreateStudy(ctx, "c", []byte(`{"policy": "bkb", "seed": 7}`)); err != nil {
		t.Fatal(err)
	}
	want, err := src.Update(ctx, "c", 0, func(storage.View) ([]storage.Record, error) { return storagetest.StudyRecords(), nil })
	if err != nil {
		t.Fatal(err)
	}
	pg := openStore(t, u, postgres.Options{})
	if err := storage.Copy(ctx, pg, src, "c"); err != nil {
		t.Fatal(err)
	}
	back, err := storage.OpenJournalStore(filepath.Join(dir, "back.jsonl"), storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if err := storage.Copy(ctx, back, pg, "c"); err != nil {
		t.Fatal(err)
	}
	h, got, err := storage.ReadFile(filepath.Join(dir, "back.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if storagetest.JSONOf(t, got) != storagetest.JSONOf(t, want) || string(h.Config) != `{"policy":"bkb","seed":7}` {
		t.Fatalf("journal -> postgres -> journal:\n%s %s\nwant\n%s", h.Config, storagetest.JSONOf(t, got), storagetest.JSONOf(t, want))
	}
}

// fleetStudy creates the study of a fleet test and returns its opener and
// the workers' environment.
func fleetStudy(t *testing.T, grace time.Duration) (func() storage.Storage, []string) {
	u := newSchema(t)
	open := func() storage.Storage { return openStore(t, u, postgres.Options{HeartbeatGrace: grace}) }
	if _, err := open().CreateStudy(context.Background(), "fleet", nil); err != nil {
		t.Fatal(err)
	}
	return open, []string{envWorkURL + "=" + u, envGrace + "=" + grace.String()}
}

// TestWorkers: 8 worker processes x 50 trials on one study (RunFleet
// checks the budget, unique trial numbers and points, no worker error).
func TestWorkers(t *testing.T) {
	open, env := fleetStudy(t, time.Minute)
	storagetest.RunFleet(t, open, "fleet", storagetest.Fleet{Workers: 8, Budget: 400, EvalMax: 4 * time.Millisecond, Beat: time.Second, Env: env})
}

// TestKill kills -9 at least 20 workers at random moments; their trials
// must be found stale (heartbeats stop) within the grace and failed.
func TestKill(t *testing.T) {
	if testtier.ShortTier() {
		t.Skip("kill test: a few seconds; skipped in the short tier (the e2e tier runs it: go test -tags e2e -short)")
	}
	const grace = 1500 * time.Millisecond
	open, env := fleetStudy(t, grace)
	res := storagetest.RunFleet(t, open, "fleet", storagetest.Fleet{Workers: 8, Budget: 300, EvalMax: 30 * time.Millisecond,
		Beat: 150 * time.Millisecond, Env: env, Kills: 24})
	if res.Kills < 20 || res.Stale == 0 {
		t.Errorf("%d kills, %d stale trials; want at least 20 kills and some stale trials", res.Kills, res.Stale)
	}
	// A trial is stale once its last heartbeat (at most a beat before the
	// kill) is a grace old; a live worker then fails it at its next
	// Update, within a few polls.
	if limit := grace + time.Second; res.MaxDetect > limit {
		t.Errorf("a killed worker's trial failed %v after the kill, want within %v", res.MaxDetect, limit)
	}
}

// TestRestart restarts the server (BKB_POSTGRES_RESTART_CMD) while 8
// workers run: they reconnect and the study reaches its budget with
// nothing lost.
func TestRestart(t *testing.T) {
	cmd := os.Getenv(envRestart)
	if cmd == "" {
		t.Skip("BKB_POSTGRES_RESTART_CMD is not set: not allowed to restart the server (.ci/run sets it)")
	}
	if testtier.ShortTier() {
		// A restart fails the other packages' tests that connect during
		// it, and leaves no trial stale for a minute: once per .ci/run.
		t.Skip("restarts the server: skipped in the short tier (the e2e tier runs it: go test -tags e2e -short)")
	}
	open, env := fleetStudy(t, time.Minute)
	res := storagetest.RunFleet(t, open, "fleet", storagetest.Fleet{Workers: 8, Budget: 400, EvalMax: 10 * time.Millisecond, Beat: time.Second, Env: env,
		Restart: func() error {
			out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %v: %s", cmd, err, out)
			}
			return nil
		}})
	if !res.Restarted {
		t.Error("the server was not restarted during the run")
	}
}

// TestOpenErrors: a wrong password fails at once (retrying cannot cure
// it); a server that does not answer fails after RetryTimeout.
func TestOpenErrors(t *testing.T) {
	u, err := url.Parse(serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	bad := *u
	bad.User = url.UserPassword(u.User.Username(), "wrong-password")
	t0 := time.Now()
	noticed := 0 // a wrong password is not retried: nothing to tell
	ctx := storage.WithRetryNotice(context.Background(), func(string, error, time.Duration) { noticed++ })
	if _, err := postgres.Open(ctx, bad.String(), postgres.Options{}); err == nil || noticed > 0 {
		t.Errorf("Open with a wrong password: %v, %d retry notices", err, noticed)
	} else if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Open with a wrong password took %v: %v", d, err)
	} else {
		t.Logf("wrong password: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := *u
	down.Host = ln.Addr().String()
	ln.Close() // nothing listens there now
	t0 = time.Now()
	if _, err := postgres.Open(context.Background(), down.String(), postgres.Options{RetryTimeout: 300 * time.Millisecond}); err == nil {
		t.Error("Open of a closed port succeeded")
	} else if d := time.Since(t0); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("Open of a closed port gave up after %v, want just over RetryTimeout: %v", d, err)
	} else {
		t.Logf("no server: %v", err)
	}
}

// TestOutageGrace: a trial whose heartbeat is older than the grace only
// because the server was down is not stale after the server restarts: its
// worker gets a grace period from the server's start to heartbeat again.
func TestOutageGrace(t *testing.T) {
	cmd := os.Getenv(envRestart)
	if cmd == "" {
		t.Skip("BKB_POSTGRES_RESTART_CMD is not set: not allowed to restart the server (.ci/run sets it)")
	}
	if testtier.ShortTier() {
		// A restart fails the other packages' tests that connect during
		// it, and leaves no trial stale for a minute: once per .ci/run.
		t.Skip("restarts the server: skipped in the short tier (the e2e tier runs it: go test -tags e2e -short)")
	}
	u := newSchema(t)
	s := openStore(t, u, postgres.Options{HeartbeatGrace: time.Minute})
	ctx := context.Background()
	if _, err := s.CreateStudy(ctx, "o", nil); err != nil {
		t.Fatal(err)
	}
	a := storage.Record{Kind: storage.KindAsk, Trial: 0, Arm: -1, X: []float64{1}, Worker: s.Worker()}
	if _, err := s.Update(ctx, "o", 0, func(storage.View) ([]storage.Record, error) { return []storage.Record{a}, nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Heartbeat(ctx, "o", []int{0}); err != nil {
		t.Fatal(err)
	}
	// The last sign of life, an hour before now: as after a long outage.
	for _, q := range []string{`UPDATE bkb_heartbeats SET last = last - interval '1 hour'`, `UPDATE bkb_records SET stored = stored - interval '1 hour'`} {
		if _, err := s.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	staleNow := func() []int {
		t.Helper()
		var stale []int
		if _, err := s.Update(ctx, "o", 0, func(v storage.View) ([]storage.Record, error) { stale = v.Stale; return nil, nil }); err != nil {
			t.Fatal(err)
		}
		return stale
	}
	var started time.Time
	if err := s.Pool().QueryRow(ctx, `SELECT pg_postmaster_start_time()`).Scan(&started); err != nil {
		t.Fatal(err)
	}
	if time.Since(started) > time.Minute {
		if got := staleNow(); len(got) != 1 {
			t.Fatalf("View.Stale = %v before the restart, want [0]", got)
		}
	}
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", cmd, err, out)
	}
	if got := staleNow(); len(got) != 0 {
		t.Errorf("View.Stale = %v right after a restart, want none (the outage is not the worker's)", got)
	}
}

// TestRecordsThenUpdate: an Update after a Records call of the same Store
// (which takes the records it read instead of reading them again) sees
// every record: those Records read, those another Store added in between,
// and a study dropped and created again under the same name is read
// afresh.
func TestRecordsThenUpdate(t *testing.T) {
	u := newSchema(t)
	a, b := openStore(t, u, postgres.Options{}), openStore(t, u, postgres.Options{})
	ctx := context.Background()
	y := 1.0
	trial := func(s storage.Storage, i int) {
		t.Helper()
		if _, err := s.Update(ctx, "s", 0, func(storage.View) ([]storage.Record, error) {
			return []storage.Record{{Kind: storage.KindAsk, Trial: i, Arm: -1, X: []float64{float64(i)}},
				{Kind: storage.KindTell, Trial: i, Arm: -1, X: []float64{float64(i)}, Y: &y}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	seen := func(s storage.Storage) []int {
		t.Helper()
		var got []int
		if _, err := s.Update(ctx, "s", 0, func(v storage.View) ([]storage.Record, error) {
			for _, r := range v.New {
				if r.Kind == storage.KindAsk {
					got = append(got, r.Trial)
				}
			}
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for round := 0; round < 2; round++ {
		if _, err := a.CreateStudy(ctx, "s", nil); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			trial(a, i)
		}
		if recs, err := b.Records(ctx, "s", 0); err != nil || len(recs) != 10 {
			t.Fatalf("round %d: %d records (%v), want 10", round, len(recs), err)
		}
		trial(a, 5)
		if got := seen(b); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
			t.Fatalf("round %d: the Update after Records sees trials %v, want 0-5", round, got)
		}
		trial(b, 6)
		if got := seen(a); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6}) {
			t.Fatalf("round %d: the other store sees trials %v, want 0-6", round, got)
		}
		if err := a.DeleteStudy(ctx, "s"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRetryNotice: an Open that cannot reach its server tells the
// context's RetryNotice once, at its first retry, what it was doing, and
// still returns the error after RetryTimeout. No server is needed: the
// address is a closed port.
func TestRetryNotice(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var calls []string
	ctx := storage.WithRetryNotice(context.Background(), func(what string, err error, retrying time.Duration) {
		calls = append(calls, fmt.Sprintf("%s: %v (%v)", what, err, retrying))
	})
	if _, err := postgres.Open(ctx, "postgres://u:pw@"+addr+"/db", postgres.Options{RetryTimeout: 300 * time.Millisecond}); err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "create or migrate the schema: ") {
		t.Errorf("notices %q, want one of the schema's creation", calls)
	}
}

package storage_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/bkb-go/bkb/internal/testtier"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/storagetest"
)

const envJournal = "BKB_STORAGETEST_JOURNAL"

func TestMain(m *testing.M) {
	storagetest.WorkerMain(func() (storage.Storage, error) {
		return storage.OpenJournalStore(os.Getenv(envJournal), storage.JournalStoreOptions{})
	})
	os.Exit(m.Run())
}

// deadWorker returns a worker id of this host naming a process that has
// exited and been reaped.
func deadWorker(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true(1) to get a dead pid: %v", err)
	}
	host, _, _ := storage.ParseWorkerID(storage.NewWorkerID())
	return host + ":" + strconv.Itoa(cmd.Process.Pid) + ":00000000"
}

func journalBackend() storagetest.Backend {
	return storagetest.Backend{
		New: func(t *testing.T) func() storage.Storage {
			path := filepath.Join(t.TempDir(), "study.jsonl")
			return func() storage.Storage {
				s, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
		},
		DeadWorker: deadWorker,
	}
}

func TestJournalStoreConformance(t *testing.T) { storagetest.Run(t, journalBackend()) }

func TestMemoryConformance(t *testing.T) {
	storagetest.Run(t, storagetest.Backend{
		New: func(*testing.T) func() storage.Storage {
			m := storage.NewMemory()
			return func() storage.Storage { return m }
		},
	})
}

// newFleetStudy creates a journal study for RunFleet and returns its opener
// and the environment telling worker processes where it is.
func newFleetStudy(t *testing.T) (func() storage.Storage, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fleet.jsonl")
	open := func() storage.Storage {
		s, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	if _, err := open().CreateStudy(t.Context(), "fleet", nil); err != nil {
		t.Fatal(err)
	}
	return open, []string{envJournal + "=" + path}
}

// TestJournalStoreWorkers: 8 worker processes share one journal study of
// 400 trials: exactly the budget, each trial number and point once, no
// error reaching a worker (RunFleet checks).
func TestJournalStoreWorkers(t *testing.T) {
	open, env := newFleetStudy(t)
	storagetest.RunFleet(t, open, "fleet", storagetest.Fleet{Workers: 8, Budget: 400, EvalMax: 4 * time.Millisecond, Env: env})
}

// TestJournalStoreKill kills -9 worker processes at random moments (at
// least 20 kills) and replaces them: every logged tell stored once, every
// trial of a killed worker failed as stale by a live worker, the budget
// reached.
func TestJournalStoreKill(t *testing.T) {
	if testtier.ShortTier() {
		t.Skip("kill test: a few seconds; skipped in the short tier (the e2e tier runs it: go test -tags e2e -short)")
	}
	open, env := newFleetStudy(t)
	// 800 trials outlast the 24 kills, 15-65 ms apart (300 trials once
	// ended after 18 on a loaded machine).
	res := storagetest.RunFleet(t, open, "fleet", storagetest.Fleet{Workers: 8, Budget: 800, EvalMax: 30 * time.Millisecond, Env: env, Kills: 24})
	if res.Kills < 20 {
		t.Errorf("%d kills, want at least 20", res.Kills)
	}
	if res.Stale == 0 {
		t.Errorf("no trial of a killed worker was found stale")
	}
}

// TestJournalStoreFile checks what is particular to the file: CreateStudy
// never replaces a file, a study of another name is not found, a final
// line being written is not read by Records and, under the lock (Update),
// is cut off as the trace of a writer that died.
func TestJournalStoreFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	other := filepath.Join(dir, "other.txt")
	if err := os.WriteFile(other, []byte("not a journal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := storage.OpenJournalStore(other, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateStudy(ctx, "a", nil); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("CreateStudy over a file: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "not a journal\n" {
		t.Fatalf("the file was changed: %q", b)
	}

	path := filepath.Join(dir, "j.jsonl")
	s, err = storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateStudy(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Study(ctx, "b"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Study of another name: %v, want ErrNotFound", err)
	}
	y := 1.0
	if _, err := s.Update(ctx, "a", 0, func(storage.View) ([]storage.Record, error) {
		return []storage.Record{{Kind: storage.KindAsk, Trial: 0, Arm: -1, X: []float64{1}}, {Kind: storage.KindTell, Trial: 0, Arm: -1, X: []float64{1}, Y: &y}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// Another process is writing trial 1's ask (no '\n' yet).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"kind":"ask","trial":1,"arm":-1,"x":[`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, err := r.Records(ctx, "a", 0)
	if err != nil || len(recs) != 2 {
		t.Fatalf("Records with a line being written: %d records, %v; want 2", len(recs), err)
	}
	// The writer died: the next Update cuts the line and appends.
	if _, err := r.Update(ctx, "a", 0, func(v storage.View) ([]storage.Record, error) {
		if len(v.New) != 2 {
			t.Errorf("View.New has %d records, want 2", len(v.New))
		}
		return []storage.Record{{Kind: storage.KindAsk, Trial: 1, Arm: -1, X: []float64{2}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	_, all, err := storage.ReadFile(path)
	if err != nil || len(all) != 3 || all[2].X[0] != 2 {
		t.Fatalf("after the cut: %+v, %v", all, err)
	}
	recs, err = s.Records(ctx, "a", 0)
	if err != nil || len(recs) != 3 {
		t.Fatalf("first handle sees %d records, %v; want 3", len(recs), err)
	}
}

// TestJournalStoreLockWait: an Update waits for the file's lock, held here
// by a Journal, until its context ends, then fails without calling fn;
// once the lock is released it goes through.
func TestJournalStoreLockWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	s, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateStudy(t.Context(), "a", nil); err != nil {
		t.Fatal(err)
	}
	j, _, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	called := false
	fn := func(storage.View) ([]storage.Record, error) {
		called = true
		return []storage.Record{{Kind: storage.KindAsk, Trial: 0, Arm: -1, X: []float64{1}}}, nil
	}
	if _, err := s.Update(ctx, "a", 0, fn); !errors.Is(err, context.DeadlineExceeded) || called {
		t.Fatalf("Update while locked: %v (fn called: %v), want a deadline error", err, called)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(t.Context(), "a", 0, fn); err != nil || !called {
		t.Fatalf("Update after unlock: %v (fn called: %v)", err, called)
	}
}

func TestJournalStoreSnapshotStreams(t *testing.T) {
	storagetest.RunSnapshotStreams(t, journalBackend())
}

func TestDirSnapshotStreams(t *testing.T) {
	storagetest.RunSnapshotStreams(t, storagetest.Backend{
		New: func(t *testing.T) func() storage.Storage {
			dir := t.TempDir()
			return func() storage.Storage {
				d, err := storage.OpenDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = d.Close() })
				return d
			}
		},
	})
}

package study

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
)

// snapshotConfig is a short version 5 study on Hartmann 3 whose model
// runs through the design, fits, resparsifications and a trust region.
func snapshotConfig(policy string) Config {
	f, _ := objectives.Lookup("hartmann3")
	sp, _ := Box(nil, f.Lower, f.Upper)
	return Config{Space: sp, Policy: policy, Budget: 70, Seed: 11, Version: LatestVersion}
}

// snapshotObjective is Hartmann 3, with noise that depends on the trial
// only (so that every run sees the same values).
func snapshotObjective(noise bool) func(tr *Trial) float64 {
	f, _ := objectives.Lookup("hartmann3")
	return func(tr *Trial) float64 {
		y := f.Value(tr.X)
		if noise {
			y += 0.3 * math.Sin(float64(tr.Number)*12.9898)
		}
		return y
	}
}

// runTrials asks and tells n trials of s (leaving the last ask pending
// when pendingLast).
func runTrials(t *testing.T, s *Study, n int, f func(*Trial) float64, pendingLast bool) []*Trial {
	t.Helper()
	ctx := context.Background()
	var out []*Trial
	for i := 0; i < n; i++ {
		tr, err := s.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
		if pendingLast && i == n-1 {
			break
		}
		if err := s.Tell(ctx, tr.Number, f(tr)); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestSnapshotResumeEqualsUninterrupted: a study saved at a snapshot after
// k trials and resumed from it (by a new Study on a new storage handle)
// asks exactly the points of the uninterrupted run, bit for bit, for the
// 20 trials after the resume and on to the budget; the resume replays
// only the records after the snapshot.
func TestSnapshotResumeEqualsUninterrupted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		policy  string
		noise   bool
		k       int
		pending bool
	}{
		{"bkb", false, 3, false},     // within the initial design
		{"bkb", false, 31, false},    // model, fits, trust region
		{"bkb", false, 50, true},     // a pending trial at the snapshot
		{"bkb", true, 40, false},     // noise rules: joint samples
		{"random", false, 25, false}, // no model
		{"bkb-v4", false, 45, false}, // the default version
		{"bkb-v5", false, 45, false}, // the long-study engine without warp and local steps
	} {
		t.Run(c.policy, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			policy, version, _ := strings.Cut(c.policy, "-v")
			cfg := snapshotConfig(policy)
			if version != "" {
				cfg.Version = int(version[0] - '0')
			}
			f := snapshotObjective(c.noise)
			ref, err := Create(ctx, storage.NewMemory(), "ref", cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := runTrials(t, ref, cfg.Budget, f, false)

			got, second, notes := stopAndLoad(t, cfg, f, c.k, c.pending, false)
			eng, from := second.restore(ctx)
			if eng == nil || from != len(second.records) {
				t.Fatalf("restore: engine %v, from %d of %d records (notes %q)", eng != nil, from, len(second.records), *notes)
			}
			if c.pending {
				// Its result arrives after the resume (bkb tell).
				tr := got[len(got)-1]
				if err := second.Tell(ctx, tr.Number, f(tr)); err != nil {
					t.Fatal(err)
				}
			}
			got = append(got, runTrials(t, second, cfg.Budget-len(got), f, false)...)
			if len(*notes) > 0 {
				t.Errorf("notes: %q", *notes)
			}
			for i := range want {
				if !samePoint(got[i].X, want[i].X) {
					t.Fatalf("trial %d: %v after a snapshot at %d, %v uninterrupted", i, got[i].X, c.k, want[i].X)
				}
			}
			if d := second.Info().Diverged; d != 0 {
				t.Errorf("%d asks diverged", d)
			}
		})
	}
}

func samePoint(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestSnapshotFallbacks: a damaged, stale or foreign snapshot is not used:
// the study says so in one note and replays its records, asking the same
// points as with no snapshot at all.
func TestSnapshotFallbacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := snapshotConfig("bkb")
	f := snapshotObjective(false)
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, path string)
		note   string
	}{
		{"flipped byte", func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x40
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "checksum mismatch"},
		{"truncated", func(t *testing.T, p string) {
			if err := os.Truncate(p, 100); err != nil {
				t.Fatal(err)
			}
		}, "snapshot not used"},
		{"another study's", func(t *testing.T, p string) {
			other := filepath.Join(filepath.Dir(p), "o.jsonl")
			st, _ := storage.OpenJournalStore(other, storage.JournalStoreOptions{})
			ocfg := cfg
			ocfg.Seed++
			s, err := Create(ctx, st, "o", ocfg)
			if err != nil {
				t.Fatal(err)
			}
			runTrials(t, s, 30, f, false)
			forceSnapshot(s)
			// The other study's snapshot whole: its list and its chunks.
			if err := os.Rename(storage.SnapshotPath(other), p); err != nil {
				t.Fatal(err)
			}
			chunks := strings.TrimSuffix(p, ".snapshot") + ".snapshot.chunks"
			if err := os.RemoveAll(chunks); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(storage.SnapshotChunksPath(other), chunks); err != nil {
				t.Fatal(err)
			}
		}, "records differ"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "s.jsonl")
			st, _ := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
			s, err := Create(ctx, st, "s", cfg)
			if err != nil {
				t.Fatal(err)
			}
			runTrials(t, s, 30, f, false)
			forceSnapshot(s)
			c.damage(t, storage.SnapshotPath(path))
			var notes []string
			st2, _ := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
			re, err := Load(ctx, st2, "", Options{Notify: func(m string) { notes = append(notes, m) }})
			if err != nil {
				t.Fatal(err)
			}
			a, err := re.Ask(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b := uninterruptedAsk(t, cfg, f, 30)
			if len(notes) != 1 || !strings.Contains(notes[0], c.note) || !strings.Contains(notes[0], "replaying") {
				t.Errorf("notes %q, want one naming %q", notes, c.note)
			}
			if a.Number != b.Number || !samePoint(a.X, b.X) {
				t.Errorf("ask after the fallback: trial %d at %v, uninterrupted trial %d at %v", a.Number, a.X, b.Number, b.X)
			}
		})
	}
}

// TestSnapshotPostgresPoolOfOne: a study on PostgreSQL with a pool of one
// connection restores its snapshot in Ask (read before the storage's lock,
// which holds the connection) and asks the uninterrupted run's point.
func TestSnapshotPostgresPoolOfOne(t *testing.T) {
	url := os.Getenv("BKB_POSTGRES_URL")
	if url == "" {
		t.Skip("BKB_POSTGRES_URL is not set: no PostgreSQL to test on")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	open := func() storage.Storage {
		st, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	cfg := snapshotConfig("bkb")
	f := snapshotObjective(false)
	name := fmt.Sprintf("snapshot-pool-%d", time.Now().UnixNano())
	first, err := Create(ctx, open(), name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	runTrials(t, first, 30, f, false)
	forceSnapshot(first)
	var notes []string
	second, err := Load(ctx, open(), name, Options{Notify: func(m string) { notes = append(notes, m) }})
	if err != nil {
		t.Fatal(err)
	}
	a, err := second.Ask(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b := uninterruptedAsk(t, cfg, f, 30)
	if len(notes) > 0 || !samePoint(a.X, b.X) {
		t.Errorf("ask after a restore on PostgreSQL: %v, uninterrupted %v (notes %q)", a.X, b.X, notes)
	}
}

// stopAndLoad runs k trials of f on a new journal study of cfg (the last
// left pending with pendingLast), saves its snapshot, removes it when
// lost, and loads the study again on a new storage handle: a process
// stopped after k trials and the next one. notes collects both processes'
// notes.
func stopAndLoad(t *testing.T, cfg Config, f func(*Trial) float64, k int, pendingLast, lost bool) (got []*Trial, second *Study, notes *[]string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	notes = new([]string)
	opts := Options{Notify: func(m string) { *notes = append(*notes, m) }}
	first, err := Create(ctx, st, "s", cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	got = runTrials(t, first, k, f, pendingLast)
	forceSnapshot(first)
	if _, err := os.Stat(storage.SnapshotPath(path)); err != nil {
		t.Fatalf("no snapshot: %v (notes %q)", err, *notes)
	}
	return got, loadAgain(t, path, lost, opts), notes
}

// loadAgain loads the journal study at path on a new storage handle (the
// next process), its snapshot first removed when lost.
func loadAgain(t *testing.T, path string, lost bool, opts Options) *Study {
	t.Helper()
	if lost {
		if err := os.Remove(storage.SnapshotPath(path)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), st, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forceSnapshot saves s's snapshot now, whatever the saving rule says.
func forceSnapshot(s *Study) {
	s.snapPolicy = math.Inf(-1)
	s.saveSnapshot(context.Background())
}

// uninterruptedAsk returns the trial an in-memory study of cfg asks after
// n trials of f: the point of the uninterrupted run.
func uninterruptedAsk(t *testing.T, cfg Config, f func(*Trial) float64, n int) *Trial {
	t.Helper()
	ref, err := Create(context.Background(), storage.NewMemory(), "ref", cfg)
	if err != nil {
		t.Fatal(err)
	}
	runTrials(t, ref, n, f, false)
	tr, err := ref.Ask(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestCopyKeepsSnapshot: storage.Copy of a journal into another journal
// carries the snapshot, and the copy restores it (no replay) because the
// records it names are the same.
func TestCopyKeepsSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := snapshotConfig("bkb")
	dir := t.TempDir()
	src, err := storage.OpenJournalStore(filepath.Join(dir, "a.jsonl"), storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Create(ctx, src, "s", cfg)
	if err != nil {
		t.Fatal(err)
	}
	runTrials(t, s, 31, snapshotObjective(false), false)
	forceSnapshot(s)
	dst, err := storage.OpenJournalStore(filepath.Join(dir, "b.jsonl"), storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.Copy(ctx, dst, src, "s"); err != nil {
		t.Fatal(err)
	}
	c, err := Load(ctx, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	if eng, from := c.restore(ctx); eng == nil || from != len(c.records) {
		t.Fatalf("the copy did not restore the snapshot (engine %v, from record %d of %d)", eng != nil, from, len(c.records))
	}
}

// TestSnapshotAskTellLoop: the shell loop of `bkb ask` and `bkb tell`,
// each a new process: every trial after the first 20 is asked by a new
// Study that restores the newest snapshot, saves the next one into the
// restored snapshot's buffer and is then dropped. The points equal the
// uninterrupted run's, bit for bit, and no snapshot is ever refused.
func TestSnapshotAskTellLoop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := snapshotConfig("bkb")
	cfg.Budget = 45
	f := snapshotObjective(true)
	ref, err := Create(ctx, storage.NewMemory(), "ref", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := runTrials(t, ref, cfg.Budget, f, false)

	path := filepath.Join(t.TempDir(), "s.jsonl")
	var notes []string
	opts := Options{Notify: func(m string) { notes = append(notes, m) }}
	open := func() *Study {
		st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s, err := Load(ctx, st, "", opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := Create(ctx, st, "s", cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := runTrials(t, first, 20, f, false)
	forceSnapshot(first)
	st.Close()
	restored := 0
	for len(got) < cfg.Budget {
		s := open()
		tr, err := s.Ask(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.spare != nil || s.snapBytes > 0 {
			restored++
		}
		forceSnapshot(s)
		got = append(got, tr)
		if err := open().Tell(ctx, tr.Number, f(tr)); err != nil {
			t.Fatal(err)
		}
	}
	if len(notes) > 0 {
		t.Errorf("notes: %q", notes)
	}
	if restored != cfg.Budget-20 {
		t.Errorf("%d of %d asks restored a snapshot", restored, cfg.Budget-20)
	}
	for i := range want {
		if !samePoint(got[i].X, want[i].X) {
			t.Fatalf("trial %d: %v in the ask/tell loop, %v uninterrupted", i, got[i].X, want[i].X)
		}
	}
}

// countingSnapshots counts the snapshots saved through it and their bytes.
type countingSnapshots struct {
	storage.Storage
	sn           storage.Snapshots
	saves, bytes int
	last         storage.Snapshot
}

func (c *countingSnapshots) Unwrap() storage.Storage { return c.Storage }

func (c *countingSnapshots) SaveSnapshot(ctx context.Context, name string, s storage.Snapshot) error {
	c.saves++
	c.bytes += len(s.Data)
	c.last = storage.Snapshot{Records: s.Records, Digest: s.Digest}
	return c.sn.SaveSnapshot(ctx, name, s)
}

func (c *countingSnapshots) LoadSnapshot(ctx context.Context, name string, withData bool) (storage.Snapshot, error) {
	return c.sn.LoadSnapshot(ctx, name, withData)
}

func (c *countingSnapshots) WriteSnapshot(ctx context.Context, name string, s storage.Snapshot, encode func(io.Writer) error) error {
	c.saves++
	c.last = storage.Snapshot{Records: s.Records, Digest: s.Digest}
	return c.sn.(storage.SnapshotStreams).WriteSnapshot(ctx, name, s, func(w io.Writer) error {
		return encode(countingWriter{w, &c.bytes})
	})
}

func (c *countingSnapshots) OpenSnapshot(ctx context.Context, name string) (storage.Snapshot, storage.SnapshotData, error) {
	return c.sn.(storage.SnapshotStreams).OpenSnapshot(ctx, name)
}

// countingWriter adds the bytes written through it to *n.
type countingWriter struct {
	w io.Writer
	n *int
}

func (c countingWriter) Write(p []byte) (int, error) {
	*c.n += len(p)
	return c.w.Write(p)
}

// TestSnapshotBytesFollowSize: a long-lived process (Run) saves while its
// snapshots sum to at most SnapshotBytes times the newest (a geometric
// series) instead of one per ask, and Run's checkpoint leaves a snapshot
// of every record; a process that stops without one (a kill) leaves its
// newest snapshot for the next process to restore. SnapshotEveryAsk, the
// one-ask-per-process rule, writes several times more on the same study:
// the bound is what tells the rules apart.
func TestSnapshotBytesFollowSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := snapshotConfig("bkb")
	cfg.Budget = 160
	f := snapshotObjective(false)
	objective := func(_ context.Context, tr *Trial) (float64, error) { return f(tr), nil }
	open := func(t *testing.T, path string) *countingSnapshots {
		st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		sn, ok := storage.As[storage.Snapshots](st)
		if !ok {
			t.Fatal("the journal keeps no snapshots")
		}
		return &countingSnapshots{Storage: st, sn: sn}
	}
	run := func(t *testing.T, opts Options) (*countingSnapshots, *Study) {
		c := open(t, filepath.Join(t.TempDir(), "s.jsonl"))
		s, err := Create(ctx, c, "s", cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		// Saves as if they cost nothing against the policy: what is left
		// is the rule of each mode (the time rule depends on the machine).
		s.saveEvery = 0
		if err := s.Optimize(ctx, objective, 0); err != nil {
			t.Fatal(err)
		}
		return c, s
	}
	long, s := run(t, Options{})
	final, err := long.sn.LoadSnapshot(ctx, "s", true)
	if err != nil {
		t.Fatal(err)
	}
	if final.Records != len(s.records) {
		t.Errorf("after Run the snapshot covers %d of %d records: no checkpoint", final.Records, len(s.records))
	}
	bound := (SnapshotBytes + 1) * len(final.Data)
	t.Logf("long-lived: %d saves, %d bytes, %.1fx the last snapshot's %d bytes", long.saves, long.bytes, float64(long.bytes)/float64(len(final.Data)), len(final.Data))
	if long.bytes > bound {
		t.Errorf("a long-lived process saved %d bytes of snapshots, more than %d (%d times the last, %d bytes)", long.bytes, bound, SnapshotBytes+1, len(final.Data))
	}
	every, _ := run(t, Options{SnapshotEveryAsk: true})
	t.Logf("every ask: %d saves, %d bytes", every.saves, every.bytes)
	if every.bytes < 4*long.bytes {
		t.Errorf("SnapshotEveryAsk saved %d bytes, the long-lived rule %d: the rules do not differ", every.bytes, long.bytes)
	}

	// A kill: asks and tells by a Study that never checkpoints.
	path := filepath.Join(t.TempDir(), "k.jsonl")
	c := open(t, path)
	killed, err := Create(ctx, c, "s", cfg)
	if err != nil {
		t.Fatal(err)
	}
	killed.saveEvery = 0
	runTrials(t, killed, 120, f, false)
	if c.saves == 0 || c.bytes > SnapshotBytes*killed.snapBytes {
		t.Errorf("a process that never checkpoints saved %d snapshots, %d bytes, last %d", c.saves, c.bytes, killed.snapBytes)
	}
	again, err := Load(ctx, open(t, path), "")
	if err != nil {
		t.Fatal(err)
	}
	if eng, from := again.restore(ctx); eng == nil || from != c.last.Records {
		t.Fatalf("the next process restored from record %d (engine %v), the newest snapshot covers %d", from, eng != nil, c.last.Records)
	}
}

// losingPieces is a storage whose first snapshot opened loses a piece
// while it is read, as when saves by other processes remove its chunks.
type losingPieces struct {
	storage.Storage
	opens int
}

func (l *losingPieces) Unwrap() storage.Storage { return l.Storage }

func (l *losingPieces) OpenSnapshot(ctx context.Context, name string) (storage.Snapshot, storage.SnapshotData, error) {
	l.opens++
	snap, d, err := l.Storage.(storage.SnapshotStreams).OpenSnapshot(ctx, name)
	if err == nil && l.opens == 1 {
		d = losingData{d}
	}
	return snap, d, err
}

func (l *losingPieces) WriteSnapshot(ctx context.Context, name string, s storage.Snapshot, encode func(io.Writer) error) error {
	return l.Storage.(storage.SnapshotStreams).WriteSnapshot(ctx, name, s, encode)
}

type losingData struct{ storage.SnapshotData }

func (d losingData) Pieces() func() ([]byte, error) {
	next, k := d.SnapshotData.Pieces(), 0
	return func() ([]byte, error) {
		if k++; k == 1 {
			return nil, fmt.Errorf("%w: a chunk is missing", storage.ErrSnapshotPiece)
		}
		return next()
	}
}

// TestRestoreReopensLostPieces: a snapshot whose piece is lost while it
// is read is opened again and restored, not replaced by a replay of the
// study's records.
func TestRestoreReopensLostPieces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := snapshotConfig("bkb")
	cfg.Budget = 40
	f := snapshotObjective(false)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	st, err := storage.OpenJournalStore(path, storage.JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := Create(ctx, st, "s", cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.saveEvery = 0
	runTrials(t, s, 30, f, false)
	if s.snapRecords == 0 {
		t.Fatal("no snapshot saved")
	}
	lp := &losingPieces{Storage: st}
	var notes []string
	again, err := Load(ctx, lp, "", Options{Notify: func(n string) { notes = append(notes, n) }})
	if err != nil {
		t.Fatal(err)
	}
	if eng, from := again.restore(ctx); eng == nil || from != s.snapRecords || lp.opens != 2 || len(notes) != 0 {
		t.Fatalf("restored from record %d (engine %v) after %d opens, notes %q; want record %d after 2 opens, no note", from, eng != nil, lp.opens, notes, s.snapRecords)
	}
}

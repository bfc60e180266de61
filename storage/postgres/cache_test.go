package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
)

// TestLocalCacheRecords: a store with Options.CacheDir reads the records
// a cache-less store reads, record for record, whatever the cache holds:
// none, one written by another store of the same study, one behind the
// database by a few records, a damaged one, one of a study of the same
// name dropped and created again, one whose last record differs. A cache
// that names the study's id and creation time and ends with its stored
// record is read (shown by forging an earlier record in it: the cache is
// trusted there, by design, as a journal's cache is for its bytes).
func TestLocalCacheRecords(t *testing.T) {
	t.Parallel()
	u := newSchema(t)
	ctx := context.Background()
	dir := t.TempDir()
	ref := openStore(t, u, postgres.Options{})
	cached := func() *postgres.Store { return openStore(t, u, postgres.Options{CacheDir: dir}) }
	pairs := func(from, n int) { t.Helper(); appendTrials(t, ref, from, n) }
	same := func(what string, s *postgres.Store) []storage.Record {
		t.Helper()
		want, err := ref.Records(ctx, "s", 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Records(ctx, "s", 0)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %d records read through the cache differ from the %d stored", what, len(got), len(want))
		}
		return got
	}
	if _, err := ref.CreateStudy(ctx, "s", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	pairs(0, 600) // 1,200 records: enough for a read to write the cache
	a := cached()
	file := filepath.Join(a.CacheDir("s"), "records")
	same("no cache yet", a)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no records cache written: %v", err)
	}
	pairs(600, 3)
	recs := same("a cache behind the database", cached())

	// The cache is read: an earlier record forged in a cache that is
	// otherwise right comes back.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	key, old, err := storage.UnmarshalRecordCache(raw)
	if err != nil {
		t.Fatal(err)
	}
	forged := append([]storage.Record(nil), old...)
	forged[0].Seconds = 99
	writeCache := func(recs []storage.Record) {
		t.Helper()
		b, ok := storage.MarshalRecordCache(key, recs)
		if !ok {
			t.Fatal("records not cacheable")
		}
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeCache(forged)
	got, err := cached().Records(ctx, "s", 0)
	if err != nil || len(got) != len(recs) || got[0].Seconds != 99 {
		t.Fatalf("a matching cache was not read (%d records, %v)", len(got), err)
	}
	// Its last record differs from the stored one: not used.
	forged = append([]storage.Record(nil), old...)
	forged[len(forged)-1].Seconds = 99
	writeCache(forged)
	same("a cache whose last record differs", cached())
	// Damaged: not used.
	writeCache(old)
	raw, _ = os.ReadFile(file)
	raw[len(raw)/2] ^= 0x5a
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	same("a damaged cache", cached())
	// The study dropped and created again under its name, with fewer
	// records: the cache of the old one is not used.
	writeCache(old)
	if err := ref.DeleteStudy(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	// A store with the cache deletes the study's cache with the study.
	stale, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateStudy(ctx, "s", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.DeleteStudy(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.CacheDir("s")); !os.IsNotExist(err) {
		t.Fatalf("the cache of a deleted study is still there (%v)", err)
	}
	// Put back, it is the cache of a dropped study.
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ref.CreateStudy(ctx, "s", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	pairs(0, 2)
	same("the cache of a dropped study", cached())
}

// appendTrials stores trials from, ..., from+n-1 of study "s" in st, an
// ask and a tell each, in one Update.
func appendTrials(t *testing.T, st storage.Storage, from, n int) {
	t.Helper()
	if _, err := st.Update(context.Background(), "s", 0, func(storage.View) ([]storage.Record, error) {
		var out []storage.Record
		for i := from; i < from+n; i++ {
			y := float64(i) / 7
			out = append(out, storage.Record{Kind: storage.KindAsk, Trial: i, Arm: -1, X: []float64{float64(i), 0.5}},
				storage.Record{Kind: storage.KindTell, Trial: i, Arm: -1, X: []float64{float64(i), 0.5}, Y: &y, Seconds: 0.25})
		}
		return out, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestLocalCacheChunks: a store with Options.CacheDir loads every
// snapshot byte for byte, whatever its cache of chunks holds (all of
// them, none, a damaged one, those of an older snapshot saved by a store
// without a cache), and keeps only the chunks of the snapshot it read or
// saved last.
func TestLocalCacheChunks(t *testing.T) {
	t.Parallel()
	u := newSchema(t)
	ctx := context.Background()
	dir := t.TempDir()
	ref := openStore(t, u, postgres.Options{})
	a := openStore(t, u, postgres.Options{CacheDir: dir})
	if _, err := ref.CreateStudy(ctx, "s", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	chunks := filepath.Join(a.CacheDir("s"), "chunks")
	files := func() []string {
		t.Helper()
		ents, err := os.ReadDir(chunks)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			out = append(out, filepath.Join(chunks, e.Name()))
		}
		return out
	}
	load := func(what string, want []byte) {
		t.Helper()
		for _, s := range []*postgres.Store{a, openStore(t, u, postgres.Options{CacheDir: dir})} {
			snap, err := s.LoadSnapshot(ctx, "s", true)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if !bytes.Equal(snap.Data, want) {
				t.Fatalf("%s: the snapshot read through the cache differs from the one saved", what)
			}
		}
	}
	if err := a.SaveSnapshot(ctx, "s", storage.Snapshot{Records: 1, Meta: []byte(`{}`), Data: data}); err != nil {
		t.Fatal(err)
	}
	saved := files()
	if len(saved) < 10 {
		t.Fatalf("the save left %d chunks in the cache", len(saved))
	}
	load("every chunk cached", data)
	// A damaged chunk, a chunk longer than listed, a missing one: read
	// from the database, and cached again.
	b, _ := os.ReadFile(saved[1])
	b[len(b)/2] ^= 0x5a
	os.WriteFile(saved[1], b, 0o600)
	f, _ := os.OpenFile(saved[2], os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("x"))
	f.Close()
	os.Remove(saved[3])
	load("damaged, long and missing chunks", data)
	if n := len(files()); n != len(saved) {
		t.Fatalf("after the load %d chunks are cached, want %d", n, len(saved))
	}
	os.RemoveAll(a.CacheDir("s"))
	load("no cache", data)
	// A newer snapshot saved by another machine: the cache keeps the
	// chunks both share, reads the others, and drops the old ones.
	next := append(append(append([]byte(nil), data[:1<<20]...), "an ask's change"...), data[1<<20:]...)
	if err := ref.SaveSnapshot(ctx, "s", storage.Snapshot{Records: 2, Meta: []byte(`{}`), Data: next}); err != nil {
		t.Fatal(err)
	}
	load("a newer snapshot", next)
	now := files()
	kept := 0
	for _, f := range now {
		for _, g := range saved {
			if f == g {
				kept++
			}
		}
	}
	if kept == 0 || kept == len(now) || len(now) > len(saved)+2 {
		t.Fatalf("the cache holds %d chunks (%d of the old snapshot's %d) for the newer snapshot", len(now), kept, len(saved))
	}
	// A temporary file of a killed writer goes once it is a minute old.
	tmp := filepath.Join(chunks, ".tmp-123")
	os.WriteFile(tmp, []byte("x"), 0o600)
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(tmp, old, old)
	load("a stale temporary file", next)
	if _, err := os.Stat(tmp); err == nil {
		t.Fatal("a killed writer's temporary file was kept")
	}
}

// TestLocalCacheShared: stores of several processes on one machine share a
// cache directory (files written to temporary names and renamed, chunks
// of older snapshots removed by whichever store reads or saves a newer
// one): while they append records, save and load snapshots at once, every
// load returns one of the snapshots saved, byte for byte, and every read
// of the records a prefix of the study's.
func TestLocalCacheShared(t *testing.T) {
	t.Parallel()
	u := newSchema(t)
	ctx := context.Background()
	dir := t.TempDir()
	ref := openStore(t, u, postgres.Options{})
	if _, err := ref.CreateStudy(ctx, "s", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	appendTrials(t, ref, 1000, 600) // enough records for a read to write the records cache
	rng := rand.New(rand.NewPCG(5, 5))
	base := make([]byte, 1<<20)
	for i := range base {
		base[i] = byte(rng.Uint32())
	}
	// Snapshot k: base with a small change at a place that depends on k.
	snapshot := func(k int) []byte {
		b := append([]byte(nil), base...)
		for i := (k * 7919) % len(b); i < len(b) && i < (k*7919)%len(b)+3000; i++ {
			b[i] ^= byte(k)
		}
		return b
	}
	const workers, rounds = 3, 12
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			errs <- func() error {
				s, err := postgres.Open(ctx, u, postgres.Options{CacheDir: dir})
				if err != nil {
					return err
				}
				defer s.Close()
				for i := 0; i < rounds; i++ {
					k := w*rounds + i + 1
					y := float64(k)
					if _, err := s.Update(ctx, "s", 0, func(storage.View) ([]storage.Record, error) {
						return []storage.Record{{Kind: storage.KindAsk, Trial: 100*w + i, Arm: -1, X: []float64{y, 0.5}},
							{Kind: storage.KindTell, Trial: 100*w + i, Arm: -1, X: []float64{y, 0.5}, Y: &y}}, nil
					}); err != nil {
						return err
					}
					if err := s.SaveSnapshot(ctx, "s", storage.Snapshot{Records: k, Meta: []byte(`{}`), Data: snapshot(k)}); err != nil {
						return err
					}
					snap, err := s.LoadSnapshot(ctx, "s", true)
					if err != nil {
						return err
					}
					if !bytes.Equal(snap.Data, snapshot(snap.Records)) {
						return fmt.Errorf("worker %d: the snapshot of %d records read through the shared cache differs from the one saved", w, snap.Records)
					}
					got, err := s.Records(ctx, "s", 0)
					if err != nil {
						return err
					}
					all, err := ref.Records(ctx, "s", 0)
					if err != nil {
						return err
					}
					if len(got) > len(all) || !reflect.DeepEqual(got, all[:len(got)]) {
						return fmt.Errorf("worker %d: %d records read through the shared cache are not a prefix of the study's %d", w, len(got), len(all))
					}
				}
				return nil
			}()
		}(w)
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

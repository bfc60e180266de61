package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/internal/cdc"
	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/storage/postgres"
	"github.com/bkb-go/bkb/storage/storagetest"
)

// TestSnapshotChunks: a snapshot is kept in content-defined chunks; a
// save after a small change writes the changed chunks only (measured by
// the WAL the save generates: under a fifth of the snapshot's size where
// the whole row was rewritten before), a load returns the newest snapshot
// byte for byte, the chunks of older snapshots are deleted, and a
// snapshot saved whole by schema 5 still loads.
func TestSnapshotChunks(t *testing.T) {
	t.Parallel()
	u := newSchema(t)
	ctx := context.Background()
	pg := openStore(t, u, postgres.Options{})
	if _, err := pg.CreateStudy(ctx, "s", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	a := make([]byte, 6<<20)
	for i := range a {
		a[i] = byte(rng.Uint32())
	}
	save := func(data []byte, records int) int64 {
		t.Helper()
		var before, after string
		if err := pg.Pool().QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&before); err != nil {
			t.Fatal(err)
		}
		if err := pg.SaveSnapshot(ctx, "s", storage.Snapshot{Records: records, Meta: []byte(`{}`), Data: data}); err != nil {
			t.Fatal(err)
		}
		if err := pg.Pool().QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&after); err != nil {
			t.Fatal(err)
		}
		var wal int64
		if err := pg.Pool().QueryRow(ctx, `SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint`, after, before).Scan(&wal); err != nil {
			t.Fatal(err)
		}
		return wal
	}
	load := func() []byte {
		t.Helper()
		snap, err := pg.LoadSnapshot(ctx, "s", true)
		if err != nil {
			t.Fatal(err)
		}
		return snap.Data
	}
	first := save(a, 1)
	if got := load(); !bytes.Equal(got, a) {
		t.Fatalf("loaded %d bytes, saved %d", len(got), len(a))
	}
	// An ask's change: bytes inserted in the middle, a region rewritten.
	b := append(append(append([]byte(nil), a[:2<<20]...), "an inserted record"...), a[2<<20:]...)
	for i := 4 << 20; i < 4<<20+5000; i++ {
		b[i] ^= 0x5a
	}
	second := save(b, 2)
	if got := load(); !bytes.Equal(got, b) {
		t.Fatal("the second snapshot does not load as saved")
	}
	t.Logf("WAL of a save: %d bytes (whole), %d bytes (after a small change), snapshot %d bytes", first, second, len(b))
	if second > int64(len(b))/5 || first < int64(len(a)) {
		t.Errorf("a save after a small change wrote %d bytes of WAL, the first %d, for %d bytes", second, first, len(b))
	}
	var rows int
	if err := pg.Pool().QueryRow(ctx, `SELECT count(*) FROM bkb_snapshot_chunks`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	uniq := map[[4]uint32]bool{}
	for _, c := range cdc.Split(b, nil) {
		uniq[[4]uint32{c.Len, c.Sum}] = true
	}
	if rows != len(uniq) {
		t.Errorf("%d chunk rows after two saves, the newest snapshot has %d chunks", rows, len(uniq))
	}
	// A row saved whole (schema 5) loads as it is.
	if _, err := pg.Pool().Exec(ctx, `UPDATE bkb_snapshots SET data = $1, chunks = NULL`, a); err != nil {
		t.Fatal(err)
	}
	if got := load(); !bytes.Equal(got, a) {
		t.Fatal("a snapshot saved whole does not load")
	}
	// A lost chunk is an error that names the problem, not a wrong snapshot.
	if err := pg.SaveSnapshot(ctx, "s", storage.Snapshot{Records: 3, Meta: []byte(`{}`), Data: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Pool().Exec(ctx, `DELETE FROM bkb_snapshot_chunks WHERE hash = (SELECT hash FROM bkb_snapshot_chunks LIMIT 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.LoadSnapshot(ctx, "s", true); err == nil {
		t.Fatal("a snapshot with a chunk missing loaded")
	}
}

// TestSnapshotStreams: the conformance of snapshots read and written in
// pieces, with a local cache (two handles share one, as processes on one
// machine do) and without.
func TestSnapshotStreams(t *testing.T) {
	serverURL(t)
	for _, cache := range []bool{true, false} {
		t.Run(fmt.Sprintf("cache=%v", cache), func(t *testing.T) {
			storagetest.RunSnapshotStreams(t, storagetest.Backend{
				New: func(t *testing.T) func() storage.Storage {
					u := newSchema(t)
					var opt postgres.Options
					if cache {
						opt.CacheDir = t.TempDir()
					}
					return func() storage.Storage { return openStore(t, u, opt) }
				},
			})
		})
	}
}

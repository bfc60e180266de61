package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/bkb-go/bkb/storage"
)

// SaveSnapshot implements storage.Snapshots: one row per study in
// bkb_snapshots, replaced in one statement (a reader sees the old row or
// the new one). A snapshot is never required for correctness, so a study
// deleted meanwhile is not an error the caller must handle differently
// from any other.
func (s *Store) SaveSnapshot(ctx context.Context, name string, snap storage.Snapshot) error {
	return s.retry(ctx, "save the snapshot of study "+strconv.Quote(name), func() error {
		tag, err := s.pool.Exec(ctx, `INSERT INTO bkb_snapshots (study_id, records, digest, meta, data)
			SELECT id, $2, $3, $4, $5 FROM bkb_studies WHERE name = $1
			ON CONFLICT (study_id) DO UPDATE SET records = EXCLUDED.records, digest = EXCLUDED.digest,
				meta = EXCLUDED.meta, data = EXCLUDED.data, saved = statement_timestamp()`,
			name, snap.Records, snap.Digest[:], snap.Meta, snap.Data)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return permanent{notFound(name)}
		}
		return nil
	})
}

// LoadSnapshot implements storage.Snapshots.
func (s *Store) LoadSnapshot(ctx context.Context, name string, withData bool) (storage.Snapshot, error) {
	var snap storage.Snapshot
	err := s.retry(ctx, "load the snapshot of study "+strconv.Quote(name), func() error {
		var digest []byte
		q := `SELECT n.records, n.digest, n.meta, CASE WHEN $2 THEN n.data END
			FROM bkb_snapshots n JOIN bkb_studies s ON s.id = n.study_id WHERE s.name = $1`
		err := s.pool.QueryRow(ctx, q, name, withData).Scan(&snap.Records, &digest, &snap.Meta, &snap.Data)
		if errors.Is(err, pgx.ErrNoRows) {
			return permanent{storage.ErrNoSnapshot}
		}
		if err != nil {
			return err
		}
		if len(digest) != len(snap.Digest) {
			return permanent{fmt.Errorf("postgres: study %q: snapshot digest of %d bytes", name, len(digest))}
		}
		copy(snap.Digest[:], digest)
		return nil
	})
	return snap, err
}

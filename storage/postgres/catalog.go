package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bkb-go/bkb/storage"
)

// ListStudies implements storage.Catalog.
func (s *Store) ListStudies(ctx context.Context) ([]storage.Header, error) {
	var out []storage.Header
	err := s.retry(ctx, "list studies", func() error {
		rows, err := s.pool.Query(ctx, `SELECT name, config::text, created FROM bkb_studies ORDER BY name`)
		if err != nil {
			return err
		}
		out = out[:0]
		var (
			name, config string
			created      time.Time
		)
		_, err = pgx.ForEachRow(rows, []any{&name, &config, &created}, func() error {
			out = append(out, storage.Header{Version: storage.Version, Name: name, Config: json.RawMessage(config), Created: created.UTC()})
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteStudy implements storage.Catalog: the study's records,
// heartbeats and attributes go with it (ON DELETE CASCADE).
func (s *Store) DeleteStudy(ctx context.Context, name string) error {
	err := s.retry(ctx, "delete study "+strconv.Quote(name), func() error {
		tag, err := s.pool.Exec(ctx, `DELETE FROM bkb_studies WHERE name = $1`, name)
		if err == nil && tag.RowsAffected() == 0 {
			return notFound(name)
		}
		return err
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.studies, name)
	s.mu.Unlock()
	// The study's local cache goes with it (another study created under
	// the name would not use it, but it would stay on the disk).
	if dir := s.CacheDir(name); dir != "" {
		os.RemoveAll(dir)
	}
	return nil
}

// attrsTable creates the attributes' table if it is missing: outside the
// numbered migrations, so that a database without attributes is read by
// this version and the previous one alike.
func (s *Store) attrsTable(ctx context.Context) error {
	s.mu.Lock()
	done := s.attrsReady
	s.mu.Unlock()
	if done {
		return nil
	}
	err := s.retry(ctx, "create the attributes table", func() error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS bkb_attrs (
				study_id bigint NOT NULL REFERENCES bkb_studies (id) ON DELETE CASCADE,
				trial    integer NOT NULL,
				key      text NOT NULL,
				value    json NOT NULL,
				time     timestamptz NOT NULL,
				PRIMARY KEY (study_id, trial, key)
			)`)
			return err
		})
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.attrsReady = true
	s.mu.Unlock()
	return nil
}

// SetAttr implements storage.Attributes.
func (s *Store) SetAttr(ctx context.Context, name string, a storage.Attr) error {
	if err := storage.CheckAttr(a); err != nil {
		return fmt.Errorf("postgres: study %q: %w", name, err)
	}
	if err := s.attrsTable(ctx); err != nil {
		return err
	}
	if a.Time.IsZero() {
		a.Time = time.Now()
	}
	del := string(a.Value) == "null"
	return s.retry(ctx, "set attribute in study "+strconv.Quote(name), func() error {
		var tag interface{ RowsAffected() int64 }
		var err error
		if del {
			var id int64
			if err := s.pool.QueryRow(ctx, `SELECT id FROM bkb_studies WHERE name = $1`, name).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
				return notFound(name)
			} else if err != nil {
				return err
			}
			_, err = s.pool.Exec(ctx, `DELETE FROM bkb_attrs WHERE study_id = $1 AND trial = $2 AND key = $3`, id, a.Trial, a.Key)
			return err
		}
		tag, err = s.pool.Exec(ctx, `INSERT INTO bkb_attrs (study_id, trial, key, value, time)
			SELECT id, $2, $3, $4, $5 FROM bkb_studies WHERE name = $1
			ON CONFLICT (study_id, trial, key) DO UPDATE SET value = excluded.value, time = excluded.time`,
			name, a.Trial, a.Key, string(a.Value), a.Time.UTC())
		if err == nil && tag.RowsAffected() == 0 {
			return notFound(name)
		}
		return err
	})
}

// Attrs implements storage.Attributes.
func (s *Store) Attrs(ctx context.Context, name string) ([]storage.Attr, error) {
	if err := s.attrsTable(ctx); err != nil {
		return nil, err
	}
	var out []storage.Attr
	err := s.retry(ctx, "attributes of study "+strconv.Quote(name), func() error {
		var id int64
		if err := s.pool.QueryRow(ctx, `SELECT id FROM bkb_studies WHERE name = $1`, name).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
			return notFound(name)
		} else if err != nil {
			return err
		}
		rows, err := s.pool.Query(ctx, `SELECT trial, key, value::text, time FROM bkb_attrs WHERE study_id = $1 ORDER BY trial, key COLLATE "C"`, id)
		if err != nil {
			return err
		}
		out = []storage.Attr{}
		var (
			a     storage.Attr
			value string
		)
		_, err = pgx.ForEachRow(rows, []any{&a.Trial, &a.Key, &value, &a.Time}, func() error {
			a.Value, a.Time = json.RawMessage(value), a.Time.UTC()
			out = append(out, a)
			a = storage.Attr{}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

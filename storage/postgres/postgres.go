// Package postgres is a storage.Storage in a PostgreSQL database, for
// studies whose workers run on many machines. It uses jackc/pgx with a
// bounded connection pool.
//
// Every Update is one transaction holding the study's row lock (SELECT ...
// FOR NO KEY UPDATE on its row of bkb_studies) while it reads the records
// appended since this process last read, computes the stale trials on the
// database's clock, runs the caller's function and inserts the records it
// returns; so trial numbers computed from the records are never handed out
// twice. Serialization failures, deadlocks and lost connections (a server
// restart) are retried with back-off for up to Options.RetryTimeout,
// running the function again; a commit whose outcome was lost with the
// connection is recognized on the retry (the records are found stored)
// and not repeated.
//
// The schema (tables bkb_schema_version, bkb_studies, bkb_records,
// bkb_heartbeats) is created and migrated by Open, under an advisory lock,
// so that many workers may open a new database at once.
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bkb-go/bkb/storage"
)

// Options configure a Store; zero fields take their defaults.
type Options struct {
	// HeartbeatGrace is how long a pending trial may go without a
	// heartbeat (or since its latest ask was stored, or since the server
	// started) before Update reports it stale, on the database's clock.
	// Default 1 minute.
	// Workers should heartbeat several times per grace period.
	HeartbeatGrace time.Duration
	// MaxConns bounds the connection pool. Default 4.
	MaxConns int32
	// Worker is the id written with this process's heartbeats. Default
	// storage.NewWorkerID().
	Worker string
	// RetryTimeout is how long an operation retries serialization
	// failures, deadlocks and connection errors before it returns the
	// error. Default 30 s: longer than a server restart.
	RetryTimeout time.Duration
	// CacheDir is a directory on this machine where the store keeps a
	// copy of each study's records and snapshot chunks (cache.go), so
	// that a process started for one command (bkb ask, tell, status)
	// reads from the database only the records and chunks written since
	// the last one: on a study of 10,000 trials that is the 20,000
	// records and 43 MB of chunks of every ask otherwise. "" keeps none.
	// What is read from the cache is checked (the records against the
	// study's id, creation time and its last cached record as stored,
	// each chunk against its length and CRC-32C in the snapshot's list),
	// so a stale or damaged cache makes a read slower, never different.
	CacheDir string
}

// Store is a storage.Storage in PostgreSQL. Its methods are safe for
// concurrent use.
type Store struct {
	pool *pgxpool.Pool
	opt  Options

	mu      sync.Mutex
	studies map[string]*study
	// attrsReady: the attributes' table exists (catalog.go).
	attrsReady bool
	// origin names the database in the cache's directory names
	// (originOf).
	origin string
}

// study is this process's copy of a study's records: the records are
// append-only, so a copy read once stays valid and each Update reads only
// the new ones.
type study struct {
	mu     sync.Mutex // one Update at a time per study in this process
	id     int64
	ledger *storage.Ledger

	// read holds the records a Records call read from the first one of
	// study readID (committed records, in order), for the next Update to
	// take into its ledger instead of reading them again: a command reads
	// the records when it loads the study and then updates it once, and
	// on a study of 10,000 trials the second read of its 20,000 records
	// was about a fifth of `bkb ask`'s CPU, and as much of the server's.
	// Guarded by readMu, not mu, which an Update holds for its whole
	// transaction.
	readMu sync.Mutex
	readID int64
	read   []storage.Record
}

// Open connects to the database at url (a PostgreSQL URL or keyword/value
// string, e.g. "postgres://user:pass@host:5432/db?sslmode=disable") and
// creates or migrates the schema.
func Open(ctx context.Context, url string, opt Options) (*Store, error) {
	if opt.HeartbeatGrace <= 0 {
		opt.HeartbeatGrace = time.Minute
	}
	if opt.MaxConns <= 0 {
		opt.MaxConns = 4
	}
	if opt.Worker == "" {
		opt.Worker = storage.NewWorkerID()
	}
	if opt.RetryTimeout <= 0 {
		opt.RetryTimeout = 30 * time.Second
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cfg.MaxConns = opt.MaxConns
	cfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool, opt: opt, studies: map[string]*study{}, origin: originOf(cfg.ConnConfig)}
	if err := s.retry(ctx, "create or migrate the schema", func() error { return migrate(ctx, pool) }); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close implements storage.Storage: it closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Worker returns the worker id written with this store's heartbeats
// (Options.Worker): the id to put in the Worker field of its asks.
func (s *Store) Worker() string { return s.opt.Worker }

// Pool returns the store's connection pool (for tests and tools).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// permanent marks an error that retrying cannot cure.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// connectionError reports whether a retryable error is the server's
// absence (no PostgreSQL error code: the connection failed; or a server
// shutting down, starting or full), not the serialization failures and
// deadlocks of concurrent transactions.
func connectionError(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code != "40001" && pe.Code != "40P01"
	}
	return true
}

// retryable reports whether err may go away on a new attempt: a
// serialization failure, a deadlock, a server shutting down or starting,
// too many connections, or a connection error (no PostgreSQL error code).
func retryable(err error) bool {
	var p permanent
	if errors.As(err, &p) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "57P01", "57P02", "57P03", "53300":
			return true
		}
		return len(pe.Code) == 5 && pe.Code[:2] == "08"
	}
	return true
}

// retry runs op until it succeeds, fails for good, ctx ends or
// Options.RetryTimeout passes, with jittered exponential back-off. A
// permanent error is returned as op made it; others are wrapped with what
// op was doing.
func (s *Store) retry(ctx context.Context, what string, op func() error) error {
	deadline := time.Now().Add(s.opt.RetryTimeout)
	wait := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil {
			return nil
		}
		if p, ok := errors.AsType[permanent](err); ok {
			return p.err
		}
		if !retryable(err) || ctx.Err() != nil {
			return fmt.Errorf("postgres: %s: %w", what, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres: %s: %w (gave up after %d attempts in %v)", what, err, attempt, s.opt.RetryTimeout)
		}
		if attempt == 1 && connectionError(err) {
			if f := storage.RetryNoticeFrom(ctx); f != nil {
				f(what, err, time.Until(deadline).Round(time.Second))
			}
		}
		t := time.NewTimer(wait/2 + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("postgres: %s: %w (while retrying: %w)", what, err, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// schemaLock is the advisory lock key under which the schema is migrated
// ("bkb" in ASCII).
const schemaLock = 0x626b62

// migrations[i] takes the schema from version i to i+1. Never edit one
// that was released: append a new one.
var migrations = []string{
	`CREATE TABLE bkb_studies (
		id      bigserial PRIMARY KEY,
		name    text NOT NULL UNIQUE,
		config  json NOT NULL,
		created timestamptz NOT NULL DEFAULT statement_timestamp()
	);
	CREATE TABLE bkb_records (
		study_id bigint NOT NULL REFERENCES bkb_studies (id) ON DELETE CASCADE,
		seq      integer NOT NULL,
		kind     text NOT NULL CHECK (kind IN ('ask', 'tell', 'fail', 'enqueue')),
		trial    integer NOT NULL,
		arm      integer NOT NULL,
		x        float8[] NOT NULL,
		y        float8,
		error    text NOT NULL DEFAULT '',
		params   json,
		worker   text NOT NULL DEFAULT '',
		time     timestamptz NOT NULL,
		time_ns  smallint NOT NULL DEFAULT 0,
		seconds  float8 NOT NULL DEFAULT 0,
		stored   timestamptz NOT NULL DEFAULT statement_timestamp(),
		PRIMARY KEY (study_id, seq)
	);
	COMMENT ON COLUMN bkb_records.time_ns IS 'nanoseconds of the record time below the microsecond, so that copies are exact';
	COMMENT ON COLUMN bkb_records.stored IS 'when the record was stored, on the database clock (stale trials)';
	CREATE INDEX bkb_records_trial ON bkb_records (study_id, trial);
	CREATE TABLE bkb_heartbeats (
		study_id bigint NOT NULL REFERENCES bkb_studies (id) ON DELETE CASCADE,
		trial    integer NOT NULL,
		worker   text NOT NULL,
		last     timestamptz NOT NULL DEFAULT statement_timestamp(),
		PRIMARY KEY (study_id, trial)
	);`,
	// 2: the newest engine snapshot of each study (storage.Snapshots).
	`CREATE TABLE bkb_snapshots (
		study_id bigint PRIMARY KEY REFERENCES bkb_studies (id) ON DELETE CASCADE,
		records  integer NOT NULL,
		digest   bytea NOT NULL,
		meta     bytea NOT NULL,
		data     bytea NOT NULL,
		saved    timestamptz NOT NULL DEFAULT statement_timestamp()
	);`,
	// 3: the values of several objectives and the constraint values of a
	// tell (storage.Record.Values and Constraints), NULL when absent.
	`ALTER TABLE bkb_records ADD COLUMN objective_values float8[], ADD COLUMN constraint_values float8[];`,
	// 4: intermediate values (report) and pruned trials (prune), with
	// the step of a report.
	`ALTER TABLE bkb_records DROP CONSTRAINT bkb_records_kind_check;
	ALTER TABLE bkb_records ADD CONSTRAINT bkb_records_kind_check
		CHECK (kind IN ('ask', 'tell', 'fail', 'enqueue', 'report', 'prune'));
	ALTER TABLE bkb_records ADD COLUMN step integer NOT NULL DEFAULT 0;`,
	// 5: snapshots are stored out of line without a compression attempt:
	// their float64 tables do not compress, and on a study of 10,000
	// trials (a 39 MB snapshot) the attempt made a save a third slower.
	`ALTER TABLE bkb_snapshots ALTER COLUMN data SET STORAGE EXTERNAL;`,
	// 6: snapshots in content-defined chunks (internal/cdc), so that a
	// save writes the chunks that changed, not the whole snapshot:
	// bkb_snapshots.chunks holds the data's CRC-32C and its chunk list
	// (cdc.Ref: ID, length, CRC-32C), data is then empty, and
	// bkb_snapshot_chunks the chunks by ID (column hash).
	`CREATE TABLE bkb_snapshot_chunks (
		study_id bigint NOT NULL REFERENCES bkb_studies (id) ON DELETE CASCADE,
		hash     bytea NOT NULL,
		data     bytea NOT NULL,
		PRIMARY KEY (study_id, hash)
	);
	ALTER TABLE bkb_snapshot_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
	ALTER TABLE bkb_snapshots ADD COLUMN chunks bytea;`,
}

// SchemaVersion is the schema version this package creates.
var SchemaVersion = len(migrations)

// migrate creates or updates the schema in one transaction under an
// advisory lock, so that workers opening a new database at once wait for
// the first one.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS bkb_schema_version (version integer NOT NULL)`); err != nil {
			return err
		}
		var v int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM bkb_schema_version`).Scan(&v); err != nil {
			return err
		}
		if v > len(migrations) {
			return permanent{fmt.Errorf("postgres: the database has schema version %d, newer than this program's %d: use a newer bkb", v, len(migrations))}
		}
		if v == len(migrations) {
			return nil
		}
		for i := v; i < len(migrations); i++ {
			if _, err := tx.Exec(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migration to version %d: %w", i+1, err)
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM bkb_schema_version`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO bkb_schema_version (version) VALUES ($1)`, len(migrations))
		return err
	})
}

// CreateStudy implements storage.Storage.
func (s *Store) CreateStudy(ctx context.Context, name string, config json.RawMessage) (storage.Header, error) {
	if len(config) == 0 {
		config = json.RawMessage("null")
	}
	if !json.Valid(config) {
		return storage.Header{}, fmt.Errorf("postgres: create study %q: the configuration is not valid JSON", name)
	}
	h := storage.Header{Version: storage.Version, Name: name, Config: slices.Clone(config)}
	err := s.retry(ctx, "create study "+strconv.Quote(name), func() error {
		err := s.pool.QueryRow(ctx, `INSERT INTO bkb_studies (name, config) VALUES ($1, $2)
			ON CONFLICT (name) DO NOTHING RETURNING created`, name, string(config)).Scan(&h.Created)
		if errors.Is(err, pgx.ErrNoRows) {
			return permanent{fmt.Errorf("postgres: create study %q: %w", name, storage.ErrExists)}
		}
		return err
	})
	if err != nil {
		return storage.Header{}, err
	}
	h.Created = h.Created.UTC()
	return h, nil
}

func notFound(name string) error {
	return permanent{fmt.Errorf("postgres: study %q: %w", name, storage.ErrNotFound)}
}

// Study implements storage.Storage.
func (s *Store) Study(ctx context.Context, name string) (storage.Header, error) {
	h := storage.Header{Version: storage.Version, Name: name}
	var config string
	err := s.retry(ctx, "study "+strconv.Quote(name), func() error {
		err := s.pool.QueryRow(ctx, `SELECT config::text, created FROM bkb_studies WHERE name = $1`, name).Scan(&config, &h.Created)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(name)
		}
		return err
	})
	if err != nil {
		return storage.Header{}, err
	}
	h.Config = json.RawMessage(config)
	h.Created = h.Created.UTC()
	return h, nil
}

const recordColumns = `kind, trial, arm, x, y, error, params::text, worker, time, time_ns, seconds, objective_values, constraint_values, step`

// readRecords reads the records of study id from seq from on, in order.
func readRecords(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, id int64, from int) ([]storage.Record, error) {
	rows, err := q.Query(ctx, `SELECT `+recordColumns+` FROM bkb_records WHERE study_id = $1 AND seq >= $2 ORDER BY seq`, id, from)
	if err != nil {
		return nil, err
	}
	var out []storage.Record
	var (
		r      storage.Record
		params *string
		ns     int16
	)
	_, err = pgx.ForEachRow(rows, []any{&r.Kind, &r.Trial, &r.Arm, &r.X, &r.Y, &r.Error, &params, &r.Worker, &r.Time, &ns, &r.Seconds, &r.Values, &r.Constraints, &r.Step}, func() error {
		rec := r
		rec.Time = rec.Time.Add(time.Duration(ns)).UTC()
		if params != nil {
			rec.Params = json.RawMessage(*params)
		}
		out = append(out, rec)
		r, params = storage.Record{}, nil
		return nil
	})
	return out, err
}

// Records implements storage.Storage: one query, in the order of the
// records, without locks (PostgreSQL shows it a committed snapshot, so it
// never sees part of an Update).
func (s *Store) Records(ctx context.Context, name string, from int) ([]storage.Record, error) {
	var out []storage.Record
	err := s.retry(ctx, "records of study "+strconv.Quote(name), func() error {
		return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			var (
				id      int64
				created time.Time
			)
			err := tx.QueryRow(ctx, `SELECT id, created FROM bkb_studies WHERE name = $1`, name).Scan(&id, &created)
			if errors.Is(err, pgx.ErrNoRows) {
				return notFound(name)
			}
			if err != nil {
				return err
			}
			if from <= 0 {
				out, err = s.recordsThroughCache(ctx, tx, name, id, created)
			} else {
				out, err = readRecords(ctx, tx, id, from)
			}
			if err == nil && from <= 0 {
				st := s.study(name)
				st.readMu.Lock()
				st.readID, st.read = id, out
				st.readMu.Unlock()
			}
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return slices.Clone(out), nil
}

// recordsThroughCache reads every record of study id (created at
// created), those the local cache holds from the cache: from the
// database it reads the records from the last cached one on, and uses
// the cache only if that one reads back as cached.
func (s *Store) recordsThroughCache(ctx context.Context, tx pgx.Tx, name string, id int64, created time.Time) ([]storage.Record, error) {
	dir := s.CacheDir(name)
	cached := cachedRecords(dir, id, created)
	var out []storage.Record
	read := 0 // records read from the database
	if n := len(cached); n > 0 {
		recs, err := readRecords(ctx, tx, id, n-1)
		if err != nil {
			return nil, err
		}
		if len(recs) > 0 && sameRecord(recs[0], cached[n-1]) {
			out = append(cached[:n], recs[1:]...) // within the cache's spare capacity, usually
			read = len(recs) - 1
		} else {
			cached = nil
		}
	}
	if out == nil {
		var err error
		if out, err = readRecords(ctx, tx, id, 0); err != nil {
			return nil, err
		}
		read = len(out)
	}
	if dir != "" && read >= cacheMinRecords && read >= len(cached)/8 {
		writeCachedRecords(dir, id, created, out)
	}
	return out, nil
}

// Heartbeat implements storage.Storage: it sets the heartbeat time of the
// trials to the database's clock.
func (s *Store) Heartbeat(ctx context.Context, name string, trials []int) error {
	if len(trials) == 0 {
		return nil
	}
	t32 := make([]int32, len(trials))
	for i, t := range trials {
		t32[i] = int32(t)
	}
	return s.retry(ctx, "heartbeat in study "+strconv.Quote(name), func() error {
		tag, err := s.pool.Exec(ctx, `INSERT INTO bkb_heartbeats (study_id, trial, worker, last)
			SELECT s.id, t, $3, statement_timestamp() FROM bkb_studies s, unnest($2::integer[]) t WHERE s.name = $1
			ON CONFLICT (study_id, trial) DO UPDATE SET worker = excluded.worker, last = excluded.last`, name, t32, s.opt.Worker)
		if err == nil && tag.RowsAffected() == 0 {
			return notFound(name)
		}
		return err
	})
}

func (s *Store) study(name string) *study {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.studies[name]
	if !ok {
		st = &study{id: -1, ledger: storage.NewLedger()}
		s.studies[name] = st
	}
	return st
}

// attempt is an Update's insert whose commit may have been lost with the
// connection.
type attempt struct {
	seq    int
	add    []storage.Record
	result []storage.Record
}

// Update implements storage.Storage; see the package documentation.
func (s *Store) Update(ctx context.Context, name string, from int, fn func(storage.View) ([]storage.Record, error)) ([]storage.Record, error) {
	st := s.study(name)
	st.mu.Lock()
	defer st.mu.Unlock()
	var (
		result []storage.Record
		sent   *attempt // the last attempt's insert, if its commit failed
	)
	err := s.retry(ctx, "update study "+strconv.Quote(name), func() error {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		var id int64
		err = tx.QueryRow(ctx, `SELECT id FROM bkb_studies WHERE name = $1 FOR NO KEY UPDATE`, name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(name)
		}
		if err != nil {
			return err
		}
		if id != st.id { // first use, or the study was dropped and created again
			st.id, st.ledger, sent = id, storage.NewLedger(), nil
		}
		// Records read under the lock are committed: they join the
		// ledger whatever becomes of this transaction. So do those a
		// Records call read (committed too, from the first), read again
		// only from where they end.
		st.readMu.Lock()
		if st.readID == id && len(st.read) > st.ledger.Len() {
			if err := st.ledger.Adopt(st.read[st.ledger.Len():]); err != nil {
				st.id = -1
				st.read = nil
				st.readMu.Unlock()
				return permanent{fmt.Errorf("postgres: study %q: stored records: %w", name, err)}
			}
		}
		st.read = nil
		st.readMu.Unlock()
		recs, err := readRecords(ctx, tx, id, st.ledger.Len())
		if err != nil {
			return err
		}
		if err := st.ledger.Add(recs...); err != nil {
			st.id = -1 // read everything again next time
			return permanent{fmt.Errorf("postgres: study %q: stored records: %w", name, err)}
		}
		if sent != nil {
			if landed(st.ledger, sent) {
				result = sent.result
				return nil
			}
			sent = nil
		}
		stale, err := staleTrials(ctx, tx, id, st.ledger.Pending(), s.opt.HeartbeatGrace)
		if err != nil {
			return err
		}
		from := min(max(from, 0), st.ledger.Len())
		out, err := fn(storage.View{From: from, New: st.ledger.Records(from), Stale: stale})
		if err != nil {
			return permanent{err}
		}
		seq := st.ledger.Len()
		add, res, err := st.ledger.Admit(out, time.Now())
		if err != nil {
			return permanent{fmt.Errorf("postgres: study %q: %w", name, err)}
		}
		// The ledger holds add until they are committed: a failure below
		// takes them back, and the next attempt reads what was stored.
		defer st.ledger.Rollback()
		if len(add) == 0 {
			st.ledger.Commit()
			result = res
			return nil
		}
		if err := insert(ctx, tx, id, seq, add); err != nil {
			return err
		}
		a := &attempt{seq: seq, add: add, result: res}
		if err := tx.Commit(ctx); err != nil {
			sent = a
			return err
		}
		st.ledger.Commit()
		result = res
		return nil
	})
	if err != nil {
		return nil, err
	}
	return result, nil
}

// landed reports whether the records of a commit that returned an error
// are stored after all (the connection was lost after the server
// committed): l, just read back, holds them at their sequence numbers.
func landed(l *storage.Ledger, a *attempt) bool {
	if l.Len() < a.seq+len(a.add) {
		return false
	}
	got := l.Records(a.seq)[:len(a.add)]
	for i := range got {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(a.add[i])
		if string(g) != string(w) {
			return false
		}
	}
	return true
}

// insert stores recs as the study's records seq, seq+1, ..., and drops the
// heartbeats of the trials they complete, in one round trip.
func insert(ctx context.Context, tx pgx.Tx, id int64, seq int, recs []storage.Record) error {
	b := &pgx.Batch{}
	var done []int32
	for i, r := range recs {
		var params any
		if len(r.Params) > 0 {
			params = string(r.Params)
		}
		b.Queue(`INSERT INTO bkb_records (study_id, seq, kind, trial, arm, x, y, error, params, worker, time, time_ns, seconds,
			objective_values, constraint_values, step)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::json, $10, $11, $12, $13, $14, $15, $16)`,
			id, seq+i, r.Kind, r.Trial, r.Arm, r.X, r.Y, r.Error, params, r.Worker, r.Time, int16(r.Time.Nanosecond()%1000), r.Seconds,
			r.Values, r.Constraints, r.Step)
		if r.Kind == storage.KindTell || r.Kind == storage.KindFail || r.Kind == storage.KindPrune {
			done = append(done, int32(r.Trial))
		}
	}
	if len(done) > 0 {
		b.Queue(`DELETE FROM bkb_heartbeats WHERE study_id = $1 AND trial = ANY($2)`, id, done)
	}
	return tx.SendBatch(ctx, b).Close()
}

// staleTrials returns, in increasing order, the pending trials whose last
// sign of life (the later of their last heartbeat and the storing of their
// latest ask) is older than grace on the database's clock: a trial re-asked
// after its worker stopped belongs to its new worker from that moment, and
// is not stale before that worker has had a grace period to heartbeat.
// Time the server was down does not count: after a restart every trial
// has a grace period from the server's start to heartbeat again (its
// worker could not heartbeat during the outage; it has not stopped).
func staleTrials(ctx context.Context, tx pgx.Tx, id int64, pending []storage.Record, grace time.Duration) ([]int, error) {
	if len(pending) == 0 {
		return nil, nil
	}
	trials := make([]int32, len(pending))
	for i, r := range pending {
		trials[i] = int32(r.Trial)
	}
	rows, err := tx.Query(ctx, `SELECT r.trial FROM bkb_records r
		LEFT JOIN bkb_heartbeats h ON h.study_id = r.study_id AND h.trial = r.trial
		WHERE r.study_id = $1 AND r.kind = 'ask' AND r.trial = ANY($2)
		GROUP BY r.trial, h.last
		HAVING greatest(h.last, max(r.stored), pg_postmaster_start_time()) < statement_timestamp() - make_interval(secs => $3)
		ORDER BY r.trial`, id, trials, grace.Seconds())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int])
}

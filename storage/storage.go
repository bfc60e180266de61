package storage

import (
	"context"
	"encoding/json"
	"errors"
)

// Storage holds the events of optimization studies, for one process or for
// many processes on many machines. A study is a header (its configuration,
// opaque to the storage) and an append-only sequence of records. Every
// suggestion a worker makes is computed from the records alone, inside
// [Storage.Update], so that any number of workers share one study without
// duplicate trial numbers and every worker's state is a replay of the same
// sequence (Optuna's journal-storage design, with the lock held while the
// suggestion is computed).
//
// Implementations: [JournalStore] (a JSON-lines file: the embedded default, one
// machine, any number of processes), [Memory] (one process, no
// durability) and the postgres subpackage (many machines).
type Storage interface {
	// CreateStudy creates the study name with the given configuration and
	// returns its header. It fails with an error wrapping ErrExists if the
	// study exists.
	CreateStudy(ctx context.Context, name string, config json.RawMessage) (Header, error)
	// Study returns the header of the study name, or an error wrapping
	// ErrNotFound.
	Study(ctx context.Context, name string) (Header, error)
	// Records returns the study's records from index from on (0: all), in
	// the order they were appended: a bulk read that takes no lock. The
	// slice is the caller's (the storage keeps no reference to it).
	Records(ctx context.Context, name string, from int) ([]Record, error)
	// Update runs fn with the study locked against every other Update, from
	// this or any other process, and appends the records fn returns,
	// durably and all or none, before the lock is released. fn receives the
	// records from index from on (the ones the caller has not seen yet) and
	// the pending trials whose worker has stopped (see View.Stale). Update
	// validates the returned records against the study's records (see
	// Summarize) and returns them, with Time set, as appended. A tell or
	// fail equal (in every field but Time) to the stored completion of its
	// trial is accepted as a no-op, so that a worker may retry a tell whose
	// outcome it did not learn (a lost connection): the stored record is
	// returned in its place; a different second completion is an error.
	// fn may be called more than once (a storage retries it after a
	// serialization failure); it must not have effects outside the records
	// it returns until Update returns nil.
	Update(ctx context.Context, name string, from int, fn func(View) ([]Record, error)) ([]Record, error)
	// Heartbeat records, on the storage's clock, that the given running
	// trials of this worker are alive.
	Heartbeat(ctx context.Context, name string, trials []int) error
	// Close releases the storage's resources.
	Close() error
}

// View is what Update shows its function.
type View struct {
	// From is the index of New[0] in the study's records.
	From int
	// New holds the study's records from index From on.
	New []Record
	// Stale lists, in increasing order, the pending trials whose worker
	// stopped: its heartbeat is older than the storage's grace period on
	// the storage's clock, or ([JournalStore]) its process is gone. The caller
	// decides what becomes of them: a fail record, and optionally an
	// enqueue record of the same point to evaluate it again.
	Stale []int
}

var (
	// ErrExists is returned by CreateStudy for a study that exists.
	ErrExists = errors.New("study exists")
	// ErrNotFound is returned for a study that does not exist.
	ErrNotFound = errors.New("no such study")
)

package serve

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/bkb-go/bkb/storage"
	"github.com/bkb-go/bkb/study"
)

// leased is the server's storage: the storage itself, whose View.Stale
// also lists the trials this server handed out whose client stopped
// heartbeating them for longer than the grace. A storage sees the server
// as one worker, alive while its process is (a journal) or while it
// heartbeats (PostgreSQL); the clients behind it are what may vanish.
// After a restart the leases are empty, and for one grace period no
// trial is stale: the clients of the previous server heartbeat this one,
// which renews their leases; then the journal finds the previous
// server's trials stale (its process is gone) and PostgreSQL those whose
// clients stopped heartbeating (see stale, lease.go).
type leased struct {
	storage.Storage
	grace time.Duration
	now   func() time.Time
	// worker is the server's worker id, start its start.
	worker string
	start  time.Time

	mu   sync.Mutex
	last map[string]map[int]time.Time // study -> trial -> last sign of life
	// loaded holds when each study was first loaded (see Records).
	loaded map[string]time.Time
	// owners holds the worker of each pending trial of the records read
	// (study -> trial -> worker): the first grace period spares only the
	// trials a server handed out (see stale).
	owners map[string]map[int]string
}

func newLeased(st storage.Storage, grace time.Duration, now func() time.Time, worker string) *leased {
	return &leased{Storage: st, grace: grace, now: now, worker: worker, start: now(), last: map[string]map[int]time.Time{}, loaded: map[string]time.Time{},
		owners: map[string]map[int]string{}}
}

// serverMark begins the nonce of a server's worker id (serverWorkerID).
const serverMark = "serve-"

// serverWorkerID marks a worker id as a server's: its nonce (what follows
// the last ':' of storage.NewWorkerID's "host:pid:nonce") begins with
// serverMark, so that the next server tells the trials this one handed
// out (whose clients may still heartbeat the next one) from those of a
// program that stopped (which nobody evaluates any more). The journal
// still finds the server's process from it (storage.ParseWorkerID reads
// host and pid). An id already marked is returned as it is.
func serverWorkerID(id string) string {
	if isServerWorker(id) {
		return id
	}
	i := strings.LastIndexByte(id, ':')
	return id[:i+1] + serverMark + id[i+1:]
}

// isServerWorker reports whether a worker id is a server's
// (serverWorkerID).
func isServerWorker(id string) bool {
	i := strings.LastIndexByte(id, ':')
	return i >= 0 && strings.HasPrefix(id[i+1:], serverMark)
}

// renew records a sign of life of the client of a trial.
func (l *leased) renew(name string, trial int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.last[name]
	if m == nil {
		m = map[int]time.Time{}
		l.last[name] = m
	}
	m[trial] = l.now()
}

// drop ends the lease of a completed trial.
func (l *leased) drop(name string, trial int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last[name], trial)
}

// forget drops the leases of a study.
func (l *leased) forget(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, name)
	delete(l.loaded, name)
	delete(l.owners, name)
}

// expired returns the trials of a study whose lease ran out; their leases
// stay, expired, until the trial is handed out again (which renews the
// lease), completed or asked by another worker (see observe).
func (l *leased) expired(name string) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []int
	now := l.now()
	for t, last := range l.last[name] {
		if now.Sub(last) > l.grace {
			out = append(out, t)
		}
	}
	return out
}

// Unwrap returns the storage the leases wrap: its snapshots, catalog and
// attributes are the server's (storage.As).
func (l *leased) Unwrap() storage.Storage { return l.Storage }

// Update implements storage.Storage: View.Stale is the storage's stale
// trials less those with a live lease here (none in the server's first
// grace period), plus those whose lease ran out (see stale). A stale
// trial the study no longer has pending is ignored by the study.
func (l *leased) Update(ctx context.Context, name string, from int, fn func(storage.View) ([]storage.Record, error)) ([]storage.Record, error) {
	return l.Storage.Update(ctx, name, from, func(v storage.View) ([]storage.Record, error) {
		l.observe(name, v.New)
		v.Stale = l.stale(name, v.Stale)
		return fn(v)
	})
}

// slice is the GP's prediction along a parameter (see study.Slice).
func slice(st *study.Study, param string, points int) (study.Slice, error) {
	if param == "" {
		return study.Slice{}, badf("missing ?param=NAME")
	}
	sl, err := st.Slice(param, points)
	if err != nil && !isNoTrial(err) {
		return sl, badRequest{err}
	}
	return sl, err
}

package storage

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// OpenOptions are the options of OpenLocation that a storage kind may read.
type OpenOptions struct {
	// HeartbeatGrace is how long a pending trial may go without a
	// heartbeat before it is stale (storages that heartbeat; 0: theirs).
	HeartbeatGrace time.Duration
	// CacheDir is a directory on this machine where a storage reached
	// over the network may keep what it read (storage/postgres: a
	// study's records and snapshot chunks), so that the next process
	// reads only what changed; "" for none. Journals ignore it: their
	// records cache lies beside the journal (RecordCachePath).
	CacheDir string
}

// A kind is a storage that Open can open from a location.
type kind struct {
	match func(location string) bool
	open  func(ctx context.Context, location string, opt OpenOptions) (Storage, error)
}

var (
	kindsMu sync.RWMutex
	kinds   = map[string]kind{}
)

// Register makes a storage kind openable by OpenLocation, in the manner of
// database/sql's drivers: match reports whether a location is one of its
// (a URL scheme, a connection string), open opens it. The postgres
// subpackage registers "postgres" when it is imported. Register panics
// if name is registered twice, as sql.Register does: it is called from
// init functions.
func Register(name string, match func(location string) bool, open func(ctx context.Context, location string, opt OpenOptions) (Storage, error)) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[name]; dup {
		panic("storage: Register called twice for " + name)
	}
	kinds[name] = kind{match, open}
}

// Kinds returns the names of the registered storage kinds, sorted.
func Kinds() []string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	return sortedKinds()
}

// Match returns the registered kind whose match accepts location, "" for
// none (a journal file).
func Match(location string) string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	for _, name := range sortedKinds() {
		if kinds[name].match(location) {
			return name
		}
	}
	return ""
}

func sortedKinds() []string {
	out := make([]string, 0, len(kinds))
	for name := range kinds {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// OpenLocation opens the storage at location: the registered kind that accepts
// it (a PostgreSQL URL once storage/postgres is imported), else the
// journal file at that path.
func OpenLocation(ctx context.Context, location string, opt OpenOptions) (Storage, error) {
	if name := Match(location); name != "" {
		kindsMu.RLock()
		k := kinds[name]
		kindsMu.RUnlock()
		return k.open(ctx, location, opt)
	}
	if location == "" {
		return nil, fmt.Errorf("storage: no location given")
	}
	return OpenJournalStore(location, JournalStoreOptions{})
}

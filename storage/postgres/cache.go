package postgres

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bkb-go/bkb/internal/cdc"
	"github.com/bkb-go/bkb/storage"
)

// The local cache (Options.CacheDir): per study, a directory named by a
// SHA-256 of the tables' origin (originOf: no password) and the study's
// name, holding
//
//   - records: the study's records in the records cache's binary form
//     (storage.MarshalRecordCache) under the study's id and creation
//     time. The records of a study are append-only under its id, so a
//     command reads from the database only the records from the last
//     cached one on, and uses the cache only if that one reads back
//     equal (a study dropped and created again has another id).
//   - chunks/ID: the snapshot chunks by their IDs. A chunk's bytes never
//     change under its ID (a save writes changed data under new random
//     IDs), and each is checked against the length and CRC-32C of the
//     snapshot's list before use.
//
// Files are written to a temporary name and renamed, so that processes
// on one machine may share the directory; what one removes another
// reads from the database again. Errors writing the cache are ignored:
// a cache that cannot be written makes the next command slower, not
// wrong. It is written by hand because no library keeps a validated
// content cache of this shape: a generic HTTP or key/value cache would
// trust what it holds.

// cacheMinRecords: a read that took at least this many records from the
// database, and at least an eighth of those the cache held, writes the
// records cache again (storage's rule for a journal's cache), so that
// its bytes over a study's life stay within a few times its size.
const cacheMinRecords = 1024

// originOf names the tables that a connection reaches, for the names of
// the cache's directories (hashed): its host, port, database, user (a
// role may have its own search_path) and run-time parameters (a
// search_path names another set of tables), never the password.
func originOf(c *pgx.ConnConfig) string {
	keys := slices.Sorted(maps.Keys(c.RuntimeParams))
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d/%s\x00%s", c.Host, c.Port, c.Database, c.User)
	for _, k := range keys {
		if k != "application_name" {
			fmt.Fprintf(&b, "\x00%s=%s", k, c.RuntimeParams[k])
		}
	}
	return b.String()
}

// CacheDir returns the directory of the local cache (Options.CacheDir)
// in which the store keeps what it read of study name, "" without a
// cache.
func (s *Store) CacheDir(name string) string {
	if s.opt.CacheDir == "" {
		return ""
	}
	h := sha256.Sum256([]byte(s.origin + "\x00" + name))
	return filepath.Join(s.opt.CacheDir, "postgres", hex.EncodeToString(h[:16]))
}

// cacheKey names the records of study id created at created.
func cacheKey(id int64, created time.Time) storage.RecordCacheKey {
	return storage.RecordCacheKey{Off: id, Lines: int(max(created.UnixMicro(), 1))}
}

// cachedRecords returns the records cached for study id created at
// created, nil if none.
func cachedRecords(dir string, id int64, created time.Time) []storage.Record {
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "records"))
	if err != nil {
		return nil
	}
	key, recs, err := storage.UnmarshalRecordCache(b)
	if err != nil || key != cacheKey(id, created) {
		return nil
	}
	return recs
}

// sameRecord reports whether a record read from the database equals the
// cached one at its place.
func sameRecord(read, cached storage.Record) bool { return reflect.DeepEqual(read, cached) }

// writeCachedRecords caches recs as the records of study id created at
// created.
func writeCachedRecords(dir string, id int64, created time.Time, recs []storage.Record) {
	b, ok := storage.MarshalRecordCache(cacheKey(id, created), recs)
	if ok {
		writeCacheFile(dir, "records", b)
	}
}

// writeCacheFile writes dir/name through a temporary file and a rename.
func writeCacheFile(dir, name string, data []byte) bool {
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
		return false
	}
	f, err := os.CreateTemp(filepath.Dir(filepath.Join(dir, name)), ".tmp-*")
	if err != nil {
		return false
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err == nil
}

func chunkName(id cdc.ID) string { return filepath.Join("chunks", hex.EncodeToString(id[:])) }

// cachedChunkFits reports whether the cache holds a regular file of
// chunk r's length (its bytes are checked when it is read).
func cachedChunkFits(dir string, r cdc.Ref) bool {
	fi, err := os.Lstat(filepath.Join(dir, chunkName(r.ID)))
	return err == nil && fi.Mode().IsRegular() && fi.Size() == int64(r.Len)
}

// readCachedChunk reads the cached chunk of r into dst (len(dst) =
// r.Len) and reports whether it was there whole and undamaged.
func readCachedChunk(dir string, r cdc.Ref, dst []byte) bool {
	f, err := os.Open(filepath.Join(dir, chunkName(r.ID)))
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := io.ReadFull(f, dst); err != nil {
		return false
	}
	var one [1]byte
	if n, _ := f.Read(one[:]); n != 0 {
		return false // longer than listed
	}
	return crc32.Checksum(dst, cdc.Castagnoli) == r.Sum
}

// pruneChunks removes the cached chunks that none of lists names and
// that were written before before (a file written since may be a newer
// snapshot's, which a process reads now), and temporary files older than
// a minute (of writers that were killed).
func pruneChunks(dir string, before time.Time, lists ...[]cdc.Ref) {
	keep := map[string]bool{}
	for _, refs := range lists {
		for _, r := range refs {
			keep[filepath.Base(chunkName(r.ID))] = true
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "chunks"))
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if keep[name] {
			continue
		}
		limit := before
		if strings.HasPrefix(name, ".tmp-") {
			limit = time.Now().Add(-time.Minute)
		}
		if info, err := e.Info(); err != nil || !info.ModTime().Before(limit) {
			continue
		}
		os.Remove(filepath.Join(dir, "chunks", name))
	}
}

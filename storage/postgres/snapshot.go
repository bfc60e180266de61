package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bkb-go/bkb/internal/cdc"
	"github.com/bkb-go/bkb/storage"
)

// snapshotLock is the class of the advisory locks that serialize the
// saves of one study's snapshot (the study's id is the object).
const snapshotLock = 0x626b63

// SaveSnapshot implements storage.Snapshots. The snapshot is cut into
// content-defined chunks (internal/cdc) kept in bkb_snapshot_chunks; one
// transaction inserts the chunks that differ from the previous
// snapshot's, replaces the study's row of bkb_snapshots (whose chunks
// column holds the data's CRC-32C and the chunk list) and deletes the
// chunks no longer listed, so a reader sees the old snapshot or the new
// one, and a save writes what changed: on a 10,000-trial study an ask
// changes about 2 MB of a 43 MB snapshot, where the whole row was
// rewritten before (docs/long-studies.md). Saves of one study are
// serialized by an advisory lock, so that one never deletes a chunk
// another is about to list. A snapshot is never required for
// correctness, so a study deleted meanwhile is not an error the caller
// must handle differently from any other.
func (s *Store) SaveSnapshot(ctx context.Context, name string, snap storage.Snapshot) error {
	return s.WriteSnapshot(ctx, name, snap, func(w io.Writer) error {
		// The Splitter cuts the data in place (Write would copy it).
		_, err := w.(*cdc.Splitter).WritePrefix(snap.Data, true)
		return err
	})
}

// WriteSnapshot implements storage.SnapshotStreams, as SaveSnapshot: the
// data is cut into chunks as encode writes it, within the transaction
// and under the study's lock, against the list it replaces (so the
// chunks of that list are all stored), and only the new chunks are held
// until the transaction stores them. A transaction retried after a
// transient failure calls encode again: a study's encoder writes the
// same data each time.
func (s *Store) WriteSnapshot(ctx context.Context, name string, snap storage.Snapshot, encode func(io.Writer) error) error {
	start := time.Now()
	dir := s.CacheDir(name)
	var (
		chunks, prev []cdc.Ref         // as saved, and the list replaced
		held         map[cdc.ID][]byte // the new chunks, and those the local cache lacks
	)
	err := s.retry(ctx, "save the snapshot of study "+strconv.Quote(name), func() error {
		chunks, prev, held = nil, nil, map[cdc.ID][]byte{}
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var id int64
			err := tx.QueryRow(ctx, `SELECT id FROM bkb_studies WHERE name = $1`, name).Scan(&id)
			if errors.Is(err, pgx.ErrNoRows) {
				return permanent{notFound(name)}
			}
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, int32(snapshotLock), int32(id)); err != nil {
				return err
			}
			var old []byte
			err = tx.QueryRow(ctx, `SELECT chunks FROM bkb_snapshots WHERE study_id = $1`, id).Scan(&old)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			if len(old) >= 4 {
				prev, _ = cdc.ParseRefs(old[4:])
			}
			sp := cdc.NewSplitter(prev, func(c cdc.Ref) error {
				if _, ok := held[c.ID]; !ok && (c.New || dir != "" && !cachedChunkFits(dir, c)) {
					held[c.ID] = bytes.Clone(c.Data)
				}
				c.Data = nil // valid during this call only
				chunks = append(chunks, c)
				return nil
			})
			if err := encode(sp); err != nil {
				return permanent{err}
			}
			if err := sp.Close(); err != nil {
				return permanent{err}
			}
			// The data's CRC-32C, from its chunks'.
			list := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+cdc.RefSize*len(chunks)), cdc.Sum(chunks))
			ids := make([][]byte, len(chunks))
			for i, c := range chunks {
				list = cdc.AppendRef(list, c)
				ids[i] = list[4+cdc.RefSize*i : 4+cdc.RefSize*i+len(c.ID)]
			}
			// The chunks listed before are stored already, unless lost.
			have := map[cdc.ID]bool{}
			rows, err := tx.Query(ctx, `SELECT hash FROM bkb_snapshot_chunks WHERE study_id = $1 AND hash = ANY($2)`, id, ids)
			if err != nil {
				return err
			}
			for rows.Next() {
				var h []byte
				if err := rows.Scan(&h); err != nil {
					rows.Close()
					return err
				}
				if len(h) == len(cdc.ID{}) {
					have[cdc.ID(h)] = true
				}
			}
			if err := rows.Err(); err != nil {
				return err
			}
			// The chunks to store go by COPY, which pgx streams in small
			// messages: a batch of INSERTs is encoded whole first, and
			// the client's buffer grew to several times the chunks
			// (11.7 MB allocated per ask of a 10,000-trial study for
			// 2.8 MB of chunks).
			var add [][]any
			for i, c := range chunks {
				if have[c.ID] {
					continue
				}
				have[c.ID] = true // a chunk twice in one snapshot is inserted once
				d, ok := held[c.ID]
				if !ok {
					// Listed before but lost: from the local cache.
					d = make([]byte, c.Len)
					if dir == "" || !readCachedChunk(dir, c, d) {
						return permanent{fmt.Errorf("postgres: study %q: a chunk of its snapshot is lost from the database: this one is not saved", name)}
					}
				}
				add = append(add, []any{id, ids[i], d})
			}
			if len(add) > 0 {
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{"bkb_snapshot_chunks"}, []string{"study_id", "hash", "data"}, pgx.CopyFromRows(add)); err != nil {
					return err
				}
			}
			var b pgx.Batch
			b.Queue(`INSERT INTO bkb_snapshots (study_id, records, digest, meta, data, chunks)
				VALUES ($1, $2, $3, $4, '', $5)
				ON CONFLICT (study_id) DO UPDATE SET records = EXCLUDED.records, digest = EXCLUDED.digest,
					meta = EXCLUDED.meta, data = '', chunks = EXCLUDED.chunks, saved = statement_timestamp()`,
				id, snap.Records, snap.Digest[:], snap.Meta, list)
			b.Queue(`DELETE FROM bkb_snapshot_chunks WHERE study_id = $1 AND NOT (hash = ANY($2))`, id, ids)
			return tx.SendBatch(ctx, &b).Close()
		})
	})
	if dir != "" && err == nil {
		// The next process reads this snapshot from the local cache:
		// the chunks it does not hold are written. Those of the list
		// replaced stay for the processes reading it now, and so do
		// files written since this save began (a later save's).
		for id, d := range held {
			writeCacheFile(dir, chunkName(id), d)
		}
		pruneChunks(dir, start, chunks, prev)
	}
	return err
}

// LoadSnapshot implements storage.Snapshots: without data, the study's
// row; with data, the snapshot OpenSnapshot opens, read whole.
func (s *Store) LoadSnapshot(ctx context.Context, name string, withData bool) (storage.Snapshot, error) {
	if withData {
		return storage.ReadSnapshot(ctx, s, name)
	}
	var snap storage.Snapshot
	err := s.retry(ctx, "load the snapshot of study "+strconv.Quote(name), func() error {
		var digest []byte
		err := s.pool.QueryRow(ctx, `SELECT n.records, n.digest, n.meta FROM bkb_snapshots n JOIN bkb_studies s ON s.id = n.study_id WHERE s.name = $1`,
			name).Scan(&snap.Records, &digest, &snap.Meta)
		if errors.Is(err, pgx.ErrNoRows) {
			return permanent{storage.ErrNoSnapshot}
		}
		if err != nil {
			return err
		}
		return setDigest(&snap, name, digest)
	})
	return snap, err
}

// OpenSnapshot implements storage.SnapshotStreams: the study's row, read
// with the chunks the local cache (Options.CacheDir) lacks in one
// repeatable-read transaction (the chunks of the row read, whatever saves
// commit meanwhile), each checked against its length and CRC-32C and
// written to the cache. The data is then read from the cache's files;
// chunks not written there (no cache) are held in memory.
func (s *Store) OpenSnapshot(ctx context.Context, name string) (storage.Snapshot, storage.SnapshotData, error) {
	var (
		snap storage.Snapshot
		data storage.SnapshotData
	)
	err := s.retry(ctx, "open the snapshot of study "+strconv.Quote(name), func() error {
		snap, data = storage.Snapshot{}, nil
		return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			var (
				id                    int64
				digest, whole, chunks []byte
			)
			q := `SELECT n.study_id, n.records, n.digest, n.meta, n.data, n.chunks
				FROM bkb_snapshots n JOIN bkb_studies s ON s.id = n.study_id WHERE s.name = $1`
			err := tx.QueryRow(ctx, q, name).Scan(&id, &snap.Records, &digest, &snap.Meta, &whole, &chunks)
			if errors.Is(err, pgx.ErrNoRows) {
				return permanent{storage.ErrNoSnapshot}
			}
			if err != nil {
				return err
			}
			if err := setDigest(&snap, name, digest); err != nil {
				return err
			}
			if chunks == nil {
				data = storage.BytesData(whole) // a snapshot saved whole (schema 5)
				return nil
			}
			bad := func(what string) error {
				return permanent{fmt.Errorf("postgres: study %q: snapshot %s", name, what)}
			}
			if len(chunks) < 4 {
				return bad("chunk list truncated")
			}
			refs, ok := cdc.ParseRefs(chunks[4:])
			if !ok {
				return bad("chunk list damaged")
			}
			dir := s.CacheDir(name)
			var (
				ids     [][]byte
				missing []int // indexes in refs of the chunks to read
			)
			for i, r := range refs {
				if dir == "" || !cachedChunkFits(dir, r) {
					ids = append(ids, r.ID[:])
					missing = append(missing, i)
				}
			}
			mem := map[cdc.ID][]byte{}
			if len(missing) > 0 {
				rows, err := tx.Query(ctx, `SELECT c.data FROM unnest($2::bytea[]) WITH ORDINALITY AS u(hash, i)
					LEFT JOIN bkb_snapshot_chunks c ON c.study_id = $1 AND c.hash = u.hash ORDER BY u.i`, id, ids)
				if err != nil {
					return err
				}
				k := 0
				for rows.Next() {
					raw := rows.RawValues()
					if k >= len(missing) || len(raw) != 1 {
						rows.Close()
						return bad("chunk list disagrees with the chunks read")
					}
					r := refs[missing[k]]
					d := raw[0]
					if d == nil {
						rows.Close()
						return bad("chunk missing")
					}
					if len(d) != int(r.Len) || crc32.Checksum(d, cdc.Castagnoli) != r.Sum {
						rows.Close()
						return bad("chunk damaged (checksum mismatch)")
					}
					// The connection's buffer is reused by the next row.
					if dir == "" || !writeCacheFile(dir, chunkName(r.ID), d) {
						mem[r.ID] = bytes.Clone(d)
					}
					k++
				}
				if err := rows.Err(); err != nil {
					return err
				}
				if k != len(missing) {
					return bad("chunk missing")
				}
			}
			cd, err := storage.NewChunkData(name, refs, binary.LittleEndian.Uint32(chunks), func(id cdc.ID) string {
				return filepath.Join(dir, chunkName(id))
			}, mem)
			if err != nil {
				return permanent{err}
			}
			if dir != "" {
				// Files a minute old that this list does not name are
				// an older snapshot's (a newer one's are fresh).
				pruneChunks(dir, time.Now().Add(-time.Minute), refs)
			}
			data = cd
			return nil
		})
	})
	return snap, data, err
}

// setDigest sets snap's digest from the column read, which must be one.
func setDigest(snap *storage.Snapshot, name string, digest []byte) error {
	if len(digest) != len(snap.Digest) {
		return permanent{fmt.Errorf("postgres: study %q: snapshot digest of %d bytes", name, len(digest))}
	}
	copy(snap.Digest[:], digest)
	return nil
}

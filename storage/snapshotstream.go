package storage

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/bkb-go/bkb/internal/cdc"
)

// SnapshotStreams is implemented by the storages that read and write a
// snapshot's data in pieces ([JournalStore], [Dir], the postgres
// subpackage), so that a study never holds the data whole: a snapshot of
// a 10,000-trial study is 43 MB, which a command held once more beside
// the tables decoded from it, and the kernel's page faults for that
// memory were about a fifth of the command's CPU (docs/long-studies.md).
type SnapshotStreams interface {
	// OpenSnapshot returns the study's snapshot without its Data, and
	// its data, or an error wrapping ErrNoSnapshot. The data stays
	// readable while at most one other save replaces the snapshot.
	OpenSnapshot(ctx context.Context, name string) (Snapshot, SnapshotData, error)
	// WriteSnapshot replaces the study's snapshot with s (whose Data is
	// not read) and the data that encode writes, atomically as
	// SaveSnapshot does. encode's error is returned, and the snapshot is
	// then not replaced. A storage that retries a transient failure
	// calls encode again: it must write the same data each time.
	WriteSnapshot(ctx context.Context, name string, s Snapshot, encode func(io.Writer) error) error
}

// SnapshotData is a snapshot's data, read in pieces.
type SnapshotData interface {
	// Size is the data's length in bytes.
	Size() int64
	// Pieces returns a function that returns the data's pieces in order,
	// each valid until the following call, then io.EOF. A piece that is
	// missing or damaged is an error wrapping ErrSnapshotPiece (open the
	// snapshot again). Each call of Pieces reads the data from its start.
	Pieces() func() ([]byte, error)
}

// ErrSnapshotPiece is wrapped by the errors of a piece of SnapshotData
// that could not be read: missing (a save removed it) or damaged (and
// removed). The snapshot opened again reads it from its storage anew.
var ErrSnapshotPiece = errors.New("storage: a piece of the snapshot could not be read")

// BytesData is a SnapshotData held whole: a snapshot of an older layout,
// or one a storage had to read into memory.
type BytesData []byte

// Size implements SnapshotData.
func (b BytesData) Size() int64 { return int64(len(b)) }

// Pieces implements SnapshotData.
func (b BytesData) Pieces() func() ([]byte, error) {
	done := len(b) == 0
	return func() ([]byte, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		return b, nil
	}
}

// ChunkData is a SnapshotData kept as content-defined chunks
// (internal/cdc), in files named by their IDs or, for those in Mem, in
// memory.
type ChunkData struct {
	Refs []cdc.Ref
	// Path names the file of a chunk.
	Path func(cdc.ID) string
	// Mem holds the chunks read into memory (from a database).
	Mem map[cdc.ID][]byte
}

// NewChunkData returns the data of the chunks refs, whose CRC-32C as a
// whole must be sum, or an error naming the snapshot name.
func NewChunkData(name string, refs []cdc.Ref, sum uint32, path func(cdc.ID) string, mem map[cdc.ID][]byte) (*ChunkData, error) {
	for _, r := range refs {
		if r.Len == 0 || r.Len > cdc.MaxSize {
			return nil, fmt.Errorf("storage: snapshot %s: a chunk of %d bytes listed", name, r.Len)
		}
	}
	// The data's CRC-32C from its chunks' (each checked when read).
	if cdc.Sum(refs) != sum {
		return nil, fmt.Errorf("storage: snapshot %s: checksum mismatch of its chunks (a damaged list)", name)
	}
	return &ChunkData{Refs: refs, Path: path, Mem: mem}, nil
}

// Size implements SnapshotData.
func (c *ChunkData) Size() int64 {
	var n int64
	for _, r := range c.Refs {
		n += int64(r.Len)
	}
	return n
}

// Pieces implements SnapshotData: each chunk read through one buffer and
// checked against its length and CRC-32C. A damaged chunk file is
// removed, so that the next save writes it again (or the next open reads
// it from the database).
func (c *ChunkData) Pieces() func() ([]byte, error) {
	var buf []byte
	i := 0
	return func() ([]byte, error) {
		if i == len(c.Refs) {
			return nil, io.EOF
		}
		r := c.Refs[i]
		i++
		if m, ok := c.Mem[r.ID]; ok {
			return m, nil
		}
		if buf == nil {
			buf = make([]byte, cdc.MaxSize)
		}
		b := buf[:r.Len]
		p := c.Path(r.ID)
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%w: a chunk is missing: %w", ErrSnapshotPiece, err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err == nil && (!fi.Mode().IsRegular() || fi.Size() != int64(r.Len)) {
			err = errors.New("not a chunk of this snapshot")
		}
		if err == nil {
			if _, err = io.ReadFull(f, b); err == nil && crc32.Checksum(b, cdc.Castagnoli) != r.Sum {
				err = errors.New("checksum mismatch (a damaged chunk)")
			}
		}
		if err != nil {
			os.Remove(p)
			return nil, fmt.Errorf("%w: chunk %s: %w", ErrSnapshotPiece, p, err)
		}
		return b, nil
	}
}

// chunkFile is the file of a journal's snapshot chunk.
func chunkFile(dir string) func(cdc.ID) string {
	return func(id cdc.ID) string { return filepath.Join(dir, hex.EncodeToString(id[:])) }
}

// ReadSnapshot reads the study's snapshot whole through ss: OpenSnapshot,
// then its pieces. A piece that a save removed, or a damaged one (which
// is removed as it is read), is read once more from a snapshot opened
// again; if every try fails, the first one's error (which names the
// cause) is returned.
func ReadSnapshot(ctx context.Context, ss SnapshotStreams, name string) (Snapshot, error) {
	var first error
	for range 3 {
		snap, d, err := ss.OpenSnapshot(ctx, name)
		if err != nil {
			return Snapshot{}, err
		}
		if snap.Data, err = ReadData(d); err == nil {
			return snap, nil
		}
		if first == nil {
			first = err
		}
	}
	return Snapshot{}, first
}

// ReadData reads d whole into one buffer, whose spare capacity holds the
// study's next snapshot, a little larger, when it encodes it into this
// buffer.
func ReadData(d SnapshotData) ([]byte, error) {
	n := d.Size()
	buf := make([]byte, 0, n+n/16+1<<16)
	next := d.Pieces()
	for {
		p, err := next()
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		buf = append(buf, p...)
	}
}

package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Snapshot is a saved state of a study's engine, opaque to the storage:
// the state after the study's first Records records, whose chained digest
// is Digest (the study computes and checks both). A snapshot only spares a
// replay: a missing, stale or damaged one costs time, never a result, so
// storages keep the newest one per study and may lose it.
type Snapshot struct {
	Records int
	Digest  [32]byte
	// Meta is a small readable part (the study's summary of its model).
	Meta []byte
	// Data is the state; LoadSnapshot without data leaves it nil.
	Data []byte
}

// ErrNoSnapshot is returned by LoadSnapshot when the study has none.
var ErrNoSnapshot = errors.New("no snapshot")

// Snapshots is implemented by the storages that keep engine snapshots
// beside the records ([JournalStore]: a file beside the journal; the
// postgres subpackage: a table). [Memory] keeps none: its studies live as
// long as their process.
type Snapshots interface {
	// SaveSnapshot replaces the study's snapshot with s, atomically: a
	// reader sees the old one or the new one, never a part. Like
	// io.Writer.Write, it must not retain s.Data once it returns: the
	// study encodes its next snapshot into the same buffer.
	SaveSnapshot(ctx context.Context, name string, s Snapshot) error
	// LoadSnapshot returns the study's snapshot (without Data unless
	// withData), or an error wrapping ErrNoSnapshot.
	LoadSnapshot(ctx context.Context, name string, withData bool) (Snapshot, error)
}

// snapshotMagic starts a snapshot file written whole (layout 1, read
// only); chunkedMagic a snapshot file of layout 2, which lists the
// content-defined chunks (internal/cdc) of the data, kept as files of the
// directory SnapshotChunksPath by their SHA-256.
const (
	snapshotMagic = "BKBSNAP1\n"
	chunkedMagic  = "BKBSNAP2\n"
)

// maxSnapshotMeta bounds the readable part read from a file.
const maxSnapshotMeta = 1 << 24

// SnapshotPath is the file in which a [JournalStore] keeps the snapshot of
// the journal at path.
func SnapshotPath(path string) string { return path + ".snapshot" }

// SnapshotChunksPath is the directory of the chunks of the snapshot of the
// journal at path (layout 2: a save writes the chunks that changed).
func SnapshotChunksPath(path string) string { return path + ".snapshot.chunks" }

// readSnapshotFile reads a snapshot file; without data it reads the head
// only and does not check the CRC.
func readSnapshotFile(f *os.File, withData bool) (Snapshot, error) {
	bad := func(what string) (Snapshot, error) {
		return Snapshot{}, fmt.Errorf("storage: snapshot %s: %s", f.Name(), what)
	}
	var all []byte
	var r io.Reader = f
	if withData {
		st, err := f.Stat()
		if err != nil {
			return Snapshot{}, err
		}
		// One buffer of the file's size, one byte more to show a file
		// that grew: io.ReadAll would grow its own from 512 bytes,
		// copying and clearing a 40 MB snapshot's bytes about twice over,
		// and bytes.Buffer.Grow clears what it allocates, where a fresh
		// large allocation is already zero. The capacity beyond holds the
		// study's next snapshot, a little larger, when it encodes it into
		// this buffer (study.Study.spare).
		buf := make([]byte, st.Size()+1, st.Size()+1+st.Size()/16+1<<16)
		n, err := io.ReadFull(f, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return Snapshot{}, err
		}
		all = buf[:n]
		if len(all) < len(snapshotMagic)+4 {
			return bad("truncated")
		}
		body := all[:len(all)-4]
		if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != binary.LittleEndian.Uint32(all[len(all)-4:]) {
			return bad("checksum mismatch (a damaged or partly written file)")
		}
		r = bytes.NewReader(body)
	}
	head := make([]byte, len(snapshotMagic)+8)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:len(snapshotMagic)]) != snapshotMagic {
		return bad("not a bkb snapshot of this layout")
	}
	n := binary.LittleEndian.Uint64(head[len(snapshotMagic):])
	if n > maxSnapshotMeta {
		return bad("oversized")
	}
	var s Snapshot
	s.Meta = make([]byte, n)
	rest := make([]byte, 8+32+8)
	if _, err := io.ReadFull(r, s.Meta); err != nil {
		return bad("truncated")
	}
	if _, err := io.ReadFull(r, rest); err != nil {
		return bad("truncated")
	}
	rec := binary.LittleEndian.Uint64(rest)
	if rec > 1<<40 {
		return bad("record count out of range")
	}
	s.Records = int(rec)
	copy(s.Digest[:], rest[8:40])
	if withData {
		n := binary.LittleEndian.Uint64(rest[40:])
		br := r.(*bytes.Reader)
		if n != uint64(br.Len()) {
			return bad("data length disagrees with the file")
		}
		s.Data = all[len(all)-4-int(n) : len(all)-4]
	}
	return s, nil
}

// writeFileVia writes the parts to path through a new file named after
// base (tempPrefix(base), in base's directory, on path's file system),
// renamed over path: a reader sees the old file or the new one. An
// existing path that is not a regular file (a link, a directory, a
// device) is refused, so the write never follows a link onto a user's
// file. Its mode is 0666 less the umask. It is not synced: a snapshot
// lost in a crash is replaced by a replay, and a damaged one fails its
// checksum.
func writeFileVia(base, path string, parts [][]byte) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("storage: %s exists and is not a regular file: no snapshot written", path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	tmp := fmt.Sprintf("%s%d-%s", tempPrefix(base), os.Getpid(), hex.EncodeToString(nonce[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	var werr error
	for _, b := range parts {
		if _, werr = f.Write(b); werr != nil {
			break
		}
	}
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if f := beforeRename; f != nil {
		f(tmp)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// SaveSnapshot implements [Snapshots]: the file SnapshotPath(path) (a
// journal holds one study, whatever name says). It takes none of the
// store's locks: a study saves and loads its snapshot while it holds
// them (within Update).
func (s *JournalStore) SaveSnapshot(_ context.Context, _ string, snap Snapshot) error {
	return saveChunked(s.path, snap)
}

// LoadSnapshot implements [Snapshots], without locks (see SaveSnapshot):
// with data, the snapshot OpenSnapshot opens, read whole.
func (s *JournalStore) LoadSnapshot(ctx context.Context, name string, withData bool) (Snapshot, error) {
	if withData {
		return ReadSnapshot(ctx, s, name)
	}
	snap, _, err := s.openSnapshot(false)
	return snap, err
}

// WriteSnapshot implements [SnapshotStreams], without locks (see
// SaveSnapshot).
func (s *JournalStore) WriteSnapshot(_ context.Context, _ string, snap Snapshot, encode func(io.Writer) error) error {
	return writeChunked(s.path, snap, encode)
}

// OpenSnapshot implements [SnapshotStreams], without locks (see
// SaveSnapshot).
func (s *JournalStore) OpenSnapshot(_ context.Context, _ string) (Snapshot, SnapshotData, error) {
	return s.openSnapshot(true)
}

// openSnapshot reads the snapshot file's head and, with data, returns
// its data: layout 2's chunks, or the data of a layout 1 file (written
// whole by older builds), read whole.
func (s *JournalStore) openSnapshot(withData bool) (Snapshot, SnapshotData, error) {
	p := SnapshotPath(s.path)
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Snapshot{}, nil, ErrNoSnapshot
	}
	if err != nil {
		return Snapshot{}, nil, err
	}
	if !fi.Mode().IsRegular() {
		return Snapshot{}, nil, fmt.Errorf("storage: %s is not a regular file", p)
	}
	f, err := os.Open(p)
	if err != nil {
		return Snapshot{}, nil, err
	}
	defer f.Close()
	magic := make([]byte, len(chunkedMagic))
	if _, err := io.ReadFull(f, magic); err == nil && string(magic) == chunkedMagic {
		// Layout 2: the list (small) whole; the chunks as they are read.
		rest, err := io.ReadAll(io.LimitReader(f, 1<<30))
		if err != nil {
			return Snapshot{}, nil, err
		}
		l, err := decodeChunkList(p, append(magic, rest...))
		if err != nil || !withData {
			return l.snap, nil, err
		}
		cd, err := NewChunkData(p, l.refs, l.sum, chunkFile(SnapshotChunksPath(s.path)), nil)
		if err != nil {
			return Snapshot{}, nil, err
		}
		return l.snap, cd, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Snapshot{}, nil, err
	}
	snap, err := readSnapshotFile(f, withData)
	if err != nil || !withData {
		return snap, nil, err
	}
	data := snap.Data
	snap.Data = nil
	return snap, BytesData(data), nil
}

// beforeRename, when set (StopSnapshotWritesForTest), is called with a
// snapshot file's temporary path once its bytes are written, before the
// rename that would publish them.
var beforeRename func(tmp string)

// StopSnapshotWritesForTest makes every write of a snapshot file (a chunk
// or the list) call f with its temporary file, written and not yet
// renamed, and returns the function that undoes it. For tests: f can stop
// the writer there, so that a test kills a process in the middle of a
// save at a known point instead of racing it.
func StopSnapshotWritesForTest(f func(tmp string)) (restore func()) {
	prev := beforeRename
	beforeRename = f
	return func() { beforeRename = prev }
}

// tempPrefix is the start of the names of the temporary files that
// writeFileVia writes for path: ".NAME.tmp-PID-NONCE" beside it.
func tempPrefix(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
}

// removeDeadTemps removes the temporary files left beside path by writers
// that were killed (their process is gone).
func removeDeadTemps(path string) {
	prefix := tempPrefix(path)
	matches, _ := filepath.Glob(prefix + "*")
	for _, m := range matches {
		var pid int
		var nonce string
		if n, _ := fmt.Sscanf(strings.TrimPrefix(m, prefix), "%d-%s", &pid, &nonce); n == 2 && pid > 0 && processGone(pid) {
			if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() {
				os.Remove(m)
			}
		}
	}
}

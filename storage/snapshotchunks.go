package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bkb-go/bkb/internal/cdc"
)

// A snapshot of layout 2 is a small file, SnapshotPath, that lists the
// content-defined chunks of its data (internal/cdc), and the chunks, one
// file per chunk named by its ID in hexadecimal, in the directory
// SnapshotChunksPath. A save writes the chunks that differ from the
// previous list's (cdc.Split), then the list (through a new file renamed
// over the old: a reader sees the old list or the new one), then removes
// the chunks that neither the new list nor the one it replaced names. On a 10,000-trial study an ask
// changes about 2 MB of a 43 MB snapshot: the whole file was rewritten
// before (docs/long-studies.md).
//
// The list file: chunkedMagic, the meta's length and bytes, Records,
// Digest, the data's length and CRC-32C, the number of chunks and their
// refs (cdc.AppendRef), then the CRC-32C of all that.

var castagnoli = cdc.Castagnoli

// encodeChunkList lays out the list file of s cut into chunks.
func encodeChunkList(s Snapshot, size int64, chunks []cdc.Ref) []byte {
	b := make([]byte, 0, len(chunkedMagic)+len(s.Meta)+80+cdc.RefSize*len(chunks))
	b = append(b, chunkedMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s.Meta)))
	b = append(b, s.Meta...)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Records))
	b = append(b, s.Digest[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(size))
	b = binary.LittleEndian.AppendUint32(b, cdc.Sum(chunks)) // the data's CRC-32C
	b = binary.LittleEndian.AppendUint64(b, uint64(len(chunks)))
	for _, c := range chunks {
		b = cdc.AppendRef(b, c)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// chunkList is a decoded list file.
type chunkList struct {
	snap Snapshot // without Data
	size uint64   // the data's length
	sum  uint32   // and CRC-32C
	refs []cdc.Ref
}

// decodeChunkList reads a list file's bytes (name for errors).
func decodeChunkList(name string, b []byte) (chunkList, error) {
	bad := func(what string) (chunkList, error) {
		return chunkList{}, fmt.Errorf("storage: snapshot %s: %s", name, what)
	}
	if len(b) < len(chunkedMagic)+4 || string(b[:len(chunkedMagic)]) != chunkedMagic {
		return bad("not a bkb snapshot of this layout")
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return bad("checksum mismatch (a damaged or partly written file)")
	}
	r := bytes.NewReader(body[len(chunkedMagic):])
	u64 := func() (uint64, bool) {
		var v [8]byte
		_, err := io.ReadFull(r, v[:])
		return binary.LittleEndian.Uint64(v[:]), err == nil
	}
	var l chunkList
	n, ok := u64()
	if !ok || n > uint64(r.Len()) {
		return bad("truncated")
	}
	l.snap.Meta = make([]byte, n)
	io.ReadFull(r, l.snap.Meta)
	rec, ok := u64()
	if !ok || rec > 1<<40 {
		return bad("record count out of range")
	}
	l.snap.Records = int(rec)
	if _, err := io.ReadFull(r, l.snap.Digest[:]); err != nil {
		return bad("truncated")
	}
	if l.size, ok = u64(); !ok {
		return bad("truncated")
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return bad("truncated")
	}
	l.sum = binary.LittleEndian.Uint32(sum[:])
	k, ok := u64()
	rest := body[len(body)-r.Len():]
	if !ok || k != uint64(len(rest))/cdc.RefSize {
		return bad("chunk list disagrees with the file")
	}
	if l.refs, ok = cdc.ParseRefs(rest); !ok {
		return bad("chunk list disagrees with the file")
	}
	var total uint64
	for _, c := range l.refs {
		total += uint64(c.Len)
	}
	if total != l.size {
		return bad("chunk lengths disagree with the data's")
	}
	return l, nil
}

// readRegular reads the regular file at p (a link, a directory or a
// device is refused), at most max bytes.
func readRegular(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, fmt.Errorf("storage: %s is not a regular file of at most %d bytes", p, max)
	}
	b := make([]byte, fi.Size())
	_, err = io.ReadFull(f, b)
	return b, err
}

// saveChunked saves s as the snapshot of the journal at path (layout 2).
func saveChunked(path string, s Snapshot) error {
	return writeChunked(path, s, func(w io.Writer) error {
		// The Splitter cuts the data in place (Write would copy it).
		_, err := w.(*cdc.Splitter).WritePrefix(s.Data, true)
		return err
	})
}

// writeChunked saves s, with the data encode writes, as the snapshot of
// the journal at path (layout 2): the chunks cut as the data comes, the
// new ones written at once, then the list.
func writeChunked(path string, s Snapshot, encode func(io.Writer) error) error {
	list, dir := SnapshotPath(path), SnapshotChunksPath(path)
	if fi, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	} else if err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("storage: %s exists and is not a directory: no snapshot written", dir)
	}
	// One save at a time: a save removes the chunks no list names, which
	// would include another's before its list is written.
	unlock, err := lockSnapshotDir(dir)
	if err != nil {
		return fmt.Errorf("storage: snapshot %s: %w", list, err)
	}
	defer unlock()
	// The chunks the list being replaced names are kept for the readers
	// that read it just before; its refs find the chunks that did not
	// change.
	var prev []cdc.Ref
	keep := map[string]bool{}
	if b, err := readRegular(list, 1<<30); err == nil {
		if l, err := decodeChunkList(list, b); err == nil {
			prev = l.refs
			for _, c := range prev {
				keep[hex.EncodeToString(c.ID[:])] = true
			}
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for _, e := range ents {
		if e.Type().IsRegular() {
			have[e.Name()] = true
		}
	}
	removeDeadTemps(list)
	var chunks []cdc.Ref
	sp := cdc.NewSplitter(prev, func(c cdc.Ref) error {
		name := hex.EncodeToString(c.ID[:])
		keep[name] = true
		if !have[name] { // else a chunk of the previous list (or of this one, twice)
			if err := writeFileVia(list, filepath.Join(dir, name), [][]byte{c.Data}); err != nil {
				return err
			}
			have[name] = true
		}
		c.Data = nil // valid during this call only
		chunks = append(chunks, c)
		return nil
	})
	if err := encode(sp); err != nil {
		return err
	}
	if err := sp.Close(); err != nil {
		return err
	}
	var size int64
	for _, c := range chunks {
		size += int64(c.Len)
	}
	if err := writeFileVia(list, list, [][]byte{encodeChunkList(s, size, chunks)}); err != nil {
		return err
	}
	for name := range have {
		if !keep[name] && isChunkName(name) {
			os.Remove(filepath.Join(dir, name))
		}
	}
	return nil
}

// isChunkName reports whether name is a chunk's: 32 lower-case
// hexadecimal digits (nothing else in the directory is removed).
func isChunkName(name string) bool {
	if len(name) != 2*len(cdc.ID{}) {
		return false
	}
	for _, c := range name {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

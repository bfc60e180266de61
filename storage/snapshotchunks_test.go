package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chunkBytes is the bytes of the chunk files in dir.
func chunkBytes(t *testing.T, dir string) (files int, size int64) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		files++
		size += fi.Size()
	}
	return files, size
}

// TestSnapshotChunked: a journal's snapshot is a list file and chunk
// files; a save after a small change writes the changed chunks only
// (under a fifth of the snapshot's bytes), loads return the newest
// snapshot byte for byte, chunks neither the newest nor the one before
// names are removed, a snapshot of layout 1 (saved whole by earlier
// builds) still loads, and a damaged or missing chunk is an
// error that names the problem, never a wrong snapshot.
func TestSnapshotChunked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	js, err := OpenJournalStore(path, JournalStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	rng := rand.New(rand.NewPCG(8, 8))
	version := func(base []byte, at int) []byte {
		b := append(append(append([]byte(nil), base[:at]...), "one more record"...), base[at:]...)
		for i := len(b) - 3000; i < len(b); i++ {
			b[i] ^= 0x33
		}
		return b
	}
	a := make([]byte, 5<<20)
	for i := range a {
		a[i] = byte(rng.Uint32())
	}
	saves := [][]byte{a, version(a, 1<<20), nil, nil}
	saves[2] = version(saves[1], 3<<20)
	saves[3] = version(saves[2], 2<<20)
	chunks := SnapshotChunksPath(path)
	var written []int64
	for i, data := range saves {
		var had map[string]bool
		if i > 0 {
			had = map[string]bool{}
			ents, _ := os.ReadDir(chunks)
			for _, e := range ents {
				had[e.Name()] = true
			}
		}
		if err := js.SaveSnapshot(ctx, "s", Snapshot{Records: i + 1, Meta: []byte(`{"m":1}`), Data: data}); err != nil {
			t.Fatal(err)
		}
		var w int64
		ents, err := os.ReadDir(chunks)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !had[e.Name()] {
				fi, _ := e.Info()
				w += fi.Size()
			}
		}
		written = append(written, w)
		got, err := js.LoadSnapshot(ctx, "s", true)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, data) || got.Records != i+1 || string(got.Meta) != `{"m":1}` {
			t.Fatalf("save %d: loaded %d bytes, records %d, meta %s", i, len(got.Data), got.Records, got.Meta)
		}
	}
	t.Logf("chunk bytes written by each save: %v (snapshots of %d bytes)", written, len(a))
	for i, w := range written[1:] {
		if w > int64(len(a))/5 {
			t.Errorf("save %d after a small change wrote %d bytes of chunks", i+1, w)
		}
	}
	// Only the chunks of the last two snapshots are kept.
	files, size := chunkBytes(t, chunks)
	if size > int64(len(saves[3]))+2*int64(written[3]) || files == 0 {
		t.Errorf("%d chunk files of %d bytes kept after 4 saves of about %d bytes", files, size, len(a))
	}

	// Layout 1, saved whole by earlier builds, still loads.
	old := encodeSnapshotFile(Snapshot{Records: 9, Meta: []byte(`{}`), Data: a})
	if err := writeFileVia(SnapshotPath(path), SnapshotPath(path), old); err != nil {
		t.Fatal(err)
	}
	if got, err := js.LoadSnapshot(ctx, "s", true); err != nil || !bytes.Equal(got.Data, a) || got.Records != 9 {
		t.Fatalf("a snapshot of layout 1: %v", err)
	}
	if err := js.SaveSnapshot(ctx, "s", Snapshot{Records: 10, Meta: []byte(`{}`), Data: saves[3]}); err != nil {
		t.Fatal(err)
	}

	// Damage: a flipped byte in a chunk, a chunk missing.
	ents, _ := os.ReadDir(chunks)
	first := filepath.Join(chunks, ents[0].Name())
	orig, _ := os.ReadFile(first)
	flipped := append([]byte(nil), orig...)
	flipped[len(flipped)/2] ^= 1
	for _, c := range []struct {
		name, want string
		do         func()
	}{
		{"flipped", "checksum mismatch", func() { os.WriteFile(first, flipped, 0o600) }},
		{"missing", "missing", func() { os.Remove(first) }},
	} {
		c.do()
		_, err := js.LoadSnapshot(ctx, "s", true)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s chunk: %v, want an error naming %q", c.name, err, c.want)
		}
		os.Remove(first)
		os.WriteFile(first, orig, 0o600)
	}
	// One save at a time: while another process holds the directory's
	// lock, a save is refused with ErrLocked (the study skips it) and
	// leaves the snapshot as it was.
	if unlock, err := lockSnapshotDir(chunks); err == nil {
		err := js.SaveSnapshot(ctx, "s", Snapshot{Records: 12, Meta: []byte(`{}`), Data: a})
		unlock()
		if !errors.Is(err, ErrLocked) {
			t.Errorf("a save while another holds the lock: %v, want ErrLocked", err)
		}
		if got, err := js.LoadSnapshot(ctx, "s", false); err != nil || got.Records != 10 {
			t.Errorf("after a refused save the snapshot covers %d records (%v), want 10", got.Records, err)
		}
	} else {
		t.Fatal(err)
	}
	// A link in place of the chunk directory is refused, not followed.
	elsewhere := t.TempDir()
	os.RemoveAll(chunks)
	if err := os.Symlink(elsewhere, chunks); err != nil {
		t.Fatal(err)
	}
	if err := js.SaveSnapshot(ctx, "s", Snapshot{Records: 11, Meta: []byte(`{}`), Data: a}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("save with the chunk directory a link: %v", err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("a save wrote %d files through a link", len(ents))
	}
}

// encodeSnapshotFile lays s out as a file of layout 1, the layout earlier
// builds wrote (this build reads it and writes layout 2), in parts so that the data (tens
// of MB) is not copied: magic, the meta's length and bytes, Records,
// Digest, the data's length, the data, then the CRC-32C of all that.
func encodeSnapshotFile(s Snapshot) [][]byte {
	head := make([]byte, 0, len(snapshotMagic)+len(s.Meta)+64)
	head = append(head, snapshotMagic...)
	head = binary.LittleEndian.AppendUint64(head, uint64(len(s.Meta)))
	head = append(head, s.Meta...)
	head = binary.LittleEndian.AppendUint64(head, uint64(s.Records))
	head = append(head, s.Digest[:]...)
	head = binary.LittleEndian.AppendUint64(head, uint64(len(s.Data)))
	table := crc32.MakeTable(crc32.Castagnoli)
	sum := crc32.Update(crc32.Checksum(head, table), table, s.Data)
	return [][]byte{head, s.Data, binary.LittleEndian.AppendUint32(nil, sum)}
}

package storagetest

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// writeIn returns an encode function that writes b in writes of random
// sizes (the study's encoder writes blocks of about a megabyte).
func writeIn(b []byte, seed uint64) func(io.Writer) error {
	return func(w io.Writer) error {
		rng := rand.New(rand.NewPCG(seed, 1))
		for len(b) > 0 {
			n := min(len(b), 1+rng.IntN(1<<20))
			if _, err := w.Write(b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
}

// RunSnapshotStreams checks a storage's SnapshotStreams against its
// Snapshots: data written in parts reads back whole either way; an
// encoder's error replaces nothing; and data opened before one save
// still reads as it was, before two reads as it was or fails as missing,
// never as other bytes. Each store of b holds a study "s".
func RunSnapshotStreams(t *testing.T, b Backend) {
	rng := rand.New(rand.NewPCG(11, 12))
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	// The next states change a few places, as an ask changes a snapshot.
	edit := func(b []byte, at int) []byte {
		out := bytes.Clone(b)
		for i := range 2000 {
			out[at+i] ^= 0x5a
		}
		return out
	}
	open := func(t *testing.T) (storage.Snapshots, storage.SnapshotStreams) {
		st := b.New(t)()
		if _, err := st.CreateStudy(bg, "s", nil); err != nil {
			t.Fatal(err)
		}
		sn, ok1 := storage.As[storage.Snapshots](st)
		ss, ok2 := storage.As[storage.SnapshotStreams](st)
		if !ok1 || !ok2 {
			t.Fatalf("%T keeps no snapshots, or not in pieces", st)
		}
		return sn, ss
	}
	check := func(t *testing.T, ss storage.SnapshotStreams, sn storage.Snapshots, want storage.Snapshot, data []byte) {
		t.Helper()
		got, d, err := ss.OpenSnapshot(bg, "s")
		if err != nil {
			t.Fatal(err)
		}
		for k := range 2 { // each call of Pieces reads from the start
			b, err := storage.ReadData(d)
			if err != nil || d.Size() != int64(len(data)) || !bytes.Equal(b, data) {
				t.Fatalf("read %d: %d bytes of %d (Size %d), equal %v, error %v", k, len(b), len(data), d.Size(), bytes.Equal(b, data), err)
			}
		}
		if got.Records != want.Records || got.Digest != want.Digest || !bytes.Equal(got.Meta, want.Meta) || got.Data != nil {
			t.Fatalf("OpenSnapshot: %d records, meta %q, %d data bytes; want %d, %q, none", got.Records, got.Meta, len(got.Data), want.Records, want.Meta)
		}
		whole, err := sn.LoadSnapshot(bg, "s", true)
		if err != nil || !bytes.Equal(whole.Data, data) {
			t.Fatalf("LoadSnapshot: %d bytes of %d, error %v", len(whole.Data), len(data), err)
		}
	}
	t.Run("RoundTrip", func(t *testing.T) {
		sn, ss := open(t)
		if _, _, err := ss.OpenSnapshot(bg, "s"); !errors.Is(err, storage.ErrNoSnapshot) {
			t.Fatalf("OpenSnapshot of a study without one: %v, want ErrNoSnapshot", err)
		}
		s1 := storage.Snapshot{Records: 3, Digest: [32]byte{1}, Meta: []byte(`{"a":1}`)}
		if err := ss.WriteSnapshot(bg, "s", s1, writeIn(data, 1)); err != nil {
			t.Fatal(err)
		}
		check(t, ss, sn, s1, data)
		// Saved whole, read in pieces, and again in parts.
		s2 := storage.Snapshot{Records: 5, Digest: [32]byte{2}, Meta: []byte(`{"a":2}`), Data: edit(data, 1<<20)}
		if err := sn.SaveSnapshot(bg, "s", s2); err != nil {
			t.Fatal(err)
		}
		check(t, ss, sn, s2, s2.Data)
		for _, d := range [][]byte{edit(data, 2<<20), {}, {7}} {
			if err := ss.WriteSnapshot(bg, "s", s1, writeIn(d, 2)); err != nil {
				t.Fatal(err)
			}
			check(t, ss, sn, s1, d)
		}
	})
	t.Run("EncodeError", func(t *testing.T) {
		sn, ss := open(t)
		s1 := storage.Snapshot{Records: 3, Digest: [32]byte{1}, Meta: []byte(`{}`)}
		if err := ss.WriteSnapshot(bg, "s", s1, writeIn(data, 3)); err != nil {
			t.Fatal(err)
		}
		stop := errors.New("the engine cannot encode")
		err := ss.WriteSnapshot(bg, "s", storage.Snapshot{Records: 9}, func(w io.Writer) error {
			if err := writeIn(edit(data, 0)[:2<<20], 4)(w); err != nil {
				return err
			}
			return stop
		})
		if !errors.Is(err, stop) {
			t.Fatalf("WriteSnapshot whose encoder failed: %v, want its error", err)
		}
		check(t, ss, sn, s1, data)
	})
	t.Run("ReaderAcrossSaves", func(t *testing.T) {
		sn, ss := open(t)
		s1 := storage.Snapshot{Records: 3, Digest: [32]byte{1}, Meta: []byte(`{}`)}
		if err := ss.WriteSnapshot(bg, "s", s1, writeIn(data, 5)); err != nil {
			t.Fatal(err)
		}
		_, d, err := ss.OpenSnapshot(bg, "s")
		if err != nil {
			t.Fatal(err)
		}
		if err := ss.WriteSnapshot(bg, "s", s1, writeIn(edit(data, 1<<20), 6)); err != nil {
			t.Fatal(err)
		}
		if got, err := storage.ReadData(d); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("data opened before a save: equal %v, error %v", bytes.Equal(got, data), err)
		}
		if err := sn.SaveSnapshot(bg, "s", storage.Snapshot{Records: 4, Meta: []byte(`{}`), Data: edit(data, 2<<20)}); err != nil {
			t.Fatal(err)
		}
		if got, err := storage.ReadData(d); err != nil && !errors.Is(err, fs.ErrNotExist) || err == nil && !bytes.Equal(got, data) {
			t.Fatalf("data opened before two saves: equal %v, error %v; want the data or an error wrapping fs.ErrNotExist", bytes.Equal(got, data), err)
		}
	})
}

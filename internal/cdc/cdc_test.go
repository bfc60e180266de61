package cdc

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestSplitReassembles: the chunks concatenate to the input and respect
// the size bounds, for empty, short and long inputs, and constant ones
// (where no cut is content-defined: every chunk is MaxSize).
func TestSplitReassembles(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, b := range [][]byte{nil, {7}, randomBytes(rng, MinSize), randomBytes(rng, MinSize+1), randomBytes(rng, 3<<20), make([]byte, 1<<20)} {
		cs := Split(b, nil)
		var joined []byte
		for i, c := range cs {
			if len(c.Data) > MaxSize || (len(c.Data) < MinSize && i < len(cs)-1) {
				t.Fatalf("chunk %d of %d has %d bytes", i, len(cs), len(c.Data))
			}
			joined = append(joined, c.Data...)
		}
		if !bytes.Equal(joined, b) {
			t.Fatalf("the chunks of %d bytes do not reassemble", len(b))
		}
	}
}

// TestSplitSharesUnchanged: after an insertion and an overwrite in a
// 4 MB string, all but a few chunks are shared with the original's (by
// length and CRC-32C), and the bytes in new chunks are a small share: what a store
// keeping chunks by hash writes.
func TestSplitSharesUnchanged(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	a := randomBytes(rng, 4<<20)
	b := append(append(append([]byte(nil), a[:1<<20]...), randomBytes(rng, 100)...), a[1<<20:]...)
	copy(b[3<<20:], randomBytes(rng, 1000))
	newBytes := 0
	for _, c := range Split(b, Split(a, nil)) {
		if c.New {
			newBytes += len(c.Data)
		}
	}
	// Two changes each dirty the chunk they fall in and perhaps the next:
	// at most 4 chunks of at most MaxSize, and in practice about 2 average
	// chunks.
	if newBytes > 4*MaxSize || newBytes == 0 {
		t.Fatalf("%d of %d bytes are in new chunks", newBytes, len(b))
	}
	t.Logf("%d of %d bytes in new chunks", newBytes, len(b))
}

// TestCutsFixed: the cuts of a fixed input never change (stored chunks
// are found by them): the lengths of the first chunks of a seeded input.
func TestCutsFixed(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	b := randomBytes(rng, 1<<20)
	var got []int
	for _, c := range Split(b, nil)[:4] {
		got = append(got, len(c.Data))
	}
	if want := []int{23201, 84359, 17918, 99994}; !slices.Equal(got, want) {
		t.Fatalf("first chunk lengths %v, want %v", got, want)
	}
}

func BenchmarkSplit(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	data := randomBytes(rng, 43<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Split(data, nil)
	}
}

// TestRefsRoundTrip: a list of refs encodes and decodes to itself; a
// list of another length, or with a length out of range, is refused.
func TestRefsRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 5))
	refs := Split(randomBytes(rng, 1<<20), nil)
	var b []byte
	for _, r := range refs {
		b = AppendRef(b, r)
	}
	got, ok := ParseRefs(b)
	if !ok || len(got) != len(refs) {
		t.Fatalf("decoded %d refs (%v), encoded %d", len(got), ok, len(refs))
	}
	for i := range refs {
		if got[i].ID != refs[i].ID || got[i].Len != refs[i].Len || got[i].Sum != refs[i].Sum {
			t.Fatalf("ref %d: %+v, want %+v", i, got[i], refs[i])
		}
	}
	if _, ok := ParseRefs(b[:len(b)-1]); ok {
		t.Error("a truncated list decoded")
	}
	bad := AppendRef(nil, Ref{Len: MaxSize + 1})
	if _, ok := ParseRefs(bad); ok {
		t.Error("a ref longer than MaxSize decoded")
	}
}

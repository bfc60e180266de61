package cdc

import (
	"bytes"
	"errors"
	"hash/crc32"
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

// splitEveryByte is Split as it was before it skipped the chunks of prev:
// Cut over every byte of b. TestSplitSkipsKnownChunks holds Split to it.
func splitEveryByte(b []byte, prev []Ref) []Ref {
	type key struct{ n, sum uint32 }
	known := map[key]bool{}
	for _, r := range prev {
		known[key{r.Len, r.Sum}] = true
	}
	var out []Ref
	for len(b) > 0 {
		n := Cut(b)
		r := Ref{Len: uint32(n), Sum: crc32.Checksum(b[:n], Castagnoli), Data: b[:n]}
		r.New = !known[key{r.Len, r.Sum}]
		known[key{r.Len, r.Sum}] = true
		out = append(out, r)
		b = b[n:]
	}
	return out
}

// TestSplitSkipsKnownChunks: after random edits of a state (an overwrite,
// an insertion, a removal, an append, a truncation, none, several, a
// state of constant bytes cut at MaxSize, a state that shrinks below a
// chunk), Split's chunks have the lengths, CRC-32Cs and New flags of a
// pass of Cut over every byte, and each chunk it did not hash keeps its
// previous ID.
func TestSplitSkipsKnownChunks(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 6))
	edit := func(a []byte, kind int) []byte {
		b := slices.Clone(a)
		at := 0
		if len(b) > 0 {
			at = rng.IntN(len(b))
		}
		switch kind {
		case 0: // overwrite
			copy(b[at:], randomBytes(rng, 1+rng.IntN(5000)))
		case 1: // insert
			b = slices.Insert(b, at, randomBytes(rng, 1+rng.IntN(5000))...)
		case 2: // remove
			b = slices.Delete(b, at, min(len(b), at+1+rng.IntN(5000)))
		case 3: // append
			b = append(b, randomBytes(rng, 1+rng.IntN(300000))...)
		case 4: // truncate
			b = b[:at]
		}
		return b
	}
	cases := 0
	for trial := 0; trial < 60; trial++ {
		var a []byte
		switch trial % 6 {
		case 0:
			a = make([]byte, 2<<20) // constant: every cut at MaxSize
		case 1:
			a = randomBytes(rng, MinSize+rng.IntN(MinSize))
		default:
			a = randomBytes(rng, 1<<20+rng.IntN(2<<20))
		}
		prev := Split(a, nil)
		b := a
		for k := 0; k < 1+trial%4; k++ {
			b = edit(b, rng.IntN(6))
		}
		got, want := Split(b, prev), splitEveryByte(b, prev)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d chunks, a pass over every byte cuts %d", trial, len(got), len(want))
		}
		ids := map[ID]bool{}
		for _, r := range prev {
			ids[r.ID] = true
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Len != w.Len || g.Sum != w.Sum || g.New != w.New || &g.Data[0] != &w.Data[0] {
				t.Fatalf("trial %d chunk %d: len %d sum %x new %v, want len %d sum %x new %v", trial, i, g.Len, g.Sum, g.New, w.Len, w.Sum, w.New)
			}
			if !g.New && !ids[g.ID] {
				t.Fatalf("trial %d chunk %d: an unchanged chunk has an ID the previous state did not list", trial, i)
			}
		}
		// The Splitter, fed in writes of random sizes, cuts the same.
		var streamed []Ref
		sp := NewSplitter(prev, func(r Ref) error {
			r.Data = slices.Clone(r.Data) // valid during emit only
			streamed = append(streamed, r)
			return nil
		})
		for rest := b; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(3*MaxSize))
			if rng.IntN(4) == 0 {
				n = min(len(rest), 1+rng.IntN(100))
			}
			if _, err := sp.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := sp.Close(); err != nil {
			t.Fatal(err)
		}
		// And through WritePrefix, from a buffer that keeps what it
		// does not take (as the snapshot encoder does).
		var prefixed []Ref
		sp = NewSplitter(prev, func(r Ref) error {
			r.Data = slices.Clone(r.Data)
			prefixed = append(prefixed, r)
			return nil
		})
		var buf []byte
		for rest := b; ; {
			n := min(len(rest), 1+rng.IntN(2*MaxSize))
			buf, rest = append(buf, rest[:n]...), rest[n:]
			final := len(rest) == 0
			k, err := sp.WritePrefix(buf, final)
			if err != nil || final && k != len(buf) {
				t.Fatalf("WritePrefix took %d of %d bytes (final %v): %v", k, len(buf), final, err)
			}
			buf = buf[:copy(buf, buf[k:])]
			if final {
				break
			}
		}
		for _, s := range [][]Ref{streamed, prefixed} {
			if len(s) != len(want) {
				t.Fatalf("trial %d: the Splitter cuts %d chunks, a pass over every byte %d", trial, len(s), len(want))
			}
			for i, w := range want {
				g := s[i]
				if g.Len != w.Len || g.Sum != w.Sum || g.New != w.New || !bytes.Equal(g.Data, w.Data) || !g.New && g.ID != got[i].ID {
					t.Fatalf("trial %d chunk %d: the Splitter's len %d sum %x new %v, want len %d sum %x new %v", trial, i, g.Len, g.Sum, g.New, w.Len, w.Sum, w.New)
				}
			}
		}
		cases++
	}
	if cases == 0 {
		t.Fatal("no case ran")
	}
}

// TestSplitterEmitError: emit's first error stops the Splitter and is
// returned by Write or Close.
func TestSplitterEmitError(t *testing.T) {
	t.Parallel()
	b := randomBytes(rand.New(rand.NewPCG(8, 8)), 3<<20)
	stop := errors.New("disk full")
	n := 0
	sp := NewSplitter(nil, func(Ref) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	_, errW := sp.Write(b)
	if errC := sp.Close(); !errors.Is(errW, stop) || !errors.Is(errC, stop) || n != 3 {
		t.Fatalf("Write %v, Close %v after %d chunks: want the emit error after 3", errW, errC, n)
	}
}

// BenchmarkSplit: Split of a 43 MB state on its own (every byte hashed),
// and after an edit like an ask's (a few overwrites, one row of 4 KB
// inserted, and 72 bytes more near the end) against the previous state's
// chunks.
func BenchmarkSplit(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	a := randomBytes(rng, 43<<20)
	prev := Split(a, nil)
	next := slices.Clone(a)
	copy(next[100:], randomBytes(rng, 200))
	copy(next[20<<20:], randomBytes(rng, 8))
	next = slices.Insert(next, 30<<20, randomBytes(rng, 4096)...)
	next = slices.Insert(next, len(next)-5000, randomBytes(rng, 72)...)
	for _, c := range []struct {
		name string
		prev []Ref
	}{{"alone", nil}, {"after an ask", prev}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(next)))
			for b.Loop() {
				Split(next, c.prev)
			}
		})
	}
}

// TestCombine: Combine of two parts' CRC-32Cs is hash/crc32's CRC-32C of
// their concatenation, for empty, short and long parts and every split
// of a short string.
func TestCombine(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	b := randomBytes(rng, 3<<20)
	splits := []int{0, 1, 7, 4096, 1 << 20, len(b) - 1, len(b)}
	for i := 0; i < 300; i++ {
		splits = append(splits, i)
	}
	for _, k := range splits {
		a, c := b[:k], b[k:]
		if i := min(len(c), 300); k < 300 {
			c = c[:i]
		}
		want := crc32.Checksum(append(append([]byte(nil), a...), c...), Castagnoli)
		got := Combine(crc32.Checksum(a, Castagnoli), crc32.Checksum(c, Castagnoli), int64(len(c)))
		if got != want {
			t.Fatalf("split at %d (%d + %d bytes): Combine %08x, CRC-32C of the whole %08x", k, len(a), len(c), got, want)
		}
	}
}

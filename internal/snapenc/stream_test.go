package snapenc

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// encodeAll writes a fixed mix of values, with tables larger than a
// stream writer's block, to w.
func encodeAll(w *Writer, rng *rand.Rand) {
	for k := range 40 {
		w.Int(k - 20)
		w.Bool(k%3 == 0)
		w.Float(rng.NormFloat64())
		n := rng.IntN(4000)
		if k%10 == 0 {
			n = 300_000 // 2.4 MB: more than two blocks
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		w.Floats(v)
		w.Ints([]int{k, -k, 1 << 40})
		w.Bools([]bool{true, false, k%2 == 0})
		w.Blob(bytes.Repeat([]byte{byte(k)}, k*37))
		w.String("snapshot")
	}
}

// decodeAll reads what encodeAll wrote, into a value comparable with
// another decoding's (FloatsInto and Floats alternate).
func decodeAll(r *Reader) (out []float64) {
	for k := range 40 {
		out = append(out, float64(r.Int()), b2f(r.Bool()), r.Float())
		if k%2 == 0 {
			out = append(out, r.Floats()...)
		} else {
			// FloatsInto's path: the length, then the numbers read
			// into a table of that length.
			v := make([]float64, r.Len(8))
			r.floats(v)
			out = append(out, v...)
		}
		for _, x := range r.Ints() {
			out = append(out, float64(x))
		}
		for _, x := range r.Bools() {
			out = append(out, b2f(x))
		}
		for _, x := range r.Blob() {
			out = append(out, float64(x))
		}
		out = append(out, float64(len(r.String())))
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// pieces returns a next function over b in pieces of random sizes, each
// copied into one buffer that the following call overwrites (as a
// storage reading chunk files through one buffer does).
func pieces(b []byte, rng *rand.Rand) func() ([]byte, error) {
	buf := make([]byte, 1<<16)
	return func() ([]byte, error) {
		if len(b) == 0 {
			return nil, io.EOF
		}
		for i := range buf {
			buf[i] = 0xa5 // what a reader kept from the last piece is now wrong
		}
		n := min(len(b), 1+rng.IntN(len(buf)))
		if rng.IntN(8) == 0 {
			n = min(len(b), 1+rng.IntN(9)) // tiny pieces split numbers
		}
		p := buf[:n]
		copy(p, b)
		b = b[n:]
		return p, nil
	}
}

// TestStreamWriterSameBytes: a stream writer passes on exactly the bytes
// a buffer writer holds, in blocks, whatever was written.
func TestStreamWriterSameBytes(t *testing.T) {
	t.Parallel()
	var whole Writer
	encodeAll(&whole, rand.New(rand.NewPCG(1, 2)))
	var dst blocks
	sw := NewStreamWriter(&dst)
	encodeAll(sw, rand.New(rand.NewPCG(1, 2)))
	n, err := sw.Flush()
	if err != nil || n != int64(len(whole.Bytes())) || !bytes.Equal(dst.all(), whole.Bytes()) {
		t.Fatalf("stream wrote %d bytes (error %v), equal %v; want %d", n, err, bytes.Equal(dst.all(), whole.Bytes()), len(whole.Bytes()))
	}
	if len(dst.sizes) < 3 || slices.Max(dst.sizes) > streamBlock+4096 {
		t.Fatalf("blocks of %v bytes: want several, none above a block", dst.sizes)
	}
	// A failing destination's error is returned, once, by Flush.
	bad := NewStreamWriter(failing{})
	encodeAll(bad, rand.New(rand.NewPCG(1, 2)))
	if _, err := bad.Flush(); !errors.Is(err, errFailing) {
		t.Fatalf("Flush after a failed write: %v", err)
	}
}

type blocks struct {
	b     []byte
	sizes []int
}

func (d *blocks) Write(p []byte) (int, error) {
	d.b = append(d.b, p...)
	d.sizes = append(d.sizes, len(p))
	return len(p), nil
}
func (d *blocks) all() []byte { return d.b }

var errFailing = errors.New("disk full")

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errFailing }

// TestPiecesReaderSameValues: a reader of pieces of any sizes, through a
// buffer overwritten between pieces, reads what a reader of the whole
// bytes reads, to the bit; and data that ends early, runs long or fails
// is an error, never a panic.
func TestPiecesReaderSameValues(t *testing.T) {
	t.Parallel()
	var w Writer
	encodeAll(&w, rand.New(rand.NewPCG(3, 4)))
	b := w.Bytes()
	r := NewReader(b)
	want := decodeAll(r)
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(5) {
		pr := NewPiecesReader(pieces(b, rand.New(rand.NewPCG(seed, 9))), int64(len(b)))
		got := decodeAll(pr)
		if err := pr.Done(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d values, want %d", seed, len(got), len(want))
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("seed %d: value %d is %v, want %v", seed, i, got[i], want[i])
			}
		}
	}
	for _, tc := range []struct {
		name string
		data []byte
		size int64
		fail error
	}{
		{"ends early", b[:len(b)/2], int64(len(b)), nil},
		{"longer than said", b, int64(len(b) - 100), nil},
		{"shorter than said", b, int64(len(b) + 100), nil},
		{"a damaged piece", b, int64(len(b)), errors.New("checksum mismatch")},
	} {
		next := pieces(tc.data, rand.New(rand.NewPCG(7, 7)))
		if tc.fail != nil {
			calls := 0
			inner := next
			next = func() ([]byte, error) {
				if calls++; calls == 5 {
					return nil, tc.fail
				}
				return inner()
			}
		}
		pr := NewPiecesReader(next, tc.size)
		decodeAll(pr)
		if err := pr.Done(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want an error wrapping ErrCorrupt", tc.name, err)
		}
	}
}

// prefixTaker takes a random prefix of each buffer (all of it when
// final), as a chunker that must see ahead does.
type prefixTaker struct {
	rng   *rand.Rand
	taken []byte
	calls int
	cheat bool // take less than all at the end
}

func (p *prefixTaker) Write(b []byte) (int, error) { panic("a PrefixWriter's Write was called") }

func (p *prefixTaker) WritePrefix(b []byte, final bool) (int, error) {
	p.calls++
	n := len(b)
	if !final {
		n = p.rng.IntN(len(b) + 1)
	} else if p.cheat && n > 0 {
		n--
	}
	p.taken = append(p.taken, b[:n]...)
	return n, nil
}

// TestStreamWriterPrefixes: a stream writer gives a PrefixWriter its
// buffer, keeps what it does not take, and ends with a final call that
// must take the rest; the bytes taken are the encoding's, in order.
func TestStreamWriterPrefixes(t *testing.T) {
	t.Parallel()
	var whole Writer
	encodeAll(&whole, rand.New(rand.NewPCG(5, 6)))
	pt := &prefixTaker{rng: rand.New(rand.NewPCG(1, 1))}
	sw := NewStreamWriter(pt)
	encodeAll(sw, rand.New(rand.NewPCG(5, 6)))
	n, err := sw.Flush()
	if err != nil || n != int64(len(whole.Bytes())) || !bytes.Equal(pt.taken, whole.Bytes()) || pt.calls < 3 {
		t.Fatalf("%d bytes taken in %d calls (error %v), equal %v; want %d", n, pt.calls, err, bytes.Equal(pt.taken, whole.Bytes()), len(whole.Bytes()))
	}
	cheat := &prefixTaker{rng: rand.New(rand.NewPCG(1, 1)), cheat: true}
	sw = NewStreamWriter(cheat)
	encodeAll(sw, rand.New(rand.NewPCG(5, 6)))
	if _, err := sw.Flush(); err == nil {
		t.Fatal("a destination that leaves bytes at the end: no error")
	}
}

// Package snapenc is the binary encoding of engine snapshots: numbers in
// little-endian order, float64s by their bits (so that a restored
// posterior equals the saved one to the last bit), slices prefixed by
// their length. It is written by hand because encoding/gob cannot reach
// the unexported state of the posteriors and spends 2-3x the time per
// float64 on a snapshot that is mostly float64 tables, and because a
// reader of untrusted bytes must bound every length before it allocates.
package snapenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Writer appends values to a byte slice.
type Writer struct{ buf []byte }

// NewWriter returns a Writer that appends to buf[:0], reusing its
// storage.
func NewWriter(buf []byte) *Writer { return &Writer{buf: buf[:0]} }

// Bytes returns the encoded bytes.
func (w *Writer) Bytes() []byte { return w.buf }

// Grow makes room for n more bytes, so that a snapshot of known size
// (the previous one's) is encoded without the copies of a doubling
// buffer: tens of MB copied and cleared at every save of a long study.
func (w *Writer) Grow(n int) {
	switch {
	case n <= cap(w.buf)-len(w.buf):
	case len(w.buf) == 0:
		// make, not slices.Grow: append's growth clears the new memory,
		// and a large fresh allocation needs no clearing.
		w.buf = make([]byte, 0, n)
	default:
		w.buf = slices.Grow(w.buf, n)
	}
}

// Int appends v.
func (w *Writer) Int(v int) { w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(int64(v))) }

// Uint64 appends v.
func (w *Writer) Uint64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }

// Float appends v by its bits.
func (w *Writer) Float(v float64) { w.Uint64(math.Float64bits(v)) }

// Bool appends v.
func (w *Writer) Bool(v bool) {
	if v {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
}

// Floats appends len(v) and v.
func (w *Writer) Floats(v []float64) {
	w.Int(len(v))
	n := len(w.buf)
	w.buf = slices.Grow(w.buf, 8*len(v))[:n+8*len(v)]
	putFloats(w.buf[n:], v)
}

// Ints appends len(v) and v.
func (w *Writer) Ints(v []int) {
	w.Int(len(v))
	for _, x := range v {
		w.Int(x)
	}
}

// Bools appends len(v) and v.
func (w *Writer) Bools(v []bool) {
	w.Int(len(v))
	for _, x := range v {
		w.Bool(x)
	}
}

// Blob appends len(v) and v.
func (w *Writer) Blob(v []byte) {
	w.Int(len(v))
	w.buf = append(w.buf, v...)
}

// String appends len(s) and s.
func (w *Writer) String(s string) { w.Blob([]byte(s)) }

// ErrCorrupt is wrapped by the errors of a Reader.
var ErrCorrupt = errors.New("snapshot is corrupt")

// Reader reads what a Writer wrote. The first failure is kept (Err) and
// every later read returns zero values, so a decoder checks once at the
// end.
type Reader struct {
	buf []byte
	err error
}

// NewReader returns a Reader of b.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Err returns the first failure, or nil.
func (r *Reader) Err() error { return r.err }

// Fail records a failure of the decoder (the first one is kept).
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
}

// Done reports an error if bytes are left over or a read failed.
func (r *Reader) Done() error {
	if r.err == nil && len(r.buf) > 0 {
		r.Fail("%d bytes left over", len(r.buf))
	}
	return r.err
}

func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf) {
		r.Fail("a read of %d bytes past the end (%d left)", n, len(r.buf))
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

// Uint64 reads a uint64.
func (r *Reader) Uint64() uint64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// Int reads an int.
func (r *Reader) Int() int { return int(int64(r.Uint64())) }

// Float reads a float64.
func (r *Reader) Float() float64 { return math.Float64frombits(r.Uint64()) }

// Bool reads a bool.
func (r *Reader) Bool() bool {
	b := r.take(1)
	if b == nil {
		return false
	}
	if b[0] > 1 {
		r.Fail("bool byte %d", b[0])
	}
	return b[0] == 1
}

// Len reads a length whose elements take at least size bytes each,
// checked against the bytes left.
func (r *Reader) Len(size int) int {
	n := r.Int()
	if r.err == nil && (n < 0 || n > len(r.buf)/max(size, 1)) {
		r.Fail("length %d with %d bytes left", n, len(r.buf))
		return 0
	}
	return n
}

// Floats reads a slice of float64 (nil for length 0).
func (r *Reader) Floats() []float64 {
	n := r.Len(8)
	b := r.take(8 * n)
	if n == 0 || b == nil {
		return nil
	}
	v := make([]float64, n)
	getFloats(v, b)
	return v
}

// FloatsInto reads a slice of float64 that Floats wrote into dst, which
// must have its length exactly: the tables of a snapshot (tens of MB of
// embedding rows) are read into the posterior's storage without a
// slice allocated per row.
func (r *Reader) FloatsInto(dst []float64) {
	n := r.Len(8)
	if r.err == nil && n != len(dst) {
		r.Fail("%d numbers where %d are expected", n, len(dst))
	}
	b := r.take(8 * n)
	if b == nil {
		return
	}
	getFloats(dst, b)
}

// Ints reads a slice of int (nil for length 0).
func (r *Reader) Ints() []int {
	n := r.Len(8)
	if n == 0 {
		return nil
	}
	v := make([]int, n)
	for i := range v {
		v[i] = r.Int()
	}
	return v
}

// Bools reads a slice of bool (nil for length 0).
func (r *Reader) Bools() []bool {
	n := r.Len(1)
	if n == 0 {
		return nil
	}
	v := make([]bool, n)
	for i := range v {
		v[i] = r.Bool()
	}
	return v
}

// Blob reads a byte slice (a copy).
func (r *Reader) Blob() []byte {
	n := r.Len(1)
	b := r.take(n)
	return append([]byte(nil), b...)
}

// String reads a string.
func (r *Reader) String() string { return string(r.Blob()) }

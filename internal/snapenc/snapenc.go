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
	"io"
	"math"
	"slices"
	"unsafe"
)

// Writer appends values to a byte slice, or streams them to an
// io.Writer (NewStreamWriter).
type Writer struct {
	buf []byte
	// A stream writer's destination (pw: one that takes prefixes), the
	// bytes it passed on, and its first error.
	dst     io.Writer
	pw      PrefixWriter
	flushed int64
	err     error
}

// PrefixWriter is a destination that takes, of each buffer it is given,
// the prefix it can use now (a chunker that must see ahead of a cut) and
// returns its length; the rest is given again with what follows. With
// final the buffer ends the data and is taken whole. A stream writer
// passes its own buffer to one, which spares the copy an io.Writer makes.
type PrefixWriter interface {
	WritePrefix(p []byte, final bool) (int, error)
}

// NewWriter returns a Writer that appends to buf[:0], reusing its
// storage.
func NewWriter(buf []byte) *Writer { return &Writer{buf: buf[:0]} }

// streamBlock is what a stream writer holds before it passes it on.
const streamBlock = 4 << 20

// NewStreamWriter returns a Writer that passes its bytes on to dst in
// blocks of a few megabytes (to a PrefixWriter, its buffer in place): a
// snapshot of a long study (tens of MB) is written without being held
// whole, which spares a command the memory, and the kernel's page
// faults, of a second copy of its tables.
func NewStreamWriter(dst io.Writer) *Writer {
	w := &Writer{buf: make([]byte, 0, streamBlock+4096), dst: dst}
	w.pw, _ = dst.(PrefixWriter)
	return w
}

// Bytes returns the encoded bytes (of a Writer made by NewWriter).
func (w *Writer) Bytes() []byte { return w.buf }

// Flush passes on what a stream writer holds and returns the bytes
// written in all and the first error of dst.
func (w *Writer) Flush() (int64, error) {
	w.pass(true)
	return w.flushed, w.err
}

// pass hands the buffer to dst (what a PrefixWriter does not take stays
// at its start).
func (w *Writer) pass(final bool) {
	if w.dst == nil || len(w.buf) == 0 && !final {
		return
	}
	n := len(w.buf)
	if w.err == nil {
		if w.pw != nil {
			n, w.err = w.pw.WritePrefix(w.buf, final)
			if w.err == nil && (n < 0 || n > len(w.buf) || final && n != len(w.buf)) {
				w.err = fmt.Errorf("snapenc: a destination took %d of %d bytes", n, len(w.buf))
			}
		} else if n > 0 {
			_, w.err = w.dst.Write(w.buf)
		}
	}
	if w.err != nil {
		n = len(w.buf) // dropped
	}
	w.flushed += int64(n)
	w.buf = w.buf[:copy(w.buf, w.buf[n:])]
}

// full passes the buffer on once it holds a block.
func (w *Writer) full() {
	if w.dst != nil && len(w.buf) >= streamBlock {
		w.pass(false)
	}
}

// Grow makes room for n more bytes, so that a snapshot of known size
// (the previous one's) is encoded without the copies of a doubling
// buffer: tens of MB copied and cleared at every save of a long study.
func (w *Writer) Grow(n int) {
	switch {
	case w.dst != nil:
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
func (w *Writer) Int(v int) { w.Uint64(uint64(int64(v))) }

// Uint64 appends v.
func (w *Writer) Uint64(v uint64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, v)
	w.full()
}

// Float appends v by its bits.
func (w *Writer) Float(v float64) { w.Uint64(math.Float64bits(v)) }

// Bool appends v.
func (w *Writer) Bool(v bool) {
	if v {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
	w.full()
}

// Floats appends len(v) and v.
func (w *Writer) Floats(v []float64) {
	w.Int(len(v))
	if w.dst != nil {
		// A block at a time: the buffer never grows past one.
		for len(v) > 0 {
			k := min(len(v), max(cap(w.buf)-len(w.buf), 8)/8)
			n := len(w.buf)
			w.buf = slices.Grow(w.buf, 8*k)[:n+8*k]
			putFloats(w.buf[n:], v[:k])
			v = v[k:]
			w.full()
			if len(v) > 0 && cap(w.buf)-len(w.buf) < 8 {
				w.pass(false)
			}
		}
		return
	}
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
	w.full()
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
	// A reader of pieces: the next piece, and the bytes after buf.
	next    func() ([]byte, error)
	left    int64
	scratch [8]byte
}

// NewReader returns a Reader of b.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// NewPiecesReader returns a Reader of the concatenation of the pieces
// that next returns in turn (io.EOF after the last), size bytes in all.
// A piece need only stay valid until the following call of next: the
// Reader copies what it keeps, so the pieces of a snapshot of tens of MB
// can be read through one buffer of a chunk's size.
func NewPiecesReader(next func() ([]byte, error), size int64) *Reader {
	return &Reader{next: next, left: size}
}

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
	if r.err == nil && r.remaining() > 0 {
		r.Fail("%d bytes left over", r.remaining())
	}
	return r.err
}

// remaining is the number of bytes not read yet.
func (r *Reader) remaining() int64 { return int64(len(r.buf)) + r.left }

// take returns the next n bytes, valid until the next read.
func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || int64(n) > r.remaining() {
		r.Fail("a read of %d bytes past the end (%d left)", n, r.remaining())
		return nil
	}
	if n <= len(r.buf) {
		b := r.buf[:n]
		r.buf = r.buf[n:]
		return b
	}
	// Across pieces: only the fixed-size reads come here (the slices
	// are read by readInto).
	var b []byte
	if n <= len(r.scratch) {
		b = r.scratch[:n]
	} else {
		b = make([]byte, n)
	}
	if !r.readInto(b) {
		return nil
	}
	return b
}

// readInto fills dst with the next len(dst) bytes (known to remain).
func (r *Reader) readInto(dst []byte) bool {
	for len(dst) > 0 {
		if len(r.buf) == 0 {
			if r.next == nil || r.left <= 0 {
				r.Fail("a read past the end")
				return false
			}
			p, err := r.next()
			if err == nil && len(p) == 0 || int64(len(p)) > r.left {
				err = fmt.Errorf("a piece of %d bytes where %d are left", len(p), r.left)
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = fmt.Errorf("the data ends %d bytes early", r.left)
				}
				if r.err == nil {
					// The source's error stays in the chain (a piece a
					// save removed: the caller opens the data again).
					r.err = fmt.Errorf("%w: %w", ErrCorrupt, err)
				}
				return false
			}
			r.buf, r.left = p, r.left-int64(len(p))
		}
		k := copy(dst, r.buf)
		dst, r.buf = dst[k:], r.buf[k:]
	}
	return true
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
	if r.err == nil && (n < 0 || int64(n) > r.remaining()/int64(max(size, 1))) {
		r.Fail("length %d with %d bytes left", n, r.remaining())
		return 0
	}
	return n
}

// Floats reads a slice of float64 (nil for length 0).
func (r *Reader) Floats() []float64 {
	n := r.Len(8)
	if n == 0 || r.err != nil {
		return nil
	}
	v := make([]float64, n)
	if !r.floats(v) {
		return nil
	}
	return v
}

// floats reads len(v) numbers into v, straight into v's memory when the
// machine is little-endian.
func (r *Reader) floats(v []float64) bool {
	if r.err != nil {
		return false
	}
	if littleEndian && len(v) > 0 {
		return r.readInto(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v)))
	}
	for len(v) > 0 {
		k := min(len(v), 1<<10)
		b := r.take(8 * k)
		if b == nil {
			return false
		}
		getFloats(v[:k], b)
		v = v[k:]
	}
	return true
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
	r.floats(dst)
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
	if n == 0 || r.err != nil {
		return nil
	}
	b := make([]byte, n)
	if !r.readInto(b) {
		return nil
	}
	return b
}

// String reads a string.
func (r *Reader) String() string { return string(r.Blob()) }

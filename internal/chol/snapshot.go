package chol

import "github.com/bkb-go/bkb/internal/snapenc"

// Encode appends the factor to w: its order, stride and storage as they
// are, so that a decoded factor computes exactly what this one does.
func (f *Factor) Encode(w *snapenc.Writer) {
	w.Int(f.n)
	w.Int(f.stride)
	w.Float(f.jitter)
	w.Int(f.jittered)
	// Only the lower triangle of the first n rows is state.
	w.Int(len(f.data))
	for i := 0; i < f.n; i++ {
		w.Floats(f.data[i*f.stride : i*f.stride+i+1])
	}
}

// Decode replaces the factor with one Encode wrote.
func (f *Factor) Decode(r *snapenc.Reader) {
	n, stride := r.Int(), r.Int()
	f.jitter, f.jittered = r.Float(), r.Int()
	size := r.Int()
	if r.Err() != nil {
		return
	}
	if n < 0 || stride < n || size != stride*stride || size > 1<<34 {
		r.Fail("factor of order %d, stride %d, storage %d", n, stride, size)
		return
	}
	*f = Factor{n: n, stride: stride, data: make([]float64, size), jitter: f.jitter, jittered: f.jittered}
	for i := 0; i < n && r.Err() == nil; i++ {
		r.FloatsInto(f.data[i*stride : i*stride+i+1])
	}
}

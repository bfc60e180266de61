package snapenc

import (
	"math"
	"testing"
)

// TestFloatsRoundTrip: Floats and FloatsInto give back every float64 to
// the bit (NaN payloads, signed zeros, subnormals included).
func TestFloatsRoundTrip(t *testing.T) {
	t.Parallel()
	v := []float64{0, math.Copysign(0, -1), 1, -2.5, math.Inf(1), math.Inf(-1), math.Float64frombits(0x7ff8000000000abc),
		math.SmallestNonzeroFloat64, math.MaxFloat64, 1.0 / 3}
	var w Writer
	w.Floats(v)
	w.Floats(v)
	w.Floats(nil)
	w.Int(7)
	r := NewReader(w.Bytes())
	a := r.Floats()
	b := make([]float64, len(v))
	r.FloatsInto(b)
	c := r.Floats()
	if k := r.Int(); k != 7 || r.Done() != nil {
		t.Fatalf("trailer %d, error %v", k, r.Err())
	}
	for i := range v {
		if math.Float64bits(a[i]) != math.Float64bits(v[i]) || math.Float64bits(b[i]) != math.Float64bits(v[i]) {
			t.Fatalf("element %d: %v and %v, want %v", i, a[i], b[i], v[i])
		}
	}
	if c != nil {
		t.Fatalf("empty slice decoded as %v", c)
	}
}

// TestFloatsIntoErrors: a length other than the destination's, or bytes
// that end early, are errors, never a panic or a partial silent read.
func TestFloatsIntoErrors(t *testing.T) {
	t.Parallel()
	var w Writer
	w.Floats([]float64{1, 2, 3})
	for _, tc := range []struct {
		name string
		data []byte
		dst  int
	}{
		{"shorter destination", w.Bytes(), 2},
		{"longer destination", w.Bytes(), 4},
		{"truncated", w.Bytes()[:len(w.Bytes())-1], 3},
		{"no length", w.Bytes()[:3], 3},
	} {
		r := NewReader(tc.data)
		r.FloatsInto(make([]float64, tc.dst))
		if r.Err() == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

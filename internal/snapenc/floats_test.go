package snapenc

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFloatsBits checks the byte copy of float64 tables against the
// conversion of each number by encoding/binary, for arbitrary bit patterns
// (NaN payloads, -0, subnormals), on both paths.
func TestFloatsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	v := make([]float64, 1000)
	for i := range v {
		v[i] = math.Float64frombits(rng.Uint64())
	}
	v[0], v[1], v[2] = math.Copysign(0, -1), math.Float64frombits(0x7ff8_dead_beef_0001), 5e-324
	want := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(want[8*i:], math.Float64bits(x))
	}
	native := littleEndian
	defer func() { littleEndian = native }()
	for _, le := range []bool{native, false} {
		littleEndian = le
		got := make([]byte, len(want))
		putFloats(got, v)
		if string(got) != string(want) {
			t.Fatalf("littleEndian=%v: putFloats differs from encoding/binary", le)
		}
		back := make([]float64, len(v))
		getFloats(back, want)
		for i := range v {
			if math.Float64bits(back[i]) != math.Float64bits(v[i]) {
				t.Fatalf("littleEndian=%v: number %d read back as %x, want %x", le, i, math.Float64bits(back[i]), math.Float64bits(v[i]))
			}
		}
	}
}

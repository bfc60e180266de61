package snapenc

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// littleEndian: this machine stores a float64 as its little-endian bits,
// as the encoding does, so that a table of float64s is copied as bytes.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// putFloats writes v's bits, little-endian, into b (len(b) = 8 len(v)).
// A snapshot of a long study is tens of MB of float64 tables: one memmove
// instead of a conversion per number spares about a third of its
// encoding and decoding time (docs/long-studies.md).
func putFloats(b []byte, v []float64) {
	if len(v) == 0 {
		return
	}
	if littleEndian {
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v)))
		return
	}
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
}

// getFloats reads v from the little-endian bits in b (len(b) = 8 len(v)).
func getFloats(v []float64, b []byte) {
	if len(v) == 0 {
		return
	}
	if littleEndian {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v)), b)
		return
	}
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
}

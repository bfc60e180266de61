// Package cdc cuts a byte string into content-defined chunks: a cut falls
// where a rolling hash of the last bytes matches a mask, so that an
// insertion or a change moves the cuts only near it, and two versions of
// a large state that differ in a few places share every other chunk. A
// store that keeps chunks by their SHA-256 then writes only what changed
// (storage/postgres keeps engine snapshots so: a snapshot of a
// 10,000-trial study is 43 MB, of which an ask changes about 2 MB).
//
// The rolling hash is the Gear hash of FastCDC (Xia et al., USENIX ATC
// 2016): h = (h << 1) + gear[b], whose top bits depend on the last 64
// bytes only. It is written here because the well-kept Go chunkers (such
// as restic's Rabin chunker) draw their polynomial per repository, while
// the cuts of this package must be the same in every process and every
// build, and because it is ten lines.
package cdc

import "crypto/sha256"

// Sizes of a chunk: at least MinSize bytes (the hash is not read before),
// MaxSize at most, and about MinSize + 2^avgBits on average.
const (
	MinSize = 16 << 10
	MaxSize = 256 << 10
	avgBits = 16
)

// gear is a table of 256 fixed pseudo-random words (splitmix64 from 0):
// the cuts, and so the chunks a store keeps, depend on it, so it never
// changes.
var gear = func() (t [256]uint64) {
	var x uint64
	for i := range t {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		t[i] = z ^ (z >> 31)
	}
	return t
}()

// mask selects the hash's top avgBits bits: a cut where they are all 0.
const mask = (uint64(1)<<avgBits - 1) << (64 - avgBits)

// Cut returns the length of the first chunk of b (len(b) when b holds at
// most MinSize bytes).
func Cut(b []byte) int {
	n := min(len(b), MaxSize)
	if n <= MinSize {
		return n
	}
	var h uint64
	for i := MinSize; i < n; i++ {
		h = h<<1 + gear[b[i]]
		if h&mask == 0 {
			return i + 1
		}
	}
	return n
}

// Chunk is one chunk of a byte string: its bytes (a subslice of the
// string) and their SHA-256.
type Chunk struct {
	Data []byte
	Hash [32]byte
}

// Split cuts b into chunks, in order; their Data concatenate to b.
func Split(b []byte) []Chunk {
	var out []Chunk
	for len(b) > 0 {
		n := Cut(b)
		out = append(out, Chunk{Data: b[:n], Hash: sha256.Sum256(b[:n])})
		b = b[n:]
	}
	return out
}

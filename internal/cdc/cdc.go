// Package cdc cuts a byte string into content-defined chunks: a cut falls
// where a rolling hash of the last bytes matches a mask, so that an
// insertion or a change moves the cuts only near it, and two versions of
// a large state that differ in a few places share every other chunk. A
// store that keeps the chunks of a state and, on the next save, writes
// only those that differ from the previous state's, writes what changed:
// a snapshot of a 10,000-trial study is 43 MB, of which an ask changes
// about 2 MB (docs/long-studies.md).
//
// The rolling hash is the Gear hash of FastCDC (Xia et al., USENIX ATC
// 2016): h = (h << 1) + gear[b], whose top bits depend on the last 64
// bytes only. It is written here because the well-kept Go chunkers (such
// as restic's Rabin chunker) draw their polynomial per repository, while
// the cuts of this package must be the same in every process and every
// build, and because it is ten lines.
package cdc

import (
	"crypto/rand"
	"hash/crc32"
	"slices"
)

// Sizes of a chunk: at least MinSize bytes (the hash is not read before),
// MaxSize at most, and about MinSize + 2^avgBits on average.
const (
	MinSize = 16 << 10
	MaxSize = 256 << 10
	avgBits = 16
)

// gear is a table of 256 fixed pseudo-random words (splitmix64 from 0):
// the cuts depend on it, so it never changes.
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

// Castagnoli is the CRC-32C table (hardware on amd64 and arm64).
var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ID names a stored chunk: random for a chunk first stored, kept while a
// later state holds the same bytes.
type ID [16]byte

// Ref is a chunk as a state's list holds it: its ID, length and CRC-32C.
type Ref struct {
	ID   ID
	Len  uint32
	Sum  uint32
	Data []byte // the chunk's bytes (Split's result only)
	New  bool   // no chunk of the previous state had its length and CRC
}

// RefSize is the size of an encoded Ref (AppendRef).
const RefSize = 24

// Split cuts b into chunks, in order (their Data concatenate to b). A
// chunk with the length and CRC-32C of a chunk of prev (the previous
// state's list) takes that chunk's ID: the store holds its bytes already
// and need not write them. Any other chunk gets a new random ID and New.
//
// Two different chunks of one length with one CRC-32C would be taken for
// one: about 2^-32 for each pair of such chunks, of which a save of tens of
// new chunks against hundreds has about 0.1 (the lengths spread over 240 K
// values), so about 3e-11 per save. The CRC-32C of the whole state that a
// store keeps does not catch it: a CRC of a concatenation is a function of
// its parts' CRCs and lengths (Combine), so it is the same for both.
//
// The cuts are Cut's from the start of b, but Split does not hash the
// bytes where b holds a chunk of prev: a cut depends only on the bytes
// from the chunk's start to the cut (and on there being that many), so
// where the bytes at the current offset are those of a chunk of prev that
// was not cut by the end of its data, Cut would cut where prev's chunk
// ends. Split looks for such a chunk where the previous state's chunks
// start at the current offset shifted as the last chunk it recognized was
// (a chunk of prev taken so, or one that Cut found with a length and CRC of
// prev's), at the same offset (the unchanged head of a state) and at the
// same distance from the end (its unchanged tail), and takes it when its
// length fits and the CRC-32C of those bytes of b is its own (the equality
// Split relies on already). After an insertion or a removal the first
// chunk past it is cut and recognized, and the chunks after it are taken
// at its shift. On a 43 MB snapshot whose ask changed a few places this
// spares most of the Gear hash's pass, about 20 ms (docs/long-studies.md);
// the cuts are those of a pass over every byte
// (TestSplitSkipsKnownChunks).
func Split(b []byte, prev []Ref) []Ref {
	// The Splitter over the whole data at once: each chunk's Data is a
	// slice of b, valid as long as b.
	var out []Ref
	sp := NewSplitter(prev, func(r Ref) error {
		out = append(out, r)
		return nil
	})
	_, _ = sp.WritePrefix(b, true) // emit returns no error
	return out
}

// splitState is what Split carries from one chunk to the next.
type splitState struct {
	prev   []Ref
	known  map[splitKey]ID
	at     map[splitKey]int // where a chunk starts in the previous state
	starts map[int]int      // offset in the previous state -> index in prev
	oldLen int
	shift  int // the offset in b minus the offset in prev of the last chunk recognized
}

type splitKey struct{ n, sum uint32 }

func newSplitState(prev []Ref) *splitState {
	st := &splitState{prev: prev, known: make(map[splitKey]ID, len(prev)), at: make(map[splitKey]int, len(prev)),
		starts: make(map[int]int, len(prev))}
	for i, r := range prev {
		k := splitKey{r.Len, r.Sum}
		st.known[k] = r.ID
		if _, ok := st.at[k]; !ok {
			st.at[k] = st.oldLen
		}
		st.starts[st.oldLen] = i
		st.oldLen += int(r.Len)
	}
	return st
}

// next cuts the chunk that starts at offset off of the data: win holds
// the data from off on, the whole rest when final, else more than
// MaxSize bytes of it (so that every cut and every chunk of prev that
// could start at off is decided by win alone). total is the data's
// length, or -1 while unknown (a stream; then the guess at the same
// distance from the end is not tried, which costs hashing, not cuts).
func (st *splitState) next(win []byte, off int, final bool, total int) Ref {
	if r, ok := st.aligned(win, off, final, total); ok {
		return r
	}
	n := Cut(win)
	r := Ref{Len: uint32(n), Sum: crc32.Checksum(win[:n], Castagnoli), Data: win[:n]}
	k := splitKey{r.Len, r.Sum}
	if id, ok := st.known[k]; ok {
		r.ID = id
		if o, ok := st.at[k]; ok {
			st.shift = off - o
		}
	} else {
		_, _ = rand.Read(r.ID[:])
		r.New = true
		st.known[k] = r.ID // a chunk twice in the data is stored once
	}
	return r
}

// aligned returns the chunk of prev that the data holds at off, if any.
func (st *splitState) aligned(win []byte, off int, final bool, total int) (Ref, bool) {
	starts3 := [3]int{off - st.shift, off, -1}
	if total >= 0 {
		starts3[2] = off - (total - st.oldLen)
	}
	for k, o := range starts3 {
		if o < 0 || slices.Contains(starts3[:k], o) {
			continue
		}
		i, ok := st.starts[o]
		if !ok {
			continue
		}
		r := st.prev[i]
		n := int(r.Len)
		// prev's last chunk was cut by its data's end: it is one of
		// the data's only where it ends the data too.
		if n > len(win) || (i == len(st.prev)-1) != (final && n == len(win)) {
			continue
		}
		if crc32.Checksum(win[:n], Castagnoli) == r.Sum {
			r.Data, r.New = win[:n], false
			st.shift = off - o
			return r, true
		}
	}
	return Ref{}, false
}

// Splitter is Split for data written in parts (an io.Writer): it cuts
// the same chunks, with the same IDs for those of prev, and passes each
// to emit as soon as it is cut, holding about MaxSize bytes plus a write
// rather than the whole data. A Ref's Data is valid during emit only.
type Splitter struct {
	st   *splitState
	emit func(Ref) error
	win  []byte // the data from off on, not cut yet
	off  int
	err  error
}

// NewSplitter returns a Splitter of data cut against prev (as Split).
func NewSplitter(prev []Ref, emit func(Ref) error) *Splitter {
	return &Splitter{st: newSplitState(prev), emit: emit}
}

// Write adds p to the data and emits the chunks it completes.
func (s *Splitter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.win = append(s.win, p...)
	n, _ := s.WritePrefix(s.win, false)
	s.win = s.win[:copy(s.win, s.win[n:])]
	if s.err != nil {
		return 0, s.err
	}
	return len(p), nil
}

// WritePrefix is Write for a writer that keeps its own buffer (the
// snapshot encoder's): it emits the chunks that p, the data from where
// the last call stopped, completes, in place, and returns how many bytes
// they take; the caller gives the rest again with what follows. With
// final, p ends the data and every byte is taken. It spares Write's copy
// of the data into the Splitter's window.
func (s *Splitter) WritePrefix(p []byte, final bool) (int, error) {
	if len(s.win) > 0 && (len(p) == 0 || &p[0] != &s.win[0]) {
		// After Write: the data goes on from its window.
		if _, err := s.Write(p); err != nil || !final {
			return len(p), err
		}
		return len(p), s.Close()
	}
	total := -1
	if final {
		total = s.off + len(p)
	}
	pos := 0
	for s.err == nil && (final && pos < len(p) || len(p)-pos > MaxSize) {
		r := s.st.next(p[pos:], s.off, final, total)
		s.err = s.emit(r)
		pos += int(r.Len)
		s.off += int(r.Len)
	}
	return pos, s.err
}

// Close emits the last chunks, and returns the first error of emit.
func (s *Splitter) Close() error {
	if len(s.win) > 0 {
		s.WritePrefix(s.win, true)
	}
	s.win = nil
	return s.err
}

// Combine returns the CRC-32C of a concatenation a || b from crcA, the
// CRC-32C of a, crcB, that of b, and the length of b: the shift of crcA by
// lenB bytes, a multiplication by x^(8 lenB) modulo the polynomial, XORed
// with crcB, as zlib's crc32_combine computes it (Adler and Madler; the
// squaring table as in zlib 1.2.12). hash/crc32 has no such function.
// It spares a store a pass over a whole state to check the CRC of its
// chunks put together.
func Combine(crcA, crcB uint32, lenB int64) uint32 {
	return multModP(x2nModP(uint64(lenB), 3), crcA) ^ crcB
}

// Sum returns the CRC-32C of the concatenation of refs' chunks, from
// their CRC-32Cs and lengths (Combine).
func Sum(refs []Ref) uint32 {
	var sum uint32 // the CRC-32C of nothing
	for _, r := range refs {
		sum = Combine(sum, r.Sum, int64(r.Len))
	}
	return sum
}

// castagnoliReflected is the CRC-32C polynomial, bit-reversed.
const castagnoliReflected = 0x82f63b78

// multModP returns a*b modulo the polynomial (bit-reflected, so x^0 is
// the top bit).
func multModP(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				break
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReflected
		} else {
			b >>= 1
		}
	}
	return p
}

// x2nTable[k] is x^(2^k) modulo the polynomial.
var x2nTable = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	t[0] = p
	for n := 1; n < 32; n++ {
		p = multModP(p, p)
		t[n] = p
	}
	return t
}()

// x2nModP returns x^(n 2^k) modulo the polynomial.
func x2nModP(n uint64, k uint) uint32 {
	p := uint32(1) << 31 // x^0
	for n != 0 {
		if n&1 != 0 {
			p = multModP(x2nTable[k&31], p)
		}
		n >>= 1
		k++
	}
	return p
}

// AppendRef appends r's ID, length and CRC-32C (RefSize bytes).
func AppendRef(dst []byte, r Ref) []byte {
	dst = append(dst, r.ID[:]...)
	dst = append(dst, byte(r.Len), byte(r.Len>>8), byte(r.Len>>16), byte(r.Len>>24))
	return append(dst, byte(r.Sum), byte(r.Sum>>8), byte(r.Sum>>16), byte(r.Sum>>24))
}

// ParseRefs decodes a list of encoded Refs (false if its length is not
// a multiple of RefSize or a length exceeds MaxSize).
func ParseRefs(b []byte) ([]Ref, bool) {
	if len(b)%RefSize != 0 {
		return nil, false
	}
	out := make([]Ref, len(b)/RefSize)
	for i := range out {
		e := b[i*RefSize:]
		copy(out[i].ID[:], e[:16])
		out[i].Len = uint32(e[16]) | uint32(e[17])<<8 | uint32(e[18])<<16 | uint32(e[19])<<24
		out[i].Sum = uint32(e[20]) | uint32(e[21])<<8 | uint32(e[22])<<16 | uint32(e[23])<<24
		if out[i].Len == 0 || out[i].Len > MaxSize {
			return nil, false
		}
	}
	return out, true
}

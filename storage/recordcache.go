package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"reflect"
)

// The records cache: a journal's records in a binary form, beside it
// (RecordCachePath), so that a command on a long study does not decode
// every JSON line again. On a study of 10,000 trials the 20,000 lines took
// about 50 ms of each `bkb ask`, `tell` and `status` (docs/long-studies.md),
// the largest part of a command after the policy. The cache names the
// journal's bytes it covers by their length and CRC-32C; a process that
// opens the journal reads the file whole anyway, checks that its first
// bytes have that length and CRC, and then takes the cached records and
// decodes only the lines after them. A cache that does not match (another
// journal, a journal rewritten, a damaged or foreign file) is not used,
// and the lines are decoded as before: the cache can make a command
// faster, never change what it reads.
//
// It is written by hand because the records' shape is fixed and small, and
// encoding/gob would spend on reflection what the cache is there to save.
// Each record is laid out as: kind (an index in cacheKinds), trial, arm
// and step (varints), x, values and constraints (a length, plus one so
// that nil and empty differ, and the float64 bits), params, worker and
// error (the same for bytes), y (a flag and the bits), seconds (the bits)
// and the time as time.Time.MarshalText writes it. The file is the magic,
// the covered length, line count and CRC-32C, the record count, the
// records, and the CRC-32C of all that.

// RecordCachePath is the file in which a [JournalStore] keeps the records
// cache of the journal at path.
func RecordCachePath(path string) string { return path + ".snapshot.records" }

const recordCacheMagic = "BKBRECS1"

// cacheKinds are the record kinds by their index in the cache.
var cacheKinds = []string{KindAsk, KindTell, KindFail, KindEnqueue, KindReport, KindPrune}

// Writing the cache: a command that decoded at least cacheMinLines JSON
// records, and at least one eighth of the records the cache already
// covers, writes a new one, so that the bytes written for the cache over a
// study's life stay within a few times its final size, as the snapshots'
// do (study.SnapshotBytes).
const cacheMinLines = 1024

// recordCache is a decoded cache file.
type recordCache struct {
	off     int64  // the journal's bytes it covers
	lines   int    // and their lines, the header included
	sum     uint32 // CRC-32C of those bytes
	records []Record
}

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendFloats(b []byte, v []float64) []byte {
	if v == nil {
		return appendUvarint(b, 0)
	}
	b = appendUvarint(b, uint64(len(v))+1)
	for _, f := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	return b
}

func appendBytes(b, v []byte, nilable bool) []byte {
	if nilable {
		if v == nil {
			return appendUvarint(b, 0)
		}
		b = appendUvarint(b, uint64(len(v))+1)
	} else {
		b = appendUvarint(b, uint64(len(v)))
	}
	return append(b, v...)
}

// encodeRecordCache lays out the cache of records covering off bytes and
// lines lines of CRC-32C sum (false if a record cannot be laid out).
func encodeRecordCache(off int64, lines int, sum uint32, records []Record) ([]byte, bool) {
	b := make([]byte, 0, 64+len(records)*160)
	b = append(b, recordCacheMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(off))
	b = binary.LittleEndian.AppendUint64(b, uint64(lines))
	b = binary.LittleEndian.AppendUint32(b, sum)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(records)))
	for _, r := range records {
		k := -1
		for i, name := range cacheKinds {
			if r.Kind == name {
				k = i
			}
		}
		t, err := r.Time.MarshalText()
		if k < 0 || err != nil {
			return nil, false
		}
		b = append(b, byte(k))
		b = binary.AppendVarint(b, int64(r.Trial))
		b = binary.AppendVarint(b, int64(r.Arm))
		b = binary.AppendVarint(b, int64(r.Step))
		b = appendFloats(b, r.X)
		b = appendFloats(b, r.Values)
		b = appendFloats(b, r.Constraints)
		b = appendBytes(b, r.Params, true)
		b = appendBytes(b, []byte(r.Worker), false)
		b = appendBytes(b, []byte(r.Error), false)
		if r.Y != nil {
			b = append(b, 1)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*r.Y))
		} else {
			b = append(b, 0)
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.Seconds))
		b = appendBytes(b, t, false)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), true
}

// cacheReader reads the fields of a cache; ok turns false at the first
// one out of bounds.
type cacheReader struct {
	b    []byte
	ok   bool
	nums []float64 // the slab the next numbers are cut from
}

func (c *cacheReader) uvarint() uint64 {
	v, n := binary.Uvarint(c.b)
	if n <= 0 {
		c.ok = false
		return 0
	}
	c.b = c.b[n:]
	return v
}

func (c *cacheReader) varint() int {
	v, n := binary.Varint(c.b)
	if n <= 0 || v != int64(int(v)) {
		c.ok = false
		return 0
	}
	c.b = c.b[n:]
	return int(v)
}

func (c *cacheReader) take(n uint64) []byte {
	if !c.ok || n > uint64(len(c.b)) {
		c.ok = false
		return nil
	}
	v := c.b[:n:n]
	c.b = c.b[n:]
	return v
}

func (c *cacheReader) u64() uint64 {
	if v := c.take(8); c.ok {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

func (c *cacheReader) floats() []float64 {
	n := c.uvarint()
	if n == 0 || !c.ok {
		return nil
	}
	raw := c.take(8 * (n - 1))
	if !c.ok {
		return nil
	}
	v := c.slab(int(n - 1))
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return v
}

// slab returns n numbers cut from the reader's slab (a new one when it
// runs out), a slice of capacity n so that an append copies it.
func (c *cacheReader) slab(n int) []float64 {
	if n == 0 {
		return []float64{}
	}
	if n > cap(c.nums)-len(c.nums) {
		c.nums = make([]float64, 0, max(n, 1<<14))
	}
	k := len(c.nums)
	c.nums = c.nums[:k+n]
	return c.nums[k : k+n : k+n]
}

func (c *cacheReader) bytes(nilable bool) []byte {
	n := c.uvarint()
	if nilable {
		if n == 0 || !c.ok {
			return nil
		}
		n--
	}
	return c.take(n)
}

// decodeRecordCache reads a cache file's bytes.
func decodeRecordCache(b []byte) (recordCache, error) {
	bad := errors.New("storage: not a records cache of this layout, or a damaged one")
	if len(b) < len(recordCacheMagic)+32 || string(b[:len(recordCacheMagic)]) != recordCacheMagic {
		return recordCache{}, bad
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return recordCache{}, bad
	}
	c := &cacheReader{b: body[len(recordCacheMagic):], ok: true}
	var rc recordCache
	rc.off = int64(c.u64())
	rc.lines = int(c.u64())
	if s := c.take(4); c.ok {
		rc.sum = binary.LittleEndian.Uint32(s)
	}
	n := c.u64()
	// Every record takes at least 20 bytes: a count beyond that is a
	// damaged file, not a reason to allocate.
	if !c.ok || rc.off < 0 || rc.lines < 1 || n > uint64(len(c.b))/20 {
		return recordCache{}, bad
	}
	// Spare capacity for the records appended after the cached ones
	// (a command adds a few), so that joining them copies nothing.
	rc.records = make([]Record, n, n+n/64+64)
	// Few allocations for many records: the points and values are cut
	// from slabs, the parameters' JSON shares b, and a worker's name is
	// made once (the records of a long study cost their decoding's
	// allocations more than their bytes).
	workers := map[string]string{}
	for i := range rc.records {
		r := &rc.records[i]
		k := c.take(1)
		if !c.ok || int(k[0]) >= len(cacheKinds) {
			return recordCache{}, bad
		}
		r.Kind = cacheKinds[k[0]]
		r.Trial, r.Arm, r.Step = c.varint(), c.varint(), c.varint()
		r.X, r.Values, r.Constraints = c.floats(), c.floats(), c.floats()
		if p := c.bytes(true); p != nil {
			r.Params = p
		}
		if w := c.bytes(false); len(w) > 0 {
			name, ok := workers[string(w)]
			if !ok {
				name = string(w)
				workers[name] = name
			}
			r.Worker = name
		}
		r.Error = string(c.bytes(false))
		if y := c.take(1); c.ok && y[0] == 1 {
			v := c.slab(1)
			v[0] = math.Float64frombits(c.u64())
			r.Y = &v[0]
		}
		r.Seconds = math.Float64frombits(c.u64())
		if t := c.bytes(false); !c.ok || r.Time.UnmarshalText(t) != nil {
			return recordCache{}, bad
		}
	}
	if !c.ok || len(c.b) != 0 {
		return recordCache{}, bad
	}
	return rc, nil
}

// recordCacheFor returns the cache file's bytes for records (decoded from
// the journal's first off bytes, lines lines of CRC-32C sum), or false
// when decoding them back would not give the same records (a time in a
// zone that MarshalText writes differently from the journal, say): such a
// journal is read without a cache.
func recordCacheFor(off int64, lines int, sum uint32, records []Record) ([]byte, bool) {
	return MarshalRecordCache(RecordCacheKey{Off: off, Lines: lines, Sum: sum}, records)
}

// RecordCacheKey names the records a records cache holds. A journal's
// cache holds the records of the journal's first Off bytes, Lines lines
// (its header included) of CRC-32C Sum; another storage puts its own
// name of a study's records there (storage/postgres: the study's id in
// Off and its creation time, in microseconds since 1970, in Lines). Off
// is at least 0 and Lines at least 1.
type RecordCacheKey struct {
	Off   int64
	Lines int
	Sum   uint32
}

// UnmarshalRecordCache reads a records cache made by MarshalRecordCache,
// or reports that b is not one (another layout, or damaged: the cache's
// CRC-32C is checked).
func UnmarshalRecordCache(b []byte) (RecordCacheKey, []Record, error) {
	c, err := decodeRecordCache(b)
	if err != nil {
		return RecordCacheKey{}, nil, err
	}
	return RecordCacheKey{Off: c.off, Lines: c.lines, Sum: c.sum}, c.records, nil
}

// MarshalRecordCache returns the records cache of records under key, in
// the binary form of a journal's (RecordCachePath), or false when
// decoding it back would not give the same records (a time that
// MarshalText writes in another zone, say): such records are not cached.
func MarshalRecordCache(key RecordCacheKey, records []Record) ([]byte, bool) {
	off, lines, sum := key.Off, key.Lines, key.Sum
	if off < 0 || lines < 1 {
		return nil, false
	}
	b, ok := encodeRecordCache(off, lines, sum, records)
	if !ok {
		return nil, false
	}
	back, err := decodeRecordCache(b)
	if err != nil || !reflect.DeepEqual(back.records, records) {
		return nil, false
	}
	return b, true
}

// WriteRecordCache writes the records cache of the journal at path now,
// whatever the number of its records (a command writes one only when it
// decoded enough lines, see cacheMinLines): for tests that need a cache
// on a small journal, and for tools that finish a study and want the next
// command to find one.
func WriteRecordCache(path string) error {
	s, err := OpenJournalStore(path)
	if err != nil {
		return err
	}
	defer s.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load("", false); err != nil {
		return err
	}
	if err := s.writeCache(); err != nil {
		return fmt.Errorf("storage: %s: %w", path, err)
	}
	return nil
}

package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkJournalStoreOpen opens a journal of 10,000 trials (20,001
// lines, 6 coordinates a point, as a long study writes them) and reads
// its records: what every `bkb status`, `ask` and `tell` pays first.
func BenchmarkJournalStoreOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "long.jsonl")
	ctx := context.Background()
	s, err := OpenJournalStore(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.CreateStudy(ctx, "a", nil); err != nil {
		b.Fatal(err)
	}
	recs := longStudyRecords(10000, time.Time{})
	if _, err := s.Update(ctx, "a", 0, func(View) ([]Record, error) { return recs, nil }); err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.ResetTimer()
	for b.Loop() {
		s, err := OpenJournalStore(path)
		if err != nil {
			b.Fatal(err)
		}
		if r, err := s.Records(ctx, "a", 0); err != nil || len(r) != 20000 {
			b.Fatal(len(r), err)
		}
		s.Close()
	}
}

// BenchmarkRecordCacheDecode decodes the records cache of a journal of
// 10,000 trials (as BenchmarkJournalStoreOpen's): what a command on a
// long study pays to read its records when the cache is current (a
// journal's, or PostgreSQL's local cache).
func BenchmarkRecordCacheDecode(b *testing.B) {
	recs := longStudyRecords(10000, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	buf, ok := MarshalRecordCache(RecordCacheKey{Off: 1, Lines: 1}, recs)
	if !ok {
		b.Fatal("records not cached")
	}
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if _, got, err := UnmarshalRecordCache(buf); err != nil || len(got) != len(recs) {
			b.Fatal(err)
		}
	}
}

// longStudyRecords returns the records of n trials, 6 coordinates a
// point, as a long study writes them; asks at time at and tells a second
// later (no times when at is zero: a storage stamps them).
func longStudyRecords(n int, at time.Time) []Record {
	recs := make([]Record, 0, 2*n)
	told := at
	if !at.IsZero() {
		told = at.Add(time.Second)
	}
	for i := 0; i < n; i++ {
		x := make([]float64, 6)
		for j := range x {
			x[j] = float64((i*7919+j*104729)%100003) / 100003
		}
		y := -float64(i%977) / 293
		params := []byte(fmt.Sprintf(`{"x1":%v,"x2":%v,"x3":%v,"x4":%v,"x5":%v,"x6":%v}`, x[0], x[1], x[2], x[3], x[4], x[5]))
		recs = append(recs, Record{Kind: KindAsk, Trial: i, Arm: i, X: x, Params: params, Worker: "vm:11016:5c666ef7", Time: at},
			Record{Kind: KindTell, Trial: i, Arm: i, X: x, Y: &y, Seconds: 1e-6, Time: told})
	}
	return recs
}

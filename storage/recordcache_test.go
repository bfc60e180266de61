package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// writeVariedJournal writes a journal of n trials through a JournalStore
// (every kind of record, params, workers, values, constraints, errors,
// steps), then appends lines by hand that this package does not write
// itself: times in other zones, params with spaces.
func writeVariedJournal(t *testing.T, path string, n int) {
	t.Helper()
	ctx := context.Background()
	s, err := OpenJournalStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateStudy(ctx, "c", json.RawMessage(`{"budget":5}`)); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC)
	for i := 0; i < n; i++ {
		y := float64(i)/7 - 3
		ask := Record{Kind: KindAsk, Trial: i, Arm: i%3 - 1, X: []float64{float64(i) / 3, 1e-300, -0.1}, Worker: fmt.Sprintf("h:%d:ab", i%5),
			Params: json.RawMessage(fmt.Sprintf(`{"a":%d,"b":"x%d"}`, i, i)), Time: base.Add(time.Duration(i) * time.Millisecond)}
		var end []Record
		switch i % 6 {
		case 0, 1, 2:
			end = []Record{{Kind: KindTell, Trial: i, Arm: ask.Arm, X: ask.X, Y: &y, Seconds: 0.25, Time: ask.Time}}
		case 3:
			end = []Record{{Kind: KindFail, Trial: i, Arm: ask.Arm, X: ask.X, Error: "objective: boom \"quoted\"", Time: ask.Time}}
		case 4:
			end = []Record{{Kind: KindReport, Trial: i, Arm: ask.Arm, X: ask.X, Y: &y, Step: 3, Time: ask.Time},
				{Kind: KindPrune, Trial: i, Arm: ask.Arm, X: ask.X, Step: 3, Time: ask.Time}}
		case 5:
			end = []Record{{Kind: KindTell, Trial: i, Arm: ask.Arm, X: ask.X, Y: &y, Values: []float64{y, 2}, Constraints: []float64{-1}, Time: ask.Time}}
		}
		if _, err := s.Update(ctx, "c", 0, func(View) ([]Record, error) { return append([]Record{ask}, end...), nil }); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, zone := range []string{"+02:00", "-05:45", "Z"} {
		tr := n + i
		fmt.Fprintf(f, `{"kind":"ask","trial":%d,"arm":-1,"x":[0.5,0.5,0.5],"params": { "a" : 1 },"time":"2026-11-28T10:00:00.5%s"}`+"\n", tr, zone)
		fmt.Fprintf(f, `{"kind":"tell","trial":%d,"arm":-1,"x":[0.5,0.5,0.5],"y":1.5,"time":"2026-11-28T10:00:01%s"}`+"\n", tr, zone)
	}
}

// readRecords returns the records of a fresh JournalStore on path and the
// number it took from the cache.
func readRecords(t *testing.T, path string) ([]Record, int) {
	t.Helper()
	s, err := OpenJournalStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := s.Records(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs, s.cached
}

// touch runs an Update that appends nothing (as a command that reads the
// study and then fails would), which writes the cache when it is due.
func touch(t *testing.T, path string) {
	t.Helper()
	s, err := OpenJournalStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Update(context.Background(), "", 0, func(View) ([]Record, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
}

// TestRecordCacheSameRecords: the records a JournalStore reads through
// the cache are those storage.ReadFile decodes from the JSON lines (an
// independent path), field for field, including times in other zones and
// params as written; the cache is written once enough lines were decoded,
// not for a few more; lines appended after it are decoded on top of it;
// and a journal changed under it, or a damaged cache, is read from its
// lines.
func TestRecordCacheSameRecords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeVariedJournal(t, path, 700)
	check := func(what string, wantCached bool) {
		t.Helper()
		_, want, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, cached := readRecords(t, path)
		if !reflect.DeepEqual(got, want) {
			for i := range want {
				if i >= len(got) || !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%s: record %d of %d: %+v, want %+v", what, i, len(want), got[min(i, len(got)-1)], want[i])
				}
			}
			t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
		}
		if (cached > 0) != wantCached {
			t.Fatalf("%s: %d records from the cache, want a cache used: %v", what, cached, wantCached)
		}
	}
	check("no cache yet", false)
	touch(t, path)
	info, err := os.Stat(RecordCachePath(path))
	if err != nil {
		t.Fatalf("no cache after decoding %d lines: %v", 1400, err)
	}
	check("cache", true)

	// A few more lines: decoded on top of the cache, which stays.
	s, _ := OpenJournalStore(path)
	y := 2.5
	for i := 0; i < 10; i++ {
		tr := 704 + i
		if _, err := s.Update(context.Background(), "", 0, func(View) ([]Record, error) {
			return []Record{{Kind: KindAsk, Trial: tr, Arm: -1, X: []float64{1, 2, 3}}, {Kind: KindTell, Trial: tr, Arm: -1, X: []float64{1, 2, 3}, Y: &y}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	touch(t, path)
	if again, err := os.Stat(RecordCachePath(path)); err != nil || !again.ModTime().Equal(info.ModTime()) || again.Size() != info.Size() {
		t.Fatalf("the cache was rewritten for 20 more lines (%v)", err)
	}
	check("cache and lines after it", true)

	// A value changed in a line the cache covers: the cache is not used.
	raw, _ := os.ReadFile(path)
	changed := []byte(string(raw))
	i := indexOf(changed, []byte(`"y":-3`))
	if i < 0 {
		t.Fatal("no line to change")
	}
	changed[i+5] = '4'
	if err := os.WriteFile(path, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	check("journal changed", false)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	check("journal restored", true)

	// A damaged cache is not used.
	c, _ := os.ReadFile(RecordCachePath(path))
	c[len(c)/2] ^= 1
	os.WriteFile(RecordCachePath(path), c, 0o644)
	check("cache damaged", false)

	// "+00:00", which time.Parse reads as the local zone (where that is
	// UTC) or an unnamed zone, and MarshalText writes as "Z": no cache is
	// made for a journal that holds it, and its lines are read as before.
	os.Remove(RecordCachePath(path))
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(f, `{"kind":"ask","trial":714,"arm":-1,"x":[0.5,0.5,0.5],"time":"2026-11-28T10:00:00+00:00"}`+"\n")
	f.Close()
	touch(t, path)
	if _, err := os.Stat(RecordCachePath(path)); err == nil {
		t.Error(`a cache was written for a journal with a time at "+00:00" (read as the local zone or an unnamed one, written back as "Z")`)
	}
	os.Remove(RecordCachePath(path))
	check("a time at +00:00", false)
}

func indexOf(b, sub []byte) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return -1
}

// TestRecordCacheRefusesInexact: a time whose zone MarshalText writes
// otherwise than the journal ("+00:00" read in a process whose local zone
// is UTC, which time.Parse gives as Local) is caught when the cache is
// made: recordCacheFor refuses records that would not decode back equal.
func TestRecordCacheRefusesInexact(t *testing.T) {
	t.Parallel()
	y := 1.0
	local := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 0))
	recs := []Record{{Kind: KindTell, Trial: 0, Arm: -1, X: []float64{1}, Y: &y, Time: local}}
	if _, ok := recordCacheFor(10, 2, 0, recs); ok {
		t.Fatal("a time in an unnamed zone of offset 0 was cached (it decodes as UTC)")
	}
	recs[0].Time = local.UTC()
	if _, ok := recordCacheFor(10, 2, 0, recs); !ok {
		t.Fatal("a UTC time was refused")
	}
}

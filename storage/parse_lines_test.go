package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// TestParallelParseEqualsSequential: a journal read with its lines shared
// among processors (parseCompleteLines) gives the records, and for a bad
// line the error, of the sequential parse (ReadFile, and the store with
// the parallel threshold above the number of lines), whatever the number
// of processors; an incomplete final line is still left for later.
func TestParallelParseEqualsSequential(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	defer func(n int) { parallelParseLines = n }(parallelParseLines)
	dir := t.TempDir()
	ctx := context.Background()
	write := func(name string, bad int, tail string) string {
		path := filepath.Join(dir, name)
		s, err := OpenJournalStore(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateStudy(ctx, "a", nil); err != nil {
			t.Fatal(err)
		}
		var recs []Record
		for i := 0; i < 250; i++ {
			y := float64(i) / 7
			x := []float64{float64(i) / 250, 1 - float64(i)/250}
			recs = append(recs, Record{Kind: KindAsk, Trial: i, Arm: -1, X: x, Worker: "w:1:x"},
				Record{Kind: KindTell, Trial: i, Arm: -1, X: x, Y: &y, Seconds: 0.5})
		}
		if _, err := s.Update(ctx, "a", 0, func(View) ([]Record, error) { return recs, nil }); err != nil {
			t.Fatal(err)
		}
		s.Close()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		if bad > 0 {
			lines[bad] = `{"kind":"tell","trial":"seven"}` + "\n"
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "")+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	read := func(path string, threshold int) ([]Record, error) {
		parallelParseLines = threshold
		s, err := OpenJournalStore(path)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		return s.Records(ctx, "a", 0)
	}
	for _, tc := range []struct {
		name string
		bad  int
		tail string
	}{
		{"good", 0, ""},
		{"bad line 300", 300, ""},
		{"being written", 0, `{"kind":"ask","trial":250,"arm":-1,"x":[`},
	} {
		path := write(strings.ReplaceAll(tc.name, " ", "_")+".jsonl", tc.bad, tc.tail)
		seq, seqErr := read(path, 1<<30)
		par, parErr := read(path, 8)
		if fmt.Sprint(seqErr) != fmt.Sprint(parErr) {
			t.Fatalf("%s: parallel error %v, sequential %v", tc.name, parErr, seqErr)
		}
		if tc.bad > 0 {
			var le *LineError
			if !errors.As(parErr, &le) || le.Line != tc.bad+1 {
				t.Fatalf("%s: error %v, want a LineError at line %d", tc.name, parErr, tc.bad+1)
			}
			continue
		}
		if len(par) != 500 || !reflect.DeepEqual(par, seq) {
			t.Fatalf("%s: parallel parse gives %d records, sequential %d, equal %v", tc.name, len(par), len(seq), reflect.DeepEqual(par, seq))
		}
		_, file, err := ReadFile(path)
		if err != nil || !reflect.DeepEqual(par, file) {
			t.Fatalf("%s: ReadFile differs (%v)", tc.name, err)
		}
	}
}

// BenchmarkJournalStoreOpen opens a journal of 10,000 trials (20,001
// lines, 6 coordinates a point, as a long study writes them) and reads
// its records: what every `bkb status`, `ask` and `tell` pays first. Run
// with -cpu 1,2 to see the lines shared among processors.
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
	var recs []Record
	for i := 0; i < 10000; i++ {
		x := make([]float64, 6)
		for j := range x {
			x[j] = float64((i*7919+j*104729)%100003) / 100003
		}
		y := -float64(i%977) / 293
		params := []byte(fmt.Sprintf(`{"x1":%v,"x2":%v,"x3":%v,"x4":%v,"x5":%v,"x6":%v}`, x[0], x[1], x[2], x[3], x[4], x[5]))
		recs = append(recs, Record{Kind: KindAsk, Trial: i, Arm: i, X: x, Params: params, Worker: "vm:11016:5c666ef7"},
			Record{Kind: KindTell, Trial: i, Arm: i, X: x, Y: &y, Seconds: 1e-6})
	}
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

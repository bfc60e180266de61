package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// updateStores are the stores whose Update the cost tests and benchmarks
// measure: the in-memory one and a journal.
var updateStores = []struct {
	name string
	open func(tb testing.TB) Storage
}{
	{"memory", func(testing.TB) Storage { return NewMemory() }},
	{"journal", func(tb testing.TB) Storage {
		s, err := OpenJournalStore(filepath.Join(tb.TempDir(), "s.jsonl"))
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}},
}

// studyOf returns a store holding a study "a" of n trials
// (longStudyRecords).
func studyOf(tb testing.TB, open func(testing.TB) Storage, n int) Storage {
	tb.Helper()
	s := open(tb)
	ctx := context.Background()
	if _, err := s.CreateStudy(ctx, "a", nil); err != nil {
		tb.Fatal(err)
	}
	recs := longStudyRecords(n, time.Time{})
	if _, err := s.Update(ctx, "a", 0, func(View) ([]Record, error) { return recs, nil }); err != nil {
		tb.Fatal(err)
	}
	return s
}

// askTell adds trial n to the study as a store's caller does: an update
// with its ask, then one with its tell, each seeing no new records.
func askTell(tb testing.TB, s Storage, n int) {
	ctx := context.Background()
	x := []float64{float64(n%1013) / 1013, 0.1, 0.2, 0.3, 0.4, 0.5}
	y := 1.5
	for i, r := range []Record{{Kind: KindAsk, Trial: n, Arm: n, X: x}, {Kind: KindTell, Trial: n, Arm: n, X: x, Y: &y}} {
		if _, err := s.Update(ctx, "a", 2*n+i, func(View) ([]Record, error) { return []Record{r}, nil }); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestUpdateCostFollowsChange: an ask and a tell on a long study allocate
// about what they add, not a copy of the study's state. Checking an
// update against the study's records once copied every trial's state at
// each update (8.3 MB an ask and a tell at 20,000 trials, and the
// collector's time with it); a 100,000-trial study then spent most of its
// CPU there. Bytes allocated are counted exactly (runtime.MemStats), not
// timed. The bound leaves room for the amortized growth of the slices of
// records (one growth of a 40,000-record slice within the window is about
// 60 KB a trial).
func TestUpdateCostFollowsChange(t *testing.T) {
	for _, st := range updateStores {
		t.Run(st.name, func(t *testing.T) {
			perTrial := func(n int) float64 {
				s := studyOf(t, st.open, n)
				defer s.Close()
				const k = 200
				askTell(t, s, n) // the first update's one-time work
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for i := 1; i <= k; i++ {
					askTell(t, s, n+i)
				}
				runtime.ReadMemStats(&after)
				return float64(after.TotalAlloc-before.TotalAlloc) / k
			}
			small, large := perTrial(1000), perTrial(20000)
			t.Logf("bytes allocated per ask and tell: %.0f at 1,000 trials, %.0f at 20,000", small, large)
			if large > 256<<10 {
				t.Fatalf("an ask and a tell allocate %.0f bytes at 20,000 trials (%.0f at 1,000): the update copies the study's state", large, small)
			}
		})
	}
}

// BenchmarkUpdate: an ask and a tell on a study of n trials, per store.
// The time and bytes per operation should not grow with n.
func BenchmarkUpdate(b *testing.B) {
	for _, st := range updateStores {
		for _, n := range []int{1000, 10000, 100000} {
			b.Run(fmt.Sprintf("%s/trials=%d", st.name, n), func(b *testing.B) {
				s := studyOf(b, st.open, n)
				defer s.Close()
				b.ReportAllocs()
				i := n
				for b.Loop() {
					askTell(b, s, i)
					i++
				}
			})
		}
	}
}

package storage

import (
	"encoding/json"
	"testing"
	"time"
)

// TestLedgerAdopt: a ledger that adopts a slice holds what one that adds
// the same records holds, in order, with the same pending trials, and
// a record the tracker refuses stops both at the same place.
func TestLedgerAdopt(t *testing.T) {
	t.Parallel()
	y := 1.0
	ask := func(trial int, x float64) Record {
		return Record{Kind: KindAsk, Trial: trial, Arm: -1, X: []float64{x}}
	}
	tell := func(trial int, x float64) Record {
		return Record{Kind: KindTell, Trial: trial, Arm: -1, X: []float64{x}, Y: &y}
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for _, tc := range []struct {
		name    string
		first   []Record // adopted, or added
		then    []Record // added after
		wantErr bool
	}{
		{"all", []Record{ask(0, 0.1), tell(0, 0.1), ask(1, 0.2)}, []Record{tell(1, 0.2), ask(2, 0.3)}, false},
		{"empty first", nil, []Record{ask(0, 0.1)}, false},
		{"refused", []Record{ask(0, 0.1), tell(0, 0.1), tell(0, 0.1), ask(1, 0.2)}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			added, adopted := NewLedger(), NewLedger()
			errAdd := added.Add(append([]Record(nil), tc.first...)...)
			errAdopt := adopted.Adopt(append([]Record(nil), tc.first...))
			if (errAdd != nil) != tc.wantErr || (errAdopt != nil) != tc.wantErr {
				t.Fatalf("errors %v and %v, want an error %v", errAdd, errAdopt, tc.wantErr)
			}
			if !tc.wantErr {
				if err := added.Add(tc.then...); err != nil {
					t.Fatal(err)
				}
				if err := adopted.Add(tc.then...); err != nil {
					t.Fatal(err)
				}
			}
			if g, w := js(adopted.Records(0)), js(added.Records(0)); g != w {
				t.Fatalf("adopted holds\n%s\nwant\n%s", g, w)
			}
			if g, w := js(adopted.Pending()), js(added.Pending()); g != w {
				t.Fatalf("adopted's pending\n%s\nwant\n%s", g, w)
			}
			if n := len(tc.first) + len(tc.then); !tc.wantErr && added.Len() != n {
				t.Fatalf("%d records, want %d", added.Len(), n)
			}
		})
	}
}

// TestAdmitRollback: an admitted change rolled back leaves the ledger as
// it was (records, pending trials, what a later Admit accepts), and one
// committed leaves what summarizing every record from scratch gives. The
// batches mix new trials, completions, re-asks, reports, enqueues and
// refused records (whose Admit must change nothing).
func TestAdmitRollback(t *testing.T) {
	t.Parallel()
	y := 2.0
	rec := func(kind string, trial int, x float64) Record {
		r := Record{Kind: kind, Trial: trial, Arm: -1, X: []float64{x}}
		switch kind {
		case KindTell:
			r.Y = &y
		case KindFail:
			r.Error = "boom"
		case KindReport:
			r.Y, r.Step = &y, 1
		}
		return r
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	batches := []struct {
		recs   []Record
		refuse bool
	}{
		{[]Record{rec(KindAsk, 0, 0.1), rec(KindAsk, 1, 0.2)}, false},
		{[]Record{rec(KindTell, 0, 0.1), rec(KindEnqueue, 2, 0.3)}, false},
		{[]Record{rec(KindAsk, 2, 0.3), rec(KindReport, 1, 0.2)}, false},
		{[]Record{rec(KindAsk, 3, 0.4), rec(KindTell, 0, 0.5)}, true},  // a second, different completion
		{[]Record{rec(KindTell, 2, 0.3), rec(KindAsk, 2, 0.3)}, true},  // an ask after the completion
		{[]Record{rec(KindFail, 1, 0.2), rec(KindAsk, 4, 0.5)}, false}, // 4 skips 3
		{[]Record{rec(KindTell, 0, 0.1), rec(KindPrune, 4, 0.5)}, false},
		{[]Record{rec(KindAsk, 5, 0.6), rec(KindAsk, 5, 0.7)}, true}, // asked twice with different points
		{[]Record{rec(KindTell, 2, 0.3)}, false},
	}
	l := NewLedger()
	var kept []Record
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, b := range batches {
		before := js([]any{append([]Record{}, l.Records(0)...), l.Pending(), l.Len()})
		add, _, err := l.Admit(b.recs, now)
		if (err != nil) != b.refuse {
			t.Fatalf("batch %d: error %v, want one %v", i, err, b.refuse)
		}
		if err == nil {
			if l.Len() != len(kept)+len(add) {
				t.Fatalf("batch %d: an open change counts %d records, want %d", i, l.Len(), len(kept)+len(add))
			}
			l.Rollback()
		}
		if got := js([]any{append([]Record{}, l.Records(0)...), l.Pending(), l.Len()}); got != before {
			t.Fatalf("batch %d: after the rollback the ledger holds\n%s\nwant\n%s", i, got, before)
		}
		if b.refuse {
			continue
		}
		// Again, kept this time: the rollback left nothing that changes
		// what is accepted.
		add2, _, err := l.Admit(b.recs, now)
		if err != nil || js(add2) != js(add) {
			t.Fatalf("batch %d: admitted again: %v, %s, want %s", i, err, js(add2), js(add))
		}
		l.Commit()
		l.Rollback() // nothing open: a no-op
		kept = append(kept, add...)
		want, err := Summarize(kept)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := js(l.Records(0)), js(kept); g != w {
			t.Fatalf("batch %d: records\n%s\nwant\n%s", i, g, w)
		}
		if g, w := js(l.Pending()), js(want.Pending); g != w {
			t.Fatalf("batch %d: pending\n%s\nwant, from Summarize,\n%s", i, g, w)
		}
		if g, w := js(l.t.state()), js(want); g != w {
			t.Fatalf("batch %d: state\n%s\nwant, from Summarize,\n%s", i, g, w)
		}
	}
	if len(kept) == 0 {
		t.Fatal("no batch was kept")
	}
}

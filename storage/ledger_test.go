package storage

import (
	"encoding/json"
	"testing"
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

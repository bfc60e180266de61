package bandit

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStatsJSON: Stats encodes with snake_case names and decodes both
// them and the Go field names that older snapshots' readable parts hold.
func TestStatsJSON(t *testing.T) {
	s := Stats{Observations: 8, DictionarySize: 5, DictionaryChanges: 7, SumVariance: 2.5, Jitter: 1, VarianceClamps: 2, RetryJitter: 3, RowsRead: 400}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"observations":8,"dictionary_size":5,"dictionary_changes":7,"sum_variance":2.5,"jitter":1,"variance_clamps":2,"retry_jitter":3,"rows_read":400}`
	if string(b) != want {
		t.Fatalf("encoded %s, want %s", b, want)
	}
	for _, in := range []string{want,
		`{"Observations":8,"DictionarySize":5,"DictionaryChanges":7,"SumVariance":2.5,"Jitter":1,"VarianceClamps":2,"RetryJitter":3,"RowsRead":400,"RowsComputed":0,"WorkingSet":0,"ArmsEliminated":0,"BoundViolations":0}`} {
		var got Stats
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Fatal(err)
		}
		if got != s {
			t.Errorf("decoded %s as %+v, want %+v", in[:strings.Index(in, ",")], got, s)
		}
	}
}

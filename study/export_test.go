package study

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/objectives"
	"github.com/bkb-go/bkb/storage"
)

// TestExport: the CSV and JSON of a study's trials hold every trial with
// its state, value, best value so far, the simple regret against a known
// minimum, and the parameters by name; the JSON's values read back as
// told.
func TestExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := objectives.Branin()
	sp, err := Box(nil, f.Lower, f.Upper)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Create(ctx, storage.NewMemory(), "e", Config{Space: sp, Budget: 6, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Optimize(ctx, func(_ context.Context, tr *Trial) (float64, error) { return f.Value(tr.X), nil }, 0); err != nil {
		t.Fatal(err)
	}
	trials := s.Trials()
	b, err := ExportCSV(s.Config(), trials, f)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); got != "trial,status,arm,value,best_so_far,simple_regret,seconds,x1,x2,error" {
		t.Errorf("header %s", got)
	}
	if len(rows) != 7 {
		t.Fatalf("%d rows, want a header and 6 trials", len(rows))
	}
	j, err := ExportJSON(s.Config(), trials)
	if err != nil {
		t.Fatal(err)
	}
	var ex []ExportedTrial
	if err := json.Unmarshal(j, &ex); err != nil {
		t.Fatal(err)
	}
	best := trials[0].Value
	for i, e := range ex {
		best = min(best, trials[i].Value)
		if e.Trial != i || e.Value == nil || *e.Value != trials[i].Value || e.BestSoFar == nil || *e.BestSoFar != best {
			t.Errorf("trial %d exported as %+v", i, e)
		}
	}
}

package storage

import (
	"strings"
	"testing"
)

// TestReportAndPruneRecords: what Validate and Summarize accept of the
// report and prune records: reports of a pending trial only, a prune as
// the trial's one completion, steps only on those kinds.
func TestReportAndPruneRecords(t *testing.T) {
	t.Parallel()
	y := func(v float64) *float64 { return &v }
	x := []float64{0.5}
	ask := Record{Kind: KindAsk, Trial: 0, Arm: -1, X: x}
	rep := func(step int, v float64) Record {
		return Record{Kind: KindReport, Trial: 0, Arm: -1, X: x, Step: step, Y: y(v)}
	}
	prune := Record{Kind: KindPrune, Trial: 0, Arm: -1, X: x, Step: 1, Y: y(2)}
	tell := Record{Kind: KindTell, Trial: 0, Arm: -1, X: x, Y: y(1)}
	for _, c := range []struct {
		name string
		recs []Record
		err  string // "" when accepted
	}{
		{"reports then prune", []Record{ask, rep(0, 3), rep(1, 2), prune}, ""},
		{"reports then tell", []Record{ask, rep(0, 3), tell}, ""},
		{"prune without reports", []Record{ask, {Kind: KindPrune, Trial: 0, Arm: -1, X: x}}, ""},
		{"report before ask", []Record{rep(0, 3)}, "never asked"},
		{"report after prune", []Record{ask, rep(0, 3), prune, rep(2, 1)}, "report after the trial was completed"},
		{"tell after prune", []Record{ask, prune, tell}, "duplicate completion: tell after an earlier prune"},
		{"prune after tell", []Record{ask, tell, prune}, "duplicate completion: prune after an earlier tell"},
		{"report without y", []Record{ask, {Kind: KindReport, Trial: 0, Arm: -1, X: x, Step: 1}}, `report without "y"`},
		{"negative step", []Record{ask, rep(-1, 3)}, "negative step"},
		{"step on a tell", []Record{ask, {Kind: KindTell, Trial: 0, Arm: -1, X: x, Y: y(1), Step: 2}}, `tell with "step"`},
		{"report at another point", []Record{ask, {Kind: KindReport, Trial: 0, Arm: -1, X: []float64{0.6}, Y: y(1)}}, "but the trial asked"},
	} {
		st, err := Summarize(c.recs)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.err)
		case c.err == "" && (len(st.Pending) != 0 || len(st.Completed) != 1):
			t.Errorf("%s: %d pending, %d completed; want 0 and 1", c.name, len(st.Pending), len(st.Completed))
		}
	}
	st, _ := Summarize([]Record{ask, rep(0, 3), prune})
	if st.Prunes != 1 || st.Tells != 0 || st.Fails != 0 {
		t.Errorf("counts: %d prunes, %d tells, %d fails", st.Prunes, st.Tells, st.Fails)
	}
	if xs, _ := st.Observations(); len(xs) != 0 {
		t.Errorf("a pruned trial is an observation: %v", xs)
	}
	st, _ = Summarize([]Record{ask, rep(0, 3)})
	if len(st.Pending) != 1 {
		t.Errorf("a trial with reports is not pending: %+v", st)
	}
}

package study

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// TestVersion7KeepsDeadPivots checks the gate of the floored pivots
// (gp.DTC.SetDeadPivots): a version 7 study with two objectives, whose
// targets' DTC posteriors hold near-dependent points, asks the points the
// code before floored pivots asked (trials 30 to 39, printed by that code
// with BKB_PRINT_GOLDEN=1 on an AVX2/FMA build), while version 8 asks
// others.
func TestVersion7KeepsDeadPivots(t *testing.T) {
	t.Parallel()
	run := func(version int) []string {
		ctx := context.Background()
		sp, err := Box(nil, []float64{0, 0}, []float64{1, 1})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Create(ctx, storage.NewMemory(), "d", Config{Version: version, Space: sp, Budget: 60, Seed: 1,
			Directions: []Direction{Minimize, Minimize}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := 0; i < 40; i++ {
			tr, err := s.Ask(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if i >= 30 {
				out = append(out, fmt.Sprintf("%.12g,%.12g", tr.X[0], tr.X[1]))
			}
			if err := s.TellOutcome(ctx, tr.Number, Outcome{Values: branin2(tr.X)}); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	got := run(7)
	if os.Getenv("BKB_PRINT_GOLDEN") != "" {
		t.Logf("%#v", got)
	}
	want := []string{"0,0.100102141693", "0.293706396889,0.604196366231", "0,0.342134171447", "0.0608082868309,0.510108519676",
		"0,0.29183433044", "0.222323838489,0.554385856418", "0.0317673167293,0.50260749767", "0,0.401422801971",
		"0.0929070587678,0.514734930075", "0,0"}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("version 7, trial %d: %v, recorded %s", 30+i, got[min(i, len(got)-1)], want[i])
		}
	}
	if v8 := run(8); fmt.Sprint(v8) == fmt.Sprint(got) {
		t.Error("version 8 asks version 7's points: the test does not tell the rules apart")
	}
}

package study

import (
	"context"
	"slices"
	"testing"

	"github.com/bkb-go/bkb/storage"
)

// TestFreshAsksResume: version 12 reads which configurations were
// evaluated, and whether repeats were equal, from the records, so a
// process that loads a mixed study (from its snapshot, or replaying every
// record when the snapshot is lost) asks the uninterrupted run's points;
// and the uninterrupted run repeats at most one configuration, where
// version 11 repeats more on the same study (else the rule did not act).
func TestFreshAsksResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp, err := NewSpace(Int("k", 1, 12), Categorical("w", "a", "b", "c"), Int("p", 1, 4))
	if err != nil {
		t.Fatal(err)
	}
	eval := func(x []float64) (float64, float64) { return goldenPlateau(x), 1 }
	const budget, k = 50, 25
	repeats := func(xs [][]float64) int {
		n := 0
		for i := range xs {
			if slices.ContainsFunc(xs[:i], func(y []float64) bool { return slices.Equal(y, xs[i]) }) {
				n++
			}
		}
		return n
	}
	run := func(version int) [][]float64 {
		s, err := Create(ctx, storage.NewMemory(), "ref", Config{Space: sp, Seed: 7, Budget: budget, Version: version})
		if err != nil {
			t.Fatal(err)
		}
		return runCosted(t, s, budget, eval)
	}
	want := run(12)
	if n := repeats(want); n > 1 {
		t.Fatalf("version 12 repeated %d configurations", n)
	}
	if n := repeats(run(11)); n <= 1 {
		t.Fatalf("version 11 repeated %d configurations: the study does not exercise fresh asks", n)
	}
	cfg := Config{Space: sp, Seed: 7, Budget: budget, Version: 12}
	for _, lost := range []bool{false, true} {
		got := interruptedRun(t, cfg, k, lost, eval)
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("snapshot lost %v: trial %d asked %v, the uninterrupted run %v", lost, i, got[i], want[i])
			}
		}
	}
}

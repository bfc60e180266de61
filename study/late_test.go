package study

import (
	"context"
	"testing"

	"github.com/bkb-go/bkb/engine"
	"github.com/bkb-go/bkb/storage"
)

// TestLateLocalResumes: a version 11 study in its late phase (lowered to
// 60 observations, 40 near points, a rebuild every 16), stopped at trial
// 101 (between rebuilds) on a journal and resumed by a new process, asks
// the uninterrupted run's points bit for bit, from its snapshot and, with
// the snapshot lost, from a replay of its records. Not parallel: the late
// phase's thresholds are the engine package's.
func TestLateLocalResumes(t *testing.T) {
	defer engine.LowerLateForTest(60, 40, 16)()
	ctx := context.Background()
	cfg := snapshotConfig("bkb")
	cfg.Budget, cfg.Version = 130, 11
	f := snapshotObjective(true)
	ref, err := Create(ctx, storage.NewMemory(), "ref", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := runTrials(t, ref, cfg.Budget, f, false)
	if d := ref.Info().Stats.Observations; d > 40+16 {
		t.Fatalf("the posterior holds %d observations: the late phase did not run", d)
	}
	for _, lost := range []bool{false, true} {
		got, second, notes := stopAndLoad(t, cfg, f, 101, false, lost)
		eng, from := second.restore(ctx)
		if lost != (eng == nil) {
			t.Fatalf("snapshot lost %v: restored %v from %d records (notes %q)", lost, eng != nil, from, *notes)
		}
		got = append(got, runTrials(t, second, cfg.Budget-len(got), f, false)...)
		for i := range want {
			if !samePoint(got[i].X, want[i].X) {
				t.Fatalf("snapshot lost %v: trial %d: %v after a resume at 101, %v uninterrupted", lost, i, got[i].X, want[i].X)
			}
		}
	}
}

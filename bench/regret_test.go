package bench

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/objectives"
)

// The harness runs a short study per variant and reports finite regrets
// that never increase (simple) or decrease (cumulative) along checkpoints.
func TestRunRegretShort(t *testing.T) {
	t.Parallel()
	f := objectives.Branin()
	rng := Range(f)
	for _, name := range []string{"bkb", "bkb-fixed", "random"} {
		r, err := RunRegret(context.Background(), RegretProblem{F: f, NoiseFrac: 0.01}, RegretVariants[name], 1, []int{10, 20}, rng)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(r.Simple) != 2 || r.Simple[1] > r.Simple[0] || r.Cum[1] < r.Cum[0] || r.Simple[1] < 0 {
			t.Errorf("%s: simple %v cum %v", name, r.Simple, r.Cum)
		}
	}
}

// BKB_REGRET=fn:T:seeds:variant[,variant] runs a quick experiment.
func TestRegretExperiment(t *testing.T) {
	spec := os.Getenv("BKB_REGRET")
	if spec == "" {
		t.Skip("set BKB_REGRET")
	}
	parts := strings.Split(spec, ":")
	f, err := objectives.Lookup(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	T, _ := strconv.Atoi(parts[1])
	seeds, _ := strconv.Atoi(parts[2])
	noise := 0.0
	if len(parts) > 4 {
		noise, _ = strconv.ParseFloat(parts[4], 64)
	}
	rng := Range(f)
	var runs []RegretRun
	for _, name := range strings.Split(parts[3], ",") {
		v, err := ParseVariant(name)
		if err != nil {
			t.Fatal(err)
		}
		for s := 1; s <= seeds; s++ {
			r, err := RunRegret(context.Background(), RegretProblem{F: f, NoiseFrac: noise}, v, uint64(s), []int{T / 2, T}, rng)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s seed %d: simple %.3g cum %.4g, %.1f ms/trial (fit %.1f, cand %.1f; last tenth %.1f) wall %v", name, s, r.Simple[1], r.Cum[1], r.PolicyMS, r.FitMS, r.CandMS, r.PolicyMSEnd, r.Wall)
			runs = append(runs, r)
		}
	}
	WriteRegretMarkdown(os.Stdout, runs)
}

// TestRunRegretStopsOnCancel: a cancelled context stops a run at once
// instead of running its budget.
func TestRunRegretStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := objectives.Branin()
	run, err := RunRegret(ctx, RegretProblem{F: f}, RegretVariants["bkb"], 1, []int{1000}, Range(f))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if len(run.SimpleTrace) != 0 {
		t.Errorf("%d trials run after the cancel, want 0", len(run.SimpleTrace))
	}
}

package bench

import (
	"bytes"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/bkb-go/bkb/objectives"
)

func TestReadPeerRuns(t *testing.T) {
	t.Parallel()
	in := `{"peer": "optuna-tpe", "problem": "beale:2", "seed": 1, "checkpoints": [100, 300], "simple": [0.5, 0.1], "cum": [10, 20], "cpu_ms_per_trial": 5}

{"peer": "optuna-cmaes", "problem": "beale:2", "seed": 1, "checkpoints": [100, 300], "simple": [0.2, 0.01], "cum": [5, 6]}
`
	runs, err := ReadPeerRuns(strings.NewReader(in))
	if err != nil || len(runs) != 2 || runs[1].Variant != "optuna-cmaes" || runs[1].Simple[1] != 0.01 || runs[0].CPUMS != 5 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	for _, bad := range []string{`{"peer": "x"`, `{"peer": "x", "problem": "p", "checkpoints": [1], "simple": [], "cum": [1]}`} {
		if _, err := ReadPeerRuns(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestWriteSuiteMarkdown checks the verdicts on a made-up suite: ours
// wins the first row, loses the second with p < 0.01 on a wide function
// (all 5 of its seeds above the peer's), and is worse at the larger budget.
func TestWriteSuiteMarkdown(t *testing.T) {
	t.Parallel()
	var runs []RegretRun
	for s := range 5 {
		f := float64(s)
		runs = append(runs,
			RegretRun{Problem: "p:2", Variant: "ours", Seed: uint64(s), Checkpoints: []int{10, 20}, Simple: []float64{1 + f, 10 + f}, Cum: []float64{0, 0}},
			RegretRun{Problem: "p:2", Variant: "optuna-a", Seed: uint64(s), Checkpoints: []int{10, 20}, Simple: []float64{5 + f, 1 + f}, Cum: []float64{0, 0}})
	}
	var b bytes.Buffer
	sum, err := WriteSuiteMarkdown(&b, runs, "ours", nil, map[string]bool{"p:2": true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum) != 2 || !sum[0].Win || sum[1].Win || !(sum[1].P < 0.01) || sum[0].Medians["ours"] != 3 || sum[1].BestPeer != "optuna-a" {
		t.Fatalf("summary %+v", sum)
	}
	if !strings.Contains(b.String(), "least median on 1 of 2 rows; rows where a peer is better with p < 0.01 on a wide-range function: 1; rows where its median at the larger budget is worse than at the smaller: 1.") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestRobustSuite(t *testing.T) {
	t.Parallel()
	wide := 0
	for _, half := range []string{"tune", "heldout"} {
		probs, err := RobustSuite(half)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range probs {
			f, err := objectives.Lookup(p[:strings.LastIndex(p, ":")])
			if err != nil {
				t.Fatal(err)
			}
			if WideRatio(f) >= WideThreshold {
				wide++
			}
		}
	}
	if n := len(RobustTune) + len(RobustHeldOut); n < 12 || wide < 4 {
		t.Errorf("%d functions, %d of wide range: want at least 12 and 4", n, wide)
	}
	// The peers' driver runs the same problems.
	sh, err := os.ReadFile("peers/run_suite.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, half := range [][]string{RobustTune, RobustHeldOut} {
		if !strings.Contains(string(sh), strings.Join(half, " ")) {
			t.Errorf("peers/run_suite.sh does not list %v", half)
		}
	}
	if _, err := RobustSuite("all"); err == nil {
		t.Error("suite all: no error")
	}
}

// TestResolution: points within 16 ulps of the minimizer of the suite's
// quadratics (coordinates moved by 16 units in the last place, every sign
// pattern) have regrets below Resolution, and the suite's summary counts
// two such regrets as equal (no row worse at the larger budget).
func TestResolution(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		xmin []float64
	}{{"booth", []float64{1, 3}}, {"sumsquares:4", []float64{0, 0, 0, 0}}, {"matyas", []float64{0, 0}}} {
		f, err := objectives.Lookup(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		res := Resolution(f)
		for mask := 0; mask < 1<<len(tc.xmin); mask++ {
			x := slices.Clone(tc.xmin)
			for j := range x {
				step := 16 * math.Max(math.Abs(x[j])*0x1p-52, 0x1p-52)
				if mask>>j&1 == 1 {
					step = -step
				}
				x[j] += step
			}
			if g := f.Value(x) - f.MinValue; !(g < res) {
				t.Errorf("%s at %v: regret %.3g, resolution %.3g", tc.name, x, g, res)
			}
		}
	}
	var runs []RegretRun
	for s := range 5 {
		runs = append(runs,
			RegretRun{Problem: "q:2", Variant: "ours", Seed: uint64(s), Checkpoints: []int{100, 300}, Simple: []float64{1e-31, 1e-30}, Cum: []float64{0, 0}},
			RegretRun{Problem: "q:2", Variant: "optuna-a", Seed: uint64(s), Checkpoints: []int{100, 300}, Simple: []float64{1, 1e-3}, Cum: []float64{0, 0}})
	}
	for _, tc := range []struct {
		res   float64
		worse string
	}{{1e-28, "larger budget is worse than at the smaller: 0."}, {0, "larger budget is worse than at the smaller: 1."}} {
		var b bytes.Buffer
		if _, err := WriteSuiteMarkdown(&b, runs, "ours", nil, nil, map[string]float64{"q:2": tc.res}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.worse) {
			t.Errorf("resolution %g: want %q in\n%s", tc.res, tc.worse, b.String())
		}
	}
}
